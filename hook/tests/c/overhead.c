/* What the interposer adds to a call, measured inside one process from the host: 1000
 * synchronised calls of each of two functions, alternating, and the medians of their wall times:
 *   - at 64^3 (below the default size threshold): cublasDgemm_v2 as the program sees it (the
 *     interposer's, forwarding) against the real cublasDgemm_v2 of the loaded libcublas;
 *   - at 1024^3: cublasDgemm_v2 as the program sees it (the interposer's, emulating) against its
 *     C ABI's emugemm_dgemm on the same memory (the Rust device-view path behind a thin C shim),
 *     at the precision EMUGEMM_HOOK_D gives the interposer (F64 where it is unset, or scheme2=M)
 *     and the plan that precision picks (at F64 on an H100 or H200, the native one).
 * Run as it is (both functions are then the real cuBLAS: the difference is the noise) and under
 * LD_PRELOAD=libemugemm_cublas.so.
 * Build: gcc -O2 overhead.c -I$CUDA/include -L$CUDA/lib64 -lcublas -lcudart -ldl */
#define _GNU_SOURCE
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../../capi/include/emugemm.h"

#define CALLS 1000

static double now_us(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *t) {
	qsort(t, CALLS, sizeof(double), by_value);
	return t[CALLS / 2];
}

typedef cublasStatus_t (*dgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double *, const double *, int,
                                   const double *, int, const double *, double *, int);

static cublasHandle_t h;
static cudaStream_t s;
static double *a, *c;
static const double one = 1.0, zero = 0.0;
static emugemm_precision precision = {EMUGEMM_PRECISION_KIND_F64, 0};

/* one synchronised product n^3 by `which`: 0 the program's cublasDgemm_v2, 1 `real`, 2 the C ABI */
static double one_call(int which, int n, dgemm_fn real, __typeof__(emugemm_dgemm) * abi) {
	double start = now_us();
	int status;
	if (which == 2) {
		status = abi(EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_N, n, n, n, &one, a, n, a, n, &zero, c, n, EMUGEMM_POINTER_MODE_HOST, s, precision);
	} else {
		status = (which ? real : cublasDgemm_v2)(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, c, n);
	}
	if (status) {
		fprintf(stderr, "call %d at %d^3 failed: %d\n", which, n, status);
		exit(3);
	}
	cudaStreamSynchronize(s);
	return now_us() - start;
}

/* the medians of CALLS alternating calls of `x` and `y` at n^3, after 20 of each */
static void compare(const char *what, int n, int x, int y, dgemm_fn real, __typeof__(emugemm_dgemm) * abi) {
	static double tx[CALLS], ty[CALLS];
	for (int i = 0; i < 20; i++) one_call(x, n, real, abi), one_call(y, n, real, abi);
	for (int i = 0; i < CALLS; i++) tx[i] = one_call(x, n, real, abi), ty[i] = one_call(y, n, real, abi);
	double mx = median(tx), my = median(ty);
	printf("%s %d^3: median %.2f us against %.2f us: %+.2f us\n", what, n, mx, my, mx - my);
}

int main(void) {
	if (cublasCreate(&h) || cudaStreamCreate(&s) || cublasSetStream(h, s)) return 2;
	long big = 1024;
	double *host = malloc(sizeof(double) * big * big);
	for (long i = 0; i < big * big; i++) host[i] = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
	if (cudaMalloc((void **)&a, sizeof(double) * big * big) || cudaMalloc((void **)&c, sizeof(double) * big * big)) return 2;
	cudaMemcpy(a, host, sizeof(double) * big * big, cudaMemcpyHostToDevice);
	void *lib = dlopen("libcublas.so.13", RTLD_NOLOAD | RTLD_LAZY);
	dgemm_fn real = lib ? (dgemm_fn)dlsym(lib, "cublasDgemm_v2") : 0;
	__typeof__(emugemm_dgemm) *abi = (__typeof__(emugemm_dgemm) *)dlsym(RTLD_DEFAULT, "emugemm_dgemm");
	unsigned moduli;
	const char *asked = getenv("EMUGEMM_HOOK_D");
	if (asked && sscanf(asked, "scheme2=%u", &moduli) == 1) precision = (emugemm_precision){EMUGEMM_PRECISION_KIND_SCHEME_II, moduli};
	printf("interposer %s; the program's cublasDgemm_v2 %s the real one\n", abi ? "preloaded" : "absent",
	       (void *)real == (void *)cublasDgemm_v2 ? "is" : "is not");
	if (!real) return 4;
	compare("forwarding: the program's cublasDgemm_v2 against the real one,", 64, 0, 1, real, abi);
	if (abi) {
		compare("dispatching: the program's cublasDgemm_v2 against emugemm_dgemm,", 1024, 0, 2, real, abi);
		emugemm_report r;
		__typeof__(emugemm_last_report) *report = (__typeof__(emugemm_last_report) *)dlsym(RTLD_DEFAULT, "emugemm_last_report");
		if (report && report(&r) == EMUGEMM_STATUS_SUCCESS)
			printf("plan at 1024^3: %s %u %s\n", r.scheme == EMUGEMM_SCHEME_NATIVE ? "native" : r.scheme == EMUGEMM_SCHEME_SCHEME_I ? "scheme1" : "scheme2",
			       r.parameter, (const char *)r.native_reason);
		compare("the real cublasDgemm_v2 against emugemm_dgemm,", 1024, 1, 2, real, abi);
	}
	return 0;
}
