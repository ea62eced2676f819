//! an operand as the caller gave it: a view of its stored elements and whether the product reads
//! them conjugated (faer's conjugated and adjoint views), so that no conjugate is ever copied

use crate::Scalar;
use faer::linalg::matmul::matmul;
use faer::traits::Conjugate;
use faer::{Accum, Conj, MatMut, MatRef, Par};

/// a matrix view and whether its elements are read conjugated
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a, T> {
	/// the stored elements
	pub mat: MatRef<'a, T>,
	/// whether the product reads `conj(x)` for each stored `x`
	pub conj: bool,
}

impl<'a, T: Scalar> View<'a, T> {
	/// the view of any faer matrix view, conjugated ones included
	pub fn of<L: Conjugate<Canonical = T>>(m: MatRef<'a, L>) -> Self {
		View {
			mat: m.canonical(),
			conj: Conj::get::<L>() == Conj::Yes,
		}
	}

	pub fn nrows(&self) -> usize {
		self.mat.nrows()
	}

	pub fn ncols(&self) -> usize {
		self.mat.ncols()
	}

	/// `(rows, columns)`
	pub fn shape(&self) -> (usize, usize) {
		self.mat.shape()
	}

	/// the element `(i, j)` as the product reads it
	#[inline]
	pub fn at(&self, i: usize, j: usize) -> T {
		let x = self.mat[(i, j)];
		if self.conj { T::from_parts(x.re(), -x.im()) } else { x }
	}

	/// the `count` rows from row `first`
	pub fn subrows(self, first: usize, count: usize) -> Self {
		View {
			mat: self.mat.subrows(first, count),
			..self
		}
	}

	/// the `count` columns from column `first`
	#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
	pub fn subcols(self, first: usize, count: usize) -> Self {
		View {
			mat: self.mat.subcols(first, count),
			..self
		}
	}
}

impl<'a, T> From<MatRef<'a, T>> for View<'a, T> {
	fn from(mat: MatRef<'a, T>) -> Self {
		View { mat, conj: false }
	}
}

/// faer's product `dst (+)= alpha lhs rhs`, each operand read conjugated where its view says so
pub(crate) fn faer_matmul<T: Scalar>(dst: MatMut<'_, T>, accum: Accum, lhs: View<'_, T>, rhs: View<'_, T>, alpha: T, par: Par) {
	match (lhs.conj, rhs.conj) {
		(false, false) => matmul(dst, accum, lhs.mat, rhs.mat, alpha, par),
		(true, false) => matmul(dst, accum, lhs.mat.conjugate(), rhs.mat, alpha, par),
		(false, true) => matmul(dst, accum, lhs.mat, rhs.mat.conjugate(), alpha, par),
		(true, true) => matmul(dst, accum, lhs.mat.conjugate(), rhs.mat.conjugate(), alpha, par),
	}
}
