//! the Ozaki pipeline on the GPU: statistics, policy, split, exact INT8 products (the mod-m
//! reduction fused into our wgmma kernels for scheme II), reconstruction; every constant comes
//! from the same Rust functions as the CPU oracle's

use super::blas::{Int8Gemm, NativeMath, native_gemm};
use super::chassis;
use super::device::{Gpu, driver};
use super::scheme1_fused;
use super::wgmma_config::{self, Variant};
use crate::cost::NativeArithmetic;
use crate::emulator::Settings;
use crate::policy::{Choice, PolicyInput, native_arithmetic};
use crate::scheme2::{self, CoarseMaxima, Crt};
use crate::stats::RowStats;
use crate::{Error, PhaseTimes, Plan, Precision, Route, Scalar, Scaling, Scheme, scheme1};
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits};
use std::time::Duration;

/// rows of an operand on the device: element `(r, h)` at `ptr + (r rs + h cs) * size_of::<T>()`
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeviceOperand {
	pub ptr: u64,
	pub rows: usize,
	pub k: usize,
	pub rs: i64,
	pub cs: i64,
}

/// the product's destination: column-major, leading dimension `ld`
#[derive(Clone, Copy, Debug)]
pub(crate) struct Output {
	pub ptr: u64,
	pub ld: usize,
	pub accumulate: bool,
	/// real `f64` scheme II products: where not 0, the device address of the CRT values'
	/// remainders (`f64`, laid out as the output; `crt_remainders_f64` in cuda/reconstruct.cu)
	pub remainder: u64,
}

/// what a GPU product reports
pub(crate) struct Outcome {
	pub plan: Plan,
	pub route: Route,
	pub nonfinite_entries: usize,
	/// ascending
	pub native_rows: Vec<usize>,
	pub times: PhaseTimes,
}

impl Outcome {
	/// the whole product of `m` rows computed natively
	pub(super) fn native(m: usize) -> Outcome {
		Outcome {
			plan: Plan::native(m),
			route: Route::Native,
			nonfinite_entries: 0,
			native_rows: (0..m).collect(),
			times: PhaseTimes::default(),
		}
	}

	/// the report of this outcome for a product of `shape` (`(m, n, k)`) of `T`, taking `times`
	pub(super) fn report<T: Scalar>(self, shape: (usize, usize, usize), times: PhaseTimes) -> crate::Report {
		crate::Report {
			backend: if self.plan.scheme == Scheme::Native {
				crate::Backend::Native
			} else {
				crate::Backend::Gpu
			},
			plan: self.plan,
			route: self.route,
			shape,
			element: T::NAME,
			nonfinite_entries: self.nonfinite_entries,
			native_rows: self.native_rows,
			times,
			host_routing: None,
			tiles: None,
		}
	}
}

/// `ceil(x / 16) * 16`: the K padding of the int8 planes
pub(super) fn pad16(x: usize) -> usize {
	x.div_ceil(16) * 16
}

/// a zeroed device buffer of `len` elements owned by the caller (kept planes and statistics,
/// accurate scaling's bounds), freeing the scratch kept in unused slots when memory runs out
pub(super) fn alloc<T: DeviceRepr + ValidAsZeroBits>(gpu: &Gpu, len: usize) -> Result<CudaSlice<T>, Error> {
	let what = || format!("{} bytes of GPU memory", len * size_of::<T>());
	gpu.freeing_scratch(what, || gpu.stream.alloc_zeros::<T>(len.max(1)))
}

pub(super) fn ptr<T>(gpu: &Gpu, s: &CudaSlice<T>) -> u64 {
	s.device_ptr(&gpu.stream).0
}

/// a grid-stride launch over `len` elements
pub(super) fn elementwise(len: usize) -> LaunchConfig {
	LaunchConfig {
		grid_dim: (len.div_ceil(256).clamp(1, 132 * 16) as u32, 1, 1),
		block_dim: (256, 1, 1),
		shared_mem_bytes: 0,
	}
}

/// launches `name` with the arguments (each passed by reference to a local that lives to the launch)
macro_rules! launch {
	($gpu:expr, $name:expr, $cfg:expr, $($arg:expr),* $(,)?) => {{
		let f = $gpu.function(&$name)?;
		let mut builder = $gpu.stream.launch_builder(&f);
		$( let arg = $arg; builder.arg(&arg); )*
		// SAFETY: the kernels' parameter lists match these arguments (see cuda/*.cu)
		unsafe { builder.launch($cfg) }.map(|_| ()).map_err(driver)
	}};
}

/// launches the split kernel `KERNEL_<type>` over the tiles of `op` ([`Job::TILE`]), writing its planes
/// to `out`; every split kernel takes the operand, its shape and strides, the padded K and `out`
/// first, then its own arguments
macro_rules! launch_split {
	($gpu:expr, $kernel:literal, $t:ty, $op:expr, $out:expr, $($arg:expr),* $(,)?) => {{
		let op: &DeviceOperand = $op;
		let name = format!(concat!($kernel, "_{}"), <$t as Scalar>::NAME);
		launch!($gpu, name, Job::<$t>::tiles(op, pad16(op.k)), op.ptr, op.rows as i32, op.k as i32, op.rs, op.cs, pad16(op.k) as i64, $out, $($arg),*)
	}};
}

/// launches the reconstruction kernel `KERNEL_<type>` over the entries of `job`'s output with
/// launch configuration `cfg`: its own arguments first, then what every reconstruction takes (row
/// and column shifts' device addresses, non-finite masks, destination, alpha, accumulate)
macro_rules! launch_epilogue {
	($job:expr, $kernel:literal, $t:ty, $cfg:expr, ($sa:expr, $sb:expr), $($arg:expr),* $(,)?) => {{
		let job: &Job<'_, $t> = $job;
		let (gpu, out) = (job.gpu, job.out);
		let name = format!(concat!($kernel, "_{}"), <$t as Scalar>::NAME);
		let (shifts_a, shifts_b): (u64, u64) = ($sa, $sb);
		let (ar, ai, acc) = (job.alpha.re(), job.alpha.im(), out.accumulate as i32);
		launch!(gpu, name, $cfg, $($arg,)* shifts_a, shifts_b, job.bad_rows, job.bad_cols, out.ptr, out.ld as i64, ar, ai, acc)
	}};
}

/// the statistics of an operand's rows, downloaded, and where they lie on the device
#[derive(Clone)]
pub(super) struct OperandStats {
	pub rows: Vec<RowStats>,
	pub amax: Vec<f64>,
	nonfinite: Vec<i32>,
	pub device: StatsRegion,
}

/// an operand's row statistics on the device: five arrays one after the other at `base`, `rows`
/// entries each: largest magnitude (f64), norm bound (u64, 0 for a zero row), L1 bound (u64), the
/// largest magnitude's exponent, non-finite flag (i32 each), as `StatsArrays` in `cuda/stats.cu`
/// lays them out
#[derive(Clone, Copy, Debug)]
pub(super) struct StatsRegion {
	base: u64,
	rows: usize,
}

impl StatsRegion {
	const ROW_BYTES: usize = 8 + 8 + 8 + 4 + 4;

	/// the bytes of a region of `rows` rows, rounded up to 16 so that the next region is aligned
	fn bytes(rows: usize) -> usize {
		(rows * Self::ROW_BYTES).next_multiple_of(16)
	}

	/// the device address of the non-finite flags (one i32 per row, nonzero for a row with a NaN
	/// or an infinity)
	fn nonfinite(&self) -> u64 {
		self.base + 28 * self.rows as u64
	}

	/// the device address of the exponents of the rows' largest magnitudes (one i32 per row)
	pub fn e_max(&self) -> u64 {
		self.base + 24 * self.rows as u64
	}

	/// the host statistics from the region's bytes `raw` (8-byte aligned)
	fn parse(self, raw: &[u8]) -> OperandStats {
		let n = self.rows;
		let amax: &[f64] = bytemuck::cast_slice(&raw[..8 * n]);
		let t: &[u64] = bytemuck::cast_slice(&raw[8 * n..16 * n]);
		let l1: &[u64] = bytemuck::cast_slice(&raw[16 * n..24 * n]);
		let narrow: &[i32] = bytemuck::cast_slice(&raw[24 * n..Self::ROW_BYTES * n]);
		let (e_max, nonfinite) = narrow.split_at(n);
		let rows = (0..n)
			.map(|i| RowStats {
				e_max: e_max[i],
				norm: (t[i] > 0).then_some((e_max[i], t[i])),
				l1: l1[i],
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
/// layout): its rows and the address of its [`StatsRegion`]
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct StatsJob {
	x: u64,
	rows: i32,
	k: i32,
	rs: i64,
	cs: i64,
	out: u64,
}

// SAFETY: plain old data with the C layout of the kernel's parameter
unsafe impl DeviceRepr for StatsJob {}

// the kernel asserts the same size
const _: () = assert!(size_of::<StatsJob>() == 40);

/// launches the statistics kernel on the rows of `ops` (one or two operands, in one launch: one
/// block of 32 x 32 threads per 32 rows of each) into scratch slot 11, their regions one after
/// the other
pub(super) fn launch_stats<T: Scalar>(gpu: &Gpu, ops: &[&DeviceOperand]) -> Result<Vec<StatsRegion>, Error> {
	assert!(ops.len() <= 2, "the statistics kernel takes at most two operands");
	let mut next = gpu.scratch(11, ops.iter().map(|op| StatsRegion::bytes(op.rows)).sum())?;
	let mut jobs = [StatsJob::default(); 2];
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
		next += StatsRegion::bytes(op.rows) as u64;
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
pub(super) fn download_stats(gpu: &Gpu, regions: &[StatsRegion]) -> Result<Vec<OperandStats>, Error> {
	let Some(first) = regions.first() else {
		return Ok(Vec::new());
	};
	let bytes = regions.iter().map(|r| StatsRegion::bytes(r.rows)).sum();
	gpu.with_pinned(bytes, |raw| {
		// SAFETY: the scratch buffer holds the regions, `bytes` from the first; the stream orders
		// the copy after the kernel and is idle again before `raw` is read
		unsafe { cudarc::driver::result::memcpy_dtoh_async(raw, first.base, gpu.stream.cu_stream()) }.map_err(driver)?;
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

/// what a lap of the [`Clock`] times
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
	/// statistics, bound, policy, scaling and conversion to int8
	Split,
	/// the exact integer products
	Products,
	/// reconstruction, native rows and entries
	Reconstruct,
}

/// the phase boundaries, timed with device events
pub(super) struct Clock {
	events: Vec<cudarc::driver::CudaEvent>,
	/// the phase of each lap (between consecutive events)
	phases: Vec<Phase>,
}

impl Clock {
	fn start(gpu: &Gpu) -> Result<Self, Error> {
		Ok(Clock {
			events: vec![Self::event(gpu)?],
			phases: Vec::new(),
		})
	}

	fn event(gpu: &Gpu) -> Result<cudarc::driver::CudaEvent, Error> {
		let e = gpu
			.ctx
			.new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
			.map_err(driver)?;
		e.record(&gpu.stream).map_err(driver)?;
		Ok(e)
	}

	/// ends a lap of `phase`
	pub(super) fn mark(&mut self, gpu: &Gpu, phase: Phase) -> Result<(), Error> {
		self.events.push(Self::event(gpu)?);
		self.phases.push(phase);
		Ok(())
	}

	/// the time of each phase, over all its laps (waits for the last)
	fn phase_times(&self) -> Result<PhaseTimes, Error> {
		let laps = self.laps()?;
		let sum = |phase| laps.iter().zip(&self.phases).filter(|(_, p)| **p == phase).map(|(t, _)| *t).sum();
		Ok(PhaseTimes {
			split: sum(Phase::Split),
			products: sum(Phase::Products),
			reconstruct: sum(Phase::Reconstruct),
			total: laps.iter().sum(),
			..PhaseTimes::default()
		})
	}

	/// the durations between consecutive marks (waits for the last)
	fn laps(&self) -> Result<Vec<Duration>, Error> {
		self.events.last().map(|e| e.synchronize()).transpose().map_err(driver)?;
		self.events
			.windows(2)
			.map(|w| {
				w[0].elapsed_ms(&w[1])
					.map(|ms| Duration::from_secs_f64(ms as f64 / 1e3))
					.map_err(driver)
			})
			.collect()
	}
}

/// everything a scheme needs besides its own constants
#[derive(Clone, Copy)]
pub(super) struct Job<'a, T: Scalar> {
	pub gpu: &'a Gpu,
	pub a: DeviceOperand,
	pub b: DeviceOperand,
	pub out: Output,
	pub alpha: T,
	/// the device addresses of the non-finite flags of the rows of `a` and `b` (one i32 per row;
	/// entries of flagged rows and columns are left to the native fixup)
	pub bad_rows: u64,
	pub bad_cols: u64,
}

impl<T: Scalar> Job<'_, T> {
	pub(super) fn dims(&self) -> (usize, usize, usize) {
		(self.a.rows, self.b.rows, self.a.k)
	}

	/// the split kernels' tile for this element type, `(rows, K)`: 32 KiB of input, 128 bytes
	/// of rows by 256 elements of K (`Tile` in `cuda/split.cu`)
	pub(super) const TILE: (usize, usize) = (128 / size_of::<T>(), 256);

	/// the split launch configuration of an operand: its tiles over (rows, `kpad` K), 256 threads
	/// each
	pub(super) fn tiles(op: &DeviceOperand, kpad: usize) -> LaunchConfig {
		let (rows, k) = Self::TILE;
		LaunchConfig {
			grid_dim: (op.rows.div_ceil(rows) as u32, kpad.div_ceil(k) as u32, 1),
			block_dim: (256, 1, 1),
			shared_mem_bytes: 0,
		}
	}
}

/// what one tile of a tiled product takes from the whole product (see [`super::tiled`]), so that
/// it computes its entries bit for bit as the whole product would: the inner balancing's shifts
/// (`None`: none) and the choice, whose native rows are the tile's own (from 0)
pub(crate) struct Given {
	pub balance: Option<Vec<i32>>,
	pub choice: Choice,
}

/// what a product computes besides its operands: the precision, the context's settings, for a
/// tile of a larger product what it takes from the whole (`given`), and where the output's
/// columns go as they complete (`columns`)
pub(crate) struct How<'a> {
	pub precision: Precision,
	pub settings: Settings,
	pub given: Option<&'a Given>,
	pub columns: Option<&'a mut Columns<'a>>,
}

impl How<'_> {
	/// a whole product at `precision`
	pub fn plain(precision: Precision, settings: Settings) -> Self {
		How {
			precision,
			settings,
			given: None,
			columns: None,
		}
	}
}

/// an output computed in column tiles where the route allows (scheme II): each tile is handed on
/// once its work is enqueued, so that its download overlaps the next tiles' compute. Every
/// column is handed on once, in order; routes that compute the output whole hand it on whole
pub(crate) struct Columns<'a> {
	tiles: usize,
	sent: usize,
	send: &'a mut dyn FnMut(std::ops::Range<usize>) -> Result<(), Error>,
}

impl<'a> Columns<'a> {
	/// `tiles` column tiles, handed to `send`
	pub fn new(tiles: usize, send: &'a mut dyn FnMut(std::ops::Range<usize>) -> Result<(), Error>) -> Self {
		Columns { tiles, sent: 0, send }
	}

	fn send(&mut self, cols: std::ops::Range<usize>) -> Result<(), Error> {
		debug_assert_eq!(cols.start, self.sent, "columns are handed on in order");
		self.sent = cols.end;
		(self.send)(cols)
	}

	/// hands on the columns up to `n` not handed on yet
	fn finish(&mut self, n: usize) -> Result<(), Error> {
		if self.sent < n { self.send(self.sent..n) } else { Ok(()) }
	}
}

/// `dst = alpha A B (+ dst)` on the GPU (see [`How`])
pub(crate) fn product<T: Scalar>(
	gpu: &Gpu,
	a: DeviceOperand,
	b: DeviceOperand,
	out: Output,
	alpha: T,
	mut how: How<'_>,
	keep: (Option<&mut Kept>, Option<&mut Kept>),
) -> Result<Outcome, Error> {
	let outcome = compute(gpu, a, b, out, alpha, &mut how, keep)?;
	if let Some(columns) = how.columns {
		columns.finish(b.rows)?;
	}
	Ok(outcome)
}

/// [`product`], but for the columns of routes that compute the output whole
fn compute<T: Scalar>(
	gpu: &Gpu,
	a: DeviceOperand,
	b: DeviceOperand,
	out: Output,
	alpha: T,
	how: &mut How<'_>,
	(mut keep_a, mut keep_b): (Option<&mut Kept>, Option<&mut Kept>),
) -> Result<Outcome, Error> {
	let (precision, settings, given) = (how.precision, how.settings, how.given);
	let Settings { scaling, fused, .. } = settings;
	let mut clock = Clock::start(gpu)?;
	let (m, n, k) = (a.rows, b.rows, a.k);
	let policy = |bound| PolicyInput {
		bound,
		parts: None,
		shape: (m, n, k),
		complex: T::IS_COMPLEX,
		mantissa: T::MANTISSA_BITS,
		scaling,
		native_candidate: settings.native_candidate,
	};
	let empty = m == 0 || n == 0 || k == 0;
	if empty || (given.is_none() && policy(None).skips_bound(precision)) {
		if empty {
			native::<T>(gpu, &a, &b, &out, alpha, precision)?;
		} else {
			whole_native::<T>(gpu, (a, b), out, alpha, precision)?;
		}
		return Ok(Outcome::native(m));
	}
	// a target precision reads the operands balanced along K (exact; kept statistics and splits
	// are those of the unbalanced operands, so nothing is kept then)
	let target = precision.target_bits(T::MANTISSA_BITS, k).is_some();
	let balanced = match given {
		Some(Given { balance: Some(d), .. }) => Some(super::balance::balanced::<T>(gpu, (&a, &b), d)?),
		Some(_) => None,
		None if target => super::balance::balance::<T>(gpu, (&a, &b))?,
		None => None,
	};
	let (a, b) = balanced.as_ref().map_or((a, b), |x| (x.a, x.b));
	// (but the tiles of one product balance alike, and keep only among themselves)
	if balanced.is_some() && given.is_none() {
		(keep_a, keep_b) = (None, None);
	}
	let (sa, sb) = operand_stats::<T>(gpu, (&a, &b), (keep_a.as_deref_mut(), keep_b.as_deref_mut()))?;
	let coarse = if given.is_none() && scaling == Scaling::Accurate && (target || matches!(precision, Precision::SchemeII { .. })) {
		Some(coarse_maxima::<T>(gpu, (&a, &b), (&sa, &sb))?)
	} else {
		None
	};
	// host time of the bound (it ends with a download that waits for its kernels) and the policy
	let bound_start = std::time::Instant::now();
	let bound = if target && given.is_none() {
		Some(super::bound::bound::<T>(
			gpu,
			(&a, &b),
			(&sa, &sb),
			coarse.as_ref(),
			T::MANTISSA_BITS,
		)?)
	} else {
		None
	};
	let input = policy(bound.as_ref());
	let mut choice = match given {
		Some(given) => given.choice.clone(),
		None => input.choose(precision),
	};
	// where one scale per row for both parts leaves rows native: the parts scaled separately
	let mut parts = None;
	if given.is_none() && input.weighs_separate_parts(&choice, precision) {
		let screen = super::parts::screen::<T>(gpu, (&a, &b), T::MANTISSA_BITS, scaling)?;
		if input.separate_parts_pay(&choice, &screen, precision) {
			let ops = super::parts::split::<T>(gpu, (&a, &b))?;
			let bounds = ops.bounds(gpu, T::MANTISSA_BITS, scaling)?;
			choice = PolicyInput {
				parts: Some(&bounds),
				..input
			}
			.choose(precision);
			parts = choice.plan.separate_parts.then_some(ops);
		}
	}
	let bound_time = bound_start.elapsed();
	let plan = choice.plan;
	if plan.scheme == Scheme::Native {
		whole_native::<T>(gpu, (a, b), out, alpha, precision)?;
		return Ok(Outcome {
			plan,
			route: Route::Native,
			nonfinite_entries: 0,
			native_rows: choice.native_rows,
			times: PhaseTimes {
				bound: bound_time,
				..PhaseTimes::default()
			},
		});
	}
	// the emulation skips the rows the bound leaves to the native product besides the non-finite
	// ones. Those rows are computed by cuBLAS on the rows alone, but for f32/c32 outputs above
	// FP32 level, which the native entries' kernel computes with the non-finite rows (flags in
	// buffers of their own where the real products of separate parts, whose statistics reuse the
	// scratch of `sa` and `sb`, run before them)
	let wide = native_arithmetic(precision, T::MANTISSA_BITS) == NativeArithmetic::Wide;
	let uncertified: Vec<usize> = choice.native_rows.iter().copied().filter(|&i| sa.nonfinite[i] == 0).collect();
	let own_flags = parts.is_some();
	let flags = |rows: &[usize]| -> Result<Option<CudaSlice<i32>>, Error> {
		if !own_flags && rows.is_empty() {
			return Ok(None);
		}
		let mut flags = sa.nonfinite.clone();
		rows.iter().for_each(|&i| flags[i] = 1);
		upload_i32(gpu, &flags).map(Some)
	};
	let (skipped, fixed) = (flags(&uncertified)?, flags(if wide { &uncertified } else { &[] })?);
	let bad_cols = own_flags.then(|| upload_i32(gpu, &sb.nonfinite)).transpose()?;
	let job = Job {
		gpu,
		a,
		b,
		out,
		alpha,
		bad_rows: skipped.as_ref().map_or(sa.device.nonfinite(), |f| ptr(gpu, f)),
		bad_cols: bad_cols.as_ref().map_or(sb.device.nonfinite(), |f| ptr(gpu, f)),
	};
	// the native rows and the non-finite entries, after the emulation
	let natives = |job: &Job<'_, T>| -> Result<(), Error> {
		if !wide {
			super::rows::native_rows(job, &uncertified)?;
		}
		let fixed_rows = fixed.as_ref().map_or(sa.device.nonfinite(), |f| ptr(gpu, f));
		if sa.nonfinite.iter().any(|&x| x != 0) || sb.nonfinite.iter().any(|&x| x != 0) || (wide && !uncertified.is_empty()) {
			fixup(&Job {
				bad_rows: fixed_rows,
				..*job
			})?;
		}
		Ok(())
	};
	let (bad_m, bad_n) = (
		sa.nonfinite.iter().filter(|&&x| x != 0).count(),
		sb.nonfinite.iter().filter(|&&x| x != 0).count(),
	);
	let nonfinite_entries = bad_m * n + bad_n * m - bad_m * bad_n;
	if let Some(ops) = &parts {
		// the phases: the statistics, bounds and policy before the real products join their
		// splits; their reconstructions, the combination and the fixup are the reconstruction
		clock.mark(gpu, Phase::Split)?;
		let (route, real) = ops.product(&job, &plan, settings)?;
		natives(&job)?;
		clock.mark(gpu, Phase::Reconstruct)?;
		let laps = clock.laps()?;
		let (before, after) = (laps[0], laps[1]);
		let times = PhaseTimes {
			bound: bound_time,
			split: before + real.split,
			products: real.products,
			reconstruct: after.saturating_sub(real.split + real.products),
			total: before + after,
			..PhaseTimes::default()
		};
		return Ok(Outcome {
			plan,
			route,
			nonfinite_entries,
			native_rows: choice.native_rows,
			times,
		});
	}
	// scheme II computes in column tiles where asked (and nothing is kept of B), the native rows
	// and entries first: the reconstruction skips them, so the order does not matter
	let tiles = match (plan.scheme, &keep_b) {
		(Scheme::SchemeII { .. }, None) => how.columns.as_deref_mut().filter(|c| c.tiles > 1),
		_ => None,
	};
	let tile_n = tiles.as_ref().map_or(n, |c| n.div_ceil(c.tiles));
	let route = match plan.scheme {
		Scheme::SchemeI { slices } if fused && scheme1_fused::supported(&job, slices) => Route::Fused,
		Scheme::SchemeII { .. } if fused && T::IS_COMPLEX && Route3m::for_shape(m, tile_n, pad16(k)) == Route3m::ThreeLaunches => {
			Route::FusedThreeLaunches
		},
		Scheme::SchemeII { .. } if fused => Route::Fused,
		_ => Route::Unfused,
	};
	match plan.scheme {
		Scheme::SchemeI { slices } => {
			scheme_one(&job, (&sa, &sb), (slices, fused), &plan, (keep_a, keep_b), &mut clock)?;
			natives(&job)?;
		},
		Scheme::SchemeII { moduli, .. } => {
			let two = (moduli, coarse.as_ref(), fused);
			match tiles {
				Some(columns) => {
					natives(&job)?;
					scheme_two(&job, (&sa, &sb), two, (keep_a, None), &mut clock, Some(columns))?;
				},
				None => {
					scheme_two(&job, (&sa, &sb), two, (keep_a, keep_b), &mut clock, None)?;
					natives(&job)?;
				},
			}
		},
		Scheme::Native => unreachable!(),
	}
	clock.mark(gpu, Phase::Reconstruct)?;
	let times = PhaseTimes {
		bound: bound_time,
		..clock.phase_times()?
	};
	Ok(Outcome {
		plan,
		route,
		nonfinite_entries,
		native_rows: choice.native_rows,
		times,
	})
}

/// the whole product natively at `precision`: through cuBLAS, or for `f32`/`c32` outputs above
/// FP32 level (which an FP32 GEMM does not keep) through the native entries' kernel, which
/// accumulates in `f64`, over every row
fn whole_native<T: Scalar>(
	gpu: &Gpu,
	(a, b): (DeviceOperand, DeviceOperand),
	out: Output,
	alpha: T,
	precision: Precision,
) -> Result<(), Error> {
	if native_arithmetic(precision, T::MANTISSA_BITS) != NativeArithmetic::Wide {
		return native::<T>(gpu, &a, &b, &out, alpha, precision);
	}
	let (rows, cols) = (upload_i32(gpu, &vec![1; a.rows])?, upload_i32(gpu, &vec![0; b.rows])?);
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

/// the native product through cuBLAS: a TF32 GEMM for `f32`/`c32` at [`Precision::Tf32`], the
/// type's own GEMM otherwise
fn native<T: Scalar>(gpu: &Gpu, a: &DeviceOperand, b: &DeviceOperand, out: &Output, alpha: T, precision: Precision) -> Result<(), Error> {
	let math = match native_arithmetic(precision, T::MANTISSA_BITS) {
		NativeArithmetic::Tf32 => NativeMath::Tf32,
		_ => NativeMath::Exact,
	};
	operand_gemm(gpu, (a, b), out, alpha, math)
}

/// `out = alpha A B (+ out)` by cuBLAS in `math`, on the pipeline's operands (A column-major, B
/// K-major)
pub(super) fn operand_gemm<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand, &DeviceOperand),
	out: &Output,
	alpha: T,
	math: NativeMath,
) -> Result<(), Error> {
	let beta = T::from_parts(out.accumulate as u8 as f64, 0.0);
	let dims = (a.rows, b.rows, a.k);
	native_gemm(
		gpu,
		dims,
		(a.ptr, a.cs.max(1) as usize),
		(b.ptr, b.rs.max(1) as usize),
		(out.ptr, out.ld),
		alpha,
		beta,
		math,
	)
}

/// the entries of non-finite rows and columns, recomputed as plain sums of products
fn fixup<T: Scalar>(job: &Job<'_, T>) -> Result<(), Error> {
	let (m, n, k) = job.dims();
	let (gpu, out) = (job.gpu, job.out);
	let name = format!("native_fixup_{}", T::NAME);
	let (rows, cols) = (job.bad_rows, job.bad_cols);
	let (ar, ai) = (job.alpha.re(), job.alpha.im());
	launch!(
		gpu,
		name,
		elementwise(m * n),
		job.a.ptr,
		job.a.cs,
		job.b.ptr,
		job.b.rs,
		m as i32,
		n as i32,
		k as i32,
		rows,
		cols,
		out.ptr,
		out.ld as i64,
		ar,
		ai,
		out.accumulate as i32
	)
}

pub(super) fn upload_i32(gpu: &Gpu, v: &[i32]) -> Result<CudaSlice<i32>, Error> {
	gpu.stream.clone_htod(v).map_err(driver)
}

/// the layout of split planes: one plane after the other, or interleaved along K for the fused
/// scheme I kernel (see cuda/split.cu)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
	Planar,
	Interleaved,
}

/// what identifies a kept split: the scheme and the layout of its planes
pub(super) type SplitKey = (Scheme, Layout);

/// what a device matrix keeps between products, for one side (rows of `A` or columns of `B`):
/// its statistics (on the host, and on the device in a buffer of its own) and the planes of its
/// last split (see `DeviceMatrix::reuse_splits`)
#[derive(Default)]
pub(crate) struct Kept {
	stats: Option<(OperandStats, CudaSlice<u8>)>,
	split: Option<(SplitKey, Vec<CudaSlice<u8>>)>,
}

/// the split planes of one operand for `scheme` in `layout`, `parts` buffers of `bytes` each:
/// reused from `keep` when it holds those of `scheme` and `layout`; otherwise written by
/// `split(part, dst)` into owned buffers kept in `keep`, or into scratch slots `slot + part` when
/// nothing is kept
pub(super) fn planes(
	gpu: &Gpu,
	keep: Option<&mut Kept>,
	scheme: SplitKey,
	(parts, bytes, slot): (usize, usize, usize),
	split: impl Fn(usize, u64) -> Result<u64, Error>,
) -> Result<Vec<u64>, Error> {
	let Some(keep) = keep else {
		return (0..parts).map(|part| split(part, gpu.scratch(slot + part, bytes)?)).collect();
	};
	if !matches!(&keep.split, Some((kept, _)) if *kept == scheme) {
		keep.split = None;
		let buffers = (0..parts).map(|_| alloc::<u8>(gpu, bytes)).collect::<Result<Vec<_>, _>>()?;
		for (part, b) in buffers.iter().enumerate() {
			split(part, ptr(gpu, b))?;
		}
		keep.split = Some((scheme, buffers));
	}
	Ok(keep.split.as_ref().expect("kept above").1.iter().map(|b| ptr(gpu, b)).collect())
}

/// the statistics of both operands: reused from `keep` where it holds them, the others computed
/// in one launch and downloaded in one copy (and kept, in a device buffer of their own, where
/// `keep` asks)
pub(super) fn operand_stats<T: Scalar>(
	gpu: &Gpu,
	ops: (&DeviceOperand, &DeviceOperand),
	keep: (Option<&mut Kept>, Option<&mut Kept>),
) -> Result<(OperandStats, OperandStats), Error> {
	let mut sides = [(ops.0, keep.0), (ops.1, keep.1)];
	let has_kept = |keep: &Option<&mut Kept>| keep.as_ref().is_some_and(|k| k.stats.is_some());
	let fresh: Vec<&DeviceOperand> = sides.iter().filter(|(_, k)| !has_kept(k)).map(|(op, _)| *op).collect();
	let launched = launch_stats::<T>(gpu, &fresh)?;
	let mut computed = download_stats(gpu, &launched)?.into_iter();
	let mut side = |(_, keep): &mut (&DeviceOperand, Option<&mut Kept>)| -> Result<OperandStats, Error> {
		if let Some(Kept { stats: Some((s, _)), .. }) = keep {
			return Ok(s.clone());
		}
		let mut s = computed.next().expect("one computed per operand without kept statistics");
		if let Some(keep) = keep {
			let bytes = StatsRegion::bytes(s.device.rows);
			let own = alloc::<u8>(gpu, bytes)?;
			// SAFETY: both buffers hold `bytes`; the stream orders the copy after the kernel
			unsafe { cudarc::driver::result::memcpy_dtod_async(ptr(gpu, &own), s.device.base, bytes, gpu.stream.cu_stream()) }
				.map_err(driver)?;
			s.device.base = ptr(gpu, &own);
			keep.stats = Some((s.clone(), own));
		}
		Ok(s)
	};
	let [a, b] = &mut sides;
	Ok((side(a)?, side(b)?))
}

/// the scheme I digit planes of one part of an operand (`part`: 0 real, 1 imaginary, 2 negated
/// imaginary) into `out`: `p` planes of `rows x pad16(k)`
pub(crate) fn split_digits<T: Scalar>(
	gpu: &Gpu,
	out: u64,
	op: &DeviceOperand,
	shifts: &CudaSlice<i32>,
	p: u32,
	part: i32,
) -> Result<u64, Error> {
	launch_split!(gpu, "split_digits", T, op, out, ptr(gpu, shifts), p as i32, part)?;
	Ok(out)
}

/// the scheme II residue planes of an operand into `out` for the first `p` moduli of
/// [`scheme2::MODULI`] (compile-time constants of the kernel), with the rows' shifts at device
/// address `shifts`: per modulus 1 plane (real) or 3 (complex: re, im, re + im) of
/// `rows x pad16(k)`; `out` must be 8-byte aligned
pub(crate) fn split_residues<T: Scalar>(gpu: &Gpu, out: u64, op: &DeviceOperand, shifts: u64, p: u32) -> Result<u64, Error> {
	launch_split!(gpu, "split_residues", T, op, out, shifts, p as i32)?;
	Ok(out)
}

/// scheme I: the fused kernel (`fused`, see [`scheme1_fused`]), or unfused: digit planes,
/// `p(p+1)/2` exact products per term and pass into INT32 diagonals, shift-reduce
fn scheme_one<T: Scalar>(
	job: &Job<'_, T>,
	(sa, sb): (&OperandStats, &OperandStats),
	(p, fused): (u32, bool),
	plan: &Plan,
	keep: (Option<&mut Kept>, Option<&mut Kept>),
	clock: &mut Clock,
) -> Result<(), Error> {
	let gpu = job.gpu;
	let (m, n, k) = job.dims();
	let kpad = pad16(k);
	let shifts_a: Vec<i32> = sa.amax.iter().map(|&x| scheme1::shift(x, p)).collect();
	let shifts_b: Vec<i32> = sb.amax.iter().map(|&x| scheme1::shift(x, p)).collect();
	let (da, db) = (upload_i32(gpu, &shifts_a)?, upload_i32(gpu, &shifts_b)?);
	if fused && scheme1_fused::supported(job, p) {
		return scheme1_fused::product(job, (&da, &db), p, keep, clock);
	}
	let complex = T::IS_COMPLEX;
	let scheme = Scheme::SchemeI { slices: p };
	let (parts_a, parts_b) = if complex { (3, 2) } else { (1, 1) };
	// A: real, imaginary, negated imaginary digits; B: real, imaginary
	let a = planes(
		gpu,
		keep.0,
		(scheme, Layout::Planar),
		(parts_a, p as usize * m * kpad, 0),
		|part, dst| split_digits::<T>(gpu, dst, &job.a, &da, p, part as i32),
	)?;
	let b = planes(
		gpu,
		keep.1,
		(scheme, Layout::Planar),
		(parts_b, p as usize * n * kpad, 3),
		|part, dst| split_digits::<T>(gpu, dst, &job.b, &db, p, part as i32),
	)?;
	let (a_re, b_re) = (a[0], b[0]);
	let (a_im, a_neg, b_im) = if complex {
		(Some(a[1]), Some(a[2]), Some(b[1]))
	} else {
		(None, None, None)
	};
	clock.mark(gpu, Phase::Split)?;
	let passes = plan.pass_ranges(k, complex);
	let p = p as usize;
	let acc_len = passes.len() * p * m * n;
	let diagonals = |slot: usize, terms: &[(u64, u64)]| -> Result<u64, Error> {
		let acc = gpu.scratch(slot, 4 * acc_len)?;
		for (q, range) in passes.iter().enumerate() {
			let len = if q + 1 == passes.len() { kpad - range.start } else { range.len() };
			for s in 0..p {
				let c = acc + 4 * ((q * p + s) * m * n) as u64;
				let mut first = true;
				for t in 0..=s {
					for &(x, y) in terms {
						let a = x + (t * m * kpad + range.start) as u64;
						let b = y + ((s - t) * n * kpad + range.start) as u64;
						Int8Gemm {
							m,
							n,
							k: len,
							a,
							lda: kpad,
							b,
							ldb: kpad,
							c,
							accumulate: !first,
						}
						.run(gpu)?;
						first = false;
					}
				}
			}
		}
		Ok(acc)
	};
	let (acc_re, acc_im) = match (a_im, a_neg, b_im) {
		(Some(a_im), Some(a_neg), Some(b_im)) => (
			diagonals(5, &[(a_re, b_re), (a_neg, b_im)])?,
			Some(diagonals(6, &[(a_re, b_im), (a_im, b_re)])?),
		),
		_ => (diagonals(5, &[(a_re, b_re)])?, None),
	};
	clock.mark(gpu, Phase::Products)?;
	let im = acc_im.unwrap_or(0);
	let counts = (p as i32, passes.len() as i32, m as i32, n as i32);
	launch_epilogue!(
		job,
		"shift_reduce",
		T,
		elementwise(m * n),
		(ptr(gpu, &da), ptr(gpu, &db)),
		acc_re,
		im,
		counts.0,
		counts.1,
		counts.2,
		counts.3
	)?;
	clock.mark(gpu, Phase::Reconstruct)
}

/// INT32 accumulation of int8 residue products is exact over this many K (a multiple of 16): the
/// K chunk of [`unfused_residues`]
const RESIDUE_CHUNK: usize = 131_056;

/// scheme II's row and column shifts on the device
struct ShiftsTwo {
	/// the device addresses of the shifts of the rows of A and of the columns of B (one i32 each)
	a: u64,
	b: u64,
	/// the buffers behind `a` and `b` when they were uploaded (accurate scaling)
	_uploaded: Option<(CudaSlice<i32>, CudaSlice<i32>)>,
}

/// the shifts of scheme II: fast ones computed on the device from the operands' statistics
/// (`fast_shifts`, into scratch slot 12: nothing crosses to the host), accurate ones on the host
/// from the coarse maxima, then uploaded
fn shifts_two<T: Scalar>(
	job: &Job<'_, T>,
	sa: &OperandStats,
	sb: &OperandStats,
	lambda: i32,
	coarse: Option<&CoarseMaxima>,
) -> Result<ShiftsTwo, Error> {
	let Some(coarse) = coarse else {
		let (a, b) = launch_fast_shifts(job.gpu, (sa.device, sb.device), lambda)?;
		return Ok(ShiftsTwo { a, b, _uploaded: None });
	};
	let (a, b) = coarse.shifts(lambda);
	let (a, b) = (upload_i32(job.gpu, &a)?, upload_i32(job.gpu, &b)?);
	Ok(ShiftsTwo {
		a: ptr(job.gpu, &a),
		b: ptr(job.gpu, &b),
		_uploaded: Some((a, b)),
	})
}

/// launches `fast_shifts`: scheme II's fast shifts (`scheme2::fast_shift`) of the rows whose
/// statistics lie in `a` and in `b`, into scratch slot 12; returns the device addresses of A's
/// and of B's (one i32 per row)
pub(super) fn launch_fast_shifts(gpu: &Gpu, (a, b): (StatsRegion, StatsRegion), lambda: i32) -> Result<(u64, u64), Error> {
	let out = gpu.scratch(12, 4 * (a.rows + b.rows))?;
	let (rows_a, rows_b) = (a.rows as i32, b.rows as i32);
	launch!(
		gpu,
		"fast_shifts",
		elementwise(a.rows + b.rows),
		a.base,
		rows_a,
		b.base,
		rows_b,
		lambda,
		out
	)?;
	Ok((out, out + 4 * a.rows as u64))
}

/// what the accurate scaling of scheme II reads of `A B` (one extra INT8 product of coarse
/// magnitudes, its row and column maxima downloaded)
pub(super) fn coarse_maxima<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand, &DeviceOperand),
	(sa, sb): (&OperandStats, &OperandStats),
) -> Result<CoarseMaxima, Error> {
	let (m, n, k) = (a.rows, b.rows, a.k);
	if k >= 1 << 19 {
		return Err(Error::gpu(
			"accurate scaling on the GPU supports K < 524288 (the bound product must stay exact in INT32)",
		));
	}
	let kpad = pad16(k);
	let coarse = |slot: usize, op: &DeviceOperand, s: &OperandStats| -> Result<(Vec<i32>, u64), Error> {
		let s0: Vec<i32> = s.amax.iter().map(|&x| scheme2::coarse_shift(x, T::IS_COMPLEX)).collect();
		let d0 = upload_i32(gpu, &s0)?;
		let out = gpu.scratch(slot, op.rows * kpad)?;
		launch_split!(gpu, "split_coarse", T, op, out, ptr(gpu, &d0))?;
		Ok((s0, out))
	};
	let ((s0a, ca), (s0b, cb)) = (coarse(0, a, sa)?, coarse(1, b, sb)?);
	let c_hi = gpu.scratch(9, 4 * m * n)?;
	Int8Gemm {
		m,
		n,
		k: kpad,
		a: ca,
		lda: kpad,
		b: cb,
		ldb: kpad,
		c: c_hi,
		accumulate: false,
	}
	.run(gpu)?;
	let (row_max, col_max) = (alloc::<i32>(gpu, m)?, alloc::<i32>(gpu, n)?);
	launch!(
		gpu,
		"row_col_max",
		elementwise(m * n),
		c_hi,
		m as i32,
		n as i32,
		ptr(gpu, &row_max),
		ptr(gpu, &col_max)
	)?;
	let down = |e| Error::gpu(format!("download: {e:?}"));
	let widen = |v: Vec<i32>| v.into_iter().map(i64::from).collect();
	Ok(CoarseMaxima {
		s0: (s0a, s0b),
		max: (
			widen(gpu.stream.clone_dtoh(&row_max).map_err(down)?),
			widen(gpu.stream.clone_dtoh(&col_max).map_err(down)?),
		),
	})
}

/// the largest product (K, and m n entries) for which complex scheme II runs its three products in
/// one launch of the fused 3M kernel; beyond it, in three launches of the real kernel (see
/// [`Route3m`]). The one-launch kernel keeps three planes of K-long operand panels in flight, which
/// outgrow L2 as n grows (ncu at n = 8192: 74% DRAM throughput against 32% for the real kernel).
/// Measured on an NVIDIA H200, 15 moduli, the products alone (docs/PERF.md, issue 4, step 6): one
/// launch 5.04 / 39.8 / 446.0 ms, three launches 5.50 / 42.1 / 343.4 ms, unfused 5.79 / 44.9 /
/// 357.0 ms at n = 4096 / 8192 / 16384
const ONE_LAUNCH_3M_MAX_K: usize = 8192;
const ONE_LAUNCH_3M_MAX_ENTRIES: usize = 8192 * 8192;

/// how the fused route runs the three products of complex scheme II (3M)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route3m {
	/// one launch of `scheme2_residues_3m_*`: T1, T2, T3 of a tile one after the other in the same
	/// accumulators, only int8 residues kept between them (in registers)
	OneLaunch,
	/// three launches of the real kernel `scheme2_residues_*` (planes re, im, re + im), writing
	/// R1 = sym_mod(T1), R2 = sym_mod(T2), R3 = sym_mod(T3) as int8, then `combine_3m`:
	/// Re = sym_mod(R1 - R2), Im = sym_mod(R3 - R1 - R2), the same bytes (only int8 between the
	/// phases, through global memory: 5 bytes per entry and modulus)
	ThreeLaunches,
}

impl Route3m {
	/// the route the pipeline takes for an `m x n` product over K padded to `kpad`
	pub fn for_shape(m: usize, n: usize, kpad: usize) -> Self {
		if kpad <= ONE_LAUNCH_3M_MAX_K && m * n <= ONE_LAUNCH_3M_MAX_ENTRIES {
			Route3m::OneLaunch
		} else {
			Route3m::ThreeLaunches
		}
	}
}

/// the int8 residue planes of an `m x n` product, column-major: Re (and Im for complex products),
/// plane `l` at `re + l stride` (`im + l stride`)
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResiduePlanes {
	pub re: u64,
	pub im: Option<u64>,
	pub stride: usize,
}

impl ResiduePlanes {
	/// the plane distance the pipeline uses: `m n` rounded up to 16 bytes, so that every plane
	/// starts 16-byte aligned and the CRT's last 16-byte piece of a plane (partly past `m n`) lies
	/// inside it
	pub fn stride(m: usize, n: usize) -> usize {
		(m * n).next_multiple_of(16)
	}
}

/// scheme II: residue planes, one exact product per modulus (3 for complex) reduced mod m (fused
/// or not), CRT; in column tiles handed on to `columns` where given (`A` split once, `B` tile by
/// tile)
fn scheme_two<T: Scalar>(
	job: &Job<'_, T>,
	(sa, sb): (&OperandStats, &OperandStats),
	(p, coarse, fused): (u32, Option<&CoarseMaxima>, bool),
	keep: (Option<&mut Kept>, Option<&mut Kept>),
	clock: &mut Clock,
	columns: Option<&mut Columns<'_>>,
) -> Result<(), Error> {
	let gpu = job.gpu;
	let (m, n, k) = job.dims();
	let (kpad, pu) = (pad16(k), p as usize);
	let crt = Crt::of(p);
	let shifts = shifts_two(job, sa, sb, crt.lambda, coarse)?;
	let scaling = if coarse.is_some() { Scaling::Accurate } else { Scaling::Fast };
	let per = if T::IS_COMPLEX { 3 } else { 1 };
	// accurate shifts depend on both operands: only fast-scaled splits are kept
	let fast = scaling == Scaling::Fast;
	let (keep_a, keep_b) = if fast { keep } else { (None, None) };
	let scheme = Scheme::SchemeII { moduli: p, scaling };
	let ra = planes(gpu, keep_a, (scheme, Layout::Planar), (1, per * pu * m * kpad, 0), |_, dst| {
		split_residues::<T>(gpu, dst, &job.a, shifts.a, p)
	})?[0];
	let products = if fused { fused_residues } else { unfused_residues };
	let Some(columns) = columns else {
		let rb = planes(gpu, keep_b, (scheme, Layout::Planar), (1, per * pu * n * kpad, 1), |_, dst| {
			split_residues::<T>(gpu, dst, &job.b, shifts.b, p)
		})?[0];
		clock.mark(gpu, Phase::Split)?;
		let planes = residue_planes::<T>(gpu, (m, n), pu)?;
		products(gpu, (ra, rb), (m, n, kpad), &crt.moduli, planes)?;
		return crt_epilogue(job, crt, planes, (shifts.a, shifts.b), clock);
	};
	clock.mark(gpu, Phase::Split)?;
	let width = n.div_ceil(columns.tiles);
	let size = size_of::<T>() as u64;
	for start in (0..n).step_by(width) {
		let cols = start..(start + width).min(n);
		// the tile's columns of B, of the output, of their shifts and flags (one i32 each)
		let tile = Job {
			b: DeviceOperand {
				ptr: job.b.ptr + (start as i64 * job.b.rs) as u64 * size,
				rows: cols.len(),
				..job.b
			},
			out: Output {
				ptr: job.out.ptr + (start * job.out.ld) as u64 * size,
				..job.out
			},
			bad_cols: job.bad_cols + 4 * start as u64,
			..*job
		};
		let shifts_b = shifts.b + 4 * start as u64;
		let rb = split_residues::<T>(gpu, gpu.scratch(1, per * pu * width * kpad)?, &tile.b, shifts_b, p)?;
		let planes = residue_planes::<T>(gpu, (m, cols.len()), pu)?;
		products(gpu, (ra, rb), (m, cols.len(), kpad), &crt.moduli, planes)?;
		crt_epilogue(&tile, crt, planes, (shifts.a, shifts_b), clock)?;
		columns.send(cols)?;
	}
	Ok(())
}

/// the residue planes of an `m x n` product with `p` moduli, in scratch slots 7 (and 8 for the
/// imaginary parts of complex products)
fn residue_planes<T: Scalar>(gpu: &Gpu, (m, n): (usize, usize), p: usize) -> Result<ResiduePlanes, Error> {
	let stride = ResiduePlanes::stride(m, n);
	Ok(ResiduePlanes {
		re: gpu.scratch(7, p * stride)?,
		im: if T::IS_COMPLEX { Some(gpu.scratch(8, p * stride)?) } else { None },
		stride,
	})
}

/// the exact products of scheme II reduced mod each modulus, from the residue planes `ra` of A
/// (`rows = m`) and `rb` of B (`rows = n`), `rows x kpad` int8 each, K-major, 1 plane per modulus
/// (real) or 3 (complex: re, im, re + im): for modulus `moduli[l]`, the symmetric residues of the
/// real product (or of the complex product's real part) as `m x n` int8, column-major, at
/// `re + l stride`, and for complex operands (`im` given) of the imaginary part at `im + l stride`
/// (`out`, [`ResiduePlanes`]), by 3M:
/// `Re = T1 - T2`, `Im = T3 - T1 - T2` of `T1 = Ar Br^T`, `T2 = Ai Bi^T`, `T3 = (Ar + Ai)(Br + Bi)^T`.
///
/// One launch of a fused wgmma kernel for all moduli (`scheme2_residues_*`, or
/// `scheme2_residues_3m_*` with the three products of a modulus accumulated one after the other
/// in the same registers), in the chassis variant the table picks for the shape
/// ([`wgmma_config::choose`]): no INT32 leaves the SM. Any K: the kernels carry the accumulators
/// mod m every 130,944 K. Same inputs and outputs as [`unfused_residues`], byte for byte.
pub(crate) fn fused_residues(
	gpu: &Gpu,
	(ra, rb): (u64, u64),
	(m, n, kpad): (usize, usize, usize),
	moduli: &[u32],
	out: ResiduePlanes,
) -> Result<(), Error> {
	let route = out.im.map(|_| Route3m::for_shape(m, n, kpad));
	let variant = residues_variant(gpu, (m, n, kpad), moduli.len(), route);
	fused_residues_with(gpu, variant, (ra, rb), (m, n, kpad), moduli, out)
}

/// the chassis variant [`wgmma_config::choose`] picks for the residue products of `planes`
/// moduli of an m x n output over `kpad`, for the kernel that runs them: the real product's,
/// whose epilogue stages its output (real operands, `route` `None`, and the three launches of a
/// complex product), or the 3M kernel's (one launch)
pub(crate) fn residues_variant(gpu: &Gpu, dims: (usize, usize, usize), planes: usize, route: Option<Route3m>) -> Variant {
	let staged = route != Some(Route3m::OneLaunch);
	wgmma_config::choose(dims, planes, gpu.sm_count, staged)
}

/// [`fused_residues`] by the chassis variant `variant` (tests and benchmarks compare them)
pub(crate) fn fused_residues_with(
	gpu: &Gpu,
	variant: Variant,
	(ra, rb): (u64, u64),
	(m, n, kpad): (usize, usize, usize),
	moduli: &[u32],
	out: ResiduePlanes,
) -> Result<(), Error> {
	// the kernels index K with int32 (K blocks of 128)
	if kpad > i32::MAX as usize - 128 {
		return unfused_residues(gpu, (ra, rb), (m, n, kpad), moduli, out);
	}
	fused_residues_route(gpu, variant, Route3m::for_shape(m, n, kpad), (ra, rb), (m, n, kpad), moduli, out)
}

/// [`fused_residues_with`] by 3M route `route` (complex operands; real ones ignore it)
pub(crate) fn fused_residues_route(
	gpu: &Gpu,
	variant: Variant,
	route: Route3m,
	(ra, rb): (u64, u64),
	(m, n, kpad): (usize, usize, usize),
	moduli: &[u32],
	out: ResiduePlanes,
) -> Result<(), Error> {
	let dev_moduli = gpu.stream.clone_htod(moduli).map_err(driver)?;
	let mods = (ptr(gpu, &dev_moduli), moduli.len());
	let Some(im) = out.im.filter(|_| route == Route3m::ThreeLaunches) else {
		return chassis::residues(gpu, variant, (ra, rb), (m, n, kpad), mods, out);
	};
	let r3 = gpu.scratch(10, moduli.len() * out.stride)?;
	for (part, dst) in [out.re, im, r3].into_iter().enumerate() {
		chassis::residues_part(gpu, variant, (ra, rb), (m, n, kpad), mods, part, (dst, out.stride))?;
	}
	let cfg = LaunchConfig {
		grid_dim: ((out.stride / 4).div_ceil(256).min(gpu.sm_count * 4) as u32, moduli.len() as u32, 1),
		block_dim: (256, 1, 1),
		shared_mem_bytes: 0,
	};
	launch!(gpu, "combine_3m", cfg, out.re, im, r3, out.stride as i64, mods.0)
}

/// [`fused_residues`] the unfused way, for comparison: per modulus and K chunk of
/// `RESIDUE_CHUNK`, cuBLASLt INT8 products with INT32 out (1, or 3 for complex operands) and a
/// reduction kernel (`reduce_mod`, `reduce_3m`) into the int8 residue planes; same inputs and
/// outputs, byte for byte
pub(crate) fn unfused_residues(
	gpu: &Gpu,
	(ra, rb): (u64, u64),
	(m, n, kpad): (usize, usize, usize),
	moduli: &[u32],
	out: ResiduePlanes,
) -> Result<(), Error> {
	let mn = m * n;
	let per = if out.im.is_some() { 3 } else { 1 };
	let tmp = gpu.scratch(9, 4 * per * mn)?;
	for (l, &modulus) in moduli.iter().enumerate() {
		for (chunk, start) in (0..kpad).step_by(RESIDUE_CHUNK).enumerate() {
			let len = RESIDUE_CHUNK.min(kpad - start);
			for part in 0..per {
				let plane = per * l + part;
				let a = ra + (plane * m * kpad + start) as u64;
				let b = rb + (plane * n * kpad + start) as u64;
				let c = tmp + 4 * (part * mn) as u64;
				Int8Gemm {
					m,
					n,
					k: len,
					a,
					lda: kpad,
					b,
					ldb: kpad,
					c,
					accumulate: false,
				}
				.run(gpu)?;
			}
			let acc = (chunk > 0) as i32;
			let re = out.re + (l * out.stride) as u64;
			match out.im {
				None => launch!(gpu, "reduce_mod", elementwise(mn), tmp, mn as i64, modulus, re, acc)?,
				Some(res_im) => {
					let t = tmp;
					let im = res_im + (l * out.stride) as u64;
					launch!(
						gpu,
						"reduce_3m",
						elementwise(mn),
						t,
						t + 4 * mn as u64,
						t + 8 * mn as u64,
						mn as i64,
						modulus,
						re,
						im,
						acc
					)?
				},
			}
		}
	}
	Ok(())
}

/// the CRT of the residue planes into the output, with the row and column shifts, timed as the
/// reconstruction phase
fn crt_epilogue<T: Scalar>(job: &Job<'_, T>, crt: &Crt, planes: ResiduePlanes, shifts: (u64, u64), clock: &mut Clock) -> Result<(), Error> {
	clock.mark(job.gpu, Phase::Products)?;
	launch_crt(job, crt, planes, shifts)?;
	clock.mark(job.gpu, Phase::Reconstruct)
}

/// launches the CRT kernel: residue planes (`p` of `m x n` each, Re and optionally Im) into the
/// output, with the row and column shifts at device addresses `da` and `db`, on a persistent grid
/// (as many blocks of [`CRT_WARPS`] warps as fit at once) whose warps take segments of
/// [`CRT_SEGMENT`] entries, each warp with the shared memory of its cp.async stages (laid out as
/// `crt_entries` in `cuda/reconstruct.cu` says)
pub(super) fn launch_crt<T: Scalar>(job: &Job<'_, T>, crt: &Crt, planes: ResiduePlanes, (da, db): (u64, u64)) -> Result<(), Error> {
	let gpu = job.gpu;
	let (m, n, _) = job.dims();
	let im = planes.im.unwrap_or(0);
	let (p, mi, ni) = (crt.len() as i32, m as i32, n as i32);
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	let smem = CRT_WARPS * crt_stages::<T>() * parts * crt.len() * CRT_SEGMENT;
	let remainder = job.out.remainder;
	let name = if remainder != 0 {
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
	if remainder != 0 {
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
	launch_epilogue!(job, "crt", T, cfg, (da, db), planes.re, im, p, stride, mi, ni, CrtParams::new(crt))
}

/// the CRT's constants as the kernel takes them, by value (`CrtConstants` in `cuda/reconstruct.cu`,
/// the same layout): the split weights of the first `p` moduli (the rest zero), `P` split on the
/// same grid, `1/P`
#[repr(C)]
#[derive(Clone, Copy)]
struct CrtParams {
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
	fn new(crt: &Crt) -> Self {
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
const CRT_SEGMENT: usize = 128;
/// the CRT kernel's warps per block
const CRT_WARPS: usize = 8;
/// the CRT kernel's cp.async stages per warp for element type `T` (`CRT_STAGES` in `cuda/reconstruct.cu`)
const fn crt_stages<T: Scalar>() -> usize {
	if T::IS_COMPLEX { 2 } else { 3 }
}
