//! the benchmark's queued calls (`queued`): what a product on device views costs the host, and how
//! products of two threads share the GPU, each row for the call waited for (the default) and
//! queued (`Emulator::with_queued_views(true)`), in one process.
//! - `queued host`: `F64` of f64 at 8192³ on a stream that holds about 10 ms of unrelated work
//!   (four DGEMMs of 4096³) enqueued before the call: the call's host time (median of 5), whether
//!   that work was still running when the call returned, and whether the result and the plan equal
//!   those of the same call on a drained stream, bit for bit;
//! - `queued threads`: `F64` of c64 at 2048³, 20 products per thread, each thread on a stream and
//!   buffers of its own: one thread alone, then two at once, each from its first call to its
//!   stream's end (host wall time); the two threads' time over twice one thread's

use super::grid::{gemm, multiply, upload};
use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use emugemm::{Emulator, Precision};
use faer::c64;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// the rows of the queued calls
pub fn queued(rows: &mut dyn FnMut(String)) {
	let ctx = CudaContext::new(0).expect("GPU 0");
	for queued in [false, true] {
		let emu = Emulator::new().expect("a GPU context").with_queued_views(queued);
		host_time(&ctx, &emu, rows);
		threads(&ctx, &emu, rows);
	}
}

/// how `emu` runs products on device views, for the rows
fn mode(emu: &Emulator) -> &'static str {
	if emu.queued_views() { "queued" } else { "waited for" }
}

/// `queued host` (see the module's docs)
fn host_time(ctx: &Arc<CudaContext>, emu: &Emulator, rows: &mut dyn FnMut(String)) {
	let (n, unrelated) = (8192, 4096);
	let stream = ctx.new_stream().expect("a stream");
	let handle = CudaBlas::new(stream.clone()).expect("cuBLAS");
	let (a, b, c) = (
		upload::<f64>(&stream, n * n, (1.0, 1)),
		upload::<f64>(&stream, n * n, (1.0, 2)),
		upload::<f64>(&stream, n * n, (0.0, 3)),
	);
	let busy = upload::<f64>(&stream, 3 * unrelated * unrelated, (1.0, 4));
	let addr = |x: &CudaSlice<u8>| x.device_ptr(&stream).0;
	let (pa, pb, pc, pw) = (addr(&a), addr(&b), addr(&c), addr(&busy));
	let words = (unrelated * unrelated * 8) as u64;
	let at = ((n, n, n), (pa, pb, pc));
	// the reference: the call on a drained stream
	multiply::<f64>(emu, &stream, at, Precision::F64);
	stream.synchronize().expect("the stream");
	let reference = (
		stream.clone_dtoh(&c).expect("the result"),
		emu.last_report().expect("a report").plan,
	);
	let (mut hosts, mut still_running, mut same) = (Vec::new(), 0, true);
	for _ in 0..5 {
		stream.synchronize().expect("the stream");
		let start = stream.record_event(None).expect("an event");
		for _ in 0..4 {
			gemm::<f64>(&handle, (unrelated, unrelated, unrelated), (pw, pw + words, pw + 2 * words));
		}
		let before = stream.record_event(None).expect("an event");
		let returned = Instant::now();
		multiply::<f64>(emu, &stream, at, Precision::F64);
		hosts.push(returned.elapsed());
		still_running += usize::from(!before.is_complete());
		stream.synchronize().expect("the stream");
		let queued_ms = start.elapsed_ms(&before).expect("the span");
		let plan = emu.last_report().expect("a report").plan;
		same &= stream.clone_dtoh(&c).expect("the result") == reference.0 && plan == reference.1;
		rows(format!(
			"| queued host run | f64 | {plan} | {n} | {}: unrelated work before the call {queued_ms:.2} ms | | | | | | | |",
			mode(emu)
		));
	}
	hosts.sort();
	rows(format!(
		"| queued host | f64 | {} | {n} | {}: host time of the call {:.1} us (median of 5; max {:.1} us); the work before it still running at the return in {still_running} of 5; result and plan equal to the drained stream's: {same} | | | | | | | |",
		reference.1,
		mode(emu),
		micros(hosts[2]),
		micros(hosts[4]),
	));
}

/// `queued threads` (see the module's docs)
fn threads(ctx: &Arc<CudaContext>, emu: &Emulator, rows: &mut dyn FnMut(String)) {
	let (n, count) = (2048, 20);
	let callers: Vec<Caller> = (0..2).map(|seed| Caller::new(ctx, n, seed)).collect();
	// warm: each stream's lane made, its workspace allocated
	for caller in &callers {
		caller.run(emu, n, 1, &Barrier::new(1));
	}
	let alone = (0..3).map(|_| callers[0].run(emu, n, count, &Barrier::new(1))).min().expect("runs");
	let both = (0..3)
		.map(|_| {
			let barrier = Barrier::new(2);
			std::thread::scope(|s| {
				let runs: Vec<_> = callers
					.iter()
					.map(|caller| s.spawn(|| caller.run(emu, n, count, &barrier)))
					.collect();
				runs.into_iter().map(|r| r.join().expect("a thread")).max().expect("two")
			})
		})
		.min()
		.expect("runs");
	let plan = emu.last_report().map_or("?".into(), |r| r.plan.to_string());
	rows(format!(
		"| queued threads | c64 | {plan} | {n} | {}: {count} products a thread: one thread {:.2} ms, two threads {:.2} ms: {:.3} of twice one thread's (best of 3) | | | | | | | |",
		mode(emu),
		alone.as_secs_f64() * 1e3,
		both.as_secs_f64() * 1e3,
		both.as_secs_f64() / (2.0 * alone.as_secs_f64())
	));
}

/// one thread's stream and operands
struct Caller {
	stream: Arc<CudaStream>,
	buffers: [CudaSlice<u8>; 3],
}

impl Caller {
	fn new(ctx: &Arc<CudaContext>, n: usize, seed: u64) -> Self {
		let stream = ctx.new_stream().expect("a stream");
		let buffers = [1, 2, 3].map(|i| upload::<c64>(&stream, n * n, (if i == 3 { 0.0 } else { 1.0 }, 10 * seed + i)));
		Caller { stream, buffers }
	}

	/// `count` products on the lane's stream, started when `barrier` opens: the host time from
	/// then to the stream's end
	fn run(&self, emu: &Emulator, n: usize, count: usize, barrier: &Barrier) -> Duration {
		let addr = |x: &CudaSlice<u8>| x.device_ptr(&self.stream).0;
		let at = ((n, n, n), (addr(&self.buffers[0]), addr(&self.buffers[1]), addr(&self.buffers[2])));
		self.stream.synchronize().expect("the stream");
		barrier.wait();
		let start = Instant::now();
		for _ in 0..count {
			multiply::<c64>(emu, &self.stream, at, Precision::F64);
		}
		self.stream.synchronize().expect("the stream");
		start.elapsed()
	}
}

fn micros(d: Duration) -> f64 {
	d.as_secs_f64() * 1e6
}
