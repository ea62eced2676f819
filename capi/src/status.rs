//! status codes and the calling thread's last error message

use std::cell::RefCell;
use std::ffi::{CString, c_char};

/// what a call returned
///
/// # example
/// ```
/// assert_eq!(emugemm_c::EmugemmStatus::Success as i32, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmugemmStatus {
	/// the product is enqueued on the stream (or computed)
	Success = 0,
	/// an argument is out of range: an op or a fill mode the routine does not take, a negative
	/// dimension, a leading dimension below the rows, a null pointer where one is read, a
	/// misaligned address, an invalid precision
	InvalidValue = 1,
	/// the GPU ran out of memory for the product's workspace
	OutOfMemory = 2,
	/// no GPU backend here: no CUDA driver, no GPU, or a library built without kernels
	NotAvailable = 3,
	/// a CUDA driver or library call failed, or the stream is not of a GPU's primary context
	GpuError = 4,
	/// the library failed inside (a panic, caught at the boundary): a bug, please report it
	Internal = 5,
}

thread_local! {
	static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// `status`, with `message` kept as the thread's last error (an empty message for success)
pub(crate) fn record(status: EmugemmStatus, message: &str) -> EmugemmStatus {
	let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
	LAST_ERROR.with(|last| *last.borrow_mut() = message);
	status
}

/// the status of `e`, recorded with its message
pub(crate) fn failed(e: &emugemm::Error) -> EmugemmStatus {
	use emugemm::Error;
	let status = match e {
		Error::ShapeMismatch { .. } | Error::BatchLengths { .. } | Error::InvalidPrecision { .. } | Error::InvalidLayout { .. } => {
			EmugemmStatus::InvalidValue
		},
		Error::OutOfMemory { .. } => EmugemmStatus::OutOfMemory,
		Error::NoKernels | Error::BackendUnavailable { .. } | Error::Environment { .. } => EmugemmStatus::NotAvailable,
		_ => EmugemmStatus::GpuError,
	};
	record(status, &e.to_string())
}

/// the message of the calling thread's last failed call (empty after a success): a
/// NUL-terminated string owned by the library, valid until the thread's next call
///
/// # example
/// ```
/// let message = unsafe { std::ffi::CStr::from_ptr(emugemm_c::emugemm_last_error()) };
/// assert!(message.to_str().is_ok());
/// ```
#[unsafe(no_mangle)]
pub extern "C" fn emugemm_last_error() -> *const c_char {
	LAST_ERROR.with(|last| last.borrow().as_ptr())
}
