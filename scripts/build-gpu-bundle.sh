#!/usr/bin/env bash
# Builds, on a machine without a GPU, everything a GPU run needs into one flat folder (the GPU
# machine has no cargo and no network): every test executable, every example and every bench,
# release, all features (`bench` among them: the benchmark, the GPU tests and the kernels only they
# launch), with the kernels compiled by the pinned CUDA 13.0 nvcc and embedded.
#
# usage: scripts/build-gpu-bundle.sh OUTDIR      (e.g. gpu-bundle, which git ignores)
#
# OUTDIR gets, flat:
#   test-lib           the library's unit tests
#   test-<name>        each integration test (tests/<name>.rs)
#   <name>             each example (examples/<name>.rs; an example named `bench` is the benchmark driver)
#   bench-<name>       each cargo bench target (benches/<name>.rs)
#   lib<name>.so       the C ABI (libemugemm_c.so) and the cuBLAS interposer (libemugemm_cublas.so)
#   standin/           the stand-in libcublas of the interposer's tests (test-hook-standin)
#   interop/           the interposer's C test and checker (hook/tests/c/), the C ABI's header and the
#                      client programs (scripts/clients/), compiled and run there by run.sh
#   run.sh             scripts/gpu-run.sh: run `OUTDIR/run.sh RESULTS` on the GPU machine
#   MANIFEST           git revision, nvcc and rustc versions, and the size and sha256 of every binary
# Binaries are copied with their debug info stripped (symbols kept, so backtraces still name
# functions); with BUNDLE_XZ=1 each is compressed to <name>.xz (about half the size: the embedded
# kernels are compressed already), and run.sh unpacks them there. An OUTDIR
# from an earlier run is emptied first; any other non-empty OUTDIR is refused.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$1"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [ -n "$(ls -A "$out")" ]; then
	[ -f "$out/MANIFEST" ] || { echo "$out is not empty and holds no MANIFEST: refusing to empty it" >&2; exit 1; }
	find "$out" -mindepth 1 -delete
fi

NVCC="$(scripts/install-nvcc.sh)"
export NVCC EMUGEMM_REQUIRE_KERNELS=1
features=(--release --all-features --message-format=json-render-diagnostics)
# `cargo bench` builds in the bench profile (optimised) and takes no --release
bench_features=("${features[@]:1}")

# executables MODE: "NAME<TAB>PATH" for each executable that cargo's JSON messages on stdin announce,
# named for the bundle. MODE tests: test binaries, test-lib / test-<name> (test-<kind>-<name> for
# the unit tests of bins and examples); examples: <name>; benches: bench-<name>; libraries: the
# shared libraries of cdylib targets, by their file names
executables() {
	python3 -c '
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    exe = msg.get("executable")
    if msg.get("reason") != "compiler-artifact":
        continue
    kind, name, test = msg["target"]["kind"][0], msg["target"]["name"], msg["profile"]["test"]
    if mode == "libraries" and "cdylib" in msg["target"]["kind"] and not test:
        for path in msg["filenames"]:
            if path.endswith(".so"):
                print(path.rsplit("/", 1)[-1], path, sep="\t")
    elif not exe:
        continue
    elif mode == "benches" and kind == "bench":
        print(f"bench-{name}\t{exe}")
    elif mode == "examples" and kind == "example" and not test:
        print(f"{name}\t{exe}")
    elif mode == "tests" and test and kind != "bench":
        # the tests of the C ABI (capi/) and of the interposer (hook/) carry their folder: gpu is in both
        folder = msg["manifest_path"].split("/")[-2]
        prefix = folder + "-" if folder in ("capi", "hook") else ""
        base = "lib" if kind == "lib" else name if kind == "test" else f"{kind}-{name}"
        print(f"test-{prefix}{base}", exe, sep="\t")
' "$1"
}

list="$(mktemp)"
trap 'rm -f "$list"' EXIT
echo "=== cargo test --no-run (the library, the C ABI, the interposer)" >&2
cargo test --no-run --workspace "${features[@]}" | executables tests >>"$list"
echo "=== cargo build --examples" >&2
cargo build --examples "${features[@]}" | executables examples >>"$list"
if compgen -G "benches/*.rs" >/dev/null || grep -q '^\[\[bench\]\]' Cargo.toml; then
	echo "=== cargo bench --no-run" >&2
	cargo bench --no-run "${bench_features[@]}" | executables benches >>"$list"
fi

echo "=== cargo build --lib (the C ABI's and the interposer's shared libraries)" >&2
cargo build --lib --workspace "${features[@]}" | executables libraries >>"$list"

dups="$(cut -f1 "$list" | sort | uniq -d)"
[ -z "$dups" ] || { echo "two executables would share a bundle name: $dups" >&2; exit 1; }
while IFS=$'\t' read -r name path; do
	strip --strip-debug -o "$out/$name" "$path"
done <"$list"
if [ "${BUNDLE_XZ:-0}" = 1 ]; then
	echo "=== xz" >&2
	cut -f1 "$list" | (cd "$out" && xargs -P "$(nproc)" -n 1 xz -6 -T1)
fi
# the interposer's C test, its checker and the client programs, in their repository folders (the
# C files include the C ABI's header by a relative path); run.sh compiles them on the GPU machine
for file in hook/tests/c/*.[ch] hook/tests/c/check.py capi/include/emugemm.h scripts/clients/*; do
	mkdir -p "$out/interop/$(dirname "$file")"
	cp "$file" "$out/interop/$file"
done
# the stand-in libcublas, its callers and its driver (the hook's build script made them), for the
# interposer's stand-in tests (test-hook-standin), which find them through EMUGEMM_STANDIN_DIR
standin="$(ls -td target/release/build/emugemm-cublas-hook-*/out/standin 2>/dev/null | head -1)"
[ -n "$standin" ] || { echo "the stand-in folder of the hook's build script is missing" >&2; exit 1; }
cp -r "$standin" "$out/standin"
cp scripts/gpu-run.sh "$out/run.sh"
chmod +x "$out/run.sh"

{
	echo "emugemm GPU bundle, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
	if revision="$(git rev-parse HEAD 2>/dev/null)"; then
		git diff --quiet HEAD || revision+=" (with uncommitted changes)"
	else
		revision="unknown (not a git checkout)"
	fi
	echo "git: $revision"
	echo "nvcc: $("$NVCC" --version | grep release)"
	echo "rustc: $(rustc --version)"
	cd "$out"
	for file in $(cut -f1 "$list" | sort); do
		[ -f "$file" ] || file="$file.xz"
		printf '%10s  %s  %s\n' "$(stat -c %s "$file")" "$(sha256sum "$file" | cut -c1-16)" "$file"
	done
} >"$out/MANIFEST"
cat "$out/MANIFEST"
echo "bundle: $out ($(du -sh "$out" | cut -f1)); on the GPU machine: $out/run.sh RESULTS_DIR" >&2
