//! the calling thread's current CUDA context, kept across a call: cudarc makes a pipeline's
//! context current on the thread that uses it, and a caller on another GPU (a CUDA runtime
//! program after `cudaSetDevice(1)`, an MPI rank) must find its own context current afterwards,
//! and have its default stream resolved in it

use crate::Error;
use cudarc::driver::{CudaStream, sys};
use std::ptr::null_mut;

/// the context current on this thread when the value was made, made current again when it drops
/// (none where the driver is missing or not initialised: nothing was current then)
pub(crate) struct Kept(Option<sys::CUcontext>);

impl Kept {
	pub(crate) fn now() -> Self {
		// SAFETY: only tries to dlopen libcuda; cudarc's calls panic without it
		if !unsafe { sys::is_culib_present() } {
			return Kept(None);
		}
		let mut ctx = null_mut();
		// SAFETY: `ctx` is written by the driver; an uninitialised driver answers an error
		let status = unsafe { sys::cuCtxGetCurrent(&mut ctx) };
		Kept((status == sys::CUresult::CUDA_SUCCESS).then_some(ctx))
	}
}

impl Drop for Kept {
	fn drop(&mut self) {
		if let Some(ctx) = self.0 {
			// SAFETY: the context was current on this thread; one destroyed since makes the call
			// fail, which leaves the thread as the call left it
			let _ = unsafe { sys::cuCtxSetCurrent(ctx) };
		}
	}
}

/// `work` with the calling thread's current context as it was before, whatever `work` binds; a
/// cudarc `stream`'s context is made current first, so that its default stream (a null handle)
/// means that context's
pub(crate) fn keeping_current<R>(stream: Option<&CudaStream>, work: impl FnOnce() -> Result<R, Error>) -> Result<R, Error> {
	let _kept = Kept::now();
	if let Some(stream) = stream {
		stream.context().bind_to_thread().map_err(crate::gpu::runtime::errors::driver)?;
	}
	work()
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn work_runs_where_no_driver_or_context_is_current() {
		assert_eq!(keeping_current(None, || Ok(7)).unwrap(), 7);
		assert!(keeping_current(None, || Err::<(), _>(Error::gpu("refused"))).is_err());
	}
}
