#!/usr/bin/env bash
# suite.py with each library (PyTorch, then CuPy) unhooked and under the cuBLAS interposer, over two
# rounds that alternate (unhooked, hooked, unhooked, hooked) so that a drift of the clocks meets
# both alike; then suite_report.py's tables, printed and written to OUTDIR/summary.md. It leaves
#   OUTDIR/LIB.{unhooked,hooked}.{1,2}.jsonl  suite.py's lines (.err: its standard error)
#   OUTDIR/LIB.hooked.jsonl                   the interposer's log of both hooked rounds
#   OUTDIR/failed.txt                         the runs that failed or passed SUITE_TIMEOUT
# A run that fails or passes SUITE_TIMEOUT seconds (default 900) is noted and the others go on; the
# exit status is 1 where any did. --batched and --rank-k set EMUGEMM_HOOK_BATCHED=1 and
# EMUGEMM_HOOK_RANK_K=1 in the hooked runs; the other arguments go to suite.py. SUITE_LIBS (default
# "torch cupy") and PYTHON (default python3) name the libraries and the interpreter, SUITE_ROUNDS
# (default 2) the rounds.
# usage: scripts/clients/run_suite.sh HOOK_SO OUTDIR [--batched] [--rank-k] [suite.py args...]
set -uo pipefail
if [ $# -lt 2 ] || [ ! -f "$1" ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
# absolute paths: suite.py and the interposer open them from the child's directory
hook=$(realpath "$1")
mkdir -p "$2" || exit 2
out=$(cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
limit=${SUITE_TIMEOUT:-900}
switches=()
args=()
for arg in "$@"; do
  case $arg in
    --batched) switches+=(EMUGEMM_HOOK_BATCHED=1) ;;
    --rank-k) switches+=(EMUGEMM_HOOK_RANK_K=1) ;;
    *) args+=("$arg") ;;
  esac
done
rm -f "$out/failed.txt"
for lib in ${SUITE_LIBS:-torch cupy}; do
  log="$out/$lib.hooked.jsonl"
  # suite.py's log_lines count the log's lines from its start: a log of an earlier suite would shift them
  rm -f "$log"
  for round in $(seq 1 "${SUITE_ROUNDS:-2}"); do
    for mode in unhooked hooked; do
      preload=()
      if [ "$mode" = hooked ]; then
        preload=(LD_PRELOAD="$hook" EMUGEMM_HOOK_LOG="$log" ${switches[@]+"${switches[@]}"})
      fi
      echo "== $lib $mode, round $round" >&2
      # env sets LD_PRELOAD for python only, not for timeout; -k: a process that ignores TERM is killed
      timeout -k 30 "$limit" env ${preload[@]+"${preload[@]}"} "$python" "$here/suite.py" "$lib" ${args[@]+"${args[@]}"} \
        >"$out/$lib.$mode.$round.jsonl" 2>"$out/$lib.$mode.$round.err"
      rc=$?
      if [ $rc -ne 0 ]; then
        note="$lib $mode round $round: exit $rc"
        case $rc in
          124) note+=" (past SUITE_TIMEOUT=$limit s)" ;;
          137) note+=" (killed: 30 s past SUITE_TIMEOUT=$limit s, or out of memory)" ;;
        esac
        echo "$note; the end of its standard error:" >&2
        tail -n 5 "$out/$lib.$mode.$round.err" >&2
        echo "$note" >>"$out/failed.txt"
      fi
    done
  done
done
"$python" "$here/suite_report.py" "$out"
[ ! -s "$out/failed.txt" ]
