//! the GPU backend (feature `cuda`): NVIDIA Hopper (sm_90a), the Ozaki pipeline
//!
//! split kernels write K-major int8 planes; our persistent wgmma kernels multiply them exactly and
//! reduce mod m in their epilogue (scheme II, real and 3M complex) or shift-reduce, scale and
//! write the output in theirs (scheme I, from interleaved digit planes); cuBLASLt multiplies the
//! unfused route's planes and long complex scheme II products (INT8 in, INT32 out, reduced by
//! separate kernels);
//! the reconstruction kernels mirror the CPU oracle's
//! floating-point steps operation for operation, so results equal
//! [`crate::Backend::CpuEmulation`] bit for bit

#[macro_use]
mod launch;
mod balance;
#[cfg(feature = "bench")]
pub mod baseline;
mod blas;
mod bound;
mod calibrate;
mod chassis;
mod crt;
mod cubin;
mod device;
mod digits;
mod engine;
mod errors;
#[cfg_attr(not(feature = "faults"), allow(dead_code))]
mod fault_points;
#[cfg(feature = "faults")]
pub mod faults;
mod footprint;
#[cfg(feature = "bench")]
mod fp64_emulation;
mod job;
mod kept;
mod matrix;
mod meeting;
mod native;
mod panels;
mod parts;
mod pinned;
mod pipeline;
#[cfg(feature = "bench")]
pub mod profile;
mod ptr;
mod residues;
mod rows;
mod scheme1_fused;
mod scheme_one;
mod scheme_two;
mod slot;
mod staging;
mod stats;
#[cfg(test)]
mod tests;
mod tiled;
mod tma;
mod wgmma_config;

pub(crate) use engine::{device_product, host_product};
pub use matrix::DeviceMatrix;

/// the name of the GPU products run on first
pub(crate) fn name() -> Result<String, crate::Error> {
	Ok(device::gpu()?.name.clone())
}

/// the cost model of GPU `ordinal` (see [`calibrate::model`])
pub(crate) fn model(ordinal: usize) -> Result<crate::devices::GpuModel, crate::Error> {
	calibrate::model(&*device::gpu_at((ordinal, 0))?)
}

/// `Ok` when the GPU backend can run here, otherwise why not
pub(crate) fn probe() -> Result<(), String> {
	probe_on(0)
}

/// `Ok` when GPU `ordinal` can run the backend, otherwise why not
pub(crate) fn probe_on(ordinal: usize) -> Result<(), String> {
	device::gpu_on(ordinal).map(|_| ()).map_err(|e| e.to_string())
}

/// lets the GPUs `ordinals` read each other's memory directly, where they can
pub(crate) fn connect(ordinals: &[usize]) -> Result<(), crate::Error> {
	device::connect(ordinals)
}
