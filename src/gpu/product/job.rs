//! what a product on the GPU is made of: its operands and output on the device, the job every
//! phase reads, what a tile takes from the whole product, and the phases' clock

use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::ptr::DevPtr;
use crate::policy::Choice;
use crate::request::Triangle;
use crate::settings::Settings;
use crate::shape::Shape;
use crate::{Error, PhaseTimes, Plan, Precision, Route, Scalar, Scheme};
use cudarc::driver::LaunchConfig;
use std::time::Duration;

/// rows of an operand of `T` on the device: element `(r, h)` at `ptr + (r rs + h cs)` elements
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeviceOperand<T> {
	pub ptr: DevPtr<T>,
	pub rows: usize,
	pub k: usize,
	pub rs: i64,
	pub cs: i64,
}

impl<T> DeviceOperand<T> {
	/// the left operand `A` (`rows x k`) stored column-major with leading dimension `ld`
	pub fn left(ptr: DevPtr<T>, (rows, k): (usize, usize), ld: usize) -> Self {
		DeviceOperand {
			ptr,
			rows,
			k,
			rs: 1,
			cs: ld as i64,
		}
	}

	/// the right operand `B` (`k x cols`) stored column-major with leading dimension `ld`, read by
	/// its columns: each a row of length `k`
	pub fn right(ptr: DevPtr<T>, (k, cols): (usize, usize), ld: usize) -> Self {
		DeviceOperand {
			ptr,
			rows: cols,
			k,
			rs: ld as i64,
			cs: 1,
		}
	}
}

/// the product's destination, of `T`: column-major, leading dimension `ld`
#[derive(Clone, Copy, Debug)]
pub(crate) struct Output<T> {
	pub ptr: DevPtr<T>,
	pub ld: usize,
	pub accumulate: bool,
	/// real `f64` scheme II products: where given, where the CRT values' remainders go (laid out
	/// as the output; `crt_remainders_f64` in cuda/reconstruct.cu)
	pub remainder: Option<DevPtr<f64>>,
	/// where given, the entries the product must compute are those of a triangle (a rank-k
	/// update's): the fused scheme II products skip the output tiles that hold none of it, whose
	/// entries are then left unspecified
	pub triangle: Option<OutputTriangle>,
}

/// a triangle of a square output, of which this output holds the columns from `first_col` on
/// (a column tile's)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OutputTriangle {
	pub triangle: Triangle,
	pub first_col: usize,
}

impl OutputTriangle {
	/// the kernels' parameters for `triangle`: 0 (every tile), 1 (lower) or 2 (upper), and the
	/// first column (`TRIANGLE_LOWER` and `TRIANGLE_UPPER` in cuda/sm90_persistent.cuh)
	pub fn params(triangle: Option<Self>) -> (i32, i32) {
		match triangle {
			None => (0, 0),
			Some(t) => (
				match t.triangle {
					Triangle::Lower => 1,
					Triangle::Upper => 2,
				},
				i32::try_from(t.first_col).expect("output columns fit the kernels' int"),
			),
		}
	}

	/// the same triangle, for the output's columns from `start` on
	pub fn from_column(triangle: Option<Self>, start: usize) -> Option<Self> {
		triangle.map(|t| OutputTriangle {
			first_col: t.first_col + start,
			..t
		})
	}
}

/// what a GPU product reports
pub(crate) struct Outcome {
	pub plan: Plan,
	pub route: Route,
	pub nonfinite_entries: usize,
	/// ascending
	pub native_rows: Vec<usize>,
	pub times: PhaseTimes,
	/// why the whole product ran natively, where it did
	pub native_reason: Option<crate::NativeReason>,
}

impl Outcome {
	/// the whole product of `m` rows computed natively, for `reason`
	pub(crate) fn native(m: usize, reason: crate::NativeReason) -> Outcome {
		Outcome {
			plan: Plan::native(m),
			route: Route::Native,
			nonfinite_entries: 0,
			native_rows: (0..m).collect(),
			times: PhaseTimes::default(),
			native_reason: Some(reason),
		}
	}

	/// the report of this outcome for a product of `shape` of `T`, taking `times`
	pub(crate) fn report<T: Scalar>(self, shape: Shape, times: PhaseTimes) -> crate::Report {
		crate::Report {
			backend: if self.plan.scheme == Scheme::Native {
				crate::Backend::Native
			} else {
				crate::Backend::Gpu
			},
			plan: self.plan,
			route: self.route,
			shape: shape.into_tuple(),
			element: T::NAME,
			nonfinite_entries: self.nonfinite_entries,
			native_rows: self.native_rows,
			times,
			host_routing: None,
			tiles: None,
			shared_launch: None,
			native_reason: self.native_reason,
		}
	}
}

/// `ceil(x / 16) * 16`: the K padding of the int8 planes
pub(crate) fn pad16(x: usize) -> usize {
	x.div_ceil(16) * 16
}

/// what a lap of the [`Clock`] times
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
	/// statistics, bound, policy, scaling and conversion to int8
	Split,
	/// the exact integer products
	Products,
	/// reconstruction, native rows and entries
	Reconstruct,
}

/// the phase boundaries, timed with device events (or, for a product that returns before it
/// completes, not timed: every phase then takes zero)
pub(crate) struct Clock {
	/// empty where untimed
	events: Vec<cudarc::driver::CudaEvent>,
	timed: bool,
	/// the phase of each lap (between consecutive events)
	phases: Vec<Phase>,
}

impl Clock {
	/// a clock started now, timed or not
	pub(crate) fn start(gpu: &Gpu, timed: bool) -> Result<Self, Error> {
		Ok(Clock {
			events: if timed { vec![Self::event(gpu)?] } else { Vec::new() },
			timed,
			phases: Vec::new(),
		})
	}

	pub(crate) fn event(gpu: &Gpu) -> Result<cudarc::driver::CudaEvent, Error> {
		let e = gpu
			.ctx
			.new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
			.map_err(driver)?;
		e.record(&gpu.stream).map_err(driver)?;
		Ok(e)
	}

	/// ends a lap of `phase`
	pub(crate) fn mark(&mut self, gpu: &Gpu, phase: Phase) -> Result<(), Error> {
		if self.timed {
			self.events.push(Self::event(gpu)?);
		}
		self.phases.push(phase);
		Ok(())
	}

	/// the time of each phase, over all its laps (waits for the last)
	pub(crate) fn phase_times(&self) -> Result<PhaseTimes, Error> {
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

	/// the durations between consecutive marks (waits for the last; zeros, untimed)
	pub(crate) fn laps(&self) -> Result<Vec<Duration>, Error> {
		if !self.timed {
			return Ok(vec![Duration::ZERO; self.phases.len()]);
		}
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
pub(crate) struct Job<'a, T: Scalar> {
	pub gpu: &'a Gpu,
	pub a: DeviceOperand<T>,
	pub b: DeviceOperand<T>,
	pub out: Output<T>,
	pub alpha: T,
	/// the non-finite flags of the rows of `a` and `b` (one per row; entries of flagged rows and
	/// columns are left to the native fixup)
	pub bad_rows: DevPtr<i32>,
	pub bad_cols: DevPtr<i32>,
}

impl<T: Scalar> Job<'_, T> {
	/// the shape of the product
	pub(crate) fn dims(&self) -> Shape {
		Shape::new(self.a.rows, self.b.rows, self.a.k)
	}

	/// the split kernels' tile for this element type, `(rows, K)`: 32 KiB of input, 128 bytes
	/// of rows by 256 elements of K (`Tile` in `cuda/split.cu`)
	pub(crate) const TILE: (usize, usize) = (128 / size_of::<T>(), 256);

	/// the split launch configuration of an operand: its tiles over (rows, `kpad` K), 256 threads
	/// each
	pub(crate) fn tiles(op: &DeviceOperand<T>, kpad: usize) -> LaunchConfig {
		let (rows, k) = Self::TILE;
		LaunchConfig {
			grid_dim: (op.rows.div_ceil(rows) as u32, kpad.div_ceil(k) as u32, 1),
			block_dim: (256, 1, 1),
			shared_mem_bytes: 0,
		}
	}
}

/// what one tile of a tiled product takes from the whole product (see [`crate::gpu::orchestration::tiled`]), so that
/// it computes its entries bit for bit as the whole product would: the inner balancing's shifts
/// (`None`: none) and the choice, whose native rows are the tile's own (from 0)
pub(crate) struct FromWhole {
	pub balance: Option<Vec<i32>>,
	pub choice: Choice,
}

/// the terms one pipeline product runs on, besides its operands: the precision, the context's
/// settings, for a tile of a larger product what it takes from the whole (`given`), and where the
/// output's columns go as they complete (`columns`)
pub(crate) struct Terms<'a> {
	pub precision: Precision,
	pub settings: Settings,
	pub given: Option<&'a FromWhole>,
	pub columns: Option<&'a mut Columns<'a>>,
	/// whether the phases are timed (a host wait for the product's end); a product on a
	/// caller's stream returns without that wait, its phases untimed
	pub timed: bool,
	/// whether the product is a Gram product `A Aᴴ`: the right operand's rows are the left
	/// operand's (conjugated for complex types), so that `A`'s statistics, window and (real)
	/// split serve both and the bound's magnitude products are symmetric (the pipeline clears it
	/// where it balances the operands, which scales them apart)
	pub gram: bool,
}

impl Terms<'_> {
	/// a whole product at `precision`
	pub fn plain(precision: Precision, settings: Settings) -> Self {
		Terms {
			precision,
			settings,
			given: None,
			columns: None,
			timed: true,
			gram: false,
		}
	}
}

/// an output computed in column tiles where the route allows (scheme II): each tile is handed on
/// once its work is enqueued, so that its download overlaps the next tiles' compute. Every
/// column is handed on once, in order; routes that compute the output whole hand it on whole
pub(crate) struct Columns<'a> {
	pub tiles: usize,
	sent: usize,
	send: &'a mut dyn FnMut(std::ops::Range<usize>) -> Result<(), Error>,
}

impl<'a> Columns<'a> {
	/// `tiles` column tiles, handed to `send`
	pub fn new(tiles: usize, send: &'a mut dyn FnMut(std::ops::Range<usize>) -> Result<(), Error>) -> Self {
		Columns { tiles, sent: 0, send }
	}

	pub(crate) fn send(&mut self, cols: std::ops::Range<usize>) -> Result<(), Error> {
		debug_assert_eq!(cols.start, self.sent, "columns are handed on in order");
		self.sent = cols.end;
		(self.send)(cols)
	}

	/// hands on the columns up to `n` not handed on yet
	pub(crate) fn finish(&mut self, n: usize) -> Result<(), Error> {
		if self.sent < n { self.send(self.sent..n) } else { Ok(()) }
	}
}

/// the int8 residue planes of an `m x n` product, column-major: Re (and Im for complex products),
/// plane `l` at `re + l stride` (`im + l stride`)
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResiduePlanes {
	pub re: DevPtr<i8>,
	pub im: Option<DevPtr<i8>>,
	pub stride: usize,
	/// the output's triangle, whose tiles alone the fused products must compute
	pub triangle: Option<OutputTriangle>,
}

impl ResiduePlanes {
	/// the plane distance the pipeline uses: `m n` rounded up to 16 bytes, so that every plane
	/// starts 16-byte aligned and the CRT's last 16-byte piece of a plane (partly past `m n`) lies
	/// inside it
	pub fn stride(m: usize, n: usize) -> usize {
		(m * n).next_multiple_of(16)
	}
}

/// launches the split kernel `KERNEL_<type>` over the tiles of `op` ([`crate::gpu::product::job::Job::TILE`]),
/// writing its planes to `out`; every split kernel takes the operand, its shape and strides, the
/// padded K and `out` first, then its own arguments. K is padded to a multiple of 16
/// ([`crate::gpu::product::job::pad16`]), or by `PAD` where the call starts with `@padded PAD,`
macro_rules! launch_split {
	(@padded $pad:expr, $gpu:expr, $kernel:literal, $t:ty, $op:expr, $out:expr, $($arg:expr),* $(,)?) => {{
		use $crate::gpu::product::job::{DeviceOperand, Job};
		let op: &DeviceOperand<$t> = $op;
		let kpad: usize = $pad(op.k);
		let name = format!(concat!($kernel, "_{}"), <$t as $crate::Scalar>::NAME);
		launch!($gpu, name, Job::<$t>::tiles(op, kpad), op.ptr, op.rows as i32, op.k as i32, op.rs, op.cs, kpad as i64, $out, $($arg),*)
	}};
	($gpu:expr, $kernel:literal, $t:ty, $op:expr, $out:expr, $($arg:expr),* $(,)?) => {
		launch_split!(@padded $crate::gpu::product::job::pad16, $gpu, $kernel, $t, $op, $out, $($arg),*)
	};
}

/// launches kernel `KERNEL_<type>`, which writes `job`'s output, with launch configuration `cfg`:
/// its own arguments first, then what every kernel that writes the output takes (destination,
/// leading dimension, alpha, accumulate)
macro_rules! launch_output {
	($job:expr, $kernel:literal, $t:ty, $cfg:expr, $($arg:expr),* $(,)?) => {{
		let job: &$crate::gpu::product::job::Job<'_, $t> = $job;
		let out = job.out;
		let name = format!(concat!($kernel, "_{}"), <$t as $crate::Scalar>::NAME);
		let (ar, ai, acc) = (job.alpha.re(), job.alpha.im(), out.accumulate as i32);
		launch!(job.gpu, name, $cfg, $($arg,)* out.ptr, out.ld as i64, ar, ai, acc)
	}};
}

/// launches the reconstruction kernel `KERNEL_<type>` over the entries of `job`'s output with
/// launch configuration `cfg`: its own arguments first, then what every reconstruction takes (row
/// and column shifts' device addresses, non-finite masks, then as `launch_output!`)
macro_rules! launch_epilogue {
	($job:expr, $kernel:literal, $t:ty, $cfg:expr, ($sa:expr, $sb:expr), $($arg:expr),* $(,)?) => {{
		let job: &$crate::gpu::product::job::Job<'_, $t> = $job;
		let (shifts_a, shifts_b): ($crate::gpu::runtime::ptr::DevPtr<i32>, $crate::gpu::runtime::ptr::DevPtr<i32>) = ($sa, $sb);
		launch_output!(job, $kernel, $t, $cfg, $($arg,)* shifts_a, shifts_b, job.bad_rows, job.bad_cols)
	}};
}
