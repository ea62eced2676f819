/* CHECK(x): a CUDA, cuBLAS or emugemm call that must return 0; otherwise the program says which and
 * exits with status 2 (a broken setup, not a failed check) */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                    \
	do {                                                                                            \
		if ((x) != 0) {                                                                             \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                          \
			exit(2);                                                                                \
		}                                                                                           \
	} while (0)

#endif
