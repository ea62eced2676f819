/* A complex double product captured into a CUDA graph, through the C ABI (emugemm_zgemm, found in
 * the preloaded interposer) and through cuBLAS (cublasZgemm_v2, which the interposer intercepts),
 * in the global and the thread-local capture modes. Each graph is replayed on narrow-ranged
 * operands (phi = 0.5: emulated), wide-ranged ones (phi = 8: native) and narrow-ranged ones with a
 * NaN in A and an infinity in B (those entries native). Each replay's plan (scheme, parameter,
 * native rows, non-finite entries, tier) and bits must equal those of the same call uncaptured on
 * the same data, and its plan the one its data calls for; the interposer's log must hold one line
 * per replay of the cuBLAS calls, with that replay's plan.
 *
 * The capture runs on a thread of its own, which makes no other call: the C ABI's last report of
 * that thread is then the last replay's. Prints one line per replay; exits 1 on any failure.
 * Run: LD_PRELOAD=libemugemm_cublas.so EMUGEMM_GRAPHS=on CUDA_MODULE_LOADING=EAGER EMUGEMM_HOOK_LOG=graphs.jsonl ./graphs [N]   (N = 6144,
 *      which the shape tier lets emulate on Hopper)
 * Build: gcc -O2 graphs.c -I$CUDA/include -L$CUDA/lib64 -lcublas -lcudart -lpthread -lm -ldl */
#define _GNU_SOURCE
#include <complex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../capi/include/emugemm.h"
#include "check.h"

static int failed;

static void expect(int ok, const char *what) {
	if (!ok) {
		failed++;
		fprintf(stderr, "FAILED: %s\n", what);
	}
}

/* ---- operands ---- */

static uint64_t state;
static double uniform(void) {
	state ^= state << 13, state ^= state >> 7, state ^= state << 17;
	return (double)(state >> 11) / 9007199254740992.0;
}

/* n x n complex entries (u - 0.5) exp(phi z) in each part, u uniform, z standard normal */
static double complex *random_matrix(long n, double phi, uint64_t seed) {
	state = seed * 0x9E3779B97F4A7C15ull + 1;
	double complex *m = malloc(sizeof *m * n * n);
	for (long i = 0; i < n * n; i++) {
		double part[2];
		for (int p = 0; p < 2; p++) {
			double z = sqrt(-2 * log(1 - uniform())) * cos(2 * M_PI * uniform());
			part[p] = (uniform() - 0.5) * exp(phi * z);
		}
		m[i] = part[0] + I * part[1];
	}
	return m;
}

enum { NARROW, WIDE, NONFINITE, KINDS };
static const char *const kind_names[KINDS] = {"phi = 0.5", "phi = 8", "NaN and infinity"};

/* ---- the two doors ---- */

enum { ABI, CUBLAS };
static const char *const door_names[2] = {"emugemm_zgemm", "cublasZgemm_v2"};

struct call {
	int door;
	long n;
	const double complex *a, *b;
	double complex *c;
	cudaStream_t stream;
	cublasHandle_t handle;
};

/* C = A B through `door`, on the call's stream, at F64 (the interposer's default for Z) */
static void multiply(const struct call *x) {
	const double complex one = 1, zero = 0;
	int n = (int)x->n;
	if (x->door == CUBLAS) {
		CHECK(cublasSetStream(x->handle, x->stream));
		CHECK(cublasZgemm(x->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, (const cuDoubleComplex *)&one, (const cuDoubleComplex *)x->a, n,
		                  (const cuDoubleComplex *)x->b, n, (const cuDoubleComplex *)&zero, (cuDoubleComplex *)x->c, n));
		return;
	}
	__typeof__(emugemm_zgemm) *f = (__typeof__(emugemm_zgemm) *)dlsym(RTLD_DEFAULT, "emugemm_zgemm");
	emugemm_precision f64 = {EMUGEMM_PRECISION_KIND_F64, 0};
	CHECK(f(EMUGEMM_OPERATION_N, EMUGEMM_OPERATION_N, n, n, n, (const emugemm_complex64 *)&one, (const emugemm_complex64 *)x->a, n,
	        (const emugemm_complex64 *)x->b, n, (const emugemm_complex64 *)&zero, (emugemm_complex64 *)x->c, n, EMUGEMM_POINTER_MODE_HOST,
	        x->stream, f64));
}

/* the calling thread's last report of the C ABI */
static emugemm_report last_report(void) {
	__typeof__(emugemm_last_report) *f = (__typeof__(emugemm_last_report) *)dlsym(RTLD_DEFAULT, "emugemm_last_report");
	emugemm_report r;
	memset(&r, 0, sizeof r);
	CHECK(f(&r));
	return r;
}

/* ---- the capturing thread ---- */

/* a thread that captures one call into a graph, then, on each request, reads its last report */
struct capturer {
	struct call call;
	enum cudaStreamCaptureMode mode;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	sem_t asked, answered;
	int done;
	emugemm_report report;
};

static void *capturing(void *arg) {
	struct capturer *k = arg;
	cublasHandle_t handle;
	CHECK(cublasCreate(&handle));
	k->call.handle = handle;
	CHECK(cudaStreamBeginCapture(k->call.stream, k->mode));
	multiply(&k->call);
	CHECK(cudaStreamEndCapture(k->call.stream, &k->graph));
	CHECK(cudaGraphInstantiate(&k->exec, k->graph, 0));
	sem_post(&k->answered);
	for (;;) {
		sem_wait(&k->asked);
		if (k->done) break;
		k->report = last_report();
		sem_post(&k->answered);
	}
	cublasDestroy(handle);
	return 0;
}

/* ---- the checks ---- */

static int same_plan(const emugemm_report *x, const emugemm_report *y) {
	return x->scheme == y->scheme && x->parameter == y->parameter && x->native_rows == y->native_rows &&
	       x->nonfinite_entries == y->nonfinite_entries && !strcmp((const char *)x->tier, (const char *)y->tier);
}

static int as_expected(int kind, const emugemm_report *r) {
	switch (kind) {
	case NARROW: return r->scheme == EMUGEMM_SCHEME_SCHEME_II && r->nonfinite_entries == 0;
	case WIDE: return r->scheme == EMUGEMM_SCHEME_NATIVE;
	default: return r->scheme == EMUGEMM_SCHEME_SCHEME_II && r->nonfinite_entries > 0;
	}
}

static const char *scheme_name(const emugemm_report *r) {
	return r->scheme == EMUGEMM_SCHEME_SCHEME_II ? "scheme2" : r->scheme == EMUGEMM_SCHEME_SCHEME_I ? "scheme1" : "native";
}

/* the schemes of the replays of cuBLAS calls, in order, as the reports gave them */
static const char *replayed_schemes[64];
static int replays_of_cublas;

/* the replay lines of cublasZgemm_v2 in the interposer's log, each scheme into `schemes` (up to
 * `most`): how many there are */
static int replay_lines(const char *path, const char **schemes, int most) {
	static const char *const names[3] = {"scheme2", "scheme1", "native"};
	FILE *log = fopen(path, "r");
	if (!log) return 0;
	char line[4096];
	int seen = 0;
	while (fgets(line, sizeof line, log)) {
		if (!strstr(line, "\"routine\":\"cublasZgemm_v2\"") || !strstr(line, "\"replay\":")) continue;
		const char *scheme = "?";
		for (int i = 0; i < 3; i++) {
			char key[48];
			snprintf(key, sizeof key, "\"scheme\":\"%s\"", names[i]);
			if (strstr(line, key)) scheme = names[i];
		}
		if (seen < most) schemes[seen] = scheme;
		seen++;
	}
	fclose(log);
	return seen;
}

/* the interposer's log holds one line per replay of a cuBLAS call, in order, each with the scheme
 * its report gave (the log's thread writes them soon after each replay: waited for up to five
 * seconds) */
static void check_log(int expected) {
	const char *path = getenv("EMUGEMM_HOOK_LOG");
	const char *logged[64];
	int seen = 0;
	for (int tries = 0; path && tries < 50 && seen < expected; tries++) {
		if (tries) usleep(100000);
		seen = replay_lines(path, logged, 64);
	}
	char what[128];
	snprintf(what, sizeof what, "log: %d replay lines of cublasZgemm_v2, for %d replays (EMUGEMM_HOOK_LOG set)", seen, expected);
	expect(path && seen == expected, what);
	for (int i = 0; i < seen && i < expected && i < 64; i++) {
		snprintf(what, sizeof what, "log: replay %d: %s, its report %s", i + 1, logged[i], replayed_schemes[i]);
		expect(!strcmp(logged[i], replayed_schemes[i]), what);
	}
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 6144;
	if (!dlsym(RTLD_DEFAULT, "emugemm_zgemm")) {
		fprintf(stderr, "run under LD_PRELOAD=libemugemm_cublas.so\n");
		return 2;
	}
	size_t bytes = sizeof(double complex) * n * n;
	double complex *host[KINDS][2];
	host[NARROW][0] = random_matrix(n, 0.5, 1), host[NARROW][1] = random_matrix(n, 0.5, 2);
	host[WIDE][0] = random_matrix(n, 8, 3), host[WIDE][1] = random_matrix(n, 8, 4);
	host[NONFINITE][0] = random_matrix(n, 0.5, 5), host[NONFINITE][1] = random_matrix(n, 0.5, 6);
	host[NONFINITE][0][3 + 5 * n] = NAN;
	host[NONFINITE][1][7 + 11 * n] = INFINITY;
	double complex *da, *db, *dc, *reference;
	CHECK(cudaMalloc((void **)&da, bytes));
	CHECK(cudaMalloc((void **)&db, bytes));
	CHECK(cudaMalloc((void **)&dc, bytes));
	CHECK(cudaMalloc((void **)&reference, bytes));
	cudaStream_t stream;
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	cublasHandle_t handle;
	CHECK(cublasCreate(&handle));
	double complex *got = malloc(bytes), *expected = malloc(bytes);
	/* one call outside any capture first, as a program warms up before it captures: the library
	 * makes what replays its recorded products there (making it during a capture would end it) */
	CHECK(cudaMemcpy(da, host[NARROW][0], bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(db, host[NARROW][1], bytes, cudaMemcpyHostToDevice));
	struct call warm_up = {ABI, n, da, db, reference, stream, handle};
	multiply(&warm_up);
	CHECK(cudaStreamSynchronize(stream));
	const enum cudaStreamCaptureMode modes[2] = {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal};
	const char *const mode_names[2] = {"global", "thread-local"};
	for (int door = ABI; door <= CUBLAS; door++) {
		for (int m = 0; m < 2; m++) {
			struct capturer k = {.call = {door, n, da, db, dc, stream, 0}, .mode = modes[m]};
			sem_init(&k.asked, 0, 0), sem_init(&k.answered, 0, 0);
			pthread_t thread;
			pthread_create(&thread, 0, capturing, &k);
			sem_wait(&k.answered);
			for (int kind = 0; kind < KINDS; kind++) {
				char what[160];
				snprintf(what, sizeof what, "%s, %s capture, %s", door_names[door], mode_names[m], kind_names[kind]);
				CHECK(cudaMemcpyAsync(da, host[kind][0], bytes, cudaMemcpyHostToDevice, stream));
				CHECK(cudaMemcpyAsync(db, host[kind][1], bytes, cudaMemcpyHostToDevice, stream));
				CHECK(cudaGraphLaunch(k.exec, stream));
				CHECK(cudaStreamSynchronize(stream));
				sem_post(&k.asked), sem_wait(&k.answered);
				emugemm_report replay = k.report;
				CHECK(cudaMemcpy(got, dc, bytes, cudaMemcpyDeviceToHost));
				struct call uncaptured = {door, n, da, db, reference, stream, handle};
				multiply(&uncaptured);
				CHECK(cudaStreamSynchronize(stream));
				emugemm_report direct = last_report();
				CHECK(cudaMemcpy(expected, reference, bytes, cudaMemcpyDeviceToHost));
				int equal = memcmp(got, expected, bytes) == 0;
				printf("%s: replay %s%u, %lld native rows, %lld non-finite entries, tier %s; uncaptured %s%u; bits %s\n", what,
				       scheme_name(&replay), replay.parameter, (long long)replay.native_rows, (long long)replay.nonfinite_entries,
				       (const char *)replay.tier, scheme_name(&direct), direct.parameter, equal ? "equal" : "DIFFERENT");
				char message[220];
				snprintf(message, sizeof message, "%s: the plan its data calls for", what);
				expect(as_expected(kind, &replay), message);
				snprintf(message, sizeof message, "%s: the uncaptured call's plan", what);
				expect(same_plan(&replay, &direct), message);
				snprintf(message, sizeof message, "%s: the uncaptured call's bits", what);
				expect(equal, message);
				if (kind == NONFINITE) {
					snprintf(message, sizeof message, "%s: C's row 3 is NaN, its column 11 not finite", what);
					double complex row = got[3 + 20 * n], column = got[40 + 11 * n];
					expect(isnan(creal(row)) && !(isfinite(creal(column)) && isfinite(cimag(column))), message);
				}
				if (door == CUBLAS && replays_of_cublas < 64) replayed_schemes[replays_of_cublas++] = scheme_name(&replay);
			}
			k.done = 1;
			sem_post(&k.asked);
			pthread_join(thread, 0);
			cudaGraphExecDestroy(k.exec), cudaGraphDestroy(k.graph);
		}
	}
	check_log(replays_of_cublas);
	printf("%s: %d failures, %d replays\n", failed ? "FAILED" : "ok", failed, 4 * KINDS);
	return failed != 0;
}
