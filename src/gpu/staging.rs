//! host matrices to and from the GPU in chunks, through a few reused page-locked buffers: the
//! host's copy of one chunk (parallel, from or into any faer layout) overlaps the DMA of the
//! chunks around it, and a result comes back straight into its destination
//!
//! a device matrix is column-major with leading dimension = rows, so that a chunk, a run of
//! consecutive elements in column-major order, is one contiguous range on the device: one DMA a
//! chunk, whatever the host layout

use super::device::{Gpu, driver};
use crate::{Error, Scalar};
use cudarc::driver::{CudaEvent, PinnedHostSlice};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef};
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// the page-locked buffers a transfer cycles through: while the host fills (or drains) one, the
/// DMA engines work on the others
const BUFFERS: usize = 4;

/// the staging buffers of one GPU, grown or shrunk to the chunk size a transfer asks for, and the
/// event of the last DMA that read or wrote each
#[derive(Default)]
pub(crate) struct Staging {
	buffers: Vec<PinnedHostSlice<u8>>,
	/// per buffer: recorded after its last DMA
	done: Vec<Option<CudaEvent>>,
	chunk: usize,
}

impl Staging {
	/// `BUFFERS` buffers of `chunk` bytes (reallocated when the size changes)
	fn prepare(&mut self, gpu: &Gpu, chunk: usize) -> Result<(), Error> {
		if self.chunk == chunk && self.buffers.len() == BUFFERS {
			return Ok(());
		}
		self.wait_all()?;
		self.buffers.clear();
		for _ in 0..BUFFERS {
			// SAFETY: plain page-locked host memory, written before it is read
			let buffer = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(chunk, 0) }.map_err(|e| match driver(e) {
				Error::OutOfMemory { .. } => Error::OutOfMemory {
					what: format!("{BUFFERS} x {chunk} bytes of page-locked host memory"),
				},
				other => other,
			})?;
			self.buffers.push(buffer);
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
	fn record(&mut self, gpu: &Gpu, b: usize) -> Result<(), Error> {
		let e = gpu.ctx.new_event(None).map_err(driver)?;
		e.record(&gpu.stream).map_err(driver)?;
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

/// elements `range` (column-major order) of `src` into `dst`, column piece by column piece in
/// parallel (a memcpy where the column is contiguous)
fn gather<T: Scalar>(src: MatRef<'_, T>, range: std::ops::Range<usize>, dst: &mut [T]) {
	let m = src.nrows();
	piece_slices(dst, range, m).into_par_iter().for_each(|((j, i), out)| {
		let col = src.col(j).subrows(i, out.len());
		match col.try_as_col_major() {
			Some(c) => out.copy_from_slice(c.as_slice()),
			None => out.iter_mut().zip(col.iter()).for_each(|(o, x)| *o = *x),
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

/// `src` into the device matrix at `dst` (column-major, leading dimension = rows), chunk by
/// chunk through the staging buffers of `chunk_bytes`; returns with the DMAs enqueued on the
/// stream (later work on it sees the data) and the host time it took
pub(crate) fn upload<T: Scalar>(gpu: &Gpu, src: MatRef<'_, T>, dst: u64, chunk_bytes: usize) -> Result<Duration, Error> {
	let start = Instant::now();
	let len = src.nrows() * src.ncols();
	if len == 0 {
		return Ok(start.elapsed());
	}
	let mut staging = gpu.staging.borrow_mut();
	staging.prepare(gpu, chunk_bytes)?;
	for (c, range) in chunks::<T>(len, chunk_bytes).enumerate() {
		let b = c % BUFFERS;
		staging.wait(b)?;
		let n = range.len();
		let values = &mut staging.elements::<T>(b)?[..n];
		gather(src, range.clone(), values);
		let at = dst + (range.start * size_of::<T>()) as u64;
		// SAFETY: the device range holds `n` elements of the destination; the buffer is not
		// written again before the event recorded after this copy has completed
		unsafe { cudarc::driver::result::memcpy_htod_async(at, &*values, gpu.stream.cu_stream()) }.map_err(driver)?;
		staging.record(gpu, b)?;
	}
	Ok(start.elapsed())
}

/// the device matrix at `src` (column-major, leading dimension = rows, after the work enqueued
/// on the stream) into `dst`, chunk by chunk: the DMAs of the next chunks are in flight while
/// the host copies one out; returns the host time it took
pub(crate) fn download<T: Scalar>(gpu: &Gpu, src: u64, mut dst: MatMut<'_, T>, chunk_bytes: usize) -> Result<Duration, Error> {
	let start = Instant::now();
	let len = dst.nrows() * dst.ncols();
	if len == 0 {
		return Ok(start.elapsed());
	}
	let mut staging = gpu.staging.borrow_mut();
	staging.prepare(gpu, chunk_bytes)?;
	let ranges: Vec<_> = chunks::<T>(len, chunk_bytes).collect();
	let fetch = |staging: &mut Staging, c: usize| -> Result<(), Error> {
		let (b, range) = (c % BUFFERS, &ranges[c]);
		staging.wait(b)?;
		let values = &mut staging.elements::<T>(b)?[..range.len()];
		let at = src + (range.start * size_of::<T>()) as u64;
		// SAFETY: the device range holds the chunk's elements; the host reads the buffer only
		// after the event recorded after this copy
		unsafe { cudarc::driver::result::memcpy_dtoh_async(values, at, gpu.stream.cu_stream()) }.map_err(driver)?;
		staging.record(gpu, b)
	};
	for c in 0..ranges.len().min(BUFFERS) {
		fetch(&mut staging, c)?;
	}
	for (c, range) in ranges.iter().enumerate() {
		let b = c % BUFFERS;
		staging.wait(b)?;
		scatter(&staging.elements::<T>(b)?[..range.len()], range.clone(), dst.rb_mut());
		if c + BUFFERS < ranges.len() {
			fetch(&mut staging, c + BUFFERS)?;
		}
	}
	Ok(start.elapsed())
}

/// the page-locked transfer rates through the staging buffers of `chunk_bytes`, bytes per second:
/// host to device, device to host (`copies` DMAs of a whole buffer each way, by device events)
pub(crate) fn bandwidth(gpu: &Gpu, chunk_bytes: usize, copies: usize) -> Result<(f64, f64), Error> {
	let mut staging = gpu.staging.borrow_mut();
	staging.prepare(gpu, chunk_bytes)?;
	staging.wait_all()?;
	let device = gpu.scratch(43, chunk_bytes)?;
	let stream = gpu.stream.cu_stream();
	let mut rate = |to_device: bool| -> Result<f64, Error> {
		let t = gpu.timed(|| {
			for c in 0..copies {
				let buffer = staging.buffers[c % BUFFERS].as_mut_slice().map_err(driver)?;
				// SAFETY: the device slot and the buffer both hold `chunk_bytes`; the stream is
				// synchronised before the buffers are touched again
				unsafe {
					if to_device {
						cudarc::driver::result::memcpy_htod_async(device, &*buffer, stream)
					} else {
						cudarc::driver::result::memcpy_dtoh_async(buffer, device, stream)
					}
				}
				.map_err(driver)?;
			}
			Ok(())
		})?;
		Ok((copies * chunk_bytes) as f64 / t.as_secs_f64())
	};
	Ok((rate(true)?, rate(false)?))
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

	/// gathering every chunk of a view and scattering it into a matrix rebuilds the view exactly,
	/// for chunks that end inside columns and views of every layout
	#[test]
	fn gather_then_scatter_round_trips() {
		let big = random_matrix::<c64>(40, 30, 1.0, 1);
		let views = [
			big.as_ref().submatrix(0, 0, 17, 13),
			big.as_ref().submatrix(2, 3, 13, 17).transpose(),
			big.as_ref().submatrix(5, 1, 17, 13).reverse_rows(),
			big.as_ref().submatrix(1, 2, 17, 13).reverse_cols(),
		];
		for view in views {
			for bytes in [16, 16 * 5, 16 * 17, 16 * 40, 1 << 20] {
				let mut out = Mat::<c64>::zeros(view.nrows(), view.ncols());
				let mut buffer = vec![c64::new(0.0, 0.0); (bytes / 16).max(1)];
				for range in chunks::<c64>(view.nrows() * view.ncols(), bytes) {
					let values = &mut buffer[..range.len()];
					gather(view, range.clone(), values);
					scatter(values, range, out.as_mut());
				}
				assert_eq!(out.as_ref(), view, "chunks of {bytes} bytes");
			}
		}
	}
}
