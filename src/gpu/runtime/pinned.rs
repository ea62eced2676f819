//! page-locked host buffers, counted: the bytes the process holds, for tests that check that no
//! product leaks any

use crate::Error;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fault_points::{Fault, point};
use cudarc::driver::{CudaContext, DriverError, PinnedHostSlice};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// the page-locked bytes the crate holds now
static HELD: AtomicUsize = AtomicUsize::new(0);

/// a page-locked host buffer of bytes, freed when dropped
pub(crate) struct Pinned(PinnedHostSlice<u8>);

impl Pinned {
	/// `bytes` (at least one) of page-locked host memory on `ctx`'s device; what runs out is
	/// named `what` in the error
	pub fn new(ctx: &Arc<CudaContext>, bytes: usize, what: impl Fn() -> String) -> Result<Self, Error> {
		point(Fault::Allocation, &what)?;
		// SAFETY: plain page-locked host memory, written before it is read
		let buffer = unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes.max(1), 0) }.map_err(|e| match driver(e) {
			Error::OutOfMemory { .. } => Error::OutOfMemory { what: what() },
			other => other,
		})?;
		HELD.fetch_add(buffer.len(), Ordering::SeqCst);
		Ok(Pinned(buffer))
	}

	pub fn len(&self) -> usize {
		self.0.len()
	}

	/// the buffer's bytes (after the work that used them last has completed)
	pub fn as_mut_slice(&mut self) -> Result<&mut [u8], DriverError> {
		self.0.as_mut_slice()
	}
}

impl Drop for Pinned {
	fn drop(&mut self) {
		HELD.fetch_sub(self.0.len(), Ordering::SeqCst);
	}
}

/// the page-locked host bytes the crate's contexts hold now (staging buffers and the small
/// buffer of the statistics)
#[cfg_attr(not(feature = "faults"), allow(dead_code))]
pub(crate) fn held() -> usize {
	HELD.load(Ordering::SeqCst)
}
