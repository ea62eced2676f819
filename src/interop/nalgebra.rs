//! nalgebra: [`EmuMatMul`] for every matrix, vector and view, returning what `*` returns (an
//! owned matrix of the left operand's rows and the right operand's columns, so `DMatrix *
//! DVector` gives a `DVector` and static shapes stay static), [`EmuTrMul`], the emulated
//! `a.tr_mul(&b)` and `a.ad_mul(&b)`, and [`emu_gemm`] ([`Emulator::emu_gemm`] on a context of
//! one's own), the emulated `c.gemm(alpha, &a, &b, beta)`; operands are read through zero-copy
//! faer views (transposed and adjoint ones for `aᵀ b` and `aᴴ b`). Static shapes are checked
//! when the program compiles, with the bounds nalgebra's own `*`, `tr_mul` and `gemm` take;
//! dynamic ones when the product runs ([`Error::ShapeMismatch`])

use super::{EmuMatMul, or_panic};
use crate::shape::check_shapes;
use crate::view::View;
use crate::{Accum, Emulator, Error, Precision, Scalar};
use faer::{MatMut, MatRef};
use nalgebra::allocator::Allocator;
use nalgebra::constraint::{AreMultipliable, SameNumberOfColumns, SameNumberOfRows, ShapeConstraint};
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

/// the product of `views` into a fresh `rows x cols` nalgebra matrix (made resident while it
/// computes), or the error of shapes that do not agree
fn fresh_product<T, R: Dim, C: Dim>(
	emu: &Emulator,
	(rows, cols): (R, C),
	views: (View<'_, T>, View<'_, T>),
	precision: Precision,
) -> Result<OMatrix<T, R, C>, Error>
where
	T: Scalar + nalgebra::Scalar,
	DefaultAllocator: Allocator<R, C>,
{
	check_shapes(views.0.shape(), views.1.shape(), None)?;
	let mut c = nalgebra::UninitMatrix::<T, R, C>::uninit(rows, cols);
	let (m, n) = c.shape();
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

/// nalgebra's `a * b`: the operands' shapes are checked as `*` checks them, static ones when the
/// program compiles (the left operand's columns against the right operand's rows), dynamic ones
/// when the product runs
///
/// # example
/// ```
/// use emugemm::{EmuMatMul, Precision};
/// use nalgebra::{DMatrix, SMatrix};
/// let a = SMatrix::<f64, 3, 4>::from_fn(|i, j| (i + j) as f64);
/// let b = SMatrix::<f64, 4, 2>::from_fn(|i, j| (i * j) as f64);
/// let c: SMatrix<f64, 3, 2> = a.emu_mul(&b, Precision::F64);
/// assert_eq!(c, a * b);
/// // dynamic shapes that do not agree are an error when the product runs
/// let d = DMatrix::<f64>::zeros(3, 4);
/// assert!(d.try_emu_mul(&d, Precision::F64).is_err());
/// ```
///
/// static shapes that do not agree do not compile, as with `a * b`:
/// ```compile_fail,E0277
/// use emugemm::{EmuMatMul, Precision};
/// use nalgebra::SMatrix;
/// let a = SMatrix::<f64, 3, 4>::from_fn(|i, j| (i + j) as f64);
/// let c = a.emu_mul(&a, Precision::F64);
/// ```
impl<T: Scalar + nalgebra::Scalar, R1: Dim, C1: Dim, S1: RawStorage<T, R1, C1>, R2: Dim, C2: Dim, S2: RawStorage<T, R2, C2>>
	EmuMatMul<Matrix<T, R2, C2, S2>> for Matrix<T, R1, C1, S1>
where
	DefaultAllocator: Allocator<R1, C2>,
	ShapeConstraint: AreMultipliable<R1, C1, R2, C2>,
{
	type Output = OMatrix<T, R1, C2>;

	fn emu_mul_with(&self, emu: &Emulator, rhs: &Matrix<T, R2, C2, S2>, precision: Precision) -> Result<OMatrix<T, R1, C2>, Error> {
		let views = (View::from(as_faer(self)), View::from(as_faer(rhs)));
		fresh_product(emu, (self.shape_generic().0, rhs.shape_generic().1), views, precision)
	}
}

/// the emulated products `aᵀ b` and `aᴴ b` of nalgebra matrices, vectors and views, drop-ins for
/// nalgebra's `a.tr_mul(&b)` and `a.ad_mul(&b)`: `a` is read through a transposed (adjoint:
/// transposed and conjugated) view, never copied, and the product is a fresh matrix of `a`'s
/// columns and `b`'s rows, static where they are. Shapes are checked as nalgebra checks them:
/// `a` and `b` must have as many rows, static ones when the program compiles, dynamic ones when
/// the product runs (the error's `lhs` is then the shape of `aᵀ`). For real matrices `aᴴ b` is
/// `aᵀ b`
///
/// the methods are organised as [`EmuMatMul`]'s: `*_with` on a context of one's own, `try_*` and
/// the panicking form on the global context ([`Emulator::global`])
///
/// # example
/// ```
/// use emugemm::{EmuTrMul, Precision};
/// use nalgebra::{DMatrix, SMatrix};
/// use num_complex::Complex;
/// let a = SMatrix::<f64, 3, 2>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
/// let b = SMatrix::<f64, 3, 4>::from_fn(|i, j| (i + j) as f64);
/// let c: SMatrix<f64, 2, 4> = a.emu_tr_mul(&b, Precision::F64);
/// assert_eq!(c, a.tr_mul(&b));
///
/// let z = DMatrix::<Complex<f64>>::from_fn(3, 2, |i, j| Complex::new(i as f64, j as f64));
/// let gram = z.emu_ad_mul(&z, Precision::F64); // zᴴ z, without a copy of zᴴ
/// assert_eq!(gram, z.ad_mul(&z));
/// // dynamic shapes that do not agree are an error when the product runs
/// assert!(z.try_emu_tr_mul(&DMatrix::zeros(2, 2), Precision::F64).is_err());
/// ```
///
/// static shapes that do not agree do not compile, as with `a.tr_mul(&b)`:
/// ```compile_fail,E0277
/// use emugemm::{EmuTrMul, Precision};
/// use nalgebra::SMatrix;
/// let a = SMatrix::<f64, 3, 2>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
/// let b = SMatrix::<f64, 2, 4>::from_fn(|i, j| (i + j) as f64);
/// let c = a.emu_tr_mul(&b, Precision::F64);
/// ```
pub trait EmuTrMul<Rhs: ?Sized = Self> {
	/// the product's type
	type Output;

	/// `selfᵀ rhs` at `precision` on the context `emu` (its backend and scaling), or the error
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, EmuTrMul, Emulator, Precision};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// let a = nalgebra::DMatrix::<f64>::from_fn(4, 3, |i, j| (i + 2 * j) as f64);
	/// let c = a.emu_tr_mul_with(&emu, &a, Precision::F64)?;
	/// assert_eq!(c, a.tr_mul(&a));
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	fn emu_tr_mul_with(&self, emu: &Emulator, rhs: &Rhs, precision: Precision) -> Result<Self::Output, Error>;

	/// `selfᴴ rhs` at `precision` on the context `emu` (its backend and scaling), or the error
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, EmuTrMul, Emulator, Precision};
	/// use num_complex::Complex;
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// let z = nalgebra::DMatrix::<Complex<f64>>::from_fn(4, 3, |i, j| Complex::new(i as f64, -(j as f64)));
	/// let c = z.emu_ad_mul_with(&emu, &z, Precision::F64)?;
	/// assert_eq!(c, z.ad_mul(&z));
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	fn emu_ad_mul_with(&self, emu: &Emulator, rhs: &Rhs, precision: Precision) -> Result<Self::Output, Error>;

	/// `selfᵀ rhs` at `precision`, or the error (shape mismatch, invalid precision)
	///
	/// # example
	/// ```
	/// use emugemm::{EmuTrMul, Precision};
	/// let a = nalgebra::DMatrix::<f64>::identity(3, 2);
	/// assert!(a.try_emu_tr_mul(&a, Precision::F64).is_ok());
	/// assert!(a.try_emu_tr_mul(&a.transpose(), Precision::F64).is_err());
	/// ```
	fn try_emu_tr_mul(&self, rhs: &Rhs, precision: Precision) -> Result<Self::Output, Error> {
		self.emu_tr_mul_with(&Emulator::global(), rhs, precision)
	}

	/// `selfᴴ rhs` at `precision`, or the error (shape mismatch, invalid precision)
	///
	/// # example
	/// ```
	/// use emugemm::{EmuTrMul, Precision};
	/// let a = nalgebra::DMatrix::<f64>::identity(3, 2);
	/// assert!(a.try_emu_ad_mul(&a, Precision::F64).is_ok());
	/// assert!(a.try_emu_ad_mul(&a, Precision::SchemeI { slices: 0 }).is_err());
	/// ```
	fn try_emu_ad_mul(&self, rhs: &Rhs, precision: Precision) -> Result<Self::Output, Error> {
		self.emu_ad_mul_with(&Emulator::global(), rhs, precision)
	}

	/// `selfᵀ rhs` at `precision`
	///
	/// # panics
	/// where `self.tr_mul(rhs)` panics: when the operands' rows differ; and on an invalid explicit
	/// precision (`SchemeI { slices: 0 }`, ...)
	///
	/// # example
	/// ```
	/// use emugemm::{EmuTrMul, Precision};
	/// let a = nalgebra::Matrix3x2::<f64>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
	/// let x = nalgebra::Vector3::<f64>::new(1.0, 0.0, -1.0);
	/// let y: nalgebra::Vector2<f64> = a.emu_tr_mul(&x, Precision::F64);
	/// assert_eq!(y, a.tr_mul(&x));
	/// ```
	#[track_caller]
	fn emu_tr_mul(&self, rhs: &Rhs, precision: Precision) -> Self::Output {
		or_panic(self.try_emu_tr_mul(rhs, precision))
	}

	/// `selfᴴ rhs` at `precision`
	///
	/// # panics
	/// where `self.ad_mul(rhs)` panics: when the operands' rows differ; and on an invalid explicit
	/// precision (`SchemeI { slices: 0 }`, ...)
	///
	/// # example
	/// ```
	/// use emugemm::{EmuTrMul, Precision};
	/// use num_complex::Complex;
	/// let z = nalgebra::Vector2::new(Complex::new(1.0, 2.0), Complex::new(0.0, -1.0));
	/// let norm2 = z.emu_ad_mul(&z, Precision::F64); // a 1 x 1 matrix
	/// assert_eq!(norm2[0], Complex::new(6.0, 0.0));
	/// ```
	#[track_caller]
	fn emu_ad_mul(&self, rhs: &Rhs, precision: Precision) -> Self::Output {
		or_panic(self.try_emu_ad_mul(rhs, precision))
	}
}

impl<T: Scalar + nalgebra::Scalar, R1: Dim, C1: Dim, S1: RawStorage<T, R1, C1>, R2: Dim, C2: Dim, S2: RawStorage<T, R2, C2>>
	EmuTrMul<Matrix<T, R2, C2, S2>> for Matrix<T, R1, C1, S1>
where
	DefaultAllocator: Allocator<C1, C2>,
	ShapeConstraint: SameNumberOfRows<R1, R2>,
{
	type Output = OMatrix<T, C1, C2>;

	fn emu_tr_mul_with(&self, emu: &Emulator, rhs: &Matrix<T, R2, C2, S2>, precision: Precision) -> Result<OMatrix<T, C1, C2>, Error> {
		let views = (View::from(as_faer(self).transpose()), View::from(as_faer(rhs)));
		fresh_product(emu, (self.shape_generic().1, rhs.shape_generic().1), views, precision)
	}

	fn emu_ad_mul_with(&self, emu: &Emulator, rhs: &Matrix<T, R2, C2, S2>, precision: Precision) -> Result<OMatrix<T, C1, C2>, Error> {
		let views = (View::of(as_faer(self).adjoint()), View::from(as_faer(rhs)));
		fresh_product(emu, (self.shape_generic().1, rhs.shape_generic().1), views, precision)
	}
}

/// the operands of [`emu_gemm`], `(a, b)`: any nalgebra matrices, vectors or views
type Operands<'o, T, R2, C2, S2, R3, C3, S3> = (&'o Matrix<T, R2, C2, S2>, &'o Matrix<T, R3, C3, S3>);

/// `c = alpha a b + beta c` at `precision` on the global context ([`Emulator::global`];
/// [`Emulator::emu_gemm`] for a context of one's own), with the semantics of nalgebra's
/// `c.gemm(alpha, &a, &b, beta)`: `beta = 0` does not read `c` (NaN there does not spread);
/// otherwise `c` is scaled by `beta` first and the emulated `alpha a b` added to it, each entry
/// rounded as [`Emulator::matmul`] rounds it. The operands come as one pair `(a, b)`; `c`, `a`
/// and `b` may be any nalgebra matrices, vectors or views (read and written in place, without
/// copies). Shapes are checked as `gemm` checks them, static ones when the program compiles
/// (`c`'s rows against `a`'s, `c`'s columns against `b`'s, `a`'s columns against `b`'s rows),
/// dynamic ones before `c` is touched; an error of the product itself (a GPU out of memory) can
/// leave `c` scaled by `beta`
///
/// # example
/// ```
/// use emugemm::{Precision, emu_gemm};
/// let a = nalgebra::DMatrix::<f64>::from_fn(3, 2, |i, j| (i + j) as f64);
/// let b = nalgebra::DMatrix::<f64>::from_fn(2, 4, |i, j| (i * j) as f64);
/// let mut c = nalgebra::DMatrix::<f64>::from_element(3, 4, 1.0);
/// let mut expected = c.clone();
/// expected.gemm(2.0, &a, &b, 0.5);
/// emu_gemm(&mut c, 2.0, (&a, &b), 0.5, Precision::F64)?;
/// assert_eq!(c, expected);
/// // dynamic shapes that do not agree are an error, and `c` is left as it was
/// assert!(emu_gemm(&mut c, 2.0, (&b, &a), 0.5, Precision::F64).is_err());
/// assert_eq!(c, expected);
/// # Ok::<(), emugemm::Error>(())
/// ```
///
/// static shapes that do not agree do not compile, as with `c.gemm(alpha, &a, &b, beta)` (here
/// `c` has a row too many):
/// ```compile_fail,E0277
/// use emugemm::{Precision, emu_gemm};
/// use nalgebra::SMatrix;
/// let a = SMatrix::<f64, 3, 2>::from_fn(|i, j| (i + j) as f64);
/// let b = SMatrix::<f64, 2, 4>::from_fn(|i, j| (i * j) as f64);
/// let mut c = SMatrix::<f64, 4, 4>::zeros();
/// emu_gemm(&mut c, 2.0, (&a, &b), 0.5, Precision::F64)?;
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn emu_gemm<T: Scalar + nalgebra::Scalar, R1: Dim, C1: Dim, R2: Dim, C2: Dim, R3: Dim, C3: Dim>(
	c: &mut Matrix<T, R1, C1, impl RawStorageMut<T, R1, C1>>,
	alpha: T,
	operands: Operands<'_, T, R2, C2, impl RawStorage<T, R2, C2>, R3, C3, impl RawStorage<T, R3, C3>>,
	beta: T,
	precision: Precision,
) -> Result<(), Error>
where
	ShapeConstraint: SameNumberOfRows<R1, R2> + SameNumberOfColumns<C1, C3> + AreMultipliable<R2, C2, R3, C3>,
{
	Emulator::global().emu_gemm(c, alpha, operands, beta, precision)
}

impl Emulator {
	/// [`emu_gemm`] on this context (its backend and scaling): `c = alpha a b + beta c` at
	/// `precision` with the semantics of nalgebra's `c.gemm(alpha, &a, &b, beta)`, the operands as
	/// one pair `(a, b)`, the CPU's work on [`Emulator::par`]. Shapes are checked as `gemm` checks
	/// them, static ones when the program compiles, dynamic ones before `c` is touched
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision};
	/// use nalgebra::{Matrix2x3, Matrix2x4, Matrix3x4};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// let a = Matrix2x3::<f64>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
	/// let b = Matrix3x4::<f64>::from_fn(|i, j| (i + j) as f64);
	/// let mut c = Matrix2x4::<f64>::identity();
	/// let mut expected = c;
	/// expected.gemm(10.0, &a, &b, 5.0);
	/// emu.emu_gemm(&mut c, 10.0, (&a, &b), 5.0, Precision::F64)?;
	/// assert_eq!(c, expected);
	/// assert_eq!(emu.last_report().unwrap().shape, (2, 4, 3));
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	///
	/// static shapes that do not agree do not compile (here `a`'s columns and `b`'s rows):
	/// ```compile_fail,E0277
	/// use emugemm::{Backend, Emulator, Precision};
	/// use nalgebra::{Matrix2x3, Matrix2x4, Matrix4};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// let a = Matrix2x3::<f64>::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
	/// let b = Matrix4::<f64>::identity();
	/// let mut c = Matrix2x4::<f64>::identity();
	/// emu.emu_gemm(&mut c, 10.0, (&a, &b), 5.0, Precision::F64)?;
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn emu_gemm<T: Scalar + nalgebra::Scalar, R1: Dim, C1: Dim, R2: Dim, C2: Dim, R3: Dim, C3: Dim>(
		&self,
		c: &mut Matrix<T, R1, C1, impl RawStorageMut<T, R1, C1>>,
		alpha: T,
		(a, b): Operands<'_, T, R2, C2, impl RawStorage<T, R2, C2>, R3, C3, impl RawStorage<T, R3, C3>>,
		beta: T,
		precision: Precision,
	) -> Result<(), Error>
	where
		ShapeConstraint: SameNumberOfRows<R1, R2> + SameNumberOfColumns<C1, C3> + AreMultipliable<R2, C2, R3, C3>,
	{
		let views = (View::from(as_faer(a)), View::from(as_faer(b)));
		let (zero, one) = (T::from_parts(0.0, 0.0), T::from_parts(1.0, 0.0));
		let mut dst = as_faer_mut(c);
		check_shapes(views.0.shape(), views.1.shape(), Some(dst.shape()))?;
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
		self.matmul_views(dst, accum, views, alpha, (precision, self.par()))
	}
}
