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

/// `op(A)`, `op(B)` and `C` of one product
pub(crate) type Views<'a, T> = (DeviceView<'a, T>, DeviceView<'a, T>, DeviceViewMut<'a, T>);

/// `m`, `n`, `k` and the leading dimensions of a product, each checked not negative
pub(crate) struct Dimensions {
	pub shape: (usize, usize, usize),
	/// `lda`, `ldb`, `ldc`
	pub lds: (usize, usize, usize),
}

impl Dimensions {
	/// `shape` and `lds` as cuBLAS passes them, where none is negative
	pub(crate) fn new((m, n, k): (i64, i64, i64), (lda, ldb, ldc): (i64, i64, i64)) -> Result<Self, Failure> {
		Ok(Dimensions {
			shape: (count("m", m)?, count("n", n)?, count("k", k)?),
			lds: (count("lda", lda)?, count("ldb", ldb)?, count("ldc", ldc)?),
		})
	}

	/// `op(A)`, `op(B)` and `C` of one product at the device addresses `(a, b, c)`, `op(A)` read
	/// with `k` columns (0: neither `A` nor `B` is read); [`Error::InvalidLayout`] where a leading
	/// dimension is below its matrix's stored rows, as cuBLAS checks them
	///
	/// # Safety
	/// the matrices lie at these addresses, on the stream's GPU, for the product's duration in
	/// stream order (nothing is read where an address is only checked, never used)
	pub(crate) unsafe fn views<'a, T: Scalar>(
		&self,
		ops: (EmugemmOperation, EmugemmOperation),
		k: usize,
		(a, b, c): (u64, u64, u64),
	) -> Result<Views<'a, T>, Error> {
		let ((m, n, _), (lda, ldb, ldc)) = (self.shape, self.lds);
		// SAFETY: the caller's promise, handed on
		unsafe {
			Ok((
				read(DeviceView::<T>::from_raw(a, stored(ops.0, (m, k)), lda)?, ops.0),
				read(DeviceView::<T>::from_raw(b, stored(ops.1, (k, n)), ldb)?, ops.1),
				DeviceViewMut::<T>::from_raw(c, (m, n), ldc)?,
			))
		}
	}

	/// the inner dimension the product reads: `k`, or 0 where `alpha = 0` (`C = beta C`, neither
	/// `A` nor `B` read)
	pub(crate) fn inner<T: Scalar>(&self, alpha: T) -> usize {
		if alpha == T::from_parts(0.0, 0.0) { 0 } else { self.shape.2 }
	}

	/// cuBLAS's quick return: a product with no entry, nothing read or written
	pub(crate) fn empty(&self) -> bool {
		self.shape.0 == 0 || self.shape.1 == 0
	}
}

/// the product of `gemm`
///
/// # Safety
/// as [`Routine::compute`]
unsafe fn product<T: Scalar>(gemm: Gemm<T>) -> Result<(), Failure> {
	let ((pa, lda), (pb, ldb)) = gemm.operands;
	let (pc, ldc) = gemm.c;
	let dims = Dimensions::new(gemm.shape, (lda, ldb, ldc))?;
	let addresses = (pa as u64, pb as u64, pc as u64);
	// the leading dimensions checked as cuBLAS checks them, then its quick return: nothing read
	// or written, no report
	// SAFETY: only checked, never used
	unsafe { dims.views::<T>(gemm.ops, dims.shape.2, addresses)? };
	if dims.empty() {
		return Ok(());
	}
	let stream = gemm.stream as sys::CUstream;
	// SAFETY: alpha and beta are readable where the pointer mode says (the caller's promise)
	let (alpha, beta) = unsafe { scalars(gemm.scalars, stream)? };
	let emu = emulator()?;
	// SAFETY: the matrices lie at these addresses with these leading dimensions, on the stream's
	// GPU, for the call's duration in stream order (the caller's promise)
	let (a, b, c) = unsafe { dims.views(gemm.ops, dims.inner(alpha), addresses)? };
	// SAFETY: a live stream of the caller's, or a default one
	let on = unsafe { Stream::from_raw(stream) };
	Ok(emu.gemm_on_stream(c, alpha, (a, b), beta, (gemm.precision.into(), on))?)
}
