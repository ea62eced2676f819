"""cuSOLVER through CuPy, run as it is or under the cuBLAS interposer: LU (getrf, through
cupyx.scipy.linalg.lu_factor) and Cholesky (potrf, through cupy.linalg.cholesky) of n x n float64
and complex128 matrices, each timed (CUDA events, after one warm-up) with its residual:
||P A - L U||_F / ||A||_F and ||A - L L^H||_F / ||A||_F (the residual's own products run under the
interposer too, at its precision). Prints one JSON line per factorization. Under mpirun each rank
factors on GPU (rank modulo the GPU count), the ranks timed side by side (a barrier before each
run), and every line names its rank and GPU.

usage: python factor.py N [N ...]
       mpirun -np 2 python factor.py N   (or run_mpi.sh 2 N factor.py, with the interposer)"""
import json
import os
import statistics
import sys

import cupy
import cupyx.scipy.linalg as cla

if "OMPI_COMM_WORLD_RANK" in os.environ:
    from mpi4py import MPI

    barrier, rank = MPI.COMM_WORLD.Barrier, MPI.COMM_WORLD.Get_rank()
else:
    barrier, rank = (lambda: None), 0
cupy.cuda.Device(rank % cupy.cuda.runtime.getDeviceCount()).use()


def timed(f):
    """f's result and the median of three timed runs after a warm-up, in ms"""
    f()
    times = []
    for _ in range(3):
        barrier()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        out = f()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return out, statistics.median(times)


def matrix(n, dtype, seed):
    rs = cupy.random.RandomState(seed)
    a = rs.standard_normal((n, n), dtype=cupy.float64)
    if dtype == "complex128":
        a = a + 1j * rs.standard_normal((n, n), dtype=cupy.float64)
    return a


for n in [int(x) for x in sys.argv[1:]] or [8192]:
    for dtype in ("float64", "complex128"):
        a = matrix(n, dtype, 5)
        (lu, piv), ms = timed(lambda: cla.lu_factor(a, check_finite=False))
        lower = cupy.tril(lu, -1) + cupy.eye(n, dtype=lu.dtype)
        upper = cupy.triu(lu)
        # LAPACK's pivots: row i was swapped with row piv[i], in order
        order = list(range(n))
        for i, p in enumerate(cupy.asnumpy(piv)):
            order[i], order[p] = order[p], order[i]
        permuted = a[cupy.asarray(order)]
        residual = float(cupy.linalg.norm(permuted - lower @ upper) / cupy.linalg.norm(a))
        print(json.dumps({"rank": rank, "gpu": cupy.cuda.Device().id, "routine": "getrf", "dtype": dtype, "n": n, "ms": round(ms, 3), "residual": residual}), flush=True)
        spd = a @ a.conj().T / n + cupy.eye(n, dtype=a.dtype)
        chol, ms = timed(lambda: cupy.linalg.cholesky(spd))
        residual = float(cupy.linalg.norm(spd - chol @ chol.conj().T) / cupy.linalg.norm(spd))
        print(json.dumps({"rank": rank, "gpu": cupy.cuda.Device().id, "routine": "potrf", "dtype": dtype, "n": n, "ms": round(ms, 3), "residual": residual}), flush=True)
