/* The interposer's environment as this program reads it, and the comparison of a hooked call with
 * the C ABI that the preloaded interposer exports (see hooked.h). The C ABI's functions are found
 * with dlsym: the unhooked run has none, and must link without them. */
#include "hooked.h"

#include <dlfcn.h>
#include <string.h>
#include <strings.h>

static const int32_t abi_ops[3] = {EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_T, EMUGEMM_OPERATION_C};

emugemm_status abi_call(const struct gemm *g, const struct operands *o, int32_t mode, void *stream, emugemm_precision p) {
	static const char *names[4] = {"emugemm_sgemm", "emugemm_dgemm", "emugemm_cgemm", "emugemm_zgemm"};
	static const char *updates[4] = {"emugemm_ssyrk", "emugemm_dsyrk", "emugemm_cherk", "emugemm_zherk"};
	if (g->update) {
		/* the four functions differ only in their pointee types: one signature serves */
		__typeof__(emugemm_dsyrk) *f = (__typeof__(emugemm_dsyrk) *)dlsym(RTLD_DEFAULT, updates[g->type]);
		int32_t uplo = g->update == 'U' ? EMUGEMM_FILL_MODE_UPPER : EMUGEMM_FILL_MODE_LOWER;
		return f(uplo, abi_ops[g->opa], g->n, g->k, o->alpha, o->a, o->lda, o->beta, o->c, o->ldc, mode, stream, p);
	}
	/* the four functions differ only in their pointee types: one signature serves */
	__typeof__(emugemm_dgemm) *f = (__typeof__(emugemm_dgemm) *)dlsym(RTLD_DEFAULT, names[g->type]);
	return f(abi_ops[g->opa], abi_ops[g->opb], g->m, g->n, g->k, o->alpha, o->a, o->lda, o->b, o->ldb, o->beta, o->c, o->ldc, mode, stream,
	         p);
}

int preloaded(void) { return dlsym(RTLD_DEFAULT, "emugemm_dgemm") != 0; }

/* whether the interposer may emulate: it is preloaded, and no workspace bound (EMUGEMM_HOOK_MEMORY)
 * makes it forward every call */
int emulating(void) { return preloaded() && !getenv("EMUGEMM_HOOK_MEMORY"); }

/* the calling thread's last report of the C ABI (the preloaded library's) */
static void last_report(emugemm_report *r) {
	__typeof__(emugemm_last_report) *f = (__typeof__(emugemm_last_report) *)dlsym(RTLD_DEFAULT, "emugemm_last_report");
	CHECK(f == 0 || f(r));
}

void same_as_abi(const char *what, const char *claim, struct result x, cudaStream_t stream) {
	char message[160];
	emugemm_report r;
	last_report(&r);
	CHECK(cudaStreamSynchronize(stream));
	CHECK(cudaMemcpy(x.again, x.dc, x.bytes, cudaMemcpyDeviceToHost));
	int equal = memcmp(x.again, x.got, x.bytes) == 0;
	/* a call the library computes natively from its shape the interposer forwards to cuBLAS, whose
	 * bits the C ABI's own native product need not share (the off run checks forwarding) */
	int forwarded = strcmp((const char *)r.tier, "shape") == 0;
	snprintf(message, sizeof message, "%s: %s", what, claim);
	expect(equal || forwarded, message);
	printf("abi %s plan %s%u%s%s %s\n", what, r.scheme == EMUGEMM_SCHEME_SCHEME_II ? "scheme2=" : r.scheme ? "scheme1=" : "native",
	       r.parameter, r.native_reason[0] ? " " : "", (const char *)r.native_reason,
	       equal ? "equal" : forwarded ? "forwarded" : "DIFFERENT");
}

/* the spellings of on the interposer accepts (EMUGEMM_HOOK_BATCHED, EMUGEMM_HOOK_RANK_K: batched
 * calls and rank-k updates are emulated only where the variable says on) */
int on(const char *name) {
	static const char *const spellings[] = {"on", "1", "true", "yes"};
	const char *v = getenv(name);
	for (size_t i = 0; v && i < sizeof spellings / sizeof spellings[0]; i++)
		if (!strcasecmp(v, spellings[i])) return 1;
	return 0;
}

int configured(const struct kind *t, emugemm_precision *p) {
	const char *v = getenv(t->env);
	p->kind = t->dflt;
	p->parameter = 0;
	if (!v) return 1;
	if (!strcasecmp(v, "off")) return 0;
	const char *number = strpbrk(v, "=:");
	p->parameter = number ? (uint32_t)strtoul(number + 1, 0, 10) : 0;
	static const struct {
		const char *name;
		int32_t kind;
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

/* the interposer's rule: a size of at least 1, else its default 256 */
long min_size(void) {
	const char *v = getenv("EMUGEMM_HOOK_MIN");
	long n = v ? atol(v) : 0;
	return n >= 1 ? n : 256;
}
