//! the real cuBLAS behind the interposer: each symbol looked up once, in the libcublas already
//! loaded in the process (PyTorch loads it in a local scope, where `RTLD_NEXT` does not see it),
//! then after the interposer in the global scope, then in a libcublas loaded here

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::Mutex;

/// the libcublas names tried, newest first
const LIBRARIES: [&CStr; 2] = [c"libcublas.so.13", c"libcublas.so.12"];

/// the address of the real `name`, or `None` where no libcublas defines it
pub(crate) fn symbol(name: &'static CStr) -> Option<usize> {
	static FOUND: Mutex<Option<HashMap<&'static CStr, Option<usize>>>> = Mutex::new(None);
	let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
	*found.get_or_insert_with(HashMap::new).entry(name).or_insert_with(|| look_up(name))
}

/// `name` in the loaded libcublas, after this library, or in one loaded here
fn look_up(name: &CStr) -> Option<usize> {
	let in_library = |flags: i32| {
		LIBRARIES.iter().find_map(|lib| {
			// SAFETY: a NUL-terminated name; the handle is kept for the process's life
			let handle = unsafe { libc::dlopen(lib.as_ptr(), flags) };
			// SAFETY: a live handle and a NUL-terminated name
			(!handle.is_null())
				.then(|| unsafe { libc::dlsym(handle, name.as_ptr()) })
				.filter(|p| !p.is_null())
		})
	};
	let next = || {
		// SAFETY: a NUL-terminated name
		let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
		(!p.is_null()).then_some(p)
	};
	let address: Option<*mut c_void> = in_library(libc::RTLD_NOLOAD | libc::RTLD_LAZY)
		.or_else(next)
		.or_else(|| in_library(libc::RTLD_LAZY | libc::RTLD_LOCAL));
	if address.is_none() {
		eprintln!("emugemm-cublas: no libcublas defines {name:?}");
	}
	address.map(|p| p as usize)
}

/// the real function `name` as the function pointer type `F`
///
/// # Safety
/// `F` is the C signature of `name`
pub(crate) unsafe fn function<F: Copy>(name: &'static CStr) -> Option<F> {
	const { assert!(size_of::<F>() == size_of::<usize>()) };
	// SAFETY: a non-null address of a function of signature `F` (the caller's promise)
	symbol(name).map(|address| unsafe { std::mem::transmute_copy::<usize, F>(&address) })
}

/// cuBLAS's opaque handle
pub(crate) type Handle = *mut c_void;

/// `cublasStatus_t`
pub(crate) type Status = i32;
pub(crate) const SUCCESS: Status = 0;
pub(crate) const NOT_INITIALIZED: Status = 1;
pub(crate) const EXECUTION_FAILED: Status = 13;

/// the stream and the pointer mode of `handle`, from the real library
pub(crate) fn handle_state(handle: Handle) -> Option<(*mut c_void, i32)> {
	type GetStream = unsafe extern "C" fn(Handle, *mut *mut c_void) -> Status;
	type GetMode = unsafe extern "C" fn(Handle, *mut i32) -> Status;
	// SAFETY: cuBLAS's signatures of these two functions
	let (get_stream, get_mode) = unsafe {
		(
			function::<GetStream>(c"cublasGetStream_v2")?,
			function::<GetMode>(c"cublasGetPointerMode_v2")?,
		)
	};
	let (mut stream, mut mode) = (std::ptr::null_mut(), 0);
	// SAFETY: a handle the caller gave cuBLAS, and two writable locals
	let ok = unsafe { get_stream(handle, &mut stream) == SUCCESS && get_mode(handle, &mut mode) == SUCCESS };
	ok.then_some((stream, mode))
}
