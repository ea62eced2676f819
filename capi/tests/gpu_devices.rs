//! the C ABI on a GPU other than the first, as an MPI rank or a program after `cudaSetDevice(1)`
//! calls it: the process's first call, on GPU 1's legacy default stream, runs on GPU 1 (the
//! calling thread's current context), leaves that context current, and equals the same call on
//! GPU 0 bit for bit, with the same plan
//!
//! this test needs two NVIDIA GPUs: it is ignored otherwise (run it with `--include-ignored`); on
//! a machine with one GPU it prints that it skipped. It is alone in its binary, so that its call
//! is the process's first

mod common;

use common::{HOST, N, last_error, precision};
use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut, sys};
use emugemm_c::*;
use std::ptr::null_mut;

/// the calling thread's current context
fn current() -> sys::CUcontext {
	let mut ctx = null_mut();
	// SAFETY: `ctx` is written by the driver
	unsafe { sys::cuCtxGetCurrent(&mut ctx) }.result().expect("the current context");
	ctx
}

/// `C = A B` (n x n, doubles, `values` as A and its reverse as B) by `emugemm_dgemm` at
/// `precision` on the legacy default stream of GPU `ordinal`'s primary context, made current first: C's bits,
/// the report, and the context current after the call
fn dgemm_on(ordinal: usize, n: usize, values: &[f64], precision: EmugemmPrecision) -> (Vec<u64>, EmugemmReport, bool) {
	let gpu = CudaContext::new(ordinal).expect("the GPU");
	let stream = gpu.new_stream().unwrap();
	let reversed: Vec<f64> = values.iter().rev().copied().collect();
	let (a, b) = (stream.clone_htod(values).unwrap(), stream.clone_htod(&reversed).unwrap());
	let mut c = stream.clone_htod(&vec![f64::NAN; n * n]).unwrap();
	stream.synchronize().unwrap();
	let (pa, pb, pc) = (a.device_ptr(&stream).0, b.device_ptr(&stream).0, c.device_ptr_mut(&stream).0);
	gpu.bind_to_thread().unwrap();
	let (alpha, beta, size) = (1.0f64, 0.0f64, n as i64);
	// SAFETY: n x n matrices in buffers of GPU `ordinal`, the legacy default stream of its context
	let status = unsafe {
		emugemm_dgemm(
			N,
			N,
			size,
			size,
			size,
			&alpha,
			pa as *const f64,
			size,
			pb as *const f64,
			size,
			&beta,
			pc as *mut f64,
			size,
			HOST,
			null_mut(),
			precision,
		)
	};
	assert_eq!(status, EmugemmStatus::Success, "GPU {ordinal}: {}", last_error());
	let kept = current() == gpu.cu_ctx();
	let mut report = EmugemmReport::default();
	// SAFETY: a writable report
	assert_eq!(unsafe { emugemm_last_report(&mut report) }, EmugemmStatus::Success);
	gpu.synchronize().unwrap();
	(stream.clone_dtoh(&c).unwrap().iter().map(|x| x.to_bits()).collect(), report, kept)
}

#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn the_first_call_runs_on_the_callers_gpu() {
	let count = CudaContext::device_count().expect("a driver");
	if count < 2 {
		println!("the_first_call_runs_on_the_callers_gpu: SKIPPED, this machine has {count} GPU");
		return;
	}
	let n = 1024;
	let values: Vec<f64> = (0..n * n).map(|i| ((i * 7919 % 1009) as f64 - 504.0) / 97.0).collect();
	// the target precision (its plan may be native) first, then an emulated plan
	for (kind, parameter) in [(EmugemmPrecisionKind::F64, 0), (EmugemmPrecisionKind::SchemeII, 14)] {
		let precision = precision(kind, parameter);
		let (got, on1, kept) = dgemm_on(1, n, &values, precision);
		assert!(kept, "{kind:?}: GPU 1's context is current after the call");
		let (expected, on0, _) = dgemm_on(0, n, &values, precision);
		assert!(got == expected, "{kind:?}: GPU 1's product against GPU 0's");
		assert_eq!(
			(on1.scheme, on1.parameter, on1.native_rows),
			(on0.scheme, on0.parameter, on0.native_rows),
			"{kind:?}: the plans"
		);
		assert_eq!(
			on1.certified_bits.to_bits(),
			on0.certified_bits.to_bits(),
			"{kind:?}: the certified bits"
		);
		if kind == EmugemmPrecisionKind::SchemeII {
			assert_eq!(on1.scheme, EmugemmScheme::SchemeII, "the explicit plan was emulated");
		}
	}
}
