// emugemm: the integer side of the unfused pipeline's epilogues, elementwise over an m x n
// INT32 product (column-major, ld = m):
//   reduce_mod  scheme II: residue = sym_mod(c [+ previous residue], m)            (real)
//   reduce_3m   scheme II complex: Re = sym_mod(T1 - T2), Im = sym_mod(T3 - T1 - T2) (3M)
//   add_residues scheme II: acc = sym_mod(acc + add, m_l) over p residue planes of m n entries
//               (products split along K: the planes of one K range added to the others')
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

// sym_mod(x, m) for |x| <= 2m (the sum of two symmetric residues): one correction step
__device__ __forceinline__ int sym_sum(int x, int m) {
	if (x > (m - 1) / 2) x -= m;
	if (x < -(m / 2)) x += m;
	return x;
}

// plane l of acc and add (mn entries each) under modulus moduli[l]; 4 entries per thread (one
// 32-bit word of each plane) when mn % 4 == 0, else 1
template <int V>
__device__ void add_residue_planes(const signed char* add, signed char* acc, long long mn, int planes, const unsigned* moduli) {
	const long long words = mn / V;
	for (long long w = blockIdx.x * 256ll + threadIdx.x; w < words * planes; w += (long long)gridDim.x * 256) {
		const int m = (int)moduli[w / words];
		if constexpr (V == 4) {
			const unsigned a = ((const unsigned*)add)[w], b = ((unsigned*)acc)[w];
			int r[4];
#pragma unroll
			for (int j = 0; j < 4; ++j) r[j] = sym_sum((int)(signed char)(a >> 8 * j) + (int)(signed char)(b >> 8 * j), m);
			((unsigned*)acc)[w] = emu::pack4(r[0], r[1], r[2], r[3]);
		} else {
			acc[w] = (signed char)sym_sum((int)add[w] + (int)acc[w], m);
		}
	}
}

extern "C" __global__ void __launch_bounds__(256) add_residues(const signed char* add, signed char* acc, long long mn, int planes,
                                                               const unsigned* moduli) {
	if (mn % 4 == 0) add_residue_planes<4>(add, acc, mn, planes, moduli);
	else add_residue_planes<1>(add, acc, mn, planes, moduli);
}

// row_max and col_max must be zeroed before the launch
extern "C" __global__ void __launch_bounds__(256) row_col_max(const int* c, int m, int n, int* row_max, int* col_max) {
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < (long long)m * n; idx += (long long)gridDim.x * 256) {
		int v = c[idx];
		atomicMax(&row_max[idx % m], v);
		atomicMax(&col_max[idx / m], v);
	}
}
