// emugemm: per-row statistics of an operand (rows of A, columns of B), exactly as src/stats.rs
// computes them: largest magnitude, its exponent, the fast-scaling norm bound T, the median
// exponent distance ("spread"), and whether the row holds a NaN or an infinity.
//
// an operand "row" r has elements x[r * rs + h * cs], h < k. block (32, 32), 32 rows per block:
// when rs == 1 the 32 lanes of x span the 32 rows (coalesced along rows, threadIdx.y along k);
// otherwise they span k (coalesced along k), one warp per row. two passes over the row (the norm
// terms need the row's largest exponent); a block's 32 rows x k stay within L2 between them.
#include "common.cuh"

namespace {

constexpr int SPREAD_CAP = 127;

constexpr int LANES = 32, ROWS = 32;  // per block: lanes along k per row, rows

// the row (within the block) and the lane along k of this thread
struct Mapping {
	int row_local, lane;
	__device__ Mapping(bool rows_contiguous)
	    : row_local(rows_contiguous ? threadIdx.x : threadIdx.y), lane(rows_contiguous ? threadIdx.y : threadIdx.x) {}
};

__device__ __forceinline__ unsigned long long norm_term(double x, int e_max) {
	unsigned long long m = (emu::significand(x) >> 37) + 1;
	unsigned long long v = (m * m) << 2;
	unsigned shift = 2u * (unsigned)(e_max - emu::exponent(x));
	return shift >= 64 ? 1ull : (v + (1ull << shift) - 1) >> shift;
}

template <typename T>
__device__ void row_stats(const T* x, int rows, int k, long long rs, long long cs, double* amax_out, int* e_max_out,
                          unsigned long long* t_out, int* spread_out, int* nonfinite_out) {
	using E = emu::Elem<T>;
	__shared__ double s_amax[32][33];
	__shared__ int s_bad[32][33];
	__shared__ unsigned long long s_t[32];
	__shared__ unsigned s_hist[32][SPREAD_CAP + 1];
	__shared__ unsigned s_count[32];
	const Mapping map(rs == 1);
	const int row = blockIdx.x * ROWS + map.row_local;
	const bool live = row < rows;
	double amax = 0.0;
	int bad = 0;
#pragma unroll 4
	for (int h = map.lane; live && h < k; h += LANES) {
		double re, im;
		E::load(x, (long long)row * rs + (long long)h * cs, re, im);
		if (emu::finite(re) && emu::finite(im)) amax = fmax(amax, fmax(fabs(re), fabs(im)));
		else bad = 1;
	}
	s_amax[map.row_local][map.lane] = amax;
	s_bad[map.row_local][map.lane] = bad;
	for (int b = threadIdx.y * 32 + threadIdx.x; b < 32 * (SPREAD_CAP + 1); b += 1024) s_hist[b / (SPREAD_CAP + 1)][b % (SPREAD_CAP + 1)] = 0;
	if (threadIdx.y == 0) { s_t[threadIdx.x] = 0; s_count[threadIdx.x] = 0; }
	__syncthreads();
	if (map.lane == 0) {
		for (int l = 1; l < LANES; ++l) { amax = fmax(amax, s_amax[map.row_local][l]); bad |= s_bad[map.row_local][l]; }
		s_amax[map.row_local][0] = amax;
		s_bad[map.row_local][0] = bad;
	}
	__syncthreads();
	amax = s_amax[map.row_local][0];
	const int e_max = amax == 0.0 ? 0 : emu::exponent(amax);
	unsigned long long t = 0;
	unsigned count = 0;
#pragma unroll 2
	for (int h = map.lane; live && amax != 0.0 && h < k; h += LANES) {
		double part[2];
		E::load(x, (long long)row * rs + (long long)h * cs, part[0], part[1]);
		if (!(emu::finite(part[0]) && emu::finite(part[1]))) continue;
		for (int q = 0; q < 2; ++q) {
			if (part[q] == 0.0) continue;
			t += norm_term(part[q], e_max);
			int d = e_max - emu::exponent(part[q]);
			atomicAdd(&s_hist[map.row_local][d < SPREAD_CAP ? d : SPREAD_CAP], 1u);
			++count;
		}
	}
	atomicAdd(&s_t[map.row_local], t);
	atomicAdd(&s_count[map.row_local], count);
	__syncthreads();
	if (!live || map.lane != 0) return;
	amax_out[row] = amax;
	e_max_out[row] = e_max;
	t_out[row] = s_t[map.row_local];
	nonfinite_out[row] = s_bad[map.row_local][0];
	const unsigned n = s_count[map.row_local];
	int spread = -1;
	if (n > 0) {
		unsigned target = (n - 1) / 2, seen = 0;
		for (int d = 0; d <= SPREAD_CAP; ++d) {
			seen += s_hist[map.row_local][d];
			if (seen > target) { spread = d; break; }
		}
	}
	spread_out[row] = spread;
}

}  // namespace

#define EMU_STATS(NAME, T)                                                                                              \
	extern "C" __global__ void __launch_bounds__(1024) row_stats_##NAME(const T* x, int rows, int k, long long rs,        \
	                                                                   long long cs, double* amax, int* e_max,           \
	                                                                   unsigned long long* t, int* spread, int* nonfinite) { \
		row_stats<T>(x, rows, k, rs, cs, amax, e_max, t, spread, nonfinite);                                         \
	}
EMU_FOR_EACH_TYPE(EMU_STATS)
