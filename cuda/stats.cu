// emugemm: per-row statistics of an operand (rows of A, columns of B), exactly as src/stats.rs
// computes them: largest magnitude, its exponent, the fast-scaling norm bound T, the L1 bound S
// (src/stats.rs `l1_term`), whether the row holds a NaN or an infinity, and per part the count of
// nonzero parts within WINDOW_SPAN binades of the largest (src/stats.rs `RowStats::window`).
//
// an operand "row" r has elements x[r * rs + h * cs], h < k. block (32, 32), 32 rows per block:
// when rs == 1 the 32 lanes of x span the 32 rows (coalesced along rows, threadIdx.y along k);
// otherwise they span k (coalesced along k), one warp per row. two passes over the row (the norm
// terms need the row's largest exponent); a block's 32 rows x k stay within L2 between them.
//
// one launch covers both operands of a product (the blocks of A, then those of B), so that their
// statistics come back in one download; two blocks of 1024 threads share a multiprocessor.
#include "common.cuh"

// one operand's statistics: its rows, and where they go (`StatsJob` in src/gpu/kernels/stats.rs, the
// same layout): seven arrays one after the other at `out`, largest magnitude (f64), norm bound
// (u64, 0 for a zero row), L1 bound (u64), exponent of the largest magnitude, non-finite flag,
// window counts of the real and of the imaginary parts (i32 each), `rows` entries each
struct StatsJob {
	const void* x;
	int rows, k;
	long long rs, cs;
	char* out;
};
static_assert(sizeof(StatsJob) == 40, "StatsJob must match src/gpu/kernels/stats.rs");

// the seven arrays of a StatsJob's output region of `rows` rows (the offsets of `StatsRegion` in
// src/gpu/kernels/stats.rs)
struct StatsArrays {
	char* out;
	long long rows;
	__device__ double* amax() const { return reinterpret_cast<double*>(out); }
	__device__ unsigned long long* t() const { return reinterpret_cast<unsigned long long*>(out + 8 * rows); }
	__device__ unsigned long long* l1() const { return reinterpret_cast<unsigned long long*>(out + 16 * rows); }
	__device__ int* e_max() const { return reinterpret_cast<int*>(out + 24 * rows); }
	__device__ int* nonfinite() const { return reinterpret_cast<int*>(out + 28 * rows); }
	__device__ int* window(int part) const { return reinterpret_cast<int*>(out + (32 + 4 * part) * rows); }
};

// src/stats.rs `WINDOW_SPAN`
constexpr int WINDOW_SPAN = 6;

namespace {

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

// src/stats.rs `l1_term`: |x| < l1_term(x, e_max) 2^(e_max - 15)
__device__ __forceinline__ unsigned long long l1_term(double x, int e_max) {
	unsigned long long m = (emu::significand(x) >> 37) + 1;
	unsigned shift = (unsigned)(e_max - emu::exponent(x));
	return shift >= 17 ? 1ull : (m + (1ull << shift) - 1) >> shift;
}

// the statistics of the 32 rows of `job` in block `block`
template <typename T>
__device__ void row_stats(const StatsJob& job, int block) {
	using E = emu::Elem<T>;
	const T* x = static_cast<const T*>(job.x);
	const int rows = job.rows, k = job.k;
	const long long rs = job.rs, cs = job.cs;
	const StatsArrays out{job.out, rows};
	__shared__ double s_amax[32][33];
	__shared__ int s_bad[32][33];
	__shared__ unsigned long long s_t[32], s_l1[32];
	__shared__ int s_window[32][2];
	const Mapping map(rs == 1);
	const int row = block * ROWS + map.row_local;
	const bool live = row < rows;
	double amax = 0.0;
	int bad = 0;
	// (unrolled, so that a thread has several loads in flight: the first pass is latency-bound
	// where few rows give few blocks)
#pragma unroll 4
	for (int h = map.lane; live && h < k; h += LANES) {
		double re, im;
		E::load(x, (long long)row * rs + (long long)h * cs, re, im);
		if (emu::finite(re) && emu::finite(im)) amax = fmax(amax, fmax(fabs(re), fabs(im)));
		else bad = 1;
	}
	s_amax[map.row_local][map.lane] = amax;
	s_bad[map.row_local][map.lane] = bad;
	if (threadIdx.y == 0) { s_t[threadIdx.x] = 0; s_l1[threadIdx.x] = 0; s_window[threadIdx.x][0] = 0; s_window[threadIdx.x][1] = 0; }
	__syncthreads();
	if (map.lane == 0) {
		for (int l = 1; l < LANES; ++l) { amax = fmax(amax, s_amax[map.row_local][l]); bad |= s_bad[map.row_local][l]; }
		s_amax[map.row_local][0] = amax;
		s_bad[map.row_local][0] = bad;
	}
	__syncthreads();
	amax = s_amax[map.row_local][0];
	const int e_max = amax == 0.0 ? 0 : emu::exponent(amax);
	unsigned long long t = 0, l1 = 0;
	int window[2] = {0, 0};
#pragma unroll 1
	for (int h = map.lane; live && amax != 0.0 && h < k; h += LANES) {
		double part[2];
		E::load(x, (long long)row * rs + (long long)h * cs, part[0], part[1]);
		if (!(emu::finite(part[0]) && emu::finite(part[1]))) continue;
		for (int q = 0; q < 2; ++q) {
			if (part[q] == 0.0) continue;
			t += norm_term(part[q], e_max);
			l1 += l1_term(part[q], e_max);
			window[q] += emu::exponent(part[q]) >= e_max - WINDOW_SPAN;
		}
	}
	atomicAdd(&s_t[map.row_local], t);
	atomicAdd(&s_l1[map.row_local], l1);
	atomicAdd(&s_window[map.row_local][0], window[0]);
	atomicAdd(&s_window[map.row_local][1], window[1]);
	__syncthreads();
	if (!live || map.lane != 0) return;
	out.amax()[row] = amax;
	out.e_max()[row] = e_max;
	out.t()[row] = s_t[map.row_local];
	out.l1()[row] = s_l1[map.row_local];
	out.nonfinite()[row] = s_bad[map.row_local][0];
	out.window(0)[row] = s_window[map.row_local][0];
	out.window(1)[row] = s_window[map.row_local][1];
}

}  // namespace

// the statistics of `a`'s rows (the first blocks) and of `b`'s (the rest; `b.rows` may be 0)
#define EMU_STATS(NAME, T)                                                                                              \
	extern "C" __global__ void __launch_bounds__(1024, 2)                                                                \
	    row_stats_##NAME(const __grid_constant__ StatsJob a, const __grid_constant__ StatsJob b) {                    \
		const int blocks_a = (a.rows + ROWS - 1) / ROWS;                                                            \
		if ((int)blockIdx.x < blocks_a) row_stats<T>(a, blockIdx.x);                                                \
		else row_stats<T>(b, blockIdx.x - blocks_a);                                                                \
	}
EMU_FOR_EACH_TYPE(EMU_STATS)

// scheme II's fast-scaling shifts of the `rows_a` rows whose statistics are at `stats_a` (laid out
// as StatsJob::out) and of the `rows_b` at `stats_b`, into out[0, rows_a) and out[rows_a, rows_a +
// rows_b), as scheme2::fast_shift: 0 for a zero row (T = 0), otherwise
// floor((lambda + 32 - 2 e_max - ceil(log2 T)) / 2)
extern "C" __global__ void fast_shifts(char* stats_a, int rows_a, char* stats_b, int rows_b, int lambda, int* out) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows_a + rows_b; i += gridDim.x * blockDim.x) {
		const bool in_a = i < rows_a;
		const int r = in_a ? i : i - rows_a;
		const StatsArrays s{in_a ? stats_a : stats_b, in_a ? rows_a : rows_b};
		const int ceil_log2_t = 64 - __clzll((long long)(s.t()[r] - 1));
		out[i] = s.t()[r] == 0 ? 0 : (lambda + 32 - 2 * s.e_max()[r] - ceil_log2_t) >> 1;
	}
}
