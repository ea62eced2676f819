//! faults injected inside staged, tiled, split and device products (feature `faults`): after the
//! Nth device allocation (from buffers freed), launch or transfer fails, the call returns an error (no panic, no hang)
//! or, where the crate recovers, the exact result; no page-locked or device memory is left behind;
//! and the next call is bit for bit the clean one. Then 10,000 mixed calls, errors included, with
//! memory flat
//!
//! these tests need a GPU and a build with the features `cuda` and `faults`: they are ignored
//! otherwise (run them with `--include-ignored`; without a GPU they then fail, never pass). The
//! fault counters are the process's, so the tests take one lock
#![cfg(feature = "faults")]

mod common;

use common::{gpu, on_path, same_bits};
use emugemm::faults::{Fault, count, fail_nth, memory, release_buffers, reset};
use emugemm::testing::random_matrix;
use emugemm::{Accum, EmuMatMul, Emulator, Error, Precision, Scheme};
use faer::{Mat, Par, c32, c64};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

/// one test at a time: the fault counters are the process's
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// the most positions a sweep tries per kind (all of them when a product meets fewer)
const POSITIONS: u64 = 24;

/// device memory a clean call may hold beyond the first clean call's, for the driver's own
/// bookkeeping (events, streams); a leaked plane of these products is larger
const DEVICE_SLACK: usize = 4 << 20;

/// how a product is called
#[derive(Clone, Copy)]
enum Call {
	/// `c += alpha a b` into a host matrix at `F64`
	Host,
	/// the same on device matrices, at `SchemeII { moduli: 15 }`
	Device,
	/// `a.emu_mul(&b)`: a fresh result at `F64`
	Fresh,
}

/// the products the faults interrupt: a staged host product (chunks of 64 KiB), one out of core
/// (4 MiB of device memory: several tiles), one split over two pipelines of GPU 0, device
/// matrices, and a fresh result
fn products() -> Vec<(&'static str, Emulator, Call)> {
	vec![
		("staged", gpu().with_staging_buffers(64 << 10), Call::Host),
		("out of core", gpu().with_device_memory(4 << 20), Call::Host),
		(
			"split over two pipelines",
			on_path(Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false)),
			Call::Host,
		),
		("device matrices", gpu(), Call::Device),
		("fresh result", gpu(), Call::Fresh),
	]
}

/// the product `call` on `emu`
fn run(emu: &Emulator, call: Call, (a, b, old): (&Mat<c64>, &Mat<c64>, &Mat<c64>)) -> Result<Mat<c64>, Error> {
	let alpha = c64::new(0.75, -0.5);
	match call {
		Call::Host => {
			let mut c = old.clone();
			emu.matmul(&mut c, Accum::Add, (a, b), alpha, (Par::rayon(0), Precision::F64))?;
			Ok(c)
		},
		Call::Device => {
			let (da, db) = (emu.upload(a.as_ref())?, emu.upload(b.as_ref())?);
			let mut dc = emu.upload(old.as_ref())?;
			emu.matmul_device(&mut dc, Accum::Add, (&da, &db), alpha, Precision::SchemeII { moduli: 15 })?;
			dc.download()
		},
		Call::Fresh => a.emu_mul_with(emu, b, Precision::F64),
	}
}

/// up to [`POSITIONS`] of `1..=n`, spread evenly, first and last included
fn positions(n: u64) -> Vec<u64> {
	if n <= POSITIONS {
		return (1..=n).collect();
	}
	let mut v: Vec<u64> = (0..POSITIONS).map(|i| 1 + i * (n - 1) / (POSITIONS - 1)).collect();
	v.dedup();
	v
}

#[test]
#[ignore = "needs a GPU"]
fn faults_inside_products() {
	let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
	let (a, b) = (random_matrix::<c64>(300, 280, 1.0, 1), random_matrix::<c64>(280, 260, 1.0, 2));
	let old = random_matrix::<c64>(300, 260, 1.0, 3);
	println!("| product | fault | points met | positions tried | errors | exact results | next call |");
	println!("|---|---|---|---|---|---|---|");
	for (name, emu, how) in products() {
		let run = || run(&emu, how, (&a, &b, &old));
		reset();
		let expected = run().unwrap_or_else(|e| panic!("{name}: the clean call failed: {e}"));
		let report = emu.last_report().unwrap();
		assert_ne!(report.plan.scheme, Scheme::Native, "{name}: {report}");
		// the out-of-core and split products run in tiles, the others whole
		assert_eq!(
			report.tiles.is_some(),
			name == "out of core" || name.starts_with("split"),
			"{name}: {report}"
		);
		let (pinned, device) = memory(0).unwrap();
		for kind in Fault::ALL {
			// allocations are met where the buffers kept between products are not there yet
			let cold = || {
				if kind == Fault::Allocation {
					release_buffers(&emu.gpus()).unwrap();
				}
			};
			cold();
			reset();
			run().unwrap();
			let met = count(kind);
			let (mut errors, mut exact) = (0, 0);
			let tried = positions(met);
			for &p in &tried {
				cold();
				reset();
				fail_nth(kind, p);
				let outcome = catch_unwind(AssertUnwindSafe(&run));
				let fired = count(kind) >= p;
				reset();
				let outcome = outcome.unwrap_or_else(|_| panic!("{name}: {kind:?} fault {p} of {met}: a panic"));
				assert!(fired, "{name}: {kind:?} fault {p} of {met} was never reached");
				match outcome {
					Err(e) => {
						assert!(e.to_string().contains("injected"), "{name}: {kind:?} fault {p}: {e}");
						errors += 1;
					},
					Ok(c) => {
						assert!(
							same_bits(c.as_ref(), expected.as_ref()),
							"{name}: {kind:?} fault {p}: recovered, not exact"
						);
						exact += 1;
					},
				}
				let next = run().unwrap_or_else(|e| panic!("{name}: the call after {kind:?} fault {p} of {met}: {e}"));
				assert!(
					same_bits(next.as_ref(), expected.as_ref()),
					"{name}: the call after {kind:?} fault {p} of {met} differs"
				);
			}
			println!(
				"| {name} | {kind:?} | {met} | {} | {errors} | {exact} | exact {} times |",
				tried.len(),
				tried.len()
			);
		}
		run().unwrap();
		let (pinned_after, device_after) = memory(0).unwrap();
		println!(
			"{name}: page-locked {pinned} -> {pinned_after} bytes, device in use {device} -> {device_after} bytes (tiles {:?})",
			report.tiles
		);
		assert!(
			pinned_after <= pinned,
			"{name}: page-locked memory grew from {pinned} to {pinned_after}"
		);
		assert!(
			device_after <= device + DEVICE_SLACK,
			"{name}: device memory in use grew from {device} to {device_after}"
		);
	}
}

/// the resident set of the process, in bytes
fn resident_bytes() -> usize {
	let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
	let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
	pages * 4096
}

/// one call of the mix: its result (or the error's kind)
fn call(i: usize, emu: &Emulator, split: &Emulator, inputs: &Inputs) -> Result<Vec<u64>, String> {
	let bits = |c: Mat<c64>| {
		c.col_iter()
			.flat_map(|col| col.iter().flat_map(|x| [x.re.to_bits(), x.im.to_bits()]).collect::<Vec<_>>())
			.collect()
	};
	let widen = |c: Mat<c32>| Mat::<c64>::from_fn(c.nrows(), c.ncols(), |r, s| c64::new(c[(r, s)].re as f64, c[(r, s)].im as f64));
	let real = |c: Mat<f64>| Mat::<c64>::from_fn(c.nrows(), c.ncols(), |r, s| c64::new(c[(r, s)], 0.0));
	let err = |e: Error| format!("{:?}", std::mem::discriminant(&e));
	match i % 8 {
		0 => inputs
			.f
			.0
			.emu_mul_with(emu, &inputs.f.1, Precision::F64)
			.map(real)
			.map(bits)
			.map_err(err),
		1 => {
			let mut c = inputs.c.2.clone();
			emu.matmul(
				&mut c,
				Accum::Add,
				(&inputs.c.0, &inputs.c.1),
				c64::new(0.5, 2.0),
				(Par::Seq, Precision::SchemeII { moduli: 12 }),
			)
			.map(|_| bits(c))
			.map_err(err)
		},
		2 => inputs
			.s
			.0
			.emu_mul_with(emu, &inputs.s.1, Precision::F32)
			.map(widen)
			.map(bits)
			.map_err(err),
		// a shape mismatch
		3 => inputs.c.0.emu_mul_with(emu, &inputs.c.0, Precision::F64).map(bits).map_err(err),
		4 => inputs
			.nonfinite
			.emu_mul_with(emu, &inputs.c.1, Precision::F64)
			.map(bits)
			.map_err(err),
		// an injected failure of the second launch
		5 => {
			fail_nth(Fault::Launch, count(Fault::Launch) + 2);
			let r = inputs.c.0.emu_mul_with(emu, &inputs.c.1, Precision::F64).map(bits).map_err(err);
			fail_nth(Fault::Launch, 0);
			r
		},
		6 => (|| {
			let (da, db) = (emu.upload(inputs.c.0.as_ref())?, emu.upload(inputs.c.1.as_ref())?);
			let mut dc = emu.zeros_on_device::<c64>(da.nrows(), db.ncols())?;
			emu.matmul_device(&mut dc, Accum::Replace, (&da, &db), c64::new(1.0, 0.0), Precision::F64)?;
			dc.download()
		})()
		.map(bits)
		.map_err(err),
		_ => inputs
			.c
			.0
			.emu_mul_with(split, &inputs.c.1, Precision::SchemeI { slices: 7 })
			.map(bits)
			.map_err(err),
	}
}

struct Inputs {
	f: (Mat<f64>, Mat<f64>),
	c: (Mat<c64>, Mat<c64>, Mat<c64>),
	s: (Mat<c32>, Mat<c32>),
	nonfinite: Mat<c64>,
}

/// 10,000 calls of eight kinds (types, precisions, host, device and split products, a shape
/// error, non-finite inputs, an injected launch failure): each kind gives the same bits or the
/// same error every time, and the page-locked, device and resident memory after the last call
/// is that after the first thousand
#[test]
#[ignore = "needs a GPU"]
fn ten_thousand_mixed_calls_keep_memory_flat() {
	let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
	reset();
	let (emu, split) = (gpu(), on_path(Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false)));
	let mut nonfinite = random_matrix::<c64>(61, 47, 1.0, 7);
	nonfinite[(3, 5)] = c64::new(f64::INFINITY, 0.0);
	let inputs = Inputs {
		f: (random_matrix(70, 90, 1.0, 1), random_matrix(90, 50, 1.0, 2)),
		c: (
			random_matrix(61, 47, 1.0, 3),
			random_matrix(47, 39, 1.0, 4),
			random_matrix(61, 39, 1.0, 5),
		),
		s: (random_matrix(80, 64, 1.0, 5), random_matrix(64, 72, 1.0, 6)),
		nonfinite,
	};
	let first: Vec<_> = (0..8).map(|i| call(i, &emu, &split, &inputs)).collect();
	for (i, r) in first.iter().enumerate() {
		assert_eq!(r.is_err(), i == 3 || i == 5, "call kind {i}: {r:?}");
	}
	let report = emu.last_report().unwrap();
	assert_ne!(report.plan.scheme, Scheme::Native, "{report}");
	let mut at_1000 = None;
	let started = std::time::Instant::now();
	for i in 8..10_000 {
		assert_eq!(call(i, &emu, &split, &inputs), first[i % 8], "call {i} (kind {})", i % 8);
		if i + 1 == 1000 {
			at_1000 = Some((memory(0).unwrap(), resident_bytes()));
		}
	}
	let ((pinned, device), resident) = at_1000.unwrap();
	let ((pinned_end, device_end), resident_end) = (memory(0).unwrap(), resident_bytes());
	println!(
		"10,000 calls in {:.1?}: page-locked {pinned} -> {pinned_end} bytes, device in use {device} -> {device_end} bytes, resident {resident} -> {resident_end} bytes (after 1,000 -> after 10,000)",
		started.elapsed()
	);
	assert!(pinned_end <= pinned, "page-locked memory grew");
	assert!(device_end <= device + DEVICE_SLACK, "device memory grew");
	assert!(resident_end <= resident + (64 << 20), "resident memory grew by more than 64 MiB");
}
