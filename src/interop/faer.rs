//! [`EmuMatMul`] for faer's matrices, columns and rows, owned, views and mutable views, and their
//! conjugated views (read conjugated, not copied): every pair that faer's `*` multiplies, with
//! what `*` returns (`Mat * Mat` and `Col * Row`: a `Mat`; `Mat * Col`: a `Col`; `Row * Mat`: a
//! `Row`; `Row * Col`: a scalar)

use super::EmuMatMul;
use crate::shape::check_shapes;
use crate::view::View;
use crate::{Emulator, Error, Precision, Scalar};
use faer::traits::Conjugate;
use faer::{Accum, Col, ColMut, ColRef, Mat, MatMut, MatRef, Row, RowMut, RowRef};

/// a faer operand as a matrix view (columns `n x 1`, rows `1 x n`)
trait AsView {
	type Elem;
	fn view(&self) -> MatRef<'_, Self::Elem>;
}

macro_rules! as_view {
	($($form:ty => |$x:ident| $view:expr;)*) => {$(
		impl<E> AsView for $form {
			type Elem = E;
			fn view(&self) -> MatRef<'_, E> {
				let $x = self;
				$view
			}
		}
	)*};
}

as_view! {
	Mat<E> => |x| x.as_ref();
	MatRef<'_, E> => |x| *x;
	MatMut<'_, E> => |x| x.as_ref();
	Col<E> => |x| x.as_ref().as_mat();
	ColRef<'_, E> => |x| x.as_mat();
	ColMut<'_, E> => |x| x.as_ref().as_mat();
	Row<E> => |x| x.as_ref().as_mat();
	RowRef<'_, E> => |x| x.as_mat();
	RowMut<'_, E> => |x| x.as_ref().as_mat();
}

/// what a product of two faer operands comes back as
trait Product<T>: Sized {
	fn compute(emu: &Emulator, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> Result<Self, Error>;
}

/// the `m x n` product of `lhs` and `rhs` into a fresh matrix (made resident while it computes)
fn product<T: Scalar>(emu: &Emulator, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> Result<Mat<T>, Error> {
	check_shapes(lhs.shape(), rhs.shape(), None)?;
	crate::fresh::mat(lhs.nrows(), rhs.ncols(), |c| {
		emu.matmul_views(c, Accum::Replace, (lhs, rhs), T::from_parts(1.0, 0.0), (precision, emu.par()))
	})
}

impl<T: Scalar> Product<T> for Mat<T> {
	fn compute(emu: &Emulator, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> Result<Self, Error> {
		product(emu, lhs, rhs, precision)
	}
}

impl<T: Scalar> Product<T> for Col<T> {
	fn compute(emu: &Emulator, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> Result<Self, Error> {
		Ok(product(emu, lhs, rhs, precision)?.col(0).to_owned())
	}
}

impl<T: Scalar> Product<T> for Row<T> {
	fn compute(emu: &Emulator, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> Result<Self, Error> {
		Ok(product(emu, lhs, rhs, precision)?.row(0).to_owned())
	}
}

/// the product of a row and a column
type Entry<T> = T;

impl<T: Scalar> Product<T> for Entry<T> {
	fn compute(emu: &Emulator, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> Result<Self, Error> {
		Ok(product(emu, lhs, rhs, precision)?[(0, 0)])
	}
}

macro_rules! products {
	($out:ident: [$($lhs:ty),*] x $rhs:tt) => {$(products!(@lhs $out: $lhs, $rhs);)*};
	(@lhs $out:ident: $lhs:ty, [$($rhs:ty),*]) => {$(
		impl<E, F> EmuMatMul<$rhs> for $lhs
		where
			E: Conjugate<Canonical: Scalar>,
			F: Conjugate<Canonical = E::Canonical>,
		{
			type Output = $out<E::Canonical>;

			fn emu_mul_with(&self, emu: &Emulator, rhs: &$rhs, precision: Precision) -> Result<Self::Output, Error> {
				Product::compute(emu, View::of(self.view()), View::of(rhs.view()), precision)
			}
		}
	)*};
}

products!(Mat: [Mat<E>, MatRef<'_, E>, MatMut<'_, E>] x [Mat<F>, MatRef<'_, F>, MatMut<'_, F>]);
products!(Col: [Mat<E>, MatRef<'_, E>, MatMut<'_, E>] x [Col<F>, ColRef<'_, F>, ColMut<'_, F>]);
products!(Row: [Row<E>, RowRef<'_, E>, RowMut<'_, E>] x [Mat<F>, MatRef<'_, F>, MatMut<'_, F>]);
products!(Entry: [Row<E>, RowRef<'_, E>, RowMut<'_, E>] x [Col<F>, ColRef<'_, F>, ColMut<'_, F>]);
products!(Mat: [Col<E>, ColRef<'_, E>, ColMut<'_, E>] x [Row<F>, RowRef<'_, F>, RowMut<'_, F>]);
