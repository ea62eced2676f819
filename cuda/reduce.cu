// emugemm: the integer side of the unfused pipeline's epilogues, elementwise over an m x n
// INT32 product (column-major, ld = m):
//   reduce_mod  scheme II: residue = sym_mod(c [+ previous residue], m)            (real)
//   reduce_3m   scheme II complex: Re = sym_mod(T1 - T2), Im = sym_mod(T3 - T1 - T2) (3M)
//   row_col_max accurate scaling: the largest bound product of each row and column
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) reduce_mod(const int* c, long long len, unsigned m, signed char* out, int accumulate) {
	for (long long i = blockIdx.x * 256ll + threadIdx.x; i < len; i += (long long)gridDim.x * 256) {
		long long v = c[i];
		if (accumulate) v += out[i];
		out[i] = emu::sym_mod_exact((double)v, m);
	}
}

extern "C" __global__ void __launch_bounds__(256) reduce_3m(const int* t1, const int* t2, const int* t3, long long len, unsigned m,
                                                            signed char* re, signed char* im, int accumulate) {
	for (long long i = blockIdx.x * 256ll + threadIdx.x; i < len; i += (long long)gridDim.x * 256) {
		long long a = t1[i], b = t2[i], c = t3[i];
		long long vr = a - b, vi = c - a - b;
		if (accumulate) { vr += re[i]; vi += im[i]; }
		re[i] = emu::sym_mod_exact((double)vr, m);
		im[i] = emu::sym_mod_exact((double)vi, m);
	}
}

// row_max and col_max must be zeroed before the launch
extern "C" __global__ void __launch_bounds__(256) row_col_max(const int* c, int m, int n, int* row_max, int* col_max) {
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < (long long)m * n; idx += (long long)gridDim.x * 256) {
		int v = c[idx];
		atomicMax(&row_max[idx % m], v);
		atomicMax(&col_max[idx / m], v);
	}
}
