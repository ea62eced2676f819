#!/usr/bin/env bash
# Runs the bundle's benchmark ON the GPU machine with nvidia-smi sampled every 250 ms beside it, so
# that each row's SM clock and power can be read afterwards (scripts/clocks-per-row.py).
#
# usage: scripts/bench-clocks.sh BUNDLE SIZES ONLY NAME [LIMIT_S]
#   BUNDLE   the unpacked bundle folder (scripts/build-gpu-bundle.sh)
#   SIZES    EMUGEMM_BENCH_SIZES, e.g. 4096,8192
#   ONLY     EMUGEMM_BENCH_ONLY ("" for every row)
#   NAME     the results' name: $OUT/bench-NAME.txt (rows behind a timestamp) and $OUT/smi-NAME.csv
#   LIMIT_S  seconds the benchmark may run (default 500)
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: $0 BUNDLE SIZES ONLY NAME [LIMIT_S]" >&2; exit 2; }
bundle="$1" sizes="$2" only="$3" name="$4" limit="${5:-500}"
: "${OUT:?set OUT to the results folder}"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active,temperature.gpu \
	--format=csv,noheader -lms 250 >"$OUT/smi-$name.csv" &
smi=$!
if [ -n "$only" ]; then export EMUGEMM_BENCH_ONLY="$only"; else unset EMUGEMM_BENCH_ONLY; fi
EMUGEMM_BENCH_SIZES="$sizes" timeout "$limit" "$bundle/bench" 2>&1 |
	while IFS= read -r line; do printf '%s %s\n' "$(date '+%Y/%m/%d %H:%M:%S.%N' | cut -c1-23)" "$line"; done >"$OUT/bench-$name.txt"
kill "$smi"
cut -c25- "$OUT/bench-$name.txt" | grep -v "cheapest"
