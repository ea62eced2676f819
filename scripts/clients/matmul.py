"""Products of a Python GPU library, run as they are or under the cuBLAS interposer
(LD_PRELOAD=libemugemm_cublas.so): float64 and complex128 `a @ b` of n x n matrices, timed
(median of 5 after one warm-up, CUDA events), and their largest error against the product on
the host in float64 (`numpy`), relative to max |a| |b| summed. Prints one JSON line per dtype.

usage: python matmul.py torch|cupy N [N ...]"""
import json
import sys

import numpy as np


def main():
    library, sizes = sys.argv[1], [int(x) for x in sys.argv[2:]] or [4096]
    if library == "torch":
        import torch

        def make(n, dtype, seed):
            g = torch.Generator(device="cuda").manual_seed(seed)
            real = torch.float64
            x = torch.randn(n, n, dtype=real, device="cuda", generator=g)
            if dtype == "complex128":
                x = torch.complex(x, torch.randn(n, n, dtype=real, device="cuda", generator=g))
            return x

        def timed(f):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = f()
            end.record()
            torch.cuda.synchronize()
            return out, start.elapsed_time(end)

        to_host = lambda x: x.cpu().numpy()
    else:
        import cupy

        def make(n, dtype, seed):
            rs = cupy.random.RandomState(seed)
            x = rs.standard_normal((n, n), dtype=cupy.float64)
            if dtype == "complex128":
                x = x + 1j * rs.standard_normal((n, n), dtype=cupy.float64)
            return x

        def timed(f):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            out = f()
            end.record()
            end.synchronize()
            return out, cupy.cuda.get_elapsed_time(start, end)

        to_host = cupy.asnumpy
    for n in sizes:
        for dtype in ("float64", "complex128"):
            a, b = make(n, dtype, 1), make(n, dtype, 2)
            c, _ = timed(lambda: a @ b)
            times = sorted(timed(lambda: a @ b)[1] for _ in range(5))
            ha, hb = to_host(a), to_host(b)
            scale = (np.abs(ha) @ np.abs(hb)).max()
            err = float(np.abs(to_host(c) - ha @ hb).max() / scale)
            print(json.dumps({"library": library, "dtype": dtype, "n": n, "median_ms": times[2], "max_error": err}), flush=True)


main()
