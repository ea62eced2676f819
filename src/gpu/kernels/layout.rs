//! borrowed device matrices laid out for the pipeline (cuda/layout.cu): `op_copy` writes a
//! transposed or conjugated view as the compact column-major matrix the pipeline reads, `scale`
//! multiplies a destination by `beta` in place

use crate::device_view::Borrowed;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::elementwise;
use crate::gpu::runtime::ptr::DevPtr;
use crate::{Error, Scalar};
use cudarc::driver::LaunchConfig;

/// the kernel `family` of `T` (`op_copy`, `scale`) and its grid over a `rows x cols` matrix;
/// `None` for an empty matrix, which has nothing to launch
fn kernel_over<T: Scalar>(gpu: &Gpu, family: &str, (rows, cols): (usize, usize)) -> Option<(String, LaunchConfig)> {
	(rows > 0 && cols > 0).then(|| (format!("{family}_{}", T::NAME), elementwise(gpu, rows * cols)))
}

/// the matrix `view` reads (transposed and/or conjugated), compact and column-major at `out`
/// (`view.dims()`, leading dimension its rows)
pub(crate) fn op_copy<T: Scalar>(gpu: &Gpu, view: &Borrowed<T>, out: DevPtr<T>) -> Result<(), Error> {
	let (rows, cols) = view.dims();
	let Some((name, grid)) = kernel_over::<T>(gpu, "op_copy", (rows, cols)) else {
		return Ok(());
	};
	let ops = (i32::from(view.transposed), i32::from(view.conjugated));
	launch!(
		gpu,
		name,
		grid,
		DevPtr::<T>::new(view.addr),
		view.ld() as i64,
		rows as i64,
		cols as i64,
		ops.0,
		ops.1,
		out
	)
}

/// `c = beta c` in place, each entry rounded as the host's `beta * c` rounds it
pub(crate) fn scale<T: Scalar>(gpu: &Gpu, c: &Borrowed<T>, beta: T) -> Result<(), Error> {
	let (rows, cols) = c.stored();
	let Some((name, grid)) = kernel_over::<T>(gpu, "scale", (rows, cols)) else {
		return Ok(());
	};
	launch!(
		gpu,
		name,
		grid,
		DevPtr::<T>::new(c.addr),
		c.ld() as i64,
		rows as i64,
		cols as i64,
		beta.re(),
		beta.im()
	)
}
