#!/bin/bash
# Panel-segmenter trainings side by side on the device machine, in the background, so that runs longer than one
# call's ten minutes go on between calls.
#
#   start:  bash training/panels/device_runs.sh start DATA NAME="EXTRA ARGS" [NAME="EXTRA ARGS" ...]
#   wait:   bash training/panels/device_runs.sh wait SECONDS NAME [NAME ...]
#
# `start` copies training/panels to /root/tp and starts one train.py per NAME with the shipped recipe plus the
# run's extra arguments, writing /root/NAME.onnx and /root/NAME.log; the data workers (15 in all) are shared out.
# `wait` waits until every NAME's model is exported or SECONDS pass, then copies what exists to $OUT. Make the next
# call at once: an idle machine is taken back after 30 s, and with it the runs.
set -u
verb=$1
shift
if [ "$verb" = start ]; then
    data=$1
    shift
    workers=$(( 15 / $# ))
    rm -rf /root/tp && cp -r training/panels /root/tp
    for run in "$@"; do
        name=${run%%=*}
        extra=${run#*=}
        [ "$extra" = "$run" ] && extra=""
        # shellcheck disable=SC2086
        (cd /root/tp && setsid nohup python train.py "$data" "/root/$name.onnx" --steps 4000 --batch 32 \
            --real-share 0.4 --seed 17 --workers "$workers" --action-share 0.12 $extra \
            > "/root/$name.log" 2>&1 < /dev/null &)
    done
    sleep 20
    tail -n 2 /root/*.log
elif [ "$verb" = wait ]; then
    end=$((SECONDS + $1))
    shift
    done_all() { for name in "$@"; do [ -f "/root/$name.onnx" ] || return 1; done; }
    while [ $SECONDS -lt $end ] && ! done_all "$@"; do sleep 5; done
    sleep 2
    for name in "$@"; do tail -n 2 "/root/$name.log"; cp "/root/$name.log" "$OUT/"; \
        [ -f "/root/$name.onnx" ] && cp "/root/$name.onnx" "$OUT/"; done
    ls -la "$OUT"
fi
