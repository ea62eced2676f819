//! the operands' row statistics: computed on the device in one launch, downloaded in one copy,
//! reused from what a device matrix keeps

use crate::gpu::product::job::DeviceOperand;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fault_points::{Fault, point};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::stats::RowStats;
use crate::{Error, Scalar};
use cudarc::driver::{DeviceRepr, LaunchConfig};

/// the statistics of an operand's rows, downloaded, and where they lie on the device
#[derive(Clone)]
pub(crate) struct OperandStats {
	pub rows: Vec<RowStats>,
	pub amax: Vec<f64>,
	pub nonfinite: Vec<i32>,
	pub device: StatsRegion,
}

impl OperandStats {
	/// the rows with a NaN or an infinity
	pub(crate) fn nonfinite_rows(&self) -> usize {
		self.nonfinite.iter().filter(|&&x| x != 0).count()
	}
}

/// the entries of an `(m, n)` output in the non-finite rows of A and columns of B (`bad`, their
/// counts): those the native fixup computes
pub(crate) fn nonfinite_entries((bad_m, bad_n): (usize, usize), (m, n): (usize, usize)) -> usize {
	bad_m * n + bad_n * m - bad_m * bad_n
}

/// an operand's row statistics on the device: seven arrays one after the other at `base`, `rows`
/// entries each: largest magnitude (f64), norm bound (u64, 0 for a zero row), L1 bound (u64), the
/// largest magnitude's exponent, non-finite flag, window counts of the real and of the imaginary
/// parts (i32 each), as `StatsArrays` in `cuda/stats.cu` lays them out
#[derive(Clone, Copy, Debug)]
pub(crate) struct StatsRegion {
	pub base: DevPtr<u8>,
	pub rows: usize,
}

impl StatsRegion {
	pub(crate) const ROW_BYTES: usize = 8 + 8 + 8 + 4 + 4 + 4 + 4;

	/// the bytes of a region of `rows` rows, rounded up to 16 so that the next region is aligned
	pub(crate) fn bytes(rows: usize) -> usize {
		(rows * Self::ROW_BYTES).next_multiple_of(16)
	}

	/// the non-finite flags (one per row, nonzero for a row with a NaN or an infinity)
	pub(crate) fn nonfinite(&self) -> DevPtr<i32> {
		self.base.byte_add(28 * self.rows).cast()
	}

	/// the exponents of the rows' largest magnitudes (one per row)
	pub fn e_max(&self) -> DevPtr<i32> {
		self.base.byte_add(24 * self.rows).cast()
	}

	/// the host statistics from the region's bytes `raw` (8-byte aligned)
	pub(crate) fn parse(self, raw: &[u8]) -> OperandStats {
		let n = self.rows;
		let amax: &[f64] = bytemuck::cast_slice(&raw[..8 * n]);
		let t: &[u64] = bytemuck::cast_slice(&raw[8 * n..16 * n]);
		let l1: &[u64] = bytemuck::cast_slice(&raw[16 * n..24 * n]);
		let narrow: &[i32] = bytemuck::cast_slice(&raw[24 * n..Self::ROW_BYTES * n]);
		let (e_max, rest) = narrow.split_at(n);
		let (nonfinite, window) = rest.split_at(n);
		let (window_re, window_im) = window.split_at(n);
		let rows = (0..n)
			.map(|i| RowStats {
				e_max: e_max[i],
				norm: (t[i] > 0).then_some((e_max[i], t[i])),
				l1: l1[i],
				window: [window_re[i] as u32, window_im[i] as u32],
			})
			.collect();
		OperandStats {
			rows,
			amax: amax.to_vec(),
			nonfinite: nonfinite.to_vec(),
			device: self,
		}
	}
}

/// one operand's statistics job, as the kernel takes it (`StatsJob` in `cuda/stats.cu`, the same
/// layout): its rows of `T` and the address of its [`StatsRegion`]
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct StatsJob<T> {
	x: DevPtr<T>,
	rows: i32,
	k: i32,
	rs: i64,
	cs: i64,
	out: DevPtr<u8>,
}

impl<T> StatsJob<T> {
	/// the job of no rows: the kernel's second job when it takes one operand
	const NONE: Self = StatsJob {
		x: DevPtr::NULL,
		rows: 0,
		k: 0,
		rs: 0,
		cs: 0,
		out: DevPtr::NULL,
	};
}

// SAFETY: plain old data with the C layout of the kernel's parameter
unsafe impl<T> DeviceRepr for StatsJob<T> {}

// the kernel asserts the same size
const _: () = assert!(size_of::<StatsJob<f64>>() == 40);

/// launches the statistics kernel on the rows of `ops` (one or two operands, in one launch: one
/// block of 32 x 32 threads per 32 rows of each) into the scratch of [`Slot::Stats`], their regions one after
/// the other
pub(crate) fn launch_stats<T: Scalar>(gpu: &Gpu, ops: &[&DeviceOperand<T>]) -> Result<Vec<StatsRegion>, Error> {
	launch_stats_into(gpu, ops, Slot::Stats)
}

/// [`launch_stats`] into the scratch of `slot`
pub(crate) fn launch_stats_into<T: Scalar>(gpu: &Gpu, ops: &[&DeviceOperand<T>], slot: Slot) -> Result<Vec<StatsRegion>, Error> {
	let base = gpu.scratch(slot, ops.iter().map(|op| StatsRegion::bytes(op.rows)).sum())?;
	launch_stats_at(gpu, ops, base)
}

/// [`launch_stats`] into the regions from `base` (16-byte aligned, room for
/// [`StatsRegion::bytes`] of each operand's rows)
pub(crate) fn launch_stats_at<T: Scalar>(gpu: &Gpu, ops: &[&DeviceOperand<T>], base: DevPtr<u8>) -> Result<Vec<StatsRegion>, Error> {
	assert!(ops.len() <= 2, "the statistics kernel takes at most two operands");
	let mut next = base;
	let mut jobs = [StatsJob::NONE; 2];
	let mut regions = Vec::new();
	for (job, op) in jobs.iter_mut().zip(ops) {
		*job = StatsJob {
			x: op.ptr,
			rows: op.rows as i32,
			k: op.k as i32,
			rs: op.rs,
			cs: op.cs,
			out: next,
		};
		regions.push(StatsRegion { base: next, rows: op.rows });
		next = next.byte_add(StatsRegion::bytes(op.rows));
	}
	let blocks: usize = ops.iter().map(|op| op.rows.div_ceil(32)).sum();
	if blocks > 0 {
		let cfg = LaunchConfig {
			grid_dim: (blocks as u32, 1, 1),
			block_dim: (32, 32, 1),
			shared_mem_bytes: 0,
		};
		launch!(gpu, format!("row_stats_{}", T::NAME), cfg, jobs[0], jobs[1])?;
	}
	Ok(regions)
}

/// the statistics of `regions` (one after the other, as [`launch_stats`] lays them out), in one
/// download through the page-locked staging buffer once the stream has written them
pub(crate) fn download_stats(gpu: &Gpu, regions: &[StatsRegion]) -> Result<Vec<OperandStats>, Error> {
	let Some(first) = regions.first() else {
		return Ok(Vec::new());
	};
	let bytes = regions.iter().map(|r| StatsRegion::bytes(r.rows)).sum();
	gpu.with_pinned(bytes, |raw| {
		// SAFETY: the scratch buffer holds the regions, `bytes` from the first; the stream orders
		// the copy after the kernel and is idle again before `raw` is read
		point(Fault::Transfer, || format!("download of {bytes} bytes of statistics"))?;
		unsafe { cudarc::driver::result::memcpy_dtoh_async(raw, first.base.addr(), gpu.stream.cu_stream()) }.map_err(driver)?;
		gpu.stream.synchronize().map_err(driver)?;
		let mut offset = 0;
		Ok(regions
			.iter()
			.map(|r| {
				let stats = r.parse(&raw[offset..]);
				offset += StatsRegion::bytes(r.rows);
				stats
			})
			.collect())
	})
}
