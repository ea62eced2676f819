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
	/// per part (real, imaginary): how many nonzero parts lie within [`WINDOW_SPAN`] binades of
	/// the largest (exponent at least `e_max - WINDOW_SPAN`), the most entries the error bound's
	/// magnitude window keeps of the row (it keeps at most 7 bits); all 0 for a zero row
	pub window: [u32; 2],
}

/// the binades below a row's largest exponent that [`RowStats::window`] counts: those of the
/// error bound's widest magnitude window ([`crate::bound::window_bits`] at most 7, less one)
pub(crate) const WINDOW_SPAN: i32 = 6;

impl RowStats {
	/// whether every part of the row is zero
	pub fn is_zero(&self) -> bool {
		self.norm.is_none()
	}
}

/// the statistics of every row of an operand
pub(crate) fn row_stats(op: &Operand) -> Vec<RowStats> {
	(0..op.len).into_par_iter().map(|i| one_row(op.re_row(i), op.im_row(i))).collect()
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

/// the statistics of a row with real parts `re` and imaginary parts `im` (empty for a real row)
fn one_row(re: &[f64], im: &[f64]) -> RowStats {
	let parts = re.iter().chain(im).copied();
	let norm = norm_bound(parts.clone());
	let Some((e_max, _)) = norm else {
		return RowStats {
			e_max: 0,
			norm,
			l1: 0,
			window: [0; 2],
		};
	};
	let l1 = parts.filter(|x| *x != 0.0).map(|x| l1_term(x, e_max)).sum();
	let window = |part: &[f64]| part.iter().filter(|&&x| x != 0.0 && exponent(x) >= e_max - WINDOW_SPAN).count() as u32;
	RowStats {
		e_max,
		norm,
		l1,
		window: [window(re), window(im)],
	}
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
			let s = one_row(row, &[]);
			let bound = scale_pow2(s.l1 as f64, s.e_max - 15);
			let sum: f64 = row.iter().map(|x| x.abs()).sum();
			assert!(sum < bound, "{row:?}: {sum} >= {bound}");
			// each term is at most 2^-15 of the row's largest magnitude above its own value
			let slack = row.iter().filter(|x| **x != 0.0).count() as f64 * scale_pow2(1.0, s.e_max - 14);
			assert!(bound <= sum * (1.0 + 2f64.powi(-14)) + slack, "{row:?}");
		}
		let z = one_row(&[0.0, -0.0], &[]);
		assert!(z.is_zero());
		assert_eq!(z.l1, 0);
	}

	/// the window counts: the parts within six binades of the row's largest, per part
	#[test]
	fn window_counts_the_parts_near_the_largest() {
		let s = one_row(&[1.0, 0.0, 1.0 / 64.0, 1.0 / 65.0, -1.5], &[0.03125, 1e-3, 0.0, 0.0, 0.0]);
		assert_eq!(s.e_max, 0);
		assert_eq!(s.window, [3, 1]);
		assert_eq!(one_row(&[0.0; 3], &[]).window, [0, 0]);
	}
}
