//! the front door of products on device memory the crate does not own (feature `cuda`): cudarc
//! buffers or raw device pointers, on a caller's stream

use super::Emulator;
use crate::request::{Request, Routine};
use crate::{Accum, DeviceView, DeviceViewMut, Error, PendingReport, Precision, Scalar, Stream};
use faer::linalg::matmul::triangular::BlockStructure;

impl Emulator {
	/// `c = alpha op(a) op(b) + beta c` at `precision` on device memory the crate does not own
	/// (feature `cuda`, [`crate::Backend::Gpu`]), with cuBLAS's semantics: `beta = 0` does not
	/// read `c`; `op` is each view's (as stored, [`DeviceView::transpose`],
	/// [`DeviceView::adjoint`], [`DeviceView::conjugate`]). The plans and the bits of emulated
	/// products are those of [`Emulator::matmul_device`] on the same matrices, and the entries are
	/// written as [`Emulator::matmul`] writes them after `c = beta c` (each entry `beta * c`
	/// rounded in `T`). A product that its shape decides native ([`Emulator::native_from_shape`])
	/// is cuBLAS's GEMM on `stream` itself, on the views as they lie, as the caller's own call
	/// would run it (but a complex one of at most 2^20 multiply-adds, or one with an operand read
	/// conjugated and not transposed, which the engine computes natively on its own stream)
	///
	/// The product runs on the GPU of `stream` (its primary context; for a null raw stream, the
	/// calling thread's current context's GPU), in core, ordered after the work enqueued on
	/// `stream` before the call and before the work enqueued after it. The calling thread's
	/// current CUDA context is as it was before the call.
	/// - A product native from its shape is enqueued on `stream` by the call itself, which waits
	///   for nothing.
	/// - Any other, by default, is computed on a pipeline of the crate whose stream waits for an
	///   event recorded on `stream`; the call waits on the host for the operands' statistics
	///   where the plan depends on them (a target precision such as [`Precision::F64`],
	///   non-finite values), so for the work queued before it, and returns once the plan is
	///   chosen and the product enqueued, `stream` waiting for an event after it.
	/// - With [`Emulator::with_queued_views`] on, it is handed to one of the GPU's lanes (a
	///   pipeline with a stream, a workspace and a host thread of its own; a stream's products go
	///   to one lane, new streams to the lanes in turn) and the call returns at once, as cuBLAS's
	///   does: `stream` waits, on the GPU, until the lane has enqueued the product and the GPU has
	///   run it. The lane's thread does what the call does by default, so plan and bits are the
	///   same. Lanes exist only in a process started with `CUDA_MODULE_LOADING=EAGER` (a kernel
	///   loaded lazily may wait for `stream`, which waits for the lane) on a driver with stream
	///   memory operations; otherwise the call waits as by default. On an H100 the first queued
	///   product had not returned after 45 s with eager loading either (cause not found): leave
	///   queuing off.
	/// - On a stream being captured into a CUDA graph (any capture mode), the product is refused
	///   with [`Error::Placement`] unless [`Emulator::with_graph_recording`] is on. With it on, the
	///   product is recorded into the graph and the call returns at once: at each replay a replay lane of the GPU (a
	///   pipeline and a host thread of its own) runs what an uncaptured call runs, on the data the
	///   replay finds, and the graph goes on once the product is computed. Each replay thus decides
	///   its own plan: the same plan and bits as the call uncaptured on that data (a product native
	///   from its shape, the same cuBLAS GEMM, on the lane's stream). See docs/INTEROP.md for what
	///   a replay costs. A [`cudarc`] buffer's stream waits for the events of its earlier use, which
	///   a capture forbids: capture streams of a context whose event tracking is off.
	/// - The [`PendingReport`] returned (also the thread's and context's last report) is ready once
	///   the plan is chosen and the product enqueued; its phase times are zero. A recorded
	///   product's report is that of its last replay ([`PendingReport::replays`] counts them;
	///   [`Error::NotReplayed`] before the first). A failure after a queued call returned (a GPU
	///   fault) is given there and logged; the checks the call makes first (shapes, alignment, the
	///   workspace against the memory free) are its own errors, with nothing enqueued or recorded.
	/// - The buffers must stay allocated until `stream` has passed the product, as for any
	///   kernel enqueued on it (cudarc buffers record their use on `stream` after the call).
	///
	/// A left operand read transposed or conjugated, and a complex right operand read conjugated,
	/// is first copied compact in the crate's workspace, within the context's device memory
	/// ([`Emulator::with_device_memory`]); a right operand read transposed alone is read where it
	/// lies. A product whose workspace does not fit the context's device memory, or the memory the
	/// program leaves free, is an [`Error::OutOfMemory`] returned before anything is enqueued (the
	/// destination as it was), not computed in tiles. Addresses must be aligned to the element's
	/// size (16 bytes for complex `f64`), otherwise [`Error::InvalidLayout`].
	///
	/// # example
	/// ```no_run
	/// use cudarc::driver::CudaContext;
	/// use emugemm::{DeviceView, DeviceViewMut, Emulator, Precision};
	/// let stream = CudaContext::new(0)?.new_stream()?;
	/// let a = stream.clone_htod(&vec![1.0f64; 64 * 64])?;
	/// let mut c = stream.alloc_zeros::<f64>(64 * 64)?;
	/// let emu = Emulator::global();
	/// let (av, cv) = (DeviceView::new(&a, (64, 64), 64)?, DeviceViewMut::new(&mut c, (64, 64), 64)?);
	/// // c = a aᵀ, on `stream`: the call returns once the product is queued
	/// let pending = emu.gemm_on_stream(cv, 1.0, (av, av.transpose()), 0.0, (Precision::F64, (&stream).into()))?;
	/// // the plan, once chosen (the product may still be running)
	/// println!("{}", pending.wait()?);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn gemm_on_stream<T: Scalar>(
		&self,
		mut c: DeviceViewMut<'_, T>,
		alpha: T,
		(a, b): (DeviceView<'_, T>, DeviceView<'_, T>),
		beta: T,
		(precision, stream): (Precision, Stream<'_>),
	) -> Result<PendingReport, Error> {
		let _context = self.device_door()?;
		let caller = stream.cudarc();
		// the guards of cudarc buffers record their use on `stream` when they drop, after the
		// product is enqueued
		let (lhs, _lhs_use) = a.resolve(caller);
		let (rhs, _rhs_use) = b.resolve(caller);
		let (dst, _dst_use) = c.resolve(caller);
		let accum = accumulation(beta);
		let request = self.request(accum, (lhs, rhs), alpha, (self.precision_for(precision), self.par));
		let dims = [lhs.dims(), rhs.dims(), dst.dims()];
		self.run_queued::<T>(dims, request.precision, || crate::gpu::view_product(dst, request, beta, stream))
	}

	/// the rank-k update `c = alpha op(a) op(a)ᴴ + beta c` (`op(a)ᵀ` for real types: cuBLAS's
	/// SYRK and HERK) at `precision` on device memory the crate does not own, on the entries of
	/// `c` that `structure` names (faer's, as in [`Emulator::rank_k_update`]; cuBLAS's `uplo` is
	/// [`BlockStructure::TriangularLower`] or [`BlockStructure::TriangularUpper`]); the others are
	/// neither read nor written. `alpha` and `beta` are real, and for complex types the written
	/// diagonal is real. `beta = 0` does not read `c`.
	///
	/// The entries written are those [`Emulator::gemm_on_stream`] writes for
	/// `(c, alpha, (a, a.adjoint()), beta)`, bit for bit, with the same plan and report. `a`
	/// serves as both operands: its statistics and inner exponent ranges are computed once, the
	/// bound's magnitude products on the lower triangle alone (the same bound), a real update's
	/// scheme II split once; the fused scheme II products compute only the output tiles that
	/// hold a named entry, about half of a square product's tiles, and the reconstruction skips
	/// the columns' runs off the triangle. The update runs in a workspace of the whole output
	/// within the context's device memory (a complex `aᴴ` is read from a compact copy, a real
	/// `aᵀ` from `a`), and waits and
	/// orders its work as [`Emulator::gemm_on_stream`] does
	///
	/// # example
	/// ```no_run
	/// use cudarc::driver::CudaContext;
	/// use emugemm::{DeviceView, DeviceViewMut, Emulator, Precision};
	/// use faer::linalg::matmul::triangular::BlockStructure;
	/// let stream = CudaContext::new(0)?.new_stream()?;
	/// let a = stream.clone_htod(&vec![1.0f64; 64 * 32])?; // 64 x 32
	/// let mut c = stream.alloc_zeros::<f64>(64 * 64)?;
	/// let emu = Emulator::global();
	/// let (av, cv) = (DeviceView::new(&a, (64, 32), 64)?, DeviceViewMut::new(&mut c, (64, 64), 64)?);
	/// // the lower triangle of c = a aᵀ, on `stream`
	/// emu.rank_k_on_stream((cv, BlockStructure::TriangularLower), 1.0, av, 0.0, (Precision::F64, (&stream).into()))?;
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn rank_k_on_stream<T: Scalar>(
		&self,
		(mut c, structure): (DeviceViewMut<'_, T>, BlockStructure),
		alpha: T::RealPart,
		a: DeviceView<'_, T>,
		beta: T::RealPart,
		(precision, stream): (Precision, Stream<'_>),
	) -> Result<PendingReport, Error> {
		let _context = self.device_door()?;
		let caller = stream.cudarc();
		let (lhs, _lhs_use) = a.resolve(caller);
		let (rhs, _rhs_use) = a.adjoint().resolve(caller);
		let (dst, _dst_use) = c.resolve(caller);
		let (alpha, beta) = (T::from_parts(alpha.re(), 0.0), T::from_parts(beta.re(), 0.0));
		let accum = accumulation(beta);
		let request = Request {
			routine: Routine::RankK(structure),
			..self.request(accum, (lhs, rhs), alpha, (self.precision_for(precision), self.par))
		};
		let dims = [lhs.dims(), rhs.dims(), dst.dims()];
		self.run_queued::<T>(dims, request.precision, || crate::gpu::view_product(dst, request, beta, stream))
	}
}

impl Emulator {
	/// what every door on device views checks first, and the calling thread's current context,
	/// which the door holds until the cudarc buffers' guards have dropped (they bind their own
	/// context when they record their use)
	pub(super) fn device_door(&self) -> Result<crate::gpu::KeptContext, Error> {
		self.require_gpu()?;
		Ok(crate::gpu::current_context())
	}
}

/// cuBLAS's reading of `beta`: 0 replaces the destination unread, any other value adds to it
pub(super) fn accumulation<T: Scalar>(beta: T) -> Accum {
	if beta == T::from_parts(0.0, 0.0) {
		Accum::Replace
	} else {
		Accum::Add
	}
}
