//! [`EmuMatMul`] for faer's `Mat` and `MatRef`

use super::{EmuMatMul, check_inner, product_into};
use crate::{Emulator, Error, Precision, Scalar};
use faer::{Mat, MatRef};

fn product<T: Scalar>(emu: &Emulator, lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, precision: Precision) -> Result<Mat<T>, Error> {
	check_inner(lhs, rhs)?;
	let mut c = Mat::zeros(lhs.nrows(), rhs.ncols());
	product_into(emu, c.as_mut(), lhs, rhs, precision)?;
	Ok(c)
}

impl<T: Scalar> EmuMatMul for Mat<T> {
	type Output = Mat<T>;
	fn emu_mul_with(&self, emu: &Emulator, rhs: &Mat<T>, precision: Precision) -> Result<Mat<T>, Error> {
		product(emu, self.as_ref(), rhs.as_ref(), precision)
	}
}

impl<'b, T: Scalar> EmuMatMul<MatRef<'b, T>> for Mat<T> {
	type Output = Mat<T>;
	fn emu_mul_with(&self, emu: &Emulator, rhs: &MatRef<'b, T>, precision: Precision) -> Result<Mat<T>, Error> {
		product(emu, self.as_ref(), *rhs, precision)
	}
}

impl<T: Scalar> EmuMatMul<Mat<T>> for MatRef<'_, T> {
	type Output = Mat<T>;
	fn emu_mul_with(&self, emu: &Emulator, rhs: &Mat<T>, precision: Precision) -> Result<Mat<T>, Error> {
		product(emu, *self, rhs.as_ref(), precision)
	}
}

impl<'b, T: Scalar> EmuMatMul<MatRef<'b, T>> for MatRef<'_, T> {
	type Output = Mat<T>;
	fn emu_mul_with(&self, emu: &Emulator, rhs: &MatRef<'b, T>, precision: Precision) -> Result<Mat<T>, Error> {
		product(emu, *self, *rhs, precision)
	}
}
