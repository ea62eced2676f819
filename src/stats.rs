//! the exponent statistics of an operand's rows that the policy reads
//!
//! all statistics are integers computed order-independently, so every backend finds the same

use crate::fp::exponent;
use crate::operand::Operand;
use crate::scheme2::norm_bound;
use rayon::prelude::*;

/// the largest exponent distance the spread statistic resolves
const SPREAD_CAP: usize = 127;

/// what the policy needs to know of one row (of `A`) or column (of `B`)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowStats {
	/// exponent of the largest magnitude (meaningless for a zero row)
	pub e_max: i32,
	/// the lower median, over nonzero parts, of `e_max - exponent(x)` (capped at 127); `None` for a
	/// zero row
	pub spread: Option<u8>,
	/// the fast-scaling norm bound (see [`crate::scheme2::norm_bound`])
	pub norm: Option<(i32, u64)>,
}

/// the statistics of every row of an operand
pub(crate) fn row_stats(op: &Operand) -> Vec<RowStats> {
	(0..op.len).into_par_iter().map(|i| one_row(op.parts(i))).collect()
}

fn one_row(parts: impl Iterator<Item = f64> + Clone) -> RowStats {
	let norm = norm_bound(parts.clone());
	let Some((e_max, _)) = norm else {
		return RowStats {
			e_max: 0,
			spread: None,
			norm,
		};
	};
	let mut histogram = [0usize; SPREAD_CAP + 1];
	let mut nonzero = 0;
	for x in parts.filter(|x| *x != 0.0) {
		histogram[((e_max - exponent(x)) as usize).min(SPREAD_CAP)] += 1;
		nonzero += 1;
	}
	let target = (nonzero - 1) / 2;
	let mut seen = 0;
	let spread = histogram
		.iter()
		.position(|&n| {
			seen += n;
			seen > target
		})
		.unwrap() as u8;
	RowStats {
		e_max,
		spread: Some(spread),
		norm,
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn spread_is_the_median_distance() {
		let s = one_row([4.0, 1.0, 0.0, 0.5, 0.25, 2.0].into_iter());
		assert_eq!(s.e_max, 2);
		// distances 0, 2, 3, 4, 1 -> sorted 0 1 2 3 4 -> lower median 2
		assert_eq!(s.spread, Some(2));
		let z = one_row([0.0, 0.0].into_iter());
		assert_eq!(z.spread, None);
		let one = one_row([-3.0].into_iter());
		assert_eq!(one.spread, Some(0));
	}
}
