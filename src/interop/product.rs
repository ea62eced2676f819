//! what the `EmuMatMul` implementations share: the shape check and the product into a buffer

use crate::{Emulator, Error, Precision, Scalar};
use faer::{Accum, MatMut, MatRef};

/// the error of `lhs * rhs` when the inner dimensions differ
pub(crate) fn check_inner<T>(lhs: MatRef<'_, T>, rhs: MatRef<'_, T>) -> Result<(), Error> {
	if lhs.ncols() == rhs.nrows() {
		Ok(())
	} else {
		Err(Error::ShapeMismatch {
			lhs: (lhs.nrows(), lhs.ncols()),
			rhs: (rhs.nrows(), rhs.ncols()),
			dst: None,
		})
	}
}

/// `dst = lhs * rhs` on `emu`
pub(crate) fn product_into<T: Scalar>(
	emu: &Emulator,
	dst: MatMut<'_, T>,
	lhs: MatRef<'_, T>,
	rhs: MatRef<'_, T>,
	precision: Precision,
) -> Result<(), Error> {
	emu.matmul(dst, Accum::Replace, lhs, rhs, T::from_parts(1.0, 0.0), precision)
}
