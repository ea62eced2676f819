// emugemm: the integer side of the unfused pipeline's epilogues, elementwise over an m x n
// INT32 product (column-major, ld = m):
//   reduce_mod  scheme II: residue = sym_mod(c [+ previous residue], m)            (real)
//   reduce_3m   scheme II complex: Re = sym_mod(T1 - T2), Im = sym_mod(T3 - T1 - T2) (3M)
//   combine_3m  the same from the int8 residues R1, R2, R3 of T1, T2, T3 (the fused route in three
//               launches)
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

// plane l = blockIdx.y of R1 (at re), R2 (at im) and R3 (at r3), planes `stride` bytes apart (a
// multiple of 4; what lies past m n in a plane is combined too, harmlessly): Re = sym_mod(R1 - R2)
// over R1 and Im = sym_mod(R3 - R1 - R2) over R2, modulo moduli[l], 4 entries per thread
extern "C" __global__ void __launch_bounds__(256) combine_3m(signed char* re, signed char* im, const signed char* r3, long long stride,
                                                             const unsigned* moduli) {
	const unsigned m = moduli[blockIdx.y];
	const long long base = blockIdx.y * stride;
	for (long long w = blockIdx.x * 256ll + threadIdx.x; w < stride / 4; w += (long long)gridDim.x * 256) {
		char4* pr = (char4*)(re + base) + w;
		char4* pi = (char4*)(im + base) + w;
		const char4 a = *pr, b = *pi, c = ((const char4*)(r3 + base))[w];
		const auto real = [&](int x, int y) { return emu::sym_mod_exact((double)(x - y), m); };
		const auto imag = [&](int x, int y, int z) { return emu::sym_mod_exact((double)(z - x - y), m); };
		*pr = char4{real(a.x, b.x), real(a.y, b.y), real(a.z, b.z), real(a.w, b.w)};
		*pi = char4{imag(a.x, b.x, c.x), imag(a.y, b.y, c.y), imag(a.z, b.z, c.z), imag(a.w, b.w, c.w)};
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
