//! the C entry points, one per element type, with cuBLAS's argument order and a stream and a
//! precision after `ldc`: each is
//!
//! `C = alpha op(A) op(B) + beta C` with `op(A)` `m x k`, `op(B)` `k x n` and `C` `m x n`,
//! column-major with leading dimensions `lda`, `ldb`, `ldc` (at least the stored rows, and 1),
//! as cuBLAS's GEMM of its type; `beta = 0` does not read `C`, `alpha = 0` reads neither `A` nor
//! `B`. `alpha` and `beta` point to host or device memory as `mode` says. The product runs on the
//! GPU of `stream` (a `cudaStream_t` of the GPU's primary context; null: the legacy default
//! stream of the current context), ordered after the stream's earlier work and before its later
//! work, at `precision`. The host waits for the plan (where it needs the operands' statistics)
//! and for `alpha` and `beta` in device memory. The calling thread's current context is as it
//! was before the call.
//!
//! # Safety (of every entry point)
//! Every pointer addresses what its dimensions say, in device memory of the stream's GPU (host
//! memory for `alpha` and `beta` in host mode), aligned to the element's size; `C` is not read or
//! written by other work until the product completes in stream order.
//!
//! The four signatures stand one to a line, as a table: they differ only in the element type.

use crate::request::{Call, Gemm, Routine};
use crate::status::EmugemmStatus;
use crate::status::run;
use crate::{EmugemmComplex32, EmugemmComplex64, EmugemmPrecision};
use std::ffi::c_void;

/// single precision real: `C = alpha op(A) op(B) + beta C` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const _, *const _, *mut _) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (<f32>::default(), <f32>::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_sgemm(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_sgemm(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const f32, a: *const f32, lda: i64, b: *const f32, ldb: i64, beta: *const f32, c: *mut f32, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Gemm(Gemm { ops: (transa, transb), shape: (m, n, k), alpha, a: (a, lda), b: (b, ldb), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}

/// double precision real: `C = alpha op(A) op(B) + beta C` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const _, *const _, *mut _) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (<f64>::default(), <f64>::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_dgemm(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_dgemm(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const f64, a: *const f64, lda: i64, b: *const f64, ldb: i64, beta: *const f64, c: *mut f64, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Gemm(Gemm { ops: (transa, transb), shape: (m, n, k), alpha, a: (a, lda), b: (b, ldb), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}

/// single precision complex (`cuComplex`): `C = alpha op(A) op(B) + beta C` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const _, *const _, *mut _) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (EmugemmComplex32::default(), EmugemmComplex32::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_cgemm(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_cgemm(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const EmugemmComplex32, a: *const EmugemmComplex32, lda: i64, b: *const EmugemmComplex32, ldb: i64, beta: *const EmugemmComplex32, c: *mut EmugemmComplex32, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Gemm(Gemm { ops: (transa, transb), shape: (m, n, k), alpha, a: (a, lda), b: (b, ldb), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}

/// double precision complex (`cuDoubleComplex`): `C = alpha op(A) op(B) + beta C` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const _, *const _, *mut _) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// let (alpha, beta) = (EmugemmComplex64::default(), EmugemmComplex64::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_zgemm(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_zgemm(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const EmugemmComplex64, a: *const EmugemmComplex64, lda: i64, b: *const EmugemmComplex64, ldb: i64, beta: *const EmugemmComplex64, c: *mut EmugemmComplex64, ldc: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Gemm(Gemm { ops: (transa, transb), shape: (m, n, k), alpha, a: (a, lda), b: (b, ldb), beta, c: (c, ldc) }), pointer_mode: mode, stream, precision }) }
}
