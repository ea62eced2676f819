//! what every routine of the C ABI shares: the process's GPU context, the run that records a
//! status and never unwinds into C, the checks of dimensions, `alpha` and `beta` read from the
//! host or the device, and device memory read to the host (a batch's pointer arrays)

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
			let (first, second) = values.split_at_mut(1);
			// SAFETY: device pointers to one element each (the caller's promise)
			unsafe { download("alpha and beta", [(alpha as u64, first), (beta as u64, second)], stream)? };
			Ok((values[0], values[1]))
		},
	}
}

/// copies each `(device address, host destination)` in `stream`'s order, after the work enqueued
/// on it so far, then waits for the stream: the destinations hold the device's values on return
/// (an empty destination reads nothing)
///
/// # Safety
/// each address is readable device memory of the stream's GPU, as long as its destination
pub(crate) unsafe fn download<E: Copy, const N: usize>(
	what: &str,
	copies: [(u64, &mut [E]); N],
	stream: sys::CUstream,
) -> Result<(), Failure> {
	let mut status = Vec::with_capacity(N + 1);
	for (from, to) in copies.into_iter().filter(|(_, to)| !to.is_empty()) {
		// SAFETY: `to` is writable for its length; `from` readable as long (the caller's promise)
		status.push(unsafe { sys::cuMemcpyDtoHAsync_v2(to.as_mut_ptr().cast::<c_void>(), from, size_of_val(to), stream) });
	}
	// SAFETY: the caller's stream, or the legacy default one
	status.push(unsafe { sys::cuStreamSynchronize(stream) });
	match status.into_iter().find(|s| *s != sys::CUresult::CUDA_SUCCESS) {
		None => Ok(()),
		Some(bad) => Err(Failure::Emugemm(Error::Gpu {
			reason: format!("reading {what} from device memory: {bad:?}"),
		})),
	}
}
