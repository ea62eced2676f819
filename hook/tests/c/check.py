"""Runs the test program hooked.c (built) five times and checks what the runs must share:
  unhooked  the program as it is: cuBLAS alone;
  off       under the interposer with every type off: every call forwarded;
  default   under the interposer as it ships (D/Z at F64, S/C at F32, threshold 256);
  forced    under the interposer with explicit schemes for every type and a threshold of 1, so
            that every product, rank-k update and batch of the program that has no empty dimension
            is emulated;
  bounded   the forced run with a workspace bound of one byte (EMUGEMM_HOOK_MEMORY=1): every call
            is refused for its workspace before anything is written, and forwarded.
Each run must pass its own checks (accuracy, padding, quick returns, bits equal to the C ABI's, but
for the calls forwarded because the library computes them natively from their shape).
Across runs: every hash of the off run equals the unhooked run's (forwarding is bit for bit
cuBLAS); in the default run, so do the products the interposer forwards (during stream capture
with scalars in device memory, below the threshold, empty, rank-k updates and batches); in the
forced run, those during stream capture with device scalars, the empty ones and a HERK's trans = T
(cuBLAS's own status). A call captured with host scalars is recorded into the graph: logged
`captured`, then once more for the graph's one replay, whose bits equal the C ABI's uncaptured call.
The logs must name every intercepted entry point, emulated in the forced run; a call captured with
device scalars is forwarded on the C ABI's refusal (reason "not available: the stream is being
captured ..."), and so is a HERK's trans = T where rank-k updates are on (reason "invalid
arguments: ..."), once per call.
In the bounded run every hash equals the unhooked run's, no call is emulated, and every call the
forced run emulated is logged "out of memory: ...". Prints a summary; exits 1 on any failure.

usage: python3 check.py LIBEMUGEMM_CUBLAS.so HOOKED_EXECUTABLE LOGDIR"""
import collections
import json
import os
import subprocess
import sys

hook, program, logdir = sys.argv[1:4]
os.makedirs(logdir, exist_ok=True)
off = {f"EMUGEMM_HOOK_{t}": "off" for t in "DZSC"}
# every hooked run records captured calls into their graphs (EMUGEMM_GRAPHS=on; the replay lanes
# need kernels loaded eagerly)
forced = {"EMUGEMM_HOOK_D": "scheme2=14", "EMUGEMM_HOOK_Z": "scheme2=14", "EMUGEMM_HOOK_S": "scheme2=8", "EMUGEMM_HOOK_C": "scheme1=4",
          "EMUGEMM_HOOK_MIN": "1", "EMUGEMM_HOOK_BATCHED": "on", "EMUGEMM_HOOK_RANK_K": "on"}
bounded = dict(forced, EMUGEMM_HOOK_MEMORY="1")
runs = {"unhooked": None, "off": off, "default": {}, "forced": forced, "bounded": bounded}
problems = []
hashes, abi = {}, {}
for name, env in runs.items():
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EMUGEMM_HOOK_")}
    if env is not None:
        environment.update(env, LD_PRELOAD=hook, EMUGEMM_HOOK_LOG=f"{logdir}/{name}.jsonl", EMUGEMM_GRAPHS="on",
                           CUDA_MODULE_LOADING="EAGER")
    done = subprocess.run([program], env=environment, capture_output=True, text=True, timeout=600)
    with open(f"{logdir}/{name}.out", "w") as out:
        out.write(done.stdout + done.stderr)
    lines = done.stdout.splitlines()
    hashes[name] = dict(line[5:].rsplit(" ", 1) for line in lines if line.startswith("hash "))
    abi[name] = [line for line in lines if line.startswith("abi ")]
    failed = [line for line in done.stderr.splitlines() if "FAILED" in line or "failed" in line]
    summary = lines[-1] if lines else "(no output)"
    print(f"{name}: exit {done.returncode}; {summary}; {len(hashes[name])} hashes; {len(abi[name])} compared with the C ABI")
    for line in failed[:10]:
        print(f"  {line}")
    if done.returncode != 0:
        problems.append(f"{name} exited {done.returncode}")

base = hashes["unhooked"]
differ = [k for k in base if hashes["off"].get(k) != base[k]]
print(f"off against unhooked: {len(base) - len(differ)} of {len(base)} hashes equal")
problems += [f"forwarded bits differ: {k}" for k in differ]
below = ("40x30x20", "40x40x20")  # the GEMMs' and the rank-k updates' shapes below the threshold
# forwarded by default too: rank-k updates and batched calls
off_by_default = ("syrk", "herk", "Batched")
# forwarded in every run: during stream capture with device scalars, empty, and a HERK's trans = T
always = ("m=0", "n=0", "k=0", "trans=T")


def captured_device(k):
    """a call captured with its scalars in device memory, which the C ABI refuses"""
    return "captured" in k and " device beta" in k


forwarded = {
    "default": [k for k in base if captured_device(k) or any(s in k for s in always + below + off_by_default)],
    "forced": [k for k in base if captured_device(k) or any(s in k for s in always)],
    "bounded": list(base),
}
for name, keys in forwarded.items():
    differ = [k for k in keys if hashes[name].get(k) != base[k]]
    print(f"{name} against unhooked, the {len(keys)} forwarded products: {len(keys) - len(differ)} equal")
    problems += [f"forwarded ({name}) bits differ: {k}" for k in differ]
for name in ("default", "forced"):
    plans = collections.Counter(line.split(" plan ")[1].rsplit(" ", 1)[0] for line in abi[name])
    # a call decided native from its shape is forwarded to cuBLAS, not compared with the C ABI
    shape = [line for line in abi[name] if line.endswith(" forwarded")]
    unequal = [line for line in abi[name] if not line.endswith(" equal") and line not in shape]
    print(f"{name}: C ABI comparisons {len(abi[name]) - len(unequal) - len(shape)} equal of {len(abi[name])}, {len(shape)} forwarded by their shape; plans {dict(plans)}")
    problems += [f"{name}: {line}" for line in unequal]
    if not abi[name]:
        problems.append(f"{name}: nothing was compared with the C ABI (is the interposer loaded?)")

entries = {f"cublas{t}gemm_v2{s}" for t in "SDCZ" for s in ("", "_64")} | {f"cublasGemmEx{s}:{t}" for t in "SDCZ" for s in ("", "_64")}
entries |= {f"cublas{t}{r}_v2{s}" for t, r in (("S", "syrk"), ("D", "syrk"), ("C", "herk"), ("Z", "herk")) for s in ("", "_64")}
batches = ("Batched", "StridedBatched")
entries |= {f"cublas{t}gemm{b}{s}" for t in "SDCZ" for b in batches for s in ("", "_64")}
entries |= {f"cublasGemm{b}Ex{s}:{t}" for t in "SDCZ" for b in batches for s in ("", "_64")}
# the calls the C ABI refuses, forwarded once each: the reason's start, and per run the hashes of
# the calls that must be logged with it (rank-k updates reach the C ABI only where they are on)
refusals = {
    "not available: the stream is being captured": {
        "off": [],
        # in the default run the shape tier forwards those calls first (native from the shape)
        "default": [],
        "forced": [k for k in base if captured_device(k)],
    },
    "invalid arguments:": {"off": [], "default": [], "forced": [k for k in base if "trans=T" in k]},
}
for start in refusals:
    refusals[start]["bounded"] = refusals[start]["forced"]
emulated_by = {}
for name in ("off", "default", "forced", "bounded"):
    actions = collections.Counter()
    reasons = collections.Counter()
    refused = collections.Counter()
    emulated = set()
    path = f"{logdir}/{name}.jsonl"
    lines = open(path).read().splitlines() if os.path.exists(path) else []
    if not lines:
        problems.append(f"{name}: the interposer logged no call")
    for line in lines:
        e = json.loads(line)
        # the typed-by-argument entry points (cublasGemmEx, cublasGemmBatchedEx, ...) per type
        routine = e["routine"] + (f":{e['type']}" if e["routine"].startswith("cublasGemm") else "")
        actions[e["action"]] += 1
        if e["reason"]:
            reasons[e["reason"]] += 1
        for start in refusals:
            if e["reason"].startswith(start):
                refused[start] += e["action"] == "forwarded"
        if e["action"] == "emugemm" and e.get("scheme") != "native":
            emulated.add(routine)
    print(f"log {name}: {dict(actions)}; reasons {dict(reasons)}; entry points emulated {len(emulated)} of {len(entries)}")
    emulated_by[name] = (actions["emugemm"], sum(n for r, n in reasons.items() if r.startswith("out of memory:")))
    if name == "forced" and emulated != entries:
        problems.append(f"forced: not emulated: {sorted(entries - emulated)}")
    if name == "off" and emulated:
        problems.append(f"off: emulated {sorted(emulated)}")
    for start, calls in refusals.items():
        if refused[start] != len(calls[name]):
            problems.append(f"{name}: {refused[start]} calls forwarded with a reason starting {start!r}, {len(calls[name])} expected")

# every call the forced run ran through the C ABI, the bounded run forwards for its workspace
ran, _ = emulated_by["forced"]
bounded_ran, out_of_memory = emulated_by["bounded"]
print(f"bounded: {out_of_memory} calls forwarded for their workspace, {bounded_ran} run by the C ABI (forced: {ran})")
if bounded_ran or out_of_memory != ran:
    problems.append(f"bounded: {bounded_ran} calls run by the C ABI and {out_of_memory} forwarded for their workspace, {ran} expected")

for p in problems:
    print(f"PROBLEM: {p}")
print("hooked.c: all runs agree" if not problems else f"hooked.c: {len(problems)} problems")
sys.exit(1 if problems else 0)
