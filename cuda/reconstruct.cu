// emugemm: the floating-point side of the unfused pipeline, elementwise over the m x n output
// (column-major dst with leading dimension ldd), each entry written as alpha c (+ old):
//   shift_reduce  scheme I: per K pass sum_s 2^-8s C_s (smallest weight first), passes added in
//                 order, scaled by 2^(16(p-1) - s_i - s_j)                          (src/cpu/scheme1.rs)
//   crt           scheme II: CRT of the p residues with split constants, scaled by 2^(-s_i - s_j)
//                 (Crt::reconstruct in src/scheme2.rs)
//   crt_remainders  the same for f64, and the values' remainders (Crt::reconstruct_pair), scaled
//                 alike, into rem (the separately scaled parts of complex products, cuda/parts.cu);
//                 its own entry point, so that the registers of crt stay free of them
//   native_fixup  entries whose row of A or column of B is non-finite: a plain sum of products,
//                 which carries the non-finite values a native product gives
// entries flagged by bad_rows[i] || bad_cols[j] are skipped by the first two and taken by the third.
#include "common.cuh"
#include "wgmma.cuh"

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

constexpr int CRT_MAX = 20;

// the CRT's constants (Crt in src/scheme2.rs), a kernel parameter passed by value (CrtParams in
// src/gpu/kernels/crt.rs, the same layout): the weights' split parts for the first p moduli, P split
// on the same grid, 1/P; the sums index the weights at compile time only, so that they come from
// the constant bank (no per-launch upload, no shared-memory copy)
struct CrtConstants {
	double hi[CRT_MAX], lo[CRT_MAX];
	double p_hi, p_lo, inv_p;
};
static_assert(sizeof(CrtConstants) == (2 * CRT_MAX + 3) * sizeof(double), "CrtParams in src/gpu/kernels/crt.rs has this layout");

// the CRT sums of one entry (Crt::reconstruct): sum hi_l c_l is exact (hence one fma per term, the
// same value as a multiplication and an addition), sum lo_l c_l is one fma per term, rounded term
// by term as the oracle rounds it
struct CrtSum {
	double hi = 0.0, lo = 0.0;
	__device__ void add(double w_hi, double w_lo, double c) {
		hi = __fma_rn(w_hi, c, hi);
		lo = __fma_rn(w_lo, c, lo);
	}
	// the value before the shifts' scaling, and its remainder: t + r = value + rem exactly
	__device__ double value(const CrtConstants& k, double& rem) const {
		double q = rint(__dmul_rn(hi, k.inv_p));
		double t = __fma_rn(-q, k.p_hi, hi);
		double r = __dsub_rn(lo, __dmul_rn(q, k.p_lo));
		return emu::two_sum(t, r, rem);
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
		emu::combine_store<emu::Sum::Emulated>(dst, i + (long long)j * ldd, re, im, ar, ai, accumulate);
	}
}

// the CRT, warp by warp over a persistent grid: a warp takes segments of CRT_SEGMENT = 128
// consecutive entries of the residue planes (column-major m x n, planes `stride` bytes apart), a
// fixed step apart; the warp's lanes copy the segment's p planes of 128 bytes (Re, and Im
// for complex) into the warp's own shared-memory stage with cp.async (16 bytes a copy), CRT_STAGES - 1
// segments ahead, so that many planes' bytes are in flight per SM without registers and without block
// barriers (only the warp reads its stages). Lane L then reconstructs entries L, L + 32, L + 64 and
// L + 96 of the segment (one signed byte per plane each) and stores them one by one: a warp's store
// writes 32 consecutive entries of a column (or wraps to the next), for any leading dimension
constexpr int CRT_SEGMENT = 128;
constexpr int CRT_WARPS = 8;
// cp.async stages per warp: three for real types, two for complex ones (whose stages are twice as
// large), so that CRT_BLOCKS blocks fit at 15 moduli
template <typename T>
constexpr int CRT_STAGES = emu::Elem<T>::complex ? 2 : 3;
// blocks per SM the registers are sized for (complex: two parts' sums)
template <typename T>
constexpr int CRT_BLOCKS = emu::Elem<T>::complex ? 3 : 4;

// a lane's share of bringing segments of the p planes (both parts) into a stage ([part][l][CRT_SEGMENT])
// by the warp: lane L copies the 16-byte pieces L % 8 of planes L / 8, L / 8 + 4, ..., as one
// cp.async group per segment (empty beyond the last segment), the copies past plane p predicated
// off (every lane runs the same instructions); pieces past the m n entries are zero-filled (one that
// starts before m n lies inside its plane: the plane stride is a multiple of 16)
template <int PARTS, int P>
struct CrtFetch {
	const signed char *re, *im;
	long long stride, mn, segments;
	// the rows of the output, and its triangle (TRIANGLE_LOWER, TRIANGLE_UPPER, or 0) from column
	// first_col on
	int m, triangle, first_col;

	// whether segment seg holds no entry of the triangle: its entries lie in one column, all
	// above (lower triangle) or all below (upper) the diagonal. Such a segment is neither fetched
	// nor reconstructed, its entries left as they are (a rank-k update's workspace, whose entries
	// off the triangle are not read)
	__device__ bool skips(long long seg) const {
		if (triangle == 0) return false;
		const long long first = seg * CRT_SEGMENT, last = first + CRT_SEGMENT - 1;
		const long long col = first / m;
		if (last / m != col || last >= mn) return false;
		const long long top = first - col * m, bottom = last - col * m, diagonal = first_col + col;
		return triangle == TRIANGLE_LOWER ? bottom < diagonal : top > diagonal;
	}

	__device__ void operator()(unsigned char* stage, long long seg) const {
		const int lane = threadIdx.x % 32, piece = 16 * (lane % 8), first = lane / 8;
		if (seg < segments && !skips(seg)) {
			const long long at = seg * CRT_SEGMENT + piece;
			const bool inside = at < mn;
			const long long from = (inside ? at : piece) + first * stride;
#pragma unroll
			for (int part = 0; part < PARTS; ++part) {
				const signed char* src = (part ? im : re) + from;
				unsigned char* dst = stage + (part * P + first) * CRT_SEGMENT + piece;
#pragma unroll
				for (int r = 0; r < CRT_MAX / 4; ++r)
					emu::hopper::async_copy16(dst + 4 * r * CRT_SEGMENT, src + 4 * r * stride, inside ? 16 : 0, first + 4 * r < P);
			}
		}
		emu::hopper::async_commit();
	}
};

// visit(v, inside, i, j) for each of a lane's 4 entries of a segment, rows i, i + 32, ... down the
// columns from (i, j); `inside`: the entry lies inside the m x n matrix (one past it is visited as (0, 0))
template <typename F>
__device__ __forceinline__ void crt_walk(int i, int j, int m, int n, F&& visit) {
#pragma unroll
	for (int v = 0; v < 4; ++v) {
		const bool inside = j < n;
		visit(v, inside, inside ? i : 0, inside ? j : 0);
		i += 32;
		while (i >= m) { i -= m; ++j; }
	}
}

// the shifts and flags of a lane's 4 entries: in the common case (all 4 in one column) as loaded,
// the loads issued before the sums and their values first used after them, so that the sums run
// while they are under way; otherwise combined at once (row + column, and flagged also when past
// the m n entries), the column's fields zero
struct CrtScaling {
	int row_shift[4], row_bad[4];
	int col_shift, col_bad;
	bool one_column;
};

// where the entries go, and with what scaling
template <typename T>
struct CrtOut {
	T* dst;
	long long ldd;
	const int *sa, *sb, *bad_rows, *bad_cols;
	double ar, ai;
	int accumulate;
	// crt_remainders: the remainders of the values (scaled alike, leading dimension ldd)
	double* rem;

	__device__ CrtScaling scaling(int i, int j, int m, int n) const {
		CrtScaling d;
		d.one_column = i + 3 * 32 < m && j < n;
		if (d.one_column) {
			d.col_shift = sb[j];
			d.col_bad = bad_cols[j];
#pragma unroll
			for (int v = 0; v < 4; ++v) {
				d.row_shift[v] = sa[i + 32 * v];
				d.row_bad[v] = bad_rows[i + 32 * v];
			}
			return d;
		}
		d.col_shift = d.col_bad = 0;
		crt_walk(i, j, m, n, [&](int v, bool inside, int r, int c) {
			d.row_shift[v] = sa[r] + sb[c];
			d.row_bad[v] = !inside | bad_rows[r] | bad_cols[c];
		});
		return d;
	}

	// the lane's entries from (i, j) on from their CRT values, scaled by 2^(-row shift - column
	// shift), and their remainders where asked; entries past the m n entries or with a flagged row
	// or column keep what they hold
	template <bool REM>
	__device__ void store(const CrtScaling& d, int i, int j, int m, int n, const double (&re)[4], const double (&im)[4],
	                      const double (&lo)[4]) const {
		long long at[4];
		if (d.one_column) {
			const long long first = i + (long long)j * ldd;
#pragma unroll
			for (int v = 0; v < 4; ++v) at[v] = first + 32 * v;
		} else {
			crt_walk(i, j, m, n, [&](int v, bool, int r, int c) { at[v] = r + (long long)c * ldd; });
		}
		T old[4] = {};
		if (accumulate)
#pragma unroll
			for (int v = 0; v < 4; ++v) old[v] = dst[at[v]];
		int e[4];
		bool normal = true;  // every 2^e a normal double: the scaling is one multiplication (scale_pow2)
#pragma unroll
		for (int v = 0; v < 4; ++v) {
			e[v] = -d.row_shift[v] - d.col_shift;
			normal &= (unsigned)(e[v] + 1022) <= 2045u;
		}
		const auto put = [&](int v, double cre, double cim, double clo) {
			const T x = emu::combined<emu::Sum::Emulated>(old[v], cre, cim, ar, ai, accumulate);
			if (!(d.row_bad[v] | d.col_bad)) {
				dst[at[v]] = x;
				if (REM) rem[at[v]] = clo;
			}
		};
		if (normal) {
#pragma unroll
			for (int v = 0; v < 4; ++v) {
				const double s = emu::pow2(e[v]);
				put(v, __dmul_rn(re[v], s), __dmul_rn(im[v], s), __dmul_rn(lo[v], s));
			}
		} else {
#pragma unroll
			for (int v = 0; v < 4; ++v) put(v, emu::scale_pow2(re[v], e[v]), emu::scale_pow2(im[v], e[v]), emu::scale_pow2(lo[v], e[v]));
		}
	}
};

// the dynamic shared memory of crt_entries (launch_crt in src/gpu/kernels/crt.rs sizes it): per warp
// CRT_STAGES<T> stages of the planes [part][l][CRT_SEGMENT]. P: the modulus count, at compile time
// (crt_entries picks the instance), so that the sums are unrolled whole and take their weights
// from the constant bank
template <typename T, bool REM, int P>
__device__ __forceinline__ void crt_entries_of(const signed char* res_re, const signed char* res_im, long long stride, int m, int n,
                               int2 triangle, const CrtConstants& k, const CrtOut<T>& out) {
	static_assert(!REM || !emu::Elem<T>::complex, "remainders of real products only");
	constexpr int p = P;
	constexpr int PARTS = emu::Elem<T>::complex ? 2 : 1, S = CRT_STAGES<T>;
	extern __shared__ __align__(16) unsigned char smem[];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int stage_bytes = PARTS * p * CRT_SEGMENT;
	unsigned char* stages = smem + warp * S * stage_bytes;
	const long long mn = (long long)m * n;
	const CrtFetch<PARTS, P> fetch{res_re, res_im, stride, mn, (mn + CRT_SEGMENT - 1) / CRT_SEGMENT, m, triangle.x, triangle.y};
	const long long step = (long long)gridDim.x * CRT_WARPS;
	long long seg = (long long)blockIdx.x * CRT_WARPS + warp;
	for (int s = 0; s < S - 1; ++s) fetch(stages + s * stage_bytes, seg + s * step);
	// the stages of segment seg (read) and of segment seg + (S - 1) step (written)
	unsigned char* const last = stages + (S - 1) * stage_bytes;
	unsigned char *read = stages, *written = last;
	// (i, j): the lane's first entry, seg CRT_SEGMENT + lane, advanced by (di, dj) per segment
	const long long advance = step * CRT_SEGMENT;
	const int di = (int)(advance % m);
	const int dj = (int)(advance / m);
	const long long start = seg * CRT_SEGMENT + lane;
	int i = (int)(start % m), j = (int)(start / m);
	for (; seg < fetch.segments; seg += step) {
		fetch(written, seg + (S - 1) * step);
		written = written == last ? stages : written + stage_bytes;
		// (the same for every lane of the warp; a skipped segment's cp.async group is empty, and
		// the next segment's wait counts the groups committed after its own)
		if (!fetch.skips(seg)) {
			const CrtScaling scaling = out.scaling(i, j, m, n);
			emu::hopper::async_wait<S - 1>();
			__syncwarp();  // every lane's pieces of this segment have landed
			const signed char* planes = (const signed char*)read + lane;
			CrtSum sum[PARTS][4];
#pragma unroll
			for (int part = 0; part < PARTS; ++part) {
#pragma unroll
				for (int l = 0; l < p; ++l) {
#pragma unroll
					for (int v = 0; v < 4; ++v) sum[part][v].add(k.hi[l], k.lo[l], (double)planes[(part * p + l) * CRT_SEGMENT + 32 * v]);
				}
			}
			__syncwarp();  // the stage is read: the next fetch may refill it
			double re[4], im[4], lo[4];
#pragma unroll
			for (int v = 0; v < 4; ++v) {
				re[v] = sum[0][v].value(k, lo[v]);
				im[v] = PARTS == 2 ? sum[PARTS - 1][v].value(k, lo[v]) : 0.0;
			}
			out.template store<REM>(scaling, i, j, m, n, re, im, lo);
		}
		read = read == last ? stages : read + stage_bytes;
		i += di;
		j += dj;
		if (i >= m) { i -= m; ++j; }
	}
	emu::hopper::async_wait<0>();
}

// the CRT over p = 2..CRT_MAX moduli (the cases below)
static_assert(CRT_MAX == 20, "crt_entries has one case per modulus count 2..20");
template <typename T, bool REM>
__device__ __forceinline__ void crt_entries(const signed char* res_re, const signed char* res_im, int p, long long stride, int m, int n,
                            int2 triangle, const CrtConstants& k, const CrtOut<T>& out) {
	switch (p) {
#define EMU_CRT_CASE(P) \
	case P: return crt_entries_of<T, REM, P>(res_re, res_im, stride, m, n, triangle, k, out);
		EMU_CRT_CASE(2) EMU_CRT_CASE(3) EMU_CRT_CASE(4) EMU_CRT_CASE(5) EMU_CRT_CASE(6) EMU_CRT_CASE(7) EMU_CRT_CASE(8)
		EMU_CRT_CASE(9) EMU_CRT_CASE(10) EMU_CRT_CASE(11) EMU_CRT_CASE(12) EMU_CRT_CASE(13) EMU_CRT_CASE(14)
		EMU_CRT_CASE(15) EMU_CRT_CASE(16) EMU_CRT_CASE(17) EMU_CRT_CASE(18) EMU_CRT_CASE(19) EMU_CRT_CASE(20)
#undef EMU_CRT_CASE
	}
}

template <typename T>
__device__ void native_fixup(const T* a, long long lda, const T* b, long long b_rs, long long b_cs, int m, int n, int k,
                             const int* bad_rows, const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {
	using E = emu::Elem<T>;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < (long long)m * n; idx += (long long)gridDim.x * 256) {
		int i = (int)(idx % m), j = (int)(idx / m);
		if (!(bad_rows[i] || bad_cols[j])) continue;
		double re = 0.0, im = 0.0;
		for (int h = 0; h < k; ++h) {
			double xr, xi, yr, yi;
			E::load(a, i + (long long)h * lda, xr, xi);
			E::load(b, (long long)j * b_rs + (long long)h * b_cs, yr, yi);
			re = __dadd_rn(re, __dsub_rn(__dmul_rn(xr, yr), E::complex ? __dmul_rn(xi, yi) : 0.0));
			if (E::complex) im = __dadd_rn(im, __dadd_rn(__dmul_rn(xr, yi), __dmul_rn(xi, yr)));
		}
		emu::combine_store<emu::Sum::Native>(dst, i + (long long)j * ldd, re, im, ar, ai, accumulate);
	}
}

}  // namespace

#define EMU_RECONSTRUCT(NAME, T)                                                                                           \
	extern "C" __global__ void __launch_bounds__(256) shift_reduce_##NAME(                                                 \
	    const int* acc_re, const int* acc_im, int p, int passes, int m, int n, const int* sa, const int* sb,                \
	    const int* bad_rows, const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {             \
		shift_reduce_entries<T>(acc_re, acc_im, p, passes, m, n, sa, sb, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate); \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256, CRT_BLOCKS<T>) crt_##NAME(                                           \
	    const signed char* res_re, const signed char* res_im, int p, long long stride, int m, int n, int triangle,          \
	    int first_col, const __grid_constant__ CrtConstants k, const int* sa, const int* sb, const int* bad_rows,           \
	    const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {                                \
		const CrtOut<T> out{dst, ldd, sa, sb, bad_rows, bad_cols, ar, ai, accumulate, nullptr};                        \
		crt_entries<T, false>(res_re, res_im, p, stride, m, n, make_int2(triangle, first_col), k, out);                   \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) native_fixup_##NAME(                                                 \
	    const T* a, long long lda, const T* b, long long b_rs, long long b_cs, int m, int n, int k, const int* bad_rows,     \
	    const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {                                 \
		native_fixup<T>(a, lda, b, b_rs, b_cs, m, n, k, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate);               \
	}
EMU_FOR_EACH_TYPE(EMU_RECONSTRUCT)

// crt for f64 with the remainders in rem (3 blocks per SM: the remainders' registers)
extern "C" __global__ void __launch_bounds__(256, 3)
    crt_remainders_f64(const signed char* res_re, const signed char* res_im, int p, long long stride, int m, int n,
                       int triangle, int first_col, const __grid_constant__ CrtConstants k, const int* sa, const int* sb,
                       const int* bad_rows, const int* bad_cols, double* dst, long long ldd, double ar, double ai,
                       int accumulate, double* rem) {
	const CrtOut<double> out{dst, ldd, sa, sb, bad_rows, bad_cols, ar, ai, accumulate, rem};
	crt_entries<double, true>(res_re, res_im, p, stride, m, n, make_int2(triangle, first_col), k, out);
}
