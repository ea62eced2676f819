/*
 * A caller library, libcallerN.so, linked against the stand-in libcublas.so.N: the cuBLAS symbols
 * are referenced from here, as PyTorch's libtorch_cuda.so or a CuPy extension references its
 * libcublas, so that where the driver loads this library in a local scope (RTLD_LOCAL) the
 * dynamic linker binds them to the interposer (LD_PRELOAD, global scope) where it exports them and
 * to this library's own stand-in otherwise.
 */
#include "symbols.h"

#include <stdint.h>

/* one wrapper per symbol: its arguments, in the order of its list, from `args` */
#define UNPACK(kind, name) standin_##kind name = (standin_##kind)(intptr_t) * args++;
#define PASS(kind, name) , name
#define WRAPPER(sym, LIST, D)                                                                                         \
	static int call_##sym(void *handle, const long long *args)                                                    \
	{                                                                                                             \
		LIST(UNPACK, D)                                                                                       \
		return sym(handle LIST(PASS, D));                                                                     \
	}
STANDIN_SYMBOLS(WRAPPER)

#define WRAPPER_ENTRY(sym, LIST, D) {#sym, call_##sym},
static const struct {
	const char *name;
	int (*call)(void *handle, const long long *args);
} wrappers[] = {STANDIN_SYMBOLS(WRAPPER_ENTRY)};

int caller_call(const char *name, void *handle, const long long *args)
{
	for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
		if (strcmp(wrappers[i].name, name) == 0)
			return wrappers[i].call(handle, args);
	return -1;
}

int caller_create(void **handle)
{
	return cublasCreate_v2(handle);
}

int caller_destroy(void *handle)
{
	return cublasDestroy_v2(handle);
}

int caller_set_stream(void *handle, void *stream)
{
	return cublasSetStream_v2(handle, stream);
}

int caller_set_pointer_mode(void *handle, int mode)
{
	return cublasSetPointerMode_v2(handle, mode);
}

size_t caller_records(char *buf, size_t len)
{
	return standin_records(buf, len);
}

void caller_clear(void)
{
	standin_clear();
}

void caller_set_status(int status)
{
	standin_set_status(status);
}

int caller_version(void)
{
	return standin_version();
}
