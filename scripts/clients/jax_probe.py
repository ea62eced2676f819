"""What JAX's XLA runs for float64 and complex128 dots on the GPU, and whether the cuBLAS
interposer can see it: compiles `a @ b` (n x n, x64 enabled) under the XLA_FLAGS it is started
with, and prints one JSON line per dtype with
  - the custom-call targets and fusion kinds of the optimised HLO (a cuBLAS GEMM is a
    `__cublas$gemm` custom call, a cuBLASLt one `__cublas$lt$matmul`, a Triton GEMM a fusion of
    kind `__triton_gemm`),
  - the median time of 5 runs after a warm-up and the largest error against numpy's product,
  - the cuBLAS libraries mapped into the process, and which of them the loaded XLA libraries
    import GEMM symbols from through the dynamic linker (`nm -D`): a symbol imported there is one
    LD_PRELOAD can interpose.
Run it with and without LD_PRELOAD=libemugemm_cublas.so and EMUGEMM_HOOK_LOG, and with
XLA_FLAGS=--xla_gpu_enable_triton_gemm=false (and =--xla_gpu_enable_cublaslt=true): the log says
whether any call reached the interposer.

usage: python jax_probe.py [N]"""
import json
import re
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def mapped_libraries():
    """the shared objects of this process whose name mentions cublas, xla or jax"""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "/" in line.split()[-1]}
    return sorted(p for p in paths if re.search(r"cublas|xla|jax", p))


def gemm_imports(path):
    """the undefined (imported) cuBLAS GEMM symbols of `path`"""
    try:
        out = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return sorted({line.split()[-1] for line in out.splitlines() if re.search(r"cublas(Lt)?\w*(gemm|Matmul)", line, re.I)})


n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
rng = np.random.default_rng(1)
for dtype in ("float64", "complex128"):
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    if dtype == "complex128":
        a, b = a + 1j * rng.standard_normal((n, n)), b + 1j * rng.standard_normal((n, n))
    da, db = jnp.asarray(a), jnp.asarray(b)
    product = jax.jit(lambda x, y: x @ y)
    hlo = product.lower(da, db).compile().as_text()
    targets = sorted(set(re.findall(r'custom_call_target="([^"]+)"', hlo)))
    kinds = sorted(set(re.findall(r'"kind":"([^"]+)"', hlo)) | set(re.findall(r"kind=(k\w+)", hlo)))
    c = product(da, db).block_until_ready()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        product(da, db).block_until_ready()
        times.append((time.perf_counter() - start) * 1e3)
    err = float(np.abs(np.asarray(c) - a @ b).max() / (np.abs(a) @ np.abs(b)).max())
    row = {"dtype": dtype, "n": n, "custom_calls": targets, "fusion_kinds": kinds, "median_ms": round(sorted(times)[2], 3), "max_error": err}
    print(json.dumps(row), flush=True)
libraries = mapped_libraries()
print(json.dumps({"mapped": libraries, "gemm_imports": {p: gemm_imports(p) for p in libraries if gemm_imports(p)}}), flush=True)
