/* The cuBLAS entry points hooked.c calls, chosen by number (see hooked.h). */
#include "hooked.h"

static const cublasOperation_t cublas_ops[3] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};

/* the cuBLAS entry point `entry` of type t */
static cublasStatus_t call(cublasHandle_t h, const struct kind *t, int entry, int opa, int opb, long m, long n, long k,
                           const struct operands *o) {
	cublasOperation_t oa = cublas_ops[opa], ob = cublas_ops[opb];
	switch (entry) {
	case EX:
		return cublasGemmEx(h, oa, ob, (int)m, (int)n, (int)k, o->alpha, o->a, t->type, (int)o->lda, o->b, t->type, (int)o->ldb, o->beta,
		                    o->c, t->type, (int)o->ldc, t->compute, CUBLAS_GEMM_DEFAULT);
	case EX_64:
		return cublasGemmEx_64(h, oa, ob, m, n, k, o->alpha, o->a, t->type, o->lda, o->b, t->type, o->ldb, o->beta, o->c, t->type, o->ldc,
		                       t->compute, CUBLAS_GEMM_DEFAULT);
	case V2:
		switch (t - kinds) {
		case TS:
			return cublasSgemm_v2(h, oa, ob, (int)m, (int)n, (int)k, o->alpha, o->a, (int)o->lda, o->b, (int)o->ldb, o->beta, o->c,
			                      (int)o->ldc);
		case TD:
			return cublasDgemm_v2(h, oa, ob, (int)m, (int)n, (int)k, o->alpha, o->a, (int)o->lda, o->b, (int)o->ldb, o->beta, o->c,
			                      (int)o->ldc);
		case TC:
			return cublasCgemm_v2(h, oa, ob, (int)m, (int)n, (int)k, o->alpha, o->a, (int)o->lda, o->b, (int)o->ldb, o->beta, o->c,
			                      (int)o->ldc);
		default:
			return cublasZgemm_v2(h, oa, ob, (int)m, (int)n, (int)k, o->alpha, o->a, (int)o->lda, o->b, (int)o->ldb, o->beta, o->c,
			                      (int)o->ldc);
		}
	default:
		switch (t - kinds) {
		case TS:
			return cublasSgemm_v2_64(h, oa, ob, m, n, k, o->alpha, o->a, o->lda, o->b, o->ldb, o->beta, o->c, o->ldc);
		case TD:
			return cublasDgemm_v2_64(h, oa, ob, m, n, k, o->alpha, o->a, o->lda, o->b, o->ldb, o->beta, o->c, o->ldc);
		case TC:
			return cublasCgemm_v2_64(h, oa, ob, m, n, k, o->alpha, o->a, o->lda, o->b, o->ldb, o->beta, o->c, o->ldc);
		default:
			return cublasZgemm_v2_64(h, oa, ob, m, n, k, o->alpha, o->a, o->lda, o->b, o->ldb, o->beta, o->c, o->ldc);
		}
	}
}

/* the cuBLAS rank-k update `entry` (V2 or V2_64) of type t: SYRK of a real type, HERK of a
 * complex one */
static cublasStatus_t rank_k_call(cublasHandle_t h, const struct kind *t, int entry, char update, int op, long n, long k,
                                  const struct operands *o) {
	cublasFillMode_t uplo = update == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
	cublasOperation_t trans = cublas_ops[op];
	int lda = (int)o->lda, ldc = (int)o->ldc;
	if (entry == V2) {
		switch (t - kinds) {
		case TS:
			return cublasSsyrk_v2(h, uplo, trans, (int)n, (int)k, o->alpha, o->a, lda, o->beta, o->c, ldc);
		case TD:
			return cublasDsyrk_v2(h, uplo, trans, (int)n, (int)k, o->alpha, o->a, lda, o->beta, o->c, ldc);
		case TC:
			return cublasCherk_v2(h, uplo, trans, (int)n, (int)k, o->alpha, o->a, lda, o->beta, o->c, ldc);
		default:
			return cublasZherk_v2(h, uplo, trans, (int)n, (int)k, o->alpha, o->a, lda, o->beta, o->c, ldc);
		}
	}
	switch (t - kinds) {
	case TS:
		return cublasSsyrk_v2_64(h, uplo, trans, n, k, o->alpha, o->a, o->lda, o->beta, o->c, o->ldc);
	case TD:
		return cublasDsyrk_v2_64(h, uplo, trans, n, k, o->alpha, o->a, o->lda, o->beta, o->c, o->ldc);
	case TC:
		return cublasCherk_v2_64(h, uplo, trans, n, k, o->alpha, o->a, o->lda, o->beta, o->c, o->ldc);
	default:
		return cublasZherk_v2_64(h, uplo, trans, n, k, o->alpha, o->a, o->lda, o->beta, o->c, o->ldc);
	}
}

cublasStatus_t dispatch(cublasHandle_t h, const struct gemm *g, const struct operands *o) {
	const struct kind *t = &kinds[g->type];
	if (g->update) return rank_k_call(h, t, g->entry, g->update, g->opa, g->n, g->k, o);
	return call(h, t, g->entry, g->opa, g->opb, g->m, g->n, g->k, o);
}

const char *const batch_names[BATCH_ENTRIES] = {"gemmBatched",   "gemmBatched_64",   "gemmStridedBatched",   "gemmStridedBatched_64",
                                                "GemmBatchedEx", "GemmBatchedEx_64", "GemmStridedBatchedEx", "GemmStridedBatchedEx_64"};

/* the typed batch entry points of the cuBLAS type prefix P and element type T, as cases of a switch */
#define TYPED_BATCHES(P, T)                                                                                                            \
	case BATCHED:                                                                                                                      \
		return cublas##P##gemmBatched(h, oa, ob, (int)m, (int)n, (int)k, (const T *)o->alpha, (const T *const *)arrays[0], (int)o->lda, \
		                              (const T *const *)arrays[1], (int)o->ldb, (const T *)o->beta, (T *const *)arrays[2], (int)o->ldc,  \
		                              (int)count);                                                                                     \
	case BATCHED_64:                                                                                                                   \
		return cublas##P##gemmBatched_64(h, oa, ob, m, n, k, (const T *)o->alpha, (const T *const *)arrays[0], o->lda,                  \
		                                 (const T *const *)arrays[1], o->ldb, (const T *)o->beta, (T *const *)arrays[2], o->ldc, count); \
	case STRIDED:                                                                                                                      \
		return cublas##P##gemmStridedBatched(h, oa, ob, (int)m, (int)n, (int)k, (const T *)o->alpha, (const T *)o->a, (int)o->lda,     \
		                                     s[0], (const T *)o->b, (int)o->ldb, s[1], (const T *)o->beta, (T *)o->c, (int)o->ldc, s[2], \
		                                     (int)count);                                                                              \
	default:                                                                                                                           \
		return cublas##P##gemmStridedBatched_64(h, oa, ob, m, n, k, (const T *)o->alpha, (const T *)o->a, o->lda, s[0],                 \
		                                        (const T *)o->b, o->ldb, s[1], (const T *)o->beta, (T *)o->c, o->ldc, s[2], count)

cublasStatus_t batch_call(cublasHandle_t h, const struct kind *t, int entry, const int ops[2], const long shape[3],
                          const struct operands *o, void *const arrays[3], const long long s[3], long count) {
	cublasOperation_t oa = cublas_ops[ops[0]], ob = cublas_ops[ops[1]];
	long m = shape[0], n = shape[1], k = shape[2];
	switch (entry) {
	case BATCHED_EX:
		return cublasGemmBatchedEx(h, oa, ob, (int)m, (int)n, (int)k, o->alpha, (const void *const *)arrays[0], t->type, (int)o->lda,
		                           (const void *const *)arrays[1], t->type, (int)o->ldb, o->beta, (void *const *)arrays[2], t->type,
		                           (int)o->ldc, (int)count, t->compute, CUBLAS_GEMM_DEFAULT);
	case BATCHED_EX_64:
		return cublasGemmBatchedEx_64(h, oa, ob, m, n, k, o->alpha, (const void *const *)arrays[0], t->type, o->lda,
		                              (const void *const *)arrays[1], t->type, o->ldb, o->beta, (void *const *)arrays[2], t->type, o->ldc,
		                              count, t->compute, CUBLAS_GEMM_DEFAULT);
	case STRIDED_EX:
		return cublasGemmStridedBatchedEx(h, oa, ob, (int)m, (int)n, (int)k, o->alpha, o->a, t->type, (int)o->lda, s[0], o->b, t->type,
		                                  (int)o->ldb, s[1], o->beta, o->c, t->type, (int)o->ldc, s[2], (int)count, t->compute,
		                                  CUBLAS_GEMM_DEFAULT);
	case STRIDED_EX_64:
		return cublasGemmStridedBatchedEx_64(h, oa, ob, m, n, k, o->alpha, o->a, t->type, o->lda, s[0], o->b, t->type, o->ldb, s[1], o->beta,
		                                     o->c, t->type, o->ldc, s[2], count, t->compute, CUBLAS_GEMM_DEFAULT);
	}
	switch (t - kinds) {
	case TS:
		switch (entry) { TYPED_BATCHES(S, float); }
	case TD:
		switch (entry) { TYPED_BATCHES(D, double); }
	case TC:
		switch (entry) { TYPED_BATCHES(C, cuComplex); }
	default:
		switch (entry) { TYPED_BATCHES(Z, cuDoubleComplex); }
	}
}

