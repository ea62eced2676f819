//! the GPU backend (feature `cuda`): the Ozaki pipeline on NVIDIA GPUs, with fused wgmma products
//! on Hopper (`sm_90a`) and a portable path (`compute_80` PTX and cuBLASLt) from Ampere on
//!
//! split kernels write K-major int8 planes; our persistent wgmma kernels multiply them exactly and
//! reduce mod m in their epilogue (scheme II, real and 3M complex) or shift-reduce, scale and
//! write the output in theirs (scheme I, from interleaved digit planes); cuBLASLt multiplies the
//! unfused route's planes and long complex scheme II products (INT8 in, INT32 out, reduced by
//! separate kernels);
//! the reconstruction kernels mirror the CPU oracle's
//! floating-point steps operation for operation, so results equal
//! [`crate::Backend::CpuEmulation`] bit for bit

// the rooms, lowest first: each imports only from those above it (bench, faults and tests from
// any); the launch macros of `runtime` and `product` are in scope in the rooms declared after them
#[macro_use]
mod runtime;
#[macro_use]
mod product;
#[cfg(feature = "bench")]
pub mod bench;
#[cfg(feature = "faults")]
pub mod faults;
mod kernels;
mod orchestration;
mod schemes;
#[cfg(test)]
mod tests;
mod transfer;

#[cfg(feature = "bench")]
pub use bench::{baseline, profile};
pub(crate) use orchestration::batch::view_batch;
pub(crate) use orchestration::borrowed::view_product;
pub(crate) use orchestration::engine::{device_product, host_product};
pub use transfer::matrix::DeviceMatrix;

/// the name of the GPU products run on first
pub(crate) fn name() -> Result<String, crate::Error> {
	Ok(runtime::context::gpu()?.name.clone())
}

/// the cost model of GPU `ordinal` (see [`runtime::calibrate::model`])
pub(crate) fn model(ordinal: usize) -> Result<crate::datasheets::GpuModel, crate::Error> {
	runtime::calibrate::model(&*runtime::context::gpu_at((ordinal, 0))?)
}

/// `Ok` when the GPU backend can run here, otherwise why not
pub(crate) fn probe() -> Result<(), String> {
	probe_on(0)
}

/// `Ok` when GPU `ordinal` can run the backend, otherwise why not
pub(crate) fn probe_on(ordinal: usize) -> Result<(), String> {
	runtime::context::gpu_on(ordinal).map(|_| ()).map_err(|e| e.to_string())
}

/// lets the GPUs `ordinals` read each other's memory directly, where they can
pub(crate) fn connect(ordinals: &[usize]) -> Result<(), crate::Error> {
	runtime::context::connect(ordinals)
}
