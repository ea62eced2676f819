//! products on device views return once queued (`Emulator::with_queued_views`): a call behind long work on its stream returns
//! while that work still runs, its report comes once the product is enqueued, and its plan and
//! bits are those of the same product of device matrices (decided on the calling thread); two
//! threads on streams of their own get every product right side by side (products on capturing
//! streams: tests/gpu_graphs.rs)
//!
//! these tests need an NVIDIA GPU and a build with the `cuda` feature: they are ignored otherwise
//! (run them with `--include-ignored`; without a GPU they then fail, never pass). Run them with
//! `CUDA_MODULE_LOADING=EAGER`, which lanes need: without it they fail, saying so
#![cfg(feature = "cuda")]

mod common;

use common::device::{require_eager_loading, square_download, square_product, stream, upload};
use common::{gpu, plan_key, same_bits};
use cudarc::driver::{CudaSlice, CudaStream};
use emugemm::testing::random_matrix;
use emugemm::{Accum, Emulator, Precision, Scalar, Scheme, Tier};
use faer::{Mat, c64};
use std::sync::Arc;

/// the GPU context with queued products on device views
fn queuing() -> Emulator {
	let emu = gpu();
	require_eager_loading();
	emu.with_queued_views(true)
}

/// `m` column-major on the device, as bytes
fn on_device<T: Scalar>(stream: &Arc<CudaStream>, m: &Mat<T>) -> CudaSlice<u8> {
	let v: Vec<T> = (0..m.ncols()).flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)])).collect();
	upload(stream, &v)
}

/// `C = A B` at `precision` on `stream` (see [`square_product`]), its pending report
fn queued<T: Scalar>(
	emu: &Emulator,
	stream: &Arc<CudaStream>,
	operands: (&CudaSlice<u8>, &CudaSlice<u8>, &mut CudaSlice<u8>),
	n: usize,
	precision: Precision,
) -> emugemm::PendingReport {
	square_product::<T>(emu, stream, operands, n, precision).expect("the call")
}

/// `a b` at `precision` as device matrices compute it, and the plan, decided on the calling thread
fn reference<T: Scalar>(emu: &Emulator, (a, b): (&Mat<T>, &Mat<T>), precision: Precision) -> (Mat<T>, emugemm::Plan) {
	let (ua, ub) = (emu.upload(a.as_ref()).unwrap(), emu.upload(b.as_ref()).unwrap());
	let mut uc = emu.zeros_on_device::<T>(a.nrows(), b.ncols()).unwrap();
	emu.matmul_device(&mut uc, Accum::Replace, (&ua, &ub), T::from_parts(1.0, 0.0), precision)
		.unwrap();
	(uc.download().unwrap(), emu.last_report().unwrap().plan)
}

/// a certified product behind about 15 ms of copies on its stream returns while they still run;
/// its pending report is the thread's and the context's last, it names the bound's plan, and the
/// product equals the device matrices' bit for bit, plan and all
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_call_returns_before_the_work_queued_before_it() {
	let (emu, stream) = (queuing(), stream());
	let n = 1024;
	let (a, b) = (random_matrix::<f64>(n, n, 1.0, 31), random_matrix::<f64>(n, n, 1.0, 32));
	let (da, db) = (on_device(&stream, &a), on_device(&stream, &b));
	let mut dc = stream.alloc_zeros::<u8>(8 * n * n).unwrap();
	let filler = stream.alloc_zeros::<f64>(1 << 26).unwrap();
	let mut busy = stream.alloc_zeros::<f64>(1 << 26).unwrap();
	// the GPU's lanes made, their kernels loaded, before the timed call
	queued::<f64>(&emu, &stream, (&da, &db, &mut dc), n, Precision::F64).wait().unwrap();
	stream.synchronize().unwrap();
	for _ in 0..40 {
		stream.memcpy_dtod(&filler, &mut busy).unwrap();
	}
	let before = stream.record_event(None).unwrap();
	let pending = queued::<f64>(&emu, &stream, (&da, &db, &mut dc), n, Precision::F64);
	assert!(!before.is_complete(), "the call waited for the work queued before it");
	let report = pending.wait().expect("the product");
	assert_eq!(report.tier(), Tier::Bound);
	assert!(matches!(report.plan.scheme, Scheme::SchemeII { .. }), "{report}");
	assert_eq!(emu.last_report().as_ref(), Some(&report));
	assert_eq!(emugemm::last_report().as_ref(), Some(&report));
	let got = square_download::<f64>(&stream, &dc, n);
	let (expected, plan) = reference(&emu, (&a, &b), Precision::F64);
	assert_eq!(plan_key(&report.plan), plan_key(&plan));
	assert!(same_bits(got.as_ref(), expected.as_ref()), "the queued product's bits");
}

/// two threads, each with its stream and operands, queue products at once (c64 `F64` and f64
/// `F64`, one after another on each stream, the second reading the first's result): every result
/// equals the device matrices' bit for bit
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_threads_queue_side_by_side() {
	let emu = queuing();
	std::thread::scope(|s| {
		for seed in [1u64, 2] {
			let emu = &emu;
			s.spawn(move || {
				let stream = stream();
				let n = 512;
				let (a, b) = (random_matrix::<c64>(n, n, 1.0, seed), random_matrix::<c64>(n, n, 1.0, seed + 10));
				let (da, db) = (on_device(&stream, &a), on_device(&stream, &b));
				let mut ab = stream.alloc_zeros::<u8>(16 * n * n).unwrap();
				let mut abb = stream.alloc_zeros::<u8>(16 * n * n).unwrap();
				for _ in 0..4 {
					queued::<c64>(emu, &stream, (&da, &db, &mut ab), n, Precision::F64);
					queued::<c64>(emu, &stream, (&ab, &db, &mut abb), n, Precision::F64);
				}
				let first = square_download::<c64>(&stream, &ab, n);
				let second = square_download::<c64>(&stream, &abb, n);
				let (expected_first, _) = reference(emu, (&a, &b), Precision::F64);
				let (expected_second, _) = reference(emu, (&expected_first, &b), Precision::F64);
				assert!(same_bits(first.as_ref(), expected_first.as_ref()), "thread {seed}: A B");
				assert!(same_bits(second.as_ref(), expected_second.as_ref()), "thread {seed}: (A B) B");
			});
		}
	});
}
