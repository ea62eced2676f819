//! fresh results: the matrices a product returns, allocated without being written, and made
//! resident by other threads while the product computes
//!
//! memory that was never written is mapped by the OS on first touch, one page fault per page on
//! the touching thread. Written by the threads that copy a GPU's result back, a fresh 8192 x 8192
//! `f64` result would take about seven times as long as the product on a 16-core host; made
//! resident meanwhile, in huge pages where the OS offers them, it takes no time of its own

use crate::{Error, Scalar};
use faer::{Mat, MatMut};
use std::mem::MaybeUninit;

/// results up to this size are left to fault in as they are written: their faults cost less than
/// the threads that would take them
const RESIDENT_ABOVE: usize = 4 << 20;

/// the `m x n` matrix that `product` writes whole into the view it is given (every entry, none
/// read first: a product with [`crate::Accum::Replace`]); the matrix is not returned where
/// `product` fails
///
/// # example
/// ```ignore
/// let c = fresh::mat::<f64>(2, 2, |dst| { dst.fill(1.0); Ok(()) })?;
/// ```
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

/// `product` of the entries `fresh`, which nothing has written, while other threads make their
/// pages resident (where the OS can do so without writing them: Linux 5.14 and later; elsewhere
/// the entries' writers fault the pages in). In builds with debug assertions the entries are
/// filled with NaN first, so that an entry `product` leaves unwritten shows in its result
pub(crate) fn while_resident<T, R>(fresh: &mut [MaybeUninit<T>], product: impl FnOnce() -> R) -> R {
	let bytes = std::mem::size_of_val(fresh);
	let start = fresh.as_mut_ptr() as usize;
	if cfg!(debug_assertions) {
		// SAFETY: `fresh` holds `bytes` bytes; all-ones bytes are a NaN in every element type
		unsafe { std::ptr::write_bytes(fresh.as_mut_ptr().cast::<u8>(), 0xff, bytes) };
		return product();
	}
	if bytes <= RESIDENT_ABOVE {
		return product();
	}
	pages::resident_while(start..start + bytes, product)
}

#[cfg(target_os = "linux")]
mod pages {
	//! the pages of an address range made resident by `madvise`, which maps them as a write
	//! would without writing them: the product's own writes may come first, before or during
	use std::ops::Range;
	use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

	/// the pages are made resident in pieces of this size, in address order (the order in
	/// which a result is written back), taken by the threads in turn
	const PIECE: usize = 8 << 20;

	/// huge pages: the OS maps (and clears) 2 MiB at a fault, where it offers them for memory
	/// that asks (transparent huge pages in `madvise` mode)
	const HUGE: usize = 2 << 20;

	/// the threads that make pages resident: clearing pages is bound by the host's memory
	/// bandwidth, which a few threads fill, and the product's own transfers need cores too
	const THREADS: usize = 8;

	/// `product`, while threads make the pages of `range` resident
	pub fn resident_while<R>(range: Range<usize>, product: impl FnOnce() -> R) -> R {
		let page = 4096;
		let (first, end) = (range.start.next_multiple_of(page), range.end / page * page);
		let (huge_first, huge_end) = (range.start.next_multiple_of(HUGE), range.end / HUGE * HUGE);
		if huge_end > huge_first {
			// SAFETY: advice on pages of the caller's allocation; it changes no contents. Where the
			// OS offers no huge pages it refuses, and the pages stay small
			unsafe { libc::madvise(huge_first as *mut libc::c_void, huge_end - huge_first, libc::MADV_HUGEPAGE) };
		}
		let pieces = (end.saturating_sub(first)).div_ceil(PIECE);
		let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
		let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(THREADS).min(pieces);
		std::thread::scope(|scope| {
			for _ in 0..threads {
				scope.spawn(|| {
					while !stop.load(Ordering::Relaxed) {
						let piece = next.fetch_add(1, Ordering::Relaxed);
						if piece >= pieces {
							break;
						}
						let at = first + piece * PIECE;
						// SAFETY: pages of the caller's allocation, mapped writable as a write would map
						// them, their contents unchanged (zero where never written)
						let done = unsafe { libc::madvise(at as *mut libc::c_void, PIECE.min(end - at), libc::MADV_POPULATE_WRITE) };
						if done != 0 {
							// an OS without the advice (before Linux 5.14), or memory it cannot map:
							// the product's writers fault the pages in themselves
							stop.store(true, Ordering::Relaxed);
						}
					}
				});
			}
			let result = product();
			stop.store(true, Ordering::Relaxed);
			result
		})
	}
}

#[cfg(not(target_os = "linux"))]
mod pages {
	//! no way to make pages resident without writing them: the product's writers fault them in
	use std::ops::Range;

	pub fn resident_while<R>(_: Range<usize>, product: impl FnOnce() -> R) -> R {
		product()
	}
}

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

	/// a failed product returns its error, not the matrix
	#[test]
	fn a_failed_product_returns_no_matrix() {
		for n in [4, 1500] {
			let r = mat::<f32>(n, n, |_| Err(Error::gpu("failed")));
			assert!(matches!(r, Err(Error::Gpu { .. })), "{r:?}");
		}
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
