// emugemm: borrowed device matrices laid out for the pipeline (src/gpu/kernels/layout.rs):
//   op_copy  op(a) of a column-major matrix (leading dimension lda), transposed and/or conjugated,
//            into a compact column-major rows x cols matrix: the layout the pipeline's native
//            paths read (A column-major, B column-major), the values exactly those of op(a)
//   scale    c = beta c on a column-major matrix (leading dimension ldc), each operation rounded
//            in the element's precision as the host's `beta * c` rounds it (no fused multiply-add)
//   copy_named  the entries of an n x n matrix that a structure names, from src into dst (both
//            column-major): (i, j) with i > j where `lower`, i < j where `upper`, i == j where
//            `diagonal`; the diagonal's imaginary parts written zero where `real_diagonal` (a
//            Hermitian rank-k update's)
//   copy_flagged  the entries (i, j) of an m x n matrix whose row flag or column flag is set, from
//            src into dst (both column-major): a destination's entries that a native product's
//            fix-up recomputes, kept aside from the GEMM that would otherwise add to them
#include "common.cuh"

namespace {

__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }

// beta x, with beta = (br, bi) given in f64 and exact in the element's precision
__device__ __forceinline__ void scaled(double& x, double br, double) { x = mul_rn(br, x); }
__device__ __forceinline__ void scaled(float& x, double br, double) { x = mul_rn((float)br, x); }
template <typename C, typename S>
__device__ __forceinline__ void scaled_complex(C& x, S br, S bi) {
	const S re = sub_rn(mul_rn(br, x.re), mul_rn(bi, x.im));
	const S im = add_rn(mul_rn(br, x.im), mul_rn(bi, x.re));
	x.re = re;
	x.im = im;
}
__device__ __forceinline__ void scaled(emu::c64& x, double br, double bi) { scaled_complex<emu::c64, double>(x, br, bi); }
__device__ __forceinline__ void scaled(emu::c32& x, double br, double bi) { scaled_complex<emu::c32, float>(x, (float)br, (float)bi); }

template <typename T>
__device__ void op_copy(const T* a, long long lda, long long rows, long long cols, int transpose, int conjugate, T* out) {
	using E = emu::Elem<T>;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < rows * cols; idx += (long long)gridDim.x * 256) {
		const long long i = idx % rows, j = idx / rows;
		double re, im;
		E::load(a, transpose ? j + i * lda : i + j * lda, re, im);
		E::store(out, idx, re, conjugate ? -im : im);
	}
}

template <typename T>
__device__ void scale(T* c, long long ldc, long long rows, long long cols, double br, double bi) {
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < rows * cols; idx += (long long)gridDim.x * 256) {
		scaled(c[idx % rows + idx / rows * ldc], br, bi);
	}
}

template <typename T>
__device__ void copy_named(const T* src, long long lds, long long n, T* dst, long long ldd, int lower, int upper, int diagonal,
                           int real_diagonal) {
	using E = emu::Elem<T>;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < n * n; idx += (long long)gridDim.x * 256) {
		const long long i = idx % n, j = idx / n;
		if (!(i > j ? lower : i < j ? upper : diagonal)) continue;
		double re, im;
		E::load(src, i + j * lds, re, im);
		E::store(dst, i + j * ldd, re, i == j && real_diagonal ? 0.0 : im);
	}
}

template <typename T>
__device__ void copy_flagged(const T* src, long long lds, long long m, long long n, T* dst, long long ldd, const int* rows,
                             const int* cols) {
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < m * n; idx += (long long)gridDim.x * 256) {
		const long long i = idx % m, j = idx / m;
		if (rows[i] || cols[j]) dst[i + j * ldd] = src[i + j * lds];
	}
}

}  // namespace

#define EMU_LAYOUT(NAME, T)                                                                                            \
	extern "C" __global__ void __launch_bounds__(256)                                                                 \
	    op_copy_##NAME(const T* a, long long lda, long long rows, long long cols, int transpose, int conjugate, T* out) { \
		op_copy<T>(a, lda, rows, cols, transpose, conjugate, out);                                                   \
	}                                                                                                                  \
	extern "C" __global__ void __launch_bounds__(256)                                                                 \
	    scale_##NAME(T* c, long long ldc, long long rows, long long cols, double br, double bi) {                     \
		scale<T>(c, ldc, rows, cols, br, bi);                                                                        \
	}                                                                                                                  \
	extern "C" __global__ void __launch_bounds__(256) copy_named_##NAME(const T* src, long long lds, long long n, T* dst,  \
	                                                                    long long ldd, int lower, int upper,            \
	                                                                    int diagonal, int real_diagonal) {              \
		copy_named<T>(src, lds, n, dst, ldd, lower, upper, diagonal, real_diagonal);                                 \
	}                                                                                                                  \
	extern "C" __global__ void __launch_bounds__(256) copy_flagged_##NAME(const T* src, long long lds, long long m,        \
	                                                                      long long n, T* dst, long long ldd,           \
	                                                                      const int* rows, const int* cols) {           \
		copy_flagged<T>(src, lds, m, n, dst, ldd, rows, cols);                                                       \
	}
EMU_FOR_EACH_TYPE(EMU_LAYOUT)
