#!/usr/bin/env bash
# On a GPU machine with vLLM 0.20.0 and the project's dependencies importable: serve the Qwen2-VL folder that
# benchmarks/gpu_make_tiny_vlm.py writes (random weights), then
#   serve:     `comic-narrator read --vision llm` on each BOOK, the reader benchmark (gpu_vlm_reader.py run) over
#              PAGES_DIR at concurrency 1, 4 and 16, NVML memory sampled every 0.5 s throughout;
#   calibrate: two more boots for the image encoder's memory: --skip-mm-profiling (no encoder pass) and pages
#              capped at 2,048 image tokens (--mm-processor-kwargs max_pixels), beside the serving boot's
#              16,384-token (12.8 MP) maximum.
# Logs (vLLM at DEBUG, which prints its memory profile) and results go to OUT_DIR.
# usage: gpu_vlm_device.sh serve MODEL_DIR OUT_DIR PAGES_DIR BOOK [BOOK...]
#        gpu_vlm_device.sh calibrate MODEL_DIR OUT_DIR
set -u
mode=$1; model=$2; out=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 PYTHONUNBUFFERED=1 VLLM_LOGGING_LEVEL=DEBUG
url=http://127.0.0.1:8000/v1

boot() {  # NAME [vllm args...]: start vLLM and wait until it serves or dies
  local name=$1; shift
  local t0; t0=$(date +%s)
  # Random weights write one string forever unless every string and list is bounded (the reader's schemas are)
  # and the grammar admits no free whitespace.
  python3 -m vllm.entrypoints.openai.api_server --model "$model" --served-model-name tiny-qwen2-vl \
    --load-format dummy --host 127.0.0.1 --port 8000 --gpu-memory-utilization 0.5 --max-model-len 32768 \
    --max-num-seqs 32 --enforce-eager --limit-mm-per-prompt '{"image": 1, "video": 0}' \
    --structured-outputs-config '{"backend": "xgrammar", "disable_any_whitespace": true}' "$@" \
    > "$out/$name.full.log" 2>&1 &
  vllm_pid=$!
  state=TIMEOUT
  while [ $(( $(date +%s) - t0 )) -lt 300 ]; do
    if python3 -c "import urllib.request; urllib.request.urlopen('$url/models', timeout=2)" 2>/dev/null; then
      state=READY; break
    fi
    if ! kill -0 $vllm_pid 2>/dev/null; then state=DIED; break; fi
    sleep 1
  done
  echo "== $name: vllm $state after $(( $(date +%s) - t0 )) s: $*"
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
  grep -E "Model loading took|Encoder cache will be|Memory profiling takes|Skipping memory profiling|Available KV cache|GPU KV cache size|Maximum concurrency|Error|error:" \
    "$out/$name.full.log" | sed 's/^.*\] //' | head -12
}

stop() {
  kill $vllm_pid 2>/dev/null; wait $vllm_pid 2>/dev/null
  # The kept log: everything but vLLM's per-step DEBUG chatter, with the memory profile (a DEBUG line) kept.
  grep -v " DEBUG " "$out/$1.full.log" > "$out/$1.log"
  grep " DEBUG " "$out/$1.full.log" | grep -E "Memory profiling|free memory|Requested memory" >> "$out/$1.log"
  rm -f "$out/$1.full.log"
}

if [ "$mode" = serve ]; then
  pages=$1; shift
  boot serve
  [ "$state" = READY ] || { stop serve; exit 1; }
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader -lms 500 > "$out/nvml.csv" &
  smi=$!
  for book in "$@"; do
    t0=$EPOCHREALTIME
    name=$(basename "$book")
    python3 -c "import sys; from comic_narrator.cli import main; sys.exit(main(sys.argv[1:]))" \
      read "$book" --vision llm --llm-url "$url" --json -q --work-dir "/tmp/work-$name" > "$out/read-$name.json" 2> "$out/read-$name.err"
    rc=$?
    echo "== read --vision llm $name: exit $rc in $(python3 -c "print(round($EPOCHREALTIME - $t0, 1))") s"
    tail -3 "$out/read-$name.err"
  done
  timeout 330 python3 "$here/gpu_vlm_reader.py" run "$pages" --url "$url" --concurrency 1,4,16 \
    --max-tokens 16384 --levels-pages 0,0,0
  cp "$pages/results.json" "$out/bench.json" 2>/dev/null
  kill $smi
  stop serve
else
  boot skip-mm --skip-mm-profiling
  stop skip-mm
  boot pages2k --mm-processor-kwargs '{"max_pixels": 1605632}'
  stop pages2k
fi
