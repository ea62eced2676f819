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
 * scalars and beta = 0 over NaN; then, per entry point, alpha = 0 over NaN operands and m, n,
 * k = 0 (and a HERK's trans = T, which the C ABI refuses and the interposer forwards: cuBLAS's
 * status is printed); then two threads with a handle and a stream each, products during stream
 * capture (the graph run once), and products below the interposer's size threshold. Each result is checked against a
 * long double product on the host (a sample of its entries), its padding rows and a rank-k
 * update's other triangle against being written, and a HERK's diagonal against an imaginary part.
 *
 * Each result's bits are printed as a hash ("hash <case> <fnv>"), so that a run with every call
 * forwarded can be compared with the unhooked run. Under the interposer, each product of a type
 * it emulates is computed again through the C ABI (`emugemm_?gemm`, found in the preloaded
 * library) at the precision the interposer's environment gives that type, on the same operands
 * and a fresh C, and must match it bit for bit ("abi <case> <plan> equal"); a rank-k update, through
 * `emugemm_{s,d}syrk` or `emugemm_{c,z}herk`; a batch, through one `emugemm_?gemm` per product.
 * Its parts are named in hooked.h.
 * Build: gcc -O2 hooked.c hooked_common.c hooked_cublas.c hooked_abi.c -I$CUDA/include -L$CUDA/lib64 -lcublas -lcudart
 *        -lpthread -lm -ldl */
#include "hooked.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

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
	/* a call captured with its scalars in device memory is forwarded (the library would read them
	 * on the host), and so is every call under a workspace bound (check.py's bounded run): their
	 * hashes are compared with the unhooked run's instead. A captured call with host scalars is
	 * recorded where EMUGEMM_GRAPHS is on (check.py's runs), and its replay must equal the
	 * uncaptured call's bits */
	int forwarded_capture = g->captured && (g->device_scalars || !on("EMUGEMM_GRAPHS"));
	if (emulating() && configured(t, &precision) && least >= min_size() && !forwarded_capture && (!g->update || on("EMUGEMM_HOOK_RANK_K"))) {
		void *fresh = packed(t, c0, ldc * g->n);
		CHECK(cudaMemcpy(dc, fresh, cbytes, cudaMemcpyHostToDevice));
		int32_t mode = g->device_scalars ? EMUGEMM_POINTER_MODE_DEVICE : EMUGEMM_POINTER_MODE_HOST;
		expect(abi_call(g, &o, mode, stream, precision) == EMUGEMM_STATUS_SUCCESS, what);
		same_as_abi(what, "bit for bit the C ABI's", (struct result){got, again, dc, cbytes}, stream);
		free(fresh);
	}
	cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(ds);
	free(a), free(b), free(c0), free(host_scalars), free(got), free(again);
}

/* ---- batches ---- */

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
	if (emulating() && configured(t, &precision) && on("EMUGEMM_HOOK_BATCHED") && least >= min_size()) {
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
	/* during a stream capture: recorded into the graph with host scalars (S and C), forwarded with
	 * scalars in device memory (D and Z); right once the graph runs */
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
	       failures() ? "FAILED" : "ok", failures(), index, updates, batches);
	return failures() != 0;
}
