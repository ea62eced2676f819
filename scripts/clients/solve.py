"""cuSOLVER through CuPy, run as it is or under the cuBLAS interposer: LU (`cupy.linalg.solve`,
getrf/getrs, whose trailing updates call cublasDgemm_v2_64) of an n x n float64 system, timed,
and its residual ||A x - b|| / (||A|| ||x||). Prints one JSON line.

usage: python solve.py N"""
import json
import sys

import cupy

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
rs = cupy.random.RandomState(3)
a = rs.standard_normal((n, n), dtype=cupy.float64) + n ** 0.5 * cupy.eye(n)
b = rs.standard_normal((n, 1), dtype=cupy.float64)
x = cupy.linalg.solve(a, b)
start, end = cupy.cuda.Event(), cupy.cuda.Event()
start.record()
x = cupy.linalg.solve(a, b)
end.record()
end.synchronize()
residual = float(cupy.linalg.norm(a @ x - b) / (cupy.linalg.norm(a) * cupy.linalg.norm(x)))
print(json.dumps({"library": "cupy", "routine": "solve", "n": n, "ms": cupy.cuda.get_elapsed_time(start, end), "residual": residual}))
