"""Products of a Python GPU library, run as they are or under the cuBLAS interposer
(LD_PRELOAD=libemugemm_cublas.so): float64 and complex128 `a @ b` of n x n matrices, timed
(median of 7 after one warm-up, CUDA events). Up to n = 4096, the largest error against numpy's
product on the host, relative to max (|a| |b|). The same product through the C ABI
(`emugemm_dgemm`/`emugemm_zgemm` at F64: the Rust device-view path behind a thin C shim) on the
same device memory, with the operands in the order a row-major library hands cuBLAS
(C^T = B^T A^T), timed the same way in the same process, alternating with the matmul: from the interposer where it is
preloaded, otherwise from the library that EMUGEMM_C names (libemugemm_c.so), otherwise not at
all. Under the interposer, whether its bits equal the matmul's. Prints one JSON line per dtype and
size.

usage: python matmul.py torch|cupy N [N ...]"""
import ctypes
import json
import os
import sys

import numpy as np


class Precision(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("parameter", ctypes.c_uint32)]


def abi():
    """(the C ABI's products by dtype, whether the interposer is preloaded), or (None, False)"""
    process = ctypes.CDLL(None)
    if hasattr(process, "emugemm_zgemm"):
        library, preloaded = process, True
    elif os.environ.get("EMUGEMM_C"):
        library, preloaded = ctypes.CDLL(os.environ["EMUGEMM_C"]), False
    else:
        return None, False
    return {"float64": library.emugemm_dgemm, "complex128": library.emugemm_zgemm}, preloaded


def through_abi(function, a_ptr, b_ptr, c_ptr, n, dtype, stream):
    """c = a @ b for row-major n x n operands, as cuBLAS is asked it: col-major c^T = b^T a^T"""
    if dtype == "float64":
        one, zero = ctypes.c_double(1.0), ctypes.c_double(0.0)
    else:
        one, zero = (ctypes.c_double * 2)(1.0, 0.0), (ctypes.c_double * 2)(0.0, 0.0)
    p = ctypes.c_void_p
    status = function(0, 0, ctypes.c_int64(n), ctypes.c_int64(n), ctypes.c_int64(n), ctypes.byref(one), p(b_ptr), ctypes.c_int64(n),
                      p(a_ptr), ctypes.c_int64(n), ctypes.byref(zero), p(c_ptr), ctypes.c_int64(n), 0, p(stream), Precision(0, 0))
    if status != 0:
        raise RuntimeError(f"emugemm status {status}")


def main():
    library, sizes = sys.argv[1], [int(x) for x in sys.argv[2:]] or [4096]
    if library == "torch":
        import torch

        def make(n, dtype, seed):
            g = torch.Generator(device="cuda").manual_seed(seed)
            x = torch.randn(n, n, dtype=torch.float64, device="cuda", generator=g)
            if dtype == "complex128":
                x = torch.complex(x, torch.randn(n, n, dtype=torch.float64, device="cuda", generator=g))
            return x

        def timed(f):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = f()
            end.record()
            torch.cuda.synchronize()
            return out, start.elapsed_time(end)

        to_host = lambda x: x.cpu().numpy()
        address = lambda x: x.data_ptr()
        empty = torch.empty_like
        stream = lambda: torch.cuda.current_stream().cuda_stream
        sync = torch.cuda.synchronize
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
        address = lambda x: x.data.ptr
        empty = cupy.empty_like
        stream = lambda: cupy.cuda.get_current_stream().ptr
        sync = cupy.cuda.Device().synchronize
    products, hooked = abi()
    for n in sizes:
        for dtype in ("float64", "complex128"):
            a, b = make(n, dtype, 1), make(n, dtype, 2)
            c, _ = timed(lambda: a @ b)
            d = empty(c)
            product = (lambda: through_abi(products[dtype], address(a), address(b), address(d), n, dtype, stream())) if products else None
            if product:
                timed(product)
            # the matmul and the C ABI's product alternate, so that both meet the same clocks
            times, abi_times = [], []
            for _ in range(7):
                times.append(timed(lambda: a @ b)[1])
                if product:
                    abi_times.append(timed(product)[1])
            row = {"library": library, "dtype": dtype, "n": n, "median_ms": round(sorted(times)[3], 3)}
            if n <= 4096:
                ha, hb = to_host(a), to_host(b)
                row["max_error"] = float(np.abs(to_host(c) - ha @ hb).max() / (np.abs(ha) @ np.abs(hb)).max())
            if product:
                row["c_abi_median_ms"] = round(sorted(abi_times)[3], 3)
            if hooked:
                row["bits_equal_c_abi"] = bool((to_host(c).view(np.uint64) == to_host(d).view(np.uint64)).all())
            print(json.dumps(row), flush=True)


main()
