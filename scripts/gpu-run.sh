#!/usr/bin/env bash
# Runs a GPU bundle (made by scripts/build-gpu-bundle.sh, which copies this script into it as run.sh)
# ON the GPU machine: no cargo, no network, nothing is built. From the bundle folder it runs every
# `test-*` binary with the ignored GPU tests included, then the benchmarks, and writes its results:
#
#   RESULTS/gpu.txt          nvidia-smi's name, driver and max SM clock
#   RESULTS/tests.log        the output of every test binary
#   RESULTS/exit-codes.txt   "<binary> <exit code>" per binary run (tests and benches)
#   RESULTS/interop.log      the interposer's C test, its overhead and the client programs
#   RESULTS/interop/         the logs of the interposer's C test runs
#   RESULTS/bench.log        the output of ./bench (an example named `bench`) and of every `bench-*`
#
# usage: run.sh [RESULTS]   (RESULTS defaults to $OUT)
# env:   TEST_ARGS     extra arguments for every test binary (e.g. a name filter)
#        TEST_TIMEOUT  seconds allowed per test binary (default: no limit; see timeout(1))
#        BENCH_ARGS    extra arguments for the benchmarks
#        SKIP_BENCH=1  run the tests only
#        SKIP_TESTS=1  accept a bundle without test binaries (a benchmark-only bundle)
#        SKIP_INTEROP=1  skip the interposer's C test (interop/, run after the test binaries)
#        CLIENTS=1     also run the client programs (PyTorch, CuPy, cuSOLVER through CuPy)
# Exits non-zero when any test binary failed or ran no test, or when there is none to run (a failed
# benchmark is reported, not fatal). `test-concurrency*` binaries run with parallel test threads.
# `test-gpu`, `test-gpu_forms` and `test-concurrency` run a second time on the portable path
# (EMUGEMM_TEST_PORTABLE=1), logged as "<binary> (portable)".
set -uo pipefail

results="${1:-${OUT:-}}"
[ -n "$results" ] || { echo "usage: $0 RESULTS_DIR (or set OUT)" >&2; exit 2; }
mkdir -p "$results" && results="$(cd "$results" && pwd)" || exit 2
cd "$(dirname "$0")" || exit 2
# a compressed bundle (BUNDLE_XZ=1) unpacks into a writable copy first
if compgen -G "*.xz" >/dev/null; then
	unpacked="$(mktemp -d)"
	cp -r -- * "$unpacked"/ && cd "$unpacked" && xz -d -T0 -- *.xz || exit 2
fi

export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# the interposer's stand-in tests load the bundle's copy of their stand-in libcublas
if [ -d standin ]; then
	export EMUGEMM_STANDIN_DIR="$PWD/standin" EMUGEMM_STANDIN_SCRATCH="$results/standin"
fi
read -ra test_args <<<"${TEST_ARGS:-}"
read -ra bench_args <<<"${BENCH_ARGS:-}"
: >"$results/tests.log"
: >"$results/exit-codes.txt"
rm -f "$results/bench.log"

section() { printf '\n=== %s\n' "$*"; }

# run_logged LOG NAME COMMAND...: runs COMMAND, its output appended to LOG (and shown), records
# "NAME <exit code>" in exit-codes.txt and returns that exit code
run_logged() {
	local log="$1" name="$2"
	shift 2
	section "$name: $*" | tee -a "$log"
	"$@" 2>&1 | tee -a "$log"
	local rc="${PIPESTATUS[0]}"
	echo "$name $rc" >>"$results/exit-codes.txt"
	echo "--- $name: exit code $rc" | tee -a "$log"
	return "$rc"
}

section "bundle"
[ -f MANIFEST ] && cat MANIFEST
section "GPU"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1 | tee "$results/gpu.txt"

failed=()
tests_run=0
runs=()
for test in ./test-*; do
	[ -x "$test" ] || continue
	runs+=("$test")
done
for suite in test-gpu test-gpu_forms test-gpu_views test-concurrency; do
	[ -x "./$suite" ] && runs+=("./$suite portable")
done
for run in "${runs[@]}"; do
	read -r test path <<<"$run"
	tests_run=$((tests_run + 1))
	name="${test#./}${path:+ ($path)}"
	export EMUGEMM_TEST_PORTABLE=0
	[ -n "$path" ] && export EMUGEMM_TEST_PORTABLE=1
	# the concurrency tests run in parallel threads, the others one at a time
	threads=(--test-threads=1)
	[[ "$name" == test-concurrency* ]] && threads=()
	# lanes (queued products, graph replays) exist only where kernels load eagerly
	loading=()
	[[ "$name" == test-gpu_queued* || "$name" == test-gpu_graphs* ]] && loading=(env CUDA_MODULE_LOADING=EAGER)
	log="$(mktemp)"
	if run_logged "$log" "$name" "${loading[@]}" timeout "${TEST_TIMEOUT:-0}" "$test" --include-ignored "${threads[@]}" "${test_args[@]}"; then
		# a binary that passes must have run a test (unless TEST_ARGS filters the tests)
		[ -n "${TEST_ARGS:-}" ] || grep -Eq '^test result: ok\. [1-9][0-9]* passed' "$log" || {
			echo "--- $name: ran no test" | tee -a "$log"
			failed+=("$name (no test ran)")
		}
	else
		failed+=("$name")
	fi
	cat "$log" >>"$results/tests.log"
	rm -f "$log"
done

# the interposer under a cuBLAS program (interop/, compiled here against the toolkit's cuBLAS):
# hooked.c's four runs compared by check.py, graphs.c (products captured into CUDA graphs) hooked,
# and overhead.c unhooked and hooked; with CLIENTS=1 also PyTorch's and CuPy's products, a PyTorch
# graph's replays and cuSOLVER through CuPy, unhooked and hooked
if [ "${SKIP_INTEROP:-0}" != 1 ] && [ -f ./libemugemm_cublas.so ] && [ -d ./interop ]; then
	cuda="${CUDA_HOME:-/usr/local/cuda}"
	hook="$PWD/libemugemm_cublas.so"
	link=(-I"$cuda/include" -L"$cuda/lib64" -lcublas -lcudart -lpthread -lm -ldl)
	test_c=interop/hook/tests/c
	if gcc -O2 "$test_c/hooked.c" "$test_c/hooked_common.c" "$test_c/hooked_cublas.c" "$test_c/hooked_abi.c" "${link[@]}" -o hooked &&
		gcc -O2 "$test_c/graphs.c" "${link[@]}" -o graphs &&
		gcc -O2 "$test_c/overhead.c" "${link[@]}" -o overhead; then
		tests_run=$((tests_run + 2))
		run_logged "$results/interop.log" interop-hooked python3 interop/hook/tests/c/check.py "$hook" ./hooked "$results/interop" ||
			failed+=(interop-hooked)
		rm -f "$results/graphs.jsonl"
		run_logged "$results/interop.log" interop-graphs env LD_PRELOAD="$hook" EMUGEMM_GRAPHS=on CUDA_MODULE_LOADING=EAGER EMUGEMM_HOOK_LOG="$results/graphs.jsonl" ./graphs ||
			failed+=(interop-graphs)
		run_logged "$results/interop.log" interop-overhead ./overhead
		run_logged "$results/interop.log" interop-overhead-hooked env LD_PRELOAD="$hook" ./overhead
		if [ "${CLIENTS:-0}" = 1 ]; then
			clients=interop/scripts/clients
			for library in torch cupy; do
				run_logged "$results/interop.log" "matmul-$library" env EMUGEMM_C="$PWD/libemugemm_c.so" python3 "$clients/matmul.py" "$library" 4096 8192
				run_logged "$results/interop.log" "matmul-$library-hooked" env LD_PRELOAD="$hook" python3 "$clients/matmul.py" "$library" 4096 8192
			done
			run_logged "$results/interop.log" graphs-torch python3 "$clients/graphs.py" complex128:8192 float64:4096
			run_logged "$results/interop.log" graphs-torch-hooked env LD_PRELOAD="$hook" EMUGEMM_GRAPHS=on CUDA_MODULE_LOADING=EAGER EMUGEMM_HOOK_LOG="$results/graphs-torch.jsonl" \
				python3 "$clients/graphs.py" complex128:8192 float64:4096
			run_logged "$results/interop.log" factor python3 "$clients/factor.py" 8192
			run_logged "$results/interop.log" factor-hooked env LD_PRELOAD="$hook" EMUGEMM_HOOK_LOG="$results/factor.jsonl" python3 "$clients/factor.py" 8192
		fi
	else
		echo "interop: hooked.c does not compile here (gcc and the CUDA toolkit's cuBLAS are needed): skipped" | tee -a "$results/interop.log"
	fi
fi

bench_failed=()
if [ "${SKIP_BENCH:-0}" != 1 ]; then
	if [ -x ./bench ]; then
		run_logged "$results/bench.log" bench ./bench "${bench_args[@]}" || bench_failed+=(bench)
	fi
	for bench in ./bench-*; do
		[ -x "$bench" ] || continue
		run_logged "$results/bench.log" "${bench#./}" "$bench" --bench "${bench_args[@]}" || bench_failed+=("${bench#./}")
	done
fi

section "summary"
cat "$results/exit-codes.txt"
if [ "$tests_run" -eq 0 ] && [ "${SKIP_TESTS:-0}" != 1 ]; then
	echo "FAILED: the bundle holds no test binary (test-*)"
	exit 1
fi
[ "${#bench_failed[@]}" -eq 0 ] || echo "FAILED benchmarks: ${bench_failed[*]}"
if [ "${#failed[@]}" -gt 0 ]; then
	echo "FAILED test binaries: ${failed[*]}"
	exit 1
fi
echo "all test binaries passed"
