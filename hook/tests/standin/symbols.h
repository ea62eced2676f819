/*
 * The cuBLAS entry points shared by the stand-in libcublas (cublas.c), the caller libraries
 * (caller.c) and the driver (driver.c). Each symbol is described once, as a name, an argument list
 * (a family below) and the type of its dimensions; every definition, declaration, wrapper and table
 * is generated from these lists, so the three programs cannot disagree on an argument.
 *
 * Argument kinds: i32 (int: cuBLAS's enumerations and the dimensions of the plain names), i64
 * (int64_t: the dimensions and batch counts of the _64 names), ll (long long: strides), ptr
 * (pointers: alpha, beta, the matrices and the pointer arrays, never dereferenced). Typed pointers
 * (const double *, double *const[], ...) are passed as const void *: the same in the C calling
 * convention, which is what an interposer sees.
 */
#ifndef STANDIN_SYMBOLS_H
#define STANDIN_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int standin_i32;
typedef int64_t standin_i64;
typedef long long standin_ll;
typedef const void *standin_ptr;

/* how a value of each kind is written in a record: pointers in hex, integers in decimal */
#define STANDIN_KIND_i32 "d"
#define STANDIN_KIND_i64 "d"
#define STANDIN_KIND_ll "d"
#define STANDIN_KIND_ptr "p"

/* the argument lists after the handle, X(kind, name) each, D the kind of the dimensions */
#define STANDIN_GEMM(X, D)                                                                                            \
	X(i32, transa) X(i32, transb) X(D, m) X(D, n) X(D, k) X(ptr, alpha) X(ptr, A) X(D, lda) X(ptr, B) X(D, ldb)   \
		X(ptr, beta) X(ptr, C) X(D, ldc)
#define STANDIN_BATCHED(X, D)                                                                                         \
	X(i32, transa) X(i32, transb) X(D, m) X(D, n) X(D, k) X(ptr, alpha) X(ptr, Aarray) X(D, lda) X(ptr, Barray)   \
		X(D, ldb) X(ptr, beta) X(ptr, Carray) X(D, ldc) X(D, batchCount)
#define STANDIN_STRIDED(X, D)                                                                                         \
	X(i32, transa) X(i32, transb) X(D, m) X(D, n) X(D, k) X(ptr, alpha) X(ptr, A) X(D, lda) X(ll, strideA)        \
		X(ptr, B) X(D, ldb) X(ll, strideB) X(ptr, beta) X(ptr, C) X(D, ldc) X(ll, strideC) X(D, batchCount)
#define STANDIN_GEMM_EX(X, D)                                                                                         \
	X(i32, transa) X(i32, transb) X(D, m) X(D, n) X(D, k) X(ptr, alpha) X(ptr, A) X(i32, Atype) X(D, lda)         \
		X(ptr, B) X(i32, Btype) X(D, ldb) X(ptr, beta) X(ptr, C) X(i32, Ctype) X(D, ldc) X(i32, computeType)  \
			X(i32, algo)
#define STANDIN_BATCHED_EX(X, D)                                                                                      \
	X(i32, transa) X(i32, transb) X(D, m) X(D, n) X(D, k) X(ptr, alpha) X(ptr, Aarray) X(i32, Atype) X(D, lda)    \
		X(ptr, Barray) X(i32, Btype) X(D, ldb) X(ptr, beta) X(ptr, Carray) X(i32, Ctype) X(D, ldc)            \
			X(D, batchCount) X(i32, computeType) X(i32, algo)
#define STANDIN_STRIDED_EX(X, D)                                                                                      \
	X(i32, transa) X(i32, transb) X(D, m) X(D, n) X(D, k) X(ptr, alpha) X(ptr, A) X(i32, Atype) X(D, lda)         \
		X(ll, strideA) X(ptr, B) X(i32, Btype) X(D, ldb) X(ll, strideB) X(ptr, beta) X(ptr, C) X(i32, Ctype)  \
			X(D, ldc) X(ll, strideC) X(D, batchCount) X(i32, computeType) X(i32, algo)
#define STANDIN_RANK_K(X, D)                                                                                          \
	X(i32, uplo) X(i32, trans) X(D, n) X(D, k) X(ptr, alpha) X(ptr, A) X(D, lda) X(ptr, beta) X(ptr, C) X(D, ldc)
#define STANDIN_TRSM(X, D)                                                                                            \
	X(i32, side) X(i32, uplo) X(i32, trans) X(i32, diag) X(D, m) X(D, n) X(ptr, alpha) X(ptr, A) X(D, lda)        \
		X(ptr, B) X(D, ldb)

/* S(name, list, dimension kind) for the four element types of one routine */
#define STANDIN_SDCZ(S, stem, LIST, D)                                                                                \
	S(cublasS##stem, LIST, D) S(cublasD##stem, LIST, D) S(cublasC##stem, LIST, D) S(cublasZ##stem, LIST, D)
#define STANDIN_EX(S, suffix, D)                                                                                      \
	S(cublasGemmEx##suffix, STANDIN_GEMM_EX, D) S(cublasGemmBatchedEx##suffix, STANDIN_BATCHED_EX, D)             \
		S(cublasGemmStridedBatchedEx##suffix, STANDIN_STRIDED_EX, D)
#define STANDIN_SYRK_HERK(S, suffix, D)                                                                               \
	S(cublasSsyrk##suffix, STANDIN_RANK_K, D) S(cublasDsyrk##suffix, STANDIN_RANK_K, D)                           \
		S(cublasCherk##suffix, STANDIN_RANK_K, D) S(cublasZherk##suffix, STANDIN_RANK_K, D)

/* the 38 symbols the interposer exports */
#define STANDIN_INTERCEPTED(S)                                                                                        \
	STANDIN_SDCZ(S, gemm_v2, STANDIN_GEMM, i32)                                                                   \
	STANDIN_SDCZ(S, gemm_v2_64, STANDIN_GEMM, i64)                                                                \
	STANDIN_SDCZ(S, gemmBatched, STANDIN_BATCHED, i32)                                                            \
	STANDIN_SDCZ(S, gemmBatched_64, STANDIN_BATCHED, i64)                                                         \
	STANDIN_SDCZ(S, gemmStridedBatched, STANDIN_STRIDED, i32)                                                     \
	STANDIN_SDCZ(S, gemmStridedBatched_64, STANDIN_STRIDED, i64)                                                  \
	STANDIN_EX(S, , i32)                                                                                          \
	STANDIN_EX(S, _64, i64)                                                                                       \
	STANDIN_SYRK_HERK(S, _v2, i32)                                                                                \
	STANDIN_SYRK_HERK(S, _v2_64, i64)

/* and one it does not, which must reach the stand-in directly */
#define STANDIN_SYMBOLS(S) STANDIN_INTERCEPTED(S) S(cublasDtrsm_v2, STANDIN_TRSM, i32)

#define STANDIN_PARAM(kind, name) , standin_##kind name
#define STANDIN_KIND(kind, name) STANDIN_KIND_##kind
#define STANDIN_NAME(kind, name) " " #name
/* a symbol's argument kinds ("ddp...") and names (" transa transb ..."), as string literals */
#define STANDIN_KINDS(LIST, D) "" LIST(STANDIN_KIND, D)
#define STANDIN_NAMES(LIST, D) "" LIST(STANDIN_NAME, D)

#define STANDIN_DECLARE(sym, LIST, D) int sym(void *handle LIST(STANDIN_PARAM, D));
STANDIN_SYMBOLS(STANDIN_DECLARE)

/* what the driver iterates over */
struct standin_symbol {
	const char *name;
	const char *kinds;
	const char *names;
};
#define STANDIN_ENTRY(sym, LIST, D) {#sym, STANDIN_KINDS(LIST, D), STANDIN_NAMES(LIST, D)},

/* cuBLAS's handle functions, which the interposer does not export (and may call to read a handle) */
int cublasCreate_v2(void **handle);
int cublasDestroy_v2(void *handle);
int cublasSetStream_v2(void *handle, void *streamId);
int cublasGetStream_v2(void *handle, void **streamId);
int cublasSetPointerMode_v2(void *handle, int mode);
int cublasGetPointerMode_v2(void *handle, int *mode);
int cublasGetVersion_v2(void *handle, int *version);

/* the stand-in's own functions, for the tests: its recorded calls as text lines (the length of all
 * of them is returned; at most len - 1 bytes and a NUL are copied), forgetting them, the status of
 * the following calls of the symbols above, the stand-in's cuBLAS major version */
size_t standin_records(char *buf, size_t len);
void standin_clear(void);
void standin_set_status(int status);
int standin_version(void);

/* what a caller library (caller.c) exports: a call of any symbol above by name, its arguments in the
 * order of its list (-1 for a name not above); its own stand-in's handle functions, records, status
 * and version */
int caller_call(const char *name, void *handle, const long long *args);
int caller_create(void **handle);
int caller_destroy(void *handle);
int caller_set_stream(void *handle, void *stream);
int caller_set_pointer_mode(void *handle, int mode);
size_t caller_records(char *buf, size_t len);
void caller_clear(void);
void caller_set_status(int status);
int caller_version(void);

/*
 * one call as "name handle=0x.. arg=value ...", the form of a record and of what the driver sent:
 * values[i] is the argument named by the i-th word of names, of the kind kinds[i]; returns the
 * length written (or that snprintf would have written)
 */
static inline size_t standin_format(char *buf, size_t len, const char *name, const void *handle, const char *kinds,
				    const char *names, const long long *values)
{
	int wrote = snprintf(buf, len, "%s handle=0x%llx", name, (unsigned long long)(uintptr_t)handle);
	size_t at = wrote > 0 ? (size_t)wrote : 0;
	for (size_t i = 0; kinds[i] != '\0'; i++) {
		names += strspn(names, " ");
		int width = (int)strcspn(names, " ");
		char *end = at < len ? buf + at : NULL;
		size_t left = at < len ? len - at : 0;
		if (kinds[i] == 'p')
			wrote = snprintf(end, left, " %.*s=0x%llx", width, names, (unsigned long long)values[i]);
		else
			wrote = snprintf(end, left, " %.*s=%lld", width, names, values[i]);
		at += wrote > 0 ? (size_t)wrote : 0;
		names += width;
	}
	return at;
}

#endif
