//! the accuracy promise of every precision against an exact reference, on families of inputs aimed
//! at the weak points of an accuracy model (see `emugemm::testing::Pair`), beside the native product
//!
//! every case checks, against the exact reference and never against the crate's own prediction:
//! - the promise: scaled bits (per part for complex products) >= the native product's bits - 1, or
//!   >= n for `Bits(n)`;
//! - the bound: where a plan ran, the bits its report certifies are <= the bits measured on the
//!   rows it emulated;
//! - the plan: on the families a certified plan exists for, the emulation ran (a native fallback
//!   would meet "native - 1" by construction).
//!
//! prints one table row per case: `EMUGEMM_TEST_N=512 cargo test --release --test accuracy -- --nocapture`
//! (`EMUGEMM_TEST_BACKEND=gpu` computes the emulated products on the GPU: the same bits, faster)

mod common;

use common::{cpu, emulated, native_product, table_backend, test_n};
use emugemm::testing::{ExactProduct, InnerPattern, Pair, Sampling, pair, random_matrix};
use emugemm::{Accum, Emulator, Precision, Scalar, Scaling, Scheme};
use faer::{Mat, c32, c64};

/// the families every precision is checked on, and whether a certified plan must exist for them
/// (at the test's default size): the bound pairs rows with columns through magnitudes within
/// 2^7 of each row's largest (after the inner balancing), so families whose weight lies deeper go
/// native, wholly or by rows
fn families() -> Vec<(Pair, bool)> {
	let mut v = vec![
		(Pair::Phi(0.5), true),
		(Pair::Phi(1.0), true),
		(Pair::SameSign, true),
		(Pair::Integers, true),
		(Pair::Phi(4.0), false),
		(Pair::DominantMeetsSmall, true),
		(Pair::Bimodal { gap: 30 }, true),
		(Pair::Compensating { range: 40 }, true),
		(Pair::Cancellation, true),
		// complex: one scale per row for both parts certifies small ratios; where it cannot, the
		// parts are scaled separately (four real products)
		(Pair::SmallImaginary { log2_ratio: 4 }, true),
		(Pair::SmallImaginary { log2_ratio: 20 }, true),
		(Pair::SmallImaginary { log2_ratio: 40 }, true),
	];
	for pattern in [
		InnerPattern::Random,
		InnerPattern::Alternating,
		InnerPattern::Blocks,
		InnerPattern::Ramp,
	] {
		for range in [8, 60] {
			// the inner balancing undoes these scalings exactly (src/balance.rs)
			v.push((Pair::InnerScaled { pattern, range }, true));
		}
	}
	v
}

/// what one case measured
struct Case {
	/// the promise held
	promise: bool,
	/// the certified bits were at most the measured ones on the emulated rows
	bound: bool,
	/// an emulated plan ran (on at least 7/8 of the rows: the policy leaves no more to the native
	/// product)
	emulated: bool,
}

/// one case: prints its row and returns what held
fn check<T: Scalar>(emu: &Emulator, family: Pair, (m, k, n): (usize, usize, usize), precision: Precision) -> Option<Case> {
	let (a, b) = pair::<T>(family, m, k, n, 42);
	let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	// scaled rows times scaled columns can overflow f32: no product can keep a promise there
	let max = if T::MANTISSA_BITS == 24 { f32::MAX as f64 } else { f64::MAX };
	if (0..exact.len()).any(|x| exact.exact(x).0.abs() > max || exact.exact(x).1.abs() > max) {
		return None;
	}
	let c = emulated(emu, a.as_ref(), b.as_ref(), precision);
	let report = emu.last_report().expect("a report");
	let plan = report.plan;
	let all = exact.accuracy(c.as_ref());
	let rows = exact.accuracy_where(c.as_ref(), |i, _| report.native_rows.binary_search(&i).is_err());
	let native = exact.accuracy(native_product(a.as_ref(), b.as_ref(), precision).as_ref());
	let promise = match precision {
		Precision::Bits(bits) => all.bits >= bits as f64,
		_ => all.bits >= native.bits - 1.0,
	};
	let bound = plan.scheme == Scheme::Native || plan.predicted_bits.is_nan() || rows.bits >= plan.predicted_bits;
	let emulated = plan.scheme != Scheme::Native;
	println!(
		"| {:4} | {:10} | {:44} | {:44} | {:6.1} | {:6.1} | {:6.1} | {:6.1} | {}{} |",
		T::NAME,
		format!("{precision:?}"),
		format!("{family:?}"),
		plan.to_string(),
		all.bits,
		rows.bits,
		native.bits,
		plan.predicted_bits,
		if promise { "ok" } else { "PROMISE BROKEN" },
		if bound { "" } else { ", BOUND BROKEN" },
	);
	Some(Case { promise, bound, emulated })
}

fn header() {
	println!(
		"| type | precision  | inputs                                       | plan                                         |   bits | emul'd | native |  bound | result |"
	);
}

/// every family at every precision: the promise and the bound hold on all, the emulation runs on
/// the families marked so
fn promise_for<T: Scalar>(precisions: &[Precision]) {
	let n = test_n();
	let emu = table_backend();
	header();
	let (mut failures, mut skipped, mut cases) = (Vec::new(), Vec::new(), 0);
	for (family, certified) in families() {
		for &precision in precisions {
			cases += 1;
			let Some(case) = check::<T>(&emu, family, (n, n, n), precision) else {
				skipped.push(format!("{family:?} {precision:?}"));
				continue;
			};
			let what = format!("{family:?} {precision:?}");
			if !case.promise {
				failures.push(format!("{what}: promise"));
			}
			if !case.bound {
				failures.push(format!("{what}: bound"));
			}
			if certified && !case.emulated {
				failures.push(format!("{what}: no emulated plan ran"));
			}
		}
	}
	// the overflowing cases are counted and named: a family that overflows everywhere would
	// otherwise check nothing
	println!(
		"{}: {} cases, {} skipped (the exact product overflows {}): {skipped:?}",
		T::NAME,
		cases,
		skipped.len(),
		T::NAME
	);
	assert!(2 * skipped.len() < cases, "most cases skipped: {skipped:?}");
	assert!(failures.is_empty(), "{} failures (see the table): {failures:#?}", failures.len());
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

/// tiny shapes where one entry decides: the promise holds, and where the bound cannot certify an
/// entry it is computed natively rather than returned wrong (a 1x2x1 product whose large entry
/// meets a zero returned 0 for a value of 1 that the native product gets exactly)
#[test]
fn tiny_shapes() {
	let emu = cpu();
	let a = faer::mat![[f64::powi(2.0, 60), 1.0]];
	let b = faer::mat![[0.0], [1.0]];
	let c = emulated(&emu, a.as_ref(), b.as_ref(), Precision::F64);
	assert_eq!(c[(0, 0)], 1.0);
	for precision in [Precision::Tf32, Precision::F32, Precision::F64, Precision::Bits(30)] {
		for (family, seed) in [
			(
				Pair::InnerScaled {
					pattern: InnerPattern::Alternating,
					range: 60,
				},
				1,
			),
			(Pair::Phi(1.0), 2),
		] {
			for shape in [(1, 1, 1), (1, 2, 1), (2, 3, 1), (1, 7, 3)] {
				let (a, b) = pair::<f64>(family, shape.0, shape.1, shape.2, seed);
				let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
				let got = exact.accuracy(emulated(&emu, a.as_ref(), b.as_ref(), precision).as_ref());
				let native = exact.accuracy(native_product(a.as_ref(), b.as_ref(), precision).as_ref());
				let plan = emu.last_report().unwrap().plan;
				let promise = match precision {
					Precision::Bits(bits) => got.bits >= bits as f64,
					_ => got.bits >= native.bits - 1.0,
				};
				assert!(
					promise,
					"{family:?} {shape:?} {precision:?} ({plan}): {got} against native {native}"
				);
			}
		}
	}
}

/// long K, where a scheme I cancellation credit would be worth 4.6 bits: the certified bits stay
/// below the measured ones with no credit, on data whose errors add up (same sign) and on data
/// whose errors cancel, and the promise holds
#[test]
fn long_k_near_the_margin() {
	let emu = cpu();
	for (family, k) in [(Pair::SameSign, 20011), (Pair::Phi(1.0), 20011), (Pair::Phi(0.5), 30011)] {
		for precision in [Precision::Tf32, Precision::F32, Precision::F64, Precision::Bits(30)] {
			let case = check::<f64>(&emu, family, (3, k, 4), precision).expect("finite");
			assert!(case.promise && case.bound && case.emulated, "{family:?} K = {k} {precision:?}");
		}
	}
}

/// the accurate scaling keeps the promise too, and the plan records it
#[test]
fn promise_with_accurate_scaling() {
	let n = test_n();
	let emu = cpu().with_scaling(Scaling::Accurate);
	header();
	for (family, certified) in families() {
		for precision in [Precision::F64, Precision::Bits(30)] {
			let real = check::<f64>(&emu, family, (n, n, n), precision).expect("finite");
			let plan = emu.last_report().unwrap().plan;
			if let Scheme::SchemeII { scaling, .. } = plan.scheme {
				assert_eq!(scaling, Scaling::Accurate);
			}
			let complex = check::<c64>(&emu, family, (n, n, n), precision).expect("finite");
			for case in [real, complex] {
				assert!(case.promise && case.bound, "{family:?} {precision:?}");
				assert!(!certified || case.emulated, "{family:?} {precision:?}: no emulated plan ran");
			}
		}
	}
}

/// explicit plans run as given, never fall back, and more slices or moduli never cost accuracy
#[test]
fn explicit_plans_run_as_given() {
	let n = test_n();
	let emu = cpu();
	for family in [Pair::Phi(0.5), Pair::Phi(1.0)] {
		let (a, b) = pair::<f64>(family, n, n, n, 3);
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		let plans = (1..=8)
			.map(|slices| (Precision::SchemeI { slices }, Scheme::SchemeI { slices }))
			.chain((2..=20).map(|moduli| {
				(
					Precision::SchemeII { moduli },
					Scheme::SchemeII {
						moduli,
						scaling: Scaling::Fast,
					},
				)
			}));
		let mut last = (0u8, f64::NEG_INFINITY);
		for (precision, scheme) in plans {
			let c = emulated(&emu, a.as_ref(), b.as_ref(), precision);
			let report = emu.last_report().unwrap();
			assert_eq!(report.plan.scheme, scheme);
			assert!(report.native_rows.is_empty());
			let got = exact.accuracy(c.as_ref());
			println!("{family:?} {:<32} bits {:6.1}", scheme.to_string(), got.bits);
			let family_id = matches!(scheme, Scheme::SchemeII { .. }) as u8;
			if family_id == last.0 {
				assert!(got.bits >= last.1 - 0.5, "{precision:?} lost accuracy against the smaller plan");
			}
			last = (family_id, got.bits);
		}
	}
}

/// complex products whose imaginary parts are far smaller than their real parts (a small
/// broadening `i eta`): one scale per row for both parts cannot certify the imaginary part, so the
/// parts are scaled separately, and each part keeps the promise against its own scale
#[test]
fn small_imaginary_parts_scale_separately() {
	fn case<T: Scalar>(log2_ratio: i32, precision: Precision) {
		let emu = cpu();
		let (a, b) = pair::<T>(Pair::SmallImaginary { log2_ratio }, 64, 300, 48, 7);
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		let got = exact.accuracy(emulated(&emu, a.as_ref(), b.as_ref(), precision).as_ref());
		let native = exact.accuracy(native_product(a.as_ref(), b.as_ref(), precision).as_ref());
		let plan = emu.last_report().unwrap().plan;
		println!("{} 2^-{log2_ratio} {precision:?}: {plan}: {got} (native {native})", T::NAME);
		assert!(plan.separate_parts && plan.native_rows == 0, "{plan}");
		assert!(got.bits >= plan.predicted_bits, "{plan}: {got}");
		match precision {
			Precision::Bits(bits) => assert!(got.bits >= bits as f64, "{got}"),
			_ => assert!(got.bits >= native.bits - 1.0, "{got} against native {native}"),
		}
	}
	for log2_ratio in [20, 40, 60] {
		for precision in [Precision::F64, Precision::Bits(40), Precision::F32, Precision::Tf32] {
			case::<c64>(log2_ratio, precision);
		}
		for precision in [Precision::F32, Precision::Tf32, Precision::Bits(20)] {
			case::<c32>(log2_ratio, precision);
		}
	}
}

/// every plan the policy certifies measures at least the bits it certifies, against the exact
/// product: the plan a `Bits(n)` target runs (n from 8 to 52, to 23 for f32), on the rows it
/// emulates; and on inputs the balancing leaves as they are, every other candidate too (scheme I
/// at several slice counts among them), run as the explicit plan it is (the same computation).
/// Every candidate of a target certifies the target (not NaN). f64, c64 and f32; plain and
/// inner-scaled inputs
#[test]
fn certified_plans_measure_their_bits() {
	use std::collections::BTreeSet;
	let emu = cpu();
	let mut slices = BTreeSet::new();
	fn case<T: Scalar>(emu: &Emulator, (a, b): (Mat<T>, Mat<T>), balanced: bool, slices: &mut BTreeSet<u32>) {
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		let measured =
			|c: &Mat<T>, native_rows: &[usize]| exact.accuracy_where(c.as_ref(), |i, _| native_rows.binary_search(&i).is_err()).bits;
		for bits in [8, 12, 16, 20, 23, 24, 30, 36, 42, 48, 52]
			.into_iter()
			.filter(|&n| n < T::MANTISSA_BITS)
		{
			let target = Precision::Bits(bits);
			let wanted = target.target_bits(T::MANTISSA_BITS, a.ncols()).unwrap();
			let c = emulated(emu, a.as_ref(), b.as_ref(), target);
			let report = emu.last_report().unwrap();
			if report.plan.scheme != Scheme::Native {
				let got = measured(&c, &report.native_rows);
				assert!(
					got >= report.plan.predicted_bits,
					"{} {target:?}: measured {got}: {report}",
					T::NAME
				);
			}
			for plan in emu.candidates(a.as_ref(), b.as_ref(), target).unwrap() {
				if plan.scheme == Scheme::Native {
					continue;
				}
				assert!(plan.predicted_bits >= wanted, "{} {target:?}: {plan} below {wanted}", T::NAME);
				// an explicit plan is not balanced, and covers every row
				if balanced || plan.native_rows > 0 || plan.separate_parts {
					continue;
				}
				let explicit = match plan.scheme {
					Scheme::SchemeI { slices: p } => {
						slices.insert(p);
						Precision::SchemeI { slices: p }
					},
					Scheme::SchemeII { moduli, .. } => Precision::SchemeII { moduli },
					Scheme::Native => unreachable!(),
				};
				let c = emulated(emu, a.as_ref(), b.as_ref(), explicit);
				assert_eq!(emu.last_report().unwrap().plan.scheme, plan.scheme, "{explicit:?} ran another plan");
				let got = measured(&c, &[]);
				assert!(
					got >= plan.predicted_bits,
					"{} {explicit:?}: measured {got}, certified {plan}",
					T::NAME
				);
			}
		}
	}
	let inner = Pair::InnerScaled {
		pattern: InnerPattern::Blocks,
		range: 12,
	};
	for seed in [1u64, 2] {
		let plain = |m, k, n| (random_matrix(m, k, 1.0, seed), random_matrix(k, n, 1.0, seed + 9));
		case::<f64>(&emu, plain(40, 300, 30), false, &mut slices);
		case::<f64>(&emu, pair(inner, 40, 300, 30, seed), true, &mut slices);
		case::<c64>(
			&emu,
			(random_matrix(30, 200, 1.0, seed), random_matrix(200, 20, 1.0, seed + 9)),
			false,
			&mut slices,
		);
		case::<f32>(
			&emu,
			(random_matrix(40, 300, 1.0, seed), random_matrix(300, 30, 1.0, seed + 9)),
			false,
			&mut slices,
		);
	}
	println!("scheme I slice counts run as certified candidates: {slices:?}");
	assert!(slices.len() >= 4, "too few scheme I plans among the candidates: {slices:?}");
}

/// `Accum::Add` of real types with `alpha` not 1, judged against the exact product (never against
/// another GEMM): each entry of `old + alpha (A B)` lies within the target's share,
/// `2^-bits (|alpha| scale + |old|)`, of the exact `old + alpha (A B)`, plus the roundings of the
/// combine in `f64` (the product, `alpha` times it, `old` plus that: each at most `2^-53` of its
/// magnitude) and, for `f32`, the final rounding to `f32` (half an ulp of the result). f64 at `F64`
/// and `Bits(40)`; f32 at `F64`, `F32` and `Bits(23)` (the most an `f32` output holds)
#[test]
fn accumulation_with_alpha_against_the_exact_product() {
	accumulation_case::<f64>(&[Precision::F64, Precision::Bits(40)]);
	accumulation_case::<f32>(&[Precision::F64, Precision::F32, Precision::Bits(23)]);
}

fn accumulation_case<T: Scalar>(precisions: &[Precision]) {
	let (m, k, n) = (37, 250, 23);
	let emu = cpu();
	let (a, b) = (random_matrix::<T>(m, k, 1.0, 11), random_matrix::<T>(k, n, 1.0, 12));
	let old = random_matrix::<T>(m, n, 1.0, 13);
	let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	// f64's unit roundoff, and the final rounding's half ulp of `x` (none for f64: the sum is it)
	let unit = 2f64.powi(-53);
	let half_ulp = |x: f64| {
		if T::MANTISSA_BITS == 24 {
			let x = (x as f32).abs();
			0.5 * f64::from(f32::from_bits(x.to_bits() + 1) - x)
		} else {
			0.0
		}
	};
	for alpha in [-0.75, 3.0] {
		for &precision in precisions {
			let bits = precision.target_bits(T::MANTISSA_BITS, k).expect("a target precision");
			let mut c = old.clone();
			emu.matmul(
				c.as_mut(),
				Accum::Add,
				(a.as_ref(), b.as_ref()),
				T::from_parts(alpha, 0.0),
				(faer::Par::Seq, precision),
			)
			.unwrap();
			let report = emu.last_report().unwrap();
			let at = format!("{} {precision:?} alpha = {alpha}", T::NAME);
			assert_ne!(report.plan.scheme, Scheme::Native, "{at}: {report}");
			assert!(report.native_rows.is_empty(), "{at}: {report}");
			assert_eq!(exact.len(), m * n);
			for (x, &(i, j)) in exact.positions().iter().enumerate() {
				let ((hi, lo), _) = exact.exact_double_double(x);
				let (scale, _) = exact.scale(x);
				let (got, old) = (c[(i, j)].re(), old[(i, j)].re());
				let want = accumulated(old, alpha, (hi, lo));
				let error = minus(got, want).abs();
				let magnitude = alpha.abs() * scale + old.abs();
				let tolerance = (-bits).exp2() * magnitude + 3.0 * unit * magnitude + half_ulp(got);
				assert!(
					error <= tolerance,
					"{at} ({i}, {j}): {got:e}, exact {:e}: error {error:e} above {tolerance:e}",
					want.0
				);
			}
		}
	}
}

/// `old + alpha (hi + lo)` as an unevaluated sum `(s, t)`, exact but for a rounding of `t` (about
/// `2^-106` of the sum): `alpha hi` split exactly by an fma, then added to `old` exactly
fn accumulated(old: f64, alpha: f64, (hi, lo): (f64, f64)) -> (f64, f64) {
	let product = alpha * hi;
	let product_error = alpha.mul_add(hi, -product);
	let s = old + product;
	let b = s - old;
	let sum_error = (old - (s - b)) + (product - b);
	(s, sum_error + product_error + alpha * lo)
}

/// `x - (s + t)` for an unevaluated sum `(s, t)`, to about `2^-53` of the difference
fn minus(x: f64, (s, t): (f64, f64)) -> f64 {
	(x - s) - t
}
