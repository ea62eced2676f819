//! host products larger than the GPU's memory: out of core, tile by tile of the output
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

use super::device::{Gpu, driver, gpu_on};
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

/// the tile of the output `(rows, columns)` whose [`footprint`] fits in `budget` bytes: the whole
/// product where it fits, otherwise the larger side halved until it does; `None` where not even
/// tiles of [`MIN_TILE`] do (or, for products that fit, a single tile)
pub(crate) fn tile<T: Scalar>((m, n, k): (usize, usize, usize), budget: usize) -> Option<(usize, usize)> {
	let (mut ti, mut tj) = (m.max(1), n.max(1));
	while footprint::<T>((ti, tj, k)) > budget {
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
/// own: a panel's transfer overlaps the compute stream's work on the panel before it
struct Ring {
	slots: [usize; 2],
	up: Arc<CudaStream>,
	chunk: usize,
	next: usize,
	/// per buffer: the compute stream's event after its last reader
	read: [Option<CudaEvent>; 2],
	/// the buffer and the panel last uploaded (rows and columns of the operand)
	last: Option<(usize, Block)>,
}

impl Ring {
	fn new(gpu: &Gpu, slots: [usize; 2], chunk: usize) -> Result<Self, Error> {
		Ok(Ring {
			slots,
			up: gpu.ctx.new_stream().map_err(driver)?,
			chunk,
			next: 0,
			read: [None, None],
			last: None,
		})
	}

	/// the panel `rows x cols` of `src` on the device (column-major), once the compute stream
	/// reaches its upload: where the last panel uploaded is the same, that one
	fn panel<T: Scalar>(&mut self, gpu: &Gpu, src: MatRef<'_, T>, (rows, cols): Block, times: &mut PhaseTimes) -> Result<u64, Error> {
		if let Some((b, last)) = &self.last
			&& *last == (rows.clone(), cols.clone())
		{
			return gpu.scratch(self.slots[*b], (rows.len() * cols.len()).max(1) * size_of::<T>());
		}
		let b = self.next;
		self.next ^= 1;
		let at = gpu.scratch(self.slots[b], (rows.len() * cols.len()).max(1) * size_of::<T>())?;
		if let Some(read) = self.read[b].take() {
			self.up.wait(&read).map_err(driver)?;
		}
		let panel = src.submatrix(rows.start, cols.start, rows.len(), cols.len());
		times.upload += staging::upload_on(&self.up, &mut gpu.staging.borrow_mut(), panel, at, self.chunk)?;
		let ready = gpu.ctx.new_event(None).map_err(driver)?;
		ready.record(&self.up).map_err(driver)?;
		gpu.stream.wait(&ready).map_err(driver)?;
		self.last = Some((b, (rows, cols)));
		Ok(at)
	}

	/// forgets the panel last uploaded (another user of the slots may have overwritten it)
	fn forget(&mut self) {
		self.last = None;
	}

	/// marks the compute stream's work so far as the last reader of the last panel
	fn read(&mut self, gpu: &Gpu) -> Result<(), Error> {
		if let Some((b, _)) = &self.last {
			let event = gpu.ctx.new_event(None).map_err(driver)?;
			event.record(&gpu.stream).map_err(driver)?;
			self.read[*b] = Some(event);
		}
		Ok(())
	}
}

/// the panels of a tiled product on the device: rows of `A` and columns of `B`, over all of K
struct Panels<'a, T: Scalar> {
	lhs: MatRef<'a, T>,
	rhs: MatRef<'a, T>,
	a: Ring,
	b: Ring,
}

impl<T: Scalar> Panels<'_, T> {
	/// rows `rows` of `A` (column-major)
	fn a(&mut self, gpu: &Gpu, rows: &Span<usize>, times: &mut PhaseTimes) -> Result<DeviceOperand, Error> {
		let k = self.lhs.ncols();
		Ok(DeviceOperand {
			ptr: self.a.panel(gpu, self.lhs, (rows.clone(), 0..k), times)?,
			rows: rows.len(),
			k,
			rs: 1,
			cs: rows.len().max(1) as i64,
		})
	}

	/// columns `cols` of `B` (column-major: K-major rows of `B^T`)
	fn b(&mut self, gpu: &Gpu, cols: &Span<usize>, times: &mut PhaseTimes) -> Result<DeviceOperand, Error> {
		let k = self.rhs.nrows();
		Ok(DeviceOperand {
			ptr: self.b.panel(gpu, self.rhs, (0..k, cols.clone()), times)?,
			rows: cols.len(),
			k,
			rs: k.max(1) as i64,
			cs: 1,
		})
	}

	/// forgets the panels last uploaded
	fn forget(&mut self) {
		self.a.forget();
		self.b.forget();
	}

	/// the compute stream's work so far read the last panels
	fn read(&mut self, gpu: &Gpu) -> Result<(), Error> {
		self.a.read(gpu)?;
		self.b.read(gpu)
	}
}

/// one GPU's share of a tiled product: the row panels of tiles it computes, its panels on the
/// device, its blocks of the output, and the host time of its uploads
struct Share<'a, T: Scalar> {
	ordinal: usize,
	/// indices into the row panels
	rows: Span<usize>,
	panels: Panels<'a, T>,
	/// its blocks of the output, row panel by row panel (taken as they are computed)
	blocks: Vec<Option<MatMut<'a, T>>>,
	/// the GPU's [`Gpu::holder`] when the share last held it: where another holder came in
	/// between (another product, or another share on the same GPU), its panels there are gone
	holder: u64,
	times: PhaseTimes,
}

/// `work` on every share at once, one thread each holding its GPU's lock; the results in order,
/// or the first error
fn on_every_gpu<'a, T: Scalar, R: Send>(
	shares: &mut [Share<'a, T>],
	work: impl Fn(&Gpu, &mut Share<'a, T>) -> Result<R, Error> + Sync,
) -> Result<Vec<R>, Error> {
	std::thread::scope(|scope| {
		let threads: Vec<_> = shares
			.iter_mut()
			.map(|share| {
				let work = &work;
				scope.spawn(move || {
					let gpu = gpu_on(share.ordinal)?;
					if gpu.holder() != share.holder + 1 {
						share.panels.forget();
					}
					share.holder = gpu.holder();
					work(&gpu, share)
				})
			})
			.collect();
		threads
			.into_iter()
			.map(|t| t.join().map_err(|_| Error::gpu("a GPU's thread panicked"))?)
			.collect()
	})
}

/// `dst = alpha A B (+ dst)` for host matrices, in tiles of `(rows, columns)` of the output
/// ([`tile`]) over the GPUs `devices`, each computing a contiguous block of row panels (at least
/// one each): panels uploaded while the tile before computes, tiles downloaded while the next
/// computes. The plan and the balancing are decided once, from passes that every GPU runs over
/// its own panels. The outcome's times include the transfers (each the slowest GPU's), and
/// `bound` the passes that decide the plan; returns the grid of tiles too
pub(crate) fn out_of_core<T: Scalar>(
	devices: &[usize],
	dst: MatMut<'_, T>,
	accum: Accum,
	(lhs, rhs): (MatRef<'_, T>, MatRef<'_, T>),
	alpha: T,
	(precision, settings): (Precision, Settings),
	(ti, tj): (usize, usize),
) -> Result<(Outcome, (usize, usize)), Error> {
	let (m, n) = (lhs.nrows(), rhs.ncols());
	let ti = ti.min(m.div_ceil(devices.len()).max(1));
	let (rows, cols) = (spans(m, ti), spans(n, tj));
	let chunk = settings.staging_bytes;
	let count = devices.len().min(rows.len());
	let mut blocks = staging::blocks(dst, &rows, &cols).into_iter();
	let mut shares = devices[..count]
		.iter()
		.enumerate()
		.map(|(d, &ordinal)| {
			let gpu = gpu_on(ordinal)?;
			let mine = d * rows.len() / count..(d + 1) * rows.len() / count;
			Ok(Share {
				ordinal,
				blocks: blocks.by_ref().take(mine.len() * cols.len()).map(Some).collect(),
				rows: mine,
				holder: gpu.holder(),
				panels: Panels {
					lhs,
					rhs,
					a: Ring::new(&gpu, [40, 46], chunk)?,
					b: Ring::new(&gpu, [41, 45], chunk)?,
				},
				times: PhaseTimes::default(),
			})
		})
		.collect::<Result<Vec<_>, Error>>()?;
	let analysis = Instant::now();
	let given = decide_panels::<T>(&mut shares, (&rows, &cols), (precision, settings))?;
	let uploads = |shares: &[Share<'_, T>]| shares.iter().map(|s| s.times.upload).max().unwrap_or_default();
	let bound = analysis.elapsed().saturating_sub(uploads(&shares));
	let outcomes = on_every_gpu(&mut shares, |gpu, share| {
		compute_share(gpu, share, (&rows, &cols), (accum, alpha), (precision, settings), &given)
	})?;
	let mut tiles = Tiles::new(m, &given);
	let download = outcomes.iter().map(|o| o.times.download).max().unwrap_or_default();
	outcomes.into_iter().for_each(|o| tiles.add(o));
	let mut outcome = tiles.outcome();
	outcome.times = PhaseTimes {
		upload: uploads(&shares),
		download,
		bound,
		..outcome.times
	};
	Ok((outcome, (rows.len(), cols.len())))
}

/// one GPU's tiles of a tiled product with the whole product's `given`, row panel by row panel,
/// column panels in serpentine order; its outcome (the download time that of its drain)
fn compute_share<T: Scalar>(
	gpu: &Gpu,
	share: &mut Share<'_, T>,
	(rows, cols): (&[Span<usize>], &[Span<usize>]),
	(accum, alpha): (Accum, T),
	(precision, settings): (Precision, Settings),
	given: &Given,
) -> Result<Outcome, Error> {
	let (m, k) = (share.panels.lhs.nrows(), share.panels.lhs.ncols());
	let (size, chunk) = (size_of::<T>(), settings.staging_bytes);
	std::thread::scope(|scope| {
		let drain = Drain::start(scope, gpu, chunk)?;
		let mut tiles = Tiles::new(m, given);
		let mut sent = 0;
		for (i, r) in share.rows.clone().map(|i| (i, &rows[i])) {
			let tile_given = tiles.given(r.clone());
			for j in serpentine(i, cols.len()) {
				let c = &cols[j];
				let block = share.blocks[(i - share.rows.start) * cols.len() + j]
					.take()
					.expect("one block per tile");
				let a = share.panels.a(gpu, r, &mut share.times)?;
				let b = share.panels.b(gpu, c, &mut share.times)?;
				// the output buffer of two tiles ago: written once its download is under way
				if sent >= 2 {
					drain.reuse(gpu)?;
				}
				let at = gpu.scratch([42, 44][sent % 2], (r.len() * c.len()).max(1) * size)?;
				if accum == Accum::Add {
					share.times.upload += staging::upload(gpu, block.as_ref(), at, chunk)?;
				} else if k == 0 {
					// the native product of an empty inner dimension scales the destination by 0
					// SAFETY: the slot holds the tile
					unsafe { cudarc::driver::result::memset_d8_async(at, 0, r.len() * c.len() * size, gpu.stream.cu_stream()) }
						.map_err(driver)?;
				}
				let out = Output {
					ptr: at,
					ld: r.len(),
					accumulate: accum == Accum::Add,
					remainder: 0,
				};
				let how = How {
					given: Some(&tile_given),
					..How::plain(precision, settings)
				};
				tiles.add(pipeline::product(gpu, a, b, out, alpha, how, (None, None))?);
				share.panels.read(gpu)?;
				drain.send(gpu, block, at)?;
				sent += 1;
			}
		}
		let mut outcome = tiles.outcome();
		outcome.times.download = drain.finish(gpu)?;
		Ok(outcome)
	})
}

/// the whole product's balancing and choice from passes that every GPU runs over its panels: the
/// inner exponent ranges of its row panels of `A` and of its share of the column panels of `B`,
/// then the error bound of its tiles (target precisions only). The policy weighs neither
/// separately scaled parts nor accurate scaling here (see the module's docs)
fn decide_panels<T: Scalar>(
	shares: &mut [Share<'_, T>],
	(rows, cols): (&[Span<usize>], &[Span<usize>]),
	(precision, settings): (Precision, Settings),
) -> Result<Given, Error> {
	let (lhs, rhs) = (shares[0].panels.lhs, shares[0].panels.rhs);
	let (m, n, k) = (lhs.nrows(), rhs.ncols(), lhs.ncols());
	let settings = Settings {
		scaling: Scaling::Fast,
		..settings
	};
	let input = match without_bound::<T>((m, n, k), (precision, settings)) {
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
	let count = shares.len();
	let ranges = on_every_gpu(shares, |gpu, share| {
		let (mut a_ranges, mut b_ranges) = (vec![Range::EMPTY; k], vec![Range::EMPTY; k]);
		for r in &rows[share.rows.clone()] {
			let a = share.panels.a(gpu, r, &mut share.times)?;
			a_ranges = union(a_ranges, super::balance::ranges::<T>(gpu, &a)?);
			share.panels.read(gpu)?;
		}
		// the column panels dealt to the GPUs in turn
		let turn = share.rows.start * count / rows.len().max(1);
		for c in cols.iter().skip(turn).step_by(count) {
			let b = share.panels.b(gpu, c, &mut share.times)?;
			b_ranges = union(b_ranges, super::balance::ranges::<T>(gpu, &b)?);
			share.panels.read(gpu)?;
		}
		Ok((a_ranges, b_ranges))
	})?;
	let (a_ranges, b_ranges) = ranges
		.into_iter()
		.reduce(|(a, b), (x, y)| (union(a, x), union(b, y)))
		.expect("one share at least");
	let balance = shifts(&a_ranges, &b_ranges, normal_exponents(T::MANTISSA_BITS));
	let maxima = on_every_gpu(shares, |gpu, share| {
		let first = rows[share.rows.start].start;
		let mut maxima = vec![RowMaxima::default(); rows[share.rows.end - 1].end - first];
		for (i, r) in share.rows.clone().map(|i| (i, &rows[i])) {
			for c in serpentine(i, cols.len()).map(|j| &cols[j]) {
				let (a, b) = (share.panels.a(gpu, r, &mut share.times)?, share.panels.b(gpu, c, &mut share.times)?);
				let balanced = balance
					.as_ref()
					.map(|d| super::balance::balanced::<T>(gpu, (&a, &b), d))
					.transpose()?;
				let (a, b) = balanced.as_ref().map_or((a, b), |x| (x.a, x.b));
				let (sa, sb) = operand_stats::<T>(gpu, (&a, &b), (None, None))?;
				let tile = super::bound::bound::<T>(gpu, (&a, &b), (&sa, &sb), None, T::MANTISSA_BITS)?;
				share.panels.read(gpu)?;
				maxima[r.start - first..r.end - first]
					.iter_mut()
					.zip(&tile.rows)
					.for_each(|(x, y)| x.merge(y));
			}
		}
		Ok(maxima)
	})?;
	let bound = Bound {
		rows: maxima.concat(),
		shape: (m, n, k),
		complex: T::IS_COMPLEX,
		mantissa: T::MANTISSA_BITS,
	};
	let choice = PolicyInput {
		bound: Some(&bound),
		..input
	}
	.choose(precision);
	Ok(Given { balance, choice })
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
		assert_eq!(tile::<f64>(shape, footprint::<f64>(shape)), Some((1000, 700)));
		let budget = footprint::<c64>(shape) / 5;
		let (ti, tj) = tile::<c64>(shape, budget).unwrap();
		assert!(footprint::<c64>((ti, tj, 300)) <= budget && (ti, tj) != (1000, 700));
		assert_eq!(tile::<f64>((10_000, 10_000, 1 << 30), 1 << 30), None);
		for (len, size) in [(1000, 250), (1000, 333), (7, 10), (1, 1)] {
			let s = spans(len, size);
			assert_eq!((s[0].start, s.last().unwrap().end), (0, len));
			assert!(s.windows(2).all(|w| w[0].end == w[1].start) && s.iter().all(|x| !x.is_empty() && x.len() <= size));
		}
	}
}
