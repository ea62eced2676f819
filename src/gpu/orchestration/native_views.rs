//! a product on device views that its shape decides native: cuBLAS's GEMM on the caller's stream
//! itself, on the views as they lie, as the caller's own call would have run it (no workspace, no
//! copy, no event, no statistics, nothing read back: the host waits for nothing)

use crate::cost::NativeArithmetic;
use crate::device_view::Borrowed;
use crate::gpu::kernels::native::FIXED_UP_BELOW;
use crate::gpu::runtime::blas::{NativeMath, caller_gemm};
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::ptr::DevPtr;
use crate::policy::{PolicyInput, native_arithmetic};
use crate::request::Routine;
use crate::settings::Settings;
use crate::{Error, Scalar};
use cudarc::cublas::sys::cublasOperation_t as Op;
use cudarc::driver::{result, sys};

use super::borrowed::ViewRequest;

/// cuBLAS's op that reads `view` as the product does, where there is one: as stored, transposed,
/// or (complex) transposed and conjugated; a complex view read conjugated alone has none
fn op<T: Scalar>(view: &Borrowed<T>) -> Option<Op> {
	match (view.transposed, view.conjugated && T::IS_COMPLEX) {
		(false, false) => Some(Op::CUBLAS_OP_N),
		(true, false) => Some(Op::CUBLAS_OP_T),
		(true, true) => Some(Op::CUBLAS_OP_C),
		(false, true) => None,
	}
}

/// the ops of a product that runs as one cuBLAS GEMM on the caller's stream: a GEMM (not a rank-k
/// update) that the shape decides native ([`PolicyInput::native_from_shape`]) at cuBLAS's own or
/// TF32 arithmetic, not empty, its destination read as stored, its operands readable by cuBLAS's
/// ops, every address aligned to its element, and, for a complex product, above the size whose
/// non-finite entries the engine fixes up
pub(crate) fn direct<T: Scalar>(dst: &Borrowed<T>, request: &ViewRequest<T>, settings: &Settings) -> Option<(Op, Op)> {
	let shape = request.shape;
	let work = shape.m * shape.n * shape.k;
	let aligned = [dst.addr, request.lhs.addr, request.rhs.addr]
		.iter()
		.all(|a| a.is_multiple_of(size_of::<T>() as u64));
	let eligible = matches!(request.routine, Routine::Gemm)
		&& !shape.is_empty()
		&& aligned
		&& dst.plain()
		&& (!T::IS_COMPLEX || work > FIXED_UP_BELOW)
		&& native_arithmetic(request.precision, T::MANTISSA_BITS) != NativeArithmetic::Wide
		&& PolicyInput::in_context::<T>(shape, settings).native_from_shape(request.precision, 1);
	eligible.then(|| Some((op(&request.lhs)?, op(&request.rhs)?))).flatten()
}

/// `dst = alpha op(lhs) op(rhs) + beta dst` by cuBLAS on `caller` (`beta = 0`: `dst` unread), with
/// the ops [`direct`] found
pub(crate) fn on_caller<T: Scalar>(
	gpu: &Gpu,
	(dst, request, beta): (&Borrowed<T>, &ViewRequest<T>, T),
	ops: (Op, Op),
	caller: sys::CUstream,
) -> Result<(), Error> {
	beside_the_pipeline(gpu, caller, || gemm(gpu, (dst, request, beta), ops, caller))
}

/// the same GEMM as [`on_caller`]'s, on `gpu`'s own stream (a replay lane's, for a product
/// recorded into a graph: the same cuBLAS call, so the same bits)
pub(crate) fn on_pipeline<T: Scalar>(
	gpu: &Gpu,
	(dst, request, beta): (&Borrowed<T>, &ViewRequest<T>, T),
	ops: (Op, Op),
) -> Result<(), Error> {
	gemm(gpu, (dst, request, beta), ops, gpu.stream.cu_stream())
}

/// `dst = alpha op(lhs) op(rhs) + beta dst` by `gpu`'s cuBLAS handle on `stream`, at the
/// arithmetic the precision asks of the native product
fn gemm<T: Scalar>(
	gpu: &Gpu,
	(dst, request, beta): (&Borrowed<T>, &ViewRequest<T>, T),
	ops: (Op, Op),
	stream: sys::CUstream,
) -> Result<(), Error> {
	let math = match native_arithmetic(request.precision, T::MANTISSA_BITS) {
		NativeArithmetic::Tf32 => NativeMath::Tf32,
		_ => NativeMath::Exact,
	};
	let matrix = |v: &Borrowed<T>| (DevPtr::<T>::new(v.addr), v.ld());
	let matrices = (matrix(&request.lhs), matrix(&request.rhs), matrix(dst));
	caller_gemm(&gpu.handles, stream, (request.shape, ops), matrices, (request.alpha, beta), math)
}

/// `work` enqueued on `caller` with the pipeline's cuBLAS handle, ordered after what the
/// pipeline's stream holds and before what it is given next (events, no host wait): the handle's
/// workspace is then used by one stream at a time
fn beside_the_pipeline(gpu: &Gpu, caller: sys::CUstream, work: impl FnOnce() -> Result<(), Error>) -> Result<(), Error> {
	let flags = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
	let before = gpu.stream.record_event(flags).map_err(driver)?;
	// SAFETY: `caller` is a live stream of the GPU's primary context, current on this thread, and
	// the event is that context's
	unsafe { result::stream::wait_event(caller, before.cu_event(), sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }.map_err(driver)?;
	let done = work();
	let after = gpu.ctx.new_event(flags).map_err(driver)?;
	// SAFETY: as above
	unsafe { result::event::record(after.cu_event(), caller) }.map_err(driver)?;
	gpu.stream.wait(&after).map_err(driver)?;
	done
}
