//! products recorded into CUDA graphs (`Emulator::with_graph_recording`): a product on a stream
//! being captured (each capture mode) is recorded, and every replay of the graph decides its plan on the data it finds. The same
//! graph emulates narrow-ranged data (phi = 0.5), computes wide-ranged data natively (phi = 8)
//! and gives non-finite entries natively where the operands hold NaN or infinities; each replay
//! equals the same call uncaptured on the same data, plan and bits. Two products chained in one
//! graph replay in order; a batch on a capturing stream is refused and the capture goes on
//!
//! these tests need an NVIDIA GPU and a build with the `cuda` feature: they are ignored otherwise
//! (run them with `--include-ignored`; without a GPU they then fail, never pass). Run them with
//! `CUDA_MODULE_LOADING=EAGER`, which lanes need: without it they fail, saying so
#![cfg(feature = "cuda")]

mod common;

use common::device::{require_eager_loading, square_download, square_product};
use common::{gpu, plan_key, same_bits};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, sys};
use emugemm::testing::random_matrix;
use emugemm::{DeviceView, DeviceViewMut, Emulator, Error, PendingReport, Precision, Report, Scalar, Scheme};
use faer::{Mat, c64};
use std::sync::Arc;
use std::time::Duration;

/// the three capture modes
const MODES: [sys::CUstreamCaptureMode; 3] = [
	sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
	sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
	sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
];

/// a new stream on GPU 0, of a context whose buffers do not record their use in events: an event
/// recorded while the stream is captured cannot be waited for afterwards (each test orders its
/// work on its one stream)
fn stream() -> Arc<CudaStream> {
	let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("these tests need a GPU: {e}"));
	// SAFETY: before any buffer or stream of this context is made; the tests use one stream each
	unsafe { ctx.disable_event_tracking() };
	ctx.new_stream().expect("a stream")
}

/// the GPU context with products on capturing streams recorded into the graph
fn recording() -> Emulator {
	let emu = gpu();
	require_eager_loading();
	emu.with_graph_recording(true)
}

/// the bytes of `m`, column-major
fn bytes<T: Scalar>(m: &Mat<T>) -> Vec<u8> {
	let v: Vec<T> = (0..m.ncols()).flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)])).collect();
	bytemuck::cast_slice::<T, u8>(&v).to_vec()
}

/// `C = A B` at `F64` on `stream`, of the compact `n x n` matrices of `T` in the bytes `a`, `b`
/// and `c`: the call's pending report
fn product<T: Scalar>(
	emu: &Emulator,
	stream: &Arc<CudaStream>,
	operands: (&CudaSlice<u8>, &CudaSlice<u8>, &mut CudaSlice<u8>),
	n: usize,
) -> Result<PendingReport, Error> {
	square_product::<T>(emu, stream, operands, n, Precision::F64)
}

/// what `record` enqueues on `stream`, captured in `mode` and instantiated: the executable graph
fn captured<R>(
	stream: &Arc<CudaStream>,
	mode: sys::CUstreamCaptureMode,
	record: impl FnOnce() -> R,
) -> (sys::CUgraphExec, sys::CUgraph, R) {
	let raw = stream.cu_stream();
	// SAFETY: a live stream, captured and ended here
	unsafe { sys::cuStreamBeginCapture_v2(raw, mode) }.result().unwrap();
	let recorded = record();
	let (mut graph, mut exec) = (std::ptr::null_mut(), std::ptr::null_mut());
	// SAFETY: the capture begun above; the graph it made, instantiated
	unsafe {
		sys::cuStreamEndCapture(raw, &mut graph).result().expect("the capture ends");
		sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
			.result()
			.expect("the graph instantiates");
	}
	(exec, graph, recorded)
}

/// `exec` launched on `stream`, and the stream waited for, within two minutes (a replay that never
/// ends fails here, not by hanging the run)
fn replayed(exec: sys::CUgraphExec, stream: &Arc<CudaStream>) {
	// SAFETY: an executable graph of this stream's context
	unsafe { sys::cuGraphLaunch(exec, stream.cu_stream()) }
		.result()
		.expect("the graph launches");
	finished(stream);
}

/// `stream` waited for, within two minutes
fn finished(stream: &Arc<CudaStream>) {
	let (done, waited) = std::sync::mpsc::channel();
	let stream = stream.clone();
	std::thread::spawn(move || done.send(stream.synchronize()));
	let synced = waited
		.recv_timeout(Duration::from_secs(120))
		.expect("the stream finishes within two minutes");
	synced.expect("the stream's work succeeds");
}

/// the graph and its executable destroyed
fn destroyed(exec: sys::CUgraphExec, graph: sys::CUgraph) {
	// SAFETY: made by `captured`, destroyed once
	unsafe {
		sys::cuGraphExecDestroy(exec).result().unwrap();
		sys::cuGraphDestroy(graph).result().unwrap();
	}
}

/// the data of one replay: its name, the operands, and what its plan must be
struct Data<T> {
	what: &'static str,
	a: Mat<T>,
	b: Mat<T>,
	expect: fn(&Report) -> bool,
}

/// narrow-ranged operands (emulated), wide-ranged ones (native), operands with NaN and infinities
/// (those entries native), and narrow-ranged ones again
fn kinds<T: Scalar>(n: usize, seed: u64) -> Vec<Data<T>> {
	let narrow = |s: u64| (random_matrix::<T>(n, n, 0.5, s), random_matrix::<T>(n, n, 0.5, s + 1));
	let (wa, wb) = (random_matrix::<T>(n, n, 8.0, seed + 2), random_matrix::<T>(n, n, 8.0, seed + 3));
	let (mut na, mut nb) = narrow(seed + 4);
	na[(3, 5)] = T::from_parts(f64::NAN, 0.0);
	nb[(7, 11)] = T::from_parts(f64::INFINITY, 0.0);
	let (a, b) = narrow(seed);
	let (a2, b2) = narrow(seed + 6);
	let emulated = |r: &Report| matches!(r.plan.scheme, Scheme::SchemeII { .. }) && r.nonfinite_entries == 0;
	vec![
		Data {
			what: "phi = 0.5",
			a,
			b,
			expect: emulated,
		},
		Data {
			what: "phi = 8",
			a: wa,
			b: wb,
			expect: |r| r.plan.scheme == Scheme::Native,
		},
		Data {
			what: "NaN and infinity",
			a: na,
			b: nb,
			expect: |r| matches!(r.plan.scheme, Scheme::SchemeII { .. }) && r.nonfinite_entries > 0,
		},
		Data {
			what: "phi = 0.5 again",
			a: a2,
			b: b2,
			expect: emulated,
		},
	]
}

/// one product uncaptured on `stream`, waited for: the GPU's replay lanes are made at such a
/// product, before any capture (making them would end it)
fn warm_up<T: Scalar>(emu: &Emulator, stream: &Arc<CudaStream>, operands: (&CudaSlice<u8>, &CudaSlice<u8>, &mut CudaSlice<u8>), n: usize) {
	product::<T>(emu, stream, operands, n)
		.and_then(|p| p.wait())
		.expect("the uncaptured warm-up");
}

/// a graph that captured one product, replayed on each kind of data in turn, against the same
/// call uncaptured on the same data: plan and bits equal, and the plan the data calls for
fn replays_decide<T: Scalar>(mode: sys::CUstreamCaptureMode, n: usize, seed: u64) {
	let (emu, stream) = (recording(), stream());
	let mut da = stream.alloc_zeros::<u8>(size_of::<T>() * n * n).unwrap();
	let mut db = stream.alloc_zeros::<u8>(size_of::<T>() * n * n).unwrap();
	let mut dc = stream.alloc_zeros::<u8>(size_of::<T>() * n * n).unwrap();
	let mut uncaptured = stream.alloc_zeros::<u8>(size_of::<T>() * n * n).unwrap();
	stream.synchronize().unwrap();
	warm_up::<T>(&emu, &stream, (&da, &db, &mut uncaptured), n);
	let (exec, graph, pending) = captured(&stream, mode, || product::<T>(&emu, &stream, (&da, &db, &mut dc), n));
	let pending = pending.expect("the product is recorded");
	assert_eq!(pending.replays(), Some(0), "{mode:?}: no replay yet");
	assert!(matches!(pending.wait(), Err(Error::NotReplayed)), "{mode:?}");
	assert_eq!(emu.last_report(), None, "{mode:?}: the context has no report before a replay");
	for (i, data) in kinds::<T>(n, seed).into_iter().enumerate() {
		let what = format!("{} {mode:?}, {}", T::NAME, data.what);
		stream.memcpy_htod(&bytes(&data.a), &mut da).unwrap();
		stream.memcpy_htod(&bytes(&data.b), &mut db).unwrap();
		replayed(exec, &stream);
		assert_eq!(pending.replays(), Some(i as u64 + 1), "{what}: one report per replay");
		let report = pending.try_get().expect("a replay's report").expect("the replay succeeds");
		if i == 0 {
			// the recorded product is the context's last call so far: its report is the replay's
			assert_eq!(emu.last_report().as_ref(), Some(&report), "{what}: the context's last report");
		}
		let got = square_download::<T>(&stream, &dc, n);
		let reference = product::<T>(&emu, &stream, (&da, &db, &mut uncaptured), n)
			.and_then(|p| p.wait())
			.expect("the uncaptured call");
		let expected = square_download::<T>(&stream, &uncaptured, n);
		assert!((data.expect)(&report), "{what}: the replay's plan: {report}");
		assert_eq!(
			plan_key(&report.plan),
			plan_key(&reference.plan),
			"{what}: the uncaptured call's plan"
		);
		assert_eq!(report.nonfinite_entries, reference.nonfinite_entries, "{what}");
		assert!(same_bits(got.as_ref(), expected.as_ref()), "{what}: the uncaptured call's bits");
	}
	destroyed(exec, graph);
}

/// every capture mode, f64 and c64: each replay decides its plan on its data
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn each_replay_decides_its_plan() {
	for (i, mode) in MODES.into_iter().enumerate() {
		replays_decide::<f64>(mode, 512, 10 * i as u64);
	}
	replays_decide::<c64>(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL, 512, 100);
}

/// `C1 = A B`, then `C2 = C1 B`, captured in one graph: each replay computes both in order, each
/// as its uncaptured call does
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn products_chained_in_a_graph_replay_in_order() {
	let (emu, stream, n) = (recording(), stream(), 384);
	let mut buffers: Vec<CudaSlice<u8>> = (0..6).map(|_| stream.alloc_zeros::<u8>(16 * n * n).unwrap()).collect();
	let [da, db, c1, c2, r1, r2] = &mut buffers[..] else {
		unreachable!()
	};
	stream.synchronize().unwrap();
	warm_up::<c64>(&emu, &stream, (&*da, &*db, &mut *r1), n);
	let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
	let (exec, graph, recorded) = captured(&stream, mode, || {
		let first = product::<c64>(&emu, &stream, (&*da, &*db, &mut *c1), n);
		let second = product::<c64>(&emu, &stream, (&*c1, &*db, &mut *c2), n);
		(first, second)
	});
	let (first, second) = (recorded.0.expect("recorded"), recorded.1.expect("recorded"));
	for seed in [1u64, 2, 3] {
		let (a, b) = (random_matrix::<c64>(n, n, 0.5, seed), random_matrix::<c64>(n, n, 0.5, seed + 10));
		stream.memcpy_htod(&bytes(&a), da).unwrap();
		stream.memcpy_htod(&bytes(&b), db).unwrap();
		replayed(exec, &stream);
		assert_eq!((first.replays(), second.replays()), (Some(seed), Some(seed)));
		let reference = product::<c64>(&emu, &stream, (&*da, &*db, &mut *r1), n).unwrap().wait().unwrap();
		let chained = product::<c64>(&emu, &stream, (&*r1, &*db, &mut *r2), n).unwrap().wait().unwrap();
		finished(&stream);
		assert_eq!(plan_key(&first.wait().unwrap().plan), plan_key(&reference.plan), "seed {seed}: A B");
		assert_eq!(
			plan_key(&second.wait().unwrap().plan),
			plan_key(&chained.plan),
			"seed {seed}: (A B) B"
		);
		for (got, expected, what) in [(&*c1, &*r1, "A B"), (&*c2, &*r2, "(A B) B")] {
			let (got, expected) = (
				square_download::<c64>(&stream, got, n),
				square_download::<c64>(&stream, expected, n),
			);
			assert!(same_bits(got.as_ref(), expected.as_ref()), "seed {seed}: {what}");
		}
	}
	destroyed(exec, graph);
}

/// a batch on a stream being captured is a placement error before anything is recorded or
/// enqueued, and the capture ends
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_batch_on_a_capturing_stream_is_refused() {
	let (emu, stream, n) = (recording(), stream(), 256);
	let da = stream.clone_htod(&bytes(&random_matrix::<f64>(n, n, 1.0, 41))).unwrap();
	let mut dc = stream.alloc_zeros::<u8>(8 * n * n).unwrap();
	stream.synchronize().unwrap();
	let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
	let (exec, graph, refused) = captured(&stream, mode, || {
		// SAFETY: the buffers hold n * n elements of f64
		let (a, mut c) = unsafe { (da.transmute::<f64>(n * n).unwrap(), dc.transmute_mut::<f64>(n * n).unwrap()) };
		let av = DeviceView::new(&a, (n, n), n).unwrap();
		let mut cv = [DeviceViewMut::new(&mut c, (n, n), n).unwrap()];
		emu.gemm_batch_on_stream(&mut cv, 1.0, (&[av], &[av]), 0.0, (Precision::F64, (&stream).into()))
	});
	assert!(matches!(refused, Err(Error::Placement { .. })), "{refused:?}");
	destroyed(exec, graph);
}
