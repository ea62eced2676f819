//! a counter in device memory that one stream raises and others wait on (the driver's stream
//! memory operations): a caller's stream waits there for a product whose work another thread has
//! yet to enqueue, without any host wait; and the words that graphs wait on for a product
//! recorded there ([`Word`])

use crate::Error;
use crate::gpu::runtime::context::MAX_GPUS;
use crate::gpu::runtime::errors::driver;
use cudarc::driver::{CudaContext, result, sys};
use std::sync::{Arc, Mutex};

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
		// SAFETY: a 4-byte allocation of the context current on this thread
		let word = unsafe { result::malloc_sync(4) }.map_err(driver)?;
		let fence = Fence { word };
		// zeroed on a stream of its own, not the legacy default stream, which would wait for the
		// program's blocking streams (and end a capture in progress on one)
		let stream = ctx.new_stream().map_err(driver)?;
		// SAFETY: the 4 bytes just allocated, before any use
		unsafe { result::memset_d8_async(word, 0, 4, stream.cu_stream()) }.map_err(driver)?;
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
		// SAFETY: as in `wait`
		unsafe { written(stream, self.word, value) }
	}
}

/// `stream` sets the 32-bit word at `word` to `value` once the work enqueued on it before has
/// completed (its writes visible first)
///
/// # Safety
/// `word` is device memory of the stream's context, live until the write has run
unsafe fn written(stream: sys::CUstream, word: sys::CUdeviceptr, value: u32) -> Result<(), Error> {
	let ordered = sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
	// SAFETY: the caller's promise
	unsafe { sys::cuStreamWriteValue32_v2(stream, word, value, ordered) }
		.result()
		.map_err(driver)
}

/// a 32-bit word of device memory that a graph waits on (see
/// [`crate::gpu::runtime::capture::Capture::host_step`]): taken when a product is recorded, given
/// back for a later recording when the graph is destroyed (dropping it makes no CUDA call, as the
/// driver's thread that drops a graph's objects requires), never freed
pub(crate) struct Word {
	address: sys::CUdeviceptr,
	ordinal: usize,
}

/// the words given back, by GPU
static SPARE: [Mutex<Vec<sys::CUdeviceptr>>; MAX_GPUS] = [const { Mutex::new(Vec::new()) }; MAX_GPUS];

impl Word {
	/// a word of GPU `ordinal` (whose context is `ctx`): one given back, or a new one; its value
	/// is whatever it was (a graph clears it before each wait)
	pub fn take(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<Self, Error> {
		let spare = SPARE
			.get(ordinal)
			.ok_or_else(|| Error::gpu(format!("GPU {ordinal}: this crate drives ordinals below {MAX_GPUS}")))?;
		if let Some(address) = spare.lock().unwrap_or_else(|e| e.into_inner()).pop() {
			return Ok(Word { address, ordinal });
		}
		ctx.bind_to_thread().map_err(driver)?;
		// SAFETY: a 4-byte allocation of the context current on this thread
		let address = unsafe { result::malloc_sync(4) }.map_err(driver)?;
		Ok(Word { address, ordinal })
	}

	/// its address
	pub fn address(&self) -> sys::CUdeviceptr {
		self.address
	}

	/// `stream` sets the word to `value` once the work enqueued on it before has completed
	pub fn raise(&self, stream: sys::CUstream, value: u32) -> Result<(), Error> {
		// SAFETY: the word is device memory of its GPU's primary context, never freed
		unsafe { written(stream, self.address, value) }
	}
}

impl Drop for Word {
	fn drop(&mut self) {
		SPARE[self.ordinal].lock().unwrap_or_else(|e| e.into_inner()).push(self.address);
	}
}
