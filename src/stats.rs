//! the statistics of an operand's rows that the policy and the error bound read
//!
//! all statistics are integers computed order-independently, so every backend finds the same

use crate::fp::{exponent, significand};
use crate::operand::Operand;
use crate::scheme2::norm_bound;
use rayon::prelude::*;

/// what the policy needs to know of one row (of `A`) or column (of `B`)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowStats {
	/// exponent of the largest magnitude (0 for a zero row)
	pub e_max: i32,
	/// the fast-scaling norm bound (see [`crate::scheme2::norm_bound`]); `None` for a zero row
	pub norm: Option<(i32, u64)>,
	/// an integer `S` with `Σ |x| < S·2^(e_max - 15)` over every part of the row (see
	/// [`l1_term`]); 0 for a zero row
	pub l1: u64,
}

impl RowStats {
	/// whether every part of the row is zero
	pub fn is_zero(&self) -> bool {
		self.norm.is_none()
	}
}

/// the statistics of every row of an operand
pub(crate) fn row_stats(op: &Operand) -> Vec<RowStats> {
	(0..op.len).into_par_iter().map(|i| one_row(op.parts(i))).collect()
}

/// one nonzero part's share of the row's L1 bound, in units of `2^(e_max - 15)`: its top 16
/// significand bits plus one, shifted down by its distance below `e_max` and rounded up, so that
/// `|x| < l1_term(x, e_max)·2^(e_max - 15)` and integer sums of terms are
/// order-independent (`cuda/stats.cu` computes the same)
#[inline]
pub(crate) fn l1_term(x: f64, e_max: i32) -> u64 {
	let m = (significand(x) >> 37) + 1;
	let shift = (e_max - exponent(x)) as u32;
	if shift >= 17 { 1 } else { m.div_ceil(1u64 << shift) }
}

fn one_row(parts: impl Iterator<Item = f64> + Clone) -> RowStats {
	let norm = norm_bound(parts.clone());
	let Some((e_max, _)) = norm else {
		return RowStats { e_max: 0, norm, l1: 0 };
	};
	let l1 = parts.filter(|x| *x != 0.0).map(|x| l1_term(x, e_max)).sum();
	RowStats { e_max, norm, l1 }
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::fp::scale_pow2;

	#[test]
	fn l1_bound_is_above_the_sum_and_tight() {
		let rows: [&[f64]; 5] = [
			&[4.0, 1.0, 0.0, 0.5, 0.25, 2.0],
			&[-3.0],
			&[1.999_999_999_999_999_8; 100],
			&[1e300, -5e-324, 3e-310, 1e280],
			&[0.7, -0.3, 1e-9, 0.0, 2e-30],
		];
		for row in rows {
			let s = one_row(row.iter().copied());
			let bound = scale_pow2(s.l1 as f64, s.e_max - 15);
			let sum: f64 = row.iter().map(|x| x.abs()).sum();
			assert!(sum < bound, "{row:?}: {sum} >= {bound}");
			// each term is at most 2^-15 of the row's largest magnitude above its own value
			let slack = row.iter().filter(|x| **x != 0.0).count() as f64 * scale_pow2(1.0, s.e_max - 14);
			assert!(bound <= sum * (1.0 + 2f64.powi(-14)) + slack, "{row:?}");
		}
		let z = one_row([0.0, -0.0].into_iter());
		assert!(z.is_zero());
		assert_eq!(z.l1, 0);
	}
}
