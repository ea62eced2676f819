//! the native product on the host's cores, where the front door or the CPU oracle computes a
//! request natively, and the native entries of emulated products (those whose rows or columns
//! hold NaN or infinities)

use crate::Scalar;
use crate::fp::{Sum, combine};
use crate::precision::Precision;
use crate::request::Request;
use crate::view::{View, faer_matmul};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef};

/// a request on host views of its operands
pub(crate) type HostRequest<'a, T> = Request<T, View<'a, T>>;

/// the native product at `precision`: faer's, except for `f32`/`c32` outputs at a precision above
/// FP32 level ([`Precision::F64`], [`Precision::Bits`]), which are accumulated in `f64` (an FP32
/// product, whose errors grow with K, does not keep those promises) and combined like an emulated
/// product; the entries in rows and columns holding NaN or infinities are those of
/// [`nonfinite_entries`], since faer's paths for the smallest shapes skip a unit `alpha` and so
/// give other non-finite parts than its own larger paths and cuBLAS
pub(crate) fn native_at<T: Scalar>(mut dst: MatMut<'_, T>, request: &HostRequest<'_, T>) {
	let (lhs, rhs) = (request.lhs, request.rhs);
	// column by column, the order of faer's column-major storage
	let mut bad_rows = vec![false; lhs.nrows()];
	for h in 0..lhs.ncols() {
		(0..lhs.nrows()).for_each(|i| bad_rows[i] |= !lhs.mat[(i, h)].is_finite_value());
	}
	let rows: Vec<usize> = (0..lhs.nrows()).filter(|&i| bad_rows[i]).collect();
	let cols: Vec<usize> = (0..rhs.ncols())
		.filter(|&j| (0..rhs.nrows()).any(|h| !rhs.mat[(h, j)].is_finite_value()))
		.collect();
	let fixed = nonfinite_values(dst.as_ref(), request, (&rows, &cols));
	finite_product(dst.as_mut(), request);
	fixed.into_iter().for_each(|(i, j, x)| dst[(i, j)] = x);
}

/// [`native_at`] but for its non-finite entries
fn finite_product<T: Scalar>(mut dst: MatMut<'_, T>, request: &HostRequest<'_, T>) {
	let Request { lhs, rhs, par, .. } = *request;
	if T::MANTISSA_BITS == 53 || matches!(request.precision, Precision::Tf32 | Precision::F32) {
		return faer_matmul(dst, request.accum, lhs, rhs, request.alpha, par);
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
		let old = (request.accum == Accum::Add).then(|| dst[(i, j)]);
		dst[(i, j)] = combine(c, request.alpha, old, Sum::Native);
	}
}

/// the entries in `rows` (all columns) and `cols` (all rows), both ascending, of a product whose
/// rows and columns there hold NaN or infinities: plain sums of products in `f64`, combined like
/// the emulated entries, so that they carry the non-finite values a native product gives (cuBLAS,
/// OpenBLAS and faer scale a complex sum by the full product with alpha, so that an infinite part
/// meets the zero imaginary part of `alpha = 1 + 0i` and gives NaN); the same operations in the
/// same order as `native_fixup` in cuda/reconstruct.cu
pub(crate) fn nonfinite_entries<T: Scalar>(mut dst: MatMut<'_, T>, request: &HostRequest<'_, T>, (rows, cols): (&[usize], &[usize])) {
	let fixed = nonfinite_values(dst.as_ref(), request, (rows, cols));
	fixed.into_iter().for_each(|(i, j, x)| dst[(i, j)] = x);
}

/// the values [`nonfinite_entries`] writes, as `(row, column, value)`, reading `dst` as it is
fn nonfinite_values<T: Scalar>(
	dst: MatRef<'_, T>,
	request: &HostRequest<'_, T>,
	(rows, cols): (&[usize], &[usize]),
) -> Vec<(usize, usize, T)> {
	let Request {
		lhs, rhs, accum, alpha, ..
	} = *request;
	let entry = |i: usize, j: usize| {
		let (mut re, mut im) = (0.0f64, 0.0f64);
		for h in 0..lhs.ncols() {
			let (x, y) = (lhs.at(i, h), rhs.at(h, j));
			re += x.re() * y.re() - if T::IS_COMPLEX { x.im() * y.im() } else { 0.0 };
			if T::IS_COMPLEX {
				im += x.re() * y.im() + x.im() * y.re();
			}
		}
		let old = (accum == Accum::Add).then(|| dst[(i, j)]);
		(i, j, combine((re, im), alpha, old, Sum::Native))
	};
	let in_rows = rows.iter().flat_map(|&i| (0..rhs.ncols()).map(move |j| (i, j)));
	let in_cols = cols.iter().flat_map(|&j| {
		(0..lhs.nrows())
			.filter(move |i| rows.binary_search(i).is_err())
			.map(move |i| (i, j))
	});
	in_rows.chain(in_cols).map(|(i, j)| entry(i, j)).collect()
}
