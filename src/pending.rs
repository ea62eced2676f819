//! the report of a product that may still be in the GPU's queue: a product on device views returns
//! once its work is enqueued on the caller's stream, and the thread that decided its plan fills
//! the report in (or the error that stopped it) when it has enqueued the product

use crate::{Error, Report};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// the report of one product, ready or still to come: the products on device views
/// ([`crate::Emulator::gemm_on_stream`], [`crate::Emulator::rank_k_on_stream`]) return once their
/// work is enqueued, and the report is filled in once the plan is chosen and the product's
/// kernels are on the stream, at the latest when the stream reaches the product. A failure after
/// the call returned (a GPU fault) is given here, and by the thread's and context's
/// `last_report`, which wait for it. Clones share the one report
///
/// # example
/// ```
/// use emugemm::PendingReport;
/// let pending = PendingReport::failed(emugemm::Error::Gpu { reason: "an example".into() });
/// assert!(pending.wait().is_err());
/// assert!(pending.try_get().is_some());
/// ```
#[derive(Clone, Debug)]
pub struct PendingReport {
	slot: Arc<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
	value: Mutex<Option<Result<Report, Error>>>,
	filled: Condvar,
}

impl PendingReport {
	/// a report still to come: [`PendingReport::fill`] gives it
	pub(crate) fn to_come() -> Self {
		PendingReport {
			slot: Arc::new(Slot::default()),
		}
	}

	/// a report that is ready
	///
	/// # example
	/// ```
	/// use emugemm::{EmuMatMul, PendingReport, Precision};
	/// let a = faer::Mat::<f64>::identity(4, 4);
	/// let _ = a.emu_mul(&a, Precision::F64);
	/// let pending = PendingReport::ready(emugemm::last_report().unwrap());
	/// assert_eq!(pending.wait()?.shape, (4, 4, 4));
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn ready(report: Report) -> Self {
		let pending = PendingReport::to_come();
		pending.fill(Ok(report));
		pending
	}

	/// a product that failed with `error`
	///
	/// # example
	/// ```
	/// let pending = emugemm::PendingReport::failed(emugemm::Error::NoKernels);
	/// assert!(matches!(pending.wait(), Err(emugemm::Error::NoKernels)));
	/// ```
	pub fn failed(error: Error) -> Self {
		let pending = PendingReport::to_come();
		pending.fill(Err(error));
		pending
	}

	/// gives the report (or the failure), once: a later fill is ignored
	pub(crate) fn fill(&self, value: Result<Report, Error>) {
		let mut slot = self.slot.value.lock().unwrap_or_else(|e| e.into_inner());
		if slot.is_none() {
			*slot = Some(value);
			self.slot.filled.notify_all();
		}
	}

	/// the report, waiting on the host until it is filled in (the product enqueued: its plan is
	/// chosen, its kernels are on the stream), or the error that stopped the product
	///
	/// # example
	/// ```
	/// use emugemm::{EmuMatMul, PendingReport, Precision};
	/// let a = faer::Mat::<f64>::identity(4, 4);
	/// let _ = a.emu_mul(&a, Precision::F64);
	/// let report = PendingReport::ready(emugemm::last_report().unwrap()).wait()?;
	/// println!("{report}");
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn wait(&self) -> Result<Report, Error> {
		let mut slot = self.slot.value.lock().unwrap_or_else(|e| e.into_inner());
		loop {
			if let Some(value) = slot.as_ref() {
				return value.clone();
			}
			slot = self.slot.filled.wait(slot).unwrap_or_else(|e| e.into_inner());
		}
	}

	/// [`PendingReport::wait`] for at most `timeout`: `None` where the report is still to come
	///
	/// # example
	/// ```
	/// let pending = emugemm::PendingReport::failed(emugemm::Error::NoKernels);
	/// assert!(pending.wait_for(std::time::Duration::from_millis(1)).is_some());
	/// ```
	pub fn wait_for(&self, timeout: Duration) -> Option<Result<Report, Error>> {
		let slot = self.slot.value.lock().unwrap_or_else(|e| e.into_inner());
		let (slot, _) = self
			.slot
			.filled
			.wait_timeout_while(slot, timeout, |v| v.is_none())
			.unwrap_or_else(|e| e.into_inner());
		slot.clone()
	}

	/// the report where it is filled in, without waiting
	///
	/// # example
	/// ```
	/// let pending = emugemm::PendingReport::failed(emugemm::Error::NoKernels);
	/// assert!(pending.try_get().is_some_and(|r| r.is_err()));
	/// ```
	pub fn try_get(&self) -> Option<Result<Report, Error>> {
		self.slot.value.lock().unwrap_or_else(|e| e.into_inner()).clone()
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	/// a report given by another thread reaches every clone, once: a second fill does not replace
	/// it, and a waiter that came first wakes
	#[test]
	fn a_report_filled_elsewhere_reaches_every_clone_once() {
		let pending = PendingReport::to_come();
		assert!(pending.try_get().is_none());
		assert!(pending.wait_for(Duration::from_millis(5)).is_none());
		let waiter = {
			let pending = pending.clone();
			std::thread::spawn(move || pending.wait())
		};
		std::thread::sleep(Duration::from_millis(20));
		pending.fill(Err(Error::NoKernels));
		pending.fill(Err(Error::Gpu { reason: "later".into() }));
		assert!(matches!(waiter.join().unwrap(), Err(Error::NoKernels)));
		assert!(matches!(pending.try_get(), Some(Err(Error::NoKernels))));
	}
}
