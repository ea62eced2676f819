//! the error bound on the GPU: window magnitudes (`split_window`), their exact products (cuBLASLt
//! INT8, INT32 out), the per-row maxima (`bound_maxima`, cuda/bound.cu); the same integers and
//! the same IEEE operations as the CPU's (src/cpu/bound.rs), so both certify the same plans

use crate::bound::{Bound, BoundSide, ShiftOffset, floor_exponent, offsets, sides};
use crate::gpu::kernels::stats::OperandStats;
use crate::gpu::product::job::{DeviceOperand, pad16};
use crate::gpu::runtime::blas::Int8Gemm;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{alloc, ptr, to_device, to_host};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::scheme2::CoarseMaxima;
use crate::shape::Shape;
use crate::{Error, Scalar};
use cudarc::driver::{CudaSlice, LaunchConfig};

/// the rows and columns of the product one block of `bound_maxima` takes (`ROWS`, `COLUMNS` in
/// cuda/bound.cu)
const BLOCK: (usize, usize) = (128, 64);

/// the columns one block of `bound_maxima_columns` takes, a warp each (`COLUMN_WARPS` in
/// cuda/bound.cu)
const COLUMN_WARPS: usize = 8;

/// the error bound of `A B` (operands `a`, `b` of type `T` with statistics `sa`, `sb`; `coarse`
/// under accurate scaling) for outputs of `mantissa` bits (`T`'s own, but for the real products of
/// separately scaled parts, whose outputs are the complex product's)
pub(crate) fn bound<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand<T>, &DeviceOperand<T>),
	(sa, sb): (&OperandStats, &OperandStats),
	coarse: Option<&CoarseMaxima>,
	mantissa: u32,
) -> Result<Bound, Error> {
	let (m, n, k) = (a.rows, b.rows, a.k);
	let bits = window_bits::<T>(k);
	// the windows and their products need only the statistics: the GPU computes them while the
	// host computes the sides
	let (qa, qb) = (
		window::<T>(gpu, Slot::WindowA, a, sa, bits)?,
		window::<T>(gpu, Slot::WindowB, b, sb, bits)?,
	);
	let l = magnitude_products::<T>(gpu, (qa, qb), Shape::new(m, n, pad16(k)), false)?;
	let (offsets_a, offsets_b) = offsets((&sa.rows, &sb.rows), coarse);
	let dev_a = uploaded_sides(gpu, sa, &offsets_a, bits)?;
	let dev_b = uploaded_sides(gpu, sb, &offsets_b, bits)?;
	let sides = (ptr(gpu, &dev_a).cast::<BoundSide>(), ptr(gpu, &dev_b).cast::<BoundSide>());
	let maxima = launch_maxima(gpu, l, (m, n), sides, (bits, floor_exponent(mantissa)))?;
	downloaded::<T>(gpu, &maxima, Shape::new(m, n, k), mantissa)
}

/// the sides of the rows whose statistics are `stats` (offsets `offsets`, a window of `bits`), on
/// the device
fn uploaded_sides(gpu: &Gpu, stats: &OperandStats, offsets: &[ShiftOffset], bits: i32) -> Result<CudaSlice<u8>, Error> {
	let sides = sides(&stats.rows, |i| stats.amax[i], offsets, bits);
	to_device(gpu, bytemuck::cast_slice::<_, u8>(&sides))
}

/// the bound of a product of `shape` with outputs of `mantissa` bits from its rows' maxima on the
/// device (a download that waits for the kernels before it)
fn downloaded<T: Scalar>(gpu: &Gpu, maxima: &CudaSlice<u64>, shape: Shape, mantissa: u32) -> Result<Bound, Error> {
	let raw = to_host(gpu, maxima)?;
	Ok(Bound {
		rows: bytemuck::cast_slice(&raw).to_vec(),
		shape,
		complex: T::IS_COMPLEX,
		mantissa,
	})
}

/// the error bound of a Gram product `A Aᴴ` whose left operand is `a` (statistics `sa`, those of
/// the right operand's rows too: conjugation keeps every magnitude), equal to [`bound`]'s of the
/// two operands bit for bit at about half its INT8 work: A's window serves both sides, the
/// magnitude products are computed on the lower triangle (they are symmetric), and each entry's
/// maxima count for its row (`bound_maxima` on the triangle) and for its column's
/// (`bound_maxima_columns`). `None` where the sides of A's rows as left and as right operand
/// differ (accurate scaling's offsets of a product that is not symmetric in them), for the caller
/// to take [`bound`]
pub(crate) fn gram_bound<T: Scalar>(
	gpu: &Gpu,
	a: &DeviceOperand<T>,
	sa: &OperandStats,
	coarse: Option<&CoarseMaxima>,
	mantissa: u32,
) -> Result<Option<Bound>, Error> {
	let (n, k) = (a.rows, a.k);
	let bits = window_bits::<T>(k);
	let (offsets_a, offsets_b) = offsets((&sa.rows, &sa.rows), coarse);
	if offsets_a != offsets_b {
		return Ok(None);
	}
	let qa = window::<T>(gpu, Slot::WindowA, a, sa, bits)?;
	let (l_re, l_im) = magnitude_products::<T>(gpu, (qa, qa), Shape::new(n, n, pad16(k)), true)?;
	let side = uploaded_sides(gpu, sa, &offsets_a, bits)?;
	let side = ptr(gpu, &side).cast::<BoundSide>();
	let floor = floor_exponent(mantissa);
	// each row's entries up to the diagonal, then those past it as its column's below it
	let maxima = launch_rows(gpu, (l_re, l_im), (n, n), (side, side), (bits, floor), true)?;
	if n > 1 {
		let cfg = LaunchConfig {
			grid_dim: (n.div_ceil(COLUMN_WARPS) as u32, 1, 1),
			block_dim: (32 * COLUMN_WARPS as u32, 1, 1),
			shared_mem_bytes: 0,
		};
		launch!(
			gpu,
			"bound_maxima_columns",
			cfg,
			l_re,
			l_im,
			n as i32,
			side,
			bits,
			floor,
			ptr(gpu, &maxima)
		)?;
	}
	downloaded::<T>(gpu, &maxima, Shape::new(n, n, k), mantissa).map(Some)
}

/// the window's bits for inner dimension `k` (twice the terms for complex products)
pub(crate) fn window_bits<T: Scalar>(k: usize) -> i32 {
	crate::bound::window_bits(k * if T::IS_COMPLEX { 2 } else { 1 })
}

/// the window magnitudes of `op` (`split_window`, one int8 plane per part, K padded to 16) in
/// scratch `slot`
pub(crate) fn window<T: Scalar>(
	gpu: &Gpu,
	slot: Slot,
	op: &DeviceOperand<T>,
	stats: &OperandStats,
	bits: i32,
) -> Result<DevPtr<i8>, Error> {
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	let out = gpu.scratch(slot, parts * op.rows * pad16(op.k))?.cast::<i8>();
	launch_split!(gpu, "split_window", T, op, out, stats.device.e_max(), bits)?;
	Ok(out)
}

/// the exact magnitude products L per part of the output (INT32, `m x n`, in scratch 32 and 33):
/// real `QA QB`; complex `Re = QAr QBr + QAi QBi`, `Im = QAr QBi + QAi QBr` (null for real
/// products); `dims` with K padded. With `lower`, only the entries on and below the diagonal
/// (`i >= j`, the rest left unwritten), in column blocks of [`lower_blocks`]
pub(crate) fn magnitude_products<T: Scalar>(
	gpu: &Gpu,
	(qa, qb): (DevPtr<i8>, DevPtr<i8>),
	Shape { m, n, k: kpad }: Shape,
	lower: bool,
) -> Result<(DevPtr<i32>, DevPtr<i32>), Error> {
	let (plane_a, plane_b) = (m * kpad, n * kpad);
	let blocks: Vec<_> = if lower { lower_blocks(n) } else { std::iter::once(0..n).collect() };
	let product = |slot: Slot, terms: &[(DevPtr<i8>, DevPtr<i8>)]| -> Result<DevPtr<i32>, Error> {
		let c = gpu.scratch(slot, 4 * m * n)?.cast::<i32>();
		for (t, &(x, y)) in terms.iter().enumerate() {
			for cols in &blocks {
				// the block's columns from its first row on (every row for the whole product)
				let first = if lower { cols.start } else { 0 };
				Int8Gemm {
					m: m - first,
					n: cols.len(),
					k: kpad,
					a: x.add(first * kpad),
					lda: kpad,
					b: y.add(cols.start * kpad),
					ldb: kpad,
					c: c.add(first + cols.start * m),
					ldc: m,
					accumulate: t > 0,
				}
				.run(&gpu.handles)?;
			}
		}
		Ok(c)
	};
	if T::IS_COMPLEX {
		let re = product(Slot::MagnitudeRe, &[(qa, qb), (qa.add(plane_a), qb.add(plane_b))])?;
		Ok((re, product(Slot::MagnitudeIm, &[(qa, qb.add(plane_b)), (qa.add(plane_a), qb)])?))
	} else {
		Ok((product(Slot::MagnitudeRe, &[(qa, qb)])?, DevPtr::NULL))
	}
}

/// the column blocks of an `n x n` lower triangle's products: eight at most (each one INT8 product
/// launch, whose host work is not free), each at least 256 columns wide and a multiple of 16 (the
/// INT8 products' tiles stay full), so that they compute about 9/16 of the whole
fn lower_blocks(n: usize) -> Vec<std::ops::Range<usize>> {
	let width = n.div_ceil(8).next_multiple_of(16).max(256);
	(0..n).step_by(width).map(|c| c..(c + width).min(n)).collect()
}

/// the seven maxima of each row (`bound_maxima`, cuda/bound.cu) from the magnitude products and
/// the sides, for a window of `bits` and outputs whose half smallest subnormal is `2^floor_exp`
pub(crate) fn launch_maxima(
	gpu: &Gpu,
	(l_re, l_im): (DevPtr<i32>, DevPtr<i32>),
	(m, n): (usize, usize),
	(side_a, side_b): (DevPtr<BoundSide>, DevPtr<BoundSide>),
	(bits, floor_exp): (i32, i32),
) -> Result<CudaSlice<u64>, Error> {
	launch_rows(gpu, (l_re, l_im), (m, n), (side_a, side_b), (bits, floor_exp), false)
}

/// `bound_maxima` over every entry of `L`, or with `lower` over those on and below the diagonal
/// into fresh maxima
fn launch_rows(
	gpu: &Gpu,
	(l_re, l_im): (DevPtr<i32>, DevPtr<i32>),
	(m, n): (usize, usize),
	(side_a, side_b): (DevPtr<BoundSide>, DevPtr<BoundSide>),
	(bits, floor_exp): (i32, i32),
	lower: bool,
) -> Result<CudaSlice<u64>, Error> {
	let maxima = alloc::<u64>(gpu, 7 * m)?;
	if m > 0 && n > 0 {
		let cfg = LaunchConfig {
			grid_dim: (m.div_ceil(BLOCK.0) as u32, n.div_ceil(BLOCK.1) as u32, 1),
			block_dim: (BLOCK.0 as u32, 1, 1),
			shared_mem_bytes: 0,
		};
		let (ma, mb) = (m as i32, n as i32);
		launch!(
			gpu,
			"bound_maxima",
			cfg,
			l_re,
			l_im,
			ma,
			mb,
			side_a,
			side_b,
			bits,
			floor_exp,
			i32::from(lower),
			ptr(gpu, &maxima)
		)?;
	}
	Ok(maxima)
}
