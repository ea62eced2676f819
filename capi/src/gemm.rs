//! one product of the C ABI, for every element type: the arguments checked as cuBLAS checks them,
//! `alpha` and `beta` read, the views and the stream made, the product run on the process's GPU
//! context

use crate::call::{Failure, Routine, count, emulator, read, scalars, stored};
use crate::{EmugemmOperation, EmugemmPointerMode, EmugemmPrecision};
use cudarc::driver::sys;
use emugemm::{DeviceView, DeviceViewMut, Error, Scalar, Stream};
use std::ffi::c_void;

/// the arguments of one `emugemm_?gemm` call, as cuBLAS orders them
pub(crate) struct Gemm<T> {
	pub ops: (EmugemmOperation, EmugemmOperation),
	/// `m`, `n`, `k`
	pub shape: (i64, i64, i64),
	/// `alpha`, `beta`, and where they point
	pub scalars: (*const T, *const T, EmugemmPointerMode),
	/// `A` and `lda`, `B` and `ldb`
	pub operands: ((*const T, i64), (*const T, i64)),
	/// `C` and `ldc`
	pub c: (*mut T, i64),
	pub stream: *mut c_void,
	pub precision: EmugemmPrecision,
}

impl<T: Scalar> Routine for Gemm<T> {
	unsafe fn compute(self) -> Result<(), Failure> {
		// SAFETY: the caller's promise, handed on
		unsafe { product(self) }
	}
}

/// the product of `gemm`
///
/// # Safety
/// as [`Routine::compute`]
unsafe fn product<T: Scalar>(gemm: Gemm<T>) -> Result<(), Failure> {
	let (m, n, k) = gemm.shape;
	let (m, n, k) = (count("m", m)?, count("n", n)?, count("k", k)?);
	let ((pa, lda), (pb, ldb)) = gemm.operands;
	let (pc, ldc) = gemm.c;
	let (lda, ldb, ldc) = (count("lda", lda)?, count("ldb", ldb)?, count("ldc", ldc)?);
	// SAFETY: the matrices lie at these addresses with these leading dimensions, on the stream's
	// GPU, for the call's duration in stream order (the caller's promise)
	let views = |k| unsafe {
		Ok::<_, Error>((
			DeviceView::<T>::from_raw(pa as u64, stored(gemm.ops.0, (m, k)), lda)?,
			DeviceView::<T>::from_raw(pb as u64, stored(gemm.ops.1, (k, n)), ldb)?,
			DeviceViewMut::<T>::from_raw(pc as u64, (m, n), ldc)?,
		))
	};
	// the leading dimensions checked as cuBLAS checks them, then its quick return: nothing read
	// or written, no report
	views(k)?;
	if m == 0 || n == 0 {
		return Ok(());
	}
	let stream = gemm.stream as sys::CUstream;
	// SAFETY: alpha and beta are readable where the pointer mode says (the caller's promise)
	let (alpha, beta) = unsafe { scalars(gemm.scalars, stream)? };
	let emu = emulator()?;
	// alpha = 0 reads neither A nor B: an empty inner dimension
	let (a, b, c) = views(if alpha == T::from_parts(0.0, 0.0) { 0 } else { k })?;
	// SAFETY: a live stream of the caller's, or a default one
	let on = unsafe { Stream::from_raw(stream) };
	let operands = (read(a, gemm.ops.0), read(b, gemm.ops.1));
	Ok(emu.gemm_on_stream(c, alpha, operands, beta, (gemm.precision.into(), on))?)
}
