/* What the parts of the test program hooked.c share (see hooked.c for what it checks):
 *   hooked_common.c  the element types, the operands' values on the host and on the device;
 *   hooked_cublas.c  the cuBLAS entry points, called by number;
 *   hooked_abi.c     the interposer's environment and the comparison with its C ABI;
 *   hooked.c         the cases and main.
 * Every .c file includes this header first: it defines _GNU_SOURCE, which dlfcn.h's
 * RTLD_DEFAULT needs before any system header is read. */
#ifndef HOOKED_H
#define HOOKED_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <complex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../../capi/include/emugemm.h"
#include "check.h"

/* a check: prints "FAILED: what" where !ok, and counts it (from any thread) */
void expect(int ok, const char *what);
/* the checks failed so far */
int failures(void);

/* ---- the four element types ---- */

enum { TS, TD, TC, TZ };
struct kind {
	const char *name; /* s, d, c, z */
	int is_complex, dbl;
	cudaDataType type;
	cublasComputeType_t compute;
	const char *env; /* the interposer's variable for this type */
	int32_t dflt;    /* its precision where the variable is unset: an emugemm_precision_kind */
	int bits;        /* accuracy checked: 2^-bits of the sum of the terms' magnitudes */
};
extern const struct kind kinds[4];
static inline size_t parts(const struct kind *t) { return t->is_complex ? 2 : 1; }
static inline size_t bytes_of(const struct kind *t, size_t elements) { return elements * parts(t) * (t->dbl ? 8 : 4); }

/* the entry points, in the order they are named; a rank-k update's are V2 and V2_64 */
enum { V2, V2_64, EX, EX_64, ENTRIES };

/* the batch entry points, in the order they are named: pointer arrays, then strided, each typed and
 * Ex, each with 32- and 64-bit dimensions */
enum { BATCHED, BATCHED_64, STRIDED, STRIDED_64, BATCHED_EX, BATCHED_EX_64, STRIDED_EX, STRIDED_EX_64, BATCH_ENTRIES };
extern const char *const batch_names[BATCH_ENTRIES];

/* one call: a product, or a rank-k update (op(A) n x k, m = n, opb unused) */
struct gemm {
	int type, entry, opa, opb;
	long m, n, k;
	int device_scalars, beta_zero;
	int captured; /* called during a stream capture, and run as a graph */
	char update;  /* 0: a GEMM; 'L' or 'U': a rank-k update of that triangle of C */
};

/* a call's scalars, matrices and leading dimensions */
struct operands {
	const void *alpha, *a, *b, *beta;
	void *c;
	long lda, ldb, ldc;
};

/* g's entry point, as the printed lines name it */
void entry_name(char *out, size_t size, const struct gemm *g);
/* whether g computes C's entry (i, j): every one of a GEMM's, a rank-k update's triangle */
int named(const struct gemm *g, long i, long j);
/* FNV-1a of the bytes at `p` */
uint64_t fnv(const void *p, size_t bytes);
/* `elements` of t as doubles (both parts of a complex one), rounded to t's precision */
double *values(const struct kind *t, size_t elements, int seed);
/* x (as `values` holds it) in t's memory format, host side */
void *packed(const struct kind *t, const double *x, size_t elements);
/* x (as `values` holds it) in t's memory format, in fresh device memory */
void *device(const struct kind *t, const double *x, size_t elements);
/* the element at `index` of x (t's raw memory format) */
long double complex raw_at(const struct kind *t, const void *x, long index);
/* op(X)[i][h] of a column-major matrix (doubles, as `values` holds it) with leading dimension ld */
long double complex op_at(const struct kind *t, const double *x, long ld, int op, long i, long h);

/* ---- the cuBLAS calls ---- */

/* the cuBLAS call g */
cublasStatus_t dispatch(cublasHandle_t h, const struct gemm *g, const struct operands *o);
/* the cuBLAS batch entry point `entry` of type t on `count` products: the device arrays of A's,
 * B's and C's pointers `arrays`, or o's matrices and the strides `s` (elements) to the next ones */
cublasStatus_t batch_call(cublasHandle_t h, const struct kind *t, int entry, const int ops[2], const long shape[3],
                          const struct operands *o, void *const arrays[3], const long long s[3], long count);

/* ---- the interposer and its C ABI ---- */

/* whether the interposer (which exports the C ABI) is preloaded */
int preloaded(void);
/* whether the interposer may emulate: preloaded, and no workspace bound */
int emulating(void);
/* whether the environment variable `name` says on (EMUGEMM_HOOK_BATCHED, EMUGEMM_HOOK_RANK_K) */
int on(const char *name);
/* the precision the interposer gives t's calls, as its environment says; 0 where they are off */
int configured(const struct kind *t, emugemm_precision *p);
/* the interposer's size threshold: the least m, n and k it emulates */
long min_size(void);
/* the C ABI's function for g's type and routine, on o, with `mode` an emugemm_pointer_mode */
emugemm_status abi_call(const struct gemm *g, const struct operands *o, int32_t mode, void *stream, emugemm_precision p);

/* a hooked call's result `got` and the C ABI's, just enqueued into `dc` on `stream` (`bytes`
 * each; `again` receives it) */
struct result {
	const void *got;
	void *again, *dc;
	size_t bytes;
};
/* x's two results expected equal, and the C ABI's plan printed for check.py */
void same_as_abi(const char *what, const char *claim, struct result x, cudaStream_t stream);

#endif
