//! one product of the C ABI, for every element type: the arguments checked as cuBLAS checks them,
//! `alpha` and `beta` read, the views and the stream made, the product run on the process's GPU
//! context

use crate::status::{EmugemmStatus, failed, record};
use crate::{EmugemmOperation, EmugemmPointerMode, EmugemmPrecision};
use cudarc::driver::sys;
use emugemm::{Backend, DeviceView, DeviceViewMut, Emulator, Error, Scalar, Stream};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

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

/// the process's GPU context: every product runs on the GPU of its stream
fn emulator() -> Result<&'static Emulator, Error> {
	static EMULATOR: OnceLock<Result<Emulator, Error>> = OnceLock::new();
	EMULATOR
		.get_or_init(|| Emulator::with_backend(Backend::Gpu))
		.as_ref()
		.map_err(Clone::clone)
}

/// runs `gemm`, its status recorded; a panic is caught here, never unwound into C
///
/// # Safety
/// the pointers and the stream are as the header's `emugemm_?gemm` require
pub(crate) unsafe fn run<T: Scalar>(gemm: Gemm<T>) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	match catch_unwind(AssertUnwindSafe(|| unsafe { product(gemm) })) {
		Ok(Ok(())) => record(EmugemmStatus::Success, ""),
		Ok(Err(Failure::Invalid(message))) => record(EmugemmStatus::InvalidValue, &message),
		Ok(Err(Failure::Emugemm(e))) => failed(&e),
		Err(_) => record(EmugemmStatus::Internal, "emugemm panicked inside the C ABI: please report it"),
	}
}

/// why a call failed
enum Failure {
	/// an argument out of range, found here
	Invalid(String),
	/// the library's error
	Emugemm(Error),
}

impl From<Error> for Failure {
	fn from(e: Error) -> Self {
		Failure::Emugemm(e)
	}
}

/// the product of `gemm`
///
/// # Safety
/// as [`run`]
unsafe fn product<T: Scalar>(gemm: Gemm<T>) -> Result<(), Failure> {
	let (m, n, k) = gemm.shape;
	let (m, n, k) = (count("m", m)?, count("n", n)?, count("k", k)?);
	let ((pa, lda), (pb, ldb)) = gemm.operands;
	let (pc, ldc) = gemm.c;
	let (lda, ldb, ldc) = (count("lda", lda)?, count("ldb", ldb)?, count("ldc", ldc)?);
	let stored = |op, (rows, cols)| if op == EmugemmOperation::N { (rows, cols) } else { (cols, rows) };
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

/// the argument `name`, a dimension or leading dimension, where it is not negative
fn count(name: &str, value: i64) -> Result<usize, Failure> {
	usize::try_from(value).map_err(|_| Failure::Invalid(format!("{name} = {value} is negative")))
}

/// `view` as `op` reads it
fn read<T: Scalar>(view: DeviceView<'_, T>, op: EmugemmOperation) -> DeviceView<'_, T> {
	match op {
		EmugemmOperation::N => view,
		EmugemmOperation::T => view.transpose(),
		EmugemmOperation::C => view.adjoint(),
	}
}

/// `alpha` and `beta`: read from the host, or copied from the device after the work enqueued on
/// `stream` so far (the host waits for the stream)
///
/// # Safety
/// the pointers are readable where `mode` says
unsafe fn scalars<T: Scalar>(
	(alpha, beta, mode): (*const T, *const T, EmugemmPointerMode),
	stream: sys::CUstream,
) -> Result<(T, T), Failure> {
	if alpha.is_null() || beta.is_null() {
		return Err(Failure::Invalid("alpha and beta must not be null".into()));
	}
	match mode {
		// SAFETY: host pointers to one element each
		EmugemmPointerMode::Host => Ok(unsafe { (alpha.read_unaligned(), beta.read_unaligned()) }),
		EmugemmPointerMode::Device => {
			let mut values = [T::from_parts(0.0, 0.0); 2];
			let bytes = size_of::<T>();
			// SAFETY: device pointers to one element each, copied into `values` in stream order
			let status = unsafe {
				let first = sys::cuMemcpyDtoHAsync_v2(values.as_mut_ptr().cast::<c_void>(), alpha as u64, bytes, stream);
				let second = sys::cuMemcpyDtoHAsync_v2(values[1..].as_mut_ptr().cast::<c_void>(), beta as u64, bytes, stream);
				[first, second, sys::cuStreamSynchronize(stream)]
			};
			if let Some(bad) = status.iter().find(|s| **s != sys::CUresult::CUDA_SUCCESS) {
				return Err(Failure::Emugemm(Error::Gpu {
					reason: format!("reading alpha and beta from device memory: {bad:?}"),
				}));
			}
			Ok((values[0], values[1]))
		},
	}
}
