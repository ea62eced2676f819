//! arguments the C ABI refuses before it needs a GPU, with a status and a message, and cuBLAS's
//! quick return for an empty product, update or batch: these run on every machine
mod common;

use common::{RankK, assert_no_report, last_error};
use emugemm_c::*;

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
	assert_no_report();
}

/// `update` on null pointers (never read here) with these dimensions
fn update<C>(
	update: RankK<C, f64>,
	(uplo, trans): (EmugemmFillMode, EmugemmOperation),
	(n, k): (i64, i64),
	(lda, ldc): (i64, i64),
) -> EmugemmStatus {
	let (alpha, beta) = (1.0f64, 0.0f64);
	let precision = EmugemmPrecision {
		kind: EmugemmPrecisionKind::F64,
		parameter: 0,
	};
	// SAFETY: every call here is refused or returns before it reads a matrix
	unsafe {
		update(
			uplo,
			trans,
			n,
			k,
			&alpha,
			std::ptr::null(),
			lda,
			&beta,
			std::ptr::null_mut(),
			ldc,
			EmugemmPointerMode::Host,
			std::ptr::null_mut(),
			precision,
		)
	}
}

/// `status` is `InvalidValue` and the thread's message holds `part`
fn refused(status: EmugemmStatus, part: &str) {
	assert_eq!(status, EmugemmStatus::InvalidValue, "{part}");
	assert!(last_error().contains(part), "{part}: {}", last_error());
}

#[test]
fn rank_k_updates_refuse_what_cublas_refuses() {
	use EmugemmFillMode::{Full, Lower, Upper};
	use EmugemmOperation::{C, N, T};
	let (dsyrk, zherk): (RankK<f64, f64>, RankK<EmugemmComplex64, f64>) = (emugemm_dsyrk, emugemm_zherk);
	refused(update(dsyrk, (Full, N), (4, 3), (4, 4)), "uplo = FULL");
	refused(update(zherk, (Full, C), (4, 3), (3, 4)), "uplo = FULL");
	// HERK reads A as stored or conjugate-transposed, never transposed alone
	refused(update(zherk, (Lower, T), (4, 3), (3, 4)), "trans = T");
	refused(update(dsyrk, (Lower, N), (-1, 3), (4, 4)), "n = -1 is negative");
	refused(update(zherk, (Upper, N), (4, -2), (4, 4)), "k = -2 is negative");
	refused(update(dsyrk, (Upper, N), (4, 3), (4, -4)), "ldc = -4 is negative");
	// A is stored n x k for N and k x n otherwise: lda is checked against n, then against k
	refused(update(dsyrk, (Lower, N), (4, 3), (3, 4)), "leading dimension");
	refused(update(zherk, (Upper, N), (4, 3), (3, 4)), "leading dimension");
	refused(update(dsyrk, (Lower, T), (4, 3), (2, 4)), "leading dimension");
	refused(update(zherk, (Upper, C), (4, 3), (2, 4)), "leading dimension");
	refused(update(dsyrk, (Lower, N), (4, 3), (4, 3)), "leading dimension");
	refused(update(zherk, (Lower, C), (4, 3), (3, 3)), "leading dimension");
	// a real SYRK reads C as T; the dimensions are checked before anything is read
	refused(update(dsyrk, (Upper, C), (4, 3), (2, 4)), "leading dimension");
	assert_eq!(
		update(dsyrk, (Upper, C), (0, 3), (3, 1)),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
	assert_eq!(last_error(), "", "a success clears the message");
}

#[test]
fn empty_updates_return_at_once() {
	use EmugemmFillMode::{Lower, Upper};
	use EmugemmOperation::{C, N, T};
	let (dsyrk, zherk): (RankK<f64, f64>, RankK<EmugemmComplex64, f64>) = (emugemm_dsyrk, emugemm_zherk);
	assert_eq!(
		update(dsyrk, (Lower, N), (0, 3), (1, 1)),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
	assert_eq!(
		update(dsyrk, (Upper, T), (0, 3), (3, 1)),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
	assert_eq!(
		update(zherk, (Upper, C), (0, 0), (1, 1)),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
	assert_no_report();
}

/// `emugemm_dgemm_batched` with these dimensions and pointer arrays (null, or never read here)
fn batched((m, n, k): (i64, i64, i64), (lda, ldb, ldc): (i64, i64, i64), count: i64, arrays: *const *const f64) -> EmugemmStatus {
	let (alpha, beta) = (1.0f64, 0.0f64);
	let precision = EmugemmPrecision {
		kind: EmugemmPrecisionKind::F64,
		parameter: 0,
	};
	let n_op = EmugemmOperation::N;
	// SAFETY: every call here is refused or returns before it reads an array or a matrix
	unsafe {
		emugemm_dgemm_batched(
			n_op,
			EmugemmOperation::T,
			m,
			n,
			k,
			&alpha,
			arrays,
			lda,
			arrays,
			ldb,
			&beta,
			arrays.cast(),
			ldc,
			count,
			EmugemmPointerMode::Host,
			std::ptr::null_mut(),
			precision,
		)
	}
}

/// `emugemm_zgemm_strided_batched` from null base pointers with these dimensions and strides
fn strided(
	(m, n, k): (i64, i64, i64),
	(lda, ldb, ldc): (i64, i64, i64),
	(stride_a, stride_b, stride_c): (i64, i64, i64),
	count: i64,
) -> EmugemmStatus {
	let (alpha, beta) = (EmugemmComplex64 { re: 1.0, im: 0.5 }, EmugemmComplex64::default());
	let precision = EmugemmPrecision {
		kind: EmugemmPrecisionKind::F64,
		parameter: 0,
	};
	// SAFETY: every call here is refused or returns before it reads a matrix
	unsafe {
		emugemm_zgemm_strided_batched(
			EmugemmOperation::C,
			EmugemmOperation::N,
			m,
			n,
			k,
			&alpha,
			std::ptr::null(),
			lda,
			stride_a,
			std::ptr::null(),
			ldb,
			stride_b,
			&beta,
			std::ptr::null_mut(),
			ldc,
			stride_c,
			count,
			EmugemmPointerMode::Host,
			std::ptr::null_mut(),
			precision,
		)
	}
}

#[test]
fn batches_refuse_what_cublas_refuses() {
	let null = std::ptr::null();
	refused(batched((4, 4, 4), (4, 4, 4), -1, null), "batch_count = -1 is negative");
	refused(batched((-1, 4, 4), (4, 4, 4), 2, null), "m = -1 is negative");
	refused(batched((4, 4, 4), (4, 4, -4), 2, null), "ldc = -4 is negative");
	// B read transposed is stored n x k: its leading dimension is checked against n
	refused(batched((4, 6, 4), (4, 4, 4), 2, null), "leading dimension");
	// the leading dimensions are checked before an empty batch returns, as cuBLAS checks them
	refused(batched((4, 4, 4), (3, 4, 4), 0, null), "leading dimension");
	// the pointer arrays are read from the device: a null one is refused before
	refused(batched((4, 4, 4), (4, 4, 4), 2, null), "the array of A is null");
	// A read conjugate-transposed is stored k x m
	refused(strided((4, 4, 6), (4, 6, 4), (0, 0, 16), 2), "leading dimension");
	refused(strided((4, 4, 4), (4, 4, 4), (16, 16, 16), -3), "batch_count = -3 is negative");
	// the second product's C lies below address 0
	refused(
		strided((4, 4, 4), (4, 4, 4), (16, 16, -16), 2),
		"C: product 1 lies outside the address space",
	);
	assert_eq!(batched((4, 4, 4), (4, 4, 4), 0, null), EmugemmStatus::Success, "{}", last_error());
	assert_eq!(last_error(), "", "a success clears the message");
}

#[test]
fn empty_batches_return_at_once() {
	let null = std::ptr::null();
	assert_eq!(batched((4, 4, 4), (4, 4, 4), 0, null), EmugemmStatus::Success, "{}", last_error());
	assert_eq!(batched((0, 4, 4), (1, 4, 1), 3, null), EmugemmStatus::Success, "{}", last_error());
	assert_eq!(batched((4, 0, 4), (4, 1, 4), 3, null), EmugemmStatus::Success, "{}", last_error());
	assert_eq!(
		strided((4, 4, 4), (4, 4, 4), (16, 16, 16), 0),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
	assert_eq!(
		strided((0, 4, 4), (4, 4, 1), (16, 16, 16), 5),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
	assert_eq!(
		strided((4, 0, 4), (4, 4, 4), (-16, 0, -16), 5),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
	assert_no_report();
}
