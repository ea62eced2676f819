//! nalgebra: [`EmuMatMul`] for every matrix, vector and view, returning what `*` returns (an
//! owned matrix of the left operand's rows and the right operand's columns, so `DMatrix *
//! DVector` gives a `DVector` and static shapes stay static), and [`emu_gemm`], the emulated
//! `c.gemm(alpha, &a, &b, beta)`; operands are read through zero-copy faer views

use super::EmuMatMul;
use crate::shape::check_shapes;
use crate::view::View;
use crate::{Accum, Emulator, Error, Precision, Scalar};
use faer::{MatMut, MatRef};
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Matrix, OMatrix, RawStorage, RawStorageMut};

/// a faer view of any nalgebra matrix (owned, view, strided view), without copying
fn as_faer<T, R: Dim, C: Dim, S: RawStorage<T, R, C>>(m: &Matrix<T, R, C, S>) -> MatRef<'_, T> {
	let (nrows, ncols) = m.shape();
	let (rs, cs) = m.strides();
	// SAFETY: nalgebra guarantees that `ptr + i rs + j cs` is a valid element for i < nrows, j < ncols
	unsafe { MatRef::from_raw_parts(m.data.ptr(), nrows, ncols, rs as isize, cs as isize) }
}

/// a mutable faer view of any mutable nalgebra matrix or view, without copying
fn as_faer_mut<T, R: Dim, C: Dim, S: RawStorageMut<T, R, C>>(m: &mut Matrix<T, R, C, S>) -> MatMut<'_, T> {
	let (nrows, ncols) = m.shape();
	let (rs, cs) = m.strides();
	// SAFETY: as in `as_faer`, and the view borrows `m` mutably for its lifetime
	unsafe { MatMut::from_raw_parts_mut(m.data.ptr_mut(), nrows, ncols, rs as isize, cs as isize) }
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
	DefaultAllocator: Allocator<R1, C2>,
{
	type Output = OMatrix<T, R1, C2>;

	fn emu_mul_with(&self, emu: &Emulator, rhs: &Matrix<T, R2, C2, S2>, precision: Precision) -> Result<OMatrix<T, R1, C2>, Error> {
		let (lhs_view, rhs_view) = (as_faer(self), as_faer(rhs));
		check_shapes(lhs_view.shape(), rhs_view.shape(), None)?;
		let (rows, cols) = (self.shape_generic().0, rhs.shape_generic().1);
		let mut c = nalgebra::UninitMatrix::<T, R1, C2>::uninit(rows, cols);
		let (m, n) = c.shape();
		let views = (View::from(lhs_view), View::from(rhs_view));
		let ptr = c.as_mut_ptr();
		// SAFETY: an owned matrix is contiguous in column-major order
		let entries = unsafe { std::slice::from_raw_parts_mut(ptr, m * n) };
		crate::fresh::while_resident(entries, || {
			// SAFETY: the view covers the owned matrix, which the product writes before any read
			let dst = unsafe { MatMut::from_raw_parts_mut(ptr.cast::<T>(), m, n, 1, m as isize) };
			emu.matmul_views(dst, Accum::Replace, views, T::from_parts(1.0, 0.0), (precision, emu.par()))
		})?;
		// SAFETY: the product wrote every entry
		Ok(unsafe { c.assume_init() })
	}
}

/// `c = alpha a b + beta c` at `precision` on the global context ([`Emulator::global`]), with
/// the semantics of nalgebra's `c.gemm(alpha, &a, &b, beta)`: `beta = 0` does not read `c` (NaN
/// there does not spread); otherwise `c` is scaled by `beta` first and the emulated `alpha a b`
/// added to it, each entry rounded as [`Emulator::matmul`] rounds it. `c`, `a` and `b` may be any
/// nalgebra matrices, vectors or views (read and written in place, without copies). Shapes are
/// checked before `c` is touched; an error of the product itself (a GPU out of memory) can leave
/// `c` scaled by `beta`
///
/// # example
/// ```
/// use emugemm::{Precision, emu_gemm};
/// let a = nalgebra::DMatrix::<f64>::from_fn(3, 2, |i, j| (i + j) as f64);
/// let b = nalgebra::DMatrix::<f64>::from_fn(2, 4, |i, j| (i * j) as f64);
/// let mut c = nalgebra::DMatrix::<f64>::from_element(3, 4, 1.0);
/// let mut expected = c.clone();
/// expected.gemm(2.0, &a, &b, 0.5);
/// emu_gemm(&mut c, 2.0, &a, &b, 0.5, Precision::F64)?;
/// assert_eq!(c, expected);
/// # Ok::<(), emugemm::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn emu_gemm<T, R1: Dim, C1: Dim, S1, R2: Dim, C2: Dim, S2, R3: Dim, C3: Dim, S3>(
	c: &mut Matrix<T, R1, C1, S1>,
	alpha: T,
	a: &Matrix<T, R2, C2, S2>,
	b: &Matrix<T, R3, C3, S3>,
	beta: T,
	precision: Precision,
) -> Result<(), Error>
where
	T: Scalar + nalgebra::Scalar,
	S1: RawStorageMut<T, R1, C1>,
	S2: RawStorage<T, R2, C2>,
	S3: RawStorage<T, R3, C3>,
{
	let emu = Emulator::global();
	let views = (View::from(as_faer(a)), View::from(as_faer(b)));
	let (zero, one) = (T::from_parts(0.0, 0.0), T::from_parts(1.0, 0.0));
	let mut dst = as_faer_mut(c);
	check_shapes(views.0.mat.shape(), views.1.mat.shape(), Some(dst.shape()))?;
	let accum = if beta == zero {
		Accum::Replace
	} else {
		if beta != one {
			for j in 0..dst.ncols() {
				dst.as_mut().col_mut(j).iter_mut().for_each(|x| *x = beta * *x);
			}
		}
		Accum::Add
	};
	emu.matmul_views(dst, accum, views, alpha, (precision, emu.par()))
}
