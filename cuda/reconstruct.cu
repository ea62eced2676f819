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
	// the value before the shifts' scaling
	__device__ double value(const CrtConstants& k) const {
		double q = rint(__dmul_rn(hi, k.inv_p));
		double t = __fma_rn(-q, k.p_hi, hi);
		double r = __dsub_rn(lo, __dmul_rn(q, k.p_lo));
		return __dadd_rn(t, r);
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

// the CRT over a persistent grid of chunks of CRT_CHUNK consecutive entries of the residue planes
// (column-major m x n, planes `stride` bytes apart, stride and 16-byte alignment as the bulk copies
// need): thread 0 brings each chunk's p planes (Re, and Im for complex) into shared memory by bulk
// copies, CRT_STAGES - 1 chunks ahead, so that many planes' bytes are in flight per SM without
// holding registers. Each thread reconstructs 4 consecutive entries (one 32-bit word per plane) and stores
// them itself: with the output contiguous (ldd = m, m a multiple of 4, aligned) the 4 entries lie
// in one column, their row shifts and flags are one vector load each and the 4 results one vector
// store (a warp writes 32 x 4 consecutive entries); otherwise entry by entry
constexpr int CRT_CHUNK = 1024;
// bulk-copy stages: three for real types (two chunks in flight while one is summed), two for
// complex ones (whose stages are twice as large: three would leave room for 2 blocks per SM, not 3)
template <typename T>
constexpr int CRT_STAGES = emu::Elem<T>::complex ? 2 : 3;
// blocks per SM the registers are sized for (complex: two parts' sums; its stages allow 3 at 15 moduli)
template <typename T>
constexpr int CRT_BLOCKS = emu::Elem<T>::complex ? 3 : 4;

// where a thread's 4 consecutive entries go, and with what scaling: the chunk's first entry is
// (i0, j0), the thread's first entry (i, j) (a multiple of 4 in a contiguous output)
template <typename T>
struct CrtOut {
	T* dst;
	long long ldd;
	int m;
	const int *sa, *sb, *bad_rows, *bad_cols;
	double ar, ai;
	int accumulate;

	// 4 entries of one column, rows i..i+3, output contiguous and 4-entry aligned
	__device__ void store4(unsigned i, unsigned j, const double (&re)[4], const double (&im)[4]) const {
		using E = emu::Elem<T>;
		const int4 shift = *(const int4*)(sa + i), bad = *(const int4*)(bad_rows + i);
		const int col_shift = sb[j], col_bad = bad_cols[j];
		const int s[4] = {shift.x, shift.y, shift.z, shift.w}, b[4] = {bad.x, bad.y, bad.z, bad.w};
		struct alignas(4 * sizeof(T)) Four {
			T v[4];
		};
		Four* to = (Four*)(dst + i + (long long)j * ldd);
		Four out;
		if (accumulate) out = *to;
		bool all = !col_bad;
#pragma unroll
		for (int v = 0; v < 4; ++v) {
			const int e = -s[v] - col_shift;
			double cre = emu::scale_pow2(re[v], e), cim = E::complex ? emu::scale_pow2(im[v], e) : 0.0;
			emu::combine(&out.v[v], cre, cim, ar, ai, accumulate);
			all &= !b[v];
		}
		if (all) {
			*to = out;
		} else if (!col_bad) {
#pragma unroll
			for (int v = 0; v < 4; ++v)
				if (!b[v]) to->v[v] = out.v[v];
		}
	}

	// entry by entry: `count` entries from (i, j) down the columns
	__device__ void store_each(unsigned i, unsigned j, int count, const double (&re)[4], const double (&im)[4]) const {
#pragma unroll
		for (int v = 0; v < 4; ++v) {
			if (v >= count) break;
			while (i >= (unsigned)m) { i -= m; ++j; }
			if (!(bad_rows[i] | bad_cols[j])) {
				const int e = -sa[i] - sb[j];
				emu::combine_store(dst, i + (long long)j * ldd, emu::scale_pow2(re[v], e), emu::scale_pow2(im[v], e), ar, ai, accumulate);
			}
			++i;
		}
	}
};

// the dynamic shared memory of crt_entries (launch_crt in src/gpu/pipeline.rs sizes it):
// CRT_STAGES<T> stages of the planes [part][l][CRT_CHUNK] (parts x p4 x CRT_CHUNK bytes each, p4 = p
// rounded up to 4), the constants [CRT_MAX] {hi, lo} (zero beyond p), the stages' mbarriers
template <typename T>
__device__ void crt_entries(const signed char* res_re, const signed char* res_im, int p, long long stride, int m, int n,
                            const CrtConstants& k, const CrtOut<T>& out) {
	using namespace emu::hopper;
	constexpr int PARTS = emu::Elem<T>::complex ? 2 : 1;
	extern __shared__ __align__(128) unsigned char smem[];
	// the sums run over p4 planes, 4 at a time: the weights beyond p are zero, so whatever bytes
	// the planes beyond p hold (the next part's, or the stage's slack) add exactly nothing
	const int p4 = (p + 3) & ~3;
	const int stage_bytes = PARTS * p4 * CRT_CHUNK;
	double2* w = (double2*)(smem + CRT_STAGES<T> * stage_bytes);
	const uint32_t bars = smem_address(w + CRT_MAX);
	const int tid = threadIdx.x;
	if (tid < CRT_MAX) w[tid] = tid < p ? double2{k.hi[tid], k.lo[tid]} : double2{0.0, 0.0};
	if (tid == 0)
		for (int s = 0; s < CRT_STAGES<T>; ++s) bar_init(bars + 8 * s, 1);
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	__syncthreads();
	const long long mn = (long long)m * n, chunks = (mn + CRT_CHUNK - 1) / CRT_CHUNK;
	const auto plane = [&](int s, int part, int l) { return smem + s * stage_bytes + (part * p + l) * CRT_CHUNK; };
	// thread 0: the planes of chunk c into stage s
	const auto fetch = [&](long long c, int s) {
		if (c >= chunks) return;
		const long long start = c * CRT_CHUNK;
		const uint32_t bytes = ((uint32_t)min((long long)CRT_CHUNK, mn - start) + 15) & ~15u;
		bar_expect(bars + 8 * s, bytes * p * PARTS);
		for (int part = 0; part < PARTS; ++part)
			for (int l = 0; l < p; ++l)
				bulk_load(smem_address(plane(s, part, l)), (part ? res_im : res_re) + l * stride + start, bytes, bars + 8 * s);
	};
	if (tid == 0)
		for (int s = 0; s < CRT_STAGES<T>; ++s) fetch(blockIdx.x + (long long)s * gridDim.x, s);
	// vector stores: output contiguous, columns a multiple of 4 entries long, 4-entry aligned (and
	// the row shifts and flags 16-byte aligned)
	const bool contiguous = out.ldd == m && m % 4 == 0 && ((uintptr_t)out.dst & (4 * sizeof(T) - 1)) == 0 &&
	                        (((uintptr_t)out.sa | (uintptr_t)out.bad_rows) & 15) == 0;
	// (i0, j0): the entry the block's chunk starts at, advanced by a fixed step per chunk
	const long long step = (long long)gridDim.x * CRT_CHUNK;
	const int di = (int)(step % m), dj = (int)(step / m);
	int i0 = (int)((long long)blockIdx.x * CRT_CHUNK % m), j0 = (int)((long long)blockIdx.x * CRT_CHUNK / m);
	int it = 0;
	for (long long c = blockIdx.x; c < chunks; c += gridDim.x, ++it) {
		const int s = it % CRT_STAGES<T>;
		bar_wait(bars + 8 * s, (it / CRT_STAGES<T>) & 1);
		CrtSum sum[PARTS][4];
#pragma unroll
		for (int part = 0; part < PARTS; ++part) {
			const unsigned* words = (const unsigned*)plane(s, part, 0) + tid;
			for (int l0 = 0; l0 < p4; l0 += 4) {
#pragma unroll
				for (int l = l0; l < l0 + 4; ++l) {
					const unsigned word = words[l * (CRT_CHUNK / 4)] ^ 0x80808080u;
					const double2 wl = w[l];
#pragma unroll
					for (int v = 0; v < 4; ++v) sum[part][v].add(wl.x, wl.y, emu::byte_as_double(word, v));
				}
			}
		}
		__syncthreads();  // stage s read by every thread: refill it
		if (tid == 0) fetch(c + CRT_STAGES<T> * gridDim.x, s);
		double re[4], im[4];
#pragma unroll
		for (int v = 0; v < 4; ++v) {
			re[v] = sum[0][v].value(k);
			im[v] = PARTS == 2 ? sum[PARTS - 1][v].value(k) : 0.0;
		}
		// the thread's entries: 4 tid .. 4 tid + 3 of the chunk, from (i, j)
		const long long first = c * CRT_CHUNK + 4 * tid;
		unsigned i = i0 + 4 * tid, j = j0;
		while (i >= (unsigned)m) { i -= m; ++j; }
		if (contiguous && first + 4 <= mn)
			out.store4(i, j, re, im);
		else if (first < mn)
			out.store_each(i, j, (int)min(4ll, mn - first), re, im);
		i0 += di;
		j0 += dj;
		if (i0 >= m) { i0 -= m; ++j0; }
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
	extern "C" __global__ void __launch_bounds__(256, CRT_BLOCKS<T>) crt_##NAME(                                           \
	    const signed char* res_re, const signed char* res_im, int p, long long stride, int m, int n, const double* hi,       \
	    const double* lo, double p_hi, double p_lo, double inv_p, const int* sa, const int* sb, const int* bad_rows,         \
	    const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {                                 \
		const CrtConstants k{hi, lo, p_hi, p_lo, inv_p};                                                                  \
		const CrtOut<T> out{dst, ldd, m, sa, sb, bad_rows, bad_cols, ar, ai, accumulate};                                 \
		crt_entries<T>(res_re, res_im, p, stride, m, n, k, out);                                                          \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) native_fixup_##NAME(                                                 \
	    const T* a, long long lda, const T* b, long long ldb, int m, int n, int k, const int* bad_rows,                     \
	    const int* bad_cols, T* dst, long long ldd, double ar, double ai, int accumulate) {                                 \
		native_fixup<T>(a, lda, b, ldb, m, n, k, bad_rows, bad_cols, dst, ldd, ar, ai, accumulate);                     \
	}
EMU_FOR_EACH_TYPE(EMU_RECONSTRUCT)
