//! a counter in device memory that one stream raises and others wait on (the driver's stream
//! memory operations): a caller's stream waits there for a product whose work another thread has
//! yet to enqueue, without any host wait

use crate::Error;
use crate::gpu::runtime::errors::driver;
use cudarc::driver::{CudaContext, result, sys};
use std::sync::Arc;

/// a 32-bit counter in device memory, raised in order (see [`Fence::raise`]); it lives as long as
/// the process
pub(crate) struct Fence {
	word: sys::CUdeviceptr,
}

impl Fence {
	/// a counter at 0 on `ctx`'s GPU, checked with a wait and a raise on a stream of its own: a
	/// driver that does not run stream memory operations gives an error here, before any caller
	/// depends on one
	pub fn new(ctx: &Arc<CudaContext>) -> Result<Self, Error> {
		ctx.bind_to_thread().map_err(driver)?;
		// SAFETY: a 4-byte allocation of the context current on this thread, zeroed before use
		let word = unsafe { result::malloc_sync(4) }.map_err(driver)?;
		// SAFETY: the 4 bytes just allocated
		unsafe { result::memset_d8_sync(word, 0, 4) }.map_err(driver)?;
		let fence = Fence { word };
		let stream = ctx.new_stream().map_err(driver)?;
		fence.raise(stream.cu_stream(), 0)?;
		fence.wait(stream.cu_stream(), 0)?;
		stream.synchronize().map_err(driver)?;
		Ok(fence)
	}

	/// `stream` waits until the counter has reached `value`: the difference read as a signed
	/// 32-bit number is not negative (so the counter may wrap)
	pub fn wait(&self, stream: sys::CUstream, value: u32) -> Result<(), Error> {
		let geq = sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32;
		// SAFETY: the counter is device memory of the stream's context, live for the process
		unsafe { sys::cuStreamWaitValue32_v2(stream, self.word, value, geq) }
			.result()
			.map_err(driver)
	}

	/// `stream` sets the counter to `value` once the work enqueued on it before has completed (its
	/// writes visible first)
	pub fn raise(&self, stream: sys::CUstream, value: u32) -> Result<(), Error> {
		let ordered = sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
		// SAFETY: as in `wait`
		unsafe { sys::cuStreamWriteValue32_v2(stream, self.word, value, ordered) }
			.result()
			.map_err(driver)
	}
}
