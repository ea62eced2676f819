//! complex products as four real products of their parts, each part of the operands scaled on its
//! own ([`crate::Plan::separate_parts`]), on the CPU

use super::{Parts, Timer, bound, coarse_maxima, emulate};
use crate::Plan;
use crate::bound::{Bound, PartBounds};
use crate::operand::Operand;
use crate::policy::SCREEN;
use crate::scheme2::{CoarseMaxima, two_sum};
use crate::stats::{RowStats, row_stats};

/// the parts of `A` and `B` that each real product multiplies: `Re A Re B`, `Im A Im B`,
/// `Re A Im B`, `Im A Re B` (0 the real parts, 1 the imaginary parts)
pub(crate) const PRODUCTS: [(usize, usize); 4] = [(0, 0), (1, 1), (0, 1), (1, 0)];

/// the operands of one real product, their statistics, and their coarse maxima under accurate
/// scaling
type ProductInputs<'a> = (
	(&'a Operand, &'a Operand),
	(&'a [RowStats], &'a [RowStats]),
	Option<&'a CoarseMaxima>,
);

/// the real and imaginary parts of both operands as real operands, with their statistics
pub(crate) struct PartOperands {
	a: [(Operand, Vec<RowStats>); 2],
	b: [(Operand, Vec<RowStats>); 2],
	accurate: bool,
	/// per product, the coarse maxima of accurate scaling (computed with the bounds)
	coarse: Option<[CoarseMaxima; 4]>,
}

impl PartOperands {
	/// the parts of the complex operands `a` and `b`, for plans under accurate scaling where
	/// `accurate`
	pub fn new(a: &Operand, b: &Operand, accurate: bool) -> Self {
		let split = |op: &Operand| {
			[false, true].map(|imaginary| {
				let part = op.part(imaginary);
				let stats = row_stats(&part);
				(part, stats)
			})
		};
		let (a, b) = (split(a), split(b));
		PartOperands {
			a,
			b,
			accurate,
			coarse: None,
		}
	}

	/// the screen of [`crate::policy::PolicyInput::separate_parts_pay`]: the bound of `Re A Re B`
	/// on the leading [`SCREEN`] rows of `A` and columns of `B`, for outputs of `mantissa` bits
	pub fn screen(&self, mantissa: u32) -> Bound {
		let (a, b) = (self.a[0].0.leading(SCREEN), self.b[0].0.leading(SCREEN));
		let stats = (row_stats(&a), row_stats(&b));
		let coarse = self.accurate.then(|| coarse_maxima(&a, &b));
		bound::compute((&a, &b), (&stats.0, &stats.1), coarse.as_ref(), mantissa)
	}

	/// the operands and statistics of product `q` of [`PRODUCTS`]
	fn product(&self, q: usize) -> ProductInputs<'_> {
		let (s, t) = PRODUCTS[q];
		let ((a, sa), (b, sb)) = (&self.a[s], &self.b[t]);
		((a, b), (sa, sb), self.coarse.as_ref().map(|c| &c[q]))
	}

	/// the error bounds of the four products, for outputs of `mantissa` bits (with their coarse
	/// maxima under accurate scaling)
	pub fn bounds(&mut self, mantissa: u32) -> PartBounds {
		if self.accurate {
			self.coarse = Some(PRODUCTS.map(|(s, t)| coarse_maxima(&self.a[s].0, &self.b[t].0)));
		}
		PartBounds([0, 1, 2, 3].map(|q| {
			let (ops, stats, coarse) = self.product(q);
			bound::compute(ops, stats, coarse, mantissa)
		}))
	}

	/// the complex product by `plan` (each real product by its scheme, scheme II with the CRT's
	/// remainders): `Re = P0 - P1`, `Im = P2 + P3`, by [`combined`]
	pub fn emulate(&self, plan: &Plan, timer: &mut Timer) -> Parts {
		debug_assert_eq!(self.coarse.is_some(), self.accurate, "the bounds computed the coarse maxima");
		let [p0, p1, p2, p3] = [0, 1, 2, 3].map(|q| {
			let ((a, b), stats, coarse) = self.product(q);
			emulate(a, b, stats, coarse, (plan, true), timer)
		});
		let at = |p: &Parts, idx: usize| (p.re[idx], p.lo.get(idx).copied().unwrap_or(0.0));
		let (re, im) = (0..p0.re.len())
			.map(|idx| {
				let re = combined(at(&p0, idx), at(&p1, idx), -1.0);
				(re, combined(at(&p2, idx), at(&p3, idx), 1.0))
			})
			.unzip();
		Parts { re, im, lo: Vec::new() }
	}
}

/// `x + sign y` in `f64` for two products given with their remainders (`x.0 + x.1` and `y.0 +
/// y.1`): the sum of the leading values split without error, the small terms added to its
/// remainder, then one rounding, so that the sum is within `2^-53` of its value plus a few
/// `2^-106` of the products. A sum that overflows is the plain sum, which keeps the infinity
/// (the split would turn it into NaN)
///
/// normative: `combine_parts` in cuda/reconstruct.cu performs the same IEEE operations
pub(crate) fn combined(x: (f64, f64), y: (f64, f64), sign: f64) -> f64 {
	let (s, e) = two_sum(x.0, sign * y.0);
	if !s.is_finite() {
		return s;
	}
	s + ((e + x.1) + sign * y.1)
}

#[cfg(test)]
mod tests {
	use super::*;

	/// the sum of two products with remainders is the exact sum rounded once, where the terms
	/// cancel and where they do not
	#[test]
	fn combined_rounds_the_exact_sum_once() {
		let x = (1.0, 2f64.powi(-60));
		let y = (1.0 - 2f64.powi(-52), 2f64.powi(-70));
		// exactly 2^-52 + 2^-60 - 2^-70
		assert_eq!(combined(x, y, -1.0), 2f64.powi(-52) + 2f64.powi(-60) - 2f64.powi(-70));
		assert_eq!(combined(x, y, 1.0), 2.0 - 2f64.powi(-52));
		assert_eq!(combined((3.0, 0.0), (0.0, 0.0), -1.0), 3.0);
		assert_eq!(combined((f64::INFINITY, 1.0), (1.0, 0.0), -1.0), f64::INFINITY);
		assert_eq!(combined((f64::MAX, 0.0), (f64::MAX, 0.0), 1.0), f64::INFINITY);
	}
}
