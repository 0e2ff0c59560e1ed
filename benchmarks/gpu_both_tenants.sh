#!/usr/bin/env bash
# Both GPU tenants at work at once, on a GPU machine with vLLM 0.20.0 in /tmp/vllm-site (the recipe of
# /work/shared/gpu/README.md), the voices and onnxruntime-gpu in /tmp/tts-site (gpu_tts_device.sh install) and the
# project's dependencies importable:
#   vLLM serves the random-weight Qwen2-VL folder of gpu_make_tiny_vlm.py; the project's voice server
#   (comic_narrator.gpu.tts_server) runs its ONNX sessions on CUDA; a 20-page manga chapter is narrated with
#   --vision llm and --tts-server, pages streaming (the LLM reads ahead while earlier pages are voiced), then the
#   same book as two passes in one work folder (--vision-only: the LLM alone; then the voices and the render
#   from the cached readings: the TTS alone), as a time-shared GPU runs it; the passes' walls are each tenant's
#   busy time, to compare the streamed run's wall with. NVML memory is
#   sampled every 0.5 s throughout. Each run's JSON summary (stage busy seconds, wall) goes to OUT_DIR.
# usage: gpu_both_tenants.sh MODEL_DIR BOOK_DIR OUT_DIR
set -u
model=$1; book=$2; out=$3
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
export HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 PYTHONUNBUFFERED=1
py="/tmp/tts-site:$here/../src"
voices="ja-alpha:ja:female,ja-nezumi:ja:male,ja-gongitsune:ja:female,ja-tebukuro:ja:male"

PYTHONPATH=$py python3 -c "import comic_narrator.cli.app, comic_narrator.reading.reader, rapidocr, av" || exit 3
nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader -lms 500 > "$out/nvml.csv" &
smi=$!
t0=$(date +%s)
PYTHONPATH=/tmp/vllm-site python3 -m vllm.entrypoints.openai.api_server --model "$model" \
  --served-model-name tiny-qwen2-vl --load-format dummy --host 127.0.0.1 --port 8000 \
  --gpu-memory-utilization 0.5 --max-model-len 32768 --max-num-seqs 32 --enforce-eager \
  --limit-mm-per-prompt '{"image": 1, "video": 0}' \
  --structured-outputs-config '{"backend": "xgrammar", "disable_any_whitespace": true}' > "$out/vllm.log" 2>&1 &
vllm=$!
PYTHONPATH=$py python3 -m comic_narrator.gpu.tts_server --device cuda --port 8092 > "$out/tts.log" 2>&1 &
tts=$!
ready=no
while [ $(( $(date +%s) - t0 )) -lt 240 ]; do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/v1/models', timeout=2); urllib.request.urlopen('http://127.0.0.1:8092/health', timeout=2)" 2>/dev/null; then
    ready=yes; break
  fi
  kill -0 $vllm 2>/dev/null || break
  sleep 1
done
echo "== servers ready=$ready after $(( $(date +%s) - t0 )) s"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
if [ $ready = yes ]; then
  run() {  # NAME WORK [extra options]
    local name=$1 work=$2; shift 2
    local t=$EPOCHREALTIME
    PYTHONPATH=$py timeout 200 python3 -c "import sys; from comic_narrator.cli import main; sys.exit(main(sys.argv[1:]))" \
      "$book" -o "$out/$name.mp4" --work-dir "/tmp/work-$work" --layout manga --vision llm \
      --llm-url http://127.0.0.1:8000/v1 --tts-server http://127.0.0.1:8092 --tts-api openai --tts-voices "$voices" \
      --draft --json-progress "$@" 2> "$out/$name.progress.jsonl" > "$out/$name.out"
    echo "== $name: exit $? in $(python3 -c "print(round($EPOCHREALTIME - $t, 1))") s"
    grep '"summary"' "$out/$name.progress.jsonl" | tail -1
    tail -2 "$out/$name.out"
  }
  # The TTS warms up its CUDA sessions with one line, so neither run pays for that.
  python3 -c "import json, urllib.request; urllib.request.urlopen(urllib.request.Request('http://127.0.0.1:8092/v1/audio/speech', json.dumps({'input': 'テスト', 'voice': 'ja-alpha'}).encode(), {'Content-Type': 'application/json'})).read()"
  date +%s.%N > "$out/stream.start"; run stream stream; date +%s.%N > "$out/stream.end"
  date +%s.%N > "$out/twopass.start"
  run twopass-read twopass --vision-only
  run twopass-voice twopass
  date +%s.%N > "$out/twopass.end"
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
fi
kill $tts $vllm 2>/dev/null; wait $vllm 2>/dev/null
kill $smi
grep -E "Available KV cache|Model loading took|Error" "$out/vllm.log" | head -5
tail -5 "$out/tts.log"
