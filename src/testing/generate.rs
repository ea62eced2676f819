//! test matrices: random matrices with a tunable exponent spread, and adversarial variants

use crate::Scalar;
use faer::Mat;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// a random matrix with entries `(u - 0.5) * exp(phi * z)`
///
/// `u` is uniform in `[0, 1)` (53 random bits) and `z` is standard normal, both drawn from
/// `ChaCha8Rng::seed_from_u64(seed)`. `phi` controls the spread of the exponents: `phi = 0` gives
/// entries uniform in `[-0.5, 0.5)`, larger values give entries spanning many orders of magnitude
/// (the usual test family of the Ozaki-scheme literature).
///
/// the matrix is filled sequentially in column-major order (for complex types, the real part then
/// the imaginary part of each entry), so the result depends only on the arguments: not on the
/// platform or the number of threads. `f32`/`c32` entries are generated in `f64` and then rounded
/// to nearest.
///
/// # example
/// ```
/// use emugemm::testing::random_matrix;
/// let a = random_matrix::<f64>(3, 2, 1.0, 42);
/// let b = random_matrix::<f64>(3, 2, 1.0, 42);
/// assert_eq!(a, b);
/// let c = random_matrix::<faer::c32>(4, 4, 0.5, 7);
/// assert_eq!(c.nrows(), 4);
/// ```
pub fn random_matrix<T: Scalar>(nrows: usize, ncols: usize, phi: f64, seed: u64) -> Mat<T> {
	let mut rng = ChaCha8Rng::seed_from_u64(seed);
	let mut draw = || {
		let u = (rng.next_u64() >> 11) as f64 * f64::powi(2.0, -53);
		let z: f64 = rng.sample(StandardNormal);
		(u - 0.5) * (phi * z).exp()
	};
	let mut values = Vec::with_capacity(nrows * ncols);
	for _ in 0..nrows * ncols {
		let re = draw();
		let im = if T::IS_COMPLEX { draw() } else { 0.0 };
		values.push(T::from_parts(re, im));
	}
	Mat::from_fn(nrows, ncols, |i, j| values[i + j * nrows])
}

/// adversarial test matrices, each derived from `random_matrix(.., phi = 1.0, seed)`
///
/// the scaling constants depend on the precision of the element type: the `f32`/`c32` variants
/// use smaller exponents so that the values stay finite (and, except for [`Adversarial::Subnormal`],
/// mostly normal).
///
/// # example
/// ```
/// use emugemm::testing::Adversarial;
/// assert_eq!(Adversarial::ALL.len(), 5);
/// assert_eq!(format!("{:?}", Adversarial::ZeroRows), "ZeroRows");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Adversarial {
	/// row `i` is multiplied by `2^200` when `i % 3 == 0` and by `2^-200` when `i % 3 == 1`
	/// (`f32`/`c32`: `2^60` and `2^-60`); rows with `i % 3 == 2` are left alone
	ScaledRows,
	/// the same as [`Adversarial::ScaledRows`], on columns
	ScaledCols,
	/// rows with `i % 4 == 1` and columns with `j % 5 == 2` are set to zero
	ZeroRows,
	/// `max(1, nrows * ncols / 500)` distinct entries at seeded random positions are multiplied by
	/// `2^80` (`f32`/`c32`: `2^30`); an empty matrix is left empty
	HugeEntries,
	/// every entry is multiplied by `2^-1060` (`f32`/`c32`: `2^-140`), so that most entries are
	/// subnormal (some underflow to zero); every product of two such entries underflows
	Subnormal,
}

impl Adversarial {
	/// every kind, in declaration order
	///
	/// # example
	/// ```
	/// use emugemm::testing::{Adversarial, adversarial_matrix};
	/// for kind in Adversarial::ALL {
	///     let a = adversarial_matrix::<f64>(kind, 6, 5, 1);
	///     assert_eq!((a.nrows(), a.ncols()), (6, 5));
	/// }
	/// ```
	pub const ALL: [Adversarial; 5] = [
		Adversarial::ScaledRows,
		Adversarial::ScaledCols,
		Adversarial::ZeroRows,
		Adversarial::HugeEntries,
		Adversarial::Subnormal,
	];
}

/// an adversarial matrix of the given kind (see [`Adversarial`] for what each kind does)
///
/// deterministic in its arguments, like [`random_matrix`].
///
/// # example
/// ```
/// use emugemm::testing::{Adversarial, adversarial_matrix};
/// let a = adversarial_matrix::<f64>(Adversarial::ZeroRows, 8, 8, 3);
/// assert!((0..8).all(|j| a[(1, j)] == 0.0));
/// let s = adversarial_matrix::<f64>(Adversarial::Subnormal, 8, 8, 3);
/// assert!(s[(0, 0)].abs() < f64::MIN_POSITIVE);
/// ```
pub fn adversarial_matrix<T: Scalar>(kind: Adversarial, nrows: usize, ncols: usize, seed: u64) -> Mat<T> {
	let mut a = random_matrix::<T>(nrows, ncols, 1.0, seed);
	let single = T::MANTISSA_BITS <= 24;
	let big = if single { 60 } else { 200 };
	let by_index = move |k: usize| match k % 3 {
		0 => big,
		1 => -big,
		_ => 0,
	};
	match kind {
		Adversarial::ScaledRows => scale_rows(&mut a, by_index),
		Adversarial::ScaledCols => scale_cols(&mut a, by_index),
		Adversarial::ZeroRows => {
			let zero = T::from_parts(0.0, 0.0);
			for j in 0..ncols {
				for i in 0..nrows {
					if i % 4 == 1 || j % 5 == 2 {
						a[(i, j)] = zero;
					}
				}
			}
		},
		Adversarial::HugeEntries => {
			let total = nrows * ncols;
			if total > 0 {
				let count = usize::max(1, total / 500);
				let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
				let mut chosen = std::collections::HashSet::with_capacity(count);
				let exponent = if single { 30 } else { 80 };
				while chosen.len() < count {
					let k = rng.random_range(0..total as u64) as usize;
					if chosen.insert(k) {
						let (i, j) = (k % nrows, k / nrows);
						a[(i, j)] = scale_value(a[(i, j)], exponent);
					}
				}
			}
		},
		Adversarial::Subnormal => {
			let exponent = if single { -140 } else { -1060 };
			scale_rows(&mut a, |_| exponent);
		},
	}
	a
}

/// multiplies row `i` of `a` by `2^exponent(i)`
///
/// the scaling is exact unless the result overflows or becomes subnormal, in which case each part
/// is rounded once (to nearest, ties to even) to the element type.
///
/// # example
/// ```
/// use emugemm::testing::scale_rows;
/// let mut a = faer::Mat::from_fn(2, 2, |_, _| 3.0f64);
/// scale_rows(&mut a, |i| if i == 0 { 10 } else { -1100 });
/// assert_eq!(a[(0, 1)], 3072.0);
/// assert_eq!(a[(1, 0)], 0.0);
/// ```
pub fn scale_rows<T: Scalar>(a: &mut Mat<T>, exponent: impl Fn(usize) -> i32) {
	for i in 0..a.nrows() {
		let e = exponent(i);
		for j in 0..a.ncols() {
			a[(i, j)] = scale_value(a[(i, j)], e);
		}
	}
}

/// multiplies column `j` of `a` by `2^exponent(j)`, like [`scale_rows`]
///
/// # example
/// ```
/// use emugemm::testing::scale_cols;
/// let mut a = faer::Mat::from_fn(2, 2, |_, _| faer::c32::new(1.0, -2.0));
/// scale_cols(&mut a, |j| j as i32);
/// assert_eq!(a[(0, 1)], faer::c32::new(2.0, -4.0));
/// ```
pub fn scale_cols<T: Scalar>(a: &mut Mat<T>, exponent: impl Fn(usize) -> i32) {
	for j in 0..a.ncols() {
		let e = exponent(j);
		for i in 0..a.nrows() {
			a[(i, j)] = scale_value(a[(i, j)], e);
		}
	}
}

fn scale_value<T: Scalar>(x: T, e: i32) -> T {
	T::from_parts(ldexp(x.re(), e), ldexp(x.im(), e))
}

/// `x * 2^e`, rounded once (every intermediate step is exact)
pub(crate) fn ldexp(mut x: f64, mut e: i32) -> f64 {
	// 2^k for k in [-1074, 1023] (subnormal powers included)
	let pow2 = |k: i32| -> f64 {
		if k >= -1022 {
			f64::from_bits(((k + 1023) as u64) << 52)
		} else {
			f64::from_bits(1u64 << (k + 1074))
		}
	};
	if x == 0.0 || !x.is_finite() {
		return x;
	}
	while e > 0 {
		// scaling up is exact until it overflows
		let k = e.min(1023);
		x *= pow2(k);
		e -= k;
	}
	while e < 0 {
		// scale down exactly while the result stays normal, then round once
		let biased = ((x.to_bits() >> 52) & 0x7ff) as i32;
		let k = (biased - 1).clamp(0, 1022).min(-e);
		if k == 0 {
			return x * pow2(e.max(-1074));
		}
		x *= pow2(-k);
		e += k;
	}
	x
}

/// a xorshift64 generator from `state` (nonzero) that returns the next state at each call: the
/// cheap, seeded words of the crate's own tests
#[cfg(test)]
pub(crate) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
	move || {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		state
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use faer::{c32, c64};

	fn max_abs_row<T: Scalar>(a: &Mat<T>, i: usize) -> f64 {
		(0..a.ncols())
			.map(|j| f64::hypot(a[(i, j)].re(), a[(i, j)].im()))
			.fold(0.0, f64::max)
	}

	#[test]
	fn deterministic_and_seeded() {
		let bits = |a: &Mat<c64>| {
			(0..a.ncols())
				.flat_map(|j| (0..a.nrows()).map(move |i| (i, j)))
				.map(|(i, j)| a[(i, j)].re.to_bits())
				.collect::<Vec<_>>()
		};
		let a = random_matrix::<c64>(17, 9, 2.0, 5);
		assert_eq!(bits(&a), bits(&random_matrix::<c64>(17, 9, 2.0, 5)));
		assert_ne!(bits(&a), bits(&random_matrix::<c64>(17, 9, 2.0, 6)));
		assert!((0..9).all(|j| a[(3, j)].re != a[(3, j)].im));
		// f32 entries are the f64 entries rounded
		let (x, y) = (random_matrix::<f64>(8, 8, 1.0, 3), random_matrix::<f32>(8, 8, 1.0, 3));
		assert!((0..8).all(|j| (0..8).all(|i| x[(i, j)] as f32 == y[(i, j)])));
		// phi controls the spread
		let spread = |phi: f64| {
			let a = random_matrix::<f64>(50, 50, phi, 1);
			(0..50).map(|i| max_abs_row(&a, i)).fold(0.0, f64::max)
		};
		assert!(spread(0.0) <= 0.5 && spread(4.0) > 1e4);
	}

	#[test]
	fn scaled_rows_and_cols() {
		let a = adversarial_matrix::<f64>(Adversarial::ScaledRows, 9, 12, 1);
		let (r0, r1, r2) = (max_abs_row(&a, 0).log2(), max_abs_row(&a, 1).log2(), max_abs_row(&a, 2).log2());
		assert!((190.0..210.0).contains(&r0) && (-210.0..-190.0).contains(&r1) && (-10.0..10.0).contains(&r2));
		let t = adversarial_matrix::<f64>(Adversarial::ScaledCols, 12, 9, 1);
		let base = random_matrix::<f64>(12, 9, 1.0, 1);
		assert_eq!(t[(4, 3)], base[(4, 3)] * f64::powi(2.0, 200));
		assert_eq!(t[(4, 4)], base[(4, 4)] * f64::powi(2.0, -200));
		assert_eq!(t[(4, 5)], base[(4, 5)]);
		let s = adversarial_matrix::<c32>(Adversarial::ScaledRows, 9, 12, 1);
		assert!((55.0..70.0).contains(&max_abs_row(&s, 3).log2()) && (-70.0..-55.0).contains(&max_abs_row(&s, 4).log2()));
		assert!((0..12).all(|j| s[(4, j)].is_finite_value()));
	}

	#[test]
	fn zero_rows_and_huge_entries() {
		let z = adversarial_matrix::<c64>(Adversarial::ZeroRows, 13, 11, 2);
		for j in 0..11 {
			for i in 0..13 {
				let zero = z[(i, j)] == c64::new(0.0, 0.0);
				assert_eq!(zero, i % 4 == 1 || j % 5 == 2, "({i}, {j})");
			}
		}
		for (kind, threshold) in [(2, 2f64.powi(40)), (1, 2f64.powi(20))] {
			let count_huge = |a: Mat<f64>| {
				(0..a.ncols())
					.flat_map(|j| (0..a.nrows()).map(move |i| (i, j)))
					.filter(|&ij| a[ij].abs() > threshold)
					.count()
			};
			let a = if kind == 2 {
				adversarial_matrix::<f64>(Adversarial::HugeEntries, 100, 50, 3)
			} else {
				adversarial_matrix::<f32>(Adversarial::HugeEntries, 100, 50, 3)
					.as_ref()
					.map(|&x| x as f64)
			};
			assert_eq!(count_huge(a), 10);
		}
		assert_eq!(count_nonzero_diff(Adversarial::HugeEntries, 3, 4), 1);
		assert_eq!(count_nonzero_diff(Adversarial::HugeEntries, 100, 50), 10);
		assert_eq!(adversarial_matrix::<f64>(Adversarial::HugeEntries, 0, 4, 1).nrows(), 0);
	}

	fn count_nonzero_diff(kind: Adversarial, m: usize, n: usize) -> usize {
		let (a, b) = (adversarial_matrix::<f64>(kind, m, n, 1), random_matrix::<f64>(m, n, 1.0, 1));
		(0..n)
			.flat_map(|j| (0..m).map(move |i| (i, j)))
			.filter(|&ij| a[ij] != b[ij])
			.count()
	}

	#[test]
	fn subnormal_entries() {
		let a = adversarial_matrix::<f64>(Adversarial::Subnormal, 20, 20, 4);
		let b = random_matrix::<f64>(20, 20, 1.0, 4);
		let entries = || (0..20).flat_map(|j| (0..20).map(move |i| (i, j)));
		let subnormal = entries().filter(|&ij| a[ij].is_subnormal()).count();
		assert!(subnormal > 380, "{subnormal}");
		assert!(entries().all(|ij| a[ij] == b[ij] * 2f64.powi(-530) * 2f64.powi(-530)));
		let s = adversarial_matrix::<c32>(Adversarial::Subnormal, 20, 20, 4);
		assert!(entries().filter(|&ij| s[ij].re.is_subnormal() && s[ij].im.is_subnormal()).count() > 350);
	}

	#[test]
	fn ldexp_rounds_once() {
		let p2 = |e: i32| ldexp(1.0, e);
		assert_eq!(p2(-1074), f64::from_bits(1));
		assert_eq!(p2(1023), f64::from_bits(2046 << 52));
		assert_eq!(ldexp(1.0, 1024), f64::INFINITY);
		assert_eq!(ldexp(1.5, -1074), p2(-1073)); // tie to even
		assert_eq!(ldexp(1.25, -1074), p2(-1074));
		assert_eq!(ldexp(3.0 * p2(600), -1675), p2(-1073));
		assert_eq!(ldexp(-1.0, -1075), -0.0);
		assert_eq!(ldexp(f64::from_bits(1), 1074), 1.0);
		assert_eq!(ldexp(f64::MAX, -2000), ldexp(f64::MAX * p2(-1000), -1000));
		let x = 1.0 + 3.0 * f64::EPSILON;
		assert_eq!(ldexp(x, -1060), x * f64::from_bits(1 << 14));
		assert_eq!(ldexp(x * p2(900), -1960), x * f64::from_bits(1 << 14));
	}
}
