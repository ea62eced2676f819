//! the real cuBLAS behind the interposer: a symbol of the caller's libcublas (see
//! [`crate::libraries`]), cuBLAS's statuses, and a handle's stream and pointer mode

use crate::libraries::{Library, symbol};
use std::ffi::{CStr, c_void};

/// the real function `name` of `library` as the function pointer type `F`
///
/// # Safety
/// `F` is the C signature of `name`
pub(crate) unsafe fn function<F: Copy>(library: Option<Library>, name: &'static CStr) -> Option<F> {
	const { assert!(size_of::<F>() == size_of::<usize>()) };
	// SAFETY: a non-null address of a function of signature `F` (the caller's promise)
	library
		.and_then(|l| symbol(l, name))
		.map(|address| unsafe { std::mem::transmute_copy::<usize, F>(&address) })
}

/// cuBLAS's opaque handle
pub(crate) type Handle = *mut c_void;

/// `cublasStatus_t`
pub(crate) type Status = i32;
pub(crate) const SUCCESS: Status = 0;
pub(crate) const NOT_INITIALIZED: Status = 1;
pub(crate) const EXECUTION_FAILED: Status = 13;
pub(crate) const INTERNAL_ERROR: Status = 14;

/// the stream and the pointer mode of `handle`, from `library`
pub(crate) fn handle_state(library: Option<Library>, handle: Handle) -> Option<(*mut c_void, i32)> {
	type GetStream = unsafe extern "C" fn(Handle, *mut *mut c_void) -> Status;
	type GetMode = unsafe extern "C" fn(Handle, *mut i32) -> Status;
	// SAFETY: cuBLAS's signatures of these two functions
	let (get_stream, get_mode) = unsafe {
		(
			function::<GetStream>(library, c"cublasGetStream_v2")?,
			function::<GetMode>(library, c"cublasGetPointerMode_v2")?,
		)
	};
	let (mut stream, mut mode) = (std::ptr::null_mut(), 0);
	// SAFETY: a handle the caller gave cuBLAS, and two writable locals
	let ok = unsafe { get_stream(handle, &mut stream) == SUCCESS && get_mode(handle, &mut mode) == SUCCESS };
	ok.then_some((stream, mode))
}
