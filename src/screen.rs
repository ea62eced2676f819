//! the screen: from the operands' row statistics alone, whether the error bound would leave more
//! than an eighth of the rows of the product to the native product under every plan, so that a
//! target precision goes native without paying for the bound
//!
//! The bound divides by `L_ij`, the exact product of the operands' window magnitudes: the parts
//! of row `i` of `A` and of column `j` of `B` within at most six binades of their largest
//! ([`RowStats::window`] counts them). Where the windows of a row and a column meet at no inner
//! index, `L_ij = 0` and the row's bound is infinite under every plan. The screen finds such rows
//! in two ways:
//! - **certain**: a complex row whose imaginary (or real) parts all lie below its window, meeting a
//!   column whose imaginary (or real) parts do too, has `L = 0` in one part of the output: one
//!   scale for both parts cannot certify it, whatever the positions of the entries;
//! - **probable**: a row whose window holds `c` parts and a column whose window holds `d` meet at
//!   no inner index with probability at least `(1 - d / (K - c + 1))^c` where the positions of
//!   the window entries along K are unrelated (wide-range random data). Summed over the columns,
//!   this is the expected number of columns that leave the row infinite; where it is at least
//!   [`EXPECTED_MISSES`], the row is certified with probability at most `e^-16`.
//!
//! The first is a proof; the second is a statistical judgement, wrong for inputs whose window
//! entries line up along K (a few inner indices dominant in every row of `A` and every column of
//! `B`): then the screen computes natively a product the bound would have emulated, which costs
//! time, never accuracy. Both read statistics every backend computes bit for bit the same, so
//! every backend screens alike.

use crate::precision::MAX_NATIVE_SHARE;
use crate::report::NativeReason;
use crate::shape::Shape;
use crate::stats::RowStats;

/// the expected number of columns whose window misses a row's, from which the screen counts the
/// row as one that no plan certifies
const EXPECTED_MISSES: f64 = 16.0;

/// the columns of `B` as the screen reads them: nonzero columns by the pattern of their empty
/// window parts, and by their window counts in power-of-two classes
struct Columns {
	/// whether some nonzero column has its real / imaginary window empty (index: re empty, im
	/// empty)
	empty: [[bool; 2]; 2],
	/// per class `t`: the nonzero columns whose window holds at most [`largest_of`]`(t)` parts
	classes: Vec<usize>,
	/// how many columns of the product each of them stands for
	weight: f64,
}

impl Columns {
	/// the columns `stats`, each standing for `weight` columns of the product
	fn of(stats: &[RowStats], weight: f64) -> Columns {
		let mut columns = Columns {
			empty: [[false; 2]; 2],
			classes: Vec::new(),
			weight,
		};
		for s in stats.iter().filter(|s| !s.is_zero()) {
			let [re, im] = s.window;
			columns.empty[(re == 0) as usize][(im == 0) as usize] = true;
			let class = class_of(re + im);
			if columns.classes.len() <= class {
				columns.classes.resize(class + 1, 0);
			}
			columns.classes[class] += 1;
		}
		columns
	}

	/// whether row `a` (complex) meets a nonzero column with which one part of the output has no
	/// window product: `L_re = Σ qa_re qb_re + qa_im qb_im`, `L_im = Σ qa_re qb_im + qa_im qb_re`
	fn misses_a_part(&self, a: &RowStats) -> bool {
		let [re, im] = a.window.map(|w| w == 0);
		let some = |f: &dyn Fn(bool, bool) -> bool| (0..4).any(|c| self.empty[c / 2][c % 2] && f(c / 2 == 1, c % 2 == 1));
		some(&|b_re, b_im| (re || b_re) && (im || b_im)) || some(&|b_re, b_im| (re || b_im) && (im || b_re))
	}

	/// the expected number of nonzero columns whose window misses that of a row of `c` window
	/// parts, along `k` inner indices, where window entries lie at unrelated positions (a lower
	/// bound: each class counts as its largest window)
	fn expected_misses(&self, c: u32, k: usize) -> f64 {
		self.classes
			.iter()
			.enumerate()
			.filter(|&(_, &count)| count > 0)
			.map(|(class, &count)| self.weight * count as f64 * miss(c as usize, largest_of(class), k))
			.sum()
	}
}

/// the classes of window counts per octave: each class counts as its largest window, at most a
/// factor `2^(1/4)` above its others
const CLASSES_PER_OCTAVE: f64 = 4.0;

/// the class of a window of `d` parts
fn class_of(d: u32) -> usize {
	(f64::from(d.max(1)).log2() * CLASSES_PER_OCTAVE).floor() as usize
}

/// the largest window of class `t`
fn largest_of(t: usize) -> usize {
	((t + 1) as f64 / CLASSES_PER_OCTAVE).exp2().ceil() as usize
}

/// a lower bound of the probability that `c` and `d` positions drawn at random from `k` do not
/// meet: `Π_(t < c) (1 - d / (k - t)) >= (1 - d / (k - c + 1))^c`
fn miss(c: usize, d: usize, k: usize) -> f64 {
	if c + d > k {
		return 0.0;
	}
	(1.0 - d as f64 / (k - c + 1) as f64).powi(c as i32)
}

/// the rows the sampled screen reads: about this many, evenly spaced
const SAMPLE: usize = 256;

/// the share of the sampled rows that the sampled screen must find infinite (more than a quarter:
/// twice the full screen's eighth, so that a sample's spread rarely sends to the native product
/// an input the full screen leaves to the bound)
const SAMPLED_SHARE: usize = 4;

/// the stride of the sampled screen's rows of an operand of `len` rows (of `A`) or columns (of
/// `B`): rows `0, s, 2s, ...`; `None` where the sample would hold more than half of them
pub(crate) fn sample_stride(len: usize) -> Option<usize> {
	let stride = len / SAMPLE;
	(stride >= 2).then_some(stride)
}

/// the sampled rows of `stats`, every `stride`-th from the first
pub(crate) fn sample(stats: &[RowStats], stride: usize) -> Vec<RowStats> {
	stats.iter().step_by(stride).copied().collect()
}

/// the screen on a sample ([`sample_stride`], [`sample`]) of the rows of `A` and the columns of
/// `B` of a `shape` product, before the statistics of the whole operands: each sampled column
/// counts for the columns between it and the next, and the product goes native where more than
/// a quarter of the sampled rows are infinite (`None` otherwise, and where either operand is too
/// small to sample: the full screen decides)
pub(crate) fn sampled((a, b): (&[RowStats], &[RowStats]), shape: Shape, complex: bool) -> Option<NativeReason> {
	let weight = shape.n as f64 / b.len() as f64;
	judge((a, b), shape.k, complex, (weight, SAMPLED_SHARE), Some((a.len(), b.len())))
}

/// why the screen finds that no plan certifies a product: how many of its rows are infinite under
/// every plan, and of them how many certainly; `None` where it cannot tell (the bound decides)
pub(crate) fn screen((a, b): (&[RowStats], &[RowStats]), shape: Shape, complex: bool) -> Option<NativeReason> {
	judge((a, b), shape.k, complex, (1.0, MAX_NATIVE_SHARE), None)
}

/// the screen of the rows `a` against the columns `b` along `k`, each column counted `weight`
/// times: native where more than `1 / share` of the rows are infinite (`sampled`: the sample's
/// sizes, for the report)
fn judge(
	(a, b): (&[RowStats], &[RowStats]),
	k: usize,
	complex: bool,
	(weight, share): (f64, usize),
	sampled: Option<(usize, usize)>,
) -> Option<NativeReason> {
	let m = a.len();
	let columns = Columns::of(b, weight);
	if columns.classes.is_empty() {
		return None;
	}
	let (mut certain, mut probable) = (0usize, 0usize);
	// per class of rows, judged at its largest window (fewer misses than any of its rows): a few
	// dozen judgements, not one per row and column class
	let mut judged: Vec<Option<bool>> = Vec::new();
	for row in a.iter().filter(|s| !s.is_zero()) {
		if complex && columns.misses_a_part(row) {
			certain += 1;
			continue;
		}
		let class = class_of(row.window[0] + row.window[1]);
		if judged.len() <= class {
			judged.resize(class + 1, None);
		}
		let marked = *judged[class].get_or_insert_with(|| columns.expected_misses(largest_of(class) as u32, k) >= EXPECTED_MISSES);
		probable += usize::from(marked);
	}
	if (certain + probable) * share <= m {
		return None;
	}
	let median = |stats: &[RowStats]| {
		let mut w: Vec<u32> = stats.iter().filter(|s| !s.is_zero()).map(|s| s.window[0] + s.window[1]).collect();
		let mid = w.len() / 2;
		w.select_nth_unstable(mid);
		w[mid]
	};
	Some(NativeReason::Screen {
		rows: certain + probable,
		certain,
		median_window: (median(a), median(b)),
		sampled,
	})
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::balance;
	use crate::bound::Bound;
	use crate::operand::Operand;
	use crate::policy::PolicyInput;
	use crate::stats::row_stats;
	use crate::testing::{InnerPattern, Pair, pair, random_matrix};
	use crate::view::View;
	use crate::{Backend, Emulator, Precision, Scalar, Scaling, Scheme};
	use faer::{Mat, c64};

	/// the operands of `a b` balanced as every backend balances them
	fn balanced<T: Scalar>(a: &Mat<T>, b: &Mat<T>) -> (Operand, Operand) {
		let (mut oa, mut ob) = (Operand::lhs(View::of(a.as_ref())), Operand::rhs(View::of(b.as_ref())));
		if let Some(d) = balance::shifts(&oa.inner_ranges(), &ob.inner_ranges(), balance::normal_exponents(T::MANTISSA_BITS)) {
			oa.scale_inner(&d, 1);
			ob.scale_inner(&d, -1);
		}
		(oa, ob)
	}

	/// the screen's verdict and whether the full bound certifies no plan (the native product
	/// reserved for that), on the operands balanced as every backend balances them
	fn verdicts<T: Scalar>(a: &Mat<T>, b: &Mat<T>, precision: Precision) -> (Option<NativeReason>, bool) {
		let (oa, ob) = balanced(a, b);
		let (sa, sb) = (row_stats(&oa), row_stats(&ob));
		let shape = Shape::new(oa.len, ob.len, oa.k);
		let bound: Bound = crate::cpu::bound::compute((&oa, &ob), (&sa, &sb), None, T::MANTISSA_BITS);
		let input = PolicyInput::of::<T>(shape, (Scaling::Fast, false), Some(&bound));
		let native = input.choose(precision).plan.scheme == Scheme::Native;
		(input.screened(precision, (&sa, &sb)).and_then(|c| c.reason), native)
	}

	/// `a` with the rows `rows` taken from `wide`
	fn mixed<T: Scalar>(a: Mat<T>, wide: &Mat<T>, rows: impl Fn(usize) -> bool) -> Mat<T> {
		Mat::from_fn(a.nrows(), a.ncols(), |i, j| if rows(i) { wide[(i, j)] } else { a[(i, j)] })
	}

	/// the adversarial families: the edge of the screen (phi 2 and 3), a few wide rows among
	/// narrow ones (just under and just over an eighth), wide columns of `B` only, complex rows
	/// with small imaginary parts on some rows only, and inner-scaled inputs that the balancing
	/// rescues
	fn families<T: Scalar>(seed: u64) -> Vec<(String, Mat<T>, Mat<T>)> {
		families_of((64, 4096, 64), seed)
	}

	/// [`families`] of `m x k` by `k x n` products
	fn families_of<T: Scalar>((m, k, n): (usize, usize, usize), seed: u64) -> Vec<(String, Mat<T>, Mat<T>)> {
		let mut out = Vec::new();
		for phi in [0.5, 1.0, 2.0, 3.0, 4.0, 8.0] {
			out.push((
				format!("phi {phi}"),
				random_matrix(m, k, phi, seed),
				random_matrix(k, n, phi, seed + 1),
			));
		}
		for wide_rows in [7, 8, 9, 16] {
			let a = mixed(random_matrix(m, k, 1.0, seed), &random_matrix(m, k, 8.0, seed + 2), |i| {
				i % (m / wide_rows) == 0 && i / (m / wide_rows) < wide_rows
			});
			out.push((format!("{wide_rows} wide rows"), a, random_matrix(k, n, 1.0, seed + 1)));
		}
		out.push(("wide B".into(), random_matrix(m, k, 1.0, seed), random_matrix(k, n, 8.0, seed + 1)));
		out.push(("wide A".into(), random_matrix(m, k, 8.0, seed), random_matrix(k, n, 1.0, seed + 1)));
		let (small, _) = pair::<T>(Pair::SmallImaginary { log2_ratio: 40 }, m, k, n, seed);
		for every in [2, 9] {
			let a = mixed(random_matrix(m, k, 1.0, seed), &small, |i| i % every == 0);
			out.push((format!("small Im every {every} rows"), a, random_matrix(k, n, 1.0, seed + 1)));
		}
		for pattern in [
			InnerPattern::Random,
			InnerPattern::Alternating,
			InnerPattern::Blocks,
			InnerPattern::Ramp,
		] {
			let (a, b) = pair::<T>(Pair::InnerScaled { pattern, range: 60 }, m, k, n, seed);
			out.push((format!("inner {pattern:?}"), a, b));
		}
		for family in [
			Pair::Compensating { range: 40 },
			Pair::DominantMeetsSmall,
			Pair::Bimodal { gap: 20 },
			Pair::Integers,
		] {
			let (a, b) = pair::<T>(family, m, k, n, seed);
			out.push((format!("{family:?}"), a, b));
		}
		out
	}

	/// every window lies in its class: no larger than the class's largest
	#[test]
	fn classes_hold_their_windows() {
		for d in 1..5000u32 {
			let t = class_of(d);
			assert!(d as usize <= largest_of(t) && (t == 0 || d as usize > largest_of(t - 1) - 1), "{d}");
		}
	}

	/// the screen never says native where the full bound certifies a plan
	#[test]
	fn never_native_where_the_bound_certifies() {
		fn check<T: Scalar>(precisions: &[Precision]) {
			for (what, a, b) in families::<T>(11) {
				for &p in precisions {
					let (screen, native) = verdicts(&a, &b, p);
					assert!(
						screen.is_none() || native,
						"{} {what} {p}: the screen says {screen:?}, the bound certifies",
						T::NAME
					);
				}
			}
		}
		check::<f64>(&[Precision::F64, Precision::Bits(30)]);
		check::<f32>(&[Precision::F32]);
		check::<c64>(&[Precision::F64]);
	}

	/// the sampled screen never says native where the full bound certifies a plan, on products
	/// large enough to sample (every other row of `A` and column of `B`), and it does catch the
	/// widest ranges. In the dev profile only the f64 families run (the bound takes long there)
	#[test]
	fn sampled_never_native_where_the_bound_certifies() {
		fn check<T: Scalar>(precision: Precision) -> usize {
			let mut caught = 0;
			for (what, a, b) in families_of::<T>((600, 2048, 520), 13) {
				let (oa, ob) = balanced(&a, &b);
				let (sa, sb) = (row_stats(&oa), row_stats(&ob));
				let shape = Shape::new(oa.len, ob.len, oa.k);
				let (xa, xb) = (sample_stride(sa.len()).unwrap(), sample_stride(sb.len()).unwrap());
				let Some(reason) = sampled((&sample(&sa, xa), &sample(&sb, xb)), shape, T::IS_COMPLEX) else {
					continue;
				};
				assert!(
					matches!(
						reason,
						NativeReason::Screen {
							sampled: Some((300, 260)),
							..
						}
					),
					"{reason:?}"
				);
				let bound: Bound = crate::cpu::bound::compute((&oa, &ob), (&sa, &sb), None, T::MANTISSA_BITS);
				let input = PolicyInput::of::<T>(shape, (Scaling::Fast, false), Some(&bound));
				assert_eq!(
					input.choose(precision).plan.scheme,
					Scheme::Native,
					"{} {what} {precision}: the sampled screen says {reason:?}, the bound certifies",
					T::NAME
				);
				caught += 1;
			}
			caught
		}
		assert!(check::<f64>(Precision::F64) >= 2, "phi 4 and 8 caught");
		if cfg!(not(debug_assertions)) {
			check::<f32>(Precision::F32);
			check::<c64>(Precision::F64);
		}
	}

	/// the screen decides wide-range inputs and small imaginary parts under one scale natively, the
	/// report says so, and the plan the oracle runs is the one `Emulator::plan` gives
	#[test]
	fn decides_wide_ranges_natively() {
		fn check<T: Scalar>(a: Mat<T>, b: Mat<T>, precision: Precision) {
			let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
			let mut c = Mat::<T>::zeros(a.nrows(), b.ncols());
			emu.matmul(
				c.as_mut(),
				faer::Accum::Replace,
				(a.as_ref(), b.as_ref()),
				T::from_parts(1.0, 0.0),
				(faer::Par::rayon(0), precision),
			)
			.unwrap();
			let report = emu.last_report().unwrap();
			assert_eq!(report.plan.scheme, Scheme::Native, "{}", T::NAME);
			let Some(NativeReason::Screen { rows, certain: sure, .. }) = report.native_reason else {
				panic!("{}: {report}", T::NAME);
			};
			assert!(rows * 8 > a.nrows() && sure == 0, "{report}");
			assert!(report.to_string().contains("the screen"), "{report}");
			// (NaN bits: compared as written)
			let plan = emu.plan(a.as_ref(), b.as_ref(), precision).unwrap();
			assert_eq!(format!("{plan:?}"), format!("{:?}", report.plan));
			assert_eq!(emu.candidates(a.as_ref(), b.as_ref(), precision).unwrap(), Vec::new());
		}
		let (m, k, n) = (64, 8192, 256);
		for phi in [4.0, 8.0] {
			check::<f64>(random_matrix(m, k, phi, 1), random_matrix(k, n, phi, 2), Precision::F64);
			check::<f32>(random_matrix(m, k, phi, 1), random_matrix(k, n, phi, 2), Precision::F32);
			check::<c64>(random_matrix(m, k, phi, 1), random_matrix(k, n, phi, 2), Precision::F64);
		}
		// small imaginary parts: the screen finds for certain that one scale for both parts
		// certifies nothing, and separately scaled parts are weighed after it, as after the bound
		let (a, b) = pair::<c64>(Pair::SmallImaginary { log2_ratio: 40 }, 32, 256, 32, 3);
		let (screen, native) = verdicts(&a, &b, Precision::F64);
		assert!(
			matches!(screen, Some(NativeReason::Screen { rows: 32, certain: 32, .. })) && native,
			"{screen:?}"
		);
		let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
		let plan = emu.plan(a.as_ref(), b.as_ref(), Precision::F64).unwrap();
		assert!(plan.separate_parts && plan.predicted_bits >= 52.0, "{plan}");
	}

	/// where the screen says "try", the bound decides and the report gives no screen
	#[test]
	fn ordinary_inputs_pay_the_bound() {
		let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
		let a = random_matrix::<f64>(64, 512, 1.0, 1);
		let mut c = Mat::<f64>::zeros(64, 64);
		emu.matmul(
			c.as_mut(),
			faer::Accum::Replace,
			(a.as_ref(), a.transpose()),
			1.0,
			(faer::Par::rayon(0), Precision::F64),
		)
		.unwrap();
		let report = emu.last_report().unwrap();
		assert!(matches!(report.plan.scheme, Scheme::SchemeII { .. }), "{report}");
		assert_eq!(report.native_reason, None);
	}

	/// the screen leaves every product of `examples/fingerprint.rs` to the bound, so that none of
	/// them changes: its shapes, its random and inner-scaled operands, every target precision
	#[test]
	fn fingerprint_products_pay_the_bound() {
		fn check<T: Scalar>() {
			for (m, k, n) in [(1000, 700, 900), (2048, 512, 4096)] {
				let inner = pair::<T>(
					Pair::InnerScaled {
						pattern: InnerPattern::Alternating,
						range: 30,
					},
					m,
					k,
					n,
					3,
				);
				for (a, b) in [(random_matrix::<T>(m, k, 1.0, 1), random_matrix::<T>(k, n, 1.0, 2)), inner] {
					let (oa, ob) = balanced(&a, &b);
					let stats = (row_stats(&oa), row_stats(&ob));
					assert_eq!(
						screen((&stats.0, &stats.1), Shape::new(m, n, k), T::IS_COMPLEX),
						None,
						"{} {m}x{k}x{n}",
						T::NAME
					);
					let (xa, xb) = (sample_stride(m).unwrap(), sample_stride(n).unwrap());
					let samples = (sample(&stats.0, xa), sample(&stats.1, xb));
					assert_eq!(
						sampled((&samples.0, &samples.1), Shape::new(m, n, k), T::IS_COMPLEX),
						None,
						"{} {m}x{k}x{n}, sampled",
						T::NAME
					);
				}
			}
		}
		check::<f64>();
		check::<f32>();
		check::<c64>();
		check::<faer::c32>();
	}

	/// how often the screen and the full bound agree (`cargo test --release --lib agreement --
	/// --ignored --nocapture`): per family and precision, seeds where both say native, where the
	/// screen leaves to the bound a product it ends native, and where the screen says native and
	/// the bound certifies (never, by the test above, on the families it asserts)
	#[test]
	#[ignore]
	fn agreement() {
		fn count<T: Scalar>(precision: Precision, (m, k, n): (usize, usize, usize)) {
			let mut rows: Vec<(String, [usize; 4])> = Vec::new();
			for seed in 0..8 {
				let mut inputs = families::<T>(100 + seed);
				for phi in [0.5, 1.0, 2.0, 3.0, 4.0, 8.0] {
					inputs.push((
						format!("{m}x{k}x{n} phi {phi}"),
						random_matrix(m, k, phi, seed),
						random_matrix(k, n, phi, seed + 50),
					));
				}
				let dominant = |r: usize, c: usize, s: u64| {
					Mat::<T>::from_fn(r, c, |i, j| {
						let x = random_matrix::<T>(1, 1, 4.0, s + (i * c + j) as u64)[(0, 0)];
						if (r > c && j == 0) || (r < c && i == 0) {
							T::from_parts(1e12, 0.0)
						} else {
							x
						}
					})
				};
				inputs.push((
					"dominant inner index".into(),
					dominant(64, 2048, seed),
					dominant(2048, 64, seed + 7),
				));
				for (what, a, b) in inputs {
					let (screen, native) = verdicts(&a, &b, precision);
					let slot = match (screen.is_some(), native) {
						(true, true) => 0,
						(false, true) => 1,
						(true, false) => 2,
						(false, false) => 3,
					};
					match rows.iter_mut().find(|(w, _)| *w == what) {
						Some((_, c)) => c[slot] += 1,
						None => {
							let mut c = [0; 4];
							c[slot] += 1;
							rows.push((what, c));
						},
					}
				}
			}
			for (what, [both, missed, wrong, neither]) in rows {
				println!(
					"{} {precision} {what}: both native {both}, bound only {missed}, screen only {wrong}, both emulate {neither}",
					T::NAME
				);
			}
		}
		count::<f64>(Precision::F64, (64, 8192, 64));
		count::<c64>(Precision::F64, (64, 8192, 64));
		count::<f32>(Precision::F32, (64, 8192, 64));
	}
}
