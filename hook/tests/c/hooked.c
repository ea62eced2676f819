/* A cuBLAS program that knows nothing of emugemm: run as it is, and under
 * LD_PRELOAD=libemugemm_cublas.so, every check must pass.
 *
 * It calls every entry point the interposer intercepts (cublas{S,D,C,Z}gemm_v2 and _v2_64,
 * cublasGemmEx and _64 with the four matching type combinations), each with all nine op pairs
 * (N, T, C), leading dimensions above the rows, alpha and beta in host and in device memory,
 * beta = 0 over a NaN C and beta != 0, on the default stream and on a stream of its own; and
 * every rank-k update it intercepts (cublas{S,D}syrk_v2, cublas{C,Z}herk_v2 and _v2_64) with
 * both triangles and A as stored and (conjugate-)transposed, in the same turns; and every batch
 * entry point (cublas{S,D,C,Z}gemmBatched and gemmStridedBatched, cublasGemmBatchedEx and
 * cublasGemmStridedBatchedEx, each and its _64) with three products, op pairs N/N and T/C, host
 * scalars and beta = 0 over NaN; then, per entry
 * point, alpha = 0 over NaN operands and m, n, k = 0 (and a HERK's trans = T, which cuBLAS
 * refuses); then two threads with a handle and a stream each, products during stream capture, and
 * products below the interposer's size threshold. Each result is checked against a long double
 * product on the host (a sample of its entries), its padding rows and a rank-k update's other
 * triangle against being written, and a HERK's diagonal against an imaginary part.
 *
 * Each result's bits are printed as a hash ("hash <case> <fnv>"), so that a run with every call
 * forwarded can be compared with the unhooked run. Under the interposer, each product of a type
 * it emulates is computed again through the C ABI (`emugemm_?gemm`, found in the preloaded
 * library) at the precision the interposer's environment gives that type, on the same operands
 * and a fresh C, and must match it bit for bit ("abi <case> <plan> equal"); a rank-k update, through
 * `emugemm_{s,d}syrk` or `emugemm_{c,z}herk`; a batch, through one `emugemm_?gemm` per product.
 * Build: gcc -O2 hooked.c -I$CUDA/include -L$CUDA/lib64 -lcublas -lcudart -lpthread -lm -ldl */
#define _GNU_SOURCE
#include <complex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../../capi/include/emugemm.h"

#define CHECK(x)                                                                                    \
	do {                                                                                            \
		if ((x) != 0) {                                                                             \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                          \
			exit(2);                                                                                \
		}                                                                                           \
	} while (0)

static int failures = 0;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;
static void expect(int ok, const char *what) {
	if (ok) return;
	pthread_mutex_lock(&failures_lock);
	fprintf(stderr, "FAILED: %s\n", what);
	failures++;
	pthread_mutex_unlock(&failures_lock);
}

/* ---- the four element types ---- */

enum { TS, TD, TC, TZ };
struct kind {
	const char *name; /* s, d, c, z */
	int is_complex, dbl;
	cudaDataType type;
	cublasComputeType_t compute;
	const char *env; /* the interposer's variable for this type */
	emugemm_precision_kind dflt;
	int bits; /* accuracy checked: 2^-bits of the sum of the terms' magnitudes */
};
static const struct kind kinds[4] = {
    {"s", 0, 0, CUDA_R_32F, CUBLAS_COMPUTE_32F, "EMUGEMM_HOOK_S", EMUGEMM_PRECISION_KIND_F32, 16},
    {"d", 0, 1, CUDA_R_64F, CUBLAS_COMPUTE_64F, "EMUGEMM_HOOK_D", EMUGEMM_PRECISION_KIND_F64, 40},
    {"c", 1, 0, CUDA_C_32F, CUBLAS_COMPUTE_32F, "EMUGEMM_HOOK_C", EMUGEMM_PRECISION_KIND_F32, 16},
    {"z", 1, 1, CUDA_C_64F, CUBLAS_COMPUTE_64F, "EMUGEMM_HOOK_Z", EMUGEMM_PRECISION_KIND_F64, 40},
};
static size_t parts(const struct kind *t) { return t->is_complex ? 2 : 1; }
static size_t bytes_of(const struct kind *t, size_t elements) { return elements * parts(t) * (t->dbl ? 8 : 4); }

/* the entry points, in the order they are named; a rank-k update's are V2 and V2_64 */
enum { V2, V2_64, EX, EX_64, ENTRIES };

/* one call: a product, or a rank-k update (op(A) n x k, m = n, opb unused) */
struct gemm {
	int type, entry, opa, opb;
	long m, n, k;
	int device_scalars, beta_zero;
	int captured; /* called during a stream capture, and run as a graph */
	char update;  /* 0: a GEMM; 'L' or 'U': a rank-k update of that triangle of C */
};

static void entry_name(char *out, size_t size, const struct gemm *g) {
	static const char *ex[2] = {"GemmEx", "GemmEx_64"};
	const struct kind *t = &kinds[g->type];
	const char *routine = !g->update ? "gemm" : t->is_complex ? "herk" : "syrk";
	if (g->entry >= EX)
		snprintf(out, size, "%s(%s)", ex[g->entry - EX], t->name);
	else
		snprintf(out, size, "%s%s_v2%s", t->name, routine, g->entry == V2_64 ? "_64" : "");
}

/* whether g computes C's entry (i, j): every one of a GEMM's, a rank-k update's triangle */
static int named(const struct gemm *g, long i, long j) { return !g->update || (g->update == 'L' ? i >= j : i <= j); }

/* a deterministic value, spread over 2^-4 .. 2^4 so that the plan is not trivial */
static double value(long i, int seed) {
	unsigned x = (unsigned)(i * 2654435761u + seed * 40503u);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return ((double)(x % 20011) / 20011.0 - 0.5) * ldexp(1.0, (int)(x % 9) - 4);
}

/* FNV-1a of the bytes at `p` */
static uint64_t fnv(const void *p, size_t bytes) {
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < bytes; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return h;
}

/* `elements` of t as doubles (both parts of a complex one), rounded to t's precision */
static double *values(const struct kind *t, size_t elements, int seed) {
	size_t n = elements * parts(t);
	double *x = malloc(sizeof(double) * (n ? n : 1));
	for (size_t i = 0; i < n; i++) x[i] = t->dbl ? value((long)i, seed) : (double)(float)value((long)i, seed);
	return x;
}

/* x (as `values` holds it) in t's memory format, host side */
static void *packed(const struct kind *t, const double *x, size_t elements) {
	size_t n = elements * parts(t);
	void *p = malloc(bytes_of(t, elements ? elements : 1));
	for (size_t i = 0; i < n; i++) {
		if (t->dbl)
			((double *)p)[i] = x[i];
		else
			((float *)p)[i] = (float)x[i];
	}
	return p;
}

static void *device(const struct kind *t, const double *x, size_t elements) {
	void *host = packed(t, x, elements), *d;
	CHECK(cudaMalloc(&d, bytes_of(t, elements ? elements : 1)));
	CHECK(cudaMemcpy(d, host, bytes_of(t, elements), cudaMemcpyHostToDevice));
	free(host);
	return d;
}

/* the element at `index` of x (t's raw memory format) */
static long double complex raw_at(const struct kind *t, const void *x, long index) {
	long i = index * (long)parts(t);
	long double re = t->dbl ? ((const double *)x)[i] : ((const float *)x)[i];
	long double im = !t->is_complex ? 0 : t->dbl ? ((const double *)x)[i + 1] : ((const float *)x)[i + 1];
	return re + I * im;
}

/* op(X)[i][h] of a column-major matrix (doubles, as `values` holds it) with leading dimension ld */
static long double complex op_at(const struct kind *t, const double *x, long ld, int op, long i, long h) {
	long index = op == 0 ? i + h * ld : h + i * ld;
	long double complex v = x[index * (long)parts(t)];
	if (t->is_complex) v += I * (long double)x[index * 2 + 1];
	return op == 2 ? conjl(v) : v;
}

/* ---- the calls ---- */

static const cublasOperation_t cublas_ops[3] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
static const emugemm_operation abi_ops[3] = {EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_T, EMUGEMM_OPERATION_C};

struct operands {
	const void *alpha, *a, *b, *beta;
	void *c;
	long lda, ldb, ldc;
};

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

/* the cuBLAS call g */
static cublasStatus_t dispatch(cublasHandle_t h, const struct gemm *g, const struct operands *o) {
	const struct kind *t = &kinds[g->type];
	if (g->update) return rank_k_call(h, t, g->entry, g->update, g->opa, g->n, g->k, o);
	return call(h, t, g->entry, g->opa, g->opb, g->m, g->n, g->k, o);
}

/* the C ABI's function for g's type and routine, where the interposer (which exports it) is
 * preloaded */
static emugemm_status abi_call(const struct gemm *g, const struct operands *o, emugemm_pointer_mode mode, void *stream,
                               emugemm_precision p) {
	static const char *names[4] = {"emugemm_sgemm", "emugemm_dgemm", "emugemm_cgemm", "emugemm_zgemm"};
	static const char *updates[4] = {"emugemm_ssyrk", "emugemm_dsyrk", "emugemm_cherk", "emugemm_zherk"};
	if (g->update) {
		/* the four functions differ only in their pointee types: one signature serves */
		__typeof__(emugemm_dsyrk) *f = (__typeof__(emugemm_dsyrk) *)dlsym(RTLD_DEFAULT, updates[g->type]);
		emugemm_fill_mode uplo = g->update == 'U' ? EMUGEMM_FILL_MODE_UPPER : EMUGEMM_FILL_MODE_LOWER;
		return f(uplo, abi_ops[g->opa], g->n, g->k, o->alpha, o->a, o->lda, o->beta, o->c, o->ldc, mode, stream, p);
	}
	/* the four functions differ only in their pointee types: one signature serves */
	__typeof__(emugemm_dgemm) *f = (__typeof__(emugemm_dgemm) *)dlsym(RTLD_DEFAULT, names[g->type]);
	return f(abi_ops[g->opa], abi_ops[g->opb], g->m, g->n, g->k, o->alpha, o->a, o->lda, o->b, o->ldb, o->beta, o->c, o->ldc, mode, stream,
	         p);
}

static int preloaded(void) { return dlsym(RTLD_DEFAULT, "emugemm_dgemm") != 0; }

/* the calling thread's last report of the C ABI (the preloaded library's) */
static void last_report(emugemm_report *r) {
	__typeof__(emugemm_last_report) *f = (__typeof__(emugemm_last_report) *)dlsym(RTLD_DEFAULT, "emugemm_last_report");
	CHECK(f == 0 || f(r));
}

/* a hooked call's result `got` and the C ABI's, just enqueued into `dc` on `stream` (`bytes`
 * each; `again` receives it): expected equal, and the C ABI's plan printed for check.py */
struct result {
	const void *got;
	void *again, *dc;
	size_t bytes;
};

static void same_as_abi(const char *what, const char *claim, struct result x, cudaStream_t stream) {
	char message[160];
	emugemm_report r;
	last_report(&r);
	CHECK(cudaStreamSynchronize(stream));
	CHECK(cudaMemcpy(x.again, x.dc, x.bytes, cudaMemcpyDeviceToHost));
	int equal = memcmp(x.again, x.got, x.bytes) == 0;
	snprintf(message, sizeof message, "%s: %s", what, claim);
	expect(equal, message);
	printf("abi %s plan %s%u%s%s %s\n", what, r.scheme == EMUGEMM_SCHEME_SCHEME_II ? "scheme2=" : r.scheme ? "scheme1=" : "native",
	       r.parameter, r.native_reason[0] ? " " : "", (const char *)r.native_reason, equal ? "equal" : "DIFFERENT");
}

/* whether the environment variable `name` says on (EMUGEMM_HOOK_BATCHED, EMUGEMM_HOOK_RANK_K: the
 * interposer emulates batched calls, rank-k updates; both off by default) */
static int on(const char *name) {
	const char *v = getenv(name);
	return v && !strcasecmp(v, "on");
}

/* the precision the interposer gives t's calls, as its environment says; 0 where they are off */
static int configured(const struct kind *t, emugemm_precision *p) {
	const char *v = getenv(t->env);
	p->kind = t->dflt;
	p->parameter = 0;
	if (!v) return 1;
	if (!strcasecmp(v, "off")) return 0;
	const char *number = strpbrk(v, "=:");
	p->parameter = number ? (uint32_t)strtoul(number + 1, 0, 10) : 0;
	static const struct {
		const char *name;
		emugemm_precision_kind kind;
	} names[] = {{"f64", EMUGEMM_PRECISION_KIND_F64},        {"f32", EMUGEMM_PRECISION_KIND_F32},
	             {"tf32", EMUGEMM_PRECISION_KIND_TF32},      {"bits", EMUGEMM_PRECISION_KIND_BITS},
	             {"scheme1", EMUGEMM_PRECISION_KIND_SCHEME_I}, {"scheme2", EMUGEMM_PRECISION_KIND_SCHEME_II}};
	size_t len = number ? (size_t)(number - v) : strlen(v);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i].name) == len && !strncasecmp(v, names[i].name, len)) {
			p->kind = names[i].kind;
			return 1;
		}
	fprintf(stderr, "%s=%s: not a precision this program reads\n", t->env, v);
	exit(2);
}

static long min_size(void) {
	const char *v = getenv("EMUGEMM_HOOK_MIN");
	return v ? atol(v) : 256;
}

/* ---- one product ---- */

/* alpha and beta of g, as `values` holds them (real for a rank-k update) */
static void scalars(const struct kind *t, const struct gemm *g, double alpha[2], double beta[2]) {
	int complex_scalars = t->is_complex && !g->update;
	alpha[0] = 0.75, alpha[1] = complex_scalars ? -1.25 : 0;
	beta[0] = g->beta_zero ? 0 : -0.5, beta[1] = complex_scalars && !g->beta_zero ? 0.25 : 0;
}

/* op(B)[h][j] of g: B's, or for a rank-k update op(A)'s adjoint's */
static long double complex rhs_at(const struct kind *t, const struct gemm *g, const double *a, long lda, const double *b, long ldb, long h,
                                  long j) {
	return g->update ? conjl(op_at(t, a, lda, g->opa, j, h)) : op_at(t, b, ldb, g->opb, h, j);
}

/* C against alpha op(A) op(B) + beta C0 in long double, on every seventh entry g computes, to
 * 2^-bits of the magnitudes (a HERK's diagonal from C0's real part, and real); and every other
 * entry, the padding rows and a rank-k update's other triangle, untouched (equal to C0's) */
static int accurate(const struct kind *t, const struct gemm *g, const void *c, const double *c0, const double *a, long lda, const double *b,
                    long ldb, long ldc, const double alpha[2], const double beta[2]) {
	long double complex al = alpha[0] + I * (long double)alpha[1], be = beta[0] + I * (long double)beta[1];
	for (long j = 0; j < g->n; j++) {
		for (long i = (j * 3) % 7; i < g->m; i += 7) {
			if (!named(g, i, j)) continue;
			long double complex s = 0;
			long double mag = 0;
			for (long h = 0; h < g->k; h++) {
				long double complex p = op_at(t, a, lda, g->opa, i, h) * rhs_at(t, g, a, lda, b, ldb, h, j);
				s += p;
				mag += cabsl(p);
			}
			long double complex start = g->beta_zero ? 0 : op_at(t, c0, ldc, 0, i, j);
			if (g->update && i == j) start = creall(start);
			long double complex want = al * s + (g->beta_zero ? 0 : be * start);
			long double scale = cabsl(al) * mag + cabsl(be) * cabsl(start);
			if (!(cabsl(raw_at(t, c, i + j * ldc) - want) <= ldexpl(scale, -t->bits) + 1e-30L)) return 0;
		}
		if (g->update && j < g->m && cimagl(raw_at(t, c, j + j * ldc)) != 0) return 0;
		for (long i = 0; i < ldc; i++) {
			/* by value: a long double's storage holds padding bytes */
			if ((i >= g->m || !named(g, i, j)) && raw_at(t, c, i + j * ldc) != op_at(t, c0, ldc, 0, i, j)) return 0;
		}
	}
	return 1;
}

/* the product g on h (and its stream), checked; compared with the C ABI's where the interposer
 * emulates its type */
static void product(cublasHandle_t h, const struct gemm *g) {
	const struct kind *t = &kinds[g->type];
	/* the type of alpha and beta: a rank-k update's are real */
	const struct kind *st = g->update ? &kinds[t->dbl ? TD : TS] : t;
	char name[32], what[96];
	entry_name(name, sizeof name, g);
	/* a rank-k update: its triangle and op(A) */
	char first = g->update ? g->update : "NTC"[g->opa], second = "NTC"[g->update ? g->opa : g->opb];
	snprintf(what, sizeof what, "%s %c%c %ldx%ldx%ld %s beta%s%s", name, first, second, g->m, g->n, g->k,
	         g->device_scalars ? "device" : "host", g->beta_zero ? "=0" : "!=0", g->captured ? " captured" : "");
	long ra = g->opa ? g->k : g->m, ca = g->opa ? g->m : g->k, rb = g->opb ? g->n : g->k, cb = g->update ? 0 : g->opb ? g->k : g->n;
	long lda = ra + 3, ldb = rb + 1, ldc = g->m + 2;
	double *a = values(t, lda * ca, 1 + g->type), *b = values(t, ldb * cb, 5 + g->type), *c0 = values(t, ldc * g->n, 9 + g->type);
	for (long j = 0; j < g->n; j++)
		for (long i = 0; i < g->m && g->beta_zero; i++)
			for (size_t p = 0; p < parts(t) && named(g, i, j); p++) c0[(i + j * ldc) * parts(t) + p] = NAN;
	double alpha[2], beta[2], both[4];
	scalars(t, g, alpha, beta);
	both[0] = alpha[0], both[1] = alpha[1];
	both[parts(st)] = beta[0], both[parts(st) + 1] = beta[1];
	void *host_scalars = packed(st, both, 2);
	void *da = device(t, a, lda * ca), *db = device(t, b, ldb * cb), *dc = device(t, c0, ldc * g->n), *ds = device(st, both, 2);
	size_t one = bytes_of(st, 1);
	struct operands o = {host_scalars, da, db, (char *)host_scalars + one, dc, lda, ldb, ldc};
	if (g->device_scalars) o.alpha = ds, o.beta = (char *)ds + one;
	cudaStream_t stream;
	CHECK(cublasGetStream(h, &stream));
	CHECK(cublasSetPointerMode(h, g->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
	if (g->captured) {
		cudaGraph_t graph;
		cudaGraphExec_t exec;
		CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
		expect(dispatch(h, g, &o) == CUBLAS_STATUS_SUCCESS, what);
		CHECK(cudaStreamEndCapture(stream, &graph));
		CHECK(cudaGraphInstantiate(&exec, graph, 0));
		CHECK(cudaGraphLaunch(exec, stream));
		CHECK(cudaStreamSynchronize(stream));
		cudaGraphExecDestroy(exec), cudaGraphDestroy(graph);
	} else {
		expect(dispatch(h, g, &o) == CUBLAS_STATUS_SUCCESS, what);
	}
	CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
	CHECK(cudaStreamSynchronize(stream));
	size_t cbytes = bytes_of(t, ldc * g->n);
	void *got = malloc(cbytes), *again = malloc(cbytes);
	CHECK(cudaMemcpy(got, dc, cbytes, cudaMemcpyDeviceToHost));
	char message[160];
	snprintf(message, sizeof message, "%s: accurate, padding untouched", what);
	expect(accurate(t, g, got, c0, a, lda, b, ldb, ldc, alpha, beta), message);
	printf("hash %s %016llx\n", what, (unsigned long long)fnv(got, cbytes));
	emugemm_precision precision;
	long least = g->m < g->n ? g->m : g->n;
	least = least < g->k ? least : g->k;
	/* a captured call is forwarded: its hash is compared with the unhooked run's instead */
	if (preloaded() && configured(t, &precision) && least >= min_size() && !g->captured && (!g->update || on("EMUGEMM_HOOK_RANK_K"))) {
		void *fresh = packed(t, c0, ldc * g->n);
		CHECK(cudaMemcpy(dc, fresh, cbytes, cudaMemcpyHostToDevice));
		emugemm_pointer_mode mode = g->device_scalars ? EMUGEMM_POINTER_MODE_DEVICE : EMUGEMM_POINTER_MODE_HOST;
		expect(abi_call(g, &o, mode, stream, precision) == EMUGEMM_STATUS_SUCCESS, what);
		same_as_abi(what, "bit for bit the C ABI's", (struct result){got, again, dc, cbytes}, stream);
		free(fresh);
	}
	cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(ds);
	free(a), free(b), free(c0), free(host_scalars), free(got), free(again);
}

/* ---- batches ---- */

/* the batch entry points, in the order they are named: pointer arrays, then strided, each typed and
 * Ex, each with 32- and 64-bit dimensions */
enum { BATCHED, BATCHED_64, STRIDED, STRIDED_64, BATCHED_EX, BATCHED_EX_64, STRIDED_EX, STRIDED_EX_64, BATCH_ENTRIES };
static const char *batch_names[BATCH_ENTRIES] = {"gemmBatched",   "gemmBatched_64",   "gemmStridedBatched",   "gemmStridedBatched_64",
                                                 "GemmBatchedEx", "GemmBatchedEx_64", "GemmStridedBatchedEx", "GemmStridedBatchedEx_64"};
static int strided_entry(int entry) { return entry == STRIDED || entry == STRIDED_64 || entry == STRIDED_EX || entry == STRIDED_EX_64; }

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

/* the cuBLAS batch entry point `entry` of type t on `count` products: the device arrays of A's,
 * B's and C's pointers `arrays`, or o's matrices and the strides `s` (elements) to the next ones */
static cublasStatus_t batch_call(cublasHandle_t h, const struct kind *t, int entry, const int ops[2], const long shape[3],
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

/* three m x n x k products of op pair `ops` through the batch entry point `entry` of `type`, on h's
 * stream: host scalars, beta = 0 over a NaN C; each product's matrices a stride past the previous
 * one's, given as device pointer arrays or as strides. Each product is checked as `product` checks
 * one; where the interposer emulates the type, the batch must equal the C ABI's single products
 * (`emugemm_?gemm`) on the same operands bit for bit */
static void batch(cublasHandle_t h, int type, int entry, const int ops[2], const long shape[3]) {
	enum { COUNT = 3 };
	const struct kind *t = &kinds[type];
	struct gemm g = {type, V2, ops[0], ops[1], shape[0], shape[1], shape[2], 0, 1, 0, 0};
	char what[96], message[160];
	snprintf(what, sizeof what, "%s%s%s%s %c%c %ldx%ldx%ld x%d host beta=0", entry >= BATCHED_EX ? "" : t->name, batch_names[entry],
	         entry >= BATCHED_EX ? "(" : "", entry >= BATCHED_EX ? t->name : "", "NTC"[g.opa], "NTC"[g.opb], g.m, g.n, g.k, COUNT);
	if (entry >= BATCHED_EX) strcat(what, ")");
	long ra = g.opa ? g.k : g.m, ca = g.opa ? g.m : g.k, rb = g.opb ? g.n : g.k, cb = g.opb ? g.k : g.n;
	long lda = ra + 3, ldb = rb + 1, ldc = g.m + 2;
	long long s[3] = {lda * ca + 5, ldb * cb + 2, ldc * g.n + 1};
	double *a = values(t, s[0] * COUNT, 13 + type), *b = values(t, s[1] * COUNT, 17 + type), *c0 = values(t, s[2] * COUNT, 21 + type);
	for (long p = 0; p < COUNT; p++)
		for (long j = 0; j < g.n; j++)
			for (long i = 0; i < g.m; i++)
				for (size_t q = 0; q < parts(t); q++) c0[(p * s[2] + i + j * ldc) * parts(t) + q] = NAN;
	double alpha[2], beta[2], both[4];
	scalars(t, &g, alpha, beta);
	both[0] = alpha[0], both[1] = alpha[1], both[parts(t)] = beta[0], both[parts(t) + 1] = beta[1];
	void *host_scalars = packed(t, both, 2);
	char *da = device(t, a, s[0] * COUNT), *db = device(t, b, s[1] * COUNT), *dc = device(t, c0, s[2] * COUNT);
	size_t one = bytes_of(t, 1), cbytes = bytes_of(t, s[2] * COUNT);
	/* the device arrays of the products' A, B and C */
	void *arrays[3], *pointers[3][COUNT];
	for (int m = 0; m < 3; m++) {
		for (long p = 0; p < COUNT; p++) pointers[m][p] = (m == 0 ? da : m == 1 ? db : dc) + bytes_of(t, s[m] * p);
		CHECK(cudaMalloc(&arrays[m], sizeof pointers[m]));
		CHECK(cudaMemcpy(arrays[m], pointers[m], sizeof pointers[m], cudaMemcpyHostToDevice));
	}
	struct operands o = {host_scalars, da, db, (char *)host_scalars + one, dc, lda, ldb, ldc};
	cudaStream_t stream;
	CHECK(cublasGetStream(h, &stream));
	expect(batch_call(h, t, entry, ops, shape, &o, arrays, s, COUNT) == CUBLAS_STATUS_SUCCESS, what);
	CHECK(cudaStreamSynchronize(stream));
	void *got = malloc(cbytes), *again = malloc(cbytes), *fresh = packed(t, c0, s[2] * COUNT);
	CHECK(cudaMemcpy(got, dc, cbytes, cudaMemcpyDeviceToHost));
	for (long p = 0; p < COUNT; p++) {
		size_t at = (size_t)p * parts(t);
		int ok = accurate(t, &g, (char *)got + bytes_of(t, s[2] * p), c0 + at * s[2], a + at * s[0], lda, b + at * s[1], ldb, ldc, alpha, beta);
		snprintf(message, sizeof message, "%s: product %ld accurate, padding untouched", what, p);
		expect(ok, message);
	}
	/* the gaps between the products: untouched */
	expect(memcmp((char *)got + cbytes - one, (char *)fresh + cbytes - one, one) == 0, what);
	printf("hash %s %016llx\n", what, (unsigned long long)fnv(got, cbytes));
	emugemm_precision precision;
	long least = g.m < g.n ? g.m : g.n;
	least = least < g.k ? least : g.k;
	if (preloaded() && configured(t, &precision) && on("EMUGEMM_HOOK_BATCHED") && least >= min_size()) {
		CHECK(cudaMemcpy(dc, fresh, cbytes, cudaMemcpyHostToDevice));
		for (long p = 0; p < COUNT; p++) {
			struct operands single = {o.alpha, pointers[0][p], pointers[1][p], o.beta, pointers[2][p], lda, ldb, ldc};
			expect(abi_call(&g, &single, EMUGEMM_POINTER_MODE_HOST, stream, precision) == EMUGEMM_STATUS_SUCCESS, what);
		}
		same_as_abi(what, "bit for bit the C ABI's single products", (struct result){got, again, dc, cbytes}, stream);
	}
	for (int m = 0; m < 3; m++) cudaFree(arrays[m]);
	cudaFree(da), cudaFree(db), cudaFree(dc);
	free(a), free(b), free(c0), free(host_scalars), free(got), free(again), free(fresh);
}

/* ---- quick returns ---- */

/* entry point `entry` of type t (a GEMM, or a rank-k update of the triangle `update`) with
 * alpha = 0 (C = beta C; a GEMM's A and B hold NaN and are not read), and with m = 0 (a GEMM's),
 * n = 0 (C untouched) and k = 0 (C = beta C); C starts at 2 in each case, beta is 3, and a
 * rank-k update's other triangle stays 2. A rank-k update's A is finite under alpha = 0: cuBLAS's
 * SYRK and HERK read it there (NaN in A gives NaN in C), where reference BLAS and the emulation
 * do not. A HERK's trans = T is forwarded to cuBLAS: its status is printed for the runs to compare */
static void quick(cublasHandle_t h, int type, int entry, char update) {
	const struct kind *t = &kinds[type];
	char name[32], what[96];
	struct gemm g = {type, entry, 0, 0, 0, 0, 0, 0, 0, 0, update};
	entry_name(name, sizeof name, &g);
	long n = 272;
	size_t elements = n * n;
	double *x = values(t, elements, 0), *c0 = values(t, elements, 0), three[4] = {0}, zero[2] = {0};
	for (size_t i = 0; i < elements * parts(t); i++) x[i] = NAN, c0[i] = (i % parts(t)) ? 0 : 2;
	void *dx = device(t, x, elements), *dc = device(t, c0, elements), *finite = device(t, c0, elements);
	void *start = packed(t, c0, elements);
	three[0] = 3;
	void *beta = packed(t, three, 1), *alpha0 = packed(t, zero, 1), *alpha1 = packed(t, three, 1);
	void *got = malloc(bytes_of(t, elements));
	static const struct {
		const char *what;
		long m, n, k;
		int alpha_zero;
		double expected; /* every entry of C afterwards */
	} cases[] = {{"alpha=0 over NaN A and B", 272, 272, 272, 1, 6},
	             {"m=0", 0, 272, 272, 0, 2},
	             {"n=0", 272, 0, 272, 0, 2},
	             {"k=0", 272, 272, 0, 0, 6}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		/* a rank-k update has no m of its own */
		if (update && !cases[i].m) continue;
		CHECK(cudaMemcpy(dc, start, bytes_of(t, elements), cudaMemcpyHostToDevice));
		void *a = update && cases[i].alpha_zero ? finite : dx;
		struct operands o = {cases[i].alpha_zero ? alpha0 : alpha1, a, a, beta, dc, n, n, n};
		g.m = update ? cases[i].n : cases[i].m, g.n = cases[i].n, g.k = cases[i].k;
		snprintf(what, sizeof what, "%s %s", name, update && cases[i].alpha_zero ? "alpha=0" : cases[i].what);
		expect(dispatch(h, &g, &o) == CUBLAS_STATUS_SUCCESS, what);
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaMemcpy(got, dc, bytes_of(t, elements), cudaMemcpyDeviceToHost));
		int ok = 1;
		for (size_t e = 0; e < elements; e++) {
			long double expected = named(&g, (long)e % n, (long)e / n) ? cases[i].expected : 2;
			ok &= raw_at(t, got, (long)e) == (long double complex)expected;
		}
		printf("hash %s %016llx\n", what, (unsigned long long)fnv(got, bytes_of(t, elements)));
		expect(ok, what);
	}
	if (update && t->is_complex) {
		struct operands o = {alpha1, dx, dx, beta, dc, n, n, n};
		g.opa = 1, g.m = g.n = g.k = n;
		snprintf(what, sizeof what, "%s trans=T", name);
		printf("hash %s status %d\n", what, (int)dispatch(h, &g, &o));
	}
	cudaFree(dx), cudaFree(dc), cudaFree(finite);
	free(x), free(c0), free(start), free(beta), free(alpha0), free(alpha1), free(got);
}

/* ---- two threads ---- */

/* a handle and a stream of its own, alpha and beta in device memory */
static void *threaded(void *seed) {
	cublasHandle_t h;
	cudaStream_t s;
	CHECK(cublasCreate(&h));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cublasSetStream(h, s));
	long offset = (long)(intptr_t)seed;
	for (int type = TS; type <= TZ; type++) {
		struct gemm g = {type, V2, 0, type == TZ ? 2 : 1, 290 + offset, 280, 300 - offset, 1, type & 1, 0, 0};
		product(h, &g);
		struct gemm r = {type, V2_64, type >= TC ? 2 : 0, 0, 280 + offset, 280 + offset, 290, 1, type & 1, 0, "LU"[type & 1]};
		product(h, &r);
	}
	cublasDestroy(h);
	cudaStreamDestroy(s);
	return 0;
}

int main(void) {
	cublasHandle_t h;
	cudaStream_t own;
	CHECK(cublasCreate(&h));
	CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
	/* every entry point, every op pair; the pointer mode, beta and the stream in turn */
	int index = 0;
	for (int type = TS; type <= TZ; type++)
		for (int entry = V2; entry < ENTRIES; entry++)
			for (int opa = 0; opa < 3; opa++)
				for (int opb = 0; opb < 3; opb++, index++) {
					long m = 300 - index % 5, n = 270 + index % 3, k = 260 + index % 7;
					struct gemm g = {type, entry, opa, opb, m, n, k, index & 1, (index >> 1) & 1, 0, 0};
					CHECK(cublasSetStream(h, (index >> 2) & 1 ? own : 0));
					product(h, &g);
				}
	/* every rank-k entry point, both triangles, A as stored and (conjugate-)transposed; the
	 * pointer mode, beta and the stream in turn */
	int updates = 0;
	for (int type = TS; type <= TZ; type++)
		for (int entry = V2; entry <= V2_64; entry++)
			for (int upper = 0; upper < 2; upper++)
				for (int trans = 0; trans < 2; trans++, updates++) {
					int u = updates, op = trans ? (kinds[type].is_complex ? 2 : 1) : 0;
					long n = 270 + u % 5;
					struct gemm g = {type, entry, op, 0, n, n, 260 + u % 7, (u ^ u >> 1) & 1, (u >> 1 ^ u >> 2) & 1, 0, "LU"[upper]};
					CHECK(cublasSetStream(h, (u ^ u >> 2) & 1 ? own : 0));
					product(h, &g);
				}
	/* every batch entry point, op pairs N/N and T/C in turn, the stream in turn */
	int batches = 0;
	for (int type = TS; type <= TZ; type++)
		for (int entry = BATCHED; entry < BATCH_ENTRIES; entry++, batches++) {
			int ops[2] = {entry & 1, (entry & 1) * 2};
			long shape[3] = {290 - batches % 5, 270 + batches % 3, 260 + batches % 7};
			CHECK(cublasSetStream(h, (batches >> 1) & 1 ? own : 0));
			batch(h, type, entry, ops, shape);
		}
	CHECK(cublasSetStream(h, 0));
	for (int type = TS; type <= TZ; type++) {
		for (int entry = V2; entry < ENTRIES; entry++) quick(h, type, entry, 0);
		for (int entry = V2; entry <= V2_64; entry++) quick(h, type, entry, "LU"[entry]);
	}
	/* below the default size threshold: forwarded there */
	for (int type = TS; type <= TZ; type++) {
		struct gemm g = {type, type & 1 ? V2_64 : EX, 0, type >= TC ? 2 : 1, 40, 30, 20, 0, 1, 0, 0};
		product(h, &g);
		struct gemm r = {type, type & 1 ? V2 : V2_64, type >= TC ? 2 : 1, 0, 40, 40, 20, 1, 1, 0, "LU"[type & 1]};
		product(h, &r);
	}
	/* during a stream capture: forwarded, and right once the graph runs */
	CHECK(cublasSetStream(h, own));
	for (int type = TS; type <= TZ; type++) {
		struct gemm g = {type, type & 1 ? V2 : EX_64, 1, 0, 288, 288, 288, type & 1, 1, 1, 0};
		product(h, &g);
		int op = type & 1 ? (type >= TC ? 2 : 1) : 0;
		struct gemm r = {type, type & 1 ? V2_64 : V2, op, 0, 288, 288, 280, type & 1, 1, 1, "UL"[type & 1]};
		product(h, &r);
	}
	/* two threads, a handle and a stream each */
	pthread_t threads[2];
	for (long i = 0; i < 2; i++) pthread_create(&threads[i], 0, threaded, (void *)(intptr_t)(i * 7));
	for (int i = 0; i < 2; i++) pthread_join(threads[i], 0);
	cublasDestroy(h);
	cudaStreamDestroy(own);
	printf("%s: %d failures, %d products of every entry point and op pair, %d rank-k updates of every entry point, triangle and op, "
	       "%d batches of every entry point\n",
	       failures ? "FAILED" : "ok", failures, index, updates, batches);
	return failures != 0;
}
