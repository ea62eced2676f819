//! products in tiles of the output: host products larger than the GPU's memory (out of core), and
//! products over several GPUs, each a block of rows of the output
//!
//! the plan and the inner balancing are decided once for the whole product, from passes over
//! panels of the operands, and every tile is then computed with them ([`FromWhole`]): the inner
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
//! ([`Exchange`]); the passes that decide the plan meet to pool their ranges and bounds.

use crate::gpu::orchestration::pipeline;
use crate::gpu::orchestration::tiled_decision::whole_product;
use crate::gpu::orchestration::tiling::{Tiled, serpentine};
use crate::gpu::product::footprint::spans;
use crate::gpu::product::footprint::split;
use crate::gpu::product::job::{Columns, DeviceOperand, FromWhole, Outcome, Output, Terms};
use crate::gpu::runtime::context::{Device, Gpu, gpu_at};
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::runtime::staging::{self, Drain};
use crate::gpu::transfer::exchange::Exchange;
use crate::gpu::transfer::matrix::DeviceMatrix;
use crate::gpu::transfer::panels::{Operand, Panels};
use crate::policy::Choice;
use crate::request::Request;
use crate::shape::Shape;
use crate::{Accum, Error, NativeReason, PhaseTimes, Report, Scalar};
use faer::MatMut;
use std::ops::Range as Span;
use std::time::Instant;

/// the column tiles of an in-core host product's output: 8 from 1 GiB of output, 4 from 256 MiB,
/// 2 from 64 MiB, otherwise 1. The last tile's download is all that is left after the compute; a
/// tile repeats the launches of the products and the CRT, which a smaller output would not pay for
pub(crate) fn column_tiles<T: Scalar>(m: usize, n: usize) -> usize {
	match m * n * size_of::<T>() {
		bytes if bytes >= 1 << 30 => 8,
		bytes if bytes >= 256 << 20 => 4,
		bytes if bytes >= 64 << 20 => 2,
		_ => 1,
	}
	.min(n.max(1))
}

/// the outcome of a product computed in tiles, as they complete
struct Tiles<'a> {
	given: &'a FromWhole,
	last: Outcome,
	nonfinite_entries: usize,
	times: PhaseTimes,
}

impl<'a> Tiles<'a> {
	fn new(m: usize, given: &'a FromWhole) -> Self {
		Tiles {
			given,
			// (replaced by the first tile's)
			last: Outcome::native(m, NativeReason::NotEmulated),
			nonfinite_entries: 0,
			times: PhaseTimes::default(),
		}
	}

	/// what a tile of rows `rows` takes: the balancing, the plan and its own native rows
	fn given(&self, rows: Span<usize>) -> FromWhole {
		let choice = &self.given.choice;
		FromWhole {
			balance: self.given.balance.clone(),
			choice: Choice {
				plan: choice.plan,
				native_rows: choice
					.native_rows
					.iter()
					.filter(|i| rows.contains(i))
					.map(|i| i - rows.start)
					.collect(),
				reason: choice.reason,
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
			native_reason: self.given.choice.reason,
			..self.last
		}
	}
}

/// the destination of a tiled product
pub(crate) enum Destination<'a, T: Scalar> {
	/// a host matrix: the tiles downloaded as they complete
	Host(MatMut<'a, T>),
	/// a device matrix split by rows over the product's pipelines, in their order: the tiles
	/// written in place
	Device(&'a DeviceMatrix<T>),
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
	given: FromWhole,
	times: PhaseTimes,
}

/// `request` (`dst = alpha A B (+ dst)`) in tiles of `(rows, columns)` of the output over the pipelines
/// `devices`, each computing an even block of rows (of a device destination, its part) in row
/// panels of at most `ti` rows: panels uploaded while the tile before computes, panels that every
/// pipeline needs shared out between them, tiles downloaded while the next computes. The plan and
/// the balancing are decided once, from passes every pipeline runs over its panels. The outcome's
/// times include the transfers (each the slowest pipeline's), and `bound` the passes that decide
/// the plan; the report gives the grid of tiles too
pub(crate) fn tiled<T: Scalar>(
	devices: &[Device],
	request: Request<T, Operand<'_, T>>,
	dst: Destination<'_, T>,
	(ti, tj): (usize, usize),
) -> Result<Report, Error> {
	let shape = request.shape;
	let Shape { m, n, .. } = shape;
	let count = devices.len();
	let per_share = m.div_ceil(count).div_ceil(ti.max(1)).max(1);
	let (rows, cols) = (split(m, count * per_share), spans(n, tj));
	let (mut blocks, dst) = match dst {
		Destination::Host(dst) => (staging::blocks(dst, &rows, &cols).into_iter().map(Some).collect::<Vec<_>>(), None),
		Destination::Device(dst) => (Vec::new(), Some(dst)),
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
		request,
		dst,
		rows,
		per_share,
		cols,
		exchange: Exchange::new(count),
	};
	let done = on_every_gpu(&mut shares, &job.exchange, |gpu, share| run_share(gpu, &job, share))?;
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
	let outcome = tiles.outcome();
	let times = PhaseTimes {
		upload,
		download,
		bound,
		..outcome.times
	};
	Ok(Report {
		tiles: Some((job.rows.len(), job.cols.len())),
		..outcome.report::<T>(shape, times)
	})
}

/// `work` on every share at once, one thread each holding its pipeline's lock (taken in the
/// order of the pipelines, as every tiled product takes them, so that two products over the same
/// GPUs cannot each hold one the other waits for); the results in order, or the error of the
/// first share that failed
fn on_every_gpu<'a, T: Scalar, R: Send>(
	shares: &mut [Share<'a, T>],
	exchange: &Exchange,
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
						exchange.fail(me);
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
	match exchange.failed() {
		Some(first) => Err(results.into_iter().nth(first).and_then(Result::err).expect("the share that failed")),
		None => results.into_iter().collect(),
	}
}

/// one pipeline's share of a tiled product: its panels set up, the plan decided with the
/// others, its tiles computed
fn run_share<T: Scalar>(gpu: &Gpu, job: &Tiled<'_, T>, share: &mut Share<'_, T>) -> Result<Done, Error> {
	let _code = gpu.using(&job.request.settings);
	let (rows, cols) = (&job.rows[..], &job.cols[..]);
	let operands = (job.request.lhs, job.request.rhs);
	let mut panels = Panels::new(
		gpu,
		operands,
		(rows, cols, job.request.shape.k),
		job.request.settings.staging_bytes,
		(&job.exchange, share.me),
	)?;
	let start = Instant::now();
	let given = whole_product(gpu, job, share.me, &mut panels)?;
	let bound = start.elapsed().saturating_sub(panels.upload);
	let (outcome, download) = compute(gpu, job, share, &mut panels, &given)?;
	panels.synchronize()?;
	gpu.stream.synchronize().map_err(driver)?;
	let times = PhaseTimes {
		upload: panels.upload,
		bound,
		download,
		..PhaseTimes::default()
	};
	Ok(Done { outcome, given, times })
}

/// one pipeline's tiles with the whole product's `given`, row panel by row panel, column panels
/// in serpentine order; its outcome and the host time of its downloads
fn compute<T: Scalar>(
	gpu: &Gpu,
	job: &Tiled<'_, T>,
	share: &mut Share<'_, T>,
	panels: &mut Panels<'_, T>,
	given: &FromWhole,
) -> Result<(Option<Outcome>, std::time::Duration), Error> {
	let Shape { m, n, k } = job.request.shape;
	let (size, me) = (size_of::<T>(), share.me);
	let replace_empty = job.request.accum == Accum::Replace && k == 0;
	let part = job.dst.map(|dst| &dst.parts[me]);
	std::thread::scope(|scope| {
		let mut host = match part {
			None => Some(HostTiles::start(scope, gpu, job.request.settings.staging_bytes)?),
			Some(part) => {
				if replace_empty {
					// the native product of an empty inner dimension scales the destination by 0
					// SAFETY: the part holds its rows x n elements
					unsafe {
						cudarc::driver::result::memset_d8_async(part.ptr(gpu).addr(), 0, part.rows.len() * n * size, gpu.stream.cu_stream())
					}
					.map_err(driver)?;
				}
				None
			},
		};
		let mut tiles = Tiles::new(m, given);
		let mine = &job.rows[me * job.per_share..(me + 1) * job.per_share];
		for (local, r) in mine.iter().enumerate() {
			let tile_given = tiles.given(r.clone());
			for j in serpentine(local, job.cols.len()) {
				let c = &job.cols[j];
				let b = panels.b(gpu, k, c, (&job.exchange, me))?;
				if r.is_empty() {
					continue;
				}
				let a = panels.a(gpu, k, r)?;
				let terms = Terms {
					given: Some(&tile_given),
					..Terms::plain(job.request.precision, job.request.settings)
				};
				let outcome = match (&mut host, part) {
					(Some(host), _) => {
						let block = share.blocks[local * job.cols.len() + j].take().expect("one block per tile");
						host.product(block, (a, b), &job.request, terms, &mut panels.upload)?
					},
					(None, Some(part)) => {
						let out = Output {
							ptr: part.ptr(gpu).cast::<T>().add(r.start - part.rows.start + c.start * part.rows.len()),
							ld: part.rows.len(),
							accumulate: job.request.accum == Accum::Add,
							remainder: None,
							triangle: None,
						};
						pipeline::product(gpu, (a, b), out, job.request.alpha, terms, (None, None))?
					},
					(None, None) => unreachable!("a host destination drains"),
				};
				tiles.add(outcome);
				panels.read(gpu)?;
			}
		}
		let download = host.map(|h| gpu.finish_drain(h.drain)).transpose()?.unwrap_or_default();
		Ok((mine.iter().any(|r| !r.is_empty()).then(|| tiles.outcome()), download))
	})
}

/// the tiles of a host destination on `gpu`: computed in two output buffers in turn, each
/// downloaded into its block in column pieces as they complete
struct HostTiles<'scope, T: Scalar> {
	gpu: &'scope Gpu,
	drain: Drain<'scope, T>,
	chunk: usize,
	/// per tile still in an output buffer, the downloads it was sent in
	pending: std::collections::VecDeque<usize>,
	/// the tiles computed so far
	computed: usize,
}

impl<'scope, T: Scalar> HostTiles<'scope, T> {
	fn start<'env>(scope: &'scope std::thread::Scope<'scope, 'env>, gpu: &'scope Gpu, chunk: usize) -> Result<Self, Error> {
		Ok(HostTiles {
			gpu,
			drain: gpu.start_drain(scope, chunk)?,
			chunk,
			pending: Default::default(),
			computed: 0,
		})
	}

	/// the tile `block` of the destination: `alpha a b` (`alpha` the request's), added to the
	/// block (uploaded first, its host time added to `upload`) where the request adds
	fn product(
		&mut self,
		block: MatMut<'scope, T>,
		(a, b): (DeviceOperand<T>, DeviceOperand<T>),
		request: &Request<T, Operand<'_, T>>,
		terms: Terms<'_>,
		upload: &mut std::time::Duration,
	) -> Result<Outcome, Error> {
		let Request { accum, alpha, .. } = *request;
		let (gpu, rows, cols, size) = (self.gpu, block.nrows(), block.ncols(), size_of::<T>());
		// the output buffer of two tiles ago: written once its downloads are under way
		if self.pending.len() == 2 {
			(0..self.pending.pop_front().unwrap_or(0)).try_for_each(|_| self.drain.reuse())?;
		}
		let at = gpu
			.scratch([Slot::StagedC, Slot::SecondC][self.computed % 2], (rows * cols).max(1) * size)?
			.cast::<T>();
		if accum == Accum::Add {
			*upload += gpu.upload(block.as_ref(), at, self.chunk)?;
		} else if a.k == 0 {
			// the native product of an empty inner dimension scales the destination by 0
			// SAFETY: the slot holds the tile
			unsafe { cudarc::driver::result::memset_d8_async(at.addr(), 0, rows * cols * size, gpu.stream.cu_stream()) }.map_err(driver)?;
		}
		let out = Output {
			ptr: at,
			ld: rows,
			accumulate: accum == Accum::Add,
			remainder: None,
			triangle: None,
		};
		let (drain, mut rest, mut sends) = (&self.drain, Some(block), 0);
		let mut send = |cols: Span<usize>| -> Result<(), Error> {
			let (piece, right) = rest.take().expect("columns handed on once, in order").split_at_col_mut(cols.len());
			rest = Some(right);
			sends += 1;
			drain.send(piece, at.add(cols.start * rows))
		};
		let mut columns = Columns::new(column_tiles::<T>(rows, cols), &mut send);
		let terms = Terms {
			columns: Some(&mut columns),
			..terms
		};
		let outcome = pipeline::product(gpu, (a, b), out, alpha, terms, (None, None))?;
		self.pending.push_back(sends);
		self.computed += 1;
		Ok(outcome)
	}
}
