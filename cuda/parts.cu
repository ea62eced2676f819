// emugemm: complex products as four real products of their parts, each part of the operands
// scaled on its own (Plan::separate_parts, src/cpu/parts.rs):
//   split_parts    the real and imaginary parts of a complex operand as two f64 operands, with
//                  the layout of `balance` (cuda/balance.cu); an entry with a NaN or an infinity
//                  becomes zero in both, as the CPU's operand stores it
//   combine_parts  the product's parts from the four real products P0 = Re A Re B, P1 = Im A Im B,
//                  P2 = Re A Im B, P3 = Im A Re B and their CRT remainders: Re = P0 - P1,
//                  Im = P2 + P3 by `combined` of src/cpu/parts.rs, then alpha and accumulation;
//                  entries flagged by bad_rows[i] || bad_cols[j] are left to native_fixup
#include "common.cuh"

namespace {

template <typename T>
__device__ void split_parts(const T* x, int rows, int k, long long rs, long long cs, double* re, double* im, long long out_rs,
                            long long out_cs) {
	emu::for_each_copied(x, rows, k, rs, cs, out_rs, out_cs, [&](int, double xr, double xi, long long at) {
		const bool finite = emu::finite(xr) && emu::finite(xi);
		re[at] = finite ? xr : 0.0;
		im[at] = finite ? xi : 0.0;
	});
}

// x + sign y for two products given with their remainders (x + xl, y + yl), rounded once
// (`combined` in src/cpu/parts.rs); an overflowing sum is the plain sum
__device__ __forceinline__ double combined(double x, double xl, double y, double yl, double sign) {
	double e;
	const double s = emu::two_sum(x, __dmul_rn(sign, y), e);
	if (!isfinite(s)) return s;
	return __dadd_rn(s, __dadd_rn(__dadd_rn(e, xl), __dmul_rn(sign, yl)));
}

// planes: the four products (m x n, column-major, leading dimension m), then their remainders
template <typename T>
__device__ void combine_parts(const double* planes, int m, int n, const int* bad_rows, const int* bad_cols, T* dst, long long ldd,
                              double ar, double ai, int accumulate) {
	const long long mn = (long long)m * n;
	const double* lo = planes + 4 * mn;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < mn; idx += (long long)gridDim.x * 256) {
		const int i = (int)(idx % m), j = (int)(idx / m);
		if (bad_rows[i] || bad_cols[j]) continue;
		const double re = combined(planes[idx], lo[idx], planes[mn + idx], lo[mn + idx], -1.0);
		const double im = combined(planes[2 * mn + idx], lo[2 * mn + idx], planes[3 * mn + idx], lo[3 * mn + idx], 1.0);
		emu::combine_store<emu::Sum::Emulated>(dst, i + (long long)j * ldd, re, im, ar, ai, accumulate);
	}
}

}  // namespace

#define EMU_PARTS(NAME, T)                                                                                             \
	extern "C" __global__ void __launch_bounds__(256) split_parts_##NAME(const T* x, int rows, int k, long long rs,     \
	                                                                     long long cs, double* re, double* im,          \
	                                                                     long long out_rs, long long out_cs) {          \
		split_parts<T>(x, rows, k, rs, cs, re, im, out_rs, out_cs);                                                  \
	}                                                                                                                  \
	extern "C" __global__ void __launch_bounds__(256)                                                                 \
	    combine_parts_##NAME(const double* planes, int m, int n, const int* bad_rows, const int* bad_cols, T* dst,      \
	                         long long ldd, double ar, double ai, int accumulate) {                                     \
		combine_parts<T>(planes, m, n, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate);                            \
	}
EMU_PARTS(c64, emu::c64)
EMU_PARTS(c32, emu::c32)
