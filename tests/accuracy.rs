//! the accuracy promise of every precision, against an exact reference, beside the native product
//!
//! prints one table row per case: `EMUGEMM_TEST_N=512 cargo test --release --test accuracy -- --nocapture`
//! (`EMUGEMM_TEST_BACKEND=gpu` computes the emulated products on the GPU: the same bits, faster)

mod common;

use common::{cpu, emulated, native_product, table_backend, test_n};
use emugemm::testing::{Adversarial, ExactProduct, Sampling, adversarial_matrix, random_matrix};
use emugemm::{Emulator, Precision, Scalar, Scaling, Scheme};
use faer::{Mat, c32, c64};

/// the input families of the design's accuracy section
#[derive(Clone, Copy, Debug)]
enum Inputs {
	Phi(f64),
	Adversarial(Adversarial, Adversarial),
}

impl Inputs {
	fn all() -> Vec<Inputs> {
		let mut v: Vec<Inputs> = [0.5, 1.0, 2.0, 4.0].into_iter().map(Inputs::Phi).collect();
		v.push(Inputs::Adversarial(Adversarial::ScaledRows, Adversarial::ScaledCols));
		v.push(Inputs::Adversarial(Adversarial::ZeroRows, Adversarial::HugeEntries));
		v
	}

	fn matrices<T: Scalar>(self, m: usize, k: usize, n: usize, seed: u64) -> (Mat<T>, Mat<T>) {
		match self {
			Inputs::Phi(phi) => (random_matrix(m, k, phi, seed), random_matrix(k, n, phi, seed + 1)),
			Inputs::Adversarial(x, y) => (adversarial_matrix(x, m, k, seed), adversarial_matrix(y, k, n, seed + 1)),
		}
	}

	fn name(self) -> String {
		match self {
			Inputs::Phi(phi) => format!("phi={phi}"),
			Inputs::Adversarial(x, y) => format!("{x:?}/{y:?}"),
		}
	}
}

/// one case: prints its row and returns whether the promise held
fn check<T: Scalar>(emu: &Emulator, inputs: Inputs, precision: Precision, n: usize) -> bool {
	let (a, b) = inputs.matrices::<T>(n, n, n, 42);
	let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	// scaled rows times scaled columns can overflow f32: no product can keep a promise there
	let max = if T::MANTISSA_BITS == 24 { f32::MAX as f64 } else { f64::MAX };
	if (0..exact.len()).any(|k| exact.exact(k).0.abs() > max || exact.exact(k).1.abs() > max) {
		println!(
			"| {:4} | {:24} | {:<34} | {:26} | n/a: the exact product overflows {} |",
			T::NAME,
			format!("{precision:?}"),
			"",
			inputs.name(),
			T::NAME
		);
		return true;
	}
	let c = emulated(emu, a.as_ref(), b.as_ref(), precision);
	let plan = emu.last_report().expect("a report").plan;
	let got = exact.accuracy(c.as_ref());
	let native = exact.accuracy(native_product(a.as_ref(), b.as_ref(), precision).as_ref());
	let ok = match precision {
		Precision::Bits(bits) => got.bits >= bits as f64,
		_ => got.bits >= native.bits - 1.0,
	};
	println!(
		"| {:4} | {:24} | {:<34} | {:26} | {:6.1} | {:6.1} | {:6.1} | {:8.1e} | {} |",
		T::NAME,
		format!("{precision:?}"),
		plan.scheme.to_string(),
		inputs.name(),
		got.bits,
		native.bits,
		plan.predicted_bits,
		got.median_rel,
		if ok { "ok" } else { "FAILED" }
	);
	ok
}

fn header() {
	println!(
		"| type | precision                | plan                               | inputs                     |   bits | native | model | med rel  | promise |"
	);
}

fn promise_for<T: Scalar>(precisions: &[Precision]) {
	let n = test_n();
	let emu = table_backend();
	header();
	let mut failures = 0;
	for inputs in Inputs::all() {
		for &precision in precisions {
			failures += !check::<T>(&emu, inputs, precision, n) as usize;
		}
	}
	assert_eq!(failures, 0, "{failures} cases broke their promise (see the table)");
}

const PROMISES: [Precision; 5] = [
	Precision::Tf32,
	Precision::F32,
	Precision::F64,
	Precision::Bits(20),
	Precision::Bits(40),
];

#[test]
fn promise_f64() {
	promise_for::<f64>(&PROMISES);
}

#[test]
fn promise_c64() {
	promise_for::<c64>(&PROMISES);
}

#[test]
fn promise_f32() {
	promise_for::<f32>(&[Precision::Tf32, Precision::F32, Precision::F64, Precision::Bits(20)]);
}

#[test]
fn promise_c32() {
	promise_for::<c32>(&[Precision::Tf32, Precision::F32, Precision::F64, Precision::Bits(20)]);
}

/// the accurate scaling keeps the promise too, and is about as accurate as the fast scaling at
/// the same moduli count on random dense inputs (its entrywise bound of $|A||B|$ pays off on
/// structured inputs, where the Cauchy–Schwarz bound is loose)
#[test]
fn promise_with_accurate_scaling() {
	let n = test_n();
	let emu = cpu().with_scaling(Scaling::Accurate);
	header();
	let ok = Inputs::all()
		.into_iter()
		.all(|inputs| check::<f64>(&emu, inputs, Precision::F64, n) & check::<c64>(&emu, inputs, Precision::F64, n));
	assert!(ok);
	for phi in [1.0, 4.0] {
		let (a, b) = Inputs::Phi(phi).matrices::<f64>(n, n, n, 7);
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		for moduli in [8, 12, 16, 20] {
			let fast = exact.accuracy(emulated(&cpu(), a.as_ref(), b.as_ref(), Precision::SchemeII { moduli }).as_ref());
			let accurate = exact.accuracy(emulated(&emu, a.as_ref(), b.as_ref(), Precision::SchemeII { moduli }).as_ref());
			println!(
				"phi={phi}, {moduli} moduli: fast {:.1} bits, accurate {:.1} bits",
				fast.bits, accurate.bits
			);
			assert!(accurate.bits >= fast.bits - 1.0, "phi={phi}, {moduli} moduli");
		}
	}
}

/// every explicit plan: more slices or moduli never cost accuracy, and the model's prediction is
/// a lower bound on tame inputs
#[test]
fn explicit_plans_follow_the_model() {
	let n = test_n();
	let emu = cpu();
	for inputs in [Inputs::Phi(0.5), Inputs::Phi(1.0)] {
		let (a, b) = inputs.matrices::<f64>(n, n, n, 3);
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		let plans = (1..=8)
			.map(|slices| Precision::SchemeI { slices })
			.chain((2..=20).map(|moduli| Precision::SchemeII { moduli }));
		let mut last = (0u8, f64::NEG_INFINITY);
		for precision in plans {
			let c = emulated(&emu, a.as_ref(), b.as_ref(), precision);
			let plan = emu.last_report().unwrap().plan;
			let got = exact.accuracy(c.as_ref());
			println!(
				"{:26} {:<32} bits {:6.1}  model {:6.1}",
				inputs.name(),
				plan.scheme.to_string(),
				got.bits,
				plan.predicted_bits
			);
			assert!(
				got.bits >= plan.predicted_bits.min(52.0),
				"{precision:?}: {} bits, model {}",
				got.bits,
				plan.predicted_bits
			);
			let family = matches!(plan.scheme, Scheme::SchemeII { .. }) as u8;
			if family == last.0 {
				assert!(got.bits >= last.1 - 0.5, "{precision:?} lost accuracy against the smaller plan");
			}
			last = (family, got.bits);
		}
	}
}
