//! what every routine of the C ABI shares: the process's GPU context, the run that records a
//! status and never unwinds into C, the checks of dimensions, and `alpha` and `beta` read from
//! the host or the device

use crate::status::{EmugemmStatus, failed, record};
use crate::{EmugemmOperation, EmugemmPointerMode};
use cudarc::driver::sys;
use emugemm::{Backend, DeviceView, Emulator, Error, Scalar};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// the arguments of one call of the C ABI, computed
pub(crate) trait Routine {
	/// checks the arguments as cuBLAS checks them, then computes
	///
	/// # Safety
	/// the pointers and the stream are as the header's function of the routine requires
	unsafe fn compute(self) -> Result<(), Failure>;
}

/// why a call failed
pub(crate) enum Failure {
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

/// the process's GPU context: every product runs on the GPU of its stream
pub(crate) fn emulator() -> Result<&'static Emulator, Error> {
	static EMULATOR: OnceLock<Result<Emulator, Error>> = OnceLock::new();
	EMULATOR
		.get_or_init(|| Emulator::with_backend(Backend::Gpu))
		.as_ref()
		.map_err(Clone::clone)
}

/// runs `routine`, its status recorded; a panic is caught here, never unwound into C
///
/// # Safety
/// as [`Routine::compute`]
pub(crate) unsafe fn run(routine: impl Routine) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	match catch_unwind(AssertUnwindSafe(|| unsafe { routine.compute() })) {
		Ok(Ok(())) => record(EmugemmStatus::Success, ""),
		Ok(Err(Failure::Invalid(message))) => record(EmugemmStatus::InvalidValue, &message),
		Ok(Err(Failure::Emugemm(e))) => failed(&e),
		Err(_) => record(EmugemmStatus::Internal, "emugemm panicked inside the C ABI: please report it"),
	}
}

/// the argument `name`, a dimension or leading dimension, where it is not negative
pub(crate) fn count(name: &str, value: i64) -> Result<usize, Failure> {
	usize::try_from(value).map_err(|_| Failure::Invalid(format!("{name} = {value} is negative")))
}

/// the rows and columns of the matrix stored for `op` to read it as a `rows x cols` one
pub(crate) fn stored(op: EmugemmOperation, (rows, cols): (usize, usize)) -> (usize, usize) {
	if op == EmugemmOperation::N { (rows, cols) } else { (cols, rows) }
}

/// `view` as `op` reads it
pub(crate) fn read<T: Scalar>(view: DeviceView<'_, T>, op: EmugemmOperation) -> DeviceView<'_, T> {
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
pub(crate) unsafe fn scalars<T: Scalar>(
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
