//! the exact reference product: dot products accumulated without any rounding in a long
//! fixed-point accumulator, then rounded once (to `f64` and to a double-double pair)

use super::fixed::{FixedSum, decompose};
use crate::Scalar;
use faer::MatRef;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// which entries of the product [`ExactProduct::compute`] evaluates
///
/// # example
/// ```
/// use emugemm::testing::Sampling;
/// let s = Sampling::Sampled { entries: 100, seed: 1 };
/// assert_ne!(s, Sampling::Full);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sampling {
	/// every entry
	Full,
	/// `entries` distinct pseudo-random entries (drawn with `ChaCha8Rng::seed_from_u64(seed)`)
	/// plus the four corners; every entry when that covers the whole product
	Sampled {
		/// how many random entries to draw (the corners come on top)
		entries: usize,
		/// the seed of the draw
		seed: u64,
	},
}

impl Sampling {
	/// the selected `(i, j)` positions of an `nrows x ncols` product, sorted in column-major order
	///
	/// # example
	/// ```
	/// use emugemm::testing::Sampling;
	/// let pos = Sampling::Sampled { entries: 10, seed: 3 }.positions(100, 50);
	/// assert!(pos.len() >= 10 && pos.len() <= 14);
	/// assert!(pos.contains(&(99, 49)));
	/// assert_eq!(Sampling::Full.positions(2, 2), vec![(0, 0), (1, 0), (0, 1), (1, 1)]);
	/// ```
	pub fn positions(&self, nrows: usize, ncols: usize) -> Vec<(usize, usize)> {
		let total = nrows * ncols;
		let full = || (0..ncols).flat_map(|j| (0..nrows).map(move |i| (i, j))).collect();
		let Sampling::Sampled { entries, seed } = *self else {
			return full();
		};
		if total == 0 {
			return Vec::new();
		}
		let mut chosen = std::collections::BTreeSet::new();
		for (i, j) in [(0, 0), (nrows - 1, 0), (0, ncols - 1), (nrows - 1, ncols - 1)] {
			chosen.insert(i + j * nrows);
		}
		if entries.saturating_add(chosen.len()) >= total {
			return full();
		}
		let mut rng = ChaCha8Rng::seed_from_u64(seed);
		let mut drawn = 0;
		while drawn < entries {
			if chosen.insert(rng.random_range(0..total as u64) as usize) {
				drawn += 1;
			}
		}
		// a BTreeSet iterates in increasing linear (column-major) index
		chosen.into_iter().map(|k| (k % nrows, k / nrows)).collect()
	}
}

/// the exact value of one entry: real and imaginary parts as double-double pairs, and the scale
/// of each part
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ExactEntry {
	re: (f64, f64),
	im: (f64, f64),
	scale: (f64, f64),
}

/// the exact product `A * B` on a set of entries, as reference for accuracy measurements
///
/// each selected entry `(i, j)` holds the exact `(A B)_ij`, rounded to a double-double pair for
/// the real and imaginary parts separately, and the scale of each part rounded to `f64`:
/// `(|A| |B|)_ij = sum_h |a_ih| |b_hj|` for real types; for complex types the real part's
/// `sum_h |re a_ih| |re b_hj| + |im a_ih| |im b_hj|` and the imaginary part's
/// `sum_h |re a_ih| |im b_hj| + |im a_ih| |re b_hj|` (users read the parts separately: a small
/// imaginary part is measured against its own scale). the results do not depend on the number of
/// threads.
///
/// # example
/// ```
/// use emugemm::testing::{ExactProduct, Sampling};
/// let a = faer::mat![[1e300, 1.0, 1.0]];
/// let b = faer::mat![[1.0], [1.0], [-1e300]];
/// let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
/// assert_eq!(exact.exact(0), (1.0, 0.0));
/// assert_eq!(exact.positions(), &[(0, 0)]);
/// ```
#[derive(Clone, Debug)]
pub struct ExactProduct {
	nrows: usize,
	ncols: usize,
	positions: Vec<(usize, usize)>,
	values: Vec<ExactEntry>,
}

impl ExactProduct {
	/// evaluates the selected entries of `a * b` exactly, in parallel over the entries
	///
	/// # panics
	/// when `a.ncols() != b.nrows()`, when the inner dimension is `2^30` or more, or when an input
	/// entry is not finite.
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling, random_matrix};
	/// let a = random_matrix::<faer::c64>(50, 40, 2.0, 1);
	/// let b = random_matrix::<faer::c64>(40, 60, 2.0, 2);
	/// let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Sampled { entries: 20, seed: 9 });
	/// assert!(exact.len() >= 20);
	/// ```
	pub fn compute<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>, sampling: Sampling) -> ExactProduct {
		assert!(
			a.ncols() == b.nrows(),
			"ExactProduct::compute: shape mismatch, A is {}x{} but B is {}x{}",
			a.nrows(),
			a.ncols(),
			b.nrows(),
			b.ncols()
		);
		assert!(
			a.ncols() < (1 << 30),
			"ExactProduct::compute: inner dimension {} is not below 2^30",
			a.ncols()
		);
		let (a_rows, b_cols) = (exponent_ranges(a, "A", false), exponent_ranges(b, "B", true));
		let positions = sampling.positions(a.nrows(), b.ncols());
		let values = evaluate(a, b, &a_rows, &b_cols, &positions);
		ExactProduct {
			nrows: a.nrows(),
			ncols: b.ncols(),
			positions,
			values,
		}
	}

	/// the number of rows of the product
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::Mat::<f64>::zeros(3, 2);
	/// let b = faer::Mat::<f64>::zeros(2, 5);
	/// let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	/// assert_eq!((exact.nrows(), exact.ncols(), exact.len()), (3, 5, 15));
	/// ```
	pub fn nrows(&self) -> usize {
		self.nrows
	}

	/// the number of columns of the product (see [`ExactProduct::nrows`])
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::Mat::<f32>::zeros(3, 2);
	/// let exact = ExactProduct::compute(a.as_ref(), a.transpose(), Sampling::Full);
	/// assert_eq!(exact.ncols(), 3);
	/// ```
	pub fn ncols(&self) -> usize {
		self.ncols
	}

	/// the number of evaluated entries
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::Mat::<f64>::zeros(0, 2);
	/// let exact = ExactProduct::compute(a.as_ref(), a.transpose(), Sampling::Full);
	/// assert!(exact.is_empty());
	/// assert_eq!(exact.len(), 0);
	/// ```
	pub fn len(&self) -> usize {
		self.positions.len()
	}

	/// true when no entry was evaluated (an empty product)
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::Mat::<f64>::zeros(2, 0);
	/// let exact = ExactProduct::compute(a.as_ref(), a.transpose(), Sampling::Full);
	/// assert!(!exact.is_empty());
	/// assert_eq!(exact.exact(3), (0.0, 0.0));
	/// ```
	pub fn is_empty(&self) -> bool {
		self.positions.is_empty()
	}

	/// the `(i, j)` positions of the evaluated entries, in column-major order; the `k`-th entry of
	/// the other accessors is at `positions()[k]`
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::Mat::<f64>::identity(2, 2);
	/// let exact = ExactProduct::compute(a.as_ref(), a.as_ref(), Sampling::Full);
	/// assert_eq!(exact.positions()[1], (1, 0));
	/// ```
	pub fn positions(&self) -> &[(usize, usize)] {
		&self.positions
	}

	/// the `k`-th evaluated entry, real and imaginary parts each correctly rounded to `f64`
	/// (the imaginary part is `0` for real types)
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::mat![[1.0, f64::powi(2.0, -53)]];
	/// let b = faer::mat![[1.0], [1.0 + f64::EPSILON]];
	/// let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	/// assert_eq!(exact.exact(0).0, 1.0 + f64::EPSILON);
	/// ```
	pub fn exact(&self, k: usize) -> (f64, f64) {
		let v = &self.values[k];
		(v.re.0, v.im.0)
	}

	/// the `k`-th evaluated entry as double-double pairs `((re_hi, re_lo), (im_hi, im_lo))`, with
	/// `hi` the correctly rounded value and `lo` the correctly rounded remainder
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::mat![[1.0, 1e-30]];
	/// let b = faer::mat![[1.0], [1.0]];
	/// let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	/// assert_eq!(exact.exact_double_double(0), ((1.0, 1e-30), (0.0, 0.0)));
	/// ```
	pub fn exact_double_double(&self, k: usize) -> ((f64, f64), (f64, f64)) {
		let v = &self.values[k];
		(v.re, v.im)
	}

	/// the scales of the real and imaginary parts of the `k`-th evaluated entry, the denominators
	/// of [`Accuracy::bits`](super::Accuracy::bits) (the imaginary part's is 0 for real types)
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::mat![[3.0, -4.0]];
	/// let b = faer::mat![[1.0], [1.0]];
	/// let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	/// assert_eq!((exact.exact(0).0, exact.scale(0)), (-1.0, (7.0, 0.0)));
	/// let z = faer::mat![[faer::c64::new(1.0, 1e-9)]];
	/// let exact = ExactProduct::compute(z.as_ref(), z.as_ref(), Sampling::Full);
	/// assert_eq!(exact.scale(0), (1.0 + 1e-18, 2e-9));
	/// ```
	pub fn scale(&self, k: usize) -> (f64, f64) {
		self.values[k].scale
	}
}

/// the range `(min, max)` of the exponents (as given by `decompose`) of the nonzero parts of each
/// row of `m` (each column when `by_col`); `min > max` for a zero row. panics on a non-finite entry
fn exponent_ranges<T: Scalar>(m: MatRef<'_, T>, name: &str, by_col: bool) -> Vec<(i32, i32)> {
	let mut ranges = vec![(i32::MAX, i32::MIN); if by_col { m.ncols() } else { m.nrows() }];
	for j in 0..m.ncols() {
		for i in 0..m.nrows() {
			let x = m[(i, j)];
			assert!(
				x.is_finite_value(),
				"ExactProduct::compute: {name}[({i}, {j})] = {x:?} is not finite"
			);
			let r = &mut ranges[if by_col { j } else { i }];
			for part in [x.re(), x.im()] {
				let (_, mant, e) = decompose(part);
				if mant != 0 {
					*r = (r.0.min(e), r.1.max(e));
				}
			}
		}
	}
	ranges
}

/// evaluates the entries at `positions`, in parallel over the rows (each row of `A` is read once)
fn evaluate<T: Scalar>(
	a: MatRef<'_, T>,
	b: MatRef<'_, T>,
	a_rows: &[(i32, i32)],
	b_cols: &[(i32, i32)],
	positions: &[(usize, usize)],
) -> Vec<ExactEntry> {
	let mut by_row = vec![Vec::new(); a.nrows()];
	for (k, &(i, j)) in positions.iter().enumerate() {
		by_row[i].push((k, j));
	}
	let computed: Vec<Vec<(usize, ExactEntry)>> = by_row
		.par_iter()
		.enumerate()
		.filter(|(_, entries)| !entries.is_empty())
		.map(|(i, entries)| {
			let row: Vec<T> = (0..a.ncols()).map(|h| a[(i, h)]).collect();
			let entry = |&(k, j): &(usize, usize)| (k, exact_entry(&row, b.col(j), a_rows[i], b_cols[j]));
			entries.iter().map(entry).collect()
		})
		.collect();
	let mut values = vec![ExactEntry::default(); positions.len()];
	for (k, v) in computed.into_iter().flatten() {
		values[k] = v;
	}
	values
}

/// one entry: `row` is the row of `A`, `col` the column of `B`; `row_exp`, `col_exp` their
/// exponent ranges
fn exact_entry<T: Scalar>(row: &[T], col: faer::ColRef<'_, T>, row_exp: (i32, i32), col_exp: (i32, i32)) -> ExactEntry {
	let (lo, hi, k) = (row_exp.0.saturating_add(col_exp.0), row_exp.1.saturating_add(col_exp.1), row.len());
	let new_sum = || {
		if lo > hi {
			FixedSum::new(0, 0, 0)
		} else {
			FixedSum::new(lo, hi, 2 * k)
		}
	};
	let (mut re, mut im, mut scale_re, mut scale_im) = (new_sum(), new_sum(), new_sum(), new_sum());
	for (h, &x) in row.iter().enumerate() {
		let y = col[h];
		re.add_product(x.re(), y.re());
		scale_re.add_product(x.re().abs(), y.re().abs());
		if T::IS_COMPLEX {
			re.add_product(-x.im(), y.im());
			im.add_product(x.re(), y.im());
			im.add_product(x.im(), y.re());
			scale_re.add_product(x.im().abs(), y.im().abs());
			scale_im.add_product(x.re().abs(), y.im().abs());
			scale_im.add_product(x.im().abs(), y.re().abs());
		}
	}
	ExactEntry {
		re: re.round_double_double(),
		im: if T::IS_COMPLEX { im.round_double_double() } else { (0.0, 0.0) },
		scale: (scale_re.round(), if T::IS_COMPLEX { scale_im.round() } else { 0.0 }),
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use faer::{Mat, c64};

	/// a matrix of integers times powers of two in `[-20, 20]`, and its entries times 2^20 (integers)
	fn integer_matrix(m: usize, n: usize, seed: u64) -> (Mat<f64>, Vec<i128>) {
		let mut rng = ChaCha8Rng::seed_from_u64(seed);
		let values: Vec<f64> = (0..m * n)
			.map(|_| rng.random_range(-1000i32..=1000) as f64 * f64::powi(2.0, rng.random_range(-20..=20)))
			.collect();
		let ints = values.iter().map(|&x| (x * f64::powi(2.0, 20)) as i128).collect();
		(Mat::from_fn(m, n, |i, j| values[i + j * m]), ints)
	}

	/// the double-double of `v * 2^-40`
	fn dd(v: i128) -> (f64, f64) {
		let hi = v as f64;
		let lo = (v - hi as i128) as f64;
		(hi * f64::powi(2.0, -40), lo * f64::powi(2.0, -40))
	}

	#[test]
	fn real_matches_i128() {
		let (m, k, n) = (9, 13, 7);
		let (a, ia) = integer_matrix(m, k, 1);
		let (b, ib) = integer_matrix(k, n, 2);
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		assert_eq!(exact.len(), m * n);
		for (idx, &(i, j)) in exact.positions().iter().enumerate() {
			let v: i128 = (0..k).map(|h| ia[i + h * m] * ib[h + j * k]).sum();
			let s: i128 = (0..k).map(|h| (ia[i + h * m] * ib[h + j * k]).abs()).sum();
			assert_eq!(exact.exact_double_double(idx), (dd(v), (0.0, 0.0)));
			assert_eq!(exact.scale(idx), (dd(s).0, 0.0));
		}
	}

	#[test]
	fn complex_matches_i128() {
		let (m, k, n) = (5, 11, 6);
		let ((ar, iar), (ai, iai)) = (integer_matrix(m, k, 3), integer_matrix(m, k, 4));
		let ((br, ibr), (bi, ibi)) = (integer_matrix(k, n, 5), integer_matrix(k, n, 6));
		let a = Mat::from_fn(m, k, |i, j| c64::new(ar[(i, j)], ai[(i, j)]));
		let b = Mat::from_fn(k, n, |i, j| c64::new(br[(i, j)], bi[(i, j)]));
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		for (idx, &(i, j)) in exact.positions().iter().enumerate() {
			let (x, y) = (|h: usize| i + h * m, |h: usize| h + j * k);
			let re: i128 = (0..k).map(|h| iar[x(h)] * ibr[y(h)] - iai[x(h)] * ibi[y(h)]).sum();
			let im: i128 = (0..k).map(|h| iar[x(h)] * ibi[y(h)] + iai[x(h)] * ibr[y(h)]).sum();
			assert_eq!(exact.exact_double_double(idx), (dd(re), dd(im)));
			let s_re: i128 = (0..k).map(|h| (iar[x(h)] * ibr[y(h)]).abs() + (iai[x(h)] * ibi[y(h)]).abs()).sum();
			let s_im: i128 = (0..k).map(|h| (iar[x(h)] * ibi[y(h)]).abs() + (iai[x(h)] * ibr[y(h)]).abs()).sum();
			assert_eq!(exact.scale(idx), (dd(s_re).0, dd(s_im).0));
		}
	}

	#[test]
	fn sampled_includes_corners_and_count() {
		let s = Sampling::Sampled { entries: 50, seed: 11 };
		let pos = s.positions(30, 40);
		assert!(pos.len() >= 50 && pos.len() <= 54);
		for corner in [(0, 0), (29, 0), (0, 39), (29, 39)] {
			assert!(pos.contains(&corner));
		}
		assert!(pos.windows(2).all(|w| (w[0].1, w[0].0) < (w[1].1, w[1].0)));
		assert_eq!(pos, s.positions(30, 40));
		assert_ne!(pos, Sampling::Sampled { entries: 50, seed: 12 }.positions(30, 40));
		assert_eq!(
			Sampling::Sampled { entries: 12, seed: 1 }.positions(3, 4),
			Sampling::Full.positions(3, 4)
		);
		assert_eq!(Sampling::Sampled { entries: 0, seed: 1 }.positions(1, 1), vec![(0, 0)]);
		assert!(Sampling::Sampled { entries: 5, seed: 1 }.positions(0, 4).is_empty());
	}

	#[test]
	fn independent_of_thread_count() {
		let a = crate::testing::random_matrix::<c64>(20, 300, 4.0, 1);
		let b = crate::testing::random_matrix::<c64>(300, 20, 4.0, 2);
		let compute = || ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Sampled { entries: 60, seed: 3 });
		let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(compute);
		let many = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap().install(compute);
		assert_eq!(one.positions(), many.positions());
		assert_eq!(one.values, many.values);
	}

	#[test]
	fn scaled_rows_scale_the_exact_product() {
		use crate::testing::{Adversarial, adversarial_matrix, random_matrix};
		let b = random_matrix::<c64>(40, 7, 2.0, 2);
		let a0 = random_matrix::<c64>(9, 40, 1.0, 1);
		let a = adversarial_matrix::<c64>(Adversarial::ScaledRows, 9, 40, 1);
		let (e0, e) = (
			ExactProduct::compute(a0.as_ref(), b.as_ref(), Sampling::Full),
			ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full),
		);
		for (k, &(i, _)) in e.positions().iter().enumerate() {
			let f = [f64::powi(2.0, 200), f64::powi(2.0, -200), 1.0][i % 3];
			let ((r0, i0), (r, im)) = (e0.exact_double_double(k), e.exact_double_double(k));
			assert_eq!((r, im), ((r0.0 * f, r0.1 * f), (i0.0 * f, i0.1 * f)));
			assert_eq!(e.scale(k), (e0.scale(k).0 * f, e0.scale(k).1 * f));
		}
	}

	#[test]
	#[should_panic(expected = "shape mismatch")]
	fn shape_mismatch_panics() {
		let a = Mat::<f64>::zeros(3, 4);
		ExactProduct::compute(a.as_ref(), a.as_ref(), Sampling::Full);
	}

	#[test]
	#[should_panic(expected = "is not finite")]
	fn non_finite_input_panics() {
		let mut a = Mat::<f32>::zeros(3, 3);
		a[(1, 2)] = f32::NAN;
		ExactProduct::compute(a.as_ref(), a.as_ref(), Sampling::Full);
	}
}
