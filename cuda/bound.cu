// emugemm: the error bound's pass over the entries (src/bound.rs): from the exact magnitude
// products L (INT32, m x n, column-major; one per part of the output) and the sides of the rows of
// A and the columns of B, the seven maxima of each row of the product (`RowMaxima`), every IEEE
// operation as src/bound.rs `RowMaxima::add` performs it, in the same order.
//
// thread i of a block takes row i of the block's rows (the L loads are coalesced along the rows)
// over the block's COLUMNS columns, whose sides every thread reads (a broadcast); the running
// maxima are non-negative doubles, merged into the output by atomicMax on their bits.
#include "common.cuh"

namespace {

constexpr int FAMILIES = 3, MAXIMA = 2 * FAMILIES + 1, ROWS = 128, COLUMNS = 64;

// one row of A or column of B (`Side` in src/bound.rs, the same layout)
struct BoundSide {
	double norm[FAMILIES], step[FAMILIES];
	int e_max, zero;
};
static_assert(sizeof(BoundSide) == 56, "Side in src/bound.rs has this layout");

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
// real products. grid (ceil(m / ROWS), ceil(n / COLUMNS)), ROWS threads
extern "C" __global__ void __launch_bounds__(ROWS) bound_maxima(const int* l_re, const int* l_im, int m, int n, const BoundSide* side_a,
                                                                const BoundSide* side_b, int bits, int floor_exp,
                                                                unsigned long long* out) {
	const int i = blockIdx.x * ROWS + threadIdx.x;
	if (i >= m) return;
	const BoundSide a = side_a[i];
	if (a.zero != 0) return;
	double acc[MAXIMA] = {};
	const int j_end = min(n, (int)(blockIdx.y + 1) * COLUMNS);
	for (int j = blockIdx.y * COLUMNS; j < j_end; ++j) {
		const BoundSide b = side_b[j];
		const long long idx = i + (long long)j * m;
		add(acc, a, b, l_re[idx], bits, floor_exp);
		if (l_im != nullptr) add(acc, a, b, l_im[idx], bits, floor_exp);
	}
#pragma unroll
	for (int q = 0; q < MAXIMA; ++q) atomicMax(out + (long long)i * MAXIMA + q, (unsigned long long)__double_as_longlong(acc[q]));
}
