//! the C ABI's bounds on a GPU: a workspace above the process's bound (`limit_device_memory`) and
//! a batch whose host arrays cannot be had are refused with `OutOfMemory` before anything is read
//! or written (`C` keeps its bits), and the context serves the next call. Alone in its binary: the
//! bound is the process's, taken when a GPU's context is made
//!
//! these tests need an NVIDIA GPU: they are ignored otherwise (run them with `--include-ignored`;
//! without a GPU they then fail, never pass)

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use emugemm_c::*;
use std::ffi::CStr;
use std::sync::Arc;

/// the bound of every test here: a product of 512³ doubles needs far more workspace
const BOUND: usize = 1 << 20;

/// the calling thread's last error message
fn last_error() -> String {
	// SAFETY: the library's own NUL-terminated string
	unsafe { CStr::from_ptr(emugemm_last_error()) }.to_string_lossy().into_owned()
}

/// a stream of GPU 0, the bound set before any call of the process
fn stream() -> Arc<CudaStream> {
	limit_device_memory(BOUND);
	CudaContext::new(0).expect("a GPU").new_stream().expect("a stream")
}

/// `C = alpha A B + beta C` by `emugemm_dgemm`, `n x n`, host scalars, on `stream`: strided over
/// `count` products where `count` is given, at scheme II with 14 moduli where `emulated` (an
/// emulated product needs a workspace; `F64` may compute a product natively from its shape, in
/// none), at `F64` otherwise
fn dgemm(
	stream: &Arc<CudaStream>,
	n: usize,
	(a, b, c): (&CudaSlice<f64>, &CudaSlice<f64>, &mut CudaSlice<f64>),
	(count, emulated): (Option<i64>, bool),
) -> EmugemmStatus {
	let (alpha, beta, size) = (1.0f64, 0.5f64, n as i64);
	let precision = match emulated {
		true => EmugemmPrecision {
			kind: EmugemmPrecisionKind::SchemeII as i32,
			parameter: 14,
		},
		false => EmugemmPrecision {
			kind: EmugemmPrecisionKind::F64 as i32,
			parameter: 0,
		},
	};
	let (pa, pb) = (a.device_ptr(stream).0 as *const f64, b.device_ptr(stream).0 as *const f64);
	let pc = c.device_ptr_mut(stream).0 as *mut f64;
	let raw = stream.cu_stream().cast();
	// SAFETY: n x n matrices in buffers of the stream's GPU; a batch's strides are 0, every
	// product the same matrices (refused before any is read)
	unsafe {
		match count {
			None => emugemm_dgemm(
				0, 0, size, size, size, &alpha, pa, size, pb, size, &beta, pc, size, 0, raw, precision,
			),
			Some(count) => emugemm_dgemm_strided_batched(
				0, 0, size, size, size, &alpha, pa, size, 0, pb, size, 0, &beta, pc, size, 0, count, 0, raw, precision,
			),
		}
	}
}

/// `A`, `B` and `C` of one product
type Matrices = (CudaSlice<f64>, CudaSlice<f64>, CudaSlice<f64>);

/// three n x n matrices of doubles, `C` of distinct bits, and `C`'s bits
fn matrices(stream: &Arc<CudaStream>, n: usize) -> (Matrices, Vec<f64>) {
	let values: Vec<f64> = (0..n * n).map(|i| (i % 97) as f64 / 7.0 - 3.0).collect();
	let before: Vec<f64> = (0..n * n).map(|i| (i as f64).sqrt()).collect();
	let made = (
		stream.clone_htod(&values).unwrap(),
		stream.clone_htod(&values).unwrap(),
		stream.clone_htod(&before).unwrap(),
	);
	(made, before)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_workspace_above_the_bound_is_refused_untouched() {
	let stream = stream();
	let ((a, b, mut c), before) = matrices(&stream, 512);
	let status = dgemm(&stream, 512, (&a, &b, &mut c), (None, true));
	assert_eq!(status, EmugemmStatus::OutOfMemory, "{}", last_error());
	assert!(last_error().contains("workspace"), "{}", last_error());
	let after = stream.clone_dtoh(&c).unwrap();
	assert!(after.iter().zip(&before).all(|(x, y)| x.to_bits() == y.to_bits()), "C was written");
	// a product whose workspace fits the bound runs on the same context
	let ((a, b, mut c), _) = matrices(&stream, 16);
	assert_eq!(
		dgemm(&stream, 16, (&a, &b, &mut c), (None, false)),
		EmugemmStatus::Success,
		"{}",
		last_error()
	);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_batch_whose_host_arrays_cannot_be_had_is_refused() {
	let stream = stream();
	let ((a, b, mut c), before) = matrices(&stream, 2);
	// 2^40 products: their addresses alone would take 24 TiB of host memory
	let status = dgemm(&stream, 2, (&a, &b, &mut c), (Some(1 << 40), false));
	assert_eq!(status, EmugemmStatus::OutOfMemory, "{}", last_error());
	let after = stream.clone_dtoh(&c).unwrap();
	assert!(after.iter().zip(&before).all(|(x, y)| x.to_bits() == y.to_bits()), "C was written");
}
