//! borrowed device matrices laid out for the pipeline (cuda/layout.cu): `op_copy` writes a
//! transposed or conjugated view as the compact column-major matrix the pipeline reads, `scale`
//! multiplies a destination by `beta` in place

use crate::device_view::Borrowed;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::elementwise;
use crate::gpu::runtime::ptr::DevPtr;
use crate::{Error, Scalar};

/// the matrix `view` reads (transposed and/or conjugated), compact and column-major at `out`
/// (`view.dims()`, leading dimension its rows)
pub(crate) fn op_copy<T: Scalar>(gpu: &Gpu, view: &Borrowed<T>, out: DevPtr<T>) -> Result<(), Error> {
	let (rows, cols) = view.dims();
	if rows == 0 || cols == 0 {
		return Ok(());
	}
	let name = format!("op_copy_{}", T::NAME);
	launch!(
		gpu,
		name,
		elementwise(gpu, rows * cols),
		DevPtr::<T>::new(view.addr),
		view.ld() as i64,
		rows as i64,
		cols as i64,
		i32::from(view.transposed),
		i32::from(view.conjugated),
		out
	)
}

/// `c = beta c` in place, each entry rounded as the host's `beta * c` rounds it
pub(crate) fn scale<T: Scalar>(gpu: &Gpu, c: &Borrowed<T>, beta: T) -> Result<(), Error> {
	let (rows, cols) = c.stored();
	if rows == 0 || cols == 0 {
		return Ok(());
	}
	let name = format!("scale_{}", T::NAME);
	launch!(
		gpu,
		name,
		elementwise(gpu, rows * cols),
		DevPtr::<T>::new(c.addr),
		c.ld() as i64,
		rows as i64,
		cols as i64,
		beta.re(),
		beta.im()
	)
}
