//! the calling thread's last report, as a plain C struct

use crate::status::{EmugemmStatus, record};

/// the scheme a product ran
///
/// # example
/// ```
/// assert_eq!(emugemm_c::EmugemmScheme::SchemeII as i32, 2);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmugemmScheme {
	/// the native product (cuBLAS)
	Native = 0,
	/// Ozaki scheme I, `parameter` slices
	SchemeI = 1,
	/// Ozaki scheme II, `parameter` moduli
	SchemeII = 2,
}

/// what the calling thread's last product ran and certified
///
/// # example
/// ```
/// let report = emugemm_c::EmugemmReport::default();
/// assert!(report.certified_bits.is_nan());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmugemmReport {
	/// the scheme
	pub scheme: EmugemmScheme,
	/// its slices or moduli (0 for the native product)
	pub parameter: u32,
	/// the scaled bits certified (NaN where nothing is).
	/// The scaled bits the error bound certifies on every row it does not leave native; NaN
	/// where nothing is certified (an explicit plan, or the whole product native)
	pub certified_bits: f64,
	/// `m`, `n`, `k`
	pub m: i64,
	/// columns of the product
	pub n: i64,
	/// inner dimension
	pub k: i64,
	/// rows of the product computed natively (those no plan certifies, or all of them)
	pub native_rows: i64,
	/// entries computed natively for NaN or infinities in their row of `op(A)` or column of `op(B)`
	pub nonfinite_entries: i64,
	/// why the whole product is native, as NUL-terminated text (empty where it is not).
	/// One of "faster
	/// natively", "below the native size", "none certified and faster" (the bound certified no
	/// plan, or none predicted faster than the native product), "screen", "not emulated"
	pub native_reason: [u8; 32],
	/// which tier of the decision settled the plan, as NUL-terminated text: "shape" (from the
	/// shape, the type, the precision and the GPU alone, no operand read), "screen" (the
	/// operands' row statistics), "bound" (the error bound) or "explicit" (an explicit plan)
	pub tier: [u8; 16],
}

impl Default for EmugemmReport {
	fn default() -> Self {
		EmugemmReport {
			scheme: EmugemmScheme::Native,
			parameter: 0,
			certified_bits: f64::NAN,
			m: 0,
			n: 0,
			k: 0,
			native_rows: 0,
			nonfinite_entries: 0,
			native_reason: [0; 32],
			tier: [0; 16],
		}
	}
}

impl From<&emugemm::Report> for EmugemmReport {
	fn from(r: &emugemm::Report) -> Self {
		use emugemm::{NativeReason, Scheme};
		let (scheme, parameter) = match r.plan.scheme {
			Scheme::Native => (EmugemmScheme::Native, 0),
			Scheme::SchemeI { slices } => (EmugemmScheme::SchemeI, slices),
			Scheme::SchemeII { moduli, .. } => (EmugemmScheme::SchemeII, moduli),
		};
		let reason = match r.native_reason {
			None => "",
			Some(NativeReason::FasterNatively) => "faster natively",
			Some(NativeReason::BelowNativeSize) => "below the native size",
			Some(NativeReason::NoPlanCertifies) => "none certified and faster",
			Some(NativeReason::Screen { .. }) => "screen",
			Some(NativeReason::HostRouting) => "host routing",
			Some(NativeReason::NotEmulated) => "not emulated",
		};
		let mut native_reason = [0; 32];
		native_reason[..reason.len()].copy_from_slice(reason.as_bytes());
		let decided = r.tier().to_string();
		let mut tier = [0; 16];
		tier[..decided.len()].copy_from_slice(decided.as_bytes());
		let count = |x: usize| i64::try_from(x).unwrap_or(i64::MAX);
		EmugemmReport {
			scheme,
			parameter,
			certified_bits: if scheme == EmugemmScheme::Native {
				f64::NAN
			} else {
				r.plan.predicted_bits
			},
			m: count(r.shape.0),
			n: count(r.shape.1),
			k: count(r.shape.2),
			native_rows: count(r.native_rows.len()),
			nonfinite_entries: count(r.nonfinite_entries),
			native_reason,
			tier,
		}
	}
}

/// writes the calling thread's last report into `*out`, once the last product's plan is chosen
/// and its work enqueued (a product on a stream returns before: this waits for that, not for the
/// GPU to finish the product). A product recorded into a CUDA graph being captured reports each
/// replay: this gives the last replay's report, once the replay has enqueued its product (done
/// once the stream has passed it), without waiting. `InvalidValue` where `out` is null, the
/// thread has made no product yet, or its last one is recorded into a graph not yet replayed;
/// `GpuError` where the last product (or replay) failed after its call returned
///
/// # Safety
/// `out` is null or points to writable memory for one `emugemm_report`
///
/// # example
/// ```
/// use emugemm_c::{EmugemmReport, EmugemmStatus, emugemm_last_report};
/// let mut report = EmugemmReport::default();
/// // no product on this thread yet
/// assert_eq!(unsafe { emugemm_last_report(&mut report) }, EmugemmStatus::InvalidValue);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn emugemm_last_report(out: *mut EmugemmReport) -> EmugemmStatus {
	let Some(pending) = emugemm::last_pending_report() else {
		return record(EmugemmStatus::InvalidValue, "no product on this thread yet");
	};
	if out.is_null() {
		return record(EmugemmStatus::InvalidValue, "emugemm_last_report: `out` is null");
	}
	let report = match pending.wait() {
		Ok(report) => report,
		Err(emugemm::Error::NotReplayed) => {
			let message = "the thread's last product is recorded into a CUDA graph that has not finished a replay yet";
			return record(EmugemmStatus::InvalidValue, message);
		},
		Err(e) => {
			let message = format!("the thread's last product failed after its call returned: {e}");
			return record(EmugemmStatus::GpuError, &message);
		},
	};
	// SAFETY: `out` is non-null and writable (the caller's promise)
	unsafe { out.write(EmugemmReport::from(&report)) };
	record(EmugemmStatus::Success, "")
}
