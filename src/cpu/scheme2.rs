//! scheme II on the CPU: scaling, symmetric residue planes, exact products reduced mod m, CRT

use super::igemm::{Planes, dot_wide, fill_entries, map_entries};
use super::{Parts, Timer};
use crate::fp::scale_pow2;
use crate::operand::Operand;
use crate::scheme2::{CoarseMaxima, Crt, ScaledInteger, coarse_magnitude, coarse_shift, fast_shift, sym_mod};
use crate::stats::RowStats;
use rayon::prelude::*;

/// the shifts of both operands: accurate ones from the coarse maxima where given, fast ones from
/// the statistics otherwise
fn shifts(a_stats: &[RowStats], b_stats: &[RowStats], lambda: i32, coarse: Option<&CoarseMaxima>) -> (Vec<i32>, Vec<i32>) {
	match coarse {
		Some(c) => c.shifts(lambda),
		None => {
			let fast = |stats: &[RowStats]| stats.iter().map(|r| fast_shift(r.norm, lambda)).collect();
			(fast(a_stats), fast(b_stats))
		},
	}
}

/// the coarse maxima of `A B` on the CPU: the bound product `|A|·|B| ≤ C_hi·2^(-s_0i - s_0j)`,
/// exact in integers, and the largest entry of each of its rows and columns
pub(crate) fn coarse_maxima(a: &Operand, b: &Operand) -> CoarseMaxima {
	let (s0a, coarse_a) = coarse(a);
	let (s0b, coarse_b) = coarse(b);
	let c_hi = fill_entries(a.len, b.len, 1, |i, j, out: &mut [i64]| {
		out[0] = dot_wide(coarse_a.row(0, i), coarse_b.row(0, j))
	});
	let row_max = (0..a.len)
		.map(|i| (0..b.len).map(|j| c_hi[i + j * a.len]).max().unwrap_or(0))
		.collect();
	let col_max = (0..b.len)
		.map(|j| c_hi[j * a.len..(j + 1) * a.len].iter().copied().max().unwrap_or(0))
		.collect();
	CoarseMaxima {
		s0: (s0a, s0b),
		max: (row_max, col_max),
	}
}

/// the coarse shifts and the coarse magnitudes `ceil(|re| 2^s0) + ceil(|im| 2^s0)` of an operand
fn coarse(op: &Operand) -> (Vec<i32>, Planes) {
	let s0: Vec<i32> = (0..op.len)
		.into_par_iter()
		.map(|i| coarse_shift(op.amax(i), op.is_complex()))
		.collect();
	let mut planes = Planes::zeros(1, op.len, op.k);
	planes.rows_mut().enumerate().for_each(|(i, dst)| {
		for (h, d) in dst.iter_mut().enumerate() {
			let im = op.im_row(i).get(h).map_or(0, |&x| coarse_magnitude(x, s0[i]));
			*d = coarse_magnitude(op.re_row(i)[h], s0[i]) + im;
		}
	});
	(s0, planes)
}

/// the residue planes of one operand: plane `l` (real), or planes `3l, 3l+1, 3l+2` holding the
/// residues of the real part, the imaginary part and their sum (complex, for 3M)
pub(crate) fn residue_planes(op: &Operand, shifts: &[i32], moduli: &[u32]) -> Planes {
	let per_modulus = if op.is_complex() { 3 } else { 1 };
	let (rows, k) = (op.len, op.k);
	// row by row (all planes of a row together), then scattered into the planes
	let by_row: Vec<Vec<i8>> = (0..rows)
		.into_par_iter()
		.map(|i| {
			let mut out = vec![0i8; per_modulus * moduli.len() * k];
			for h in 0..k {
				let re = ScaledInteger::new(op.re_row(i)[h], shifts[i]);
				let im = op.im_row(i).get(h).map(|&x| ScaledInteger::new(x, shifts[i]));
				for (l, &m) in moduli.iter().enumerate() {
					let r = re.residue(m);
					out[per_modulus * l * k + h] = r;
					if let Some(im) = im {
						let s = im.residue(m);
						out[(3 * l + 1) * k + h] = s;
						out[(3 * l + 2) * k + h] = sym_mod(r as i64 + s as i64, m);
					}
				}
			}
			out
		})
		.collect();
	let mut planes = Planes::zeros(per_modulus * moduli.len(), rows, k);
	planes.rows_mut().enumerate().for_each(|(row, dst)| {
		let (plane, i) = (row / rows, row % rows);
		dst.copy_from_slice(&by_row[i][plane * k..(plane + 1) * k]);
	});
	planes
}

/// `A B` by scheme II with the constants of `crt`, accurately scaled by `coarse` where given, with
/// the CRT's remainders where `remainders` (real operands)
pub(super) fn product(
	a: &Operand,
	b: &Operand,
	stats: (&[RowStats], &[RowStats]),
	(crt, remainders): (&Crt, bool),
	coarse: Option<&CoarseMaxima>,
	timer: &mut Timer,
) -> Parts {
	let (sa, sb) = shifts(stats.0, stats.1, crt.lambda, coarse);
	let ra = residue_planes(a, &sa, &crt.moduli);
	let rb = residue_planes(b, &sb, &crt.moduli);
	timer.split_done();
	let (m, n, p) = (a.len, b.len, crt.len());
	let complex = a.is_complex();
	let width = if complex { 2 * p } else { p };
	// the residues of C' modulo each m_l (complex: Re then Im), as the fused GEMM epilogue writes them
	let residues = fill_entries(m, n, width, |i, j, out: &mut [i8]| {
		for (l, &modulus) in crt.moduli.iter().enumerate() {
			if complex {
				let t1 = dot_wide(ra.row(3 * l, i), rb.row(3 * l, j));
				let t2 = dot_wide(ra.row(3 * l + 1, i), rb.row(3 * l + 1, j));
				let t3 = dot_wide(ra.row(3 * l + 2, i), rb.row(3 * l + 2, j));
				out[l] = sym_mod(t1 - t2, modulus);
				out[p + l] = sym_mod(t3 - t1 - t2, modulus);
			} else {
				out[l] = sym_mod(dot_wide(ra.row(l, i), rb.row(l, j)), modulus);
			}
		}
	});
	timer.products_done();
	let value = |i: usize, j: usize, r: &[i8]| scale_pow2(crt.reconstruct(r), -sa[i] - sb[j]);
	let parts = if complex {
		let pairs = map_entries(m, width, &residues, |i, j, r| (value(i, j, &r[..p]), value(i, j, &r[p..])));
		Parts::from_pairs(pairs)
	} else if remainders {
		let pair = |i: usize, j: usize, r: &[i8]| {
			let (s, e) = crt.reconstruct_pair(r);
			(scale_pow2(s, -sa[i] - sb[j]), scale_pow2(e, -sa[i] - sb[j]))
		};
		let (re, lo) = map_entries(m, width, &residues, pair).into_iter().unzip();
		Parts { re, im: Vec::new(), lo }
	} else {
		Parts {
			re: map_entries(m, width, &residues, value),
			im: Vec::new(),
			lo: Vec::new(),
		}
	};
	timer.reconstruct_done();
	parts
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::stats::row_stats;
	use crate::testing::random_matrix;

	#[test]
	fn accurate_shifts_are_at_least_as_large_on_wide_inputs() {
		let a = random_matrix::<f64>(64, 64, 4.0, 1);
		let b = random_matrix::<f64>(64, 64, 4.0, 2);
		let (oa, ob) = (Operand::lhs(a.as_ref()), Operand::rhs(b.as_ref()));
		let (sa, sb) = (row_stats(&oa), row_stats(&ob));
		let lambda = crate::scheme2::lambda(12);
		let fast = shifts(&sa, &sb, lambda, None);
		let accurate = shifts(&sa, &sb, lambda, Some(&coarse_maxima(&oa, &ob)));
		let gain: i32 = fast.0.iter().zip(&accurate.0).map(|(f, a)| a - f).sum();
		println!("fast {:?}\naccurate {:?}\ngain {gain}", &fast.0[..10], &accurate.0[..10]);
		assert!(gain > 0);
	}
}
