#!/usr/bin/env bash
# mpi_matmul.py on NP ranks (one GPU each), with the cuBLAS interposer under every rank and a log
# per rank (LOGDIR/rank<R>.jsonl); without HOOK set, the same program unhooked.
# usage: HOOK=path/to/libemugemm_cublas.so LOGDIR=dir scripts/clients/run_mpi.sh NP N
set -euo pipefail
np=${1:-2}
n=${2:-8192}
here="$(cd "$(dirname "$0")" && pwd)"
logdir=${LOGDIR:-.}
mkdir -p "$logdir"
exec mpirun --allow-run-as-root -np "$np" bash -c '
  if [ -n "${HOOK:-}" ]; then
    export LD_PRELOAD="$HOOK" EMUGEMM_HOOK_LOG="'"$logdir"'/rank${OMPI_COMM_WORLD_RANK}.jsonl"
  fi
  exec python3 "'"$here"'/mpi_matmul.py" "'"$n"'"'
