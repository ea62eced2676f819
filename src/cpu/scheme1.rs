//! scheme I on the CPU: balanced digit planes, exact diagonal accumulators, shift-reduce

use super::igemm::{Planes, dot, fill_entries, map_entries};
use super::{Parts, Timer};
use crate::fp::scale_pow2;
use crate::operand::Operand;
use crate::scheme1::{balanced_digits, output_exponent, shift, shift_reduce, to_integer};
use core::ops::Range;
use rayon::prelude::*;

/// the digit planes of one operand part: plane `t` holds digit `t` (most significant first)
pub(crate) fn digit_planes(values: &[f64], shifts: &[i32], k: usize, p: usize, negate: bool) -> Planes {
	let rows = shifts.len();
	let mut planes = Planes::zeros(p, rows, k);
	planes.rows_mut().enumerate().for_each(|(row, dst)| {
		let (t, i) = (row / rows, row % rows);
		let mut digits = [0i8; 8];
		for (h, d) in dst.iter_mut().enumerate() {
			let x = values[i * k + h];
			balanced_digits(to_integer(if negate { -x } else { x }, shifts[i]), &mut digits[..p]);
			*d = digits[t];
		}
	});
	planes
}

/// the split of one operand: its shifts and digit planes (real; imaginary; negated imaginary)
struct Split {
	shifts: Vec<i32>,
	re: Planes,
	im: Option<Planes>,
	neg_im: Option<Planes>,
}

fn split(op: &Operand, p: usize, with_negated_im: bool) -> Split {
	let shifts: Vec<i32> = (0..op.len).into_par_iter().map(|i| shift(op.amax(i), p as u32)).collect();
	let re = digit_planes(&op.re, &shifts, op.k, p, false);
	let im = op.is_complex().then(|| digit_planes(&op.im, &shifts, op.k, p, false));
	let neg_im = (op.is_complex() && with_negated_im).then(|| digit_planes(&op.im, &shifts, op.k, p, true));
	Split { shifts, re, im, neg_im }
}

/// the diagonal accumulators of one entry over one K range:
/// `C_s = sum_{t+u=s} sum_{(x, y) in terms} x_t[i] . y_u[j]`
fn accumulate(terms: &[(&Planes, &Planes)], i: usize, j: usize, range: Range<usize>, acc: &mut [i32]) {
	for (s, c) in acc.iter_mut().enumerate() {
		for t in 0..=s {
			for (x, y) in terms {
				*c = c.wrapping_add(dot(&x.row(t, i)[range.clone()], &y.row(s - t, j)[range.clone()]));
			}
		}
	}
}

/// the accumulators of every entry: `passes * p` INT32 values per entry, pass after pass
fn products(terms: &[(&Planes, &Planes)], m: usize, n: usize, p: usize, passes: &[Range<usize>]) -> Vec<i32> {
	fill_entries(m, n, passes.len() * p, |i, j, acc| {
		for (range, acc) in passes.iter().zip(acc.chunks_mut(p)) {
			accumulate(terms, i, j, range.clone(), acc);
		}
	})
}

/// shift-reduce of each pass, passes added in order, then the output scaling
fn reconstruct(acc: &[i32], m: usize, p: usize, passes: usize, exponent: impl Fn(usize, usize) -> i32 + Sync) -> Vec<f64> {
	map_entries(m, passes * p, acc, |i, j, acc| {
		let mut per_pass = acc.chunks(p).map(shift_reduce);
		let first = per_pass.next().expect("at least one pass");
		scale_pow2(per_pass.fold(first, |v, w| v + w), exponent(i, j))
	})
}

/// `A B` by scheme I with `p` slices, pass by pass over the K ranges `passes`
pub(super) fn product(a: &Operand, b: &Operand, p: u32, passes: &[Range<usize>], timer: &mut Timer) -> Parts {
	let p = p as usize;
	let sa = split(a, p, true);
	let sb = split(b, p, false);
	timer.split_done();
	let (m, n) = (a.len, b.len);
	let exponent = |i: usize, j: usize| output_exponent(p as u32, sa.shifts[i], sb.shifts[j]);
	match (&sa.im, &sa.neg_im, &sb.im) {
		(Some(a_im), Some(a_neg_im), Some(b_im)) => {
			// 4M with the real and imaginary parts stacked along K:
			// Re C = [Ar | -Ai] [Br; Bi], Im C = [Ar | Ai] [Bi; Br]
			let re_acc = products(&[(&sa.re, &sb.re), (a_neg_im, b_im)], m, n, p, passes);
			let im_acc = products(&[(&sa.re, b_im), (a_im, &sb.re)], m, n, p, passes);
			timer.products_done();
			let parts = Parts {
				re: reconstruct(&re_acc, m, p, passes.len(), exponent),
				im: reconstruct(&im_acc, m, p, passes.len(), exponent),
				lo: Vec::new(),
			};
			timer.reconstruct_done();
			parts
		},
		_ => {
			let acc = products(&[(&sa.re, &sb.re)], m, n, p, passes);
			timer.products_done();
			let parts = Parts {
				re: reconstruct(&acc, m, p, passes.len(), exponent),
				im: Vec::new(),
				lo: Vec::new(),
			};
			timer.reconstruct_done();
			parts
		},
	}
}
