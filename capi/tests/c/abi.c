/* emugemm's C ABI from C: the checked-in header compiled by a C compiler, a double and a complex
 * product on device memory against a long double reference on the host, the beta = 0 rule, the
 * status, message and report of a bad call (enumerations outside their range among them), and
 * cuBLAS's quick return. The CUDA driver is opened at run time, so the program links without it;
 * the test that runs it (tests/c_program.rs) needs a GPU. */
#include "../../include/emugemm.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef int (*init_fn)(unsigned);
typedef int (*retain_fn)(void **, int);
typedef int (*set_fn)(void *);
typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*htod_fn)(unsigned long long, const void *, size_t);
typedef int (*dtoh_fn)(void *, unsigned long long, size_t);
typedef int (*free_fn)(unsigned long long);

static struct {
	alloc_fn alloc;
	htod_fn htod;
	dtoh_fn dtoh;
	free_fn free;
} cu;

/* the driver and the primary context of GPU 0 made current; 0 on success */
static int open_driver(void) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) return 1;
	init_fn init = (init_fn)dlsym(lib, "cuInit");
	retain_fn retain = (retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
	set_fn set = (set_fn)dlsym(lib, "cuCtxSetCurrent");
	cu.alloc = (alloc_fn)dlsym(lib, "cuMemAlloc_v2");
	cu.htod = (htod_fn)dlsym(lib, "cuMemcpyHtoD_v2");
	cu.dtoh = (dtoh_fn)dlsym(lib, "cuMemcpyDtoH_v2");
	cu.free = (free_fn)dlsym(lib, "cuMemFree_v2");
	void *ctx = 0;
	if (!init || !retain || !set || !cu.alloc || !cu.htod || !cu.dtoh || !cu.free) return 2;
	if (init(0) || retain(&ctx, 0) || set(ctx)) return 3;
	return 0;
}

static unsigned long long upload(const void *host, size_t bytes) {
	unsigned long long d = 0;
	if (cu.alloc(&d, bytes) || cu.htod(d, host, bytes)) return 0;
	return d;
}

#define M 37
#define N 29
#define K 53

/* a deterministic fill with a few binades of range */
static double value(int i, int seed) {
	unsigned x = (unsigned)(i * 2654435761u + seed * 40503u);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	return ((double)(x % 20011) / 20011.0 - 0.5) * ldexp(1.0, (int)(x % 7) - 3);
}

/* |got - exact| within 2^-50 of the sum of |a||b| of every entry: FP64 accuracy */
static int close_to(double got, long double exact, long double magnitude) {
	return fabsl((long double)got - exact) <= ldexpl(magnitude, -50) || (magnitude == 0 && got == 0);
}

/* 0 when every check passes, otherwise the number of the first that fails */
int emugemm_c_abi_check(void) {
	if (open_driver()) return 100;
	const emugemm_precision f64 = {EMUGEMM_PRECISION_KIND_F64, 0};
	/* double: C = alpha A^T B with A stored K x M (lda = K + 1), beta = 0 over NaN */
	static double a[(K + 1) * M], b[K * N], c[M * N];
	for (int i = 0; i < (K + 1) * M; i++) a[i] = value(i, 1);
	for (int i = 0; i < K * N; i++) b[i] = value(i, 2);
	for (int i = 0; i < M * N; i++) c[i] = NAN;
	unsigned long long da = upload(a, sizeof a), db = upload(b, sizeof b), dc = upload(c, sizeof c);
	if (!da || !db || !dc) return 101;
	const double alpha = 1.5, beta = 0.0;
	emugemm_status s = emugemm_dgemm(EMUGEMM_OPERATION_T, EMUGEMM_OPERATION_N, M, N, K, &alpha, (const double *)da, K + 1,
	                                 (const double *)db, K, &beta, (double *)dc, M, EMUGEMM_POINTER_MODE_HOST, 0, f64);
	if (s != EMUGEMM_STATUS_SUCCESS) {
		fprintf(stderr, "dgemm: %s\n", emugemm_last_error());
		return 1;
	}
	if (cu.dtoh(c, dc, sizeof c)) return 102;
	for (int j = 0; j < N; j++)
		for (int i = 0; i < M; i++) {
			long double exact = 0, magnitude = 0;
			for (int h = 0; h < K; h++) {
				long double p = (long double)a[h + i * (K + 1)] * b[h + j * K];
				exact += p;
				magnitude += fabsl(p);
			}
			if (!close_to(c[i + j * M], alpha * exact, alpha * magnitude)) return 2;
		}
	emugemm_report report;
	if (emugemm_last_report(&report) != EMUGEMM_STATUS_SUCCESS || report.m != M || report.n != N || report.k != K) return 3;
	if (report.scheme != EMUGEMM_SCHEME_NATIVE && !(report.certified_bits >= 52.0)) return 4;
	/* complex: C = A B^H, alpha = i */
	static emugemm_complex64 za[M * K], zb[N * K], zc[M * N];
	for (int i = 0; i < M * K; i++) za[i] = (emugemm_complex64){value(i, 3), value(i, 4)};
	for (int i = 0; i < N * K; i++) zb[i] = (emugemm_complex64){value(i, 5), value(i, 6)};
	unsigned long long dza = upload(za, sizeof za), dzb = upload(zb, sizeof zb), dzc = upload(zc, sizeof zc);
	if (!dza || !dzb || !dzc) return 103;
	const emugemm_complex64 zalpha = {0.0, 1.0}, zbeta = {0.0, 0.0};
	s = emugemm_zgemm(EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_C, M, N, K, &zalpha, (const emugemm_complex64 *)dza, M,
	                  (const emugemm_complex64 *)dzb, N, &zbeta, (emugemm_complex64 *)dzc, M, EMUGEMM_POINTER_MODE_HOST, 0, f64);
	if (s != EMUGEMM_STATUS_SUCCESS) {
		fprintf(stderr, "zgemm: %s\n", emugemm_last_error());
		return 5;
	}
	if (cu.dtoh(zc, dzc, sizeof zc)) return 104;
	for (int j = 0; j < N; j++)
		for (int i = 0; i < M; i++) {
			long double re = 0, im = 0, magnitude = 0;
			for (int h = 0; h < K; h++) {
				emugemm_complex64 x = za[i + h * M], y = zb[j + h * N]; /* x conj(y) */
				re += (long double)x.re * y.re + (long double)x.im * y.im;
				im += (long double)x.im * y.re - (long double)x.re * y.im;
				magnitude += (fabsl(x.re) + fabsl(x.im)) * (fabsl(y.re) + fabsl(y.im));
			}
			/* i (re + i im) = -im + i re */
			if (!close_to(zc[i + j * M].re, -im, magnitude) || !close_to(zc[i + j * M].im, re, magnitude)) return 6;
		}
	/* a leading dimension below the rows: a status and a message */
	s = emugemm_dgemm(EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_N, M, N, K, &alpha, (const double *)da, M - 1, (const double *)db, K,
	                  &beta, (double *)dc, M, EMUGEMM_POINTER_MODE_HOST, 0, f64);
	if (s != EMUGEMM_STATUS_INVALID_VALUE || strstr(emugemm_last_error(), "the leading dimension is below") == 0) return 7;
	/* integers outside their enumerations (the entry points take int32_t): a status and a
	 * message, never undefined behaviour */
	s = emugemm_dgemm(3 /* CUBLAS_OP_CONJG */, EMUGEMM_OPERATION_N, M, N, K, &alpha, (const double *)da, K + 1, (const double *)db,
	                  K, &beta, (double *)dc, M, EMUGEMM_POINTER_MODE_HOST, 0, f64);
	if (s != EMUGEMM_STATUS_INVALID_VALUE || strstr(emugemm_last_error(), "CUBLAS_OP_CONJG") == 0) return 8;
	const emugemm_precision unknown = {6, 0};
	s = emugemm_dgemm(EMUGEMM_OPERATION_T, EMUGEMM_OPERATION_N, M, N, K, &alpha, (const double *)da, K + 1, (const double *)db, K,
	                  &beta, (double *)dc, M, EMUGEMM_POINTER_MODE_HOST, 0, unknown);
	if (s != EMUGEMM_STATUS_INVALID_VALUE || strstr(emugemm_last_error(), "precision kind = 6") == 0) return 9;
	s = emugemm_dsyrk(EMUGEMM_FILL_MODE_FULL, EMUGEMM_OPERATION_N, N, K, &alpha, (const double *)db, N, &beta, (double *)dc, N,
	                  EMUGEMM_POINTER_MODE_HOST, 0, f64);
	if (s != EMUGEMM_STATUS_INVALID_VALUE || strstr(emugemm_last_error(), "uplo = FULL") == 0) return 10;
	/* an empty product: cuBLAS's quick return, which reads no pointer and clears the message */
	s = emugemm_dgemm(EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_N, 0, N, K, &alpha, 0, 1, 0, K, &beta, 0, 1, EMUGEMM_POINTER_MODE_HOST, 0, f64);
	if (s != EMUGEMM_STATUS_SUCCESS || emugemm_last_error()[0] != 0) return 11;
	cu.free(da), cu.free(db), cu.free(dc), cu.free(dza), cu.free(dzb), cu.free(dzc);
	return 0;
}
