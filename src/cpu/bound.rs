//! the error bound's pass on the CPU: magnitude planes, their exact product, the per-row maxima

use super::igemm::{Planes, dot};
use crate::bound::{Bound, BoundSide, RowMaxima, floor_exponent, magnitude, offsets, sides, window_bits, window_shift};
use crate::operand::Operand;
use crate::scheme2::CoarseMaxima;
use crate::shape::Shape;
use crate::stats::RowStats;
use rayon::prelude::*;

/// the window magnitudes of an operand: plane 0 the real parts, plane 1 the imaginary parts
/// (complex operands)
pub(crate) fn magnitude_planes(op: &Operand, stats: &[RowStats], bits: i32) -> Planes {
	let parts = if op.is_complex() { 2 } else { 1 };
	let mut planes = Planes::zeros(parts, op.len, op.k);
	planes.rows_mut().enumerate().for_each(|(row, dst)| {
		let (part, i) = (row / op.len, row % op.len);
		let src = if part == 0 { op.re_row(i) } else { op.im_row(i) };
		let w = window_shift(stats[i].e_max, bits);
		dst.iter_mut().zip(src).for_each(|(d, &x)| *d = magnitude(x, w));
	});
	planes
}

/// the magnitude products of entry `(i, j)`, one per part of the output: real `QA QB`; complex
/// `Re: QAr QBr + QAi QBi`, `Im: QAr QBi + QAi QBr` (exact: the window keeps the sums in INT32)
fn products(qa: &Planes, qb: &Planes, i: usize, j: usize, complex: bool) -> [i32; 2] {
	let d = |s: usize, t: usize| dot(qa.row(s, i), qb.row(t, j));
	if complex {
		[d(0, 0).wrapping_add(d(1, 1)), d(0, 1).wrapping_add(d(1, 0))]
	} else {
		[d(0, 0), 0]
	}
}

/// the bound's maxima of every row of `A B`
pub(crate) fn row_maxima(
	(a, b): (&Operand, &Operand),
	(stats_a, stats_b): (&[RowStats], &[RowStats]),
	(side_a, side_b): (&[BoundSide], &[BoundSide]),
	bits: i32,
	floor_exp: i32,
) -> Vec<RowMaxima> {
	let (qa, qb) = (magnitude_planes(a, stats_a, bits), magnitude_planes(b, stats_b, bits));
	let complex = a.is_complex();
	(0..a.len)
		.into_par_iter()
		.map(|i| {
			let mut acc = RowMaxima::default();
			if side_a[i].zero != 0 {
				return acc;
			}
			for j in (0..b.len).filter(|&j| side_b[j].zero == 0) {
				let l = products(&qa, &qb, i, j, complex);
				for &part in &l[..1 + complex as usize] {
					acc.add(&side_a[i], &side_b[j], part, bits, floor_exp);
				}
			}
			acc
		})
		.collect()
}

/// the error bound of `A B` on the CPU, for plans accurately scaled by `coarse` where given (fast
/// scaling otherwise), for outputs of `mantissa` bits
pub(crate) fn compute(
	(a, b): (&Operand, &Operand),
	(stats_a, stats_b): (&[RowStats], &[RowStats]),
	coarse: Option<&CoarseMaxima>,
	mantissa: u32,
) -> Bound {
	let complex = a.is_complex();
	let bits = window_bits(a.k * if complex { 2 } else { 1 });
	let (offsets_a, offsets_b) = offsets((stats_a, stats_b), coarse);
	let side_a = sides(stats_a, |i| a.amax(i), &offsets_a, bits);
	let side_b = sides(stats_b, |j| b.amax(j), &offsets_b, bits);
	Bound {
		rows: row_maxima((a, b), (stats_a, stats_b), (&side_a, &side_b), bits, floor_exponent(mantissa)),
		shape: Shape::new(a.len, b.len, a.k),
		complex,
		mantissa,
	}
}
