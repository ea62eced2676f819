// emugemm: the rows of the product that the error bound leaves to the native product, computed by
// cuBLAS on the rows alone (src/gpu/kernels/rows.rs):
//   gather_rows   rows[q] of A (column-major, leading dimension lda) into a compact r x k matrix
//   scatter_rows  the r x n native product of those rows into the output: entry (rows[q], j) as
//                 alpha c (+ old), every operation rounded in f64 as `combine` in src/fp.rs (a native sum);
//                 columns flagged by bad_cols[j] are left to native_fixup (cuda/reconstruct.cu)
#include "common.cuh"

namespace {

template <typename T>
__device__ void gather_rows(const T* a, long long lda, const int* rows, int r, int k, T* out) {
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < (long long)r * k; idx += (long long)gridDim.x * 256) {
		const int q = (int)(idx % r), h = (int)(idx / r);
		out[idx] = a[rows[q] + (long long)h * lda];
	}
}

template <typename T>
__device__ void scatter_rows(const T* c, int r, int n, const int* rows, const int* bad_cols, T* dst, long long ldd, double ar, double ai,
                             int accumulate) {
	using E = emu::Elem<T>;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < (long long)r * n; idx += (long long)gridDim.x * 256) {
		const int q = (int)(idx % r), j = (int)(idx / r);
		if (bad_cols[j]) continue;
		double re, im;
		E::load(c, idx, re, im);
		emu::combine_store<emu::Sum::Native>(dst, rows[q] + (long long)j * ldd, re, im, ar, ai, accumulate);
	}
}

}  // namespace

#define EMU_ROWS(NAME, T)                                                                                              \
	extern "C" __global__ void __launch_bounds__(256)                                                                 \
	    gather_rows_##NAME(const T* a, long long lda, const int* rows, int r, int k, T* out) {                          \
		gather_rows<T>(a, lda, rows, r, k, out);                                                                     \
	}                                                                                                                  \
	extern "C" __global__ void __launch_bounds__(256)                                                                 \
	    scatter_rows_##NAME(const T* c, int r, int n, const int* rows, const int* bad_cols, T* dst, long long ldd,     \
	                        double ar, double ai, int accumulate) {                                                     \
		scatter_rows<T>(c, r, n, rows, bad_cols, dst, ldd, ar, ai, accumulate);                                      \
	}
EMU_FOR_EACH_TYPE(EMU_ROWS)
