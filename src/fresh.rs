//! fresh results: the matrices a product returns, allocated without being written, their pages
//! made resident while the product computes
//!
//! memory that was never written is mapped by the OS on first touch, one page fault per page on
//! the touching thread. Zeroed by one thread and then written by the threads that copy a GPU's
//! result, a fresh 8192 x 8192 `f64` result takes about seven times as long as the product on a
//! 16-core host. Here the allocation asks for huge pages (2 MiB a fault, where the OS offers
//! them), and a product on the GPU claims it ([`claim`]): while the GPU computes, and the host's
//! cores are idle, threads write its pages in address order, and the copies of the result into
//! it wait for the pages they write ([`before_writing`]). A product that does not claim it
//! (computed on the host's cores, in tiles) faults its pages in as it writes them

#[cfg(any(feature = "faer", feature = "cuda"))]
use crate::{Error, Scalar};
#[cfg(any(feature = "faer", feature = "cuda"))]
use faer::{Mat, MatMut};
use std::mem::MaybeUninit;

/// the `m x n` matrix that `product` writes whole into the view it is given (every entry, none
/// read first: a product with [`crate::Accum::Replace`]); the matrix is not returned where
/// `product` fails
///
/// # example
/// ```ignore
/// let c = fresh::mat::<f64>(2, 2, |mut dst| { dst.fill(1.0); Ok(()) })?;
/// ```
#[cfg(any(feature = "faer", feature = "cuda"))]
pub(crate) fn mat<T: Scalar>(m: usize, n: usize, product: impl FnOnce(MatMut<'_, T>) -> Result<(), Error>) -> Result<Mat<T>, Error> {
	let mut c = Mat::<T>::with_capacity(m, n);
	let (ptr, ld) = (c.as_ptr_mut(), c.col_stride());
	let len = ld as usize * n;
	// SAFETY: the allocation holds `ld` elements per column for `n` columns
	let entries = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), len) };
	while_resident(entries, || {
		// SAFETY: the view covers the allocation's first `m` rows of each of its `n` columns,
		// which `product` writes before any read
		product(unsafe { MatMut::from_raw_parts_mut(ptr, m, n, 1, ld) })
	})?;
	// SAFETY: within the capacity, and `product` wrote every entry
	unsafe { c.set_dims(m, n) };
	Ok(c)
}

/// `product` of the entries `fresh`, which nothing has written and which `product` writes whole
/// before it reads any, with their pages made resident meanwhile where `product` claims them (see
/// the module's documentation). In builds with debug assertions the entries are filled with NaN
/// first, so that an entry `product` leaves unwritten shows in its result
pub(crate) fn while_resident<T, R>(fresh: &mut [MaybeUninit<T>], product: impl FnOnce() -> R) -> R {
	let bytes = std::mem::size_of_val(fresh);
	let start = fresh.as_mut_ptr() as usize;
	if cfg!(debug_assertions) {
		// SAFETY: `fresh` holds `bytes` bytes; all-ones bytes are a NaN in every element type
		unsafe { std::ptr::write_bytes(fresh.as_mut_ptr().cast::<u8>(), 0xff, bytes) };
		return product();
	}
	#[cfg(feature = "cuda")]
	let _registered = (bytes > claims::RESIDENT_ABOVE).then(|| claims::Registered::new(start..start + bytes));
	let _ = start;
	product()
}

/// the fresh results a product on the GPU claims (see the module's documentation)
#[cfg(feature = "cuda")]
mod claims {
	use faer::MatMut;
	use std::ops::Range;
	use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
	use std::sync::{Arc, Condvar, Mutex};

	/// results up to this size are left to fault in as they are written: their faults cost less than
	/// the threads that would take them
	pub(super) const RESIDENT_ABOVE: usize = 4 << 20;

	/// the pages are written in pieces of this size, in address order (the order in which a result
	/// is copied back), taken by the threads in turn
	const PIECE: usize = 8 << 20;

	/// a page: one write maps it
	const PAGE: usize = 4096;

	/// huge pages: the OS maps (and clears) 2 MiB at a fault, where it offers them for memory that
	/// asks (transparent huge pages in `madvise` mode)
	const HUGE: usize = 2 << 20;

	/// a fresh result in the registry while its product runs; taken out, its threads stopped and
	/// ended, when the product returns or unwinds (before the memory can be freed)
	pub(super) struct Registered(Arc<Region>);

	impl Registered {
		/// the fresh result at addresses `range`, advised huge pages and registered
		pub(super) fn new(range: Range<usize>) -> Self {
			let region = Arc::new(Region::new(range));
			region.advise_huge_pages();
			registry().push(region.clone());
			Registered(region)
		}
	}

	impl Drop for Registered {
		fn drop(&mut self) {
			registry().retain(|r| !Arc::ptr_eq(r, &self.0));
			self.0.finish();
		}
	}

	/// the fresh results whose products run now
	fn registry() -> std::sync::MutexGuard<'static, Vec<Arc<Region>>> {
		static REGIONS: Mutex<Vec<Arc<Region>>> = Mutex::new(Vec::new());
		REGIONS.lock().unwrap_or_else(|e| e.into_inner())
	}

	/// a fresh result's memory, and the writing of its pages
	struct Region {
		/// its addresses
		range: Range<usize>,
		/// whether a product has claimed it, and so started the threads that write its pages
		claimed: AtomicBool,
		/// the next piece a thread takes
		next: AtomicUsize,
		/// per piece: whether its pages are written
		done: Vec<AtomicBool>,
		/// the threads still writing pages; set to stop them
		writers: Mutex<usize>,
		stop: AtomicBool,
		/// signalled when a piece is done and when a thread ends
		changed: Condvar,
	}

	impl Region {
		fn new(range: Range<usize>) -> Self {
			let pieces = range.len().div_ceil(PIECE);
			Region {
				range,
				claimed: AtomicBool::new(false),
				next: AtomicUsize::new(0),
				done: (0..pieces).map(|_| AtomicBool::new(false)).collect(),
				writers: Mutex::new(0),
				stop: AtomicBool::new(false),
				changed: Condvar::new(),
			}
		}

		/// asks the OS for huge pages on the region's whole 2 MiB spans (advice that changes no
		/// contents, and that an OS without huge pages refuses)
		fn advise_huge_pages(&self) {
			let (first, end) = (self.range.start.next_multiple_of(HUGE), self.range.end / HUGE * HUGE);
			#[cfg(target_os = "linux")]
			if end > first {
				// SAFETY: advice on whole pages of the caller's allocation
				unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
			}
			let _ = (first, end);
		}

		/// the pieces that addresses `range` touch
		fn pieces(&self, range: &Range<usize>) -> Range<usize> {
			let offset = |address: usize| address.clamp(self.range.start, self.range.end) - self.range.start;
			offset(range.start) / PIECE..offset(range.end).div_ceil(PIECE)
		}

		/// a thread's work: pieces in turn, each page written (with zero: nothing reads an entry
		/// before the product writes it), until none is left or the region is given back
		fn write_pages(&self) {
			while !self.stop.load(Ordering::Relaxed) {
				let piece = self.next.fetch_add(1, Ordering::Relaxed);
				if piece >= self.done.len() {
					break;
				}
				let start = self.range.start + piece * PIECE;
				let end = (start + PIECE).min(self.range.end);
				let mut page = start;
				while page < end {
					// SAFETY: a byte of the region, which no one else writes before this piece is marked
					// done ([`before_writing`] waits for it), and which the allocation outlives (the
					// region is finished, and this thread ended, before `mat` returns)
					unsafe { (page as *mut u8).write_volatile(0) };
					page = (page / PAGE + 1) * PAGE;
				}
				self.done[piece].store(true, Ordering::Release);
				let _writers = self.writers.lock().unwrap_or_else(|e| e.into_inner());
				self.changed.notify_all();
			}
			let mut writers = self.writers.lock().unwrap_or_else(|e| e.into_inner());
			*writers -= 1;
			self.changed.notify_all();
		}

		/// waits until the pages of the pieces `pieces` are written, or the threads have stopped
		fn wait(&self, pieces: Range<usize>) {
			let mut writers = self.writers.lock().unwrap_or_else(|e| e.into_inner());
			while *writers > 0 && !self.done[pieces.clone()].iter().all(|d| d.load(Ordering::Acquire)) {
				writers = self.changed.wait(writers).unwrap_or_else(|e| e.into_inner());
			}
		}

		/// stops the threads and waits for them to end
		fn finish(&self) {
			self.stop.store(true, Ordering::Relaxed);
			let mut writers = self.writers.lock().unwrap_or_else(|e| e.into_inner());
			while *writers > 0 {
				writers = self.changed.wait(writers).unwrap_or_else(|e| e.into_inner());
			}
		}
	}

	/// the fresh result `dst` lies in, if any and unclaimed, claimed by the product that writes it:
	/// threads start writing its pages now, in address order, and every copy into it must wait for
	/// its pages first ([`before_writing`]). A product claims its fresh result where the host's cores
	/// are idle until it writes the result (a product on the GPU, once its operands are uploaded)
	pub(crate) fn claim<T>(dst: MatMut<'_, T>) -> bool {
		let Some(region) = region_of(&span(dst)) else {
			return false;
		};
		if region.claimed.swap(true, Ordering::AcqRel) {
			return false;
		}
		// all cores but two, which the product's own host work and its copies keep
		let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
		let threads = cores.saturating_sub(2).max(1).min(region.done.len());
		*region.writers.lock().unwrap_or_else(|e| e.into_inner()) = threads;
		for _ in 0..threads {
			let region = region.clone();
			std::thread::spawn(move || region.write_pages());
		}
		true
	}

	/// waits until the pages of `dst` are written, where it lies in a fresh result that a product has
	/// claimed ([`claim`]); every copy into a claimed result calls it before it writes
	pub(crate) fn before_writing<T>(dst: MatMut<'_, T>) {
		let span = span(dst);
		if let Some(region) = region_of(&span).filter(|r| r.claimed.load(Ordering::Acquire)) {
			region.wait(region.pieces(&span));
		}
	}

	/// the addresses from `dst`'s first entry to past its last (empty for an empty view)
	pub(super) fn span<T>(dst: MatMut<'_, T>) -> Range<usize> {
		let (m, n) = (dst.nrows(), dst.ncols());
		if m == 0 || n == 0 {
			return 0..0;
		}
		let start = dst.as_ptr() as usize;
		let last = |count: usize, stride: isize| (count - 1) as isize * stride * size_of::<T>() as isize;
		let (a, b) = (last(m, dst.row_stride()), last(n, dst.col_stride()));
		let lo = start as isize + a.min(0) + b.min(0);
		let hi = start as isize + a.max(0) + b.max(0) + size_of::<T>() as isize;
		lo as usize..hi as usize
	}

	/// the registered fresh result that holds the non-empty addresses `span`
	fn region_of(span: &Range<usize>) -> Option<Arc<Region>> {
		if span.is_empty() {
			return None;
		}
		registry()
			.iter()
			.find(|r| r.range.start <= span.start && span.end <= r.range.end)
			.cloned()
	}
}

#[cfg(feature = "cuda")]
pub(crate) use claims::{before_writing, claim};

#[cfg(test)]
mod tests {
	use super::*;

	/// a fresh result of every size holds what the product wrote, in its shape
	#[test]
	fn fresh_matrices_hold_what_was_written() {
		for (m, n) in [(0, 0), (3, 0), (5, 7), (1000, 700), (1031, 1029)] {
			let c = mat::<f64>(m, n, |mut dst| {
				dst.as_mut().fill(0.0);
				(0..m).for_each(|i| (0..n).for_each(|j| dst[(i, j)] = (i * n + j) as f64));
				Ok(())
			})
			.unwrap();
			assert_eq!((c.nrows(), c.ncols()), (m, n));
			assert!((0..m).all(|i| (0..n).all(|j| c[(i, j)] == (i * n + j) as f64)));
		}
	}

	/// a claimed result's pages are written while the product runs, and the product's own writes,
	/// each made after [`before_writing`], are what the result holds, in blocks written in
	/// any order
	#[test]
	#[cfg(feature = "cuda")]
	fn a_claimed_result_holds_the_products_writes() {
		let (m, n) = (2048, 1500);
		let c = mat::<f64>(m, n, |mut dst| {
			let claimed = claim(dst.as_mut());
			assert_eq!(claimed, !cfg!(debug_assertions), "claimed once, where the pages are made resident");
			assert!(!claim(dst.as_mut()), "a result is claimed once");
			for j in (0..n).step_by(100).rev() {
				let mut block = dst.as_mut().subcols_mut(j, 100.min(n - j));
				before_writing(block.as_mut());
				let cols = block.ncols();
				(0..cols).for_each(|c| (0..m).for_each(|i| block[(i, c)] = (i + (j + c) * m) as f64));
			}
			Ok(())
		})
		.unwrap();
		assert!((0..n).all(|j| (0..m).all(|i| c[(i, j)] == (i + j * m) as f64)));
	}

	/// a failed product returns its error, not the matrix, claimed or not
	#[test]
	fn a_failed_product_returns_no_matrix() {
		for (n, claimed) in [(4, false), (1500, false), (1500, true)] {
			let r = mat::<f32>(n, n, |dst| {
				if claimed {
					#[cfg(feature = "cuda")]
					claim(dst);
					#[cfg(not(feature = "cuda"))]
					let _ = dst;
				}
				Err(Error::Gpu { reason: "failed".into() })
			});
			assert!(matches!(r, Err(Error::Gpu { .. })), "{r:?}");
		}
	}

	/// the addresses of views of every layout
	#[test]
	#[cfg(feature = "cuda")]
	fn spans_cover_the_views() {
		let mut a = Mat::<f64>::zeros(10, 6);
		let base = a.as_ptr() as usize;
		let ld = a.col_stride() as usize;
		assert_eq!(claims::span(a.as_mut()), base..base + 8 * (5 * ld + 10));
		assert_eq!(claims::span(a.as_mut().transpose_mut()), base..base + 8 * (5 * ld + 10));
		assert_eq!(claims::span(a.as_mut().reverse_rows_mut()), base..base + 8 * (5 * ld + 10));
		assert_eq!(
			claims::span(a.as_mut().submatrix_mut(2, 1, 3, 2)),
			base + 8 * (ld + 2)..base + 8 * (2 * ld + 5)
		);
		assert!(claims::span(a.as_mut().subcols_mut(0, 0)).is_empty());
	}

	/// with debug assertions, an entry the product leaves unwritten reads as NaN
	#[test]
	#[cfg(debug_assertions)]
	fn unwritten_entries_show_as_nan() {
		let c = mat::<f64>(1100, 1100, |mut dst| {
			dst.as_mut().subrows_mut(0, 1099).fill(1.0);
			Ok(())
		})
		.unwrap();
		assert!(c.row(1099).iter().all(|x| x.is_nan()) && c[(0, 0)] == 1.0);
	}
}
