//! the error bound on the GPU: window magnitudes (`split_window`), their exact products (cuBLASLt
//! INT8, INT32 out), the per-row maxima (`bound_maxima`, cuda/bound.cu); the same integers and
//! the same IEEE operations as the CPU's (src/cpu/bound.rs), so both certify the same plans

use super::blas::Int8Gemm;
use super::device::{Gpu, driver};
use super::pipeline::{DeviceOperand, Job, OperandStats, alloc, pad16, ptr};
use crate::bound::{Bound, RowMaxima, floor_exponent, offsets, sides, window_bits};
use crate::scheme2::CoarseMaxima;
use crate::{Error, Scalar};
use cudarc::driver::{LaunchConfig, PushKernelArg};

/// the rows and columns of the product one block of `bound_maxima` takes (`ROWS`, `COLUMNS` in
/// cuda/bound.cu)
const BLOCK: (usize, usize) = (128, 64);

/// the error bound of `A B` (operands `a`, `b` of type `T` with statistics `sa`, `sb`; `coarse`
/// under accurate scaling) for outputs of `mantissa` bits (`T`'s own, but for the real products of
/// separately scaled parts, whose outputs are the complex product's)
pub(super) fn bound<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand, &DeviceOperand),
	(sa, sb): (&OperandStats, &OperandStats),
	coarse: Option<&CoarseMaxima>,
	mantissa: u32,
) -> Result<Bound, Error> {
	let (m, n, k) = (a.rows, b.rows, a.k);
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	let bits = window_bits(k * parts);
	let (offsets_a, offsets_b) = offsets((&sa.rows, &sb.rows), coarse);
	let side_a = sides(&sa.rows, |i| sa.amax[i], &offsets_a, bits);
	let side_b = sides(&sb.rows, |j| sb.amax[j], &offsets_b, bits);
	let upload = |v: &[crate::bound::Side]| gpu.stream.clone_htod(bytemuck::cast_slice::<_, u8>(v)).map_err(driver);
	let (dev_a, dev_b) = (upload(&side_a)?, upload(&side_b)?);
	let kpad = pad16(k);
	let window = |slot: usize, op: &DeviceOperand, s: &OperandStats| -> Result<u64, Error> {
		let out = gpu.scratch(slot, parts * op.rows * kpad)?;
		launch_split!(gpu, "split_window", T, op, out, s.device.e_max(), bits)?;
		Ok(out)
	};
	let (qa, qb) = (window(30, a, sa)?, window(31, b, sb)?);
	// L per part: real QA QB; complex Re = QAr QBr + QAi QBi, Im = QAr QBi + QAi QBr
	let (plane_a, plane_b) = ((m * kpad) as u64, (n * kpad) as u64);
	let product = |slot: usize, terms: &[(u64, u64)]| -> Result<u64, Error> {
		let c = gpu.scratch(slot, 4 * m * n)?;
		for (t, &(x, y)) in terms.iter().enumerate() {
			Int8Gemm {
				m,
				n,
				k: kpad,
				a: x,
				lda: kpad,
				b: y,
				ldb: kpad,
				c,
				accumulate: t > 0,
			}
			.run(gpu)?;
		}
		Ok(c)
	};
	let (l_re, l_im) = if T::IS_COMPLEX {
		let re = product(32, &[(qa, qb), (qa + plane_a, qb + plane_b)])?;
		(re, product(33, &[(qa, qb + plane_b), (qa + plane_a, qb)])?)
	} else {
		(product(32, &[(qa, qb)])?, 0)
	};
	let maxima = alloc::<u64>(gpu, 7 * m)?;
	if m > 0 && n > 0 {
		let cfg = LaunchConfig {
			grid_dim: (m.div_ceil(BLOCK.0) as u32, n.div_ceil(BLOCK.1) as u32, 1),
			block_dim: (BLOCK.0 as u32, 1, 1),
			shared_mem_bytes: 0,
		};
		let floor_exp = floor_exponent(mantissa);
		let (ma, mb) = (m as i32, n as i32);
		launch!(
			gpu,
			"bound_maxima",
			cfg,
			l_re,
			l_im,
			ma,
			mb,
			ptr(gpu, &dev_a),
			ptr(gpu, &dev_b),
			bits,
			floor_exp,
			ptr(gpu, &maxima)
		)?;
	}
	let raw = gpu.stream.clone_dtoh(&maxima).map_err(driver)?;
	let rows: Vec<RowMaxima> = bytemuck::cast_slice(&raw).to_vec();
	Ok(Bound {
		rows,
		shape: (m, n, k),
		complex: T::IS_COMPLEX,
		mantissa,
	})
}
