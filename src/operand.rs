//! an operand as the split kernels see it: `f64` parts, one row per output row (of `A`) or per
//! output column (of `B`), `K` contiguous ("K-major"), non-finite entries set aside

use crate::Scalar;
use crate::balance::Range;
use crate::fp::scale_pow2;
use crate::view::View;
use rayon::prelude::*;

/// the rows of `A` or the columns of `B`, as `f64` parts with `K` contiguous
pub(crate) struct Operand {
	/// rows (of `A`) or columns (of `B`)
	pub len: usize,
	/// the inner dimension
	pub k: usize,
	/// real parts, `len * k`, row `i` at `i * k`
	pub re: Vec<f64>,
	/// imaginary parts (empty for real operands)
	pub im: Vec<f64>,
	/// rows that held a NaN or an infinity (those entries are stored as zero)
	pub nonfinite: Vec<usize>,
}

impl Operand {
	/// the rows of `a`
	pub fn lhs<'a, T: Scalar>(a: impl Into<View<'a, T>>) -> Self {
		let a = a.into();
		Self::gather(a.nrows(), a.ncols(), |i, h| a.at(i, h))
	}

	/// the columns of `b`
	pub fn rhs<'a, T: Scalar>(b: impl Into<View<'a, T>>) -> Self {
		let b = b.into();
		Self::gather(b.ncols(), b.nrows(), |j, h| b.at(h, j))
	}

	fn gather<T: Scalar>(len: usize, k: usize, at: impl Fn(usize, usize) -> T + Sync) -> Self {
		let mut re = vec![0.0; len * k];
		let mut im = if T::IS_COMPLEX { vec![0.0; len * k] } else { Vec::new() };
		let fill_row = |i: usize, re: &mut [f64], mut im: Option<&mut [f64]>| {
			let mut finite = true;
			for h in 0..k {
				let x = at(i, h);
				if x.is_finite_value() {
					re[h] = x.re();
					if let Some(im) = im.as_deref_mut() {
						im[h] = x.im();
					}
				} else {
					finite = false;
				}
			}
			finite
		};
		let finite: Vec<bool> = if k == 0 {
			vec![true; len]
		} else if T::IS_COMPLEX {
			re.par_chunks_mut(k)
				.zip(im.par_chunks_mut(k))
				.enumerate()
				.map(|(i, (r, m))| fill_row(i, r, Some(m)))
				.collect()
		} else {
			re.par_chunks_mut(k).enumerate().map(|(i, r)| fill_row(i, r, None)).collect()
		};
		let nonfinite = finite.iter().enumerate().filter(|(_, f)| !**f).map(|(i, _)| i).collect();
		Operand { len, k, re, im, nonfinite }
	}

	/// the real parts (`imaginary` false) or the imaginary parts of a complex operand, as a real
	/// operand (rows with a NaN or an infinity stay flagged, and zero)
	pub fn part(&self, imaginary: bool) -> Operand {
		Operand {
			len: self.len,
			k: self.k,
			re: if imaginary { self.im.clone() } else { self.re.clone() },
			im: Vec::new(),
			nonfinite: self.nonfinite.clone(),
		}
	}

	/// the first `len` rows
	pub fn leading(&self, len: usize) -> Operand {
		let len = len.min(self.len);
		Operand {
			len,
			k: self.k,
			re: self.re[..len * self.k].to_vec(),
			im: self.im.get(..len * self.k).map_or_else(Vec::new, <[f64]>::to_vec),
			nonfinite: self.nonfinite.iter().copied().filter(|&i| i < len).collect(),
		}
	}

	/// whether the operand has imaginary parts
	pub fn is_complex(&self) -> bool {
		!self.im.is_empty()
	}

	/// the real parts of row `i`
	pub fn re_row(&self, i: usize) -> &[f64] {
		&self.re[i * self.k..(i + 1) * self.k]
	}

	/// the imaginary parts of row `i` (empty for real operands)
	pub fn im_row(&self, i: usize) -> &[f64] {
		if self.is_complex() {
			&self.im[i * self.k..(i + 1) * self.k]
		} else {
			&[]
		}
	}

	/// every part of row `i`: real parts, then imaginary parts
	pub fn parts(&self, i: usize) -> impl Iterator<Item = f64> + Clone + '_ {
		self.re_row(i).iter().chain(self.im_row(i)).copied()
	}

	/// the largest magnitude of row `i` over all parts
	pub fn amax(&self, i: usize) -> f64 {
		self.parts(i).fold(0.0, |m, x| m.max(x.abs()))
	}

	/// the exponent range of the nonzero parts at each inner index `h`, over all rows
	pub fn inner_ranges(&self) -> Vec<Range> {
		let mut ranges = vec![Range::EMPTY; self.k];
		for i in 0..self.len {
			for (h, r) in ranges.iter_mut().enumerate() {
				*r = r.with(self.re_row(i)[h]);
				if let Some(&x) = self.im_row(i).get(h) {
					*r = r.with(x);
				}
			}
		}
		ranges
	}

	/// every part at inner index `h` times `2^(sign d[h])` (exact for the clamped shifts of
	/// [`crate::balance::shifts`])
	pub fn scale_inner(&mut self, d: &[i32], sign: i32) {
		let k = self.k;
		for part in [&mut self.re, &mut self.im] {
			part.par_chunks_mut(k.max(1)).for_each(|row| {
				row.iter_mut().zip(d).for_each(|(x, &e)| *x = scale_pow2(*x, sign * e));
			});
		}
	}
}
