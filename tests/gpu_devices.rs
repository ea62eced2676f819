//! products on device views of a GPU other than the first: they run on the GPU of the caller's
//! stream (for a default stream, of the calling thread's current context, or of the cudarc
//! stream's context), leave the calling thread's current context as they found it, and equal
//! the same product on GPU 0 bit for bit, with the same plan
//!
//! these tests need two NVIDIA GPUs and a build with the `cuda` feature: they are ignored
//! otherwise (run them with `--include-ignored`); on a machine with one GPU they print that they
//! skipped
#![cfg(feature = "cuda")]

mod common;

use common::{gpu, plan_key, skipped_on_one_gpu};
use cudarc::driver::{CudaContext, CudaStream, DevicePtr, DevicePtrMut, sys};
use emugemm::testing::random_matrix;
use emugemm::{DeviceView, DeviceViewMut, Emulator, Plan, Precision, Scheme, Stream};
use faer::Mat;
use std::ptr::null_mut;
use std::sync::Arc;

/// the calling thread's current context
fn current() -> sys::CUcontext {
	let mut ctx = null_mut();
	// SAFETY: `ctx` is written by the driver
	unsafe { sys::cuCtxGetCurrent(&mut ctx) }.result().expect("the current context");
	ctx
}

/// `c = a b` at `precision` on `on`'s GPU through `stream` (a stream of that GPU), with `caller`'s
/// context current at the call, the operands in cudarc buffers uploaded there (`cudarc`) or
/// behind their raw addresses: the product's bits, the report's plan, and whether `caller`'s
/// context is current after the call
fn product(
	emu: &Emulator,
	(a, b): (&Mat<f64>, &Mat<f64>),
	on: &Arc<CudaStream>,
	(precision, stream): (Precision, Stream<'_>),
	(caller, cudarc): (&Arc<CudaContext>, bool),
) -> (Vec<f64>, Plan, bool) {
	let column_major = |m: &Mat<f64>| {
		(0..m.ncols())
			.flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)]))
			.collect::<Vec<_>>()
	};
	let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
	let (da, db) = (on.clone_htod(&column_major(a)).unwrap(), on.clone_htod(&column_major(b)).unwrap());
	let mut dc = on.clone_htod(&vec![f64::NAN; m * n]).unwrap();
	on.synchronize().expect("the uploads");
	let on_stream = (precision, stream);
	let kept = if cudarc {
		let (av, bv) = (DeviceView::new(&da, (m, k), m).unwrap(), DeviceView::new(&db, (k, n), k).unwrap());
		let cv = DeviceViewMut::new(&mut dc, (m, n), m).unwrap();
		caller.bind_to_thread().unwrap();
		emu.gemm_on_stream(cv, 1.0, (av, bv), 0.0, on_stream).expect("the product");
		current() == caller.cu_ctx()
	} else {
		let (pa, pb, pc) = (da.device_ptr(on).0, db.device_ptr(on).0, dc.device_ptr_mut(on).0);
		// SAFETY: the views lie within the buffers above, which outlive the product
		let (av, bv, cv) = unsafe {
			(
				DeviceView::<f64>::from_raw(pa, (m, k), m).unwrap(),
				DeviceView::<f64>::from_raw(pb, (k, n), k).unwrap(),
				DeviceViewMut::<f64>::from_raw(pc, (m, n), m).unwrap(),
			)
		};
		caller.bind_to_thread().unwrap();
		emu.gemm_on_stream(cv, 1.0, (av, bv), 0.0, on_stream).expect("the product");
		current() == caller.cu_ctx()
	};
	on.context().synchronize().expect("the product's end");
	(on.clone_dtoh(&dc).unwrap(), emu.last_report().expect("a report").plan, kept)
}

/// `got` and `expected` hold the same bits
fn same(got: &[f64], expected: &[f64], what: &str) {
	assert!(
		got.len() == expected.len() && got.iter().zip(expected).all(|(x, y)| x.to_bits() == y.to_bits()),
		"{what}"
	);
}

#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn products_run_on_the_callers_gpu_and_keep_its_context() {
	// the context touches GPU 0 first, as the C ABI's and the interposer's do
	let emu = gpu();
	if CudaContext::device_count().expect("a driver") < 2 {
		return skipped_on_one_gpu("products_run_on_the_callers_gpu_and_keep_its_context");
	}
	let (gpu0, gpu1) = (CudaContext::new(0).unwrap(), CudaContext::new(1).unwrap());
	let (on0, on1) = (gpu0.new_stream().unwrap(), gpu1.new_stream().unwrap());
	let (a, b) = (random_matrix::<f64>(300, 260, 2.0, 1), random_matrix::<f64>(260, 200, 2.0, 2));
	for precision in [Precision::F64, Precision::SchemeII { moduli: 14 }] {
		let expected = product(&emu, (&a, &b), &on0, (precision, (&on0).into()), (&gpu0, true));
		assert!(expected.0.iter().all(|x| x.is_finite()), "{precision}: GPU 0's product");
		// the explicit plan is emulated; the target's may be native (its plan must still match)
		if precision != Precision::F64 {
			assert!(
				matches!(expected.1.scheme, Scheme::SchemeII { .. }),
				"{precision}: emulated on GPU 0, not {:?}",
				expected.1.scheme
			);
		}
		// SAFETY: the legacy default stream of the current context
		let legacy = unsafe { Stream::from_raw(null_mut()) };
		let gpu1_default = gpu1.default_stream();
		let cases: [(&str, Stream<'_>, &Arc<CudaContext>, bool); 3] = [
			// raw pointers on the legacy default stream of the thread's current context, GPU 1's
			("the legacy default stream, GPU 1 current", legacy, &gpu1, false),
			// cudarc buffers on a stream of GPU 1, and on its cudarc default stream (a null
			// handle), while GPU 0's context is current
			("a stream of GPU 1, GPU 0 current", (&on1).into(), &gpu0, true),
			("GPU 1's cudarc default stream, GPU 0 current", (&gpu1_default).into(), &gpu0, true),
		];
		for (name, stream, caller, cudarc) in cases {
			let got = product(&emu, (&a, &b), &on1, (precision, stream), (caller, cudarc));
			assert!(got.2, "{precision}: {name}: the caller's context is not current after the call");
			same(&got.0, &expected.0, &format!("{precision}: {name}: against GPU 0"));
			assert_eq!(plan_key(&got.1), plan_key(&expected.1), "{precision}: {name}: the plan");
		}
	}
}
