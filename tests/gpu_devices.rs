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

use common::device::{download, upload};
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

/// `c = a b` at `precision` on `on`'s GPU through `stream` (a stream of that GPU), `a` and `b`
/// uploaded there: the product's bits and the report's plan
fn product(
	emu: &Emulator,
	(a, b): (&Mat<f64>, &Mat<f64>),
	on: &Arc<CudaStream>,
	(precision, stream): (Precision, Stream<'_>),
) -> (Vec<f64>, Plan) {
	let column_major = |m: &Mat<f64>| {
		(0..m.ncols())
			.flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)]))
			.collect::<Vec<_>>()
	};
	let (da, db) = (upload(on, &column_major(a)), upload(on, &column_major(b)));
	let mut dc = upload(on, &vec![f64::NAN; a.nrows() * b.ncols()]);
	on.synchronize().expect("the uploads");
	{
		let (pa, pb, pc) = (da.device_ptr(on).0, db.device_ptr(on).0, dc.device_ptr_mut(on).0);
		// SAFETY: the views lie within the buffers above, which outlive the product
		let (av, bv, cv) = unsafe {
			(
				DeviceView::<f64>::from_raw(pa, (a.nrows(), a.ncols()), a.nrows()).unwrap(),
				DeviceView::<f64>::from_raw(pb, (b.nrows(), b.ncols()), b.nrows()).unwrap(),
				DeviceViewMut::<f64>::from_raw(pc, (a.nrows(), b.ncols()), a.nrows()).unwrap(),
			)
		};
		emu.gemm_on_stream(cv, 1.0, (av, bv), 0.0, (precision, stream))
			.expect("the product");
	}
	on.context().synchronize().expect("the product's end");
	(download(on, &dc), emu.last_report().expect("a report").plan)
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
		let expected = product(&emu, (&a, &b), &on0, (precision, (&on0).into()));
		assert!(expected.0.iter().all(|x| x.is_finite()), "{precision}: GPU 0's product");
		assert!(
			matches!(expected.1.scheme, Scheme::SchemeII { .. }),
			"{precision}: emulated on GPU 0, not {:?}",
			expected.1.scheme
		);
		// the legacy default stream of the thread's current context: GPU 1's
		gpu1.bind_to_thread().unwrap();
		// SAFETY: the legacy default stream of the current context
		let legacy = unsafe { Stream::from_raw(null_mut()) };
		let got = product(&emu, (&a, &b), &on1, (precision, legacy));
		assert_eq!(
			current(),
			gpu1.cu_ctx(),
			"{precision}: the caller's context after a product on its default stream"
		);
		same(
			&got.0,
			&expected.0,
			&format!("{precision}: GPU 1 on the default stream against GPU 0"),
		);
		assert_eq!(plan_key(&got.1), plan_key(&expected.1), "{precision}: the plan");
		// a stream of GPU 1, and GPU 1's cudarc default stream (a null handle), while GPU 0's
		// context is current
		for (name, stream) in [("a stream", on1.clone()), ("the cudarc default stream", gpu1.default_stream())] {
			gpu0.bind_to_thread().unwrap();
			let got = product(&emu, (&a, &b), &on1, (precision, (&stream).into()));
			assert_eq!(current(), gpu0.cu_ctx(), "{precision}: {name} of GPU 1: the caller's context after");
			same(&got.0, &expected.0, &format!("{precision}: {name} of GPU 1 against GPU 0"));
			assert_eq!(plan_key(&got.1), plan_key(&expected.1), "{precision}: {name}: the plan");
		}
	}
}
