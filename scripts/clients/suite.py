"""A suite of the GPU linear algebra that real programs run, through one Python library (PyTorch or
CuPy) in one process on GPU 0, as it is or under the cuBLAS interposer
(LD_PRELOAD=libemugemm_cublas.so with EMUGEMM_HOOK_LOG set):
  - products `a @ b` of float64, complex128, float32 and complex64: square n = 256, 1024, 4096,
    8192 and 16384 (the complex ones up to 8192), and 8192 x 8192 x k for k = 64, 512, 4096, 16384;
  - batches (torch.bmm, cupy.matmul of 3-D arrays) of 64 products 1024 x 1024 x 1024 and of 1000
    products 128 x 128 x 128, float64 and complex128;
  - solve (a right-hand side of 64 columns), cholesky (of a a^H + n I), qr, inv and eigh (of
    (a + a^H) / 2) of float64 and complex128 at n = 4096 and 8192;
  - queued-work probes: the host time of the call `c = a @ b` alone while ~20 ms of earlier work
    still runs on the stream; a call that waited for the stream would take the 20 ms.
Inputs are standard normal (complex: independent real and imaginary parts), made on the GPU from a
seed of the op's name, so that the unhooked and the hooked process see the same ones. Each op runs
once untimed, then 3 times (once for eigh at 8192 and where the untimed run took more than 2 s),
each run timed with CUDA events on the current stream. Prints one JSON line per op:
  library, op (a stable name, e.g. "matmul float64 8192x8192x512", "bmm complex128 64x1024x1024x1024",
  "eigh float64 4096"), ms (the median run), runs, warmup_ms,
  sample: 64 entries of the last run's result at positions seeded by the op's name, as [re, im]
    (of R for qr, of L for cholesky, of x for solve and inv, of the 64 smallest eigenvalues for eigh),
  residual: for solves and factorizations, in the inputs' precision with the library's own products,
    computed after the timing: ||A X - B||_F / (||A||_F ||X||_F) (solve; B = I for inv),
    ||L L^H - A||_F / ||A||_F, ||Q R - A||_F / ||A||_F, ||A V - V diag(w)||_F / ||A||_F; else null,
  log_lines: [first, last) of the lines that the interposer's log gained from the untimed run to the
    last timed one (null where EMUGEMM_HOOK_LOG is unset),
  error, where the op failed (the others go on).
A probe's line has host_us (the median of 5 trials), runs (each trial's µs), queued_ms (the queued
work's length) and still_busy (in how many trials the queued work still ran when the call returned).
run_suite.sh runs it unhooked and hooked, suite_report.py compares the two.

usage: python suite.py torch|cupy [--ops PATTERN[,PATTERN...]] [--quick]
  --ops    only the ops whose name matches one of the shell patterns, each read as if between '*'
           (`eigh`, `matmul float64 8192x8192x*`)
  --quick  only the ops of sizes up to 1024 and the smallest of each family (a smoke run)"""
import argparse
import fnmatch
import json
import os
import random
import statistics
import time
import zlib
from dataclasses import dataclass
from typing import Callable

FLOATS = ("float64", "complex128", "float32", "complex64")
# the real type of each element type's parts
REAL = {"float64": "float64", "complex128": "float64", "float32": "float32", "complex64": "float32"}
SAMPLE = 64
RHS = 64
TIMED_RUNS = 3
# an op whose untimed run took longer than this is timed once
SLOW_MS = 2000.0
QUICK_SIZE = 1024
QUEUED_MS = 20.0
PROBE_TRIALS = 5
# torch.cuda._sleep's clock cycles timed to find the SM clock (a few ms at the clocks of an H100)
CALIBRATION_CYCLES = 10_000_000
# spins on the global timer (ns of wall-clock time), so that its length needs no calibration
SPIN = r"""
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}"""


class Library:
    """what both libraries share; a subclass provides the arrays, the operations and the events"""

    queued_ms = None

    def queue(self):
        """enqueues ~QUEUED_MS of work on the current stream; returns an event recorded after it"""
        if self.queued_ms is None:
            # the first launch loads the kernel
            self.spin()
            _, self.queued_ms = self.timed(self.spin)
        self.spin()
        return self.record()

    def sample(self, x, name):
        """SAMPLE entries of x at the op's positions, as [re, im] pairs"""
        values = self.take(x, positions(name, self.size(x)))
        return [[float(v.real), float(v.imag)] for v in values]


class Torch(Library):
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch
        torch.cuda.set_device(0)
        self.cycles = None

    def normal(self, shape, dtype, seed):
        torch = self.torch
        g = torch.Generator(device="cuda").manual_seed(seed)
        real = getattr(torch, REAL[dtype])
        x = torch.randn(shape, dtype=real, device="cuda", generator=g)
        if dtype.startswith("complex"):
            x = torch.complex(x, torch.randn(shape, dtype=real, device="cuda", generator=g))
        return x

    def timed(self, f):
        start, end = self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)
        start.record()
        out = f()
        end.record()
        self.torch.cuda.synchronize()
        return out, start.elapsed_time(end)

    def sync(self):
        self.torch.cuda.synchronize()

    def record(self):
        event = self.torch.cuda.Event()
        event.record()
        return event

    def done(self, event):
        return event.query()

    def spin(self):
        # _sleep spins for a count of clock cycles: the count comes from timing one, not from
        # torch.cuda.clock_rate (which needs pynvml and says the clock of the last sample period)
        torch = self.torch
        if self.cycles is None:
            torch.cuda._sleep(CALIBRATION_CYCLES)
            _, ms = self.timed(lambda: torch.cuda._sleep(CALIBRATION_CYCLES))
            self.cycles = max(1, int(CALIBRATION_CYCLES * QUEUED_MS / ms))
        torch.cuda._sleep(self.cycles)

    def free(self):
        self.torch.cuda.empty_cache()

    def size(self, x):
        return x.numel()

    def take(self, x, at):
        return x.reshape(-1)[self.torch.tensor(at, device=x.device)].cpu().tolist()

    def bmm(self, a, b):
        return self.torch.bmm(a, b)

    def solve(self, a, b):
        return self.torch.linalg.solve(a, b)

    def cholesky(self, a):
        return self.torch.linalg.cholesky(a)

    def qr(self, a):
        return self.torch.linalg.qr(a)

    def inv(self, a):
        return self.torch.linalg.inv(a)

    def eigh(self, a):
        return self.torch.linalg.eigh(a)

    def adjoint(self, x):
        return x.mH

    def eye(self, n, like):
        return self.torch.eye(n, dtype=like.dtype, device=like.device)

    def norm(self, x):
        return self.torch.linalg.norm(x).item()

    def sort(self, x):
        return self.torch.sort(x).values


class Cupy(Library):
    name = "cupy"

    def __init__(self):
        import cupy

        self.cupy = cupy
        cupy.cuda.Device(0).use()
        self.spin_kernel = cupy.RawKernel(SPIN, "spin")

    def normal(self, shape, dtype, seed):
        rs = self.cupy.random.RandomState(seed)
        x = rs.standard_normal(shape, dtype=REAL[dtype])
        if dtype.startswith("complex"):
            x = (x + 1j * rs.standard_normal(shape, dtype=REAL[dtype])).astype(dtype)
        return x

    def timed(self, f):
        start, end = self.cupy.cuda.Event(), self.cupy.cuda.Event()
        start.record()
        out = f()
        end.record()
        end.synchronize()
        return out, self.cupy.cuda.get_elapsed_time(start, end)

    def sync(self):
        self.cupy.cuda.Device().synchronize()

    def record(self):
        event = self.cupy.cuda.Event()
        event.record()
        return event

    def done(self, event):
        return event.done

    def spin(self):
        self.spin_kernel((1,), (1,), (self.cupy.uint64(QUEUED_MS * 1e6),))

    def free(self):
        self.cupy.get_default_memory_pool().free_all_blocks()

    def size(self, x):
        return x.size

    def take(self, x, at):
        return self.cupy.asnumpy(x.ravel()[self.cupy.asarray(at)]).tolist()

    def bmm(self, a, b):
        return self.cupy.matmul(a, b)

    def solve(self, a, b):
        return self.cupy.linalg.solve(a, b)

    def cholesky(self, a):
        return self.cupy.linalg.cholesky(a)

    def qr(self, a):
        return self.cupy.linalg.qr(a)

    def inv(self, a):
        return self.cupy.linalg.inv(a)

    def eigh(self, a):
        return self.cupy.linalg.eigh(a)

    def adjoint(self, x):
        return x.conj().T

    def eye(self, n, like):
        return self.cupy.eye(n, dtype=like.dtype)

    def norm(self, x):
        return float(self.cupy.linalg.norm(x))

    def sort(self, x):
        return self.cupy.sort(x)


def seed(name):
    """the op's seed, the same in every process (unlike hash(), which Python salts per process)"""
    return zlib.crc32(name.encode())


def positions(name, count):
    """the op's SAMPLE flat positions among count, the same in every process"""
    return sorted(random.Random(seed(name)).sample(range(count), min(SAMPLE, count)))


def lines(log):
    """how many lines the interposer's log has (0 before its first), or None without a log"""
    if log is None:
        return None
    try:
        with open(log, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except FileNotFoundError:
        return 0


@dataclass
class Op:
    """one operation of the suite"""

    name: str
    # the op's kind and element type: --quick keeps each family's smallest op
    family: str
    # the op's largest dimension
    size: int
    # (library, op, the JSON line to fill, the log's path or None)
    measure: Callable


def timed_op(build, slow=False):
    """an Op's measure: build(library, seed) makes the inputs and returns (run, pick, residual):
    run() computes the result, pick(result) is what to sample, residual(result) its residual"""

    def measure(lib, op, row, log):
        run, pick, residual = build(lib, seed(op.name))
        first = lines(log)
        out, warmup = lib.timed(run)
        runs = []
        for _ in range(1 if slow or warmup > SLOW_MS else TIMED_RUNS):
            # the last result is dropped first, so that the allocator hands its block to this run
            # rather than taking new memory from the driver inside the timed region
            out = None
            out, ms = lib.timed(run)
            runs.append(ms)
        row["log_lines"] = [first, lines(log)] if log else None
        row.update(ms=statistics.median(runs), runs=runs, warmup_ms=warmup)
        row["sample"] = lib.sample(pick(out), op.name)
        row["residual"] = residual(out)

    return measure


def product(dtype, m, n, k, batch=None):
    """a @ b of m x k by k x n, or a batch of them"""
    kind = "matmul" if batch is None else "bmm"
    dims = f"{m}x{n}x{k}" if batch is None else f"{batch}x{m}x{n}x{k}"
    lead = () if batch is None else (batch,)

    def build(lib, seed):
        a, b = lib.normal(lead + (m, k), dtype, seed), lib.normal(lead + (k, n), dtype, seed + 1)
        run = (lambda: a @ b) if batch is None else (lambda: lib.bmm(a, b))
        return run, lambda c: c, lambda c: None

    return Op(f"{kind} {dtype} {dims}", f"{kind} {dtype}", max(m, n, k), timed_op(build))


def solve(lib, a, dtype, seed):
    """x = a^-1 b for b of RHS columns"""
    b = lib.normal((a.shape[0], RHS), dtype, seed + 1)
    return (lambda: lib.solve(a, b), lambda x: x,
            lambda x: lib.norm(a @ x - b) / (lib.norm(a) * lib.norm(x)))


def cholesky(lib, a, dtype, seed):
    """L of the Hermitian positive definite a a^H + n I (made here: its product is not the op's)"""
    n = a.shape[0]
    spd = a @ lib.adjoint(a) + n * lib.eye(n, a)
    return (lambda: lib.cholesky(spd), lambda low: low,
            lambda low: lib.norm(low @ lib.adjoint(low) - spd) / lib.norm(spd))


def qr(lib, a, dtype, seed):
    """(Q, R) of a"""
    return (lambda: lib.qr(a), lambda f: f[1],
            lambda f: lib.norm(f[0] @ f[1] - a) / lib.norm(a))


def inv(lib, a, dtype, seed):
    """a^-1"""
    return (lambda: lib.inv(a), lambda x: x,
            lambda x: lib.norm(a @ x - lib.eye(a.shape[0], a)) / (lib.norm(a) * lib.norm(x)))


def eigh(lib, a, dtype, seed):
    """(w, V) of the Hermitian (a + a^H) / 2"""
    h = (a + lib.adjoint(a)) / 2
    # f = (w, V): V * w scales column j of V by w[j]
    return (lambda: lib.eigh(h), lambda f: lib.sort(f[0])[:SAMPLE],
            lambda f: lib.norm(h @ f[1] - f[1] * f[0]) / lib.norm(h))


def factorization(kind, dtype, n):
    """one of the solves and factorizations above, of an n x n matrix"""
    setup = {"solve": solve, "cholesky": cholesky, "qr": qr, "inv": inv, "eigh": eigh}[kind]

    def build(lib, seed):
        return setup(lib, lib.normal((n, n), dtype, seed), dtype, seed)

    return Op(f"{kind} {dtype} {n}", f"{kind} {dtype}", n, timed_op(build, slow=kind == "eigh" and n >= 8192))


def queued(dtype, m, n, k):
    """the probe: the host's time in `c = a @ b` (m x k by k x n) behind QUEUED_MS of queued work"""
    dims = f"{m}" if m == n == k else f"{m}x{n}x{k}"

    def measure(lib, op, row, log):
        a, b = lib.normal((m, k), dtype, seed(op.name)), lib.normal((k, n), dtype, seed(op.name) + 1)
        first = lines(log)
        # the first call's setup (the library's handle, the interposer's start) is not the probe's;
        # its result's block, freed, is the one the allocator hands each trial's result after it
        c = a @ b
        lib.sync()
        del c
        trials, busy = [], 0
        for _ in range(PROBE_TRIALS):
            lib.sync()
            queued_work = lib.queue()
            start = time.perf_counter_ns()
            c = a @ b
            trials.append((time.perf_counter_ns() - start) / 1e3)
            busy += not lib.done(queued_work)
            lib.sync()
            del c
        row["log_lines"] = [first, lines(log)] if log else None
        row.update(host_us=statistics.median(trials), runs=trials, queued_ms=lib.queued_ms, still_busy=busy)

    return Op(f"queued forward {dtype} {dims}", f"queued forward {dtype}", max(m, n, k), measure)


def catalogue():
    """every op, in the order they run"""
    ops = []
    for dtype in FLOATS:
        for n in (256, 1024, 4096, 8192, 16384):
            if n <= 8192 or not dtype.startswith("complex"):
                ops.append(product(dtype, n, n, n))
        for k in (64, 512, 4096, 16384):
            ops.append(product(dtype, 8192, 8192, k))
    for dtype in ("float64", "complex128"):
        ops.append(product(dtype, 1024, 1024, 1024, batch=64))
        ops.append(product(dtype, 128, 128, 128, batch=1000))
    for kind in ("solve", "cholesky", "qr", "inv", "eigh"):
        for dtype in ("float64", "complex128"):
            for n in (4096, 8192):
                ops.append(factorization(kind, dtype, n))
    ops.append(queued("float64", 4096, 4096, 4096))
    ops.append(queued("complex128", 1024, 1024, 1024))
    ops.append(queued("float64", 8192, 8192, 512))
    return ops


def select(ops, patterns, quick):
    """the ops that --ops and --quick keep"""
    if quick:
        smallest = {}
        for op in ops:
            smallest[op.family] = min(smallest.get(op.family, op.size), op.size)
        ops = [op for op in ops if op.size <= QUICK_SIZE or op.size == smallest[op.family]]
    globs = [f"*{p.strip()}*" for p in patterns.split(",") if p.strip()]
    if globs:
        ops = [op for op in ops if any(fnmatch.fnmatchcase(op.name, g) for g in globs)]
    return ops


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library", choices=("torch", "cupy"))
    parser.add_argument("--ops", default="", help="comma-separated shell patterns of op names")
    parser.add_argument("--quick", action="store_true", help="sizes up to 1024 and each family's smallest")
    args = parser.parse_args()
    ops = select(catalogue(), args.ops, args.quick)
    lib = Torch() if args.library == "torch" else Cupy()
    log = os.environ.get("EMUGEMM_HOOK_LOG") or None
    for op in ops:
        row = {"library": lib.name, "op": op.name, "ms": None, "runs": None, "sample": None, "residual": None, "log_lines": None}
        try:
            op.measure(lib, op, row, log)
        except Exception as e:  # one op's failure (out of memory, a solver's error) is its line's, the rest go on
            row["error"] = f"{type(e).__name__}: {e}"
        lib.free()
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
