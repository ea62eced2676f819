/* A cuBLAS program that knows nothing of emugemm: run as it is, and under
 * LD_PRELOAD=libemugemm_cublas.so, every check must pass. It multiplies with cublasDgemm_v2,
 * cublasZgemm_v2 (conjugate-transposed), cublasSgemm_v2, cublasDgemm_v2_64 and cublasGemmEx, with
 * leading dimensions above the rows, beta = 0 over NaN, alpha and beta in device memory, two
 * threads with a handle and a stream each, a product during stream capture, and a product below
 * the interposer's size threshold; each result is checked against a long double product on the
 * host to FP64 (FP32) accuracy, and the padding rows of C are checked untouched. Each result's
 * bits are printed as a hash ("hash <case> <fnv>"), so that a run with every call forwarded can be
 * compared with the unhooked run; under the interposer with D at its default F64, each emulated
 * DGEMM is computed again through the C ABI (`emugemm_dgemm`, found in the preloaded library) and
 * must match it bit for bit.
 * Build: gcc -O2 hooked.c -I$CUDA/include -L$CUDA/lib64 -lcublas -lcudart -lpthread -lm */
#define _GNU_SOURCE
#include <complex.h>
#include <dlfcn.h>
#include <stdint.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../capi/include/emugemm.h"

#define CHECK(x)                                                                                    \
	do {                                                                                            \
		if ((x) != 0) {                                                                             \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                          \
			exit(2);                                                                                \
		}                                                                                           \
	} while (0)

static int failures = 0;
#define EXPECT(cond, what)                                                                          \
	do {                                                                                            \
		if (!(cond)) {                                                                              \
			fprintf(stderr, "FAILED: %s\n", what);                                                  \
			failures++;                                                                             \
		}                                                                                           \
	} while (0)

static double value(long i, int seed) {
	unsigned x = (unsigned)(i * 2654435761u + seed * 40503u);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return ((double)(x % 20011) / 20011.0 - 0.5) * ldexp(1.0, (int)(x % 9) - 4);
}

/* FNV-1a of the bytes of `bytes` at `p` */
static uint64_t fnv(const void *p, size_t bytes) {
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < bytes; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return h;
}

typedef emugemm_status (*dgemm_abi)(emugemm_operation, emugemm_operation, int64_t, int64_t, int64_t, const double *, const double *,
                                    int64_t, const double *, int64_t, const double *, double *, int64_t, emugemm_pointer_mode, void *,
                                    emugemm_precision);

/* the C ABI's dgemm where the interposer is preloaded and emulates D at F64, otherwise null */
static dgemm_abi abi_dgemm(void) {
	if (getenv("EMUGEMM_HOOK_D") || getenv("EMUGEMM_HOOK_MIN")) return 0;
	return (dgemm_abi)dlsym(RTLD_DEFAULT, "emugemm_dgemm");
}

static void *device(const void *host, size_t bytes) {
	void *d;
	CHECK(cudaMalloc(&d, bytes));
	CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
	return d;
}

/* op(X)[i][h] of a column-major real matrix with leading dimension ld */
static double at(const double *x, long ld, int op, long i, long h) { return op == 0 ? x[i + h * ld] : x[h + i * ld]; }

/* C (m x n, ldc) against alpha op(A) op(B) in long double, to 2^-bits of the sum of |terms|, and
 * the padding rows untouched (equal to pad) */
static int real_ok(const double *c, long ldc, const double *a, long lda, int opa, const double *b, long ldb, int opb, long m, long n,
                   long k, double alpha, int bits, double pad) {
	for (long j = 0; j < n; j++) {
		for (long i = 0; i < m; i++) {
			long double s = 0, mag = 0;
			for (long h = 0; h < k; h++) {
				long double p = (long double)at(a, lda, opa, i, h) * at(b, ldb, opb, h, j);
				s += p;
				mag += fabsl(p);
			}
			if (fabsl((long double)c[i + j * ldc] - alpha * s) > ldexpl(fabsl(alpha) * mag, -bits) + 1e-300L) return 0;
		}
		for (long i = m; i < ldc; i++)
			if (memcmp(&c[i + j * ldc], &pad, sizeof pad)) return 0;
	}
	return 1;
}

/* one DGEMM (op(A) m x k, op(B) k x n) with padded leading dimensions, beta = 0 over NaN, checked */
static void dgemm_case(cublasHandle_t h, int opa, int opb, long m, long n, long k, const char *what) {
	long ra = opa ? k : m, ca = opa ? m : k, rb = opb ? n : k, cb = opb ? k : n;
	long lda = ra + 3, ldb = rb + 1, ldc = m + 2;
	double *a = malloc(sizeof(double) * lda * ca), *b = malloc(sizeof(double) * ldb * cb), *c = malloc(sizeof(double) * ldc * n);
	for (long i = 0; i < lda * ca; i++) a[i] = value(i, 1);
	for (long i = 0; i < ldb * cb; i++) b[i] = value(i, 2);
	double pad = 7.0;
	for (long j = 0; j < n; j++)
		for (long i = 0; i < ldc; i++) c[i + j * ldc] = i < m ? NAN : pad;
	double *da = device(a, sizeof(double) * lda * ca), *db = device(b, sizeof(double) * ldb * cb), *dc = device(c, sizeof(double) * ldc * n);
	const double alpha = 0.75, beta = 0.0;
	CHECK(cublasDgemm_v2(h, opa ? CUBLAS_OP_T : CUBLAS_OP_N, opb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, da, lda, db, ldb, &beta, dc,
	                     ldc));
	CHECK(cudaDeviceSynchronize());
	double *got = malloc(sizeof(double) * ldc * n);
	CHECK(cudaMemcpy(got, dc, sizeof(double) * ldc * n, cudaMemcpyDeviceToHost));
	EXPECT(real_ok(got, ldc, a, lda, opa, b, ldb, opb, m, n, k, alpha, 50, pad), what);
	printf("hash %s %016llx\n", what, (unsigned long long)fnv(got, sizeof(double) * ldc * n));
	dgemm_abi abi = abi_dgemm();
	if (abi && m >= 256 && n >= 256 && k >= 256) {
		/* the same product through the C ABI, on a fresh C */
		CHECK(cudaMemcpy(dc, c, sizeof(double) * ldc * n, cudaMemcpyHostToDevice));
		emugemm_precision f64 = {EMUGEMM_PRECISION_KIND_F64, 0};
		emugemm_operation ops[2] = {EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_T};
		CHECK(abi(ops[opa], ops[opb], m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc, EMUGEMM_POINTER_MODE_HOST, 0, f64));
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaMemcpy(c, dc, sizeof(double) * ldc * n, cudaMemcpyDeviceToHost));
		EXPECT(memcmp(c, got, sizeof(double) * ldc * n) == 0, "the hooked dgemm equals the C ABI's bit for bit");
		printf("bits %s equal to the C ABI's: %s\n", what, memcmp(c, got, sizeof(double) * ldc * n) ? "NO" : "yes");
	}
	cudaFree(da), cudaFree(db), cudaFree(dc), free(a), free(b), free(c), free(got);
}

struct thread_case {
	int seed;
	int ok;
};

/* a handle and a stream of its own, alpha and beta in device memory, beta = 1 (accumulate) */
static void *threaded(void *p) {
	struct thread_case *t = p;
	cublasHandle_t h;
	cudaStream_t s;
	CHECK(cublasCreate(&h));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cublasSetStream(h, s));
	CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
	long n = 320;
	double *a = malloc(sizeof(double) * n * n), *c = malloc(sizeof(double) * n * n);
	for (long i = 0; i < n * n; i++) a[i] = value(i, t->seed), c[i] = 1.0;
	double scalars[2] = {1.0, 1.0};
	double *da = device(a, sizeof(double) * n * n), *dc = device(c, sizeof(double) * n * n), *ds = device(scalars, sizeof scalars);
	CHECK(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, ds, da, n, da, n, ds + 1, dc, n));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaMemcpy(c, dc, sizeof(double) * n * n, cudaMemcpyDeviceToHost));
	/* c - 1 = a a */
	for (long i = 0; i < n * n; i++) c[i] -= 1.0;
	t->ok = real_ok(c, n, a, n, 0, a, n, 0, n, n, n, 1.0, 49, 0.0);
	cudaFree(da), cudaFree(dc), cudaFree(ds), free(a), free(c);
	cublasDestroy(h);
	cudaStreamDestroy(s);
	return 0;
}

int main(void) {
	cublasHandle_t h;
	CHECK(cublasCreate(&h));
	dgemm_case(h, 0, 0, 300, 270, 260, "dgemm N N");
	dgemm_case(h, 1, 0, 300, 270, 260, "dgemm T N");
	dgemm_case(h, 0, 1, 300, 270, 260, "dgemm N T");
	dgemm_case(h, 1, 1, 257, 300, 299, "dgemm T T");
	dgemm_case(h, 0, 0, 40, 30, 20, "dgemm below the size threshold (forwarded)");
	/* alpha = 0: neither A nor B (NaN here) is read, C = beta C; m = 0 and k = 0: quick returns */
	{
		long n = 300;
		double *x = malloc(sizeof(double) * n * n), *c = malloc(sizeof(double) * n * n);
		for (long i = 0; i < n * n; i++) x[i] = NAN, c[i] = 2.0;
		double *dx = device(x, sizeof(double) * n * n), *dc = device(c, sizeof(double) * n * n);
		const double zero = 0.0, three = 3.0, one = 1.0;
		CHECK(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &zero, dx, n, dx, n, &three, dc, n));
		CHECK(cudaMemcpy(c, dc, sizeof(double) * n * n, cudaMemcpyDeviceToHost));
		int ok = 1;
		for (long i = 0; i < n * n; i++) ok &= c[i] == 6.0;
		EXPECT(ok, "alpha = 0 reads neither A nor B");
		CHECK(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, n, n, &one, dx, 1, dx, n, &zero, dc, 1));
		CHECK(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, 0, &one, dx, n, dx, 1, &three, dc, n));
		CHECK(cudaMemcpy(c, dc, sizeof(double) * n * n, cudaMemcpyDeviceToHost));
		ok = 1;
		for (long i = 0; i < n * n; i++) ok &= c[i] == 18.0;
		EXPECT(ok, "k = 0: C = beta C");
		cudaFree(dx), cudaFree(dc), free(x), free(c);
	}

	/* zgemm: C = A^H B, alpha complex */
	{
		long m = 280, n = 260, k = 270;
		double complex *a = malloc(sizeof(double complex) * k * m), *b = malloc(sizeof(double complex) * k * n),
		               *c = malloc(sizeof(double complex) * m * n);
		for (long i = 0; i < k * m; i++) a[i] = value(i, 3) + I * value(i, 4);
		for (long i = 0; i < k * n; i++) b[i] = value(i, 5) + I * value(i, 6);
		void *da = device(a, sizeof(double complex) * k * m), *db = device(b, sizeof(double complex) * k * n),
		     *dc = device(a, sizeof(double complex) * m * n);
		cuDoubleComplex alpha = {0.5, -1.0}, beta = {0.0, 0.0};
		CHECK(cublasZgemm_v2(h, CUBLAS_OP_C, CUBLAS_OP_N, m, n, k, &alpha, da, k, db, k, &beta, dc, m));
		CHECK(cudaMemcpy(c, dc, sizeof(double complex) * m * n, cudaMemcpyDeviceToHost));
		int ok = 1;
		for (long j = 0; j < n && ok; j++)
			for (long i = 0; i < m && ok; i++) {
				long double complex s = 0;
				long double mag = 0;
				for (long h2 = 0; h2 < k; h2++) {
					long double complex p = conjl(a[h2 + i * k]) * (long double complex)b[h2 + j * k];
					s += p;
					mag += cabsl(p) * 2;
				}
				s *= 0.5L - 1.0L * I;
				ok = cabsl((long double complex)c[i + j * m] - s) <= ldexpl(mag * 1.2L, -50);
			}
		EXPECT(ok, "zgemm C N");
		printf("hash zgemm %016llx\n", (unsigned long long)fnv(c, sizeof(double complex) * m * n));
		cudaFree(da), cudaFree(db), cudaFree(dc), free(a), free(b), free(c);
	}

	/* sgemm at FP32 accuracy */
	{
		long n = 300;
		float *a = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
		double *ad = malloc(sizeof(double) * n * n), *cd = malloc(sizeof(double) * n * n);
		for (long i = 0; i < n * n; i++) a[i] = (float)value(i, 7), ad[i] = a[i];
		void *da = device(a, sizeof(float) * n * n), *dc = device(a, sizeof(float) * n * n);
		const float alpha = 1.0f, beta = 0.0f;
		CHECK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, da, n, &beta, dc, n));
		CHECK(cudaMemcpy(c, dc, sizeof(float) * n * n, cudaMemcpyDeviceToHost));
		for (long i = 0; i < n * n; i++) cd[i] = c[i];
		EXPECT(real_ok(cd, n, ad, n, 0, ad, n, 0, n, n, n, 1.0, 20, 0.0), "sgemm N N");
		printf("hash sgemm %016llx\n", (unsigned long long)fnv(c, sizeof(float) * n * n));
		cudaFree(da), cudaFree(dc), free(a), free(c), free(ad), free(cd);
	}

	/* cublasDgemm_v2_64 and cublasGemmEx (64F) */
	{
		long n = 288;
		double *a = malloc(sizeof(double) * n * n), *c = malloc(sizeof(double) * n * n);
		for (long i = 0; i < n * n; i++) a[i] = value(i, 8);
		double *da = device(a, sizeof(double) * n * n), *dc = device(a, sizeof(double) * n * n);
		const double alpha = 1.0, beta = 0.0;
		CHECK(cublasDgemm_v2_64(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, da, n, da, n, &beta, dc, n));
		CHECK(cudaMemcpy(c, dc, sizeof(double) * n * n, cudaMemcpyDeviceToHost));
		EXPECT(real_ok(c, n, a, n, 1, a, n, 0, n, n, n, 1.0, 50, 0.0), "dgemm_64 T N");
		printf("hash dgemm_64 %016llx\n", (unsigned long long)fnv(c, sizeof(double) * n * n));
		CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, da, CUDA_R_64F, n, da, CUDA_R_64F, n, &beta, dc, CUDA_R_64F, n,
		                   CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
		CHECK(cudaMemcpy(c, dc, sizeof(double) * n * n, cudaMemcpyDeviceToHost));
		EXPECT(real_ok(c, n, a, n, 0, a, n, 1, n, n, n, 1.0, 50, 0.0), "gemmEx 64F N T");
		printf("hash gemmEx %016llx\n", (unsigned long long)fnv(c, sizeof(double) * n * n));
		/* during stream capture: forwarded, and right once the graph runs */
		cudaStream_t s;
		cudaGraph_t g;
		cudaGraphExec_t e;
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		CHECK(cublasSetStream(h, s));
		CHECK(cudaMemset(dc, 0, sizeof(double) * n * n));
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
		CHECK(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, da, n, &beta, dc, n));
		CHECK(cudaStreamEndCapture(s, &g));
		CHECK(cudaGraphInstantiate(&e, g, 0));
		CHECK(cudaGraphLaunch(e, s));
		CHECK(cudaStreamSynchronize(s));
		CHECK(cudaMemcpy(c, dc, sizeof(double) * n * n, cudaMemcpyDeviceToHost));
		EXPECT(real_ok(c, n, a, n, 0, a, n, 0, n, n, n, 1.0, 50, 0.0), "dgemm in a captured graph");
		cudaFree(da), cudaFree(dc), free(a), free(c);
	}

	/* two threads, a handle and a stream each */
	{
		pthread_t t[2];
		struct thread_case cases[2] = {{11, 0}, {12, 0}};
		for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, threaded, &cases[i]);
		for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
		EXPECT(cases[0].ok && cases[1].ok, "two threads, device-pointer alpha and beta, beta = 1");
	}
	cublasDestroy(h);
	printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
	return failures != 0;
}
