//! the GPU a call runs on: the CUDA driver checked once (never through a panic), the caller's
//! stream asked whether it is being captured and which GPU it is of, the library's context for
//! that GPU alone (no other GPU is touched), and device memory read to the host in the stream's
//! order

use cudarc::driver::sys;
use emugemm::{Emulator, Stream};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// why a call cannot run on the GPU of its stream; nothing was read or written
pub(crate) type Unavailable = String;

/// the most device memory, in bytes, the C ABI's contexts may take for one product's workspace
/// (0: unset, 90% of the GPU's memory); read when a GPU's context is made
static MEMORY_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// bounds the device memory every product of the C ABI may take for its workspace, on every GPU,
/// to `bytes`; a product whose workspace does not fit this bound, or the memory the program leaves
/// free (counting what the library already keeps there), is refused with `OutOfMemory` before
/// anything is read or written. Call it before the process's first product: a GPU's context takes
/// the bound in force when it is made
///
/// # example
/// ```
/// // at most 4 GiB of workspace per product
/// emugemm_c::limit_device_memory(4 << 30);
/// ```
pub fn limit_device_memory(bytes: usize) {
	MEMORY_LIMIT.store(bytes, Ordering::Relaxed);
}

/// `f`'s result, a panic caught and told as `what` failing (cudarc's loader panics where the
/// driver or one of its functions is missing)
fn unpanicked<R>(what: &str, f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
	catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(format!("{what} panicked: the CUDA driver or a library lacks a function")))
}

/// `Ok` where the CUDA driver is loaded, initialised and sees a device; asked once per process
fn driver() -> Result<(), Unavailable> {
	static DRIVER: OnceLock<Result<(), Unavailable>> = OnceLock::new();
	DRIVER
		.get_or_init(|| {
			unpanicked("loading the CUDA driver", || {
				// SAFETY: only tries to load the library
				if !unsafe { sys::is_culib_present() } {
					return Err("no NVIDIA driver (libcuda) found".into());
				}
				let mut count = 0;
				// SAFETY: plain driver calls on a writable local
				unsafe {
					sys::cuInit(0).result().map_err(|e| format!("cuInit: {e:?}"))?;
					sys::cuDeviceGetCount(&mut count)
						.result()
						.map_err(|e| format!("cuDeviceGetCount: {e:?}"))?;
				}
				if count < 1 {
					Err("no CUDA device is visible".into())
				} else {
					Ok(())
				}
			})
		})
		.clone()
}

/// the refusal of a call on a stream being captured into a CUDA graph
const CAPTURED: &str = "the stream is being captured into a CUDA graph";

/// whether work enqueued on `stream` now is captured into a graph
fn capturing(stream: sys::CUstream) -> Result<bool, Unavailable> {
	let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
	// SAFETY: the caller's live stream, or a default one, and a writable local
	let asked = unsafe { sys::cuStreamIsCapturing(stream, &mut status) };
	match (asked, status) {
		(sys::CUresult::CUDA_SUCCESS, sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE) => Ok(false),
		(sys::CUresult::CUDA_SUCCESS, _) => Ok(true),
		(error, _) => Err(format!("the stream's capture status cannot be read: {error:?}")),
	}
}

/// the library's context for GPU `ordinal`, made on its first call there (and only there), with
/// the device memory bound in force then, unless `made_only`; a failure to make it is kept: every
/// later call on that GPU is refused alike, at once
fn emulator(ordinal: usize, made_only: bool) -> Result<&'static Emulator, Unavailable> {
	static CONTEXTS: Mutex<BTreeMap<usize, Result<&'static Emulator, Unavailable>>> = Mutex::new(BTreeMap::new());
	let mut contexts = CONTEXTS.lock().unwrap_or_else(|e| e.into_inner());
	if made_only && !contexts.contains_key(&ordinal) {
		return Err(format!(
			"{CAPTURED}, and the GPU's context is made only outside a capture (by a call on a stream that is not capturing)"
		));
	}
	contexts
		.entry(ordinal)
		.or_insert_with(|| {
			unpanicked("starting the GPU backend", || {
				let emu = Emulator::on_gpus(&[ordinal]).map_err(|e| e.to_string())?;
				let emu = match MEMORY_LIMIT.load(Ordering::Relaxed) {
					0 => emu,
					bytes => emu.with_device_memory(bytes),
				};
				Ok(&*Box::leak(Box::new(emu)))
			})
		})
		.clone()
}

/// the context a call on `stream` runs with: the driver there, the stream not capturing unless
/// the call is `recordable` (a single product or rank-k update with its scalars on the host, which
/// the library records into the graph being captured), its GPU's context ready; why not otherwise
/// (nothing read or written). A call that reads device memory on the host (scalars in device
/// memory, a batch's pointer arrays) waits for the stream, which capture forbids (and which ends
/// the caller's capture). A GPU's context is never made during a capture: making it waits for the
/// device, which would end the capture, and its failure would be kept
pub(crate) fn for_stream(stream: *mut c_void, recordable: bool) -> Result<&'static Emulator, Unavailable> {
	driver()?;
	unpanicked("asking for the stream's GPU", || {
		let stream = stream as sys::CUstream;
		let captured = capturing(stream)?;
		if captured && !recordable {
			return Err(CAPTURED.into());
		}
		// SAFETY: the caller's live stream, or a default one
		let ordinal = unsafe { Stream::from_raw(stream) }.ordinal().map_err(|e| e.to_string())?;
		emulator(ordinal, captured)
	})
}

/// copies each `(device address, host destination)` in `stream`'s order, after the work enqueued
/// on it so far, then waits for the stream: the destinations hold the device's values on return
/// (an empty destination reads nothing). The stream's context is current during the copies
///
/// # Safety
/// each address is readable device memory of the stream's GPU, as long as its destination
pub(crate) unsafe fn download<E: Copy, const N: usize>(
	what: &str,
	copies: [(u64, &mut [E]); N],
	stream: *mut c_void,
) -> Result<(), String> {
	let stream = stream as sys::CUstream;
	let mut ctx: sys::CUcontext = null_mut();
	let default = [0usize, 1, 2].contains(&(stream as usize));
	let mut status = Vec::with_capacity(N + 3);
	// SAFETY: the stream's own context is made current for the copies, and the previous one made
	// current again after them; `to` is writable for its length, `from` readable as long (the
	// caller's promise)
	unsafe {
		if !default {
			status.push(sys::cuStreamGetCtx(stream, &mut ctx));
			status.push(sys::cuCtxPushCurrent_v2(ctx));
		}
		if status.iter().all(|s| *s == sys::CUresult::CUDA_SUCCESS) {
			for (from, to) in copies.into_iter().filter(|(_, to)| !to.is_empty()) {
				status.push(sys::cuMemcpyDtoHAsync_v2(
					to.as_mut_ptr().cast::<c_void>(),
					from,
					size_of_val(to),
					stream,
				));
			}
			status.push(sys::cuStreamSynchronize(stream));
			if !default {
				status.push(sys::cuCtxPopCurrent_v2(&mut null_mut()));
			}
		}
	}
	match status.into_iter().find(|s| *s != sys::CUresult::CUDA_SUCCESS) {
		None => Ok(()),
		Some(bad) => Err(format!("reading {what} from device memory: {bad:?}")),
	}
}
