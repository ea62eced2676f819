/*
 * The driver of the stand-in tests: loads caller libraries (libcallerN.so, beside this program) with
 * dlopen(RTLD_NOW | RTLD_LOCAL), so that each one's libcublas.so.N lives in a local scope as
 * PyTorch's does, and runs the scenario argv[1]. It is not linked against any libcublas.
 *
 * Output, one fact a line, for the Rust test (hook/tests/standin.rs) to parse:
 *   pid P                       this process
 *   handle vN 0xH stream=0xS    a handle of libcublas.so.N and the stream set on it
 *   label L                     what the following call tests
 *   sent vN <call>              a call about to be made through libcallerN.so, as the stand-in
 *                               formats its record ("name handle=0x.. arg=value ...")
 *   returned S                  the status the call returned
 *   record <line>               a line the stand-ins recorded since the last "record" lines
 *   threads ... / missing ... / unexpected ...   the threads scenario's own comparison
 *   symbol NAME intercepted|not-intercepted      the symbols scenario's list of symbols.h
 *   done                        the scenario ran to its end
 */
#define _GNU_SOURCE
#include "symbols.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static const struct standin_symbol symbols[] = {STANDIN_SYMBOLS(STANDIN_ENTRY)};
#define SYMBOLS (sizeof symbols / sizeof symbols[0])
/* a call's text, sent or recorded */
#define LINE 1024

/* a loaded caller library and its exported functions */
struct lib {
	int version;
	int (*call)(const char *name, void *handle, const long long *args);
	int (*create)(void **handle);
	int (*set_stream)(void *handle, void *stream);
	size_t (*records)(char *buf, size_t len);
	void (*clear)(void);
	void (*set_status)(int status);
};
static struct lib libs[3];
static int loaded;

static void fail(const char *what, const char *detail)
{
	printf("error %s %s\n", what, detail ? detail : "");
	exit(2);
}

/* libcallerN.so, from the folder of this program */
static struct lib *load(int version)
{
	char path[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
	if (len < 0)
		fail("readlink", "/proc/self/exe");
	path[len] = '\0';
	char *slash = strrchr(path, '/');
	snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "libcaller%d.so", version);
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL)
		fail("dlopen", dlerror());
	struct lib *lib = &libs[loaded++];
	lib->version = version;
#define LOAD(target, name)                                                                                             \
	do {                                                                                                          \
		void *address = dlsym(dl, name);                                                                      \
		if (address == NULL)                                                                                  \
			fail("dlsym", name);                                                                          \
		memcpy(&(target), &address, sizeof address);                                                            \
	} while (0)
	LOAD(lib->call, "caller_call");
	LOAD(lib->create, "caller_create");
	LOAD(lib->set_stream, "caller_set_stream");
	LOAD(lib->records, "caller_records");
	LOAD(lib->clear, "caller_clear");
	LOAD(lib->set_status, "caller_set_status");
	int (*version_of)(void);
	LOAD(version_of, "caller_version");
	if (version_of() != version)
		fail("version", path);
	return lib;
}

/* every stand-in's records since the last call, as "record" lines, then forgotten */
static void print_records(void)
{
	for (int i = 0; i < loaded; i++) {
		size_t len = libs[i].records(NULL, 0);
		char *text = malloc(len + 1);
		if (text == NULL)
			fail("malloc", "records");
		libs[i].records(text, len + 1);
		libs[i].clear();
		for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"))
			printf("record %s\n", line);
		free(text);
	}
	fflush(stdout);
}

/* the arguments of a call, named as in symbols.h; each symbol takes those of its list */
#define ARG_FIELDS(F)                                                                                                 \
	F(transa) F(transb) F(uplo) F(trans) F(side) F(diag) F(m) F(n) F(k) F(lda) F(ldb) F(ldc) F(strideA) F(strideB) \
		F(strideC) F(batchCount) F(alpha) F(A) F(B) F(beta) F(C) F(Atype) F(Btype) F(Ctype) F(computeType)    \
			F(algo)
#define DECLARE_FIELD(name) long long name;
struct args {
	ARG_FIELDS(DECLARE_FIELD)
};
#define FIELD_ENTRY(name) {#name, offsetof(struct args, name)},
static const struct {
	const char *name;
	size_t offset;
} fields[] = {ARG_FIELDS(FIELD_ENTRY){"Aarray", offsetof(struct args, A)},
	      {"Barray", offsetof(struct args, B)},
	      {"Carray", offsetof(struct args, C)}};

/* the field of `a` named by the `len` bytes at `name` */
static long long *field(struct args *a, const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (strlen(fields[i].name) == len && strncmp(fields[i].name, name, len) == 0)
			return (long long *)((char *)a + fields[i].offset);
	fail("no argument named", name);
	return NULL;
}

/*
 * valid arguments of an m x n x k product (n x k for a rank-k update, m x n for a TRSM) with every
 * op N, leading dimensions and strides above what any symbol needs, three products per batch, and
 * fake device addresses from `base` (16-byte aligned, distinct per call); 64F types for the Ex calls
 */
static struct args valid(long long m, long long n, long long k, long long base)
{
	long long big = m > n ? (m > k ? m : k) : (n > k ? n : k);
	struct args a = {0};
	a.m = m, a.n = n, a.k = k;
	a.lda = big + 1, a.ldb = big + 2, a.ldc = big + 3;
	a.strideA = a.lda * big, a.strideB = a.ldb * big, a.strideC = a.ldc * big;
	a.batchCount = 3;
	/* alpha and beta in host memory, as the handle's pointer mode (host) says: the interposer reads
	 * alpha to know whether A and B are read; room for a complex double each */
	static const double alpha[2] = {1.5, -0.5}, beta[2] = {0.25, 0.0};
	a.alpha = (long long)(intptr_t)alpha, a.beta = (long long)(intptr_t)beta;
	a.A = base + 0x10000, a.B = base + 0x20000, a.C = base + 0x30000;
	a.Atype = a.Btype = a.Ctype = 1; /* CUDA_R_64F */
	a.computeType = 70;		 /* CUBLAS_COMPUTE_64F */
	a.algo = -1;			 /* CUBLAS_GEMM_DEFAULT */
	return a;
}

/* different types for the three Ex routines: R_64F, C_64F, R_32F, each with its plain compute type */
static void ex_types(const char *name, struct args *a)
{
	long long type = 1, compute = 70;
	if (strstr(name, "StridedBatchedEx"))
		type = 0, compute = 68;
	else if (strstr(name, "BatchedEx"))
		type = 5;
	a->Atype = a->Btype = a->Ctype = type;
	a->computeType = compute;
}

static const struct standin_symbol *symbol(const char *name)
{
	for (size_t i = 0; i < SYMBOLS; i++)
		if (strcmp(symbols[i].name, name) == 0)
			return &symbols[i];
	fail("no symbol named", name);
	return NULL;
}

/* `name`'s arguments from `a`, in the order of its list, and the call as a record formats it */
static size_t arguments(const char *name, struct args *a, void *handle, long long *values, char *text, size_t len)
{
	const struct standin_symbol *s = symbol(name);
	const char *names = s->names;
	size_t count = 0;
	while (*(names += strspn(names, " ")) != '\0') {
		size_t width = strcspn(names, " ");
		values[count++] = *field(a, names, width);
		names += width;
	}
	standin_format(text, len, s->name, handle, s->kinds, s->names, values);
	return count;
}

/* one call of `name` through `lib`, its "label", "sent", "returned" and "record" lines */
static int run_call(struct lib *lib, void *handle, const char *label, const char *name, struct args *a)
{
	long long values[32];
	char text[LINE];
	arguments(name, a, handle, values, text, sizeof text);
	printf("label %s\nsent v%d %s\n", label, lib->version, text);
	/* before the call, so that a crash inside it shows which call it was */
	fflush(stdout);
	int status = lib->call(name, handle, values);
	printf("returned %d\n", status);
	print_records();
	return status;
}

/* a new handle of `lib` on the fake stream `stream` */
static void *new_handle(struct lib *lib, long long stream)
{
	void *handle = NULL;
	if (lib->create(&handle) != 0 || lib->set_stream(handle, (void *)(intptr_t)stream) != 0)
		fail("handle", "create or set stream");
	printf("handle v%d 0x%llx stream=0x%llx\n", lib->version, (unsigned long long)(uintptr_t)handle,
	       (unsigned long long)stream);
	print_records();
	return handle;
}

/* a call's fake addresses: 1 MiB apart */
static long long base(long long call)
{
	return 0x10000000 + call * 0x100000;
}

/* every symbol below and above the threshold, a GemmEx of a type not emulated, and the TRSM */
static void forward_all(void)
{
	struct lib *lib = load(13);
	void *handle = new_handle(lib, 0x5eed0000);
	for (size_t i = 0; i < SYMBOLS; i++) {
		struct args a = valid(3, 5, 7, base(2 * (long long)i));
		ex_types(symbols[i].name, &a);
		run_call(lib, handle, "small", symbols[i].name, &a);
		if (i + 1 == SYMBOLS)
			break; /* cublasDtrsm_v2: not intercepted, no size matters */
		a = valid(300, 300, 300, base(2 * (long long)i + 1));
		ex_types(symbols[i].name, &a);
		run_call(lib, handle, "large", symbols[i].name, &a);
	}
	struct args a = valid(300, 300, 300, base(2 * (long long)SYMBOLS));
	a.Atype = a.Btype = a.Ctype = 2; /* CUDA_R_16F */
	a.computeType = 64;		 /* CUBLAS_COMPUTE_16F */
	run_call(lib, handle, "half", "cublasGemmEx", &a);
}

/* a few symbols of each family, the TRSM among them */
static const char *const some[] = {"cublasDgemm_v2",	    "cublasZgemm_v2_64",  "cublasSgemmStridedBatched",
				   "cublasCgemmBatched_64", "cublasGemmEx",	  "cublasGemmStridedBatchedEx_64",
				   "cublasDsyrk_v2",	    "cublasZherk_v2_64", "cublasDtrsm_v2"};
#define SOME (sizeof some / sizeof some[0])

/* `some` below and above the threshold through each of `count` libraries, alternating */
static void calls_through(struct lib **through, void **handles, int count)
{
	long long call = 0;
	for (size_t j = 0; j < SOME; j++)
		for (int large = 0; large < 2; large++)
			for (int l = 0; l < count; l++) {
				int which = (int)(j + (size_t)large + (size_t)l) % count;
				struct args a = large ? valid(300, 300, 300, base(call)) : valid(3, 5, 7, base(call));
				ex_types(some[j], &a);
				call++;
				run_call(through[which], handles[which], large ? "large" : "small", some[j], &a);
			}
}

static void two_versions(void)
{
	struct lib *through[2] = {load(12), load(13)};
	void *handles[2] = {new_handle(through[0], 0x12000000), new_handle(through[1], 0x13000000)};
	calls_through(through, handles, 2);
}

static void version14(void)
{
	struct lib *through[1] = {load(14)};
	void *handles[1] = {new_handle(through[0], 0x14000000)};
	calls_through(through, handles, 1);
}

#define WORKERS 8
#define CALLS 200
static const char *const mixed[] = {"cublasDgemm_v2",	      "cublasZgemm_v2_64", "cublasDgemmStridedBatched",
				    "cublasZgemmBatched",     "cublasDsyrk_v2",	   "cublasZherk_v2_64",
				    "cublasGemmStridedBatchedEx"};
#define MIXED (sizeof mixed / sizeof mixed[0])

struct worker {
	struct lib *lib;
	long long id;
	/* the records each call must leave, in the order made */
	char (*expected)[LINE];
	int failed;
};

/* one thread: its own handle and stream, CALLS calls with arguments of its own */
static void *work(void *arg)
{
	struct worker *w = arg;
	long long stream = 0x57000000 + w->id * 0x10000;
	void *handle = NULL;
	if (w->lib->create(&handle) != 0 || w->lib->set_stream(handle, (void *)(intptr_t)stream) != 0) {
		w->failed = CALLS;
		return NULL;
	}
	for (long long i = 0; i < CALLS; i++) {
		const char *name = mixed[i % (long long)MIXED];
		long long size = i % 2 ? 300 : 3 + w->id;
		struct args a = valid(size, size + 1, size + 2, 0x100000000ll * (w->id + 1) + i * 0x100000);
		a.lda += w->id, a.ldb += 2 * w->id, a.ldc += 3 * w->id;
		ex_types(name, &a);
		long long values[32];
		/* room for the record's tail after the call */
		char text[LINE - 128];
		arguments(name, &a, handle, values, text, sizeof text);
		snprintf(w->expected[i], LINE, "v%d %s | status=0 stream=0x%llx mode=0", w->lib->version, text,
			 (unsigned long long)stream);
		if (w->lib->call(name, handle, values) != 0)
			w->failed++;
	}
	return NULL;
}

static int compare(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* whether a record is of a handle function (the interposer may read a handle's stream) */
static int handle_function(const char *record)
{
	const char *name = strchr(record, ' ');
	name = name ? name + 1 : record;
	return !strncmp(name, "cublasGet", 9) || !strncmp(name, "cublasSet", 9) || !strncmp(name, "cublasCreate", 12) ||
	       !strncmp(name, "cublasDestroy", 13);
}

/* WORKERS threads at once through libcaller13; every call's record against what it sent */
static void threads(void)
{
	struct lib *lib = load(13);
	static char expected[WORKERS * CALLS][LINE];
	struct worker workers[WORKERS];
	pthread_t ids[WORKERS];
	for (int t = 0; t < WORKERS; t++) {
		workers[t] = (struct worker){lib, t, &expected[t * CALLS], 0};
		if (pthread_create(&ids[t], NULL, work, &workers[t]) != 0)
			fail("pthread_create", "");
	}
	int failed = 0;
	for (int t = 0; t < WORKERS; t++) {
		pthread_join(ids[t], NULL);
		failed += workers[t].failed;
	}
	size_t len = lib->records(NULL, 0);
	char *text = malloc(len + 1);
	const char **got = malloc(sizeof *got * (len / 2 + 1));
	const char **want = malloc(sizeof *want * WORKERS * CALLS);
	if (text == NULL || got == NULL || want == NULL)
		fail("malloc", "threads");
	lib->records(text, len + 1);
	size_t records = 0, foreign = 0;
	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		foreign += strstr(line, "foreign handle") != NULL;
		if (!handle_function(line))
			got[records++] = line;
	}
	for (size_t i = 0; i < WORKERS * CALLS; i++)
		want[i] = expected[i];
	qsort(got, records, sizeof *got, compare);
	qsort(want, WORKERS * CALLS, sizeof *want, compare);
	size_t matched = 0, g = 0, w = 0, shown = 0;
	while (g < records || w < WORKERS * CALLS) {
		int order = g == records ? 1 : w == WORKERS * CALLS ? -1 : strcmp(got[g], want[w]);
		if (order == 0)
			matched++, g++, w++;
		else if (order < 0 && shown++ < 10)
			printf("unexpected %s\n", got[g++]);
		else if (order > 0 && shown++ < 10)
			printf("missing %s\n", want[w++]);
		else
			order < 0 ? g++ : w++;
	}
	printf("threads workers=%d calls=%d failed=%d records=%zu matched=%zu foreign=%zu\n", WORKERS, WORKERS * CALLS,
	       failed, records, matched, foreign);
	free(text), free(got), free(want);
}

/* bad arguments, each at a size above the threshold and otherwise valid; the stand-in answers 7 */
static void bad_input(void)
{
	static const struct {
		const char *label, *name, *field;
		long long value;
	} cases[] = {
		{"negative-m", "cublasDgemm_v2", "m", -1},
		{"negative-n", "cublasZgemm_v2_64", "n", -5},
		{"lda-below-rows", "cublasDgemm_v2", "lda", 299},
		{"ldc-below-rows", "cublasSgemmStridedBatched", "ldc", 299},
		{"ldb-below-rows", "cublasGemmEx", "ldb", 299},
		{"op-conjg", "cublasZgemm_v2", "transa", 3},
		{"op-conjg", "cublasCgemmBatched_64", "transb", 3},
		{"op-out-of-range", "cublasDgemm_v2", "transa", 7},
		{"syrk-uplo-full", "cublasDsyrk_v2", "uplo", 2},
		{"herk-trans-t", "cublasZherk_v2", "trans", 1},
		{"herk-trans-t", "cublasCherk_v2_64", "trans", 1},
		{"negative-batch", "cublasDgemmStridedBatched", "batchCount", -1},
		{"negative-batch", "cublasZgemmBatched_64", "batchCount", -1},
		{"empty-batch", "cublasDgemmBatched", "batchCount", 0},
		{"empty-batch", "cublasGemmStridedBatchedEx", "batchCount", 0},
		{"null-alpha", "cublasDgemm_v2", "alpha", 0},
		{"null-alpha", "cublasZherk_v2", "alpha", 0},
		{"null-a", "cublasDgemm_v2", "A", 0},
		{"null-a", "cublasZgemmStridedBatched", "A", 0},
	};
	struct lib *lib = load(13);
	void *handle = new_handle(lib, 0xbad00000);
	lib->set_status(7); /* CUBLAS_STATUS_INVALID_VALUE */
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct args a = valid(300, 300, 300, base((long long)i));
		ex_types(cases[i].name, &a);
		*field(&a, cases[i].field, strlen(cases[i].field)) = cases[i].value;
		run_call(lib, handle, cases[i].label, cases[i].name, &a);
	}
}

/* the stand-in's status, whatever it is, below and above the threshold */
static void status(void)
{
	static const int statuses[] = {0, 7, 13, 14, 3, 8, 15, 16, 1};
	static const char *const names[] = {"cublasDgemm_v2", "cublasDgemm_v2", "cublasZgemmStridedBatched",
					    "cublasDsyrk_v2_64", "cublasGemmEx", "cublasDtrsm_v2"};
	struct lib *lib = load(13);
	void *handle = new_handle(lib, 0x5a000000);
	long long call = 0;
	for (size_t s = 0; s < sizeof statuses / sizeof statuses[0]; s++) {
		lib->set_status(statuses[s]);
		for (size_t j = 0; j < sizeof names / sizeof names[0]; j++, call++) {
			struct args a = j == 0 ? valid(3, 5, 7, base(call)) : valid(300, 300, 300, base(call));
			run_call(lib, handle, j == 0 ? "small" : "large", names[j], &a);
		}
	}
}

/* single NAME COUNT SIZE...: COUNT calls of NAME at m = n = k = SIZE, for each SIZE */
static void single(int argc, char **argv)
{
	if (argc < 5)
		fail("usage", "single NAME COUNT SIZE...");
	struct lib *lib = load(13);
	void *handle = new_handle(lib, 0x51000000);
	long long count = atoll(argv[3]), call = 0;
	for (int s = 4; s < argc; s++)
		for (long long i = 0; i < count; i++, call++) {
			long long size = atoll(argv[s]);
			struct args a = valid(size, size, size, base(call));
			ex_types(argv[2], &a);
			run_call(lib, handle, size < 256 ? "small" : "large", argv[2], &a);
		}
}

/* the symbols of symbols.h, the last of which the interposer does not export */
static void list_symbols(void)
{
	for (size_t i = 0; i < SYMBOLS; i++)
		printf("symbol %s %s\n", symbols[i].name, i + 1 < SYMBOLS ? "intercepted" : "not-intercepted");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", (int)getpid());
	const char *scenario = argc > 1 ? argv[1] : "";
	if (strcmp(scenario, "forward-all") == 0)
		forward_all();
	else if (strcmp(scenario, "two-versions") == 0)
		two_versions();
	else if (strcmp(scenario, "version14") == 0)
		version14();
	else if (strcmp(scenario, "threads") == 0)
		threads();
	else if (strcmp(scenario, "bad-input") == 0)
		bad_input();
	else if (strcmp(scenario, "status") == 0)
		status();
	else if (strcmp(scenario, "single") == 0)
		single(argc, argv);
	else if (strcmp(scenario, "symbols") == 0)
		list_symbols();
	else
		fail("unknown scenario", scenario);
	printf("done\n");
	return 0;
}
