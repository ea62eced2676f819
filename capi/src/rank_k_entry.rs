//! the C entry points of rank-k updates, one per element type (SYRK for the real types, HERK for
//! the complex ones), with cuBLAS's argument order and a stream and a precision after `ldc`: each
//! is
//!
//! `C = alpha op(A) op(A)^T + beta C` (SYRK) or `C = alpha op(A) op(A)^H + beta C` (HERK) on the
//! triangle of `C` that `uplo` names (lower or upper, the diagonal included; the other triangle is
//! neither read nor written), with `op(A)` `n x k` and `C` `n x n`, column-major with leading
//! dimensions `lda` (at least `n` for `trans = N`, at least `k` otherwise, and 1) and `ldc` (at
//! least `n`, and 1), as cuBLAS's SYRK or HERK of its type. `trans` is N or T for SYRK (C reads
//! as T there), N or C for HERK. `alpha` and `beta` are real for every type, in host or device
//! memory as `mode` says; `beta = 0` does not read `C`, `alpha = 0` does not read `A`; HERK writes
//! a real diagonal. The update runs on the GPU of `stream` (a `cudaStream_t` of the GPU's primary
//! context; null: the legacy default stream of the current context), ordered after the stream's
//! earlier work and before its later work, at `precision`: its entries are bit for bit those of
//! the GEMM `alpha op(A) op(A)^H + beta C` at that precision, with its plan and report. The host
//! waits for the plan (where it needs the operands' statistics) and for `alpha` and `beta` in
//! device memory.
//!
//! # Safety (of every entry point)
//! Every pointer addresses what its dimensions say, in device memory of the stream's GPU (host
//! memory for `alpha` and `beta` in host mode), aligned to the element's size; `C` is not read or
//! written by other work until the update completes in stream order.
//!
//! The four signatures stand one to a line, as a table: they differ only in the element types.

use crate::request::{Call, RankK, Routine};
use crate::status::EmugemmStatus;
use crate::status::run;
use crate::{EmugemmComplex32, EmugemmComplex64, EmugemmPrecision};
use std::ffi::c_void;

/// single precision real (SYRK): `C = alpha op(A) op(A)^T + beta C` on a triangle, on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, c): (*const _, *mut _) = (std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (1.0f32, 0.0f32);
/// let f32_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F32 as i32, parameter: 0 };
/// let (lower, n, host) = (EmugemmFillMode::Lower as i32, EmugemmOperation::N as i32, EmugemmPointerMode::Host as i32);
/// // the lower triangle of the 64 x 64 C = A A^T, A 64 x 32
/// let status = unsafe { emugemm_ssyrk(lower, n, 64, 32, &alpha, a, 64, &beta, c, 64, host, std::ptr::null_mut(), f32_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_ssyrk(uplo: i32, trans: i32, n: i64, k: i64, alpha: *const f32, a: *const f32, lda: i64, beta: *const f32, c: *mut f32, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::RankK(RankK { uplo, trans, shape: (n, k), alpha, a: (a, lda), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}

/// double precision real (SYRK): `C = alpha op(A) op(A)^T + beta C` on a triangle, on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, c): (*const _, *mut _) = (std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (1.0f64, 0.0f64);
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (upper, t, host) = (EmugemmFillMode::Upper as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// // the upper triangle of the 64 x 64 C = A^T A, A 32 x 64
/// let status = unsafe { emugemm_dsyrk(upper, t, 64, 32, &alpha, a, 32, &beta, c, 64, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_dsyrk(uplo: i32, trans: i32, n: i64, k: i64, alpha: *const f64, a: *const f64, lda: i64, beta: *const f64, c: *mut f64, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::RankK(RankK { uplo, trans, shape: (n, k), alpha, a: (a, lda), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}

/// single precision complex (HERK, `cuComplex`, real `alpha` and `beta`): `C = alpha op(A) op(A)^H + beta C` on a triangle, on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, c): (*const EmugemmComplex32, *mut EmugemmComplex32) = (std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (1.0f32, 0.0f32);
/// let f32_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F32 as i32, parameter: 0 };
/// let (lower, n, host) = (EmugemmFillMode::Lower as i32, EmugemmOperation::N as i32, EmugemmPointerMode::Host as i32);
/// // the lower triangle of the 64 x 64 C = A A^H, A 64 x 32
/// let status = unsafe { emugemm_cherk(lower, n, 64, 32, &alpha, a, 64, &beta, c, 64, host, std::ptr::null_mut(), f32_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_cherk(uplo: i32, trans: i32, n: i64, k: i64, alpha: *const f32, a: *const EmugemmComplex32, lda: i64, beta: *const f32, c: *mut EmugemmComplex32, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::RankK(RankK { uplo, trans, shape: (n, k), alpha, a: (a, lda), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}

/// double precision complex (HERK, `cuDoubleComplex`, real `alpha` and `beta`): `C = alpha op(A) op(A)^H + beta C` on a triangle, on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, c): (*const EmugemmComplex64, *mut EmugemmComplex64) = (std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (1.0f64, 0.0f64);
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (upper, adjoint, host) = (EmugemmFillMode::Upper as i32, EmugemmOperation::C as i32, EmugemmPointerMode::Host as i32);
/// // the upper triangle of the 64 x 64 C = A^H A, A 32 x 64
/// let status = unsafe { emugemm_zherk(upper, adjoint, 64, 32, &alpha, a, 32, &beta, c, 64, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_zherk(uplo: i32, trans: i32, n: i64, k: i64, alpha: *const f64, a: *const EmugemmComplex64, lda: i64, beta: *const f64, c: *mut EmugemmComplex64, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::RankK(RankK { uplo, trans, shape: (n, k), alpha, a: (a, lda), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}
