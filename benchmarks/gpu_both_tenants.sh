#!/usr/bin/env bash
# Both GPU tenants at work at once, started by `comic-narrator gpu up` with the release protocol.
#
# On a GPU machine with vLLM 0.20.0 in /tmp/vllm-site (/work/shared/gpu/README.md's recipe), the voices and
# onnxruntime-gpu in /tmp/tts-site (gpu_tts_device.sh install) and the project's other dependencies there too:
#   coreside   `gpu up` a co-resident stack (vLLM serving the random-weight Qwen2-VL folder of
#              gpu_make_tiny_vlm.py, the project's voice server on CUDA), then narrate BOOK_DIR three times with
#              `--stack`: streamed (pages flow: the LLM reads ahead while earlier pages are voiced), then as two
#              passes in one work folder (`--vision-only`: the LLM alone; then voices and render from the cached
#              readings: the TTS alone). The passes' walls are each tenant's busy time to compare the stream with.
#   timeshare  `gpu up` the same stack time-shared (vLLM with sleep mode: awake to read every page, asleep while
#              the voices are made) and narrate the book once.
# NVML memory is sampled every 0.5 s throughout (OUT_DIR/nvml-PHASE.csv); each run's JSON progress and summary
# go to OUT_DIR, and each tenant's busy seconds in it (gpu_busy_sampler.py: vLLM's running requests, the voice
# server's lines in flight) with the seconds both were busy at once. LLM_COMMAND replaces the vLLM command and TTS_DEVICE (cuda) the voices' device, for a dry run of
# this script on a machine without a GPU (with a stand-in LLM; GPU_MEMORY=32GiB then stands for NVML).
# A stack already up is adopted (`gpu up` adopts healthy servers), and KEEP_UP=1 leaves it up afterwards, so the
# runs of one mode can be split over several calls: RUNS picks them (coreside: stream twopass, and jobs4: streamed
# with 4 render workers; timeshare: timeshare). A run named base-NAME runs NAME with the comic_narrator of BASE_SRC
# (another commit's src/, for an A/B in one boot; the voice server stays this tree's), alt-NAME with ALT_SRC's,
# alt2-NAME with ALT2_SRC's; long-NAME narrates LONG_BOOK_DIR (default: BOOK_DIR's sibling book-long, the whole
# 58-page volume of gpu_bundle.sh) instead of BOOK_DIR (long8-NAME the same with --llm-concurrency 8, longfull-NAME without --draft: the full 1080p render), so the two ends that are serial by construction (before
# the first request, after the last answer) weigh less against the busy times. MPS=1 starts NVIDIA's
# Multi-Process Service before `gpu up` and stops it after `gpu down`.
# usage: gpu_both_tenants.sh coreside|timeshare MODEL_DIR BOOK_DIR OUT_DIR [RUNS...]
set -u
phase=$1; model=$2; book=$3; out=$4; shift 4
runs=${*:-$([ "$phase" = coreside ] && echo "stream twopass" || echo timeshare)}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../src" && pwd)
export HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 PYTHONUNBUFFERED=1
# The run's own process takes its packages from CLI_SITE (default: the voices' site, onnxruntime-gpu included; a
# site without onnxruntime leaves the run the plain CPU onnxruntime a user's install has, as only the voice server
# needs the GPU build).
cli_site=${CLI_SITE:-/tmp/tts-site}
export PYTHONPATH="$cli_site:$src"
voices="ja-alpha:ja:female,ja-nezumi:ja:male,ja-gongitsune:ja:female,ja-tebukuro:ja:male"
llm_command=${LLM_COMMAND:-"python3 -m vllm.entrypoints.openai.api_server --model $model
  --served-model-name tiny-qwen2-vl --load-format dummy --port 8000 --gpu-memory-utilization 0.5
  --max-model-len 32768 --max-num-seqs 32 --enforce-eager --limit-mm-per-prompt '{\"image\": 1, \"video\": 0}'
  --structured-outputs-config '{\"backend\": \"xgrammar\", \"disable_any_whitespace\": true}'"}
llm_command="$llm_command ${LLM_EXTRA:-}"
cn() { python3 -c "import sys; from comic_narrator.cli import main; sys.exit(main(sys.argv[1:]))" "$@"; }

python3 -c "import comic_narrator.cli.app, comic_narrator.reading.reader, rapidocr, av, soundfile, pydantic" || exit 3
# Every line goes to the GPU voices: the cast pins the narrator and the reader's ids to the server's voices, and "*"
# everyone else (casting alone would give a character whose age a bundled voice matches that bundled voice, voiced
# on the CPU).
python3 - "$out/cast.yaml" <<'EOF2'
import sys
served = ["openai:ja-alpha", "openai:ja-nezumi", "openai:ja-gongitsune", "openai:ja-tebukuro"]
ids = ["narrator", "unknown", "pepper", "carrot", *(f"char{n}" for n in range(1, 41))]
cast = "".join(f"{cid}: {served[i % 4]}\n" for i, cid in enumerate(ids))
# and anybody else the LLM names (random weights name a character now and then) to the server's voices too
open(sys.argv[1], "w").write(cast + '"*": [' + ", ".join(served) + "]\n")
EOF2
stack="$out/stack-$phase.yaml"
cat > "$stack" <<EOF
gpu: 0
headroom: 512MiB
mode: $phase
state_dir: /tmp/stack-$phase
llm:
  name: vllm
  command: >-
    $(echo "$llm_command" | tr '\n' ' ')
  env: {PYTHONPATH: /tmp/vllm-site}
  url: http://127.0.0.1:8000
  health: /health
  boot_timeout_s: 300
  retries: 1
tts:
  name: voices
  command: python3 -m comic_narrator.gpu.tts_server --device ${TTS_DEVICE:-cuda} --port 8092
  env: {PYTHONPATH: "/tmp/tts-site:$src"}
  url: http://127.0.0.1:8092
  health: /health
  boot_timeout_s: 120
EOF
[ "${MPS:-0}" = 1 ] && nvidia-cuda-mps-control -d && echo "== MPS daemon started"
smi=
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader -lms 500 >> "$out/nvml-$phase.csv" &
  smi=$!
fi
t=$EPOCHREALTIME
cn gpu up "$stack" --json ${GPU_MEMORY:+--gpu-memory $GPU_MEMORY} > "$out/up-$phase-${runs// /-}.json" 2> "$out/up-$phase-${runs// /-}.log"
rc=$?
echo "== gpu up ($phase): exit $rc in $(python3 -c "print(round($EPOCHREALTIME - $t, 1))") s"
tail -4 "$out/up-$phase-${runs// /-}.log"
if [ $rc = 0 ]; then
  run() {  # NAME WORK [extra options]
    local name=$1 work=$2; shift 2
    local t=$EPOCHREALTIME
    timeout 280 python3 -c "import sys; from comic_narrator.cli import main; sys.exit(main(sys.argv[1:]))" \
      "$book" -o "$out/$name.mp4" --work-dir "/tmp/work-$work" --layout manga --stack "$stack" \
      --tts-api openai --tts-voices "$voices" --cast "$out/cast.yaml" ${draft_flag---draft} --json-progress "$@" 2> "$out/$name.progress.jsonl" > "$out/$name.out"
    local rc=$?
    local t1=$EPOCHREALTIME
    echo "== $name: exit $rc in $(python3 -c "print(round($t1 - $t, 1))") s"
    python3 "$here/gpu_busy_sampler.py" window "$out/busy-${runs// /-}.csv" "$t" "$t1" | tee "$out/$name.busy.json"
    grep '"summary"' "$out/$name.progress.jsonl" | tail -1 | cut -c1-600
    grep -v '^{' "$out/$name.progress.jsonl" | tail -3
    rm -f "$out/$name.mp4"
  }
  python3 "$here/gpu_busy_sampler.py" sample "$out/busy-${runs// /-}.csv" &
  sampler=$!
  # One line warms the voices' CUDA sessions, and a one-page book the readers' models and the OS's caches, so
  # that no measured run pays for that.
  mkdir -p /tmp/warm-book && cp "$(ls "$book"/* | head -1)" /tmp/warm-book/
  python3 -c "import json, urllib.request; urllib.request.urlopen(urllib.request.Request('http://127.0.0.1:8092/v1/audio/speech', json.dumps({'input': 'テスト', 'voice': 'ja-alpha'}).encode(), {'Content-Type': 'application/json'}), timeout=120).read()"
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2> /dev/null
  grep -q adopted "$out/up-$phase-${runs// /-}.log" || (book=/tmp/warm-book; run warm-$phase warm-$phase)
  for name in $runs; do
    case $name in
      twopass) run twopass-read twopass --vision-only; run twopass-voice twopass ;;
      jobs4) run stream-jobs4 stream-jobs4 --jobs 4 ;;  # streamed with 4 render workers instead of one per core
      base-*) (export PYTHONPATH="$cli_site:${BASE_SRC:?base runs need BASE_SRC}"; run "$name" "$name") ;;
      alt-*) (export PYTHONPATH="$cli_site:${ALT_SRC:?alt runs need ALT_SRC}"; run "$name" "$name") ;;
      alt2-*) (export PYTHONPATH="$cli_site:${ALT2_SRC:?alt2 runs need ALT2_SRC}"; run "$name" "$name") ;;
      long-*) (book=${LONG_BOOK_DIR:-$(dirname "$book")/book-long}; run "$name" "$name") ;;
      long8-*) (book=${LONG_BOOK_DIR:-$(dirname "$book")/book-long}; run "$name" "$name" --llm-concurrency 8) ;;
      longfull-*) (book=${LONG_BOOK_DIR:-$(dirname "$book")/book-long}; draft_flag=; run "$name" "$name") ;;
      *) run "$name" "$name" ;;
    esac
  done
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2> /dev/null
  kill $sampler
fi
[ -n "$smi" ] && kill $smi
cp /tmp/stack-$phase/*.log "$out/" 2> /dev/null
[ "${KEEP_UP:-0}" = 1 ] || cn gpu down "$stack" > "$out/down-$phase.log" 2>&1
[ "${MPS:-0}" = 1 ] && [ "${KEEP_UP:-0}" != 1 ] && echo quit | nvidia-cuda-mps-control
grep -hE "Available KV cache|Model loading took|Error" /tmp/stack-$phase/vllm-*.log 2> /dev/null | head -5
