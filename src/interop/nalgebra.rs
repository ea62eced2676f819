//! [`EmuMatMul`] for nalgebra matrices and views, through zero-copy faer views

use super::{EmuMatMul, check_inner, product_into};
use crate::{Emulator, Error, Precision, Scalar};
use faer::{MatMut, MatRef};
use nalgebra::{DMatrix, Dim, Matrix, RawStorage};

/// a faer view of any nalgebra matrix (owned, view, strided view), without copying
pub(crate) fn as_faer<T, R: Dim, C: Dim, S: RawStorage<T, R, C>>(m: &Matrix<T, R, C, S>) -> MatRef<'_, T> {
	let (nrows, ncols) = m.shape();
	let (rs, cs) = m.strides();
	// SAFETY: nalgebra guarantees that `ptr + i rs + j cs` is a valid element for i < nrows, j < ncols
	unsafe { MatRef::from_raw_parts(m.data.ptr(), nrows, ncols, rs as isize, cs as isize) }
}

impl<T, R1, C1, S1, R2, C2, S2> EmuMatMul<Matrix<T, R2, C2, S2>> for Matrix<T, R1, C1, S1>
where
	T: Scalar + nalgebra::Scalar,
	R1: Dim,
	C1: Dim,
	S1: RawStorage<T, R1, C1>,
	R2: Dim,
	C2: Dim,
	S2: RawStorage<T, R2, C2>,
{
	type Output = DMatrix<T>;

	fn emu_mul_with(&self, emu: &Emulator, rhs: &Matrix<T, R2, C2, S2>, precision: Precision) -> Result<DMatrix<T>, Error> {
		let (lhs, rhs) = (as_faer(self), as_faer(rhs));
		check_inner(lhs, rhs)?;
		let (m, n) = (lhs.nrows(), rhs.ncols());
		let mut c = DMatrix::from_element(m, n, T::from_parts(0.0, 0.0));
		let dst = MatMut::from_column_major_slice_mut(c.as_mut_slice(), m, n);
		product_into(emu, dst, lhs, rhs, precision)?;
		Ok(c)
	}
}
