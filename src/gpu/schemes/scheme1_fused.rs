//! fused scheme I on the GPU: the interleaved digit split, then one persistent wgmma
//! kernel (`scheme1_fused_p<p>_<type>`, `cuda/sm90_scheme1_fused.cu`) that multiplies all `p(p+1)/2` slice
//! pairs of a tile into `p` INT32 accumulators on chip, shift-reduces them, adds the K passes,
//! scales, applies alpha and accumulation and writes the output: no INT32 plane leaves the SM.
//! Same bits as the unfused route and the CPU oracle.

use crate::gpu::kernels::digits::{Digits, pad128};
use crate::gpu::kernels::tma::TensorMap;
use crate::gpu::product::job::{Clock, DeviceOperand, Job, Phase};
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{Launch, SMEM_LIMIT, ptr};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::schemes::resident::{Layout, Resident, planes};
use crate::precision::pass_len;
use crate::shape::Shape;
use crate::{Error, Scalar, Scheme};
use cudarc::driver::CudaSlice;

/// the rows of A in a tile (two consumer warpgroups of 64)
const TILE_M: usize = 128;

/// the tile width of the kernel of `p` slices: `p N / 2` INT32 accumulators per consumer thread
/// (`Tiling` in `cuda/sm90_scheme1_fused.cu`; the kernel traps when launched with another)
pub(crate) const fn tile_n(p: u32) -> usize {
	match p {
		1 => 256,
		2 => 192,
		3 => 128,
		4 => 96,
		5 | 6 => 64,
		_ => 48,
	}
}

/// whether the fused kernel takes this product: its TMA coordinates (bytes along an interleaved
/// row, `p pad128(k)`) and its shapes are int32
pub(crate) fn supported<T: Scalar>(job: &Job<'_, T>, p: u32) -> bool {
	let Shape { m, n, k } = job.dims();
	let limit = i32::MAX as usize - 1024;
	p as usize * pad128(k) <= limit && m <= limit && n <= limit
}

/// one launch of the fused kernel: interleaved planes `a` (`m` rows, 1 plane or 3 for complex)
/// and `b` (`n` rows, 1 or 2 planes) of K padded to `kpad`, into `dst` (column-major, leading
/// dimension `ldd`, of `T`), with the epilogue's arguments
pub(crate) struct Fused<T> {
	/// the slice count (1..=8)
	pub p: u32,
	/// `(m, n, kpad)`, `kpad` a multiple of 128
	pub dims: Shape,
	/// the interleaved planes of A and B
	pub planes: (DevPtr<i8>, DevPtr<i8>),
	/// K chunks of 32 per pass (a multiple of 4)
	pub pass_chunks: usize,
	/// row shifts of A, column shifts of B
	pub shifts: (DevPtr<i32>, DevPtr<i32>),
	/// non-finite flags of the rows of A and the columns of B
	pub bad: (DevPtr<i32>, DevPtr<i32>),
	/// scratch of `m n` per output part, or null for a real product of one pass
	pub carry: DevPtr<f64>,
	/// the output
	pub dst: DevPtr<T>,
	/// the output's leading dimension
	pub ldd: usize,
	/// alpha: real and imaginary parts
	pub alpha: (f64, f64),
	/// whether the product is added to the output
	pub accumulate: bool,
}

impl<T: Scalar> Fused<T> {
	/// enqueues the kernel on the stream
	pub fn run(&self, gpu: &Gpu) -> Result<(), Error> {
		let Shape { m, n, k: kpad } = self.dims;
		let row = self.p as usize * kpad;
		let (parts_a, parts_b) = if T::IS_COMPLEX { (3, 2) } else { (1, 1) };
		let tile = tile_n(self.p);
		let (map_a, map_b) = (
			TensorMap::planes(self.planes.0, row, m, parts_a, TILE_M as u32)?,
			TensorMap::planes(self.planes.1, row, n, parts_b, tile as u32)?,
		);
		let tiles = m.div_ceil(TILE_M) * n.div_ceil(tile);
		let launch = Launch {
			grid: (tiles.min(gpu.sm_count) as u32, 1, 1),
			block: (384, 1, 1),
			smem: SMEM_LIMIT as u32,
			cluster: 1,
		};
		let [mi, ni, tile, chunks, pass] = [m, n, tile, kpad / 32, self.pass_chunks].map(|x| x as i32);
		let (ldd, acc) = (self.ldd as i64, self.accumulate as i32);
		let params = (
			map_a,
			map_b,
			mi,
			ni,
			tile,
			chunks,
			pass,
			self.shifts.0,
			self.shifts.1,
			self.bad.0,
			self.bad.1,
			self.carry,
			self.dst,
			ldd,
			self.alpha.0,
			self.alpha.1,
			acc,
		);
		let name = format!("scheme1_fused_p{}_{}", self.p, T::NAME);
		// SAFETY: the arguments match scheme1_fused_p<p>_<type> in cuda/sm90_scheme1_fused.cu; the planes
		// hold what the maps describe, the arrays `m` and `n` entries, carry and dst `m x n`
		unsafe { launch.run(gpu, &name, &params) }
	}
}

/// scheme I, fused: the interleaved split of both operands (kept when `keep` asks), then one
/// launch of the fused kernel, timed as the products phase (the reconstruction phase is empty)
pub(crate) fn product<T: Scalar>(
	job: &Job<'_, T>,
	(da, db): (&CudaSlice<i32>, &CudaSlice<i32>),
	p: u32,
	keep: (Option<&mut Resident>, Option<&mut Resident>),
	clock: &mut Clock,
) -> Result<(), Error> {
	let gpu = job.gpu;
	let Shape { m, n, k } = job.dims();
	let kpad = pad128(k);
	let row = p as usize * kpad;
	let (parts_a, parts_b) = if T::IS_COMPLEX { (3, 2) } else { (1, 1) };
	let key = (Scheme::SchemeI { slices: p }, Layout::Interleaved);
	// A: real, imaginary, negated imaginary digits; B: real, imaginary; one buffer of planes each
	let split = |op: &DeviceOperand<T>, shifts: &CudaSlice<i32>, parts: usize, dst: DevPtr<i8>| -> Result<DevPtr<i8>, Error> {
		for part in 0..parts {
			let digits = Digits {
				op,
				shifts,
				p,
				part: part as i32,
			};
			digits.interleaved(gpu, dst.add(part * op.rows * row))?;
		}
		Ok(dst)
	};
	let a = planes(gpu, keep.0, key, (parts_a * m * row, &[Slot::SplitA]), |_, dst| {
		split(&job.a, da, parts_a, dst)
	})?[0];
	let b = planes(gpu, keep.1, key, (parts_b * n * row, &[Slot::SplitB]), |_, dst| {
		split(&job.b, db, parts_b, dst)
	})?[0];
	clock.mark(gpu, Phase::Split)?;
	let pass_chunks = pass_len(p, T::IS_COMPLEX) / 32;
	let passes = (kpad / 32).div_ceil(pass_chunks);
	let carry_parts = if T::IS_COMPLEX { 2 } else { (passes > 1) as usize };
	let carry = if carry_parts > 0 {
		gpu.scratch(Slot::DiagonalsRe, 8 * carry_parts * m * n)?.cast()
	} else {
		DevPtr::NULL
	};
	Fused {
		p,
		dims: Shape::new(m, n, kpad),
		planes: (a, b),
		pass_chunks,
		shifts: (ptr(gpu, da), ptr(gpu, db)),
		bad: (job.bad_rows, job.bad_cols),
		carry,
		dst: job.out.ptr,
		ldd: job.out.ld,
		alpha: (job.alpha.re(), job.alpha.im()),
		accumulate: job.out.accumulate,
	}
	.run(gpu)?;
	clock.mark(gpu, Phase::Products)?;
	clock.mark(gpu, Phase::Reconstruct)
}
