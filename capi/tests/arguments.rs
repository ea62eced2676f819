//! arguments the C ABI refuses before it needs a GPU, with a status and a message, and cuBLAS's
//! quick return for an empty product, update or batch: these run on every machine
mod common;

use common::refusals::{Places, assert_all_refused};
use common::{C, DEVICE, F64, FULL, HOST, LOWER, N, RankK, T, UPPER, assert_no_report, gpu_present, last_error};
use emugemm_c::*;

/// `emugemm_dgemm` on null pointers (never read here) with these dimensions
fn call((m, n, k): (i64, i64, i64), (lda, ldb, ldc): (i64, i64, i64), ops: (i32, i32)) -> EmugemmStatus {
	let (alpha, beta) = (1.0f64, 0.0f64);
	let null = std::ptr::null();
	// SAFETY: every call here is refused or returns before it reads a matrix
	unsafe {
		emugemm_dgemm(
			ops.0,
			ops.1,
			m,
			n,
			k,
			&alpha,
			null,
			lda,
			null,
			ldb,
			&beta,
			std::ptr::null_mut(),
			ldc,
			HOST,
			std::ptr::null_mut(),
			F64,
		)
	}
}

/// `status` is `InvalidValue` and the thread's message holds `part`
fn refused(status: EmugemmStatus, part: &str) {
	assert_eq!(status, EmugemmStatus::InvalidValue, "{part}");
	assert!(last_error().contains(part), "{part}: {}", last_error());
}

/// `status` is a success, which clears the thread's message
fn succeeded(status: EmugemmStatus) {
	assert_eq!(status, EmugemmStatus::Success, "{}", last_error());
	assert_eq!(last_error(), "", "a success clears the message");
}

#[test]
fn negative_dimensions_and_short_leading_dimensions_are_invalid() {
	refused(call((-1, 4, 4), (4, 4, 4), (N, N)), "m = -1 is negative");
	refused(
		call((4, 4, 4), (3, 4, 4), (N, N)),
		"lda = 3: the leading dimension is below max(1, 4), the rows stored",
	);
	// B read transposed is stored n x k: its leading dimension is checked against n
	refused(
		call((4, 6, 4), (4, 4, 4), (N, T)),
		"ldb = 4: the leading dimension is below max(1, 6)",
	);
	succeeded(call((4, 0, 4), (4, 4, 4), (N, N)));
}

#[test]
fn empty_products_return_at_once() {
	succeeded(call((0, 5, 3), (1, 3, 1), (N, N)));
	succeeded(call((5, 0, 3), (5, 3, 5), (N, N)));
	assert_no_report();
}

/// `update` on null pointers (never read here) with these dimensions
fn update<C>(update: RankK<C, f64>, (uplo, trans): (i32, i32), (n, k): (i64, i64), (lda, ldc): (i64, i64)) -> EmugemmStatus {
	let (alpha, beta) = (1.0f64, 0.0f64);
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
			HOST,
			std::ptr::null_mut(),
			F64,
		)
	}
}

#[test]
fn rank_k_updates_refuse_what_cublas_refuses() {
	let (dsyrk, zherk): (RankK<f64, f64>, RankK<EmugemmComplex64, f64>) = (emugemm_dsyrk, emugemm_zherk);
	refused(update(dsyrk, (FULL, N), (4, 3), (4, 4)), "uplo = FULL");
	refused(update(zherk, (FULL, C), (4, 3), (3, 4)), "uplo = FULL");
	// HERK reads A as stored or conjugate-transposed, never transposed alone
	refused(update(zherk, (LOWER, T), (4, 3), (3, 4)), "trans = T");
	refused(update(dsyrk, (LOWER, N), (-1, 3), (4, 4)), "n = -1 is negative");
	refused(update(zherk, (UPPER, N), (4, -2), (4, 4)), "k = -2 is negative");
	refused(update(dsyrk, (UPPER, N), (4, 3), (4, -4)), "ldc = -4 is negative");
	// A is stored n x k for N and k x n otherwise: lda is checked against n, then against k
	let short = |lda, rows| format!("lda = {lda}: the leading dimension is below max(1, {rows})");
	refused(update(dsyrk, (LOWER, N), (4, 3), (3, 4)), &short(3, 4));
	refused(update(zherk, (UPPER, N), (4, 3), (3, 4)), &short(3, 4));
	refused(update(dsyrk, (LOWER, T), (4, 3), (2, 4)), &short(2, 3));
	refused(update(zherk, (UPPER, C), (4, 3), (2, 4)), &short(2, 3));
	refused(
		update(dsyrk, (LOWER, N), (4, 3), (4, 3)),
		"ldc = 3: the leading dimension is below max(1, 4)",
	);
	refused(
		update(zherk, (LOWER, C), (4, 3), (3, 3)),
		"ldc = 3: the leading dimension is below max(1, 4)",
	);
	// a real SYRK reads C as T; the dimensions are checked before anything is read
	refused(update(dsyrk, (UPPER, C), (4, 3), (2, 4)), &short(2, 3));
	succeeded(update(dsyrk, (UPPER, C), (0, 3), (3, 1)));
}

#[test]
fn empty_updates_return_at_once() {
	let (dsyrk, zherk): (RankK<f64, f64>, RankK<EmugemmComplex64, f64>) = (emugemm_dsyrk, emugemm_zherk);
	succeeded(update(dsyrk, (LOWER, N), (0, 3), (1, 1)));
	succeeded(update(dsyrk, (UPPER, T), (0, 3), (3, 1)));
	succeeded(update(zherk, (UPPER, C), (0, 0), (1, 1)));
	assert_no_report();
}

/// `emugemm_dgemm_batched` with these dimensions and pointer arrays (null, or never read here)
fn batched((m, n, k): (i64, i64, i64), (lda, ldb, ldc): (i64, i64, i64), count: i64, arrays: *const *const f64) -> EmugemmStatus {
	let (alpha, beta) = (1.0f64, 0.0f64);
	let c = arrays.cast();
	// SAFETY: every call here is refused or returns before it reads an array or a matrix
	unsafe {
		emugemm_dgemm_batched(
			N,
			T,
			m,
			n,
			k,
			&alpha,
			arrays,
			lda,
			arrays,
			ldb,
			&beta,
			c,
			ldc,
			count,
			HOST,
			std::ptr::null_mut(),
			F64,
		)
	}
}

/// `emugemm_zgemm_strided_batched` of `A` read conjugate-transposed, from aligned base addresses
/// of no memory (never read here), with these dimensions and strides
fn strided(
	(m, n, k): (i64, i64, i64),
	(lda, ldb, ldc): (i64, i64, i64),
	(stride_a, stride_b, stride_c): (i64, i64, i64),
	count: i64,
) -> EmugemmStatus {
	let (alpha, beta) = (EmugemmComplex64 { re: 1.0, im: 0.5 }, EmugemmComplex64::default());
	let at = Places::nowhere();
	let (a, b) = (at.a as *const EmugemmComplex64, at.b as *const EmugemmComplex64);
	let c = at.c as *mut EmugemmComplex64;
	let stream = std::ptr::null_mut();
	// SAFETY: every call here is refused or returns before it reads a matrix
	unsafe {
		emugemm_zgemm_strided_batched(
			C, N, m, n, k, &alpha, a, lda, stride_a, b, ldb, stride_b, &beta, c, ldc, stride_c, count, HOST, stream, F64,
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
	refused(
		batched((4, 6, 4), (4, 4, 4), 2, null),
		"ldb = 4: the leading dimension is below max(1, 6)",
	);
	// the leading dimensions are checked before an empty batch returns, as cuBLAS checks them
	refused(
		batched((4, 4, 4), (3, 4, 4), 0, null),
		"lda = 3: the leading dimension is below max(1, 4)",
	);
	// the pointer arrays are read from the device: a null one is refused before
	refused(batched((4, 4, 4), (4, 4, 4), 2, null), "the array of C is null");
	// A read conjugate-transposed is stored k x m
	refused(
		strided((4, 4, 6), (4, 6, 4), (0, 0, 16), 2),
		"lda = 4: the leading dimension is below max(1, 6)",
	);
	refused(strided((4, 4, 4), (4, 4, 4), (16, 16, 16), -3), "batch_count = -3 is negative");
	// the second product's C lies below address 0
	refused(
		strided((4, 4, 4), (4, 4, 4), (16, 16, i64::MIN), 2),
		"C: product 1 lies outside the address space",
	);
	succeeded(batched((4, 4, 4), (4, 4, 4), 0, null));
}

#[test]
fn empty_batches_return_at_once() {
	let null = std::ptr::null();
	succeeded(batched((4, 4, 4), (4, 4, 4), 0, null));
	succeeded(batched((0, 4, 4), (1, 4, 1), 3, null));
	succeeded(batched((4, 0, 4), (4, 1, 4), 3, null));
	succeeded(strided((4, 4, 4), (4, 4, 4), (16, 16, 16), 0));
	succeeded(strided((0, 4, 4), (4, 4, 1), (16, 16, 16), 5));
	succeeded(strided((4, 0, 4), (4, 4, 4), (-16, 0, -16), 5));
	// an empty batch reads no stride: the products may lie anywhere
	succeeded(strided((4, 0, 4), (4, 4, 4), (i64::MIN, i64::MAX, i64::MIN), i64::MAX));
	assert_no_report();
}

/// every call that breaks the contract is refused before anything is read, whatever it breaks:
/// an enumeration, a dimension, a leading dimension, a scalar, a pointer or a precision
#[test]
fn the_contract_is_checked_before_anything_is_read() {
	assert_all_refused(&Places::nowhere());
}

/// a call that passes every check, without a GPU: `NotAvailable`, saying why, never a panic
#[test]
fn valid_calls_without_a_gpu_are_not_available() {
	if gpu_present() {
		println!("valid_calls_without_a_gpu_are_not_available: SKIPPED, this machine has a GPU");
		return;
	}
	let at = Places::nowhere();
	let (alpha, beta) = (1.0f64, 0.5f64);
	let (a, b, c) = (at.a as *const f64, at.b as *const f64, at.c as *mut f64);
	let stream = std::ptr::null_mut();
	// SAFETY: refused before anything is read: there is no GPU
	let statuses = unsafe {
		[
			emugemm_dgemm(N, T, 4, 4, 4, &alpha, a, 4, b, 4, &beta, c, 4, HOST, stream, F64),
			emugemm_dgemm(N, T, 4, 4, 4, &alpha, a, 4, b, 4, &beta, c, 4, DEVICE, stream, F64),
			emugemm_dsyrk(UPPER, C, 4, 4, &alpha, a, 4, &beta, c, 4, HOST, stream, F64),
			emugemm_dgemm_strided_batched(T, N, 4, 4, 4, &alpha, a, 4, 16, b, 4, 0, &beta, c, 4, 16, 3, HOST, stream, F64),
		]
	};
	for status in statuses {
		assert_eq!(status, EmugemmStatus::NotAvailable, "{}", last_error());
		let message = last_error();
		assert!(
			message.contains("no NVIDIA driver (libcuda) found") || message.contains("no CUDA device is visible"),
			"{message}"
		);
	}
}
