//! threads sharing one context: every product equals, bit for bit, the same product run alone,
//! and each thread's own last report ([`emugemm::last_report`]) describes its own product. The CPU
//! case runs everywhere; the GPU cases (one GPU; two pipelines on GPU 0; GPUs 0 and 1 in both
//! orders where two exist) need a GPU. The GPU runner runs this binary with parallel test
//! threads, so that the GPU tests also overlap one another.

mod common;

use common::{cpu, gpu, on_path, plan_key, same_bits, skipped_on_one_gpu};
use emugemm::testing::{InnerPattern, Pair, pair, random_matrix};
use emugemm::{Accum, Emulator, Precision, Report, Scalar};
use faer::{Mat, c32, c64};
use std::sync::Barrier;

/// one product of the mix: its operands, the old destination it accumulates into, and precision
struct Job<T: Scalar> {
	a: Mat<T>,
	b: Mat<T>,
	old: Mat<T>,
	precision: Precision,
}

impl<T: Scalar> Job<T> {
	fn new((m, k, n): (usize, usize, usize), precision: Precision, seed: u64) -> Self {
		let (a, b) = if seed.is_multiple_of(2) {
			(random_matrix::<T>(m, k, 1.0, seed), random_matrix::<T>(k, n, 1.0, seed + 1))
		} else {
			let family = Pair::InnerScaled {
				pattern: InnerPattern::Blocks,
				range: 20,
			};
			pair::<T>(family, m, k, n, seed)
		};
		Job {
			old: random_matrix::<T>(m, n, 1.0, seed + 2),
			a,
			b,
			precision,
		}
	}

	/// the product by `emu`, with this thread's last report
	fn run(&self, emu: &Emulator) -> (Mat<T>, Report) {
		let mut c = self.old.clone();
		let alpha = T::from_parts(0.75, -0.25);
		emu.matmul(
			c.as_mut(),
			Accum::Add,
			(self.a.as_ref(), self.b.as_ref()),
			alpha,
			(faer::Par::rayon(0), self.precision),
		)
		.unwrap();
		(c, emugemm::last_report().unwrap())
	}
}

/// the mix of every type, several shapes (ragged ones included) and precisions (targets and both
/// kinds of explicit plan), `rounds` products per thread over `threads` threads
fn mix<T: Scalar>(emu: &Emulator, threads: usize, rounds: usize, size: usize) {
	let shapes = [(size, size + 13, size - 7), (size / 2 + 1, 2 * size, size), (7, size, 33)];
	let precisions = [
		Precision::F64,
		Precision::F32,
		Precision::Bits(T::MANTISSA_BITS - 8),
		Precision::SchemeII { moduli: 12 },
		Precision::SchemeI { slices: 4 },
	];
	let jobs: Vec<Job<T>> = (0..threads * rounds)
		.map(|q| Job::new(shapes[q % shapes.len()], precisions[q % precisions.len()], 100 + q as u64))
		.collect();
	// each product alone, first
	let alone: Vec<(Mat<T>, Report)> = jobs.iter().map(|job| job.run(emu)).collect();
	// then every thread's products at once, started together
	let barrier = Barrier::new(threads);
	std::thread::scope(|s| {
		for t in 0..threads {
			let (jobs, alone, barrier) = (&jobs, &alone, &barrier);
			s.spawn(move || {
				barrier.wait();
				for q in (t..jobs.len()).step_by(threads) {
					let (c, report) = jobs[q].run(emu);
					let at = format!("{} thread {t}, product {q} ({:?}): {report}", T::NAME, jobs[q].precision);
					assert!(same_bits(c.as_ref(), alone[q].0.as_ref()), "{at}");
					// this thread's report is its own product's, with the plan it ran alone
					assert_eq!(report.shape, alone[q].1.shape, "{at}");
					assert_eq!(plan_key(&report.plan), plan_key(&alone[q].1.plan), "{at}");
					assert_eq!(report.native_rows, alone[q].1.native_rows, "{at}");
				}
			});
		}
	});
}

fn every_type(emu: &Emulator, threads: usize, rounds: usize, size: usize) {
	mix::<f64>(emu, threads, rounds, size);
	mix::<f32>(emu, threads, rounds, size);
	mix::<c64>(emu, threads, rounds, size);
	mix::<c32>(emu, threads, rounds, size);
}

#[test]
fn threads_share_a_cpu_context() {
	every_type(&cpu(), 6, 2, 40);
}

fn gpu_context(ordinals: &[usize]) -> Emulator {
	let emu = Emulator::on_gpus(ordinals).unwrap_or_else(|e| panic!("these tests need a GPU and the cuda feature: {e}"));
	on_path(emu.with_native_candidate(false))
}

#[test]
#[ignore = "needs a GPU"]
fn threads_share_a_gpu_context() {
	every_type(&gpu(), 8, 2, 300);
}

/// two pipelines of GPU 0 (each product split over both): their locks are taken in one order,
/// so that concurrent split products cannot deadlock
#[test]
#[ignore = "needs a GPU"]
fn threads_share_two_pipelines_of_one_gpu() {
	every_type(&gpu_context(&[0, 0]), 8, 2, 300);
}

/// GPUs 0 and 1 in both orders at once, from two contexts: the same lock order whatever order a
/// context names its GPUs in. Skipped, and said so, on one GPU, unless `EMUGEMM_TEST_GPUS=2` says
/// that the machine has two (then it fails)
#[test]
#[ignore = "needs a GPU"]
fn contexts_over_two_gpus_in_both_orders() {
	let (Ok(forward), Ok(backward)) = (Emulator::on_gpus(&[0, 1]), Emulator::on_gpus(&[1, 0])) else {
		skipped_on_one_gpu("contexts_over_two_gpus_in_both_orders");
		return;
	};
	let (forward, backward) = (
		on_path(forward.with_native_candidate(false)),
		on_path(backward.with_native_candidate(false)),
	);
	std::thread::scope(|s| {
		s.spawn(|| mix::<f64>(&forward, 4, 2, 300));
		s.spawn(|| mix::<f64>(&backward, 4, 2, 300));
		s.spawn(|| mix::<c64>(&forward, 4, 2, 300));
		s.spawn(|| mix::<c64>(&backward, 4, 2, 300));
	});
}
