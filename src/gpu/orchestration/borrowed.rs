//! products on device memory the crate does not own ([`crate::DeviceView`]), on a caller's
//! stream: the GPU is the stream's; a product its shape decides native is cuBLAS's GEMM on the
//! caller's stream itself (`native_views`); otherwise the pipeline's stream waits for the caller's
//! work before the product and the caller's stream waits for the product after it; the host waits
//! only where the plan needs the operands' statistics

use crate::device_view::Borrowed;
use crate::gpu::kernels::layout::{copy_named, op_copy, scale};
use crate::gpu::orchestration::engine::{device_budget, for_gpus, named};
use crate::gpu::orchestration::native_views;
use crate::gpu::orchestration::pipeline::product;
use crate::gpu::orchestration::queued::{self, Kind};
use crate::gpu::orchestration::recorded;
use crate::gpu::product::footprint;
use crate::gpu::product::job::{DeviceOperand, Outcome, Output, OutputTriangle, Terms};
use crate::gpu::runtime::capture::{Relaxed, capturing, refused};
use crate::gpu::runtime::context::{Gpu, facts, gpu_on};
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::pending::PendingReport;
use crate::report::finished;
use crate::request::{Request, Routine};
use crate::settings::Settings;
use crate::shape::Shape;
use crate::{Accum, Error, NativeReason, Report, Scalar};
use cudarc::driver::{result, sys};
use faer::linalg::matmul::triangular::BlockStructure;
use std::ptr::null_mut;

/// a request on device views
pub(crate) type ViewRequest<T> = Request<T, Borrowed<T>>;

/// `request` (`dst = alpha lhs rhs`, or `dst = alpha lhs rhs + beta dst` where it adds) of
/// device views, in core on the GPU of the stream `caller`, ordered after the caller's work on
/// it and before the caller's next; shapes and precision checked by the caller. Where `caller` is
/// being captured into a graph, the product is recorded there ([`recorded::record`]: each replay
/// decides its plan). Otherwise a product its shape decides native is cuBLAS's GEMM on `caller`;
/// the others are queued to a lane ([`queued::submit`]), the call returning once `caller` waits
/// for them, their report to come, or run on the calling thread, which waits on the host for the
/// plan
pub(crate) fn view_product<T: Scalar>(
	dst: Borrowed<T>,
	request: ViewRequest<T>,
	beta: T,
	caller: sys::CUstream,
) -> Result<PendingReport, Error> {
	let start = std::time::Instant::now();
	let ordinal = caller_ordinal(caller)?;
	let capture = capturing(caller)?;
	if capture.is_some() && !request.settings.graph_recording {
		return Err(refused(
			"recording products into graphs is off (Emulator::with_graph_recording, EMUGEMM_GRAPHS=on)",
		));
	}
	// while a capture is in progress, the calls that make what the product needs (a lane, a word)
	// are allowed on this thread, whatever the capture's mode
	let _relaxed = capture.as_ref().map(|_| Relaxed::new()).transpose()?;
	let settings = for_gpus(request.settings, &[(ordinal, 0)])?;
	// the replay lanes are made here, outside any capture, for the captures to come
	if capture.is_none()
		&& settings.graph_recording
		&& let Err(e) = queued::ready_to_replay(ordinal, settings.portable)
	{
		log::warn!("emugemm: GPU {ordinal}: products captured into graphs cannot be recorded: {e}");
	}
	let shape = request.shape;
	let direct = native_views::direct(&dst, &request, &settings);
	let native = move || reported::<T>(Outcome::native(shape.m, NativeReason::FasterNatively), shape, settings);
	if let Some(ops) = direct {
		let Some(capture) = capture else {
			native_views::on_caller(&*gpu_on(ordinal)?, (&dst, &request, beta), ops, caller)?;
			return Ok(PendingReport::ready(finished(native(), start)));
		};
		// the pipeline's cuBLAS handle is not captured (a replay would share its workspace with
		// the pipeline's live work): the same GEMM is recorded, for a replay lane to run
		let work = move |g: &Gpu| native_views::on_pipeline(g, (&dst, &request, beta), ops).map(|()| native());
		return recorded::record((ordinal, caller), capture, Box::new(work), settings.portable);
	}
	let budget = device_budget(&settings, &[(ordinal, 0)])?;
	fits(&dst, &request, budget)?;
	// the memory the program leaves free, and what this crate already holds there (on the lane
	// or the pipeline that runs the product), bounds the workspace too: a product that cannot have
	// it fails here, before anything is enqueued or recorded
	let lanes = match (&capture, settings.queued_views) {
		(Some(_), _) => Some(Kind::Replays),
		(None, true) => Some(Kind::Queued),
		(None, false) => None,
	};
	let free = match lanes {
		Some(kind) => queued::available(ordinal, caller, kind)?,
		None => available(&*gpu_on(ordinal)?)?,
	};
	fits(&dst, &request, free)?;
	let work = move |g: &Gpu| {
		let _code = g.using(&settings);
		enqueued(g, dst, request, beta, settings).map(|outcome| reported::<T>(outcome, shape, settings))
	};
	if let Some(capture) = capture {
		return recorded::record((ordinal, caller), capture, Box::new(work), settings.portable);
	}
	if settings.queued_views
		&& let Some(pending) = queued::submit(ordinal, caller, Box::new(work), settings.portable)?
	{
		return Ok(pending);
	}
	let g = gpu_on(ordinal)?;
	let report = joined(&g, caller, || work(&g))?;
	Ok(PendingReport::ready(finished(report, start)))
}

/// the device memory a product on `gpu` can take now: what the driver reports free and the
/// scratch this crate keeps there between products
pub(crate) fn available(gpu: &Gpu) -> Result<usize, Error> {
	let (free, _) = gpu.ctx.mem_get_info().map_err(driver)?;
	Ok(free.saturating_add(gpu.kept_scratch_bytes()))
}

/// the report of a product on views that ran with `settings`
pub(crate) fn reported<T: Scalar>(outcome: Outcome, shape: Shape, settings: Settings) -> Report {
	let times = outcome.times;
	named(outcome.report::<T>(shape, times), settings)
}

/// the device memory a product on views takes: the pipeline's footprint, the compact copies of
/// the operands it does not read where they lie (a left operand read transposed or conjugated, a
/// complex right one read conjugated), and a rank-k update's workspace
pub(crate) fn workspace<T: Scalar>(request: &ViewRequest<T>) -> usize {
	let (lhs, rhs) = (&request.lhs, &request.rhs);
	let copies = [(lhs, lhs.plain()), (rhs, rhs.plain() || transposed_in_place(rhs))]
		.iter()
		.filter(|(_, in_place)| !in_place)
		.map(|(v, _)| v.dims().0 * v.dims().1)
		.sum::<usize>();
	// a rank-k update computes into a workspace of the whole output, then copies its entries
	let output = match request.routine {
		Routine::RankK(_) => request.shape.m * request.shape.n,
		Routine::Gemm => 0,
	};
	footprint::footprint::<T>(request.shape) + (copies + output) * size_of::<T>()
}

/// `Ok` where the views are aligned and the product's [`workspace`] fits `budget`
pub(crate) fn fits<T: Scalar>(dst: &Borrowed<T>, request: &ViewRequest<T>, budget: usize) -> Result<(), Error> {
	for (what, view) in [
		("destination", dst),
		("left operand", &request.lhs),
		("right operand", &request.rhs),
	] {
		aligned(what, view)?;
	}
	let needed = workspace(request);
	if needed > budget {
		let Shape { m, n, k } = request.shape;
		return Err(Error::OutOfMemory {
			what: format!(
				"a {m}x{n}x{k} product of {} on device views needs {needed} bytes of workspace, above the {budget} bytes this context may take (products on device views run in core)",
				T::NAME
			),
		});
	}
	Ok(())
}

/// the product on `gpu`'s stream, with `settings` (already adapted to that GPU), unordered with
/// any other stream: `dst = beta dst` first where it adds and `beta` is not 1
pub(crate) fn enqueued<T: Scalar>(
	gpu: &Gpu,
	dst: Borrowed<T>,
	request: ViewRequest<T>,
	beta: T,
	settings: Settings,
) -> Result<Outcome, Error> {
	// the operands laid out first: a workspace that cannot be had fails before `dst` is scaled
	let a = left(gpu, &request.lhs)?;
	let b = right(gpu, &request.rhs)?;
	let target = match request.routine {
		Routine::RankK(structure) => rank_k_workspace(gpu, &dst, structure, request.accum)?,
		Routine::Gemm => dst,
	};
	if request.accum == Accum::Add && beta != T::from_parts(1.0, 0.0) {
		scale(gpu, &target, beta)?;
	}
	let out = Output {
		ptr: DevPtr::new(target.addr),
		ld: target.ld(),
		accumulate: request.accum == Accum::Add,
		remainder: None,
		triangle: whole_triangle(request.routine),
	};
	let terms = Terms {
		timed: false,
		// a rank-k update's operands are `a` and its adjoint
		gram: matches!(request.routine, Routine::RankK(_)),
		..Terms::plain(request.precision, settings)
	};
	let outcome = product(gpu, (a, b), out, request.alpha, terms, (None, None)).map_err(written)?;
	if let Routine::RankK(structure) = request.routine {
		copy_named(gpu, (&target, &dst), structure, T::IS_COMPLEX)?;
	}
	Ok(outcome)
}

/// `e`, where it comes after the destination may have been written: running out of memory there
/// is a failure of the GPU, not [`Error::OutOfMemory`], whose product leaves its destination as it
/// was (a caller may then compute it another way)
pub(crate) fn written(e: Error) -> Error {
	match e {
		Error::OutOfMemory { what } => Error::Gpu {
			reason: format!("out of memory with the destination partly computed: {what}"),
		},
		other => other,
	}
}

/// the workspace a rank-k update on `dst` computes its whole output in: where the update adds,
/// holding `dst`'s entries that `structure` names (the others are not read)
fn rank_k_workspace<T: Scalar>(gpu: &Gpu, dst: &Borrowed<T>, structure: BlockStructure, accum: Accum) -> Result<Borrowed<T>, Error> {
	let dims = dst.dims();
	let addr = gpu.scratch(Slot::StagedC, (dims.0 * dims.1 * size_of::<T>()).max(1))?.addr();
	let workspace = Borrowed::compact(addr, dims);
	if accum == Accum::Add {
		copy_named(gpu, (dst, &workspace), structure, false)?;
	}
	Ok(workspace)
}

/// `Ok` where `view`'s address is aligned to its element's size, as the kernels read elements
/// (a complex `f64` in one 16-byte access); [`Error::InvalidLayout`] naming it otherwise
fn aligned<T: Scalar>(what: &str, view: &Borrowed<T>) -> Result<(), Error> {
	if view.addr.is_multiple_of(size_of::<T>() as u64) {
		return Ok(());
	}
	Err(Error::InvalidLayout {
		reason: format!(
			"the {what} at {:#x} is not aligned to the {} bytes of an element of {}",
			view.addr,
			size_of::<T>(),
			T::NAME
		),
	})
}

/// the left operand `A` (m x k) as the pipeline reads it: the view itself where it reads its
/// memory as stored (column-major, its leading dimension), otherwise its compact copy
pub(crate) fn left<T: Scalar>(gpu: &Gpu, view: &Borrowed<T>) -> Result<DeviceOperand<T>, Error> {
	let (ptr, ld) = laid_out(gpu, view, Slot::StagedA)?;
	Ok(DeviceOperand::left(ptr, view.dims(), ld))
}

/// the right operand `B` (k x n) as the pipeline reads it (its columns as rows of length k): the
/// view itself where it reads its memory as stored, or transposed (`B = Xᵀ`, whose columns are
/// the rows of the stored `X`, read where they lie: a rank-k update's `aᵀ` is `a`), otherwise
/// its compact copy
pub(crate) fn right<T: Scalar>(gpu: &Gpu, view: &Borrowed<T>) -> Result<DeviceOperand<T>, Error> {
	if transposed_in_place(view) {
		// laid out as a left operand: the stored `X` (cols x k) column-major
		let (k, cols) = view.dims();
		return Ok(DeviceOperand::left(DevPtr::new(view.addr), (cols, k), view.ld()));
	}
	let (ptr, ld) = laid_out(gpu, view, Slot::StagedB)?;
	Ok(DeviceOperand::right(ptr, view.dims(), ld))
}

/// whether a right operand's view is read transposed where it lies: a transposed view of a real
/// type (conjugation is nothing there); a complex one read conjugated is copied
pub(crate) fn transposed_in_place<T: Scalar>(view: &Borrowed<T>) -> bool {
	view.transposed && (!view.conjugated || !T::IS_COMPLEX)
}

/// the address and leading dimension of `view`'s matrix column-major: its own memory where it
/// reads it as stored, otherwise a compact copy in the scratch slot `slot`
fn laid_out<T: Scalar>(gpu: &Gpu, view: &Borrowed<T>, slot: Slot) -> Result<(DevPtr<T>, usize), Error> {
	if view.plain() {
		return Ok((DevPtr::new(view.addr), view.ld()));
	}
	let (rows, cols) = view.dims();
	let copy = gpu.scratch(slot, (rows * cols * size_of::<T>()).max(1))?.cast::<T>();
	op_copy(gpu, view, copy)?;
	Ok((copy, rows.max(1)))
}

/// the ordinal of the GPU of the stream `caller` and the settings a product on it runs by
/// (`settings` as [`for_gpus`] adapts them to that GPU)
pub(crate) fn on_caller(settings: Settings, caller: sys::CUstream) -> Result<(usize, Settings), Error> {
	let ordinal = caller_ordinal(caller)?;
	Ok((ordinal, for_gpus(settings, &[(ordinal, 0)])?))
}

/// `work` on `gpu`'s stream, ordered after the work enqueued on `caller` so far, and with
/// `caller` made to wait for what `work` enqueued (whether it succeeded or not)
pub(crate) fn joined<R>(gpu: &Gpu, caller: sys::CUstream, work: impl FnOnce() -> Result<R, Error>) -> Result<R, Error> {
	let flags = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
	let before = gpu.ctx.new_event(flags).map_err(driver)?;
	// SAFETY: `caller` is a live stream of this context (checked by `caller_ordinal`), the event
	// is this context's
	unsafe { result::event::record(before.cu_event(), caller) }.map_err(driver)?;
	gpu.stream.wait(&before).map_err(driver)?;
	let outcome = work();
	let after = gpu.stream.record_event(flags).map_err(driver)?;
	// SAFETY: as above
	unsafe { result::stream::wait_event(caller, after.cu_event(), sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }.map_err(driver)?;
	outcome
}

/// the ordinal of the GPU of the stream `caller` (null, `CU_STREAM_LEGACY` and
/// `CU_STREAM_PER_THREAD`: of the calling thread's current context); [`Error::Placement`] where
/// the stream's context is not its GPU's primary context, the one this crate and the CUDA
/// runtime run in
fn caller_ordinal(caller: sys::CUstream) -> Result<usize, Error> {
	let (ctx, ordinal) = stream_device(caller)?;
	let primary = facts(ordinal)?.ctx.cu_ctx();
	if primary != ctx {
		return Err(Error::Placement {
			reason: format!("the stream belongs to a context of GPU {ordinal} that is not its primary context"),
		});
	}
	Ok(ordinal)
}

/// the context of the stream `caller` and the ordinal of its GPU, asked of the driver alone (no
/// context is made); [`Error::Placement`] for a default stream on a thread with no current
/// context
pub(crate) fn stream_device(caller: sys::CUstream) -> Result<(sys::CUcontext, usize), Error> {
	let mut ctx: sys::CUcontext = null_mut();
	let default = [0usize, 1, 2].contains(&(caller as usize));
	// SAFETY: `ctx` is written by the driver; `caller` is a live stream or a default one
	let status = unsafe {
		if default {
			sys::cuCtxGetCurrent(&mut ctx)
		} else {
			sys::cuStreamGetCtx(caller, &mut ctx)
		}
	};
	status.result().map_err(driver)?;
	if ctx.is_null() {
		return Err(Error::Placement {
			reason: "the default stream was given on a thread with no current CUDA context".into(),
		});
	}
	let mut device: sys::CUdevice = 0;
	// SAFETY: the context is pushed, asked for its device and popped on this thread
	unsafe {
		sys::cuCtxPushCurrent_v2(ctx).result().map_err(driver)?;
		let asked = sys::cuCtxGetDevice(&mut device).result();
		sys::cuCtxPopCurrent_v2(&mut null_mut()).result().map_err(driver)?;
		asked.map_err(driver)?;
	}
	let ordinal = usize::try_from(device).map_err(|_| Error::gpu(format!("the stream's device {device}")))?;
	Ok((ctx, ordinal))
}

/// the triangle of a whole output whose tiles alone `routine` needs computed (a rank-k update's)
fn whole_triangle(routine: Routine) -> Option<OutputTriangle> {
	routine.triangle().map(|triangle| OutputTriangle { triangle, first_col: 0 })
}
