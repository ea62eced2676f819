//! exact inner-dimension balancing: `A B = (A D)(D^-1 B)` with `D = diag(2^d_h)`
//!
//! mixed units or an equilibrated basis scale column `h` of `A` and row `h` of `B` by factors that
//! cancel in the product. Each row of `A` then holds much of its weight far below its maximum,
//! exactly where the matching column of `B` is large: the error bound's window loses the pairing
//! and the rows go native. Choosing `d_h` so that column `h` of `A D` and row `h` of `D^-1 B` reach
//! the same exponent undoes such scalings. Powers of two are exact while every scaled part stays a
//! normal finite number, so `d_h` is clamped to keep them so: the product, its exact value and its
//! scale `|A||B|` are unchanged, entry by entry. Every backend balances by the same `d`, computed
//! here from integer exponent ranges, so the emulated bits do not depend on the backend

use crate::fp::exponent;

/// the smallest `|d_h|` worth applying: ordinary data differs by a bit or two from column to row
const MIN_SHIFT: i32 = 2;

/// the exponent range of the nonzero parts at one inner index `h`: of column `h` of `A`, or of
/// row `h` of `B` (`max < min` when they are all zero); the layout of the kernel's output
/// (`inner_ranges` in `cuda/balance.cu`)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
	pub max: i32,
	pub min: i32,
}

impl Range {
	/// no nonzero part yet
	pub const EMPTY: Range = Range {
		max: i32::MIN,
		min: i32::MAX,
	};

	/// the range with the finite part `x` too (zeros change nothing)
	#[inline]
	pub fn with(self, x: f64) -> Range {
		if x == 0.0 {
			return self;
		}
		let e = exponent(x);
		Range {
			max: self.max.max(e),
			min: self.min.min(e),
		}
	}
}

/// the exponents `d_h` that balance the columns of `A` (ranges `a`) against the rows of `B`
/// (ranges `b`), for a type whose normal exponents are `normal = (min, max)`; `None` when none
/// would move
///
/// `d_h` is half the distance of the two maxima, rounded down, left at 0 below [`MIN_SHIFT`], and
/// clamped so that `A`'s parts times `2^d_h` and `B`'s times `2^-d_h` stay normal and finite
pub(crate) fn shifts(a: &[Range], b: &[Range], normal: (i32, i32)) -> Option<Vec<i32>> {
	let (lo, hi) = normal;
	let d: Vec<i32> = a
		.iter()
		.zip(b)
		.map(|(ra, rb)| {
			if ra.max < ra.min || rb.max < rb.min {
				return 0;
			}
			let wanted = (rb.max - ra.max).div_euclid(2);
			if wanted.abs() < MIN_SHIFT {
				return 0;
			}
			let up = (hi - ra.max).min(rb.min - lo).max(0);
			let down = (lo - ra.min).max(rb.max - hi).min(0);
			wanted.clamp(down, up)
		})
		.collect();
	d.iter().any(|&x| x != 0).then_some(d)
}

/// the normal exponent range of an output of `mantissa` significand bits
pub(crate) fn normal_exponents(mantissa: u32) -> (i32, i32) {
	if mantissa == 24 { (-126, 127) } else { (-1022, 1023) }
}

#[cfg(test)]
mod tests {
	use super::*;

	fn range(values: &[f64]) -> Range {
		values.iter().fold(Range::EMPTY, |r, &x| r.with(x))
	}

	#[test]
	fn balances_compensating_scales() {
		let a = [range(&[1024.0, 3.0]), range(&[1.0, 0.5]), range(&[0.0])];
		let b = [range(&[1.0 / 1024.0]), range(&[2.0]), range(&[5.0])];
		// column 0: 2^10 against 2^-10 -> d = -10; column 1: one bit apart -> 0; column 2: zero
		assert_eq!(shifts(&a, &b, (-1022, 1023)), Some(vec![-10, 0, 0]));
		assert_eq!(shifts(&a[1..], &b[1..], (-1022, 1023)), None);
	}

	#[test]
	fn stays_exact_at_the_edges() {
		// A's column spans 2^-1000..2^1000 and wants to move down by 450: its smallest part may
		// fall to 2^-1022 only
		let a = [range(&[f64::powi(2.0, 1000), f64::powi(2.0, -1000)])];
		let b = [range(&[f64::powi(2.0, -1000), f64::powi(2.0, 100)])];
		assert_eq!(shifts(&a, &b, (-1022, 1023)), Some(vec![-22]));
		let a = [range(&[f64::powi(2.0, 1000), 1.0])];
		assert_eq!(shifts(&a, &b, (-1022, 1023)), Some(vec![-450]));
		// subnormal parts never move further down
		let a = [range(&[5e-324, 1.0])];
		let b = [range(&[f64::powi(2.0, 40)])];
		assert_eq!(shifts(&a, &b, (-1022, 1023)), Some(vec![20]));
		let b_sub = [range(&[5e-324, f64::powi(2.0, 40)])];
		assert_eq!(shifts(&a, &b_sub, (-1022, 1023)), None);
	}
}
