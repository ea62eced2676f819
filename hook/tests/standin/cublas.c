/*
 * A stand-in libcublas.so.VERSION for testing the interposer without a GPU: it exports the symbols
 * of symbols.h and cuBLAS's handle functions with cuBLAS's C signatures, computes nothing, never
 * dereferences a matrix, alpha or beta pointer, and records every call (its version, the function,
 * every argument as it arrived, the status it returned, and the stream and pointer mode its handle
 * had when it came) for the test to read back with standin_records.
 *
 * A handle is its own only if this library created it and has not destroyed it: the registry is
 * searched by address, so a handle of another library (another stand-in version, or garbage) is
 * never dereferenced, and is answered with CUBLAS_STATUS_NOT_INITIALIZED and a "foreign handle"
 * record.
 */
#include "symbols.h"

#include <pthread.h>
#include <stdlib.h>

#ifndef VERSION
#error "VERSION (the cuBLAS major version this library stands in for) must be defined"
#endif

#define SUCCESS 0
#define NOT_INITIALIZED 1
#define ALLOC_FAILED 3
#define INVALID_VALUE 7

/* "STAN" */
#define MAGIC 0x5354414eu

struct handle {
	unsigned magic;
	int version;
	const void *stream;
	int mode;
	struct handle *next;
};

/* what a recorded call does to its handle, after the record is made */
enum action { COMPUTE, CREATE, DESTROY, SET_STREAM, GET_STREAM, SET_MODE, GET_MODE, GET_VERSION };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* guarded by lock: the live handles, the records, the status of the following computing calls */
static struct handle *handles;
static char *records;
static size_t records_len, records_cap;
static int forced_status = SUCCESS;

/* the link that holds `handle` in the registry, or NULL where it is not one of this library's */
static struct handle **find(const void *handle)
{
	for (struct handle **link = &handles; *link != NULL; link = &(*link)->next)
		if ((const void *)*link == handle)
			return (*link)->magic == MAGIC && (*link)->version == VERSION ? link : NULL;
	return NULL;
}

/* appends one line to the records; an allocation failure aborts, as the records would be wrong */
static void append(const char *line, size_t len)
{
	if (records_len + len + 1 > records_cap) {
		size_t cap = records_cap ? records_cap : 1 << 16;
		while (records_len + len + 1 > cap)
			cap *= 2;
		records = realloc(records, cap);
		if (records == NULL)
			abort();
		records_cap = cap;
	}
	memcpy(records + records_len, line, len);
	records_len += len;
	records[records_len++] = '\n';
}

/*
 * the one entry of every recorded function: records `name` on `handle` with its arguments
 * (`kinds`, `names`, `values` as standin_format takes them), applies `action` to an own handle
 * (values[0] is the argument of a handle function), and returns the status
 */
static int call(const char *name, void *handle, const char *kinds, const char *names, const long long *values,
		enum action action)
{
	char line[2048];
	int head = snprintf(line, sizeof line, "v%d ", VERSION);
	size_t at = (size_t)head + standin_format(line + head, sizeof line - (size_t)head, name, handle, kinds, names, values);
	if (at >= sizeof line)
		at = sizeof line - 1;
	pthread_mutex_lock(&lock);
	struct handle **link = find(handle);
	int status = link == NULL ? NOT_INITIALIZED : action == COMPUTE ? forced_status : SUCCESS;
	void *out = action == COMPUTE ? NULL : (void *)(intptr_t)values[0];
	if (link != NULL && (action == GET_STREAM || action == GET_MODE || action == GET_VERSION) && out == NULL)
		status = INVALID_VALUE;
	int tail;
	if (link == NULL)
		tail = snprintf(line + at, sizeof line - at, " | status=%d foreign handle", status);
	else
		tail = snprintf(line + at, sizeof line - at, " | status=%d stream=0x%llx mode=%d", status,
				(unsigned long long)(uintptr_t)(*link)->stream, (*link)->mode);
	at = at + (size_t)tail < sizeof line ? at + (size_t)tail : sizeof line - 1;
	append(line, at);
	if (link != NULL && status == SUCCESS) {
		struct handle *own = *link;
		switch (action) {
		case COMPUTE:
		case CREATE:
			break;
		case DESTROY:
			*link = own->next;
			own->magic = 0;
			free(own);
			break;
		case SET_STREAM:
			own->stream = out;
			break;
		case GET_STREAM:
			*(const void **)out = own->stream;
			break;
		case SET_MODE:
			own->mode = (int)values[0];
			break;
		case GET_MODE:
			*(int *)out = own->mode;
			break;
		case GET_VERSION:
			/* cuBLAS's encoding, major * 10000 + minor * 100 + patch: VERSION.1.0 */
			*(int *)out = VERSION * 10000 + 100;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return status;
}

#define STANDIN_PACK(kind, name) , (long long)(intptr_t)(name)
#define DEFINE(sym, LIST, D)                                                                                          \
	int sym(void *handle LIST(STANDIN_PARAM, D))                                                                  \
	{                                                                                                             \
		const long long values[] = {0 LIST(STANDIN_PACK, D)};                                                 \
		return call(#sym, handle, STANDIN_KINDS(LIST, D), STANDIN_NAMES(LIST, D), values + 1, COMPUTE);        \
	}
STANDIN_SYMBOLS(DEFINE)

int cublasCreate_v2(void **handle)
{
	if (handle == NULL)
		return INVALID_VALUE;
	struct handle *own = calloc(1, sizeof *own);
	if (own == NULL)
		return ALLOC_FAILED;
	own->magic = MAGIC;
	own->version = VERSION;
	pthread_mutex_lock(&lock);
	own->next = handles;
	handles = own;
	pthread_mutex_unlock(&lock);
	*handle = own;
	const long long none = 0;
	return call("cublasCreate_v2", own, "", "", &none, CREATE);
}

/* the handle functions: the argument after the handle, and what is done with it */
#define HANDLE_FUNCTION(sym, type, arg, kind, action)                                                                 \
	int sym(void *handle, type arg)                                                                               \
	{                                                                                                             \
		const long long value = (long long)(intptr_t)arg;                                                     \
		return call(#sym, handle, kind, " " #arg, &value, action);                                            \
	}
HANDLE_FUNCTION(cublasSetStream_v2, void *, streamId, "p", SET_STREAM)
HANDLE_FUNCTION(cublasGetStream_v2, void **, streamId, "p", GET_STREAM)
HANDLE_FUNCTION(cublasSetPointerMode_v2, int, mode, "d", SET_MODE)
HANDLE_FUNCTION(cublasGetPointerMode_v2, int *, mode, "p", GET_MODE)
HANDLE_FUNCTION(cublasGetVersion_v2, int *, version, "p", GET_VERSION)

int cublasDestroy_v2(void *handle)
{
	const long long none = 0;
	return call("cublasDestroy_v2", handle, "", "", &none, DESTROY);
}

size_t standin_records(char *buf, size_t len)
{
	pthread_mutex_lock(&lock);
	size_t all = records_len;
	if (buf != NULL && len > 0) {
		size_t copied = all < len - 1 ? all : len - 1;
		if (copied > 0)
			memcpy(buf, records, copied);
		buf[copied] = '\0';
	}
	pthread_mutex_unlock(&lock);
	return all;
}

void standin_clear(void)
{
	pthread_mutex_lock(&lock);
	records_len = 0;
	pthread_mutex_unlock(&lock);
}

void standin_set_status(int status)
{
	pthread_mutex_lock(&lock);
	forced_status = status;
	pthread_mutex_unlock(&lock);
}

int standin_version(void)
{
	return VERSION;
}
