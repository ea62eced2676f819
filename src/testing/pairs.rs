//! adversarial pairs of operands: inputs aimed at the weak points of an accuracy model, where the
//! difficulty lies in how `A` and `B` meet, not in either alone

use super::generate::{ldexp, random_matrix};
use crate::Scalar;
use faer::Mat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// how [`Pair::InnerScaled`] draws the exponent `d_h` of the inner scaling `D = diag(2^d_h)`
///
/// # example
/// ```
/// use emugemm::testing::{InnerPattern, Pair, pair};
/// let (a, _) = pair::<f64>(Pair::InnerScaled { pattern: InnerPattern::Ramp, range: 30 }, 2, 64, 2, 1);
/// // the ramp runs from 2^-30 at the first column of A to 2^30 at the last
/// assert!(a[(0, 0)].abs() < 1e-8 && a[(0, 63)].abs() > 1e6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InnerPattern {
	/// uniform in `[-range, range]`
	Random,
	/// `+range` and `-range` in turn
	Alternating,
	/// blocks of 16 consecutive `h` at one random exponent in `[-range, range]`
	Blocks,
	/// a ramp from `-range` to `range` along K
	Ramp,
}

/// a family of operand pairs `(A, B)`; every family is built from [`random_matrix`] with
/// `phi = 1` unless it says otherwise, and is deterministic in its seed
///
/// # example
/// ```
/// use emugemm::testing::{InnerPattern, Pair, pair};
/// let (a, b) = pair::<f64>(Pair::InnerScaled { pattern: InnerPattern::Alternating, range: 60 }, 3, 4, 2, 1);
/// assert_eq!((a.nrows(), a.ncols(), b.nrows(), b.ncols()), (3, 4, 4, 2));
/// // column 0 of A carries 2^60, row 0 of B 2^-60: the product is that of the unscaled pair
/// assert!(a[(0, 0)].abs() > 1e15 && b[(0, 0)].abs() < 1e-15);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pair {
	/// `A0 D` and `D^-1 B0`: the columns of `A` and the rows of `B` carry scales that cancel in
	/// the product (mixed physical units, an equilibrated basis). Row maxima and exponent spreads
	/// look ordinary, but much of a row's weight sits far below its maximum exactly where the
	/// column's weight is large
	InnerScaled {
		/// how the exponents are drawn
		pattern: InnerPattern,
		/// the largest exponent
		range: i32,
	},
	/// each row of `A` has one entry `2^40` times larger than the rest, at a position where the
	/// matching row of `B` is `2^-40` times smaller than the rest
	DominantMeetsSmall,
	/// every row of `A` and column of `B` mixes entries at two exponent levels `gap` apart, half
	/// and half at random
	Bimodal {
		/// the distance of the two levels, in bits
		gap: i32,
	},
	/// `a_ih = 2^(r_i + c_h) x`, `b_hj = 2^(-c_h + s_j) y`: row and column scalings of `A`
	/// compensated along K by `B`, with exponents up to `range`
	Compensating {
		/// the largest exponent
		range: i32,
	},
	/// `A = [X, X]`, `B = [Y; -Y + 2^-30 Z]`: the product is `2^-30 X Z`, far below `|A||B|`
	Cancellation,
	/// entries uniform in `[0, 1)`: no sign cancels, so representation errors add up
	SameSign,
	/// complex parts of different sizes: `Re + i 2^-log2_ratio Im` (for real types the plain
	/// `phi = 1` matrices)
	SmallImaginary {
		/// `log2(|Re| / |Im|)`
		log2_ratio: i32,
	},
	/// small integers in `[-1000, 1000]`: the exact product is representable, and FP64 gets it
	Integers,
	/// [`random_matrix`] with this `phi`
	Phi(f64),
}

/// the pair of operands of `family`, `A` of `m x k` and `B` of `k x n`
///
/// # example
/// ```
/// use emugemm::testing::{Pair, pair};
/// let (a, b) = pair::<faer::c64>(Pair::SmallImaginary { log2_ratio: 20 }, 5, 6, 7, 3);
/// assert!(a[(0, 0)].im.abs() < 1e-5 * (a[(0, 0)].re.abs() + 1e-3));
/// assert_eq!(b.ncols(), 7);
/// ```
pub fn pair<T: Scalar>(family: Pair, m: usize, k: usize, n: usize, seed: u64) -> (Mat<T>, Mat<T>) {
	// one arm per family, over 80 lines: the catalogue of adversarial inputs reads in one place
	let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x05ee_d0fa_11ce);
	let (a0, b0) = (random_matrix::<T>(m, k, 1.0, seed), random_matrix::<T>(k, n, 1.0, seed + 1));
	let scaled = |x: &Mat<T>, e: &dyn Fn(usize, usize) -> i32| {
		Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
			let v = x[(i, j)];
			T::from_parts(ldexp(v.re(), e(i, j)), ldexp(v.im(), e(i, j)))
		})
	};
	match family {
		Pair::InnerScaled { pattern, range } => {
			let d: Vec<i32> = match pattern {
				InnerPattern::Random => (0..k).map(|_| rng.random_range(-range..=range)).collect(),
				InnerPattern::Alternating => (0..k).map(|h| if h % 2 == 0 { range } else { -range }).collect(),
				InnerPattern::Blocks => {
					let blocks: Vec<i32> = (0..k.div_ceil(16)).map(|_| rng.random_range(-range..=range)).collect();
					(0..k).map(|h| blocks[h / 16]).collect()
				},
				InnerPattern::Ramp => (0..k)
					.map(|h| -range + (2 * range as i64 * h as i64 / k.max(2) as i64 - 1).max(0) as i32)
					.collect(),
			};
			(scaled(&a0, &|_, h| d[h]), scaled(&b0, &|h, _| -d[h]))
		},
		Pair::DominantMeetsSmall => {
			let at: Vec<usize> = (0..m).map(|_| rng.random_range(0..k.max(1))).collect();
			let small: Vec<bool> = (0..k).map(|h| at.contains(&h)).collect();
			(
				scaled(&a0, &|i, h| if at[i] == h { 40 } else { 0 }),
				scaled(&b0, &|h, _| if small[h] { -40 } else { 0 }),
			)
		},
		Pair::Bimodal { gap } => {
			let (la, lb): (Vec<bool>, Vec<bool>) = (
				(0..m * k).map(|_| rng.random()).collect(),
				(0..k * n).map(|_| rng.random()).collect(),
			);
			(
				scaled(&a0, &|i, h| if la[i + h * m] { -gap } else { 0 }),
				scaled(&b0, &|h, j| if lb[h + j * k] { -gap } else { 0 }),
			)
		},
		Pair::Compensating { range } => {
			let mut draw = |len: usize| -> Vec<i32> { (0..len).map(|_| rng.random_range(-range..=range)).collect() };
			let (r, c, s) = (draw(m), draw(k), draw(n));
			(scaled(&a0, &|i, h| r[i] + c[h]), scaled(&b0, &|h, j| s[j] - c[h]))
		},
		Pair::Cancellation => {
			let half = k / 2;
			let (x, y, z) = (
				random_matrix::<T>(m, half, 1.0, seed),
				random_matrix::<T>(half, n, 1.0, seed + 1),
				random_matrix::<T>(half, n, 1.0, seed + 2),
			);
			let a = Mat::from_fn(m, k, |i, h| if h < 2 * half { x[(i, h % half)] } else { a0[(i, h)] });
			let b = Mat::from_fn(k, n, |h, j| {
				if h < half {
					y[(h, j)]
				} else if h < 2 * half {
					let (yv, zv) = (y[(h - half, j)], z[(h - half, j)]);
					T::from_parts(ldexp(zv.re(), -30) - yv.re(), ldexp(zv.im(), -30) - yv.im())
				} else {
					b0[(h, j)]
				}
			});
			(a, b)
		},
		Pair::SameSign => {
			let mut draw = |r: usize, c: usize| {
				let v: Vec<T> = (0..r * c)
					.map(|_| T::from_parts(rng.random::<f64>(), if T::IS_COMPLEX { rng.random::<f64>() } else { 0.0 }))
					.collect();
				Mat::from_fn(r, c, |i, j| v[i + j * r])
			};
			(draw(m, k), draw(k, n))
		},
		Pair::SmallImaginary { log2_ratio } => {
			let shrink = |x: &Mat<T>| {
				Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
					T::from_parts(x[(i, j)].re(), ldexp(x[(i, j)].im(), -log2_ratio))
				})
			};
			(shrink(&a0), shrink(&b0))
		},
		Pair::Integers => {
			let mut draw = |r: usize, c: usize| {
				let v: Vec<T> = (0..r * c)
					.map(|_| {
						let re = rng.random_range(-1000i32..=1000) as f64;
						T::from_parts(
							re,
							if T::IS_COMPLEX {
								rng.random_range(-1000i32..=1000) as f64
							} else {
								0.0
							},
						)
					})
					.collect();
				Mat::from_fn(r, c, |i, j| v[i + j * r])
			};
			(draw(m, k), draw(k, n))
		},
		Pair::Phi(phi) => (random_matrix::<T>(m, k, phi, seed), random_matrix::<T>(k, n, phi, seed + 1)),
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::testing::{ExactProduct, Sampling};

	/// the inner scaling leaves the product unchanged, entry by entry, where no entry leaves the
	/// exponent range
	#[test]
	fn inner_scaling_keeps_the_product() {
		for pattern in [
			InnerPattern::Random,
			InnerPattern::Alternating,
			InnerPattern::Blocks,
			InnerPattern::Ramp,
		] {
			let (a, b) = pair::<f64>(Pair::InnerScaled { pattern, range: 60 }, 6, 40, 5, 7);
			let (a0, b0) = pair::<f64>(Pair::Phi(1.0), 6, 40, 5, 7);
			let (e, e0) = (
				ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full),
				ExactProduct::compute(a0.as_ref(), b0.as_ref(), Sampling::Full),
			);
			assert!(
				(0..e.len()).all(|x| e.exact(x) == e0.exact(x) && e.scale(x) == e0.scale(x)),
				"{pattern:?}"
			);
		}
	}

	#[test]
	fn cancellation_is_deep() {
		let (a, b) = pair::<f64>(Pair::Cancellation, 4, 64, 3, 1);
		let e = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		assert!((0..e.len()).all(|x| e.exact(x).0.abs() < 1e-7 * e.scale(x).0));
	}
}
