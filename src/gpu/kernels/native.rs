//! the native product: cuBLAS for whole products, and the plain sums of products that non-finite
//! rows and columns take

use crate::cost::NativeArithmetic;
use crate::device_view::Borrowed;
use crate::gpu::kernels::layout::{copy_flagged, k_major};
use crate::gpu::kernels::rows::native_rows;
use crate::gpu::kernels::stats::{OperandStats, launch_stats};
use crate::gpu::product::job::{DeviceOperand, Job, Output};
use crate::gpu::runtime::blas::{NativeMath, native_gemm};
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{elementwise, ptr, to_device};
use crate::gpu::runtime::slot::Slot;
use crate::policy::native_arithmetic;
use crate::shape::Shape;
use crate::{Error, Precision, Scalar};

/// the largest complex product (in multiply-adds) computed natively from its shape whose non-finite
/// entries are recomputed as the textbook sums: cuBLAS's kernels for the smallest shapes give
/// other non-finite parts (see [`whole_native`]), and there a pass over the operands costs what
/// the call's launches cost; above it the pass would cost up to as much as cuBLAS's own product
/// (on the H100, 2.2x cuBLAS's time at 65536 x 64 x 4096), and cuBLAS's values stand
pub(crate) const FIXED_UP_BELOW: usize = 1 << 20;

/// the whole product natively at `precision`: through cuBLAS, or for `f32`/`c32` outputs above
/// FP32 level (which an FP32 GEMM does not keep) through the native entries' kernel, which
/// accumulates in `f64`, over every row.
///
/// A complex product's entries in rows of `A` or columns of `B` that hold NaN or infinities are
/// the native entries' kernel's, as an emulated product's are: where an infinity meets `alpha`'s
/// zero imaginary part, cuBLAS's kernels for the smallest shapes, which scale `A` by `alpha`
/// first, give infinities where the sum scaled by `alpha` (the CPU's native product, and cuBLAS's
/// other kernels) gives NaN. Where the operands' statistics `stats` are on the host already,
/// cuBLAS computes the finite rows alone; otherwise the host waits for nothing: cuBLAS computes
/// every entry, and up to [`FIXED_UP_BELOW`] multiply-adds the kernel recomputes the flagged ones
/// from flags it reads on the device
pub(crate) fn whole_native<T: Scalar>(
	gpu: &Gpu,
	(a, b): (DeviceOperand<T>, DeviceOperand<T>),
	out: Output<T>,
	alpha: T,
	precision: Precision,
	stats: Option<(&OperandStats, &OperandStats)>,
) -> Result<(), Error> {
	if native_arithmetic(precision, T::MANTISSA_BITS) != NativeArithmetic::Wide {
		if !T::IS_COMPLEX {
			return native::<T>(gpu, &a, &b, &out, alpha, precision);
		}
		let Some((sa, sb)) = stats else {
			if a.rows * b.rows * a.k > FIXED_UP_BELOW {
				return native::<T>(gpu, &a, &b, &out, alpha, precision);
			}
			return flagged_on_device(gpu, (a, b), out, alpha, precision);
		};
		let finite = |s: &OperandStats| s.nonfinite.iter().all(|&x| x == 0);
		if finite(sa) && finite(sb) {
			return native::<T>(gpu, &a, &b, &out, alpha, precision);
		}
		// the flags copied from the host, so that they do not depend on what the callers launched
		// into the statistics' scratch since (two small uploads, where an operand is non-finite)
		let (bad_rows, bad_cols) = (to_device(gpu, &sa.nonfinite)?, to_device(gpu, &sb.nonfinite)?);
		let job = Job {
			gpu,
			a,
			b,
			out,
			alpha,
			bad_rows: ptr(gpu, &bad_rows),
			bad_cols: ptr(gpu, &bad_cols),
		};
		let rows: Vec<usize> = (0..a.rows).filter(|&i| sa.nonfinite[i] == 0).collect();
		native_rows(&job, &rows)?;
		return fixup(&job);
	}
	let (rows, cols) = (to_device(gpu, &vec![1; a.rows])?, to_device(gpu, &vec![0; b.rows])?);
	fixup(&Job {
		gpu,
		a,
		b,
		out,
		alpha,
		bad_rows: ptr(gpu, &rows),
		bad_cols: ptr(gpu, &cols),
	})
}

/// a complex product by cuBLAS with the entries of non-finite rows and columns recomputed by the
/// native entries' kernel, all in the stream's order: the operands' statistics computed on the
/// device for their flags, which the kernel reads there. Where the product adds to the
/// destination, its flagged entries are kept aside before cuBLAS adds to them and put back
/// after, so that the kernel adds to the destination as it was
fn flagged_on_device<T: Scalar>(
	gpu: &Gpu,
	(a, b): (DeviceOperand<T>, DeviceOperand<T>),
	out: Output<T>,
	alpha: T,
	precision: Precision,
) -> Result<(), Error> {
	let regions = launch_stats::<T>(gpu, &[&a, &b])?;
	let flags = (regions[0].nonfinite(), regions[1].nonfinite());
	let dims = (a.rows, b.rows);
	if out.accumulate {
		let dst = Borrowed::<T>::strided(out.ptr.addr(), dims, out.ld);
		let kept = Borrowed::<T>::compact(gpu.scratch(Slot::ResiduesRe, dims.0 * dims.1 * size_of::<T>())?.addr(), dims);
		copy_flagged(gpu, (&dst, &kept), flags)?;
		native::<T>(gpu, &a, &b, &out, alpha, precision)?;
		copy_flagged(gpu, (&kept, &dst), flags)?;
	} else {
		native::<T>(gpu, &a, &b, &out, alpha, precision)?;
	}
	fixup(&Job {
		gpu,
		a,
		b,
		out,
		alpha,
		bad_rows: flags.0,
		bad_cols: flags.1,
	})
}

/// the native product through cuBLAS: a TF32 GEMM for `f32`/`c32` at [`Precision::Tf32`], the
/// type's own GEMM otherwise
pub(crate) fn native<T: Scalar>(
	gpu: &Gpu,
	a: &DeviceOperand<T>,
	b: &DeviceOperand<T>,
	out: &Output<T>,
	alpha: T,
	precision: Precision,
) -> Result<(), Error> {
	let math = match native_arithmetic(precision, T::MANTISSA_BITS) {
		NativeArithmetic::Tf32 => NativeMath::Tf32,
		_ => NativeMath::Exact,
	};
	operand_gemm(gpu, (a, b), out, alpha, math)
}

/// `out = alpha A B (+ out)` by cuBLAS in `math`, on the pipeline's operands (A column-major, B
/// K-major)
pub(crate) fn operand_gemm<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand<T>, &DeviceOperand<T>),
	out: &Output<T>,
	alpha: T,
	math: NativeMath,
) -> Result<(), Error> {
	let beta = T::from_parts(out.accumulate as u8 as f64, 0.0);
	let dims = Shape::new(a.rows, b.rows, a.k);
	let b = k_major(gpu, b)?;
	let matrices = ((a.ptr, a.cs.max(1) as usize), (b.ptr, b.rs.max(1) as usize), (out.ptr, out.ld));
	native_gemm(&gpu.handles, dims, matrices, (alpha, beta), math)
}

/// the entries of non-finite rows and columns, recomputed as plain sums of products
pub(crate) fn fixup<T: Scalar>(job: &Job<'_, T>) -> Result<(), Error> {
	let Shape { m, n, k } = job.dims();
	let (rows, cols) = (job.bad_rows, job.bad_cols);
	let (mi, ni, ki) = (m as i32, n as i32, k as i32);
	launch_output!(
		job,
		"native_fixup",
		T,
		elementwise(job.gpu, m * n),
		job.a.ptr,
		job.a.cs,
		job.b.ptr,
		job.b.rs,
		job.b.cs,
		mi,
		ni,
		ki,
		rows,
		cols
	)
}
