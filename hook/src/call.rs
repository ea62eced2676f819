//! one intercepted call: emulated through the C ABI where the configuration and the arguments
//! allow it and the call can run there, otherwise forwarded unchanged to the caller's libcublas;
//! logged either way. A call that the C ABI refuses has read and written nothing, so cuBLAS then
//! computes it (and answers bad arguments with its own status)

use crate::config::Config;
use crate::libraries::{self, Library};
use crate::log::{self, Entry};
use crate::real::{self, EXECUTION_FAILED, Handle, INTERNAL_ERROR, NOT_INITIALIZED, SUCCESS, Status};
use crate::stderr::say;
use emugemm_c::{Call, Element, ElementType, EmugemmStatus, Outcome, Routine};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

/// what the log says of a call before it runs: its routine, type, shape, ops, triangle and count
#[derive(Clone, Copy)]
pub(crate) struct Summary {
	pub routine: &'static str,
	pub kind: Option<ElementType>,
	pub shape: (i64, i64, i64),
	pub ops: (i32, i32),
	pub uplo: Option<i32>,
	pub batch: Option<i64>,
}

impl Summary {
	/// the summary of `routine`, a call of `name`
	pub(crate) fn of<T: Element>(name: &'static str, routine: &Routine<T>) -> Summary {
		Summary {
			routine: name,
			kind: Some(T::TYPE),
			shape: routine.shape(),
			ops: routine.ops(),
			uplo: routine.uplo(),
			batch: routine.batch(),
		}
	}
}

/// what the log says a call became: its action, the precision asked, the report of an emulated
/// call, why it went native or failed, and the tier of the decision that settled it
type Became = (&'static str, String, Option<emugemm_c::EmugemmReport>, String, Option<&'static str>);

/// writes the log line of a call that `summary` describes, at `precision`, that `action` took
/// `start` on
fn logged(summary: Summary, became: Became, start: Instant) {
	// a failure to log (a panic in formatting) must not reach the program
	let _ = catch_unwind(AssertUnwindSafe(|| {
		log::write(&entry(summary, became, start.elapsed().as_secs_f64() * 1e6))
	}));
}

/// the log's entry of a call that `summary` describes, which became `became` in `micros` of host
/// time
fn entry(summary: Summary, (action, precision, report, reason, tier): Became, micros: f64) -> Entry {
	Entry {
		routine: summary.routine,
		kind: summary.kind,
		shape: summary.shape,
		ops: summary.ops,
		uplo: summary.uplo,
		batch: summary.batch,
		action,
		precision,
		report,
		reason,
		tier,
		replay: None,
		gpu: None,
		micros,
	}
}

/// writes the log line of an emulated call that `summary` describes, at `precision`, on `gpu`,
/// once `pending` (its report) is ready: its host time is the call's, from `start` to now. A call
/// recorded into a CUDA graph is written now, as `captured`, and each replay that reaches it in a
/// line of its own
fn logged_when_ready(summary: Summary, (precision, gpu): (String, Option<usize>), pending: emugemm::PendingReport, start: Instant) {
	let micros = start.elapsed().as_secs_f64() * 1e6;
	let recorded = pending.replays().is_some();
	let (action, reason) = match recorded {
		true => (
			"captured",
			"recorded into the CUDA graph being captured: each replay decides its plan",
		),
		false => ("emugemm", ""),
	};
	let entry = Entry {
		gpu,
		..entry(summary, (action, precision, None, reason.into(), None), micros)
	};
	match recorded {
		true => log::write_each_replay(entry, &pending),
		false => log::write_when_ready(entry, pending),
	}
}

/// the ordinal of the GPU of `stream` (the handle's: a call just ran on it), where the log is on:
/// the driver is asked only then
fn logged_gpu(stream: *mut std::ffi::c_void) -> Option<usize> {
	Config::get().log.as_ref()?;
	// SAFETY: the handle's stream, a valid stream of the caller's (or null, the default stream)
	unsafe { emugemm::Stream::from_raw(stream.cast()) }.ordinal().ok()
}

/// `forward` run on `library` (the call's own arguments, to the caller's libcublas), its status:
/// `NOT_INITIALIZED` where no libcublas defines the symbol, as cuBLAS answers a call it cannot
/// serve
fn forwarded(library: Option<Library>, forward: impl FnOnce(Option<Library>) -> Option<Status>) -> Status {
	forward(library).unwrap_or_else(|| {
		static SAID: std::sync::Once = std::sync::Once::new();
		SAID.call_once(|| say("no loaded libcublas defines a called symbol; such calls return CUBLAS_STATUS_NOT_INITIALIZED"));
		NOT_INITIALIZED
	})
}

/// a call of data or compute types the interposer does not emulate (a `cublasGemm*Ex`'s), forwarded
/// and logged
pub(crate) fn unemulated(summary: Summary, forward: impl FnOnce(Option<Library>) -> Option<Status>) -> Status {
	let start = Instant::now();
	let status = forwarded(libraries::choose().library, forward);
	logged(
		summary,
		(
			"forwarded",
			"off".into(),
			None,
			"data or compute types it does not emulate".into(),
			None,
		),
		start,
	);
	status
}

/// why `routine`, of `T`, is forwarded untried by the configuration alone, where it is
fn switched_off<T: Element>(config: &Config, routine: &Routine<T>) -> Option<&'static str> {
	if config.precision(T::TYPE).is_none() {
		return Some("off for this type");
	}
	if routine.batch().is_some() && !config.batched {
		return Some("batched calls off (EMUGEMM_HOOK_BATCHED)");
	}
	if routine.uplo().is_some() && !config.rank_k {
		return Some("rank-k updates off (EMUGEMM_HOOK_RANK_K)");
	}
	None
}

/// why a call with valid arguments is forwarded untried for its size, where it is
fn too_small<T: Element>(config: &Config, routine: &Routine<T>) -> Option<&'static str> {
	let (m, n, k) = routine.shape();
	if m.min(n).min(k) < config.min_size {
		return Some("below EMUGEMM_HOOK_MIN");
	}
	if routine.batch().is_some_and(|count| count < 1) {
		return Some("no product in the batch");
	}
	None
}

/// `name`'s call on `routine`'s arguments: emulated, or forwarded by `forward` (the real function
/// of the given libcublas on the call's own arguments; `None` where it defines no such symbol).
/// A panic of the interposer's own is caught here: before the C ABI ran, the call is forwarded
///
/// # Safety
/// the arguments are as cuBLAS requires them for `name`
pub(crate) unsafe fn intercept<T: Element>(
	name: &'static str,
	handle: Handle,
	routine: Routine<T>,
	forward: impl FnOnce(Option<Library>) -> Option<Status>,
) -> Status {
	let start = Instant::now();
	let summary = Summary::of(name, &routine);
	let decided = catch_unwind(AssertUnwindSafe(|| decide(handle, &routine)));
	let (choice, call) = match decided {
		Ok(Ok(ready)) => ready,
		Ok(Err((library, precision, reason, tier))) => {
			let status = forwarded(library, forward);
			logged(summary, ("forwarded", precision, None, reason, tier), start);
			return status;
		},
		Err(_) => {
			let status = forwarded(libraries::choose().library, forward);
			logged(
				summary,
				(
					"forwarded",
					"?".into(),
					None,
					"the interposer panicked deciding: please report it".into(),
					None,
				),
				start,
			);
			return status;
		},
	};
	let precision = emugemm::Precision::try_from(call.precision).map_or_else(|e| e, |p| p.to_string());
	// SAFETY: the caller's promise, handed on
	match unsafe { emugemm_c::execute(&call) } {
		Outcome::Done => {
			// the report comes once the product is enqueued: its line is written then, by the
			// log's own thread, and the call returns now
			if let Some(pending) = emugemm::last_pending_report() {
				logged_when_ready(summary, (precision, logged_gpu(call.stream)), pending, start);
			}
			SUCCESS
		},
		Outcome::Refused(status, message) => {
			let why = match status {
				EmugemmStatus::InvalidValue => "invalid arguments",
				EmugemmStatus::OutOfMemory => "out of memory",
				_ => "not available",
			};
			let result = forwarded(choice, forward);
			logged(summary, ("forwarded", precision, None, format!("{why}: {message}"), None), start);
			result
		},
		Outcome::Failed(status, message) => {
			say(&format!("{name}: {message}"));
			logged(summary, ("failed", precision, None, message, None), start);
			if status == EmugemmStatus::Internal {
				INTERNAL_ERROR
			} else {
				EXECUTION_FAILED
			}
		},
	}
}

/// a call the interposer may try: the library it is forwarded to otherwise, and the call whole
type Ready<T> = (Option<Library>, Call<T>);

/// why a call is forwarded untried: the library, the precision asked, the reason, and the tier of
/// the decision where the library's decided it
type Declined = (Option<Library>, String, String, Option<&'static str>);

/// `routine` ready to try, with the handle's stream and pointer mode, or why it is forwarded:
/// switched off, bad arguments (cuBLAS answers them), too small, a caller whose libcublas cannot
/// be told, or a call the library computes natively from its shape alone (cuBLAS computes it as
/// unhooked, bits and all, and the interposer reads nothing and waits for nothing)
fn decide<T: Element>(handle: Handle, routine: &Routine<T>) -> Result<Ready<T>, Declined> {
	let config = Config::get();
	let asked = config.precision(T::TYPE).map_or("off".into(), |p| p.to_string());
	let choice = libraries::choose();
	let declined = |reason: String| Err((choice.library, asked.clone(), reason, None));
	if let Some(reason) = switched_off(config, routine) {
		return declined(reason.into());
	}
	let Some((stream, pointer_mode)) = real::handle_state(choice.library, handle) else {
		return declined("the handle's stream and pointer mode could not be read".into());
	};
	let precision = config.precision(T::TYPE).expect("switched off above where off").into();
	let call = Call {
		routine: *routine,
		pointer_mode,
		stream,
		precision,
	};
	if let Err(message) = call.validate() {
		return declined(format!("invalid arguments: {message}"));
	}
	if let Some(reason) = too_small(config, routine) {
		return declined(reason.into());
	}
	if !choice.certain {
		return declined("several libcublas are loaded and the caller's cannot be told".into());
	}
	if let Some(reason) = emugemm_c::native_from_shape(&call) {
		return Err((choice.library, asked, format!("native from the shape: {reason}"), Some("shape")));
	}
	Ok((choice.library, call))
}
