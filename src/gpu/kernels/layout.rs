//! borrowed device matrices laid out for the pipeline (cuda/layout.cu): `op_copy` writes a
//! transposed or conjugated view as the compact column-major matrix the pipeline reads (and
//! `k_major` a right operand read in place as the column-major `B` cuBLAS reads), `scale`
//! multiplies a destination by `beta` in place, `copy_named` copies the entries a structure names
//! between a rank-k update's destination and its workspace, `copy_flagged` the entries of flagged
//! rows and columns between a destination and a copy kept aside

use crate::device_view::Borrowed;
use crate::gpu::product::job::DeviceOperand;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{Launch, Params, elementwise};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::request::names;
use crate::{Error, Scalar};
use faer::linalg::matmul::triangular::BlockStructure;

/// launches the kernel `family` of `T` (`op_copy`, `scale`, `copy_named`) over the `rows x cols` matrix `m`, one
/// thread per entry, with the parameters `params` makes of `m`'s address, leading dimension, rows
/// and columns; nothing for an empty matrix
///
/// # Safety
/// `params` returns the parameter list of `family`'s kernels (cuda/layout.cu)
unsafe fn over_matrix<T: Scalar, P: Params>(
	gpu: &Gpu,
	family: &str,
	(m, (rows, cols)): (&Borrowed<T>, (usize, usize)),
	params: impl FnOnce((DevPtr<T>, i64, i64, i64)) -> P,
) -> Result<(), Error> {
	if rows == 0 || cols == 0 {
		return Ok(());
	}
	let params = params((DevPtr::new(m.addr), m.ld() as i64, rows as i64, cols as i64));
	// SAFETY: the caller's promise
	unsafe { Launch::from(elementwise(gpu, rows * cols)).run(gpu, &format!("{family}_{}", T::NAME), &params) }
}

/// the matrix `view` reads (transposed and/or conjugated), compact and column-major at `out`
/// (`view.dims()`, leading dimension its rows)
pub(crate) fn op_copy<T: Scalar>(gpu: &Gpu, view: &Borrowed<T>, out: DevPtr<T>) -> Result<(), Error> {
	let ops = (i32::from(view.transposed), i32::from(view.conjugated));
	// SAFETY: `op_copy_*` takes the view, its dimensions, the two ops and the destination
	unsafe {
		over_matrix(gpu, "op_copy", (view, view.dims()), |(p, ld, r, c)| {
			(p, ld, r, c, ops.0, ops.1, out)
		})
	}
}

/// `b` as cuBLAS's GEMM reads `B`, column-major: itself where its rows (`B`'s columns) are
/// K-contiguous, otherwise (a right operand read transposed where it lies, its rows contiguous)
/// its compact copy in the scratch of [`Slot::StagedB`], which such a product leaves unused: so
/// that natively computed entries are cuBLAS's for a column-major `B` whatever the view
pub(crate) fn k_major<T: Scalar>(gpu: &Gpu, b: &DeviceOperand<T>) -> Result<DeviceOperand<T>, Error> {
	if b.cs == 1 && b.rs.unsigned_abs() as usize >= b.k.max(1) {
		return Ok(*b);
	}
	let copy = gpu.scratch(Slot::StagedB, (b.rows * b.k).max(1) * size_of::<T>())?.cast::<T>();
	let stored = Borrowed::<T>::transposed(b.ptr.addr(), (b.rows, b.k), b.cs.max(1) as usize);
	op_copy(gpu, &stored, copy)?;
	Ok(DeviceOperand::right(copy, (b.k, b.rows), b.k.max(1)))
}

/// `c = beta c` in place, each entry rounded as the host's `beta * c` rounds it
pub(crate) fn scale<T: Scalar>(gpu: &Gpu, c: &Borrowed<T>, beta: T) -> Result<(), Error> {
	// SAFETY: `scale_*` takes the matrix, its dimensions and `beta`'s two parts
	unsafe { over_matrix(gpu, "scale", (c, c.stored()), |(p, ld, r, n)| (p, ld, r, n, beta.re(), beta.im())) }
}

/// the entries of the square `from` that `structure` names, into `to` (of the same order), the
/// diagonal's imaginary parts zero where `real_diagonal`
pub(crate) fn copy_named<T: Scalar>(
	gpu: &Gpu,
	(from, to): (&Borrowed<T>, &Borrowed<T>),
	structure: BlockStructure,
	real_diagonal: bool,
) -> Result<(), Error> {
	let names = |i, j| i32::from(names(structure, i, j));
	let flags = (names(1, 0), names(0, 1), names(0, 0), i32::from(real_diagonal));
	let (src, lds) = (DevPtr::<T>::new(from.addr), from.ld() as i64);
	// SAFETY: `copy_named_*` takes the source, its leading dimension, the order, the destination,
	// its leading dimension and the four flags
	unsafe {
		over_matrix(gpu, "copy_named", (to, to.stored()), |(dst, ldd, n, _)| {
			(src, lds, n, dst, ldd, flags.0, flags.1, flags.2, flags.3)
		})
	}
}

/// the entries of `from` whose row flag (`rows`, one per row) or column flag (`cols`, one per
/// column) is nonzero, into `to` (of the same dimensions); the flags are read on the device, in
/// the stream's order
pub(crate) fn copy_flagged<T: Scalar>(
	gpu: &Gpu,
	(from, to): (&Borrowed<T>, &Borrowed<T>),
	(rows, cols): (DevPtr<i32>, DevPtr<i32>),
) -> Result<(), Error> {
	let (src, lds) = (DevPtr::<T>::new(from.addr), from.ld() as i64);
	// SAFETY: `copy_flagged_*` takes the source, its leading dimension, the dimensions, the
	// destination, its leading dimension and the two flag arrays (as many as rows and columns)
	unsafe {
		over_matrix(gpu, "copy_flagged", (to, to.stored()), |(dst, ldd, m, n)| {
			(src, lds, m, n, dst, ldd, rows, cols)
		})
	}
}
