// emugemm: the error bound's pass over the entries (src/bound.rs): from the exact magnitude
// products L (INT32, m x n, column-major; one per part of the output) and the sides of the rows of
// A and the columns of B, the seven maxima of each row of the product (`RowMaxima`), every IEEE
// operation as src/bound.rs `RowMaxima::add` performs it, in the same order.
//
// thread i of a block takes row i of the block's rows (the L loads are coalesced along the rows)
// over the block's COLUMNS columns, whose sides the block copies to shared memory first and every
// thread reads (a broadcast); the running maxima are non-negative doubles, merged into the output
// by atomicMax on their bits.
#include "common.cuh"

namespace {

constexpr int FAMILIES = 3, MAXIMA = 2 * FAMILIES + 1, ROWS = 128, COLUMNS = 64, UNROLL = 4;

// one row of A or column of B (`BoundSide` in src/bound.rs, the same layout)
struct BoundSide {
	double norm[FAMILIES], step[FAMILIES];
	int e_max, zero;
};
static_assert(sizeof(BoundSide) == 56, "BoundSide in src/bound.rs has this layout");
constexpr int SIDE_WORDS = sizeof(BoundSide) / 8;

// RowMaxima::add
__device__ __forceinline__ void add(double (&acc)[MAXIMA], const BoundSide& a, const BoundSide& b, int l, int bits, int floor_exp) {
	if (a.zero != 0 || b.zero != 0) return;
	const double inv = __ddiv_rn(1.0, (double)l);
#pragma unroll
	for (int f = 0; f < FAMILIES; ++f) {
		acc[f] = fmax(acc[f], __dmul_rn(__dadd_rn(__dmul_rn(b.norm[f], a.step[f]), __dmul_rn(a.norm[f], b.step[f])), inv));
		acc[FAMILIES + f] = fmax(acc[FAMILIES + f], __dmul_rn(__dmul_rn(a.step[f], b.step[f]), inv));
	}
	acc[2 * FAMILIES] = fmax(acc[2 * FAMILIES], emu::scale_pow2(inv, floor_exp + 2 * bits - 2 - a.e_max - b.e_max));
}

}  // namespace

// out: MAXIMA doubles per row of the product (RowMaxima), zeroed before the launch; l_im is null for
// real products. grid (ceil(m / ROWS), ceil(n / COLUMNS)), ROWS threads. With `lower` (a Gram
// product's, m = n), only the entries on and below the diagonal, which are all L holds then: a
// row's entries to the right of the diagonal are those of its column below it, which
// bound_maxima_columns takes
extern "C" __global__ void __launch_bounds__(ROWS) bound_maxima(const int* l_re, const int* l_im, int m, int n, const BoundSide* side_a,
                                                                const BoundSide* side_b, int bits, int floor_exp, int lower,
                                                                unsigned long long* out) {
	__shared__ BoundSide sides_b[COLUMNS];
	const int i = blockIdx.x * ROWS + threadIdx.x;
	const int j0 = blockIdx.y * COLUMNS;
	if (lower && blockIdx.x * ROWS + ROWS - 1 < j0) return;  // the block lies above the diagonal
	const int count = min(COLUMNS, n - j0);
	// the block's sides of B, copied as words (BoundSide is 7 of them)
	const auto* src = reinterpret_cast<const unsigned long long*>(side_b + j0);
	auto* dst = reinterpret_cast<unsigned long long*>(sides_b);
	for (int w = threadIdx.x; w < SIDE_WORDS * count; w += ROWS) dst[w] = src[w];
	__syncthreads();
	if (i >= m) return;
	const BoundSide a = side_a[i];
	if (a.zero != 0) return;
	// the row's columns of the block (up to the diagonal, where `lower`)
	const int last = lower ? min(count, i - j0 + 1) : count;
	double acc[MAXIMA] = {};
	const long long row = i + (long long)j0 * m;
	int j = 0;
	// UNROLL entries' loads ahead of their arithmetic: the loop waits on memory once per UNROLL
	for (; j + UNROLL <= last; j += UNROLL) {
		int re[UNROLL], im[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; ++u) {
			re[u] = l_re[row + (long long)(j + u) * m];
			im[u] = l_im != nullptr ? l_im[row + (long long)(j + u) * m] : 0;
		}
#pragma unroll
		for (int u = 0; u < UNROLL; ++u) {
			add(acc, a, sides_b[j + u], re[u], bits, floor_exp);
			if (l_im != nullptr) add(acc, a, sides_b[j + u], im[u], bits, floor_exp);
		}
	}
	for (; j < last; ++j) {
		add(acc, a, sides_b[j], l_re[row + (long long)j * m], bits, floor_exp);
		if (l_im != nullptr) add(acc, a, sides_b[j], l_im[row + (long long)j * m], bits, floor_exp);
	}
#pragma unroll
	for (int q = 0; q < MAXIMA; ++q) atomicMax(out + (long long)i * MAXIMA + q, (unsigned long long)__double_as_longlong(acc[q]));
}

// the other half of a Gram product's maxima (A Aᴴ: L symmetric, held on and below the diagonal,
// and the sides of A's rows those of B's columns): for row j, its entries (j, r), r > j, as the
// entries (r, j) of column j below the diagonal. `add` is symmetric in its sides (IEEE sums and
// products commute), so add(side j, side r, L(r, j)) is the entry (j, r)'s. A warp takes a column,
// its lanes the rows r = j + 1 + lane, ... (coalesced loads), and merges the warp's maxima by
// shuffles into row j's by atomicMax. grid ceil(n / COLUMN_WARPS), 32 COLUMN_WARPS threads
constexpr int COLUMN_WARPS = 8;
extern "C" __global__ void __launch_bounds__(32 * COLUMN_WARPS) bound_maxima_columns(const int* l_re, const int* l_im, int n,
                                                                                   const BoundSide* sides, int bits,
                                                                                   int floor_exp, unsigned long long* out) {
	const int j = blockIdx.x * COLUMN_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (j >= n) return;  // the whole warp
	const BoundSide a = sides[j];
	if (a.zero != 0) return;
	double acc[MAXIMA] = {};
	const long long column = (long long)j * n;
	for (int r = j + 1 + lane; r < n; r += 32) {
		const BoundSide b = sides[r];
		add(acc, a, b, l_re[column + r], bits, floor_exp);
		if (l_im != nullptr) add(acc, a, b, l_im[column + r], bits, floor_exp);
	}
#pragma unroll
	for (int q = 0; q < MAXIMA; ++q) {
		double v = acc[q];
#pragma unroll
		for (int offset = 16; offset > 0; offset /= 2) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
		if (lane == 0) atomicMax(out + (long long)j * MAXIMA + q, (unsigned long long)__double_as_longlong(v));
	}
}
