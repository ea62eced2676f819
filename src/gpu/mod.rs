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

#[cfg(feature = "cuda")]
#[macro_use]
mod launch;
#[cfg(feature = "cuda")]
mod balance;
#[cfg(feature = "bench")]
pub mod baseline;
#[cfg(feature = "cuda")]
mod blas;
#[cfg(feature = "cuda")]
mod bound;
#[cfg(feature = "cuda")]
mod chassis;
#[cfg(feature = "cuda")]
mod crt;
#[cfg(feature = "cuda")]
mod cubin;
#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
mod engine;
#[cfg(feature = "cuda")]
mod errors;
#[cfg(feature = "cuda")]
mod footprint;
#[cfg(feature = "bench")]
mod fp64_emulation;
#[cfg(feature = "cuda")]
mod job;
#[cfg(feature = "cuda")]
mod kept;
#[cfg(feature = "cuda")]
mod matrix;
#[cfg(feature = "cuda")]
mod meeting;
#[cfg(feature = "cuda")]
mod native;
#[cfg(feature = "cuda")]
mod panels;
#[cfg(feature = "cuda")]
mod parts;
#[cfg(feature = "cuda")]
mod pipeline;
#[cfg(feature = "bench")]
pub mod profile;
#[cfg(feature = "cuda")]
mod ptr;
#[cfg(feature = "cuda")]
mod residues;
#[cfg(feature = "cuda")]
mod rows;
#[cfg(feature = "cuda")]
mod scheme1_fused;
#[cfg(feature = "cuda")]
mod scheme_one;
#[cfg(feature = "cuda")]
mod scheme_two;
#[cfg(feature = "cuda")]
mod slot;
#[cfg(feature = "cuda")]
mod staging;
#[cfg(feature = "cuda")]
mod stats;
#[cfg(all(test, feature = "cuda"))]
mod tests;
#[cfg(feature = "cuda")]
mod tiled;
#[cfg(feature = "cuda")]
mod tma;
#[cfg(feature = "cuda")]
mod wgmma_config;

#[cfg(feature = "cuda")]
pub(crate) use engine::{device_product, host_product};
#[cfg(feature = "cuda")]
pub use matrix::DeviceMatrix;

/// the name of the GPU products run on first
#[cfg(feature = "cuda")]
pub(crate) fn name() -> Result<String, crate::Error> {
	Ok(device::gpu()?.name.clone())
}

/// `Ok` when the GPU backend can run here, otherwise why not
#[cfg(feature = "cuda")]
pub(crate) fn probe() -> Result<(), String> {
	probe_on(0)
}

/// `Ok` when GPU `ordinal` can run the backend, otherwise why not
#[cfg(feature = "cuda")]
pub(crate) fn probe_on(ordinal: usize) -> Result<(), String> {
	device::gpu_on(ordinal).map(|_| ()).map_err(|e| e.to_string())
}

/// lets the GPUs `ordinals` read each other's memory directly, where they can
#[cfg(feature = "cuda")]
pub(crate) fn connect(ordinals: &[usize]) -> Result<(), crate::Error> {
	device::connect(ordinals)
}

/// without the `cuda` feature there are no GPUs to connect
#[cfg(not(feature = "cuda"))]
pub(crate) fn connect(_ordinals: &[usize]) -> Result<(), crate::Error> {
	Ok(())
}

/// `Ok` when the GPU backend can run here, otherwise why not
#[cfg(not(feature = "cuda"))]
pub(crate) fn probe() -> Result<(), String> {
	Err("built without the `cuda` feature (enable it with `--features cuda`)".into())
}

/// `Ok` when GPU `ordinal` can run the backend, otherwise why not
#[cfg(not(feature = "cuda"))]
pub(crate) fn probe_on(_ordinal: usize) -> Result<(), String> {
	probe()
}
