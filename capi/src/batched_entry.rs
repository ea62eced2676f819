//! the C entry points of batches of products, one pointer-array and one strided batch per element
//! type, with cuBLAS's argument order (`cublas?gemmBatched`, `cublas?gemmStridedBatched`) and a
//! stream and a precision after `batch_count`: each is, for every `i < batch_count`,
//!
//! `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` with `op(A[i])` `m x k`, `op(B[i])` `k x n` and
//! `C[i]` `m x n`, column-major with the leading dimensions `lda`, `ldb`, `ldc` that every product
//! shares, each product planned as `emugemm_?gemm` plans it alone, and computed as that call
//! computes it, bit for bit, where it is emulated; the products computed natively run as one
//! cuBLAS batched GEMM where they can (`Emulator::gemm_batch_on_stream`), whose bits cuBLAS does
//! not promise equal to its single GEMM's (the calling thread's last report is the last
//! product's). A pointer-array batch takes `A[i]`,
//! `B[i]`, `C[i]` from arrays of `batch_count` device pointers that lie, as cuBLAS's do, in device
//! memory of the stream's GPU: the host reads them after the stream's earlier work and waits for
//! the stream to do so. A strided batch takes the first product's `A`, `B`, `C` and the distances,
//! in elements, from one product's matrix to the next one's (`stride_a`, `stride_b`, `stride_c`;
//! any sign, 0 for an operand every product shares).
//!
//! cuBLAS's checks and quick returns: a negative dimension, leading dimension below the stored
//! rows or negative `batch_count` is `InvalidValue` before anything is read; `m = 0`, `n = 0` or
//! `batch_count = 0` returns at once (no report); `alpha = 0` or `k = 0` makes every `C[i] = beta
//! C[i]` (with `alpha = 0`, neither `A` nor `B`, nor their pointer arrays, is read); `beta = 0`
//! does not read `C`. Every product is checked before any runs. `alpha` and `beta` point to host or
//! device memory as `mode` says. The batch runs on the GPU of `stream` (a `cudaStream_t` of the
//! GPU's primary context; null: the legacy default stream of the current context), ordered after
//! the stream's earlier work and before its later work, at `precision`. The host waits for the
//! pointer arrays, for each product's plan (where it needs the operands' statistics) and for
//! `alpha` and `beta` in device memory.
//!
//! # Safety (of every entry point)
//! Every pointer addresses what its dimensions say, in device memory of the stream's GPU (host
//! memory for `alpha` and `beta` in host mode), aligned to the element's size; a pointer array
//! holds `batch_count` such pointers; the products' `C` do not overlap one another nor any `A` or
//! `B`, and are not read or written by other work until the batch completes in stream order.
//!
//! The eight signatures stand one to a line, as a table: they differ only in the element type and
//! in how the matrices are given.

use crate::request::{Batch, Call, Matrices, Routine};
use crate::status::EmugemmStatus;
use crate::status::run;
use crate::{EmugemmComplex32, EmugemmComplex64, EmugemmPrecision};
use std::ffi::c_void;

/// single precision real: a pointer-array batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const *const f32, *const *const f32, *const *mut f32) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
/// // a, b, c: device arrays of 100 device pointers each, to 64 x 64 matrices
/// let (alpha, beta) = (<f32>::default(), <f32>::default());
/// let f32_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F32 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_sgemm_batched(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, 100, host, std::ptr::null_mut(), f32_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_sgemm_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const f32, a_array: *const *const f32, lda: i64, b_array: *const *const f32, ldb: i64, beta: *const f32, c_array: *const *mut f32, ldc: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Pointers(a_array, b_array, c_array), count: batch_count }), pointer_mode: mode, stream, precision }) }
}

/// single precision real: a strided batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const f32, *const f32, *mut f32) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// // 100 products of 64 x 64 matrices stored one after another; every product shares B
/// let (alpha, beta) = (<f32>::default(), <f32>::default());
/// let f32_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F32 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_sgemm_strided_batched(n, t, 64, 64, 64, &alpha, a, 64, 64 * 64, b, 64, 0, &beta, c, 64, 64 * 64, 100, host, std::ptr::null_mut(), f32_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_sgemm_strided_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const f32, a: *const f32, lda: i64, stride_a: i64, b: *const f32, ldb: i64, stride_b: i64, beta: *const f32, c: *mut f32, ldc: i64, stride_c: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Strided((a, stride_a), (b, stride_b), (c, stride_c)), count: batch_count }), pointer_mode: mode, stream, precision }) }
}

/// double precision real: a pointer-array batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const *const f64, *const *const f64, *const *mut f64) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
/// // a, b, c: device arrays of 100 device pointers each, to 64 x 64 matrices
/// let (alpha, beta) = (<f64>::default(), <f64>::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_dgemm_batched(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, 100, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_dgemm_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const f64, a_array: *const *const f64, lda: i64, b_array: *const *const f64, ldb: i64, beta: *const f64, c_array: *const *mut f64, ldc: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Pointers(a_array, b_array, c_array), count: batch_count }), pointer_mode: mode, stream, precision }) }
}

/// double precision real: a strided batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const f64, *const f64, *mut f64) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// // 100 products of 64 x 64 matrices stored one after another; every product shares B
/// let (alpha, beta) = (<f64>::default(), <f64>::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_dgemm_strided_batched(n, t, 64, 64, 64, &alpha, a, 64, 64 * 64, b, 64, 0, &beta, c, 64, 64 * 64, 100, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_dgemm_strided_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const f64, a: *const f64, lda: i64, stride_a: i64, b: *const f64, ldb: i64, stride_b: i64, beta: *const f64, c: *mut f64, ldc: i64, stride_c: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Strided((a, stride_a), (b, stride_b), (c, stride_c)), count: batch_count }), pointer_mode: mode, stream, precision }) }
}

/// single precision complex (`cuComplex`): a pointer-array batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const *const EmugemmComplex32, *const *const EmugemmComplex32, *const *mut EmugemmComplex32) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
/// // a, b, c: device arrays of 100 device pointers each, to 64 x 64 matrices
/// let (alpha, beta) = (EmugemmComplex32::default(), EmugemmComplex32::default());
/// let f32_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F32 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_cgemm_batched(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, 100, host, std::ptr::null_mut(), f32_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_cgemm_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const EmugemmComplex32, a_array: *const *const EmugemmComplex32, lda: i64, b_array: *const *const EmugemmComplex32, ldb: i64, beta: *const EmugemmComplex32, c_array: *const *mut EmugemmComplex32, ldc: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Pointers(a_array, b_array, c_array), count: batch_count }), pointer_mode: mode, stream, precision }) }
}

/// single precision complex (`cuComplex`): a strided batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const EmugemmComplex32, *const EmugemmComplex32, *mut EmugemmComplex32) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// // 100 products of 64 x 64 matrices stored one after another; every product shares B
/// let (alpha, beta) = (EmugemmComplex32::default(), EmugemmComplex32::default());
/// let f32_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F32 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_cgemm_strided_batched(n, t, 64, 64, 64, &alpha, a, 64, 64 * 64, b, 64, 0, &beta, c, 64, 64 * 64, 100, host, std::ptr::null_mut(), f32_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_cgemm_strided_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const EmugemmComplex32, a: *const EmugemmComplex32, lda: i64, stride_a: i64, b: *const EmugemmComplex32, ldb: i64, stride_b: i64, beta: *const EmugemmComplex32, c: *mut EmugemmComplex32, ldc: i64, stride_c: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Strided((a, stride_a), (b, stride_b), (c, stride_c)), count: batch_count }), pointer_mode: mode, stream, precision }) }
}

/// double precision complex (`cuDoubleComplex`): a pointer-array batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const *const EmugemmComplex64, *const *const EmugemmComplex64, *const *mut EmugemmComplex64) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
/// // a, b, c: device arrays of 100 device pointers each, to 64 x 64 matrices
/// let (alpha, beta) = (EmugemmComplex64::default(), EmugemmComplex64::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_zgemm_batched(n, t, 64, 64, 64, &alpha, a, 64, b, 64, &beta, c, 64, 100, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_zgemm_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const EmugemmComplex64, a_array: *const *const EmugemmComplex64, lda: i64, b_array: *const *const EmugemmComplex64, ldb: i64, beta: *const EmugemmComplex64, c_array: *const *mut EmugemmComplex64, ldc: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Pointers(a_array, b_array, c_array), count: batch_count }), pointer_mode: mode, stream, precision }) }
}

/// double precision complex (`cuDoubleComplex`): a strided batch of `C[i] = alpha op(A[i]) op(B[i]) + beta C[i]` on device pointers, cuBLAS's arguments, a stream and a precision.
///
/// # Safety
/// see the module's docs
///
/// # example
/// ```no_run
/// # use emugemm_c::*;
/// # let (a, b, c): (*const EmugemmComplex64, *const EmugemmComplex64, *mut EmugemmComplex64) = (std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
/// // 100 products of 64 x 64 matrices stored one after another; every product shares B
/// let (alpha, beta) = (EmugemmComplex64::default(), EmugemmComplex64::default());
/// let f64_level = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
/// let (n, t, host) = (EmugemmOperation::N as i32, EmugemmOperation::T as i32, EmugemmPointerMode::Host as i32);
/// let status = unsafe { emugemm_zgemm_strided_batched(n, t, 64, 64, 64, &alpha, a, 64, 64 * 64, b, 64, 0, &beta, c, 64, 64 * 64, 100, host, std::ptr::null_mut(), f64_level) };
/// ```
#[unsafe(no_mangle)]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
pub unsafe extern "C" fn emugemm_zgemm_strided_batched(transa: i32, transb: i32, m: i64, n: i64, k: i64, alpha: *const EmugemmComplex64, a: *const EmugemmComplex64, lda: i64, stride_a: i64, b: *const EmugemmComplex64, ldb: i64, stride_b: i64, beta: *const EmugemmComplex64, c: *mut EmugemmComplex64, ldc: i64, stride_c: i64, batch_count: i64, mode: i32, stream: *mut c_void, precision: EmugemmPrecision) -> EmugemmStatus {
	// SAFETY: the caller's promise, handed on
	unsafe { run(Call { routine: Routine::Batch(Batch { ops: (transa, transb), shape: (m, n, k), alpha, beta, lds: (lda, ldb, ldc), matrices: Matrices::Strided((a, stride_a), (b, stride_b), (c, stride_c)), count: batch_count }), pointer_mode: mode, stream, precision }) }
}
