//! the Chinese remainder theorem on the GPU: residue planes back to floating point, with the
//! shifts, alpha and accumulation

use crate::gpu::product::job::{Clock, Job, OutputTriangle, Phase, ResiduePlanes};
use crate::gpu::runtime::ptr::DevPtr;
use crate::scheme2::{self, Crt};
use crate::shape::Shape;
use crate::{Error, Scalar};
use cudarc::driver::{DeviceRepr, LaunchConfig};

/// the CRT of the residue planes into the output, with the row and column shifts, timed as the
/// reconstruction phase
pub(crate) fn crt_epilogue<T: Scalar>(
	job: &Job<'_, T>,
	crt: &Crt,
	planes: ResiduePlanes,
	shifts: (DevPtr<i32>, DevPtr<i32>),
	clock: &mut Clock,
) -> Result<(), Error> {
	clock.mark(job.gpu, Phase::Products)?;
	launch_crt(job, crt, planes, shifts)?;
	clock.mark(job.gpu, Phase::Reconstruct)
}

/// launches the CRT kernel: residue planes (`p` of `m x n` each, Re and optionally Im) into the
/// output, with the row and column shifts at `da` and `db`, on a persistent grid (as many blocks
/// of [`CRT_WARPS`] warps as fit at once) whose warps take segments of [`CRT_SEGMENT`] entries,
/// each warp with the shared memory of its cp.async stages (laid out as `crt_entries` in
/// `cuda/reconstruct.cu` says)
pub(crate) fn launch_crt<T: Scalar>(
	job: &Job<'_, T>,
	crt: &Crt,
	planes: ResiduePlanes,
	(da, db): (DevPtr<i32>, DevPtr<i32>),
) -> Result<(), Error> {
	let gpu = job.gpu;
	let Shape { m, n, .. } = job.dims();
	let im = planes.im.unwrap_or(DevPtr::NULL);
	let (p, mi, ni) = (crt.len() as i32, m as i32, n as i32);
	// a rank-k update's segments off its triangle are skipped
	let (tri, col) = OutputTriangle::params(planes.triangle);
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	let smem = CRT_WARPS * crt_stages::<T>() * parts * crt.len() * CRT_SEGMENT;
	let remainder = job.out.remainder;
	let name = if remainder.is_some() {
		assert!(T::NAME == "f64", "the CRT's remainders of real f64 products only");
		"crt_remainders_f64".to_string()
	} else {
		format!("crt_{}", T::NAME)
	};
	let threads = 32 * CRT_WARPS as u32;
	let fit = gpu.blocks_per_sm(&name, threads, smem)?;
	let blocks = (m * n).div_ceil(CRT_SEGMENT * CRT_WARPS);
	let cfg = LaunchConfig {
		grid_dim: (blocks.min(gpu.sm_count * fit.max(1) as usize) as u32, 1, 1),
		block_dim: (threads, 1, 1),
		shared_mem_bytes: smem as u32,
	};
	let stride = planes.stride as i64;
	if let Some(remainder) = remainder {
		let (out, (ar, ai)) = (job.out, (job.alpha.re(), job.alpha.im()));
		let (ld, acc) = (out.ld as i64, out.accumulate as i32);
		let (rows, cols) = (job.bad_rows, job.bad_cols);
		return launch!(
			gpu,
			name,
			cfg,
			planes.re,
			im,
			p,
			stride,
			mi,
			ni,
			tri,
			col,
			CrtParams::new(crt),
			da,
			db,
			rows,
			cols,
			out.ptr,
			ld,
			ar,
			ai,
			acc,
			remainder
		);
	}
	let k = CrtParams::new(crt);
	launch_epilogue!(job, "crt", T, cfg, (da, db), planes.re, im, p, stride, mi, ni, tri, col, k)
}

/// the CRT's constants as the kernel takes them, by value (`CrtConstants` in `cuda/reconstruct.cu`,
/// the same layout): the split weights of the first `p` moduli (the rest zero), `P` split on the
/// same grid, `1/P`
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct CrtParams {
	hi: [f64; scheme2::MAX_MODULI as usize],
	lo: [f64; scheme2::MAX_MODULI as usize],
	p_hi: f64,
	p_lo: f64,
	inv_p: f64,
}

// SAFETY: plain old data with the C layout of the kernel's parameter
unsafe impl DeviceRepr for CrtParams {}

// the kernel asserts the same size (`CrtConstants`)
const _: () = assert!(size_of::<CrtParams>() == (2 * scheme2::MAX_MODULI as usize + 3) * size_of::<f64>());

impl CrtParams {
	pub(crate) fn new(crt: &Crt) -> Self {
		let mut params = CrtParams {
			hi: [0.0; scheme2::MAX_MODULI as usize],
			lo: [0.0; scheme2::MAX_MODULI as usize],
			p_hi: crt.p_hi,
			p_lo: crt.p_lo,
			inv_p: crt.inv_p,
		};
		params.hi[..crt.len()].copy_from_slice(&crt.hi);
		params.lo[..crt.len()].copy_from_slice(&crt.lo);
		params
	}
}

/// the CRT kernel's segment of entries, a warp's unit of work (`cuda/reconstruct.cu`)
pub(crate) const CRT_SEGMENT: usize = 128;
/// the CRT kernel's warps per block
pub(crate) const CRT_WARPS: usize = 8;
/// the CRT kernel's cp.async stages per warp for element type `T` (`CRT_STAGES` in `cuda/reconstruct.cu`)
pub(crate) const fn crt_stages<T: Scalar>() -> usize {
	if T::IS_COMPLEX { 2 } else { 3 }
}
