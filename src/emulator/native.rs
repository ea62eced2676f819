//! the native product behind the front door, and the native entries of emulated products (those
//! whose rows or columns hold NaN or infinities)

use crate::fp::combine;
use crate::view::{View, faer_matmul};
use crate::{Precision, Scalar};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, Par};

/// the native product at `precision`: faer's, except for `f32`/`c32` outputs at a precision above
/// FP32 level ([`Precision::F64`], [`Precision::Bits`]), which are accumulated in `f64` (an FP32
/// product, whose errors grow with K, does not keep those promises) and combined like an emulated
/// product
pub(super) fn native_at<T: Scalar>(
	mut dst: MatMut<'_, T>,
	accum: Accum,
	(lhs, rhs): (View<'_, T>, View<'_, T>),
	alpha: T,
	(precision, par): (Precision, Par),
) {
	if T::MANTISSA_BITS == 53 || matches!(precision, Precision::Tf32 | Precision::F32) {
		return faer_matmul(dst, accum, lhs, rhs, alpha, par);
	}
	let product: Vec<(f64, f64)> = if T::IS_COMPLEX {
		let wide = |x: View<'_, T>| Mat::from_fn(x.nrows(), x.ncols(), |i, j| faer::c64::new(x.at(i, j).re(), x.at(i, j).im()));
		let mut c = Mat::zeros(lhs.nrows(), rhs.ncols());
		matmul(c.as_mut(), Accum::Replace, wide(lhs), wide(rhs), faer::c64::new(1.0, 0.0), par);
		(0..c.ncols())
			.flat_map(|j| (0..c.nrows()).map(move |i| (i, j)))
			.map(|(i, j)| (c[(i, j)].re, c[(i, j)].im))
			.collect()
	} else {
		let wide = |x: View<'_, T>| Mat::from_fn(x.nrows(), x.ncols(), |i, j| x.at(i, j).re());
		let mut c = Mat::zeros(lhs.nrows(), rhs.ncols());
		matmul(c.as_mut(), Accum::Replace, wide(lhs), wide(rhs), 1.0, par);
		(0..c.ncols())
			.flat_map(|j| (0..c.nrows()).map(move |i| (i, j)))
			.map(|(i, j)| (c[(i, j)], 0.0))
			.collect()
	};
	let m = dst.nrows();
	for (idx, &c) in product.iter().enumerate() {
		let (i, j) = (idx % m, idx / m);
		let old = (accum == Accum::Add).then(|| dst[(i, j)]);
		dst[(i, j)] = combine(c, alpha, old);
	}
}

/// the entries in `rows` (all columns) and `cols` (all rows), both ascending, of a product whose
/// rows and columns there hold NaN or infinities: plain sums of products in `f64`, combined like
/// the emulated entries, so that they carry the non-finite values a native product gives (cuBLAS,
/// OpenBLAS and faer scale a complex sum by the full product with alpha, so that an infinite part
/// meets the zero imaginary part of `alpha = 1 + 0i` and gives NaN); the same operations in the
/// same order as `native_fixup` in cuda/reconstruct.cu
pub(super) fn nonfinite_entries<T: Scalar>(
	mut dst: MatMut<'_, T>,
	accum: Accum,
	(lhs, rhs): (View<'_, T>, View<'_, T>),
	alpha: T,
	(rows, cols): (&[usize], &[usize]),
) {
	let mut entry = |i: usize, j: usize| {
		let (mut re, mut im) = (0.0f64, 0.0f64);
		for h in 0..lhs.ncols() {
			let (x, y) = (lhs.at(i, h), rhs.at(h, j));
			re += x.re() * y.re() - if T::IS_COMPLEX { x.im() * y.im() } else { 0.0 };
			if T::IS_COMPLEX {
				im += x.re() * y.im() + x.im() * y.re();
			}
		}
		let old = (accum == Accum::Add).then(|| dst[(i, j)]);
		dst[(i, j)] = combine((re, im), alpha, old);
	};
	for &i in rows {
		(0..rhs.ncols()).for_each(|j| entry(i, j));
	}
	for &j in cols {
		(0..lhs.nrows())
			.filter(|i| rows.binary_search(i).is_err())
			.for_each(|i| entry(i, j));
	}
}
