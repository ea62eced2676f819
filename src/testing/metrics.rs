//! accuracy of a computed product against the exact reference

use super::ExactProduct;
use crate::Scalar;
use faer::MatRef;

/// the accuracy of a computed product `C` against the exact product, over the evaluated entries
///
/// - `bits = -log2 max_ij |C - C_exact|_ij / (|A| |B|)_ij`: the number of correct bits relative to
///   the natural scale of each entry, **per part** for complex types: the real part's error against
///   `|Re A| |Re B| + |Im A| |Im B|`, the imaginary part's against `|Re A| |Im B| + |Im A| |Re B|`
///   (see [`ExactProduct::scale`]), the worst of all parts of all entries. `+inf` when every error
///   is zero; a part with zero scale and zero error counts as zero; a part with zero scale and a
///   nonzero error, or a non-finite computed value, makes it `-inf`.
/// - `max_rel`, `median_rel`: the largest and the (lower) median elementwise relative error
///   `|C - C_exact| / |C_exact|` (the absolute error where `C_exact = 0`).
///
/// the error of each entry is computed from the double-double exact value as `(c - hi) - lo` per
/// part, so it is itself accurate to a few ulps. a product whose exact value is beyond the range
/// of `f64` cannot be measured: its error is infinite. the final rounding of `C` to its element
/// type is part of the error, so `f32`/`c32` results show at most about 24 bits, and results in the
/// subnormal range of the element type (or whose scale underflows in `f64`) show few or none.
///
/// # example
/// ```
/// use emugemm::testing::{ExactProduct, Sampling, random_matrix};
/// let a = random_matrix::<f64>(20, 10, 1.0, 1);
/// let b = random_matrix::<f64>(10, 20, 1.0, 2);
/// let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
/// let acc = exact.accuracy((&a * &b).as_ref());
/// assert!(acc.bits > 45.0 && acc.entries == 400);
/// println!("{acc}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accuracy {
	/// correct bits relative to `|A| |B|` (worst entry)
	pub bits: f64,
	/// the largest elementwise relative error
	pub max_rel: f64,
	/// the lower median of the elementwise relative errors
	pub median_rel: f64,
	/// the number of entries measured
	pub entries: usize,
}

impl core::fmt::Display for Accuracy {
	fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
		write!(
			f,
			"bits {:.1}  max rel {:.1e}  median rel {:.1e}  ({} entries)",
			self.bits, self.max_rel, self.median_rel, self.entries
		)
	}
}

/// the error `(c - hi) - lo` of one part; infinite when `c` is not finite
fn part_error(c: f64, (hi, lo): (f64, f64)) -> f64 {
	if !c.is_finite() {
		return f64::INFINITY;
	}
	let e = ((c - hi) - lo).abs();
	// `c - hi` with an infinite `hi` (an exact value beyond the range of f64) is infinite, never NaN
	if e.is_nan() { f64::INFINITY } else { e }
}

impl ExactProduct {
	/// the accuracy of `c` as an approximation of this product, over the evaluated entries
	///
	/// # panics
	/// when `c` does not have the shape of the product.
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::Mat::from_fn(8, 8, |i, j| (i * 8 + j) as f64);
	/// let exact = ExactProduct::compute(a.as_ref(), a.as_ref(), Sampling::Full);
	/// let acc = exact.accuracy((&a * &a).as_ref());
	/// assert_eq!(acc.bits, f64::INFINITY);
	/// assert_eq!(acc.max_rel, 0.0);
	/// ```
	pub fn accuracy<T: Scalar>(&self, c: MatRef<'_, T>) -> Accuracy {
		self.accuracy_where(c, |_, _| true)
	}

	/// the accuracy of `c` over the evaluated entries `(i, j)` for which `keep(i, j)` holds (the
	/// rows an emulation computed, say)
	///
	/// # panics
	/// when `c` does not have the shape of the product.
	///
	/// # example
	/// ```
	/// use emugemm::testing::{ExactProduct, Sampling};
	/// let a = faer::Mat::from_fn(4, 4, |i, j| (i + j) as f64);
	/// let exact = ExactProduct::compute(a.as_ref(), a.as_ref(), Sampling::Full);
	/// let mut c = &a * &a;
	/// c[(0, 0)] += 1.0;
	/// assert!(exact.accuracy(c.as_ref()).bits < 10.0);
	/// assert_eq!(exact.accuracy_where(c.as_ref(), |i, _| i > 0).bits, f64::INFINITY);
	/// ```
	pub fn accuracy_where<T: Scalar>(&self, c: MatRef<'_, T>, keep: impl Fn(usize, usize) -> bool) -> Accuracy {
		assert!(
			(c.nrows(), c.ncols()) == (self.nrows(), self.ncols()),
			"ExactProduct::accuracy: C is {}x{} but the product is {}x{}",
			c.nrows(),
			c.ncols(),
			self.nrows(),
			self.ncols()
		);
		let mut worst = 0.0f64;
		let mut rel = Vec::with_capacity(self.len());
		let ratio = |err: f64, scale: f64| {
			if err == 0.0 {
				0.0
			} else if scale == 0.0 || err == f64::INFINITY {
				f64::INFINITY
			} else {
				err / scale
			}
		};
		for (k, &(i, j)) in self.positions().iter().enumerate().filter(|(_, (i, j))| keep(*i, *j)) {
			let ((re, im), scale) = (self.exact_double_double(k), self.scale(k));
			let x = c[(i, j)];
			let (err_re, err_im) = (part_error(x.re(), re), part_error(x.im(), im));
			worst = worst.max(ratio(err_re, scale.0)).max(ratio(err_im, scale.1));
			let err = f64::hypot(err_re, err_im);
			let magnitude = f64::hypot(re.0, im.0);
			rel.push(if err == 0.0 || magnitude == 0.0 || err == f64::INFINITY {
				err
			} else {
				err / magnitude
			});
		}
		rel.sort_by(f64::total_cmp);
		Accuracy {
			bits: -worst.log2(),
			max_rel: rel.last().copied().unwrap_or(0.0),
			median_rel: if rel.is_empty() { 0.0 } else { rel[(rel.len() - 1) / 2] },
			entries: rel.len(),
		}
	}
}

/// whether `x` and `y` have the same shape and the same bits, part by part (NaNs included): the
/// test of "bit for bit"
///
/// # example
/// ```
/// let a = faer::Mat::<f64>::from_fn(2, 2, |i, j| if i == j { f64::NAN } else { -0.0 });
/// assert!(emugemm::testing::same_bits(a.as_ref(), a.as_ref()));
/// assert!(!emugemm::testing::same_bits(a.as_ref(), faer::Mat::<f64>::zeros(2, 2).as_ref()));
/// ```
pub fn same_bits<T: Scalar>(x: MatRef<'_, T>, y: MatRef<'_, T>) -> bool {
	let same = |p: T, q: T| p.re().to_bits() == q.re().to_bits() && p.im().to_bits() == q.im().to_bits();
	x.nrows() == y.nrows() && x.ncols() == y.ncols() && (0..x.ncols()).all(|j| (0..x.nrows()).all(|i| same(x[(i, j)], y[(i, j)])))
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::testing::{Sampling, random_matrix};
	use faer::{Mat, c64};

	/// the accuracy of faer's own product of random `m x k` and `k x n` matrices (seeds `seed`
	/// and `seed + 1`), over the entries of `sampling`
	fn faer_accuracy<T: Scalar>((m, k, n): (usize, usize, usize), seed: u64, sampling: Sampling) -> Accuracy {
		let (a, b) = (random_matrix::<T>(m, k, 1.0, seed), random_matrix::<T>(k, n, 1.0, seed + 1));
		ExactProduct::compute(a.as_ref(), b.as_ref(), sampling).accuracy((&a * &b).as_ref())
	}

	#[test]
	fn faer_f64_product() {
		let acc = faer_accuracy::<f64>((64, 64, 64), 1, Sampling::Full);
		assert!(acc.bits > 45.0 && acc.bits < 60.0, "{acc}");
		assert!(acc.median_rel < 1e-14 && acc.median_rel <= acc.max_rel, "{acc}");
		assert_eq!(acc.entries, 64 * 64);
	}

	#[test]
	fn faer_c64_and_f32_products() {
		let acc = faer_accuracy::<c64>((30, 50, 20), 3, Sampling::Full);
		assert!(acc.bits > 45.0 && acc.bits < 60.0, "{acc}");
		let acc = faer_accuracy::<f32>((30, 50, 20), 3, Sampling::Sampled { entries: 100, seed: 1 });
		assert!(acc.bits > 16.0 && acc.bits < 30.0, "{acc}");
		assert!(acc.entries >= 100);
	}

	#[test]
	fn exact_integer_product() {
		let a = Mat::from_fn(40, 30, |i, j| ((i * 7 + j * 13) % 17) as f64 - 8.0);
		let b = Mat::from_fn(30, 20, |i, j| ((i * 5 + j * 3) % 11) as f64 - 5.0);
		let acc = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full).accuracy((&a * &b).as_ref());
		assert_eq!((acc.bits, acc.max_rel, acc.median_rel), (f64::INFINITY, 0.0, 0.0));
	}

	#[test]
	fn errors_are_measured_exactly() {
		// exact value 1 + 2^-60: c = 1 has error 2^-60 relative to a scale of 1 + 2^-60
		let a = faer::mat![[1.0, f64::powi(2.0, -30)]];
		let b = faer::mat![[1.0], [f64::powi(2.0, -30)]];
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		let acc = exact.accuracy(faer::mat![[1.0]].as_ref());
		assert!((acc.bits - 60.0).abs() < 1e-9, "{acc}");
		assert_eq!(acc.max_rel, f64::powi(2.0, -60) / (1.0 + f64::powi(2.0, -60)));
		let c = faer::mat![[exact.exact(0).0]];
		assert_eq!(
			exact.accuracy(c.as_ref()).max_rel,
			f64::powi(2.0, -60) / (1.0 + f64::powi(2.0, -60))
		);
	}

	#[test]
	fn non_finite_and_zero_scale() {
		let a = random_matrix::<c64>(4, 3, 1.0, 1);
		let exact = ExactProduct::compute(a.as_ref(), a.transpose(), Sampling::Full);
		let mut c = a.as_ref() * a.transpose();
		c[(2, 1)] = c64::new(f64::NAN, 0.0);
		let acc = exact.accuracy(c.as_ref());
		assert_eq!((acc.bits, acc.max_rel), (f64::NEG_INFINITY, f64::INFINITY));
		c[(2, 1)] = c64::new(0.0, f64::INFINITY);
		assert_eq!(exact.accuracy(c.as_ref()).bits, f64::NEG_INFINITY);

		let zero = Mat::<f64>::zeros(3, 3);
		let exact = ExactProduct::compute(zero.as_ref(), zero.as_ref(), Sampling::Full);
		assert_eq!(exact.accuracy(zero.as_ref()).bits, f64::INFINITY);
		let mut c = zero.clone();
		c[(0, 0)] = 1e-300;
		let acc = exact.accuracy(c.as_ref());
		assert_eq!((acc.bits, acc.max_rel, acc.median_rel), (f64::NEG_INFINITY, 1e-300, 0.0));
	}

	#[test]
	fn display_and_empty() {
		let acc = Accuracy {
			bits: 52.34,
			max_rel: 1.23e-15,
			median_rel: 3.4e-17,
			entries: 7,
		};
		assert_eq!(acc.to_string(), "bits 52.3  max rel 1.2e-15  median rel 3.4e-17  (7 entries)");
		let a = Mat::<f64>::zeros(0, 3);
		let acc = ExactProduct::compute(a.as_ref(), a.transpose(), Sampling::Full).accuracy(Mat::<f64>::zeros(0, 0).as_ref());
		assert_eq!((acc.bits, acc.entries), (f64::INFINITY, 0));
	}

	#[test]
	#[should_panic(expected = "C is 2x3 but the product is 3x3")]
	fn shape_mismatch_panics() {
		let a = Mat::<f64>::zeros(3, 3);
		let exact = ExactProduct::compute(a.as_ref(), a.as_ref(), Sampling::Full);
		exact.accuracy(Mat::<f64>::zeros(2, 3).as_ref());
	}
}
