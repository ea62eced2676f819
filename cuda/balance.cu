// emugemm: the exact inner-dimension balancing of an operand (src/balance.rs): the exponent range
// of the nonzero finite parts at each inner index h (inner_ranges), and a copy of the operand with
// every part at h times 2^(sign d_h) (balance), exact for the clamped shifts.
//
// an operand "row" r has elements x[r * rs + h * cs], h < k, as in cuda/stats.cu. An entry with a
// NaN or an infinity counts as zero in the ranges, as the CPU's operand stores it.
#include "common.cuh"

namespace {

// a block of inner_ranges: 32 inner indices by 8 warps over ROWS rows
constexpr int INNER = 32, LANES = 8, ROWS = 256;

// the exponent range of the nonzero finite parts of element `at` of x, merged into [lo, hi]
template <typename T>
__device__ __forceinline__ void merge_range(const T* x, long long at, int& hi, int& lo) {
	double part[2];
	emu::Elem<T>::load(x, at, part[0], part[1]);
	if (!(emu::finite(part[0]) && emu::finite(part[1]))) return;
	for (int q = 0; q < 2; ++q) {
		if (part[q] == 0.0) continue;
		const int e = emu::exponent(part[q]);
		hi = max(hi, e);
		lo = min(lo, e);
	}
}

// the loads coalesce along the operand's contiguous dimension: where the rows are contiguous
// (rs == 1, the rows of A), the 32 lanes of a warp take 32 consecutive rows of one inner index
// and reduce them by shuffles, each warp a quarter of the block's inner indices; otherwise (the
// columns of B, K contiguous) the lanes take 32 consecutive inner indices of one row
template <typename T>
__device__ void inner_ranges(const T* x, int rows, int k, long long rs, long long cs, int* out_max, int* out_min) {
	const int r_begin = blockIdx.y * ROWS, r_end = min(rows, (int)(blockIdx.y + 1) * ROWS);
	if (rs == 1) {
		for (int q = threadIdx.y; q < INNER; q += LANES) {
			const int h = blockIdx.x * INNER + q;
			if (h >= k) return;
			int hi = INT_MIN, lo = INT_MAX;
#pragma unroll 4
			for (int r = r_begin + threadIdx.x; r < r_end; r += 32) merge_range(x, (long long)r + (long long)h * cs, hi, lo);
			for (int offset = 16; offset > 0; offset /= 2) {
				hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
				lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
			}
			if (threadIdx.x == 0 && hi != INT_MIN) {
				atomicMax(out_max + h, hi);
				atomicMin(out_min + h, lo);
			}
		}
		return;
	}
	__shared__ int s_max[LANES][INNER], s_min[LANES][INNER];
	const int h = blockIdx.x * INNER + threadIdx.x;
	int hi = INT_MIN, lo = INT_MAX;
	for (int r = r_begin + threadIdx.y; h < k && r < r_end; r += LANES) merge_range(x, (long long)r * rs + (long long)h * cs, hi, lo);
	s_max[threadIdx.y][threadIdx.x] = hi;
	s_min[threadIdx.y][threadIdx.x] = lo;
	__syncthreads();
	if (threadIdx.y != 0 || h >= k) return;
	for (int y = 1; y < LANES; ++y) {
		hi = max(hi, s_max[y][threadIdx.x]);
		lo = min(lo, s_min[y][threadIdx.x]);
	}
	if (hi == INT_MIN) return;
	atomicMax(out_max + h, hi);
	atomicMin(out_min + h, lo);
}

// the copy keeps the layout every later step of the pipeline assumes of an operand: rows of A
// column-major (out_rs = 1, out_cs = rows), columns of B K-major (out_rs = k, out_cs = 1); the
// index runs along the copy's contiguous dimension, so that the stores coalesce
template <typename T>
__device__ void balance(const T* x, int rows, int k, long long rs, long long cs, const int* d, int sign, T* out, long long out_rs,
                        long long out_cs) {
	emu::for_each_copied(x, rows, k, rs, cs, out_rs, out_cs, [&](int h, double re, double im, long long at) {
		const int e = sign * d[h];
		emu::Elem<T>::store(out, at, emu::scale_pow2(re, e), emu::scale_pow2(im, e));
	});
}

}  // namespace

// out_max and out_min (k each) hold INT_MIN and INT_MAX before the launch; grid (ceil(k / 32),
// ceil(rows / 256)), block (32, 8)
#define EMU_BALANCE(NAME, T)                                                                                          \
	extern "C" __global__ void __launch_bounds__(INNER * LANES)                                                      \
	    inner_ranges_##NAME(const T* x, int rows, int k, long long rs, long long cs, int* out_max, int* out_min) {  \
		inner_ranges<T>(x, rows, k, rs, cs, out_max, out_min);                                                    \
	}                                                                                                               \
	extern "C" __global__ void __launch_bounds__(256) balance_##NAME(const T* x, int rows, int k, long long rs,     \
	                                                                 long long cs, const int* d, int sign, T* out,  \
	                                                                 long long out_rs, long long out_cs) {          \
		balance<T>(x, rows, k, rs, cs, d, sign, out, out_rs, out_cs);                                             \
	}
EMU_FOR_EACH_TYPE(EMU_BALANCE)
