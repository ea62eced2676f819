#!/usr/bin/env bash
# A client program on NP ranks (mpi_matmul.py by default; any program in this folder, such as
# factor.py), with the cuBLAS interposer under every rank and a log per rank
# (LOGDIR/rank<R>.jsonl); without HOOK set, the same program unhooked.
# usage: HOOK=path/to/libemugemm_cublas.so LOGDIR=dir scripts/clients/run_mpi.sh NP N [PROGRAM]
set -euo pipefail
np=${1:-2}
n=${2:-8192}
program=${3:-mpi_matmul.py}
here="$(cd "$(dirname "$0")" && pwd)"
logdir=${LOGDIR:-.}
mkdir -p "$logdir"
exec mpirun --allow-run-as-root --oversubscribe -np "$np" bash -c '
  if [ -n "${HOOK:-}" ]; then
    export LD_PRELOAD="$HOOK" EMUGEMM_HOOK_LOG="'"$logdir"'/rank${OMPI_COMM_WORLD_RANK}.jsonl"
  fi
  exec python3 "'"$here"'/'"$program"'" "'"$n"'"'
