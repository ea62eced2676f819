//! one rank-k update of the C ABI (cuBLAS's SYRK for real types, HERK for complex ones), for
//! every element type: the arguments checked as cuBLAS checks them, `alpha` and `beta` (real)
//! read, the views and the stream made, the update run on the process's GPU context

use crate::call::{Failure, Routine, count, emulator, read, scalars, stored};
use crate::{EmugemmFillMode, EmugemmOperation, EmugemmPointerMode, EmugemmPrecision};
use cudarc::driver::sys;
use emugemm::{DeviceView, DeviceViewMut, Error, Scalar, Stream};
use faer::linalg::matmul::triangular::BlockStructure;
use std::ffi::c_void;

/// the arguments of one `emugemm_?syrk` or `emugemm_?herk` call, as cuBLAS orders them
pub(crate) struct RankK<T: Scalar> {
	/// the triangle of `C` read and written
	pub uplo: EmugemmFillMode,
	/// `op(A)`: N, or T (or C, read as T) for real types; N or C for complex types
	pub trans: EmugemmOperation,
	/// `n`, `k`
	pub shape: (i64, i64),
	/// `alpha`, `beta` (real for every type), and where they point
	pub scalars: (*const T::RealPart, *const T::RealPart, EmugemmPointerMode),
	/// `A` and `lda`
	pub a: (*const T, i64),
	/// `C` and `ldc`
	pub c: (*mut T, i64),
	pub stream: *mut c_void,
	pub precision: EmugemmPrecision,
}

impl<T: Scalar> Routine for RankK<T> {
	unsafe fn compute(self) -> Result<(), Failure> {
		// SAFETY: the caller's promise, handed on
		unsafe { update(self) }
	}
}

/// the triangle `uplo` names, as faer's structure of the destination
fn triangle(uplo: EmugemmFillMode) -> Result<BlockStructure, Failure> {
	match uplo {
		EmugemmFillMode::Lower => Ok(BlockStructure::TriangularLower),
		EmugemmFillMode::Upper => Ok(BlockStructure::TriangularUpper),
		EmugemmFillMode::Full => Err(Failure::Invalid(
			"uplo = FULL: a rank-k update writes one triangle, lower or upper".into(),
		)),
	}
}

/// the update of `rank_k`
///
/// # Safety
/// as [`Routine::compute`]
unsafe fn update<T: Scalar>(rank_k: RankK<T>) -> Result<(), Failure> {
	let structure = triangle(rank_k.uplo)?;
	// HERK reads A as stored or conjugate-transposed; a complex SYRK (A transposed) is no entry
	// point here
	if T::IS_COMPLEX && rank_k.trans == EmugemmOperation::T {
		return Err(Failure::Invalid("trans = T: a Hermitian rank-k update takes N or C".into()));
	}
	let (n, k) = rank_k.shape;
	let (n, k) = (count("n", n)?, count("k", k)?);
	let ((pa, lda), (pc, ldc)) = (rank_k.a, rank_k.c);
	let (lda, ldc) = (count("lda", lda)?, count("ldc", ldc)?);
	// SAFETY: the matrices lie at these addresses with these leading dimensions, on the stream's
	// GPU, for the call's duration in stream order (the caller's promise)
	let views = |k| unsafe {
		Ok::<_, Error>((
			DeviceView::<T>::from_raw(pa as u64, stored(rank_k.trans, (n, k)), lda)?,
			DeviceViewMut::<T>::from_raw(pc as u64, (n, n), ldc)?,
		))
	};
	// the leading dimensions checked as cuBLAS checks them, then its quick return: nothing read
	// or written, no report
	views(k)?;
	if n == 0 {
		return Ok(());
	}
	let stream = rank_k.stream as sys::CUstream;
	// SAFETY: alpha and beta are readable where the pointer mode says (the caller's promise)
	let (alpha, beta) = unsafe { scalars(rank_k.scalars, stream)? };
	let emu = emulator()?;
	// alpha = 0 does not read A: an empty inner dimension, C = beta C on the triangle
	let (a, c) = views(if alpha == T::RealPart::from_parts(0.0, 0.0) { 0 } else { k })?;
	// SAFETY: a live stream of the caller's, or a default one
	let on = unsafe { Stream::from_raw(stream) };
	let update = (rank_k.precision.into(), on);
	Ok(emu.rank_k_on_stream((c, structure), alpha, read(a, rank_k.trans), beta, update)?)
}
