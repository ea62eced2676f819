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
	/// an argument breaks cuBLAS's contract; nothing was read or written.
	/// An op, a fill mode, a pointer mode or a precision kind that is none of its enumeration's values, a negative
	/// dimension or count, a leading dimension below the rows, a null pointer where one is read or
	/// written, a misaligned address, a matrix past the end of the address space, a precision the
	/// element type does not take
	InvalidValue = 1,
	/// the workspace does not fit, or a batch's host arrays; nothing was read or written.
	/// The product's workspace does not fit the device memory it may take (see
	/// `limit_device_memory`) or the memory the program leaves free, or the host cannot hold a
	/// batch's arrays; nothing was read or written
	OutOfMemory = 2,
	/// the call cannot run on the GPU of its stream; nothing was read or written.
	/// No CUDA driver or GPU, a library built without kernels, a stream of a context that is not its GPU's
	/// primary context (or the legacy default stream on a thread with no current context), or a
	/// call that reads device memory on the host (scalars in device memory, a batch's pointer
	/// arrays) on a stream being captured into a CUDA graph, or any call there unless
	/// `EMUGEMM_GRAPHS=on` (which records a single product or rank-k update with host scalars into
	/// the graph instead)
	NotAvailable = 3,
	/// a CUDA driver or library call failed once work was enqueued (`C` may be partly written)
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

/// runs `call` through [`crate::execute`], its status returned and recorded with its message
///
/// # Safety
/// as [`crate::execute`]
pub(crate) unsafe fn run<T: crate::Element>(call: crate::Call<T>) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	let outcome = unsafe { crate::execute(&call) };
	let (status, message) = outcome.status();
	record(status, message)
}

/// the message of the calling thread's last failed call (empty after a success).
/// A NUL-terminated string owned by the library, valid until the thread's next call
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
