/* What the interposer adds to a call, from the host: the median wall time of 1000 synchronised
 * cublasDgemm_v2 calls at 64^3 (forwarded under the default threshold) and at 1024^3 (emulated
 * at F64 under the interposer), and, where the interposer is preloaded, of 1000 calls of its C
 * ABI's emugemm_dgemm at 1024^3 on the same memory: the Rust device-view path plus the C ABI.
 * Run it as it is and under LD_PRELOAD; compare the medians of the two runs (and of one run).
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

typedef emugemm_status (*dgemm_abi)(emugemm_operation, emugemm_operation, int64_t, int64_t, int64_t, const double *, const double *,
                                    int64_t, const double *, int64_t, const double *, double *, int64_t, emugemm_pointer_mode, void *,
                                    emugemm_precision);

int main(void) {
	cublasHandle_t h;
	cudaStream_t s;
	if (cublasCreate(&h) || cudaStreamCreate(&s) || cublasSetStream(h, s)) return 2;
	long big = 1024;
	double *host = malloc(sizeof(double) * big * big);
	for (long i = 0; i < big * big; i++) host[i] = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
	double *a, *c;
	cudaMalloc((void **)&a, sizeof(double) * big * big);
	cudaMalloc((void **)&c, sizeof(double) * big * big);
	cudaMemcpy(a, host, sizeof(double) * big * big, cudaMemcpyHostToDevice);
	const double one = 1.0, zero = 0.0;
	static double t[CALLS];
	long sizes[2] = {64, 1024};
	for (int which = 0; which < 2; which++) {
		int n = (int)sizes[which];
		for (int i = 0; i < 20; i++) cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, c, n);
		cudaStreamSynchronize(s);
		for (int i = 0; i < CALLS; i++) {
			double start = now_us();
			if (cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, c, n)) return 3;
			cudaStreamSynchronize(s);
			t[i] = now_us() - start;
		}
		qsort(t, CALLS, sizeof(double), by_value);
		printf("cublasDgemm_v2 %d^3: median %.1f us\n", n, t[CALLS / 2]);
	}
	dgemm_abi abi = (dgemm_abi)dlsym(RTLD_DEFAULT, "emugemm_dgemm");
	if (abi) {
		emugemm_precision f64 = {EMUGEMM_PRECISION_KIND_F64, 0};
		for (int i = 0; i < 20 + CALLS; i++) {
			double start = now_us();
			if (abi(EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_N, big, big, big, &one, a, big, a, big, &zero, c, big, EMUGEMM_POINTER_MODE_HOST, s,
			        f64))
				return 4;
			cudaStreamSynchronize(s);
			if (i >= 20) t[i - 20] = now_us() - start;
		}
		qsort(t, CALLS, sizeof(double), by_value);
		printf("emugemm_dgemm 1024^3: median %.1f us\n", t[CALLS / 2]);
	}
	return 0;
}
