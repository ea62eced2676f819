//! one call of the C ABI or of the interposer, as one typed value: the routine and cuBLAS's
//! arguments exactly as a caller passed them (integers and pointers, nothing interpreted yet),
//! the stream and the precision. Both doors build it; [`crate::execute`] checks it against
//! cuBLAS's contract in one place and carries it whole to the library

use crate::{Element, EmugemmPrecision};
use std::ffi::c_void;

/// a matrix argument: its address and leading dimension
pub type Matrix<T> = (*const T, i64);

/// a written matrix argument: its address and leading dimension
pub type MatrixMut<T> = (*mut T, i64);

/// `C = alpha op(A) op(B) + beta C` (cuBLAS's `?gemm`)
///
/// # example
/// ```
/// let gemm = emugemm_c::Gemm::<f64> {
///     ops: (0, 1), shape: (4, 4, 4), alpha: std::ptr::null(), a: (std::ptr::null(), 4),
///     b: (std::ptr::null(), 4), beta: std::ptr::null(), c: (std::ptr::null_mut(), 4),
/// };
/// # let _ = gemm;
/// ```
#[derive(Debug)]
pub struct Gemm<T> {
	/// `transa`, `transb` (`cublasOperation_t`)
	pub ops: (i32, i32),
	/// `m`, `n`, `k`
	pub shape: (i64, i64, i64),
	/// `alpha`, in host or device memory as the call's pointer mode says
	pub alpha: *const T,
	/// `A`, `lda`
	pub a: Matrix<T>,
	/// `B`, `ldb`
	pub b: Matrix<T>,
	/// `beta`
	pub beta: *const T,
	/// `C`, `ldc`
	pub c: MatrixMut<T>,
}

/// where a batch's matrices lie
///
/// # example
/// ```
/// let strided = emugemm_c::Matrices::<f32>::Strided((std::ptr::null(), 16), (std::ptr::null(), 0), (std::ptr::null_mut(), 16));
/// # let _ = strided;
/// ```
#[derive(Debug)]
pub enum Matrices<T> {
	/// device arrays of `count` device pointers each: `A[i]`, `B[i]`, `C[i]`
	Pointers(*const *const T, *const *const T, *const *mut T),
	/// `A`, `B`, `C` of the first product and the strides, in elements, to the next product's
	Strided((*const T, i64), (*const T, i64), (*mut T, i64)),
}

/// copies of what holds only pointers and integers, whatever the pointers' type (`c_void` among
/// them, which is not `Copy`)
macro_rules! copy {
	($($name:ident),+) => {
		$(
			impl<T> Clone for $name<T> {
				fn clone(&self) -> Self {
					*self
				}
			}
			impl<T> Copy for $name<T> {}
		)+
	};
}

copy!(Gemm, Matrices, Batch);

/// `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` for `i < count` (cuBLAS's `?gemmBatched` and
/// `?gemmStridedBatched`)
///
/// # example
/// ```
/// use emugemm_c::{Batch, Matrices};
/// let batch = Batch::<f64> {
///     ops: (0, 0), shape: (4, 4, 4), alpha: std::ptr::null(), beta: std::ptr::null(), lds: (4, 4, 4),
///     matrices: Matrices::Strided((std::ptr::null(), 16), (std::ptr::null(), 16), (std::ptr::null_mut(), 16)), count: 3,
/// };
/// # let _ = batch;
/// ```
#[derive(Debug)]
pub struct Batch<T> {
	/// `transa`, `transb`
	pub ops: (i32, i32),
	/// `m`, `n`, `k` of every product
	pub shape: (i64, i64, i64),
	/// `alpha`
	pub alpha: *const T,
	/// `beta`
	pub beta: *const T,
	/// `lda`, `ldb`, `ldc`
	pub lds: (i64, i64, i64),
	/// the matrices
	pub matrices: Matrices<T>,
	/// `batch_count`
	pub count: i64,
}

/// `C = alpha op(A) op(A)ᴴ + beta C` on a triangle (cuBLAS's `?syrk` for real types, `?herk` for
/// complex ones: `op(A) op(A)ᵀ` there), with real `alpha` and `beta`
///
/// # example
/// ```
/// let update = emugemm_c::RankK::<emugemm_c::EmugemmComplex64> {
///     uplo: 0, trans: 2, shape: (4, 3), alpha: std::ptr::null(), a: (std::ptr::null(), 3),
///     beta: std::ptr::null(), c: (std::ptr::null_mut(), 4),
/// };
/// # let _ = update;
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RankK<T: Element> {
	/// `uplo` (`cublasFillMode_t`)
	pub uplo: i32,
	/// `trans` (`cublasOperation_t`)
	pub trans: i32,
	/// `n`, `k`
	pub shape: (i64, i64),
	/// `alpha` (real)
	pub alpha: *const T::Real,
	/// `A`, `lda`
	pub a: Matrix<T>,
	/// `beta` (real)
	pub beta: *const T::Real,
	/// `C`, `ldc`
	pub c: MatrixMut<T>,
}

/// the routine of a call, with its own arguments
///
/// # example
/// ```
/// use emugemm_c::{RankK, Routine};
/// let routine = Routine::<f32>::RankK(RankK {
///     uplo: 1, trans: 0, shape: (4, 3), alpha: std::ptr::null(), a: (std::ptr::null(), 4),
///     beta: std::ptr::null(), c: (std::ptr::null_mut(), 4),
/// });
/// assert_eq!(routine.shape(), (4, 4, 3));
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Routine<T: Element> {
	/// one product
	Gemm(Gemm<T>),
	/// a batch of products
	Batch(Batch<T>),
	/// a rank-k update
	RankK(RankK<T>),
}

impl<T: Element> Routine<T> {
	/// `m`, `n`, `k` of the product (a rank-k update's is `n x n x k`), as given
	///
	/// # example
	/// see [`Routine`]
	pub fn shape(&self) -> (i64, i64, i64) {
		match self {
			Routine::Gemm(g) => g.shape,
			Routine::Batch(b) => b.shape,
			Routine::RankK(r) => (r.shape.0, r.shape.0, r.shape.1),
		}
	}

	/// cuBLAS's ops of the product's operands, as given (a rank-k update's: `trans`, then the op
	/// that reads `A` as `op(A)`'s adjoint: N, T or C)
	///
	/// # example
	/// ```
	/// use emugemm_c::{RankK, Routine};
	/// let null = std::ptr::null();
	/// let herk = Routine::<emugemm_c::EmugemmComplex64>::RankK(RankK {
	///     uplo: 1, trans: 0, shape: (4, 3), alpha: null, a: (std::ptr::null(), 4), beta: null, c: (std::ptr::null_mut(), 4),
	/// });
	/// assert_eq!(herk.ops(), (0, 2));
	/// ```
	pub fn ops(&self) -> (i32, i32) {
		match self {
			Routine::Gemm(g) => g.ops,
			Routine::Batch(b) => b.ops,
			Routine::RankK(r) => {
				let adjoint = if T::TYPE.complex() { 2 } else { 1 };
				(r.trans, if r.trans == 0 { adjoint } else { 0 })
			},
		}
	}

	/// a rank-k update's `uplo`
	///
	/// # example
	/// see [`Routine`]
	pub fn uplo(&self) -> Option<i32> {
		match self {
			Routine::RankK(r) => Some(r.uplo),
			_ => None,
		}
	}

	/// a batch's `batch_count`
	///
	/// # example
	/// see [`Routine`]
	pub fn batch(&self) -> Option<i64> {
		match self {
			Routine::Batch(b) => Some(b.count),
			_ => None,
		}
	}
}

/// one call: the routine and its arguments, the pointer mode of `alpha` and `beta`
/// (`cublasPointerMode_t`: 0 host, 1 device), the caller's stream (`cudaStream_t`; null: the
/// legacy default stream of the calling thread's current context) and the precision
///
/// # example
/// ```
/// use emugemm_c::{Call, EmugemmPrecision, Gemm, Routine};
/// let (alpha, beta) = (1.0f64, 0.0f64);
/// let call = Call {
///     routine: Routine::Gemm(Gemm {
///         ops: (0, 0), shape: (0, 0, 0), alpha: &alpha, a: (std::ptr::null(), 1), b: (std::ptr::null(), 1),
///         beta: &beta, c: (std::ptr::null_mut(), 1),
///     }),
///     pointer_mode: 0,
///     stream: std::ptr::null_mut(),
///     precision: EmugemmPrecision { kind: 0, parameter: 0 },
/// };
/// // an empty product: cuBLAS's quick return, no GPU needed
/// assert!(matches!(unsafe { emugemm_c::execute(&call) }, emugemm_c::Outcome::Done));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Call<T: Element> {
	/// the routine
	pub routine: Routine<T>,
	/// where `alpha` and `beta` point
	pub pointer_mode: i32,
	/// the caller's stream
	pub stream: *mut c_void,
	/// the precision asked
	pub precision: EmugemmPrecision,
}
