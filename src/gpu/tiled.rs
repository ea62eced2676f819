//! products in tiles of the output: host products larger than the GPU's memory (out of core), and
//! products over several GPUs, each a block of rows of the output
//!
//! the plan and the inner balancing are decided once for the whole product, from passes over
//! panels of the operands, and every tile is then computed with them ([`Given`]): the inner
//! balancing's exponent ranges are maxima and minima over panels, and the error bound's seven
//! maxima per row are maxima over the tiles of the row, so both equal the whole product's, and the
//! policy takes the same plan. Each tile of `C` reads a panel of rows of `A` and a panel of
//! columns of `B`, over all of K: its rows' and columns' statistics and shifts are those of the
//! whole product, and its entries are the in-core product's bit for bit, but for two
//! refinements the tiles do without:
//! - the policy does not weigh separately scaled complex parts (its plan shares one scale per row
//!   for both parts, and certifies the rows it does not leave native), nor accurate scaling
//!   (scheme II scales fast);
//! - rows left to the native product are computed by cuBLAS per tile, whose kernel for a tile
//!   may round differently from its kernel for the whole product.
//!
//! Over several GPUs, each pipeline computes its block of rows. The panels of `B`, which every
//! pipeline reads, are shared out: each uploads a piece of a panel's columns over its own link and
//! copies the other pieces from the others, GPU to GPU, so that `B` crosses PCIe once in all. To
//! share them, every pipeline asks for the same column panels in the same order, in lock-step
//! ([`Meeting`]); the passes that decide the plan meet to pool their ranges and bounds.

use super::device::{Device, Gpu, driver, gpu_at};
use super::matrix::DeviceMatrix;
use super::meeting::Meeting;
use super::pipeline::{self, Columns, DeviceOperand, Given, How, Outcome, Output, ResiduePlanes, operand_stats, pad16};
use super::staging::{self, Drain};
use crate::balance::{Range, normal_exponents, shifts};
use crate::bound::{Bound, RowMaxima};
use crate::emulator::Settings;
use crate::policy::{Choice, PolicyInput};
use crate::scheme2::MAX_MODULI;
use crate::{Accum, Error, PhaseTimes, Precision, Scalar, Scaling};
use cudarc::driver::{CudaEvent, CudaStream};
use faer::{MatMut, MatRef};
use std::ops::Range as Span;
use std::sync::Arc;
use std::time::Instant;

/// the smallest tile side the halving goes down to: below it, a product that does not fit is an
/// out-of-memory error
const MIN_TILE: usize = 64;

/// an upper bound of the device memory the pipeline takes for an `m x n x k` product of `T`: the
/// staged operands and result, their balanced copies, the error bound's windows and INT32
/// magnitude products, the split planes of the widest plan (20 moduli, three planes each for
/// complex operands) and the residue planes of the product
pub(crate) fn footprint<T: Scalar>((m, n, k): (usize, usize, usize)) -> usize {
	let (size, kpad, moduli) = (size_of::<T>(), pad16(k), MAX_MODULI as usize);
	let (planes, parts) = if T::IS_COMPLEX { (3, 2) } else { (1, 1) };
	let operands = size * (m * k + k * n);
	let result = size * m * n;
	let bound = parts * (m + n) * kpad + parts * 4 * m * n;
	let split = planes * moduli * (m + n) * kpad;
	let residues = parts * moduli * ResiduePlanes::stride(m, n);
	2 * operands + result + bound + split + residues
}

/// the device memory a tile of a tiled product takes: its [`footprint`], and the second buffers
/// its panels and output take turns with
fn tile_footprint<T: Scalar>((m, n, k): (usize, usize, usize)) -> usize {
	footprint::<T>((m, n, k)) + size_of::<T>() * ((m + n) * k + m * n)
}

/// the tile of the output `(rows, columns)` whose [`tile_footprint`] fits in `budget` bytes: the whole
/// product where it fits, otherwise the larger side halved until it does; `None` where not even
/// tiles of [`MIN_TILE`] do (or, for products that fit, a single tile)
pub(crate) fn tile<T: Scalar>((m, n, k): (usize, usize, usize), budget: usize) -> Option<(usize, usize)> {
	let (mut ti, mut tj) = (m.max(1), n.max(1));
	while tile_footprint::<T>((ti, tj, k)) > budget {
		if ti >= tj && ti > MIN_TILE {
			ti = ti.div_ceil(2);
		} else if tj > MIN_TILE {
			tj = tj.div_ceil(2);
		} else {
			return None;
		}
	}
	Some((ti, tj))
}

/// the spans of `len` in pieces of `size` (the last one ragged)
fn spans(len: usize, size: usize) -> Vec<Span<usize>> {
	(0..len.div_ceil(size)).map(|t| t * size..((t + 1) * size).min(len)).collect()
}

/// `count` consecutive spans that cover `len` as evenly as can be (empty ones where `count > len`)
pub(crate) fn split(len: usize, count: usize) -> Vec<Span<usize>> {
	(0..count).map(|p| p * len / count..(p + 1) * len / count).collect()
}

/// the column panels of row panel `i` in the order they are visited: forwards, then backwards on
/// the next row panel, so that the last panel of `B` a row panel read is the first the next reads
/// (and is not uploaded again)
fn serpentine(i: usize, cols: usize) -> Box<dyn Iterator<Item = usize>> {
	if i.is_multiple_of(2) {
		Box::new(0..cols)
	} else {
		Box::new((0..cols).rev())
	}
}

/// the column tiles of an in-core host product's output: 8 from 1 GiB of output, 4 from 256 MiB,
/// 2 from 64 MiB, otherwise 1. The last tile's download is all that is left after the compute; a
/// tile repeats the launches of the products and the CRT, which a smaller output would not pay for
fn column_tiles<T: Scalar>(m: usize, n: usize) -> usize {
	match m * n * size_of::<T>() {
		bytes if bytes >= 1 << 30 => 8,
		bytes if bytes >= 256 << 20 => 4,
		bytes if bytes >= 64 << 20 => 2,
		_ => 1,
	}
	.min(n.max(1))
}

/// the whole product's balancing and choice where a target precision needs the bound, without
/// it otherwise: `Ok(given)` decided here, `Err(input)` for the bound to decide
fn without_bound<T: Scalar>(
	(m, n, k): (usize, usize, usize),
	(precision, settings): (Precision, Settings),
) -> Result<Given, PolicyInput<'static>> {
	let input = PolicyInput {
		bound: None,
		parts: None,
		shape: (m, n, k),
		complex: T::IS_COMPLEX,
		mantissa: T::MANTISSA_BITS,
		scaling: settings.scaling,
		native_candidate: settings.native_candidate,
	};
	let given = |choice| Ok(Given { balance: None, choice });
	if m == 0 || n == 0 || k == 0 || input.skips_bound(precision) {
		given(Choice::native(m))
	} else if precision.target_bits(T::MANTISSA_BITS, k).is_none() {
		given(input.choose(precision))
	} else {
		Err(input)
	}
}

/// `dst = alpha A B (+ dst)` for operands staged whole at `a` and `b`, the output at `out`: in
/// [`column_tiles`], each downloaded into `dst` while the next computes (where the route computes
/// the output whole, downloaded whole). Returns the outcome and the host time of the download
pub(crate) fn in_core<T: Scalar>(
	gpu: &Gpu,
	(a, b, out): (DeviceOperand, DeviceOperand, Output),
	dst: MatMut<'_, T>,
	alpha: T,
	(precision, settings): (Precision, Settings),
) -> Result<(Outcome, std::time::Duration), Error> {
	let (m, n) = (a.rows, b.rows);
	let chunk = settings.staging_bytes;
	let count = column_tiles::<T>(m, n);
	if count == 1 {
		let outcome = pipeline::product(gpu, a, b, out, alpha, How::plain(precision, settings), (None, None))?;
		return Ok((outcome, staging::download(gpu, out.ptr, dst, chunk)?));
	}
	let size = size_of::<T>();
	std::thread::scope(|scope| {
		let drain = Drain::start(scope, gpu, chunk)?;
		let mut rest = Some(dst);
		let mut send = |cols: Span<usize>| -> Result<(), Error> {
			let (block, right) = rest.take().expect("columns handed on once, in order").split_at_col_mut(cols.len());
			rest = Some(right);
			drain.send(gpu, block, out.ptr + (cols.start * m * size) as u64)
		};
		let mut columns = Columns::new(count, &mut send);
		let how = How {
			columns: Some(&mut columns),
			..How::plain(precision, settings)
		};
		let outcome = pipeline::product(gpu, a, b, out, alpha, how, (None, None))?;
		Ok((outcome, drain.finish(gpu)?))
	})
}

/// the outcome of a product computed in tiles, as they complete
struct Tiles<'a> {
	given: &'a Given,
	last: Outcome,
	nonfinite_entries: usize,
	times: PhaseTimes,
}

impl<'a> Tiles<'a> {
	fn new(m: usize, given: &'a Given) -> Self {
		Tiles {
			given,
			last: Outcome::native(m),
			nonfinite_entries: 0,
			times: PhaseTimes::default(),
		}
	}

	/// what a tile of rows `rows` takes: the balancing, the plan and its own native rows
	fn given(&self, rows: Span<usize>) -> Given {
		let choice = &self.given.choice;
		Given {
			balance: self.given.balance.clone(),
			choice: Choice {
				plan: choice.plan,
				native_rows: choice
					.native_rows
					.iter()
					.filter(|i| rows.contains(i))
					.map(|i| i - rows.start)
					.collect(),
			},
		}
	}

	fn add(&mut self, tile: Outcome) {
		self.nonfinite_entries += tile.nonfinite_entries;
		let (t, sum) = (&tile.times, &mut self.times);
		(sum.split, sum.products, sum.reconstruct) = (sum.split + t.split, sum.products + t.products, sum.reconstruct + t.reconstruct);
		self.last = tile;
	}

	/// the whole product's outcome: the plan and native rows of the whole, the route of the last
	/// tile, the sums of the tiles' entries and times
	fn outcome(self) -> Outcome {
		Outcome {
			plan: self.given.choice.plan,
			native_rows: self.given.choice.native_rows.clone(),
			nonfinite_entries: self.nonfinite_entries,
			times: self.times,
			..self.last
		}
	}
}

/// the rows and columns of a block of a matrix
type Block = (Span<usize>, Span<usize>);

/// two device buffers that the panels of one operand take turns in, uploaded on a stream of their
/// own: a panel's transfer overlaps the compute stream's work on the panel before it. A panel that
/// every pipeline needs is shared out: each uploads a piece of its columns and copies the others'
/// pieces from their buffers, GPU to GPU
struct Ring {
	at: [u64; 2],
	up: Arc<CudaStream>,
	chunk: usize,
	next: usize,
	/// per buffer: the panel it holds
	held: [Option<Block>; 2],
	/// per buffer: what its next upload waits for, the compute stream's reads of it and the
	/// other pipelines' copies out of it
	readers: [Vec<Arc<CudaEvent>>; 2],
	/// the buffer of the panel last handed out
	used: Option<usize>,
}

impl Ring {
	/// a ring in scratch slots `slots`, for panels of up to `bytes`
	fn new(gpu: &Gpu, slots: [usize; 2], bytes: usize, chunk: usize) -> Result<Self, Error> {
		Ok(Ring {
			at: [gpu.scratch(slots[0], bytes)?, gpu.scratch(slots[1], bytes)?],
			up: gpu.ctx.new_stream().map_err(driver)?,
			chunk,
			next: 0,
			held: [None, None],
			readers: Default::default(),
			used: None,
		})
	}

	/// the panel `src` (named `key`) on the device, column-major, once the compute stream reaches
	/// it: where a buffer holds it already, that one. With `shared`, every pipeline of the meeting
	/// asks for the same panels in the same order, and each uploads its piece of the columns only
	fn panel<T: Scalar>(
		&mut self,
		gpu: &Gpu,
		(src, key): (MatRef<'_, T>, Block),
		shared: Option<(&Meeting, usize)>,
		upload: &mut std::time::Duration,
	) -> Result<u64, Error> {
		if let Some(b) = (0..2).find(|&b| self.held[b].as_ref() == Some(&key)) {
			self.used = Some(b);
			return Ok(self.at[b]);
		}
		let (b, at) = (self.next, self.at[self.next]);
		self.next ^= 1;
		for reader in self.readers[b].drain(..) {
			self.up.wait(&reader).map_err(driver)?;
		}
		let (rows, size) = (src.nrows(), size_of::<T>());
		let offset = |cols: &Span<usize>| (cols.start * rows * size) as u64;
		let count = shared.map_or(1, |(meeting, _)| meeting.count());
		let pieces = split(src.ncols(), count);
		let mine = &pieces[shared.map_or(0, |(_, me)| me)];
		let piece = src.subcols(mine.start, mine.len());
		*upload += staging::upload_on(&self.up, &mut gpu.staging.borrow_mut(), piece, at + offset(mine), self.chunk)?;
		let uploaded = Arc::new(event(gpu, &self.up)?);
		let ready = match shared {
			Some((meeting, me)) if count > 1 => {
				let all = meeting.exchange(me, (at, uploaded, gpu.ctx.clone()))?;
				for (cols, (theirs, uploaded, ctx)) in pieces.iter().zip(&all).filter(|(cols, _)| *cols != mine && !cols.is_empty()) {
					self.up.wait(uploaded).map_err(driver)?;
					// SAFETY: both buffers hold the panel's columns `cols` (the other pipeline's
					// uploaded, as the wait above orders); the other does not write its buffer
					// again before the event recorded after this copy
					unsafe {
						cudarc::driver::result::memcpy_peer_async(
							gpu.ctx.cu_ctx(),
							at + offset(cols),
							ctx.cu_ctx(),
							theirs + offset(cols),
							cols.len() * rows * size,
							self.up.cu_stream(),
						)
					}
					.map_err(driver)?;
				}
				let copied = Arc::new(event(gpu, &self.up)?);
				let all = meeting.exchange(me, copied.clone())?;
				self.readers[b].extend(all.into_iter().enumerate().filter(|&(e, _)| e != me).map(|(_, c)| c));
				copied
			},
			_ => uploaded,
		};
		gpu.stream.wait(&ready).map_err(driver)?;
		(self.held[b], self.used) = (Some(key), Some(b));
		Ok(at)
	}

	/// marks the compute stream's work so far as a reader of the panel last handed out
	fn read(&mut self, gpu: &Gpu) -> Result<(), Error> {
		if let Some(b) = self.used {
			self.readers[b].push(Arc::new(event(gpu, &gpu.stream)?));
		}
		Ok(())
	}
}

/// an event recorded on `stream` now
fn event(gpu: &Gpu, stream: &CudaStream) -> Result<CudaEvent, Error> {
	let event = gpu.ctx.new_event(None).map_err(driver)?;
	event.record(stream).map_err(driver)?;
	Ok(event)
}

/// an operand of a tiled product
#[derive(Clone, Copy)]
pub(crate) enum Operand<'a, T: Scalar> {
	/// a host matrix: its panels uploaded as the tiles need them
	Host(MatRef<'a, T>),
	/// a device matrix split by rows over the product's pipelines, in their order
	Device(&'a DeviceMatrix<T>),
}

/// the destination of a tiled product
pub(crate) enum Sink<'a, T: Scalar> {
	/// a host matrix: the tiles downloaded as they complete
	Host(MatMut<'a, T>),
	/// a device matrix split by rows over the product's pipelines, in their order: the tiles
	/// written in place
	Device(&'a DeviceMatrix<T>),
}

/// one pipeline's panels of one operand
enum Side<'a, T: Scalar> {
	/// uploaded from the host matrix
	Host(MatRef<'a, T>, Ring),
	/// on the device: column-major at `ptr` with leading dimension `ld`, its first row (of `A`)
	/// or column (of `B`) that of the operand's `first`; complete once `ready` is, where given
	Device {
		ptr: u64,
		ld: usize,
		first: usize,
		ready: Option<CudaEvent>,
	},
}

/// a pipeline's panels of a tiled product: rows of `A` and columns of `B`, over all of K
struct Panels<'a, T: Scalar> {
	a: Side<'a, T>,
	b: Side<'a, T>,
	/// the host time of the uploads
	upload: std::time::Duration,
}

impl<T: Scalar> Panels<'_, T> {
	/// rows `rows` of `A` (column-major)
	fn a(&mut self, gpu: &Gpu, k: usize, rows: &Span<usize>) -> Result<DeviceOperand, Error> {
		let (ptr, cs) = match &mut self.a {
			Side::Host(lhs, ring) => {
				let panel = (lhs.subrows(rows.start, rows.len()), (rows.clone(), 0..k));
				(ring.panel(gpu, panel, None, &mut self.upload)?, rows.len())
			},
			Side::Device { ptr, ld, first, .. } => (*ptr + ((rows.start - *first) * size_of::<T>()) as u64, *ld),
		};
		Ok(DeviceOperand {
			ptr,
			rows: rows.len(),
			k,
			rs: 1,
			cs: cs.max(1) as i64,
		})
	}

	/// columns `cols` of `B` (column-major: K-major rows of `B^T`); every pipeline of `meeting`
	/// asks for the same panels in the same order
	fn b(&mut self, gpu: &Gpu, k: usize, cols: &Span<usize>, meeting: (&Meeting, usize)) -> Result<DeviceOperand, Error> {
		let (ptr, rs) = match &mut self.b {
			Side::Host(rhs, ring) => {
				let panel = (rhs.subcols(cols.start, cols.len()), (0..k, cols.clone()));
				(ring.panel(gpu, panel, Some(meeting), &mut self.upload)?, k)
			},
			Side::Device { ptr, ld, first, ready } => {
				if let Some(ready) = ready.take() {
					gpu.stream.wait(&ready).map_err(driver)?;
				}
				(*ptr + ((cols.start - *first) * *ld * size_of::<T>()) as u64, *ld)
			},
		};
		Ok(DeviceOperand {
			ptr,
			rows: cols.len(),
			k,
			rs: rs.max(1) as i64,
			cs: 1,
		})
	}

	/// the compute stream's work so far read the panels last handed out
	fn read(&mut self, gpu: &Gpu) -> Result<(), Error> {
		for side in [&mut self.a, &mut self.b] {
			if let Side::Host(_, ring) = side {
				ring.read(gpu)?;
			}
		}
		Ok(())
	}
}

/// a tiled product, as every pipeline's thread sees it
struct Tiled<'a, T: Scalar> {
	lhs: Operand<'a, T>,
	rhs: Operand<'a, T>,
	/// a device destination (a host one is given out in blocks to the shares)
	dst: Option<&'a DeviceMatrix<T>>,
	shape: (usize, usize, usize),
	/// the row panels, `per_share` consecutive ones to each pipeline
	rows: Vec<Span<usize>>,
	per_share: usize,
	cols: Vec<Span<usize>>,
	accum: Accum,
	alpha: T,
	precision: Precision,
	settings: Settings,
	meeting: Meeting,
}

/// one pipeline's share of a tiled product
struct Share<'a, T: Scalar> {
	device: Device,
	/// its index among the pipelines
	me: usize,
	/// its blocks of a host destination, row panel by row panel (taken as they are computed)
	blocks: Vec<Option<MatMut<'a, T>>>,
}

/// what one pipeline's share reports: its outcome (its tiles' phases), the balancing and choice
/// of the whole product, and the host times of its uploads, of the passes that decided the plan
/// and of its downloads
struct Done {
	/// `None` where it had no rows
	outcome: Option<Outcome>,
	given: Given,
	times: PhaseTimes,
}

/// `dst = alpha A B (+ dst)` in tiles of `(rows, columns)` of the output over the pipelines
/// `devices`, each computing an even block of rows (of a device destination, its part) in row
/// panels of at most `ti` rows: panels uploaded while the tile before computes, panels that every
/// pipeline needs shared out between them, tiles downloaded while the next computes. The plan and
/// the balancing are decided once, from passes every pipeline runs over its panels. The outcome's
/// times include the transfers (each the slowest pipeline's), and `bound` the passes that decide
/// the plan; returns the grid of tiles too
#[allow(clippy::too_many_arguments)]
pub(crate) fn tiled<T: Scalar>(
	devices: &[Device],
	(lhs, rhs): (Operand<'_, T>, Operand<'_, T>),
	dst: Sink<'_, T>,
	accum: Accum,
	alpha: T,
	(precision, settings): (Precision, Settings),
	(ti, tj): (usize, usize),
) -> Result<(Outcome, (usize, usize)), Error> {
	let (m, n, k) = match (&lhs, &rhs) {
		(Operand::Host(a), Operand::Host(b)) => (a.nrows(), b.ncols(), a.ncols()),
		(Operand::Device(a), Operand::Device(b)) => (a.nrows(), b.ncols(), a.ncols()),
		_ => unreachable!("both operands on the host or both on the device"),
	};
	let count = devices.len();
	let per_share = m.div_ceil(count).div_ceil(ti.max(1)).max(1);
	let (rows, cols) = (split(m, count * per_share), spans(n, tj));
	let (mut blocks, dst) = match dst {
		Sink::Host(dst) => (staging::blocks(dst, &rows, &cols).into_iter().map(Some).collect::<Vec<_>>(), None),
		Sink::Device(dst) => (Vec::new(), Some(dst)),
	};
	let per = per_share * cols.len();
	let mut shares: Vec<Share<'_, T>> = devices
		.iter()
		.enumerate()
		.map(|(me, &device)| Share {
			device,
			me,
			blocks: blocks.drain(..per.min(blocks.len())).collect(),
		})
		.collect();
	let job = Tiled {
		lhs,
		rhs,
		dst,
		shape: (m, n, k),
		rows,
		per_share,
		cols,
		accum,
		alpha,
		precision,
		settings,
		meeting: Meeting::new(count),
	};
	let done = on_every_gpu(&mut shares, &job.meeting, |gpu, share| run_share(gpu, &job, share))?;
	let slowest = |phase: fn(&PhaseTimes) -> std::time::Duration| done.iter().map(|d| phase(&d.times)).max().unwrap_or_default();
	let (upload, bound, download) = (slowest(|t| t.upload), slowest(|t| t.bound), slowest(|t| t.download));
	let mut done = done.into_iter();
	let first = done.next().expect("one pipeline at least");
	let mut tiles = Tiles::new(m, &first.given);
	first
		.outcome
		.into_iter()
		.chain(done.filter_map(|d| d.outcome))
		.for_each(|o| tiles.add(o));
	let mut outcome = tiles.outcome();
	outcome.times = PhaseTimes {
		upload,
		download,
		bound,
		..outcome.times
	};
	Ok((outcome, (job.rows.len(), job.cols.len())))
}

/// `work` on every share at once, one thread each holding its pipeline's lock (taken in the
/// order of the pipelines, as every tiled product takes them, so that two products over the same
/// GPUs cannot each hold one the other waits for); the results in order, or the error of the
/// first share that failed
fn on_every_gpu<'a, T: Scalar, R: Send>(
	shares: &mut [Share<'a, T>],
	meeting: &Meeting,
	work: impl Fn(&Gpu, &mut Share<'a, T>) -> Result<R, Error> + Sync,
) -> Result<Vec<R>, Error> {
	let mut order: Vec<Device> = shares.iter().map(|s| s.device).collect();
	order.sort();
	let turn = (std::sync::Mutex::new(0), std::sync::Condvar::new());
	let results: Vec<Result<R, Error>> = std::thread::scope(|scope| {
		let threads: Vec<_> = shares
			.iter_mut()
			.map(|share| {
				let (work, order, turn) = (&work, &order, &turn);
				scope.spawn(move || {
					let me = share.me;
					let mine = order
						.iter()
						.position(|&d| d == share.device)
						.expect("every share's pipeline in the order");
					let mut next = turn.0.lock().unwrap_or_else(|e| e.into_inner());
					while *next != mine {
						next = turn.1.wait(next).unwrap_or_else(|e| e.into_inner());
					}
					let gpu = gpu_at(share.device);
					*next += 1;
					turn.1.notify_all();
					drop(next);
					let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&*gpu?, share)))
						.unwrap_or_else(|_| Err(Error::gpu("a GPU's thread panicked")));
					if result.is_err() {
						meeting.fail(me);
					}
					result
				})
			})
			.collect();
		threads
			.into_iter()
			.map(|t| t.join().unwrap_or_else(|_| Err(Error::gpu("a GPU's thread panicked"))))
			.collect()
	});
	match meeting.failed() {
		Some(first) => Err(results.into_iter().nth(first).and_then(Result::err).expect("the share that failed")),
		None => results.into_iter().collect(),
	}
}

/// one pipeline's share of a tiled product: its panels set up, the plan decided with the
/// others, its tiles computed
fn run_share<T: Scalar>(gpu: &Gpu, job: &Tiled<'_, T>, share: &mut Share<'_, T>) -> Result<Done, Error> {
	let mut panels = panels(gpu, job, share.me)?;
	let start = Instant::now();
	let given = decide(gpu, job, share.me, &mut panels)?;
	let bound = start.elapsed().saturating_sub(panels.upload);
	let (outcome, download) = compute(gpu, job, share, &mut panels, &given)?;
	for side in [&panels.a, &panels.b] {
		if let Side::Host(_, ring) = side {
			ring.up.synchronize().map_err(driver)?;
		}
	}
	gpu.stream.synchronize().map_err(driver)?;
	let times = PhaseTimes {
		upload: panels.upload,
		bound,
		download,
		..PhaseTimes::default()
	};
	Ok(Done { outcome, given, times })
}

/// pipeline `me`'s panels: host operands through rings of two buffers each (scratch slots 40
/// and 46 for `A`, 41 and 45 for `B`); device ones where they are, `B` whole on every pipeline
/// (its parts copied together into scratch slot 47 where it is split)
fn panels<'a, T: Scalar>(gpu: &Gpu, job: &Tiled<'a, T>, me: usize) -> Result<Panels<'a, T>, Error> {
	let (_, _, k) = job.shape;
	let (size, chunk) = (size_of::<T>(), job.settings.staging_bytes);
	let widest = |spans: &[Span<usize>]| spans.iter().map(Span::len).max().unwrap_or(0);
	let a = match job.lhs {
		Operand::Host(lhs) => Side::Host(lhs, Ring::new(gpu, [40, 46], (widest(&job.rows) * k * size).max(1), chunk)?),
		Operand::Device(lhs) => {
			let part = &lhs.parts[me];
			Side::Device {
				ptr: part.ptr(gpu),
				ld: part.rows.len(),
				first: part.rows.start,
				ready: None,
			}
		},
	};
	let b = match job.rhs {
		Operand::Host(rhs) => Side::Host(rhs, Ring::new(gpu, [41, 45], (widest(&job.cols) * k * size).max(1), chunk)?),
		Operand::Device(rhs) if rhs.parts.len() == 1 => Side::Device {
			ptr: rhs.parts[0].ptr(gpu),
			ld: k,
			first: 0,
			ready: None,
		},
		Operand::Device(rhs) => {
			let (ptr, ready) = gather(gpu, rhs, (&job.meeting, me))?;
			Side::Device {
				ptr,
				ld: k,
				first: 0,
				ready: Some(ready),
			}
		},
	};
	Ok(Panels {
		a,
		b,
		upload: std::time::Duration::ZERO,
	})
}

/// the whole of `rhs`, split by rows over the pipelines of `meeting`, on pipeline `me` (scratch
/// slot 47, column-major): every part copied there, GPU to GPU, once the work its pipeline had
/// enqueued before is complete, on a stream of its own (the compute stream's work on `A` goes on
/// meanwhile); the event after the copies
fn gather<T: Scalar>(gpu: &Gpu, rhs: &DeviceMatrix<T>, (meeting, me): (&Meeting, usize)) -> Result<(u64, CudaEvent), Error> {
	use cudarc::driver::sys;
	let (k, n, size) = (rhs.nrows(), rhs.ncols(), size_of::<T>());
	let whole = gpu.scratch(47, (k * n * size).max(1))?;
	let copies = gpu.ctx.new_stream().map_err(driver)?;
	let part = &rhs.parts[me];
	let written = Arc::new(event(gpu, &gpu.stream)?);
	let parts = meeting.exchange(me, (part.ptr(gpu), part.rows.clone(), written, gpu.ctx.clone()))?;
	for (ptr, rows, written, ctx) in parts.iter().filter(|p| !p.1.is_empty() && n > 0) {
		copies.wait(written).map_err(driver)?;
		let copy = sys::CUDA_MEMCPY3D_PEER {
			srcXInBytes: 0,
			srcY: 0,
			srcZ: 0,
			srcLOD: 0,
			srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
			srcHost: std::ptr::null(),
			srcDevice: *ptr,
			srcArray: std::ptr::null_mut(),
			srcContext: ctx.cu_ctx(),
			srcPitch: rows.len() * size,
			srcHeight: n,
			dstXInBytes: rows.start * size,
			dstY: 0,
			dstZ: 0,
			dstLOD: 0,
			dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
			dstHost: std::ptr::null_mut(),
			dstDevice: whole,
			dstArray: std::ptr::null_mut(),
			dstContext: gpu.ctx.cu_ctx(),
			dstPitch: k * size,
			dstHeight: n,
			WidthInBytes: rows.len() * size,
			Height: n,
			Depth: 1,
		};
		// SAFETY: the source part holds `rows` x n elements (leading dimension rows), the
		// destination k x n; the part is not written while the product holds the matrix
		unsafe { sys::cuMemcpy3DPeerAsync(&copy, copies.cu_stream()) }
			.result()
			.map_err(driver)?;
	}
	Ok((whole, event(gpu, &copies)?))
}

/// the whole product's balancing and choice from passes every pipeline runs over its panels: the
/// inner exponent ranges of its row panels of `A` and of the column panels of `B` dealt to it,
/// then the error bound of its tiles (target precisions only), shared with the others. The policy
/// weighs neither separately scaled parts nor accurate scaling here (see the module's docs)
fn decide<T: Scalar>(gpu: &Gpu, job: &Tiled<'_, T>, me: usize, panels: &mut Panels<'_, T>) -> Result<Given, Error> {
	let (m, n, k) = job.shape;
	let settings = Settings {
		scaling: Scaling::Fast,
		..job.settings
	};
	let input = match without_bound::<T>(job.shape, (job.precision, settings)) {
		Ok(given) => return Ok(given),
		Err(input) => input,
	};
	let union = |x: Vec<Range>, y: Vec<Range>| -> Vec<Range> {
		x.into_iter()
			.zip(y)
			.map(|(x, y)| Range {
				max: x.max.max(y.max),
				min: x.min.min(y.min),
			})
			.collect()
	};
	let (meeting, count) = (&job.meeting, job.meeting.count());
	let mine = &job.rows[me * job.per_share..(me + 1) * job.per_share];
	let (mut a_ranges, mut b_ranges) = (vec![Range::EMPTY; k], vec![Range::EMPTY; k]);
	// backwards, so that the first panels the bound pass reads are the ones uploaded last
	for r in mine.iter().rev().filter(|r| !r.is_empty()) {
		let a = panels.a(gpu, k, r)?;
		a_ranges = union(a_ranges, super::balance::ranges::<T>(gpu, &a)?);
		panels.read(gpu)?;
	}
	for (j, c) in job.cols.iter().enumerate().rev() {
		let b = panels.b(gpu, k, c, (meeting, me))?;
		if j % count == me {
			b_ranges = union(b_ranges, super::balance::ranges::<T>(gpu, &b)?);
		}
		panels.read(gpu)?;
	}
	let (a_ranges, b_ranges) = meeting
		.exchange(me, (a_ranges, b_ranges))?
		.into_iter()
		.reduce(|(a, b), (x, y)| (union(a, x), union(b, y)))
		.expect("one pipeline at least");
	let balance = shifts(&a_ranges, &b_ranges, normal_exponents(T::MANTISSA_BITS));
	let first = mine.first().map_or(0, |r| r.start);
	let mut maxima = vec![RowMaxima::default(); mine.last().map_or(0, |r| r.end) - first];
	for (local, r) in mine.iter().enumerate() {
		for c in serpentine(local, job.cols.len()).map(|j| &job.cols[j]) {
			let b = panels.b(gpu, k, c, (meeting, me))?;
			if r.is_empty() {
				continue;
			}
			let a = panels.a(gpu, k, r)?;
			let balanced = balance
				.as_ref()
				.map(|d| super::balance::balanced::<T>(gpu, (&a, &b), d))
				.transpose()?;
			let (a, b) = balanced.as_ref().map_or((a, b), |x| (x.a, x.b));
			let (sa, sb) = operand_stats::<T>(gpu, (&a, &b), (None, None))?;
			let tile = super::bound::bound::<T>(gpu, (&a, &b), (&sa, &sb), None, T::MANTISSA_BITS)?;
			panels.read(gpu)?;
			maxima[r.start - first..r.end - first]
				.iter_mut()
				.zip(&tile.rows)
				.for_each(|(x, y)| x.merge(y));
		}
	}
	let bound = Bound {
		rows: meeting.exchange(me, maxima)?.concat(),
		shape: (m, n, k),
		complex: T::IS_COMPLEX,
		mantissa: T::MANTISSA_BITS,
	};
	let choice = PolicyInput {
		bound: Some(&bound),
		..input
	}
	.choose(job.precision);
	Ok(Given { balance, choice })
}

/// one pipeline's tiles with the whole product's `given`, row panel by row panel, column panels
/// in serpentine order; its outcome and the host time of its downloads
fn compute<T: Scalar>(
	gpu: &Gpu,
	job: &Tiled<'_, T>,
	share: &mut Share<'_, T>,
	panels: &mut Panels<'_, T>,
	given: &Given,
) -> Result<(Option<Outcome>, std::time::Duration), Error> {
	let (m, _, k) = job.shape;
	let (size, chunk, me) = (size_of::<T>(), job.settings.staging_bytes, share.me);
	let replace_empty = job.accum == Accum::Replace && k == 0;
	let part = job.dst.map(|dst| &dst.parts[me]);
	std::thread::scope(|scope| {
		let drain = match part {
			None => Some(Drain::start(scope, gpu, chunk)?),
			Some(part) => {
				if replace_empty {
					// the native product of an empty inner dimension scales the destination by 0
					// SAFETY: the part holds its rows x n elements
					unsafe {
						cudarc::driver::result::memset_d8_async(
							part.ptr(gpu),
							0,
							part.rows.len() * job.shape.1 * size,
							gpu.stream.cu_stream(),
						)
					}
					.map_err(driver)?;
				}
				None
			},
		};
		let mut tiles = Tiles::new(m, given);
		// per tile still in an output buffer: the downloads it was sent in
		let (mut pending, mut drained) = (std::collections::VecDeque::new(), 0);
		let mine = &job.rows[me * job.per_share..(me + 1) * job.per_share];
		for (local, r) in mine.iter().enumerate() {
			let tile_given = tiles.given(r.clone());
			for j in serpentine(local, job.cols.len()) {
				let c = &job.cols[j];
				let b = panels.b(gpu, k, c, (&job.meeting, me))?;
				if r.is_empty() {
					continue;
				}
				let a = panels.a(gpu, k, r)?;
				let accumulate = job.accum == Accum::Add;
				let how = How {
					given: Some(&tile_given),
					..How::plain(job.precision, job.settings)
				};
				let outcome = match (&drain, part) {
					(Some(drain), _) => {
						// the output buffer of two tiles ago: written once its downloads are under way
						if pending.len() == 2 {
							(0..pending.pop_front().unwrap_or(0)).try_for_each(|_| drain.reuse(gpu))?;
						}
						let at = gpu.scratch([42, 44][drained % 2], (r.len() * c.len()).max(1) * size)?;
						let block = share.blocks[local * job.cols.len() + j].take().expect("one block per tile");
						if accumulate {
							panels.upload += staging::upload(gpu, block.as_ref(), at, chunk)?;
						} else if replace_empty {
							// SAFETY: the slot holds the tile
							unsafe { cudarc::driver::result::memset_d8_async(at, 0, r.len() * c.len() * size, gpu.stream.cu_stream()) }
								.map_err(driver)?;
						}
						let out = Output {
							ptr: at,
							ld: r.len(),
							accumulate,
							remainder: 0,
						};
						// the tile's columns downloaded as they complete
						let (mut rest, mut sends) = (Some(block), 0);
						let mut send = |cols: Span<usize>| -> Result<(), Error> {
							let (piece, right) = rest.take().expect("columns handed on once, in order").split_at_col_mut(cols.len());
							rest = Some(right);
							sends += 1;
							drain.send(gpu, piece, at + (cols.start * r.len() * size) as u64)
						};
						let mut columns = Columns::new(column_tiles::<T>(r.len(), c.len()), &mut send);
						let how = How {
							columns: Some(&mut columns),
							..how
						};
						let outcome = pipeline::product(gpu, a, b, out, job.alpha, how, (None, None))?;
						pending.push_back(sends);
						drained += 1;
						outcome
					},
					(None, Some(part)) => {
						let out = Output {
							ptr: part.ptr(gpu) + ((r.start - part.rows.start + c.start * part.rows.len()) * size) as u64,
							ld: part.rows.len(),
							accumulate,
							remainder: 0,
						};
						pipeline::product(gpu, a, b, out, job.alpha, how, (None, None))?
					},
					(None, None) => unreachable!("a host destination drains"),
				};
				tiles.add(outcome);
				panels.read(gpu)?;
			}
		}
		let download = drain.map(|d| d.finish(gpu)).transpose()?.unwrap_or_default();
		Ok((mine.iter().any(|r| !r.is_empty()).then(|| tiles.outcome()), download))
	})
}

#[cfg(test)]
mod tests {
	use super::*;
	use faer::c64;

	/// the tiles cover the output once; a product that fits is one tile; the halving stops at
	/// what fits, and reports what does not
	#[test]
	fn tiles_fit_the_budget() {
		let shape = (1000, 700, 300);
		assert_eq!(tile::<f64>(shape, tile_footprint::<f64>(shape)), Some((1000, 700)));
		let budget = tile_footprint::<c64>(shape) / 5;
		let (ti, tj) = tile::<c64>(shape, budget).unwrap();
		assert!(tile_footprint::<c64>((ti, tj, 300)) <= budget && (ti, tj) != (1000, 700));
		assert_eq!(tile::<f64>((10_000, 10_000, 1 << 30), 1 << 30), None);
		for (len, size) in [(1000, 250), (1000, 333), (7, 10), (1, 1)] {
			let s = spans(len, size);
			assert_eq!((s[0].start, s.last().unwrap().end), (0, len));
			assert!(s.windows(2).all(|w| w[0].end == w[1].start) && s.iter().all(|x| !x.is_empty() && x.len() <= size));
		}
		for (len, count) in [(1000, 3), (5, 8), (0, 2), (7, 7)] {
			let s = split(len, count);
			assert_eq!((s.len(), s[0].start, s.last().unwrap().end), (count, 0, len));
			assert!(s.windows(2).all(|w| w[0].end == w[1].start && w[0].len().abs_diff(w[1].len()) <= 1));
		}
	}
}
