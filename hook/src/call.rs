//! one intercepted GEMM: emulated through the C ABI where the configuration, the handle's stream
//! and the arguments allow it, otherwise forwarded to the real cuBLAS; logged either way

use crate::config::{Config, Kind};
use crate::log::{self, Entry};
use crate::real::{self, EXECUTION_FAILED, Handle, NOT_INITIALIZED, SUCCESS, Status};
use cudarc::driver::sys;
use emugemm_c::{EmugemmComplex32, EmugemmComplex64, EmugemmOperation, EmugemmPointerMode, EmugemmPrecision, EmugemmStatus};
use std::ffi::{CStr, c_void};
use std::time::Instant;

/// the arguments of one GEMM, as cuBLAS takes them (64-bit dimensions)
pub(crate) struct Args<T> {
	pub ops: (i32, i32),
	pub shape: (i64, i64, i64),
	pub alpha: *const T,
	pub a: (*const T, i64),
	pub b: (*const T, i64),
	pub beta: *const T,
	pub c: (*mut T, i64),
}

/// an element type the interposer emulates, and the C ABI's product of it
pub(crate) trait Element: Copy {
	const KIND: Kind;

	/// the product of `args` through the C ABI
	///
	/// # Safety
	/// the pointers are as cuBLAS requires them
	unsafe fn emulate(
		args: &Args<Self>,
		ops: (EmugemmOperation, EmugemmOperation),
		on: (EmugemmPointerMode, *mut c_void),
		precision: EmugemmPrecision,
	) -> EmugemmStatus;
}

/// implements [`Element`] for `$t` through `$f`
macro_rules! element {
	($t:ty, $kind:ident, $f:ident) => {
		impl Element for $t {
			const KIND: Kind = Kind::$kind;

			unsafe fn emulate(
				args: &Args<Self>,
				(opa, opb): (EmugemmOperation, EmugemmOperation),
				(mode, stream): (EmugemmPointerMode, *mut c_void),
				precision: EmugemmPrecision,
			) -> EmugemmStatus {
				let (m, n, k) = args.shape;
				// SAFETY: the caller's promise, handed on
				unsafe {
					emugemm_c::$f(
						opa, opb, m, n, k, args.alpha, args.a.0, args.a.1, args.b.0, args.b.1, args.beta, args.c.0, args.c.1, mode, stream,
						precision,
					)
				}
			}
		}
	};
}

element!(f64, D, emugemm_dgemm);
element!(EmugemmComplex64, Z, emugemm_zgemm);
element!(f32, S, emugemm_sgemm);
element!(EmugemmComplex32, C, emugemm_cgemm);

/// the C ABI's op of cuBLAS's `cublasOperation_t`: N, T and C; a conjugate without transpose
/// (`CUBLAS_OP_CONJG`) has none
fn op(raw: i32) -> Option<EmugemmOperation> {
	match raw {
		0 => Some(EmugemmOperation::N),
		1 => Some(EmugemmOperation::T),
		2 => Some(EmugemmOperation::C),
		_ => None,
	}
}

/// whether work enqueued on `stream` now would be captured into a graph (or the driver cannot
/// say)
fn capturing(stream: *mut c_void) -> bool {
	let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
	// SAFETY: the handle's live stream, and a writable local
	let asked = unsafe { sys::cuStreamIsCapturing(stream as sys::CUstream, &mut status) };
	asked != sys::CUresult::CUDA_SUCCESS || status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// `routine` forwarded by `forward` because its data or compute types are none the interposer
/// emulates, and logged so
pub(crate) fn unemulated(
	routine: &'static str,
	(shape, ops): ((i64, i64, i64), (i32, i32)),
	forward: impl FnOnce() -> Option<Status>,
) -> Status {
	let start = Instant::now();
	let status = forward().unwrap_or(NOT_INITIALIZED);
	log::write(&Entry {
		routine,
		kind: None,
		shape,
		ops,
		action: "forwarded",
		precision: "off".into(),
		report: None,
		reason: "data or compute types it does not emulate".into(),
		micros: start.elapsed().as_secs_f64() * 1e6,
	});
	status
}

/// `routine` on `args`: emulated, or forwarded by `forward` (the real function on the call's
/// own arguments; `None` where no libcublas defines it)
///
/// # Safety
/// the arguments are as cuBLAS requires them for `routine`
pub(crate) unsafe fn gemm<T: Element>(
	routine: &'static str,
	handle: Handle,
	args: Args<T>,
	forward: impl FnOnce() -> Option<Status>,
) -> Status {
	let start = Instant::now();
	let config = Config::get();
	let precision = config.precision(T::KIND);
	let entry = |action, reason: &str, report| Entry {
		routine,
		kind: Some(T::KIND),
		shape: args.shape,
		ops: args.ops,
		action,
		precision: precision.map_or("off".into(), |p| p.to_string()),
		report,
		reason: reason.to_string(),
		micros: start.elapsed().as_secs_f64() * 1e6,
	};
	let forwarded = |reason: &str| {
		let status = forward().unwrap_or(NOT_INITIALIZED);
		log::write(&entry("forwarded", reason, None));
		status
	};
	let Some(precision) = precision else {
		return forwarded("off for this type");
	};
	let (m, n, k) = args.shape;
	if m.min(n).min(k) < config.min_size {
		return forwarded("below EMUGEMM_HOOK_MIN");
	}
	let (Some(opa), Some(opb)) = (op(args.ops.0), op(args.ops.1)) else {
		return forwarded("an op the C ABI does not take");
	};
	let Some((stream, mode)) = real::handle_state(handle) else {
		return forwarded("the handle's stream and pointer mode could not be read");
	};
	if capturing(stream) {
		return forwarded("stream capture");
	}
	let mode = if mode == 0 {
		EmugemmPointerMode::Host
	} else {
		EmugemmPointerMode::Device
	};
	// SAFETY: the caller's promise, handed on
	let status = unsafe { T::emulate(&args, (opa, opb), (mode, stream), precision.into()) };
	// SAFETY: the library's own NUL-terminated message
	let message = || {
		unsafe { CStr::from_ptr(emugemm_c::emugemm_last_error()) }
			.to_string_lossy()
			.into_owned()
	};
	match status {
		EmugemmStatus::Success => {
			let mut report = emugemm_c::EmugemmReport::default();
			// SAFETY: a writable report
			let _ = unsafe { emugemm_c::emugemm_last_report(&mut report) };
			log::write(&entry("emugemm", "", Some(report)));
			SUCCESS
		},
		// refused before anything was written: cuBLAS computes it
		EmugemmStatus::InvalidValue | EmugemmStatus::NotAvailable => forwarded(&message()),
		// possibly after `C` was scaled by beta: computing it again would scale it twice
		EmugemmStatus::OutOfMemory | EmugemmStatus::GpuError | EmugemmStatus::Internal => {
			let message = message();
			eprintln!("emugemm-cublas: {routine}: {message}");
			log::write(&entry("failed", &message, None));
			if status == EmugemmStatus::OutOfMemory {
				3
			} else {
				EXECUTION_FAILED
			}
		},
	}
}
