"""An MPI program that multiplies through CuPy, one GPU per rank: the interposer under each rank
(started by run_mpi.sh), a log per rank. Each rank times float64 and complex128 `a @ b` of n x n
matrices of its own, checks it against a float64 product of a 256-row slice on the host, and rank 0
prints every rank's line.

usage: mpirun -np 2 python mpi_matmul.py N"""
import json
import sys

import cupy
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
cupy.cuda.Device(rank % cupy.cuda.runtime.getDeviceCount()).use()
n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
rows = []
for dtype in ("float64", "complex128"):
    rs = cupy.random.RandomState(10 + rank)
    a = rs.standard_normal((n, n), dtype=cupy.float64)
    b = rs.standard_normal((n, n), dtype=cupy.float64)
    if dtype == "complex128":
        a, b = a + 1j * rs.standard_normal((n, n)), b + 1j * rs.standard_normal((n, n))
    c = a @ b
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    c = a @ b
    end.record()
    end.synchronize()
    ha, hb = cupy.asnumpy(a[:256]), cupy.asnumpy(b)
    err = float(np.abs(cupy.asnumpy(c[:256]) - ha @ hb).max() / (np.abs(ha) @ np.abs(hb)).max())
    rows.append({"rank": rank, "gpu": cupy.cuda.Device().id, "dtype": dtype, "n": n, "ms": round(cupy.cuda.get_elapsed_time(start, end), 3), "max_error": err})
every = comm.gather(rows, root=0)
if rank == 0:
    for rank_rows in every:
        for row in rank_rows:
            print(json.dumps(row), flush=True)
