//! a call carried whole from either door to the library: checked, refused where it cannot run
//! (before anything is read or written), `alpha` and `beta` read, the views made and the routine
//! run on the library's context for the stream's GPU. No panic leaves it

use crate::checked::Checked;
use crate::device::{self, download};
use crate::request::{Batch, Call, Gemm, RankK, Routine};
use crate::views::{self, Failure, vec_for};
use crate::{Element, EmugemmPointerMode, EmugemmStatus};
use emugemm::{DeviceView, DeviceViewMut, Emulator, Error, Scalar, Stream};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// what became of a call
///
/// # example
/// ```
/// use emugemm_c::{Call, EmugemmPrecision, EmugemmStatus, Gemm, Outcome, Routine};
/// let (alpha, beta) = (1.0f64, 0.0f64);
/// let gemm = Gemm { ops: (0, 7), shape: (4, 4, 4), alpha: &alpha, a: (std::ptr::null(), 4), b: (std::ptr::null(), 4), beta: &beta, c: (std::ptr::null_mut(), 4) };
/// let call = Call { routine: Routine::Gemm(gemm), pointer_mode: 0, stream: std::ptr::null_mut(), precision: EmugemmPrecision { kind: 0, parameter: 0 } };
/// // transb = 7 is no operation: refused before anything is read
/// assert!(matches!(unsafe { emugemm_c::execute(&call) }, Outcome::Refused(EmugemmStatus::InvalidValue, _)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
	/// enqueued on the stream (or computed), or cuBLAS's quick return; the thread's report is the
	/// call's, but for a quick return, which makes none
	Done,
	/// refused before anything was read or written: `C` is as it was, and the call can be computed
	/// another way (the status says why: bad arguments, no GPU backend for the stream, a workspace
	/// that does not fit)
	Refused(EmugemmStatus, String),
	/// failed once work was enqueued: `C` may be partly written
	Failed(EmugemmStatus, String),
}

impl Outcome {
	/// the status and message of the outcome, as the C ABI returns and records them
	///
	/// # example
	/// ```
	/// assert_eq!(emugemm_c::Outcome::Done.status().0, emugemm_c::EmugemmStatus::Success);
	/// ```
	pub fn status(&self) -> (EmugemmStatus, &str) {
		match self {
			Outcome::Done => (EmugemmStatus::Success, ""),
			Outcome::Refused(status, message) | Outcome::Failed(status, message) => (*status, message),
		}
	}
}

/// runs `call`: checks its arguments against cuBLAS's contract, returns at once for cuBLAS's quick
/// return, refuses it where the GPU of its stream cannot run it, and otherwise enqueues it on the
/// stream with the library's plans and bits (see the C entry points)
///
/// # Safety
/// the pointers are as the routine requires them in cuBLAS (device memory of the stream's GPU, of
/// the extents the arguments give; `alpha` and `beta` in host or device memory as the pointer mode
/// says; a batch's pointer arrays in device memory), and the stream is live or a default one
///
/// # example
/// see [`Outcome`]
pub unsafe fn execute<T: Element>(call: &Call<T>) -> Outcome {
	// SAFETY: the caller's promise, handed on
	match catch_unwind(AssertUnwindSafe(|| unsafe { attempt(call) })) {
		Ok(Ok(())) => Outcome::Done,
		Ok(Err(outcome)) => outcome,
		Err(_) => Outcome::Failed(
			EmugemmStatus::Internal,
			"emugemm panicked inside the C ABI: please report it".into(),
		),
	}
}

/// refused for bad arguments
fn invalid(message: String) -> Outcome {
	Outcome::Refused(EmugemmStatus::InvalidValue, message)
}

/// the outcome of the library's error `e`: a refusal where it comes before anything is written
/// (the library checks arguments and workspace first, and keeps `OutOfMemory` for a product that
/// left its destination as it was), a failure otherwise
fn engine(e: &Error) -> Outcome {
	let message = e.to_string();
	match e {
		Error::ShapeMismatch { .. } | Error::BatchLengths { .. } | Error::InvalidPrecision { .. } | Error::InvalidLayout { .. } => {
			invalid(message)
		},
		Error::OutOfMemory { .. } => Outcome::Refused(EmugemmStatus::OutOfMemory, message),
		Error::NoKernels | Error::BackendUnavailable { .. } | Error::Environment { .. } | Error::Placement { .. } => {
			Outcome::Refused(EmugemmStatus::NotAvailable, message)
		},
		_ => Outcome::Failed(EmugemmStatus::GpuError, message),
	}
}

/// [`execute`], its outcome on failure
///
/// # Safety
/// as [`execute`]
unsafe fn attempt<T: Element>(call: &Call<T>) -> Result<(), Outcome> {
	let checked = call.check().map_err(invalid)?;
	if checked.empty() {
		return Ok(());
	}
	let recordable = checked.mode == EmugemmPointerMode::Host && !matches!(call.routine, Routine::Batch(_));
	let emu = device::for_stream(call.stream, recordable).map_err(|reason| Outcome::Refused(EmugemmStatus::NotAvailable, reason))?;
	// SAFETY: the caller's promise, handed on
	unsafe {
		match call.routine {
			Routine::Gemm(g) => gemm(emu, g, (&checked, call)),
			Routine::Batch(b) => batch(emu, b, (&checked, call)),
			Routine::RankK(r) => rank_k(emu, r, (&checked, call)),
		}
	}
}

/// `alpha` and `beta` of type `S` at `(alpha, beta)`: read from the host, or copied from the
/// device after the work enqueued on the call's stream so far (the host waits for the stream)
///
/// # Safety
/// the pointers are readable where the pointer mode says, and hold values of `S`
unsafe fn scalars<S: Scalar>(
	(alpha, beta): (*const S, *const S),
	mode: EmugemmPointerMode,
	stream: *mut c_void,
) -> Result<(S, S), Outcome> {
	match mode {
		// SAFETY: host pointers to one element each
		EmugemmPointerMode::Host => Ok(unsafe { (alpha.read_unaligned(), beta.read_unaligned()) }),
		EmugemmPointerMode::Device => {
			let mut values = [S::from_parts(0.0, 0.0); 2];
			let (first, second) = values.split_at_mut(1);
			// SAFETY: device pointers to one element each (the caller's promise)
			unsafe { download("alpha and beta", [(alpha as u64, first), (beta as u64, second)], stream) }
				.map_err(|e| Outcome::Failed(EmugemmStatus::GpuError, e))?;
			Ok((values[0], values[1]))
		},
	}
}

/// the inner dimension a product reads: `k`, or 0 where `alpha = 0` (`C = beta C`, neither `A`
/// nor `B` read), after their addresses are checked where they are read
fn inner<T: Element, S: Scalar>(call: &Call<T>, checked: &Checked, alpha: S) -> Result<usize, Outcome> {
	if alpha == S::from_parts(0.0, 0.0) || checked.shape.2 == 0 {
		return Ok(0);
	}
	call.operands_present(checked).map_err(invalid)?;
	Ok(checked.shape.2)
}

/// the caller's stream
///
/// # Safety
/// `stream` is live, or a default one
unsafe fn on(stream: *mut c_void) -> Stream<'static> {
	// SAFETY: the caller's promise
	unsafe { Stream::from_raw(stream.cast()) }
}

/// one product
///
/// # Safety
/// as [`execute`]
unsafe fn gemm<T: Element>(emu: &Emulator, g: Gemm<T>, (checked, call): (&Checked, &Call<T>)) -> Result<(), Outcome> {
	// SAFETY: the caller's promise, handed on
	let (alpha, beta) = unsafe { scalars::<T::Scalar>((g.alpha.cast(), g.beta.cast()), checked.mode, call.stream)? };
	let inner = inner(call, checked, alpha)?;
	// SAFETY: as above
	let (a, b, c) = unsafe { views::product::<T>(checked, inner, (g.a.0 as u64, g.b.0 as u64, g.c.0 as u64)) }.map_err(|e| engine(&e))?;
	// SAFETY: as above
	let stream = unsafe { on(call.stream) };
	emu.gemm_on_stream(c, alpha, (a, b), beta, (checked.precision, stream))
		.map(|_| ())
		.map_err(|e| engine(&e))
}

/// a batch of products
///
/// # Safety
/// as [`execute`]
unsafe fn batch<T: Element>(emu: &Emulator, b: Batch<T>, (checked, call): (&Checked, &Call<T>)) -> Result<(), Outcome> {
	// SAFETY: the caller's promise, handed on
	let (alpha, beta) = unsafe { scalars::<T::Scalar>((b.alpha.cast(), b.beta.cast()), checked.mode, call.stream)? };
	let inner = inner(call, checked, alpha)?;
	// SAFETY: as above
	let addresses = unsafe { views::batch_addresses(b.matrices, checked, inner > 0, call.stream) }.map_err(|f| match f {
		Failure::Invalid(message) => invalid(message),
		Failure::Memory(message) => Outcome::Refused(EmugemmStatus::OutOfMemory, message),
		Failure::Read(message) => Outcome::Failed(EmugemmStatus::GpuError, message),
	})?;
	let host_memory = |e| {
		Outcome::Refused(
			EmugemmStatus::OutOfMemory,
			format!("the views of a batch of {} products: {e}", checked.count),
		)
	};
	let mut a: Vec<DeviceView<'_, T::Scalar>> = vec_for(checked.count).map_err(host_memory)?;
	let mut bs: Vec<DeviceView<'_, T::Scalar>> = vec_for(checked.count).map_err(host_memory)?;
	let mut c: Vec<DeviceViewMut<'_, T::Scalar>> = vec_for(checked.count).map_err(host_memory)?;
	for at in addresses {
		// SAFETY: as above
		let (ai, bi, ci) = unsafe { views::product::<T>(checked, inner, at) }.map_err(|e| engine(&e))?;
		a.push(ai);
		bs.push(bi);
		c.push(ci);
	}
	// SAFETY: as above
	let stream = unsafe { on(call.stream) };
	emu.gemm_batch_on_stream(&mut c, alpha, (&a, &bs), beta, (checked.precision, stream))
		.map(|_| ())
		.map_err(|e| engine(&e))
}

/// a rank-k update
///
/// # Safety
/// as [`execute`]
unsafe fn rank_k<T: Element>(emu: &Emulator, r: RankK<T>, (checked, call): (&Checked, &Call<T>)) -> Result<(), Outcome> {
	// SAFETY: the caller's promise, handed on
	let (alpha, beta) = unsafe { scalars::<T::Real>((r.alpha, r.beta), checked.mode, call.stream)? };
	let inner = inner(call, checked, alpha)?;
	// `A` serves as both operands: its view read as `op(A)`, the second one unused
	let at = (r.a.0 as u64, r.a.0 as u64, r.c.0 as u64);
	// SAFETY: as above
	let (a, _, c) = unsafe { views::product::<T>(checked, inner, at) }.map_err(|e| engine(&e))?;
	let triangle = checked.triangle.expect("a rank-k update's triangle is checked");
	// SAFETY: as above
	let stream = unsafe { on(call.stream) };
	emu.rank_k_on_stream((c, triangle), alpha, a, beta, (checked.precision, stream))
		.map(|_| ())
		.map_err(|e| engine(&e))
}
