//! the rows of a product that the error bound leaves to the native product, computed by cuBLAS on
//! those rows alone: `gather_rows` packs them (cuda/rows.cu), the type's own GEMM multiplies them
//! by `B`, `scatter_rows` writes them with alpha and accumulation

use crate::gpu::kernels::layout::k_major;
use crate::gpu::product::job::Job;
use crate::gpu::runtime::blas::{NativeMath, native_gemm};
use crate::gpu::runtime::launch::{alloc, elementwise, ptr, to_device};
use crate::shape::Shape;
use crate::{Error, Scalar};

/// rows `rows` of `job`'s product natively (the entries of the columns `job` flags are left to
/// the native fixup)
pub(crate) fn native_rows<T: Scalar>(job: &Job<'_, T>, rows: &[usize]) -> Result<(), Error> {
	let gpu = job.gpu;
	let Shape { n, k, .. } = job.dims();
	let r = rows.len();
	if r == 0 {
		return Ok(());
	}
	let index = to_device(gpu, &rows.iter().map(|&i| i as i32).collect::<Vec<_>>())?;
	let (packed, product) = (alloc::<u8>(gpu, r * k * size_of::<T>())?, alloc::<u8>(gpu, r * n * size_of::<T>())?);
	let (packed, product) = (ptr(gpu, &packed).cast::<T>(), ptr(gpu, &product).cast::<T>());
	let (ri, ni, ki) = (r as i32, n as i32, k as i32);
	let gather = format!("gather_rows_{}", T::NAME);
	launch!(
		gpu,
		gather,
		elementwise(gpu, r * k),
		job.a.ptr,
		job.a.cs,
		ptr(gpu, &index),
		ri,
		ki,
		packed
	)?;
	let (one, zero) = (T::from_parts(1.0, 0.0), T::from_parts(0.0, 0.0));
	let b = k_major(gpu, &job.b)?;
	let matrices = ((packed, r), (b.ptr, b.rs.max(1) as usize), (product, r));
	native_gemm::<T>(&gpu.handles, Shape::new(r, n, k), matrices, (one, zero), NativeMath::Exact)?;
	launch_output!(
		job,
		"scatter_rows",
		T,
		elementwise(gpu, r * n),
		product,
		ri,
		ni,
		ptr(gpu, &index),
		job.bad_cols
	)
}
