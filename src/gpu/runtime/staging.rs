//! host matrices to and from the GPU in chunks, through a few reused page-locked buffers: the
//! host's copy of one chunk (parallel, from or into any faer layout) overlaps the DMA of the
//! chunks around it, and a result comes back straight into its destination
//!
//! a device matrix is column-major with leading dimension = rows, so that a chunk, a run of
//! consecutive elements in column-major order, is one contiguous range on the device: one DMA a
//! chunk, whatever the host layout

use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fault_points::{Fault, point};
use crate::gpu::runtime::pinned::Pinned;
use crate::gpu::runtime::ptr::DevPtr;
use crate::view::View;
use crate::{Error, Scalar};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use faer::MatMut;
use faer::reborrow::ReborrowMut;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// the page-locked buffers a transfer cycles through: while the host fills (or drains) one, the
/// DMA engines work on the others
const BUFFERS: usize = 4;

/// the staging buffers of one GPU, grown to the largest chunk a transfer has asked for (a small
/// matrix's transfer asks for no more than the matrix), and the event of the last DMA that read or
/// wrote each
#[derive(Default)]
pub(crate) struct Staging {
	buffers: Vec<Pinned>,
	/// per buffer: recorded after its last DMA
	done: Vec<Option<CudaEvent>>,
	chunk: usize,
}

impl Staging {
	/// `BUFFERS` buffers of at least `chunk` bytes (reallocated when they are smaller)
	fn prepare(&mut self, ctx: &Arc<CudaContext>, chunk: usize) -> Result<(), Error> {
		if self.chunk >= chunk && self.buffers.len() == BUFFERS {
			return Ok(());
		}
		self.wait_all()?;
		self.buffers.clear();
		for _ in 0..BUFFERS {
			let what = || format!("{BUFFERS} x {chunk} bytes of page-locked host memory");
			self.buffers.push(Pinned::new(ctx, chunk, what)?);
		}
		self.done = (0..BUFFERS).map(|_| None).collect();
		self.chunk = chunk;
		Ok(())
	}

	/// waits for the last DMA of buffer `b`
	fn wait(&mut self, b: usize) -> Result<(), Error> {
		if let Some(e) = self.done[b].take() {
			e.synchronize().map_err(driver)?;
		}
		Ok(())
	}

	fn wait_all(&mut self) -> Result<(), Error> {
		(0..self.done.len()).try_for_each(|b| self.wait(b))
	}

	/// records the stream's position as buffer `b`'s last DMA
	fn record(&mut self, stream: &CudaStream, b: usize) -> Result<(), Error> {
		let e = stream.context().new_event(None).map_err(driver)?;
		e.record(stream).map_err(driver)?;
		self.done[b] = Some(e);
		Ok(())
	}

	/// buffer `b` as elements of `T`
	fn elements<T: Scalar>(&mut self, b: usize) -> Result<&mut [T], Error> {
		let bytes = self.buffers[b].as_mut_slice().map_err(driver)?;
		let whole = bytes.len() / size_of::<T>() * size_of::<T>();
		Ok(bytemuck::cast_slice_mut(&mut bytes[..whole]))
	}
}

/// the consecutive element ranges, in column-major order, of the chunks of a `len`-element matrix
fn chunks<T>(len: usize, chunk_bytes: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
	let per = (chunk_bytes / size_of::<T>()).max(1);
	(0..len.div_ceil(per)).map(move |c| c * per..((c + 1) * per).min(len))
}

/// the pieces of columns that elements `range` (column-major order, `m` rows) cover: `(column,
/// first row, rows)`
fn column_pieces(range: std::ops::Range<usize>, m: usize) -> impl Iterator<Item = (usize, usize, usize)> {
	let (first, last) = (range.start / m, (range.end - 1) / m);
	(first..=last).map(move |j| {
		let (lo, hi) = (range.start.max(j * m), range.end.min((j + 1) * m));
		(j, lo - j * m, hi - lo)
	})
}

/// the buffer's slices for the column pieces of `range`, in order
fn piece_slices<T>(mut buffer: &mut [T], range: std::ops::Range<usize>, m: usize) -> Vec<((usize, usize), &mut [T])> {
	column_pieces(range, m)
		.map(|(j, i, rows)| {
			let (piece, rest) = std::mem::take(&mut buffer).split_at_mut(rows);
			buffer = rest;
			((j, i), piece)
		})
		.collect()
}

/// elements `range` (column-major order) of `src`, conjugated where it is read conjugated, into
/// `dst`, column piece by column piece in parallel (a memcpy where the column is contiguous and
/// not conjugated)
fn gather<T: Scalar>(src: View<'_, T>, range: std::ops::Range<usize>, dst: &mut [T]) {
	let m = src.nrows();
	piece_slices(dst, range, m).into_par_iter().for_each(|((j, i), out)| {
		let col = src.mat.col(j).subrows(i, out.len());
		match col.try_as_col_major() {
			Some(c) if !src.conj => out.copy_from_slice(c.as_slice()),
			_ => out.iter_mut().enumerate().for_each(|(r, o)| *o = src.at(i + r, j)),
		}
	});
}

/// `src` (elements `range` in column-major order) into those elements of `dst`, column piece by
/// column piece in parallel
fn scatter<T: Scalar>(src: &[T], range: std::ops::Range<usize>, dst: MatMut<'_, T>) {
	let m = dst.nrows();
	let (first, last) = (range.start / m, (range.end - 1) / m);
	let mut offset = 0;
	let pieces: Vec<(usize, usize, usize, usize)> = column_pieces(range, m)
		.map(|(j, i, rows)| {
			offset += rows;
			(j, i, rows, offset - rows)
		})
		.collect();
	let cols = dst.subcols_mut(first, last + 1 - first);
	cols.par_col_iter_mut().zip(pieces).for_each(|(col, (_, i, rows, at))| {
		let mut piece = col.subrows_mut(i, rows);
		let values = &src[at..at + rows];
		match piece.rb_mut().try_as_col_major_mut() {
			Some(c) => c.as_slice_mut().copy_from_slice(values),
			None => piece.iter_mut().zip(values).for_each(|(o, x)| *o = *x),
		}
	});
}

impl Staging {
	/// a transfer of a `len`-element matrix in chunks of `chunk_bytes`: the buffers prepared
	/// for its chunks, then `copy` (nothing for an empty matrix); returns the host time it took
	fn transfer<T: Scalar>(
		&mut self,
		stream: &CudaStream,
		(len, chunk_bytes): (usize, usize),
		copy: impl FnOnce(&mut Self) -> Result<(), Error>,
	) -> Result<Duration, Error> {
		let start = Instant::now();
		if len > 0 {
			self.prepare(stream.context(), chunk_bytes.min(len * size_of::<T>()))?;
			copy(self)?;
		}
		Ok(start.elapsed())
	}

	/// `src` into the device matrix at `dst` (column-major, leading dimension = rows), chunk by
	/// chunk through these buffers of `chunk_bytes`; returns with the DMAs enqueued on `stream`
	/// (later work on it sees the data) and the host time it took
	pub(crate) fn upload<T: Scalar>(
		&mut self,
		stream: &CudaStream,
		src: View<'_, T>,
		dst: DevPtr<T>,
		chunk_bytes: usize,
	) -> Result<Duration, Error> {
		let len = src.nrows() * src.ncols();
		self.transfer::<T>(stream, (len, chunk_bytes), |staging| {
			for (c, range) in chunks::<T>(len, chunk_bytes).enumerate() {
				let b = c % BUFFERS;
				staging.wait(b)?;
				let n = range.len();
				let values = &mut staging.elements::<T>(b)?[..n];
				gather(src, range.clone(), values);
				let at = dst.add(range.start);
				point(Fault::Transfer, || format!("upload of {} bytes", n * size_of::<T>()))?;
				// SAFETY: the device range holds `n` elements of the destination; the buffer is not
				// written again before the event recorded after this copy has completed
				unsafe { cudarc::driver::result::memcpy_htod_async(at.addr(), &*values, stream.cu_stream()) }.map_err(driver)?;
				staging.record(stream, b)?;
			}
			Ok(())
		})
	}

	/// the device matrix at `src` (column-major, leading dimension = rows, after the work
	/// enqueued on the stream) into `dst`, chunk by chunk: the DMAs of the next chunks are in
	/// flight while the host copies one out (into `dst`'s pages once they are resident, where it
	/// lies in a fresh result: [`crate::fresh::before_writing`]); returns the host time it took
	pub(crate) fn download<T: Scalar>(
		&mut self,
		stream: &CudaStream,
		src: DevPtr<T>,
		mut dst: MatMut<'_, T>,
		chunk_bytes: usize,
	) -> Result<Duration, Error> {
		let len = dst.nrows() * dst.ncols();
		crate::fresh::before_writing(dst.rb_mut());
		self.transfer::<T>(stream, (len, chunk_bytes), |staging| {
			let ranges: Vec<_> = chunks::<T>(len, chunk_bytes).collect();
			let fetch = |staging: &mut Staging, c: usize| -> Result<(), Error> {
				let (b, range) = (c % BUFFERS, &ranges[c]);
				staging.wait(b)?;
				let values = &mut staging.elements::<T>(b)?[..range.len()];
				let at = src.add(range.start);
				point(Fault::Transfer, || format!("download of {} bytes", range.len() * size_of::<T>()))?;
				// SAFETY: the device range holds the chunk's elements; the host reads the buffer only
				// after the event recorded after this copy
				unsafe { cudarc::driver::result::memcpy_dtoh_async(values, at.addr(), stream.cu_stream()) }.map_err(driver)?;
				staging.record(stream, b)
			};
			for c in 0..ranges.len().min(BUFFERS) {
				fetch(staging, c)?;
			}
			for (c, range) in ranges.iter().enumerate() {
				let b = c % BUFFERS;
				staging.wait(b)?;
				scatter(&staging.elements::<T>(b)?[..range.len()], range.clone(), dst.rb_mut());
				if c + BUFFERS < ranges.len() {
					fetch(staging, c + BUFFERS)?;
				}
			}
			Ok(())
		})
	}
}

/// a tile of the output on its way back: its block of the destination, where it lies on the
/// device (column-major, leading dimension = its rows), and the compute stream's event after
/// which it is complete
struct Tile<'scope, T> {
	dst: MatMut<'scope, T>,
	src: DevPtr<T>,
	ready: CudaEvent,
}

/// output tiles downloaded while the GPU computes the next ones: a thread of its own drains them
/// into their blocks of the destination, through staging buffers of its own (the GPU's second
/// set, so that uploads can run meanwhile) on a copy stream of its own
pub(crate) struct Drain<'scope, T> {
	tiles: mpsc::Sender<Tile<'scope, T>>,
	/// per tile drained, in order: the copy stream's event after its DMAs
	done: mpsc::Receiver<CudaEvent>,
	thread: std::thread::ScopedJoinHandle<'scope, Result<(Duration, Staging), Error>>,
	/// the copy stream
	stream: Arc<CudaStream>,
	/// the stream the tiles are computed on
	compute: Arc<CudaStream>,
	/// the thread's error once it has stopped on one (then set before its channels close)
	failure: Arc<std::sync::Mutex<Option<Error>>>,
}

impl<'scope, T: Scalar> Drain<'scope, T> {
	/// a drain in `scope` of the tiles computed on `compute`, through `staging` in chunks of
	/// `chunk_bytes`
	pub fn start<'env>(
		scope: &'scope std::thread::Scope<'scope, 'env>,
		compute: &Arc<CudaStream>,
		mut staging: Staging,
		chunk_bytes: usize,
	) -> Result<Self, Error> {
		let copy = compute.context().new_stream().map_err(driver)?;
		let (tiles, incoming) = mpsc::channel::<Tile<'scope, T>>();
		let (finished, done) = mpsc::channel();
		let (stream, failure) = (copy.clone(), Arc::new(std::sync::Mutex::new(None)));
		let failed = failure.clone();
		let thread = scope.spawn(move || {
			let drained = (|| -> Result<Duration, Error> {
				copy.context().bind_to_thread().map_err(driver)?;
				let mut host = Duration::ZERO;
				for tile in &incoming {
					copy.wait(&tile.ready).map_err(driver)?;
					let (rows, cols) = (tile.dst.nrows(), tile.dst.ncols());
					let time = staging.download(&copy, tile.src, tile.dst, chunk_bytes)?;
					log::debug!("emugemm: {rows}x{cols} tile downloaded in {time:.2?}");
					host += time;
					let event = copy.context().new_event(None).map_err(driver)?;
					event.record(&copy).map_err(driver)?;
					// the receiver is gone only when the product failed, which reports its own error
					let _ = finished.send(event);
				}
				Ok(host)
			})();
			// kept before the channels close, so that the product's next send or wait, which then
			// fails, reports this error
			if let Err(e) = &drained {
				*failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.clone());
			}
			drained.map(|host| (host, staging))
		});
		Ok(Drain {
			tiles,
			done,
			thread,
			stream,
			compute: compute.clone(),
			failure,
		})
	}

	/// the block `dst`, at `src` on the device once the work enqueued on the compute stream so
	/// far is complete
	pub fn send(&self, dst: MatMut<'scope, T>, src: DevPtr<T>) -> Result<(), Error> {
		let ready = self.compute.context().new_event(None).map_err(driver)?;
		ready.record(&self.compute).map_err(driver)?;
		self.tiles.send(Tile { dst, src, ready }).map_err(|_| self.stopped())
	}

	/// the error the thread stopped on
	fn stopped(&self) -> Error {
		let failure = self.failure.lock().unwrap_or_else(|e| e.into_inner()).clone();
		failure.unwrap_or_else(|| Error::gpu("the download thread stopped"))
	}

	/// makes the compute stream wait until the DMAs of the next tile sent (in order) are complete,
	/// so that its device buffer can be written again; blocks until the thread has enqueued them
	pub fn reuse(&self) -> Result<(), Error> {
		let done = self.done.recv().map_err(|_| self.stopped())?;
		self.compute.wait(&done).map_err(driver)
	}

	/// waits for every tile sent; returns the thread's host time and the staging buffers
	pub fn finish(self) -> Result<(Duration, Staging), Error> {
		drop(self.tiles);
		let (host, staging) = self.thread.join().map_err(|_| Error::gpu("the download thread panicked"))??;
		self.stream.synchronize().map_err(driver)?;
		Ok((host, staging))
	}
}

/// the blocks of `dst` over the row spans `rows` and the column spans `cols` (each covering its
/// dimension in order), row span by row span
pub(crate) fn blocks<'a, T>(dst: MatMut<'a, T>, rows: &[Range<usize>], cols: &[Range<usize>]) -> Vec<MatMut<'a, T>> {
	let mut out = Vec::with_capacity(rows.len() * cols.len());
	let mut rest = dst;
	for r in rows {
		let (panel, below) = rest.split_at_row_mut(r.len());
		rest = below;
		let mut right = panel;
		for c in cols {
			let (block, after) = right.split_at_col_mut(c.len());
			right = after;
			out.push(block);
		}
	}
	out
}

/// enqueues `copies` DMAs of a whole buffer of `chunk_bytes` on `stream`, between the staging
/// buffers and `device` (`to_device`: host to device), for a measure of the transfer rates
#[cfg(feature = "bench")]
pub(crate) fn enqueue_copies(
	staging: &mut Staging,
	stream: &CudaStream,
	device: DevPtr<u8>,
	(chunk_bytes, copies): (usize, usize),
	to_device: bool,
) -> Result<(), Error> {
	staging.prepare(stream.context(), chunk_bytes)?;
	staging.wait_all()?;
	for c in 0..copies {
		let buffer = &mut staging.buffers[c % BUFFERS].as_mut_slice().map_err(driver)?[..chunk_bytes];
		// SAFETY: `device` and the buffer both hold `chunk_bytes`; the caller synchronises the
		// stream before the buffers are touched again
		unsafe {
			if to_device {
				cudarc::driver::result::memcpy_htod_async(device.addr(), &*buffer, stream.cu_stream())
			} else {
				cudarc::driver::result::memcpy_dtoh_async(buffer, device.addr(), stream.cu_stream())
			}
		}
		.map_err(driver)?;
	}
	Ok(())
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::testing::random_matrix;
	use faer::{Mat, c64};

	/// the chunks cover every element once, in order, none larger than the buffer (at least one
	/// element each)
	#[test]
	fn chunks_cover_the_matrix() {
		for (len, bytes) in [(1, 8), (1000, 8), (1000, 8000), (1000, 7999), (1000, 1), (12345, 4096)] {
			let ranges: Vec<_> = chunks::<f64>(len, bytes).collect();
			assert_eq!(ranges.first().unwrap().start, 0);
			assert_eq!(ranges.last().unwrap().end, len);
			assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
			assert!(ranges.iter().all(|r| !r.is_empty() && r.len() <= (bytes / 8).max(1)));
		}
	}

	/// the blocks of a grid of spans cover the matrix once, in order, each where its spans say
	#[test]
	fn blocks_tile_the_matrix() {
		let mut m = Mat::<f64>::zeros(7, 5);
		let (rows, cols) = ([0..3, 3..7], [0..2, 2..4, 4..5]);
		for (t, mut block) in blocks(m.as_mut(), &rows, &cols).into_iter().enumerate() {
			assert_eq!((block.nrows(), block.ncols()), (rows[t / 3].len(), cols[t % 3].len()));
			block.fill(t as f64);
		}
		assert!((0..7).all(|i| (0..5).all(|j| m[(i, j)] == (3 * usize::from(i >= 3) + usize::from(j >= 2) + usize::from(j >= 4)) as f64)));
	}

	/// gathering every chunk of a view and scattering it into a matrix rebuilds the view exactly,
	/// conjugated where it is read conjugated, for chunks that end inside columns and views of
	/// every layout
	#[test]
	fn gather_then_scatter_round_trips() {
		let big = random_matrix::<c64>(40, 30, 1.0, 1);
		let views = [
			big.as_ref().submatrix(0, 0, 17, 13),
			big.as_ref().submatrix(2, 3, 13, 17).transpose(),
			big.as_ref().submatrix(5, 1, 17, 13).reverse_rows(),
			big.as_ref().submatrix(1, 2, 17, 13).reverse_cols(),
		];
		for (view, conj) in views.into_iter().flat_map(|v| [(v, false), (v, true)]) {
			let expected = Mat::from_fn(
				view.nrows(),
				view.ncols(),
				|i, j| if conj { view[(i, j)].conj() } else { view[(i, j)] },
			);
			for bytes in [16, 16 * 5, 16 * 17, 16 * 40, 1 << 20] {
				let mut out = Mat::<c64>::zeros(view.nrows(), view.ncols());
				let mut buffer = vec![c64::new(0.0, 0.0); (bytes / 16).max(1)];
				for range in chunks::<c64>(view.nrows() * view.ncols(), bytes) {
					let values = &mut buffer[..range.len()];
					gather(View { mat: view, conj }, range.clone(), values);
					scatter(values, range, out.as_mut());
				}
				assert_eq!(out, expected, "chunks of {bytes} bytes, conjugated: {conj}");
			}
		}
	}
}
