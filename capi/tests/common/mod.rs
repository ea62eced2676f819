//! what the C ABI's test programs share: the calling thread's last error and report, and the
//! signature of a rank-k update
#![allow(dead_code)]

use emugemm_c::*;
use std::ffi::{CStr, c_void};

/// the calling thread's last error message
pub fn last_error() -> String {
	// SAFETY: the library's own NUL-terminated string
	unsafe { CStr::from_ptr(emugemm_last_error()) }.to_string_lossy().into_owned()
}

/// asserts that the calling thread has no report: a quick return makes none
pub fn assert_no_report() {
	let mut report = EmugemmReport::default();
	// SAFETY: a writable report
	assert_eq!(
		unsafe { emugemm_last_report(&mut report) },
		EmugemmStatus::InvalidValue,
		"a quick return makes no report"
	);
}

/// a C ABI rank-k update: cuBLAS's arguments with `C` elements and real `R` scalars, a stream and
/// a precision
pub type RankK<C, R> = unsafe extern "C" fn(
	EmugemmFillMode,
	EmugemmOperation,
	i64,
	i64,
	*const R,
	*const C,
	i64,
	*const R,
	*mut C,
	i64,
	EmugemmPointerMode,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;
