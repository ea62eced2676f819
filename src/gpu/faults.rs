//! failures injected where the driver could fail (feature `faults`, for tests): the Nth device
//! or page-locked allocation, kernel or cuBLAS launch, or transfer after [`fail_nth`] fails as
//! the driver's own failure of that call would, so that a test can interrupt a staged, tiled or
//! split product anywhere and check what the caller and the next call get; and what a leak would
//! grow. The counters are the process's: a test that injects faults runs alone (one test binary,
//! or a lock around its products)

use crate::Error;
pub use crate::gpu::runtime::fault_points::{Fault, count, fail_nth, reset};

/// what a leak would grow: the page-locked host bytes the crate holds, and the device memory in
/// use on GPU `ordinal` (by every process, as the driver counts it), after the work enqueued on the
/// process's first pipeline there
///
/// # example
/// ```no_run
/// let (pinned, device) = emugemm::faults::memory(0)?;
/// println!("{pinned} page-locked bytes, {device} device bytes in use");
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn memory(ordinal: usize) -> Result<(usize, usize), Error> {
	let gpu = crate::gpu::runtime::context::gpu_on(ordinal)?;
	gpu.stream.synchronize().map_err(crate::gpu::runtime::errors::driver)?;
	gpu.ctx.bind_to_thread().map_err(crate::gpu::runtime::errors::driver)?;
	let (free, total) = cudarc::driver::result::mem_get_info().map_err(crate::gpu::runtime::errors::driver)?;
	Ok((crate::gpu::runtime::pinned::held(), total - free))
}

/// frees the buffers that the pipelines of a context over `gpus` (as [`crate::Emulator::gpus`]
/// lists them) keep between products, so that the next product meets every allocation a first
/// product meets
///
/// # example
/// ```no_run
/// let emu = emugemm::Emulator::with_backend(emugemm::Backend::Gpu)?;
/// emugemm::faults::release_buffers(&emu.gpus())?;
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn release_buffers(gpus: &[usize]) -> Result<(), Error> {
	crate::gpu::runtime::context::pipelines(gpus.iter().copied())
		.into_iter()
		.try_for_each(|p| crate::gpu::runtime::context::gpu_at(p)?.release_kept())
}
