//! the native product behind the front door, and the native entries of emulated products (those
//! whose rows or columns hold NaN or infinities)

use crate::fp::combine;
use crate::{Precision, Scalar};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

/// faer's native product
fn native<T: Scalar>(dst: MatMut<'_, T>, accum: Accum, lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, alpha: T) {
	matmul(dst, accum, lhs, rhs, alpha, Par::rayon(0));
}

/// the native product at `precision`: faer's, except for `f32`/`c32` outputs at a precision above
/// FP32 level ([`Precision::F64`], [`Precision::Bits`]), which are accumulated in `f64` (an FP32
/// product, whose errors grow with K, does not keep those promises) and combined like an emulated
/// product
pub(super) fn native_at<T: Scalar>(
	mut dst: MatMut<'_, T>,
	accum: Accum,
	lhs: MatRef<'_, T>,
	rhs: MatRef<'_, T>,
	alpha: T,
	precision: Precision,
) {
	if T::MANTISSA_BITS == 53 || matches!(precision, Precision::Tf32 | Precision::F32) {
		return native(dst, accum, lhs, rhs, alpha);
	}
	let product: Vec<(f64, f64)> = if T::IS_COMPLEX {
		let wide = |x: MatRef<'_, T>| Mat::from_fn(x.nrows(), x.ncols(), |i, j| faer::c64::new(x[(i, j)].re(), x[(i, j)].im()));
		let c = wide(lhs) * wide(rhs);
		(0..c.ncols())
			.flat_map(|j| (0..c.nrows()).map(move |i| (i, j)))
			.map(|(i, j)| (c[(i, j)].re, c[(i, j)].im))
			.collect()
	} else {
		let wide = |x: MatRef<'_, T>| Mat::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)].re());
		let c = wide(lhs) * wide(rhs);
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
/// the emulated entries, so that they carry the non-finite values a native product gives (`alpha
/// = 1 + 0i` keeps an infinite part infinite and the other part as it is); the same operations in
/// the same order as `native_fixup` in cuda/reconstruct.cu
pub(super) fn nonfinite_entries<T: Scalar>(
	mut dst: MatMut<'_, T>,
	accum: Accum,
	(lhs, rhs): (MatRef<'_, T>, MatRef<'_, T>),
	alpha: T,
	(rows, cols): (&[usize], &[usize]),
) {
	let mut entry = |i: usize, j: usize| {
		let (mut re, mut im) = (0.0f64, 0.0f64);
		for h in 0..lhs.ncols() {
			let (x, y) = (lhs[(i, h)], rhs[(h, j)]);
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
