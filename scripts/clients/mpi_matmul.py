"""An MPI program that multiplies through CuPy, one GPU per rank (rank r on GPU r modulo the GPU
count): the interposer under each rank (started by run_mpi.sh), a log per rank. Each rank makes
float64 and complex128 n x n matrices of its own (seeded by its rank), times `a @ b` (the median of
five, each after a barrier, so that the ranks run side by side), checks it against a float64 product
of a 256-row slice on the host, hashes the product's bytes, and lists the other GPUs whose primary
context is active in its process (none, where a rank touches only its own GPU). Rank 0 prints every
rank's line.

usage: mpirun -np 2 python mpi_matmul.py N
       python mpi_matmul.py N --as-rank R   (rank R's products in a process of its own: the same
                                             hashes, for comparing a rank against one process)"""
import ctypes
import hashlib
import json
import statistics
import sys

import cupy
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
args = sys.argv[1:]
as_rank = int(args[args.index("--as-rank") + 1]) if "--as-rank" in args else None
rank = comm.Get_rank() if as_rank is None else as_rank
count = cupy.cuda.runtime.getDeviceCount()
cupy.cuda.Device(rank % count).use()
n = int(args[0]) if args and args[0] != "--as-rank" else 8192


def other_active_contexts():
    """the GPUs other than this rank's whose primary context is active in this process"""
    cuda = ctypes.CDLL("libcuda.so.1")
    active = []
    for ordinal in range(count):
        device, flags, on = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
        if cuda.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
            continue
        if cuda.cuDevicePrimaryCtxGetState(device, ctypes.byref(flags), ctypes.byref(on)) != 0:
            continue
        if on.value and ordinal != cupy.cuda.Device().id:
            active.append(ordinal)
    return active


rows = []
for dtype in ("float64", "complex128"):
    rs = cupy.random.RandomState(10 + rank)
    a = rs.standard_normal((n, n), dtype=cupy.float64)
    b = rs.standard_normal((n, n), dtype=cupy.float64)
    if dtype == "complex128":
        a, b = a + 1j * rs.standard_normal((n, n)), b + 1j * rs.standard_normal((n, n))
    c = a @ b
    times = []
    for _ in range(5):
        comm.Barrier()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        c = a @ b
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    ha, hb = cupy.asnumpy(a[:256]), cupy.asnumpy(b)
    err = float(np.abs(cupy.asnumpy(c[:256]) - ha @ hb).max() / (np.abs(ha) @ np.abs(hb)).max())
    digest = hashlib.sha256(cupy.asnumpy(c).tobytes()).hexdigest()[:16]
    rows.append(
        {
            "rank": rank,
            "ranks": comm.Get_size(),
            "gpu": cupy.cuda.Device().id,
            "pci": cupy.cuda.Device().pci_bus_id,
            "dtype": dtype,
            "n": n,
            "ms": round(statistics.median(times), 3),
            "max_error": err,
            "sha256": digest,
        }
    )
for row in rows:
    row["other_gpu_contexts"] = other_active_contexts()
every = comm.gather(rows, root=0)
if comm.Get_rank() == 0:
    for rank_rows in every:
        for row in rank_rows:
            print(json.dumps(row), flush=True)
