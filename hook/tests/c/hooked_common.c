/* The element types, and the operands' values on the host and on the device (see hooked.h). */
#include "hooked.h"

#include <math.h>
#include <pthread.h>

static int failed = 0;
static pthread_mutex_t failed_lock = PTHREAD_MUTEX_INITIALIZER;

void expect(int ok, const char *what) {
	if (ok) return;
	pthread_mutex_lock(&failed_lock);
	fprintf(stderr, "FAILED: %s\n", what);
	failed++;
	pthread_mutex_unlock(&failed_lock);
}

int failures(void) {
	pthread_mutex_lock(&failed_lock);
	int count = failed;
	pthread_mutex_unlock(&failed_lock);
	return count;
}

const struct kind kinds[4] = {
    {"s", 0, 0, CUDA_R_32F, CUBLAS_COMPUTE_32F, "EMUGEMM_HOOK_S", EMUGEMM_PRECISION_KIND_F32, 16},
    {"d", 0, 1, CUDA_R_64F, CUBLAS_COMPUTE_64F, "EMUGEMM_HOOK_D", EMUGEMM_PRECISION_KIND_F64, 40},
    {"c", 1, 0, CUDA_C_32F, CUBLAS_COMPUTE_32F, "EMUGEMM_HOOK_C", EMUGEMM_PRECISION_KIND_F32, 16},
    {"z", 1, 1, CUDA_C_64F, CUBLAS_COMPUTE_64F, "EMUGEMM_HOOK_Z", EMUGEMM_PRECISION_KIND_F64, 40},
};

void entry_name(char *out, size_t size, const struct gemm *g) {
	static const char *ex[2] = {"GemmEx", "GemmEx_64"};
	const struct kind *t = &kinds[g->type];
	const char *routine = !g->update ? "gemm" : t->is_complex ? "herk" : "syrk";
	if (g->entry >= EX)
		snprintf(out, size, "%s(%s)", ex[g->entry - EX], t->name);
	else
		snprintf(out, size, "%s%s_v2%s", t->name, routine, g->entry == V2_64 ? "_64" : "");
}

int named(const struct gemm *g, long i, long j) { return !g->update || (g->update == 'L' ? i >= j : i <= j); }

/* a deterministic value, spread over 2^-4 .. 2^4 so that the plan is not trivial */
static double value(long i, int seed) {
	unsigned x = (unsigned)(i * 2654435761u + seed * 40503u);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return ((double)(x % 20011) / 20011.0 - 0.5) * ldexp(1.0, (int)(x % 9) - 4);
}

uint64_t fnv(const void *p, size_t bytes) {
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < bytes; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return h;
}

double *values(const struct kind *t, size_t elements, int seed) {
	size_t n = elements * parts(t);
	double *x = malloc(sizeof(double) * (n ? n : 1));
	for (size_t i = 0; i < n; i++) x[i] = t->dbl ? value((long)i, seed) : (double)(float)value((long)i, seed);
	return x;
}

void *packed(const struct kind *t, const double *x, size_t elements) {
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

void *device(const struct kind *t, const double *x, size_t elements) {
	void *host = packed(t, x, elements), *d;
	CHECK(cudaMalloc(&d, bytes_of(t, elements ? elements : 1)));
	CHECK(cudaMemcpy(d, host, bytes_of(t, elements), cudaMemcpyHostToDevice));
	free(host);
	return d;
}

long double complex raw_at(const struct kind *t, const void *x, long index) {
	long i = index * (long)parts(t);
	long double re = t->dbl ? ((const double *)x)[i] : ((const float *)x)[i];
	long double im = !t->is_complex ? 0 : t->dbl ? ((const double *)x)[i + 1] : ((const float *)x)[i + 1];
	return re + I * im;
}

long double complex op_at(const struct kind *t, const double *x, long ld, int op, long i, long h) {
	long index = op == 0 ? i + h * ld : h + i * ld;
	long double complex v = x[index * (long)parts(t)];
	if (t->is_complex) v += I * (long double)x[index * 2 + 1];
	return op == 2 ? conjl(v) : v;
}
