//! arguments the C ABI refuses before it needs a GPU, with a status and a message, and cuBLAS's
//! quick return for an empty product: these run on every machine
use emugemm_c::*;
use std::ffi::CStr;

fn last_error() -> String {
	// SAFETY: the library's own NUL-terminated string
	unsafe { CStr::from_ptr(emugemm_last_error()) }.to_string_lossy().into_owned()
}

/// `emugemm_dgemm` on null pointers (never read here) with these dimensions
fn call((m, n, k): (i64, i64, i64), (lda, ldb, ldc): (i64, i64, i64), ops: (EmugemmOperation, EmugemmOperation)) -> EmugemmStatus {
	let (alpha, beta) = (1.0f64, 0.0f64);
	let precision = EmugemmPrecision {
		kind: EmugemmPrecisionKind::F64,
		parameter: 0,
	};
	// SAFETY: every call here is refused or returns before it reads a matrix
	unsafe {
		emugemm_dgemm(
			ops.0,
			ops.1,
			m,
			n,
			k,
			&alpha,
			std::ptr::null(),
			lda,
			std::ptr::null(),
			ldb,
			&beta,
			std::ptr::null_mut(),
			ldc,
			EmugemmPointerMode::Host,
			std::ptr::null_mut(),
			precision,
		)
	}
}

#[test]
fn negative_dimensions_and_short_leading_dimensions_are_invalid() {
	let n = (EmugemmOperation::N, EmugemmOperation::N);
	assert_eq!(call((-1, 4, 4), (4, 4, 4), n), EmugemmStatus::InvalidValue);
	assert!(last_error().contains("m = -1 is negative"), "{}", last_error());
	assert_eq!(call((4, 4, 4), (3, 4, 4), n), EmugemmStatus::InvalidValue);
	assert!(last_error().contains("leading dimension"), "{}", last_error());
	// B read transposed is stored n x k: its leading dimension is checked against n
	let nt = (EmugemmOperation::N, EmugemmOperation::T);
	assert_eq!(call((4, 6, 4), (4, 4, 4), nt), EmugemmStatus::InvalidValue);
	assert_eq!(call((4, 0, 4), (4, 4, 4), n), EmugemmStatus::Success, "{}", last_error());
	assert_eq!(last_error(), "", "a success clears the message");
}

#[test]
fn empty_products_return_at_once() {
	let n = (EmugemmOperation::N, EmugemmOperation::N);
	assert_eq!(call((0, 5, 3), (1, 3, 1), n), EmugemmStatus::Success, "{}", last_error());
	assert_eq!(call((5, 0, 3), (5, 3, 5), n), EmugemmStatus::Success, "{}", last_error());
	let mut report = EmugemmReport::default();
	// SAFETY: a writable report
	assert_eq!(
		unsafe { emugemm_last_report(&mut report) },
		EmugemmStatus::InvalidValue,
		"a quick return makes no report"
	);
}
