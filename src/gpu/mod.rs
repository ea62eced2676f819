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
pub use transfer::matrix::DeviceMatrix;

use crate::device_view::Borrowed;
use crate::native::HostRequest;
use crate::{Error, Report, Scalar, Stream};
use faer::MatMut;
use orchestration::borrowed::ViewRequest;
use orchestration::engine::DeviceRequest;
pub(crate) use runtime::current::Kept as KeptContext;
use runtime::current::keeping_current;

// every door below leaves the calling thread's current CUDA context as it found it

/// the calling thread's current CUDA context, made current again when the value drops: a front
/// door holds it across what it drops after the call too (cudarc's buffer guards bind their
/// context when they record their use)
pub(crate) fn current_context() -> KeptContext {
	runtime::current::Kept::now()
}

// the doors' view of the GPU a stream belongs to, kept here beside the other doors so that the
// views' module needs nothing of the GPU's
impl Stream<'_> {
	/// the ordinal of the stream's GPU, asked of the CUDA driver alone: no context is made on any
	/// GPU; [`Error::Placement`] for a default stream on a thread with no current context (a
	/// product on a stream checks besides that its context is its GPU's primary context)
	///
	/// # example
	/// ```no_run
	/// let stream = cudarc::driver::CudaContext::new(1)?.new_stream()?;
	/// assert_eq!(emugemm::Stream::from(&stream).ordinal()?, 1);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn ordinal(&self) -> Result<usize, Error> {
		orchestration::borrowed::stream_device(self.raw()).map(|(_, ordinal)| ordinal)
	}
}

/// a product on device views on `stream` (see [`orchestration::borrowed::view_product`])
pub(crate) fn view_product<T: Scalar>(
	dst: Borrowed<T>,
	request: ViewRequest<T>,
	beta: T,
	stream: Stream<'_>,
) -> Result<crate::PendingReport, Error> {
	keeping_current(stream.cudarc(), || {
		orchestration::borrowed::view_product(dst, request, beta, stream.raw())
	})
}

/// a batch of products on device views on `stream` (see [`orchestration::batch::view_batch`])
pub(crate) fn view_batch<T: Scalar>(products: &[(Borrowed<T>, ViewRequest<T>)], beta: T, stream: Stream<'_>) -> Result<Vec<Report>, Error> {
	keeping_current(stream.cudarc(), || orchestration::batch::view_batch(products, beta, stream.raw()))
}

/// a product of [`DeviceMatrix`]es (see [`orchestration::engine::device_product`])
pub(crate) fn device_product<T: Scalar>(dst: &mut DeviceMatrix<T>, request: DeviceRequest<'_, T>) -> Result<Report, Error> {
	keeping_current(None, || orchestration::engine::device_product(dst, request))
}

/// a product of host matrices (see [`orchestration::engine::host_product`])
pub(crate) fn host_product<T: Scalar>(dst: MatMut<'_, T>, request: HostRequest<'_, T>) -> Result<Report, Error> {
	keeping_current(None, || orchestration::engine::host_product(dst, request))
}

/// the name of the GPU products run on first
pub(crate) fn name() -> Result<String, Error> {
	keeping_current(None, || Ok(runtime::context::gpu()?.name.clone()))
}

/// the cost model of GPU `ordinal` (see [`runtime::calibrate::model`])
pub(crate) fn model(ordinal: usize) -> Result<crate::datasheets::GpuModel, Error> {
	keeping_current(None, || runtime::calibrate::model(&*runtime::context::gpu_at((ordinal, 0))?))
}

/// `Ok` when the GPU backend can run here, otherwise why not
pub(crate) fn probe() -> Result<(), String> {
	probe_on(0)
}

/// `Ok` when GPU `ordinal` can run the backend, otherwise why not
pub(crate) fn probe_on(ordinal: usize) -> Result<(), String> {
	keeping_current(None, || runtime::context::gpu_on(ordinal).map(|_| ())).map_err(|e| e.to_string())
}

/// lets the GPUs `ordinals` read each other's memory directly, where they can
pub(crate) fn connect(ordinals: &[usize]) -> Result<(), Error> {
	keeping_current(None, || runtime::context::connect(ordinals))
}
