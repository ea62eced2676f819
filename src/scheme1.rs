//! Ozaki scheme I: mantissa slicing into balanced base-256 digits
//!
//! a row `i` of `A` (a column `j` of `B`) is scaled by one power of two, `2^s_i`, so that the rounded
//! integers `a'_ih = rint(a_ih·2^s_i)` fit `8p - 1` bits, and each integer is cut into `p` balanced
//! digits `d_0, …, d_(p-1) ∈ [-128, 127]` with `a' = Σ_t d_t·256^(p-1-t)`. the `p(p+1)/2` slice
//! products with `t + u < p` are summed per diagonal `s = t + u` into `p` exact INT32 accumulators
//! `C_s`, and
//!
//! ```text
//! C_ij ≈ 2^(16(p-1) - s_i - s'_j) · Σ_s 2^(-8s)·C_s
//! ```
//!
//! every function here is pure and is mirrored operation for operation by the GPU kernels

use crate::fp::{exponent, scale_pow2};

/// the largest slice count
pub const MAX_SLICES: u32 = 8;

/// the largest integer that `p` balanced digits represent: `127·(256^p - 1) / 255`
pub(crate) const fn digit_range(p: u32) -> i64 {
	(127 * ((1u128 << (8 * p)) - 1) / 255) as i64
}

/// the largest `f64` not above [`digit_range`] (the comparison bound used by [`shift`])
fn digit_range_f64(p: u32) -> f64 {
	let r = digit_range(p);
	let f = r as f64;
	if f as i128 > r as i128 {
		f64::from_bits(f.to_bits() - 1)
	} else {
		f
	}
}

/// the shift `s` of a row (column) whose largest magnitude is `amax`: the largest power of two such
/// that `|rint(a·2^s)| ≤` [`digit_range`]`(p)` for every entry (0 for a zero row)
pub(crate) fn shift(amax: f64, p: u32) -> i32 {
	if amax == 0.0 {
		return 0;
	}
	let s = 8 * p as i32 - 2 - exponent(amax);
	if scale_pow2(amax, s).round_ties_even() > digit_range_f64(p) {
		s - 1
	} else {
		s
	}
}

/// `rint(x·2^s)` as an integer; `|x| <= amax` of the row that gave `s`
#[inline]
pub(crate) fn to_integer(x: f64, s: i32) -> i64 {
	scale_pow2(x, s).round_ties_even() as i64
}

/// cuts `x` (with `|x| <=` [`digit_range`]`(p)`, `p = digits.len()`) into balanced base-256 digits,
/// most significant first
#[inline]
pub(crate) fn balanced_digits(mut x: i64, digits: &mut [i8]) {
	for d in digits.iter_mut().rev() {
		let low = ((x + 128) & 255) - 128;
		*d = low as i8;
		x = (x - low) >> 8;
	}
	debug_assert_eq!(x, 0, "value out of the range of {} balanced digits", digits.len());
}

/// the largest K for which every diagonal accumulator is exact in INT32:
/// `p·128²·K ≤ 2³¹ - 1` (worst diagonal has `p` products)
pub const fn k_max(p: u32) -> usize {
	((i32::MAX as u64) / (p as u64 * 128 * 128)) as usize
}

/// the shift-reduce: `Σ_s 2^(-8s)·C_s`, added smallest weight first
///
/// every step is exact up to the one rounding of the addition (multiplication by `2^-8` is exact)
#[inline]
pub(crate) fn shift_reduce(acc: &[i32]) -> f64 {
	let (last, rest) = acc.split_last().expect("at least one slice");
	let mut v = *last as f64;
	for &c in rest.iter().rev() {
		v = v * (1.0 / 256.0) + c as f64;
	}
	v
}

/// the exponent that turns a shift-reduced value into the product: `16(p-1) - s_i - s'_j`
#[inline]
pub(crate) fn output_exponent(p: u32, row_shift: i32, col_shift: i32) -> i32 {
	16 * (p as i32 - 1) - row_shift - col_shift
}

#[cfg(test)]
mod tests {
	use super::*;

	fn recompose(d: &[i8]) -> i128 {
		d.iter().fold(0i128, |acc, &x| acc * 256 + x as i128)
	}

	#[test]
	fn digits_round_trip_at_the_edges() {
		for p in 1..=MAX_SLICES {
			let r = digit_range(p);
			let mut d = vec![0i8; p as usize];
			for x in [0, 1, -1, 127, -128, 128, -129, r, -r, r - 1, -r + 1, r / 3, -(r / 7)]
				.into_iter()
				.filter(|x| x.abs() <= r)
			{
				balanced_digits(x, &mut d);
				assert_eq!(recompose(&d), x as i128, "p={p} x={x}");
			}
		}
	}

	#[test]
	fn shift_fills_but_never_overflows_the_digits() {
		for p in 1..=MAX_SLICES {
			for &amax in &[
				1.0,
				1.999_999_999_999_999_8,
				1.5,
				3.0e-300,
				7.0e300,
				5e-324,
				1.0 - f64::EPSILON / 2.0,
			] {
				let s = shift(amax, p);
				let x = to_integer(amax, s);
				assert!(x <= digit_range(p), "p={p} amax={amax}");
				// the largest shift: one more would leave the digits, so x holds the range's top bit
				assert!(2 * x as i128 + 1 >= digit_range(p) as i128, "p={p} amax={amax}: range badly used");
				let mut d = vec![0i8; p as usize];
				balanced_digits(x, &mut d);
				balanced_digits(-x, &mut d);
			}
		}
	}

	#[test]
	fn k_bound_is_tight() {
		for p in 1..=MAX_SLICES {
			let k = k_max(p) as i64;
			assert!(k * p as i64 * 16384 <= i32::MAX as i64);
			assert!((k + 1) * p as i64 * 16384 > i32::MAX as i64);
		}
		assert_eq!(k_max(8), 16383);
	}

	#[test]
	fn shift_reduce_order() {
		assert_eq!(shift_reduce(&[3]), 3.0);
		assert_eq!(shift_reduce(&[1, 256, -512]), 1.0 + 1.0 - 2.0 / 256.0);
	}
}
