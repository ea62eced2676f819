// emugemm: the floating-point side of the unfused pipeline, elementwise over the m x n output
// (column-major dst with leading dimension ldd), each entry written as alpha c (+ old):
//   shift_reduce  scheme I: per K pass sum_s 2^-8s C_s (smallest weight first), passes added in
//                 order, scaled by 2^(16(p-1) - s_i - s_j)                          (src/cpu/scheme1.rs)
//   crt           scheme II: CRT of the p residues with split constants, scaled by 2^(-s_i - s_j)
//                 (Crt::reconstruct in src/scheme2.rs)
//   native_fixup  entries whose row of A or column of B is non-finite: a plain sum of products,
//                 which carries the non-finite values a native product gives
// entries flagged by bad_rows[i] || bad_cols[j] are skipped by the first two and taken by the third.
#include "common.cuh"

namespace {

__device__ __forceinline__ double shift_reduce(const int* acc, long long stride, int p) {
	double v = (double)acc[(long long)(p - 1) * stride];
	for (int s = p - 2; s >= 0; --s) v = emu::shift_reduce_step(v, acc[(long long)s * stride]);
	return v;
}

// one part of a scheme I entry: passes of p accumulators each, plane stride m n
__device__ __forceinline__ double scheme1_part(const int* acc, long long idx, long long mn, int p, int passes, int e) {
	double v = shift_reduce(acc + idx, mn, p);
	for (int q = 1; q < passes; ++q) v = __dadd_rn(v, shift_reduce(acc + (long long)q * p * mn + idx, mn, p));
	return emu::scale_pow2(v, e);
}

struct CrtConstants {
	const double* hi;
	const double* lo;
	double p_hi, p_lo, inv_p;
};

constexpr int CRT_MAX = 20;

// the CRT sums of one entry (Crt::reconstruct): sum hi_l c_l is exact (hence one fma per term, the
// same value as a multiplication and an addition), sum lo_l c_l is one fma per term, rounded term
// by term as the oracle rounds it
struct CrtSum {
	double hi = 0.0, lo = 0.0;
	__device__ void add(double w_hi, double w_lo, double c) {
		hi = __fma_rn(w_hi, c, hi);
		lo = __fma_rn(w_lo, c, lo);
	}
	__device__ double value(const CrtConstants& k, int e) const {
		double q = rint(__dmul_rn(hi, k.inv_p));
		double t = __fma_rn(-q, k.p_hi, hi);
		double r = __dsub_rn(lo, __dmul_rn(q, k.p_lo));
		return emu::scale_pow2(__dadd_rn(t, r), e);
	}
};

template <typename T>
__device__ void shift_reduce_entries(const int* acc_re, const int* acc_im, int p, int passes, int m, int n, const int* sa, const int* sb,
                                     const int* bad_rows, const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {
	const long long mn = (long long)m * n;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < mn; idx += (long long)gridDim.x * 256) {
		int i = (int)(idx % m), j = (int)(idx / m);
		if (bad_rows[i] || bad_cols[j]) continue;
		int e = 16 * (p - 1) - sa[i] - sb[j];
		double re = scheme1_part(acc_re, idx, mn, p, passes, e);
		double im = acc_im ? scheme1_part(acc_im, idx, mn, p, passes, e) : 0.0;
		emu::combine_store(dst, i + (long long)j * ldd, re, im, ar, ai, accumulate);
	}
}

// V consecutive rows of one column per thread (V = 4 reads each residue plane as one 32-bit word
// per thread: m % 4 == 0); block (256) on 256 V rows of a column at a time, grid (row chunks,
// columns), both grid-strided. With V = 4 the values pass through shared memory, so that a warp
// stores 32 consecutive entries (a thread's own 4 are consecutive, 32 bytes apart from its
// neighbour's)
template <typename T, int V>
__device__ void crt_entries(const signed char* res_re, const signed char* res_im, int p, int m, int n, const CrtConstants& k,
                            const int* sa, const int* sb, const int* bad_rows, const int* bad_cols, T* dst, long long ldd, double ar,
                            double ai, int accumulate) {
	__shared__ double s_hi[CRT_MAX], s_lo[CRT_MAX];
	__shared__ double staged_re[V == 4 ? 256 * V : 1], staged_im[V == 4 ? 256 * V : 1];
	if (threadIdx.x < p) { s_hi[threadIdx.x] = k.hi[threadIdx.x]; s_lo[threadIdx.x] = k.lo[threadIdx.x]; }
	__syncthreads();
	const long long mn = (long long)m * n;
	const int chunks = (m + 256 * V - 1) / (256 * V);
	for (int j = blockIdx.y; j < n; j += gridDim.y) {
		if (bad_cols[j]) continue;
		for (int c = blockIdx.x; c < chunks; c += gridDim.x) {
			const int i0 = (c * 256 + threadIdx.x) * V;
			const long long at = (long long)j * m + i0;
			// the V residues of each plane, one per byte (top bits flipped for byte_as_double); the
			// loop is unrolled so that several planes' loads are in flight at once
			CrtSum re[V], im[V];
			if (i0 < m) {
#pragma unroll 5
				for (int l = 0; l < p; ++l) {
					const long long off = l * mn + at;
					unsigned wr = V == 4 ? *(const unsigned*)(res_re + off) : *(const unsigned char*)(res_re + off);
					unsigned wi = res_im ? (V == 4 ? *(const unsigned*)(res_im + off) : *(const unsigned char*)(res_im + off)) : 0u;
					wr ^= 0x80808080u;
					wi ^= 0x80808080u;
#pragma unroll
					for (int v = 0; v < V; ++v) {
						re[v].add(s_hi[l], s_lo[l], emu::byte_as_double(wr, v));
						if (res_im) im[v].add(s_hi[l], s_lo[l], emu::byte_as_double(wi, v));
					}
				}
			}
			if constexpr (V == 1) {
				if (i0 < m && !bad_rows[i0]) {
					const int e = -sa[i0] - sb[j];
					emu::combine_store(dst, i0 + (long long)j * ldd, re[0].value(k, e), res_im ? im[0].value(k, e) : 0.0, ar, ai, accumulate);
				}
			} else {
#pragma unroll
				for (int v = 0; v < V; ++v) {
					const int e = i0 < m ? -sa[i0 + v] - sb[j] : 0;
					staged_re[V * threadIdx.x + v] = re[v].value(k, e);
					staged_im[V * threadIdx.x + v] = res_im ? im[v].value(k, e) : 0.0;
				}
				__syncthreads();
#pragma unroll
				for (int q = 0; q < V; ++q) {
					const int i = c * 256 * V + 256 * q + threadIdx.x;
					if (i < m && !bad_rows[i])
						emu::combine_store(dst, i + (long long)j * ldd, staged_re[256 * q + threadIdx.x], staged_im[256 * q + threadIdx.x], ar, ai,
						                   accumulate);
				}
				__syncthreads();
			}
		}
	}
}

template <typename T>
__device__ void native_fixup(const T* a, long long lda, const T* b, long long ldb, int m, int n, int k, const int* bad_rows,
                             const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {
	using E = emu::Elem<T>;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < (long long)m * n; idx += (long long)gridDim.x * 256) {
		int i = (int)(idx % m), j = (int)(idx / m);
		if (!(bad_rows[i] || bad_cols[j])) continue;
		double re = 0.0, im = 0.0;
		for (int h = 0; h < k; ++h) {
			double xr, xi, yr, yi;
			E::load(a, i + (long long)h * lda, xr, xi);
			E::load(b, h + (long long)j * ldb, yr, yi);
			re = __dadd_rn(re, __dsub_rn(__dmul_rn(xr, yr), E::complex ? __dmul_rn(xi, yi) : 0.0));
			if (E::complex) im = __dadd_rn(im, __dadd_rn(__dmul_rn(xr, yi), __dmul_rn(xi, yr)));
		}
		emu::combine_store(dst, i + (long long)j * ldd, re, im, ar, ai, accumulate);
	}
}

}  // namespace

#define EMU_RECONSTRUCT(NAME, T)                                                                                           \
	extern "C" __global__ void __launch_bounds__(256) shift_reduce_##NAME(                                                 \
	    const int* acc_re, const int* acc_im, int p, int passes, int m, int n, const int* sa, const int* sb,                \
	    const int* bad_rows, const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {             \
		shift_reduce_entries<T>(acc_re, acc_im, p, passes, m, n, sa, sb, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate); \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) crt_##NAME(                                                          \
	    const signed char* res_re, const signed char* res_im, int p, int m, int n, const double* hi, const double* lo,     \
	    double p_hi, double p_lo, double inv_p, const int* sa, const int* sb, const int* bad_rows, const int* bad_cols,     \
	    T* dst, long long ldd, double ar, double ai, int accumulate) {                                                      \
		const CrtConstants k{hi, lo, p_hi, p_lo, inv_p};                                                                  \
		if (m % 4 == 0) crt_entries<T, 4>(res_re, res_im, p, m, n, k, sa, sb, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate); \
		else crt_entries<T, 1>(res_re, res_im, p, m, n, k, sa, sb, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate);        \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) native_fixup_##NAME(                                                 \
	    const T* a, long long lda, const T* b, long long ldb, int m, int n, int k, const int* bad_rows,                     \
	    const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {                                 \
		native_fixup<T>(a, lda, b, ldb, m, n, k, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate);                     \
	}
EMU_FOR_EACH_TYPE(EMU_RECONSTRUCT)
