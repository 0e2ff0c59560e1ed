#!/usr/bin/env bash
# On the H200, after gpu_bundle.sh's parts are in /root/parts: assemble them, install vLLM (/tmp/vllm-site) and the
# voices with the project's other packages (/tmp/tts-site; /tmp/cli-site is the same without onnxruntime-gpu, for
# the run's own process), write the random-weight Qwen2-VL (gpu_make_tiny_vlm.py), then run gpu_both_tenants.sh
# coreside under MPS with RUNS (default: "stream stream2"), stopping by END_S seconds after this script started.
# ALT_PATCH, a Python file, may edit a copy of src/ (/tmp/alt-src) for `alt-` runs, ALT2_PATCH another for `alt2-`
# runs. Everything it wrote goes
# to $OUT/both.tgz.
set -u
started=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
b=/root/b
mkdir -p $b && cat /root/parts/c* | tar xf - -C $b && rm -f /root/parts/c*
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/vllm-site $b/w-vllm/*.whl
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/tts-site $b/w-tts/*.whl
PYTHONPATH=/tmp/vllm-site python3 -c "import vllm; print('vllm', vllm.__version__)"
PYTHONPATH=/tmp/tts-site python3 -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())"
mkdir -p /tmp/cli-site
for e in /tmp/tts-site/*; do case $(basename "$e") in onnxruntime*) ;; *) ln -sf "$e" /tmp/cli-site/ ;; esac; done
python3 "$here/gpu_make_tiny_vlm.py" /tmp/tiny-vlm > /tmp/tiny.log 2>&1 || { cat /tmp/tiny.log; exit 1; }
# A patched copy of src/ for the alt- runs (ALT_PATCH) and another for the alt2- runs (ALT2_PATCH); a path relative
# to the checkout, as the docs give it, works (the patch runs inside the copy).
patched_copy() {  # NAME (alt or alt2) PATCH: /tmp/NAME-src patched, exported as ALT_SRC or ALT2_SRC
  local dir=/tmp/$1-src patch
  patch=$(realpath "$2")
  rm -rf "$dir" && mkdir -p "$dir" && cp -r "$here/../src/comic_narrator" "$dir/"
  (cd "$dir" && python3 "$patch") && export "$(echo "$1" | tr a-z A-Z)_SRC=$dir"
}
[ -n "${ALT_PATCH:-}" ] && patched_copy alt "$ALT_PATCH"
[ -n "${ALT2_PATCH:-}" ] && patched_copy alt2 "$ALT2_PATCH"
mkdir -p /tmp/both
export MPS=1 CLI_SITE=${CLI_SITE:-/tmp/cli-site}
# shellcheck disable=SC2086
timeout $(( ${END_S:-560} - ($(date +%s) - started) )) bash "$here/gpu_both_tenants.sh" coreside /tmp/tiny-vlm \
  $b/book /tmp/both ${RUNS:-stream stream2} 2>&1 | grep -v "DependencyWarning\|warnings.warn" | tee /tmp/both/run.log
for f in /tmp/work-*/comic-narrator.log; do cp "$f" "/tmp/both/$(basename "$(dirname "$f")").log"; done
rm -f /tmp/both/*.mp4
tar czf "$OUT/both.tgz" -C /tmp/both .
