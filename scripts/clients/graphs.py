"""A PyTorch product captured into a CUDA graph (`torch.cuda.graph`, its default global capture
mode, after the warm-up the PyTorch documentation asks for), run as it is or under the cuBLAS
interposer (LD_PRELOAD=libemugemm_cublas.so EMUGEMM_GRAPHS=on CUDA_MODULE_LOADING=EAGER): for each dtype and size, `c = a @ b` of n x n
matrices captured once, then the graph replayed REPS times on the same operands, each replay timed
with CUDA events (the median). The graph's output must equal, bit for bit, the same product
uncaptured in the same process (under the interposer: the hooked call's). Then the operands are
refilled, the graph replayed once more, and compared with the uncaptured product of the new
operands. Prints one JSON line per dtype and size.

usage: python graphs.py DTYPE:N [DTYPE:N ...]     (DTYPE float64 or complex128; REPS=20)"""
import json
import os
import sys

import torch


def operand(n, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(n, n, dtype=torch.float64, device="cuda", generator=g)
    if dtype == torch.complex128:
        x = torch.complex(x, torch.randn(n, n, dtype=torch.float64, device="cuda", generator=g))
    return x


def same_bits(x, y):
    return torch.equal(torch.view_as_real(x) if x.is_complex() else x, torch.view_as_real(y) if y.is_complex() else y)


def case(dtype_name, n, reps):
    dtype = getattr(torch, dtype_name)
    a, b = operand(n, dtype, 1), operand(n, dtype, 2)
    uncaptured = a @ b
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            a @ b
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = a @ b
    graph.replay()
    torch.cuda.synchronize()
    equal = same_bits(out, uncaptured)
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    a.copy_(operand(n, dtype, 3))
    b.copy_(operand(n, dtype, 4))
    graph.replay()
    refilled = same_bits(out, a @ b)
    torch.cuda.synchronize()
    return {
        "dtype": dtype_name,
        "n": n,
        "hooked": "libemugemm_cublas" in os.environ.get("LD_PRELOAD", ""),
        "replay_ms": round(times[len(times) // 2], 3),
        "replay_ms_min": round(times[0], 3),
        "equal_uncaptured": equal,
        "equal_after_refill": refilled,
        "gpu": torch.cuda.get_device_name(),
    }


def main():
    reps = int(os.environ.get("REPS", "20"))
    for spec in sys.argv[1:]:
        dtype_name, n = spec.split(":")
        print(json.dumps(case(dtype_name, int(n), reps)), flush=True)


if __name__ == "__main__":
    main()
