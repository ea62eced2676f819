//! the report of a product that may still be in the GPU's queue: a product on device views returns
//! once its work is enqueued on the caller's stream, and the thread that decided its plan fills
//! the report in (or the error that stopped it) when it has enqueued the product. A product
//! recorded into a CUDA graph has a report per replay: each one replaces the last

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
	/// the fills so far (a recorded product's replays) and what is told of each
	fills: Mutex<Fills>,
	/// whether the product is recorded into a graph: every replay fills the report again
	recorded: bool,
}

/// what a report's fills tell: each one's number and value, to each listener
#[derive(Default)]
struct Fills {
	count: u64,
	listeners: Vec<Box<Listener>>,
}

/// a listener of a report's fills (see [`PendingReport::on_each`])
type Listener = dyn Fn(u64, &Result<Report, Error>) + Send + Sync;

impl std::fmt::Debug for Fills {
	fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
		write!(f, "Fills {{ count: {}, listeners: {} }}", self.count, self.listeners.len())
	}
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

	/// the report of a product recorded into a CUDA graph, to come at each replay
	#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
	pub(crate) fn recorded() -> Self {
		PendingReport {
			slot: Arc::new(Slot {
				recorded: true,
				..Slot::default()
			}),
		}
	}

	/// gives the report (or the failure), once: a later fill is ignored, but for a recorded
	/// product, whose every replay gives its own. The listeners hear of it before this returns
	pub(crate) fn fill(&self, value: Result<Report, Error>) {
		let mut fills = self.slot.fills.lock().unwrap_or_else(|e| e.into_inner());
		{
			let mut slot = self.slot.value.lock().unwrap_or_else(|e| e.into_inner());
			if slot.is_some() && !self.slot.recorded {
				return;
			}
			*slot = Some(value.clone());
			self.slot.filled.notify_all();
		}
		fills.count += 1;
		for listener in &fills.listeners {
			listener(fills.count, &value);
		}
	}

	/// the replays of a product recorded into a CUDA graph that have finished deciding and
	/// enqueuing their work so far; `None` for any other product, whose report comes once
	///
	/// # example
	/// ```
	/// let pending = emugemm::PendingReport::failed(emugemm::Error::NoKernels);
	/// assert_eq!(pending.replays(), None);
	/// ```
	pub fn replays(&self) -> Option<u64> {
		let fills = self.slot.fills.lock().unwrap_or_else(|e| e.into_inner());
		self.slot.recorded.then_some(fills.count)
	}

	/// calls `listener` with each fill of the report from now on, and its number from 1: once for
	/// a product's report (at once where it is ready), at every replay for a product recorded into
	/// a CUDA graph. It runs on the thread that fills the report, before that thread lets the
	/// stream go on: it must be short, and must not wait for the GPU
	///
	/// # example
	/// ```
	/// use std::sync::atomic::{AtomicU64, Ordering};
	/// use std::sync::Arc;
	/// let pending = emugemm::PendingReport::failed(emugemm::Error::NoKernels);
	/// let heard = Arc::new(AtomicU64::new(0));
	/// let counted = heard.clone();
	/// pending.on_each(move |n, _| counted.store(n, Ordering::Relaxed));
	/// assert_eq!(heard.load(Ordering::Relaxed), 1);
	/// ```
	pub fn on_each(&self, listener: impl Fn(u64, &Result<Report, Error>) + Send + Sync + 'static) {
		let mut fills = self.slot.fills.lock().unwrap_or_else(|e| e.into_inner());
		if !self.slot.recorded
			&& let Some(value) = self.slot.value.lock().unwrap_or_else(|e| e.into_inner()).as_ref()
		{
			listener(fills.count, value);
			return;
		}
		fills.listeners.push(Box::new(listener));
	}

	/// the report, waiting on the host until it is filled in (the product enqueued: its plan is
	/// chosen, its kernels are on the stream), or the error that stopped the product. A product
	/// recorded into a CUDA graph waits for nothing: its last replay's report, or
	/// [`Error::NotReplayed`] before the first
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
			if self.slot.recorded {
				return Err(Error::NotReplayed);
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
		if self.slot.recorded {
			return Some(self.wait());
		}
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

	/// a recorded product's report is each replay's in turn: none before the first (and no wait
	/// for it), then the last replay's, counted, and heard by every listener once per replay
	#[test]
	fn a_recorded_report_is_the_last_replays() {
		use std::sync::atomic::{AtomicU64, Ordering};
		let pending = PendingReport::recorded();
		assert_eq!(pending.replays(), Some(0));
		assert!(matches!(pending.wait(), Err(Error::NotReplayed)));
		assert!(matches!(pending.wait_for(Duration::from_secs(60)), Some(Err(Error::NotReplayed))));
		let heard = Arc::new(AtomicU64::new(0));
		let counted = heard.clone();
		pending.on_each(move |n, _| counted.store(n, Ordering::Relaxed));
		pending.fill(Err(Error::NoKernels));
		assert_eq!((pending.replays(), heard.load(Ordering::Relaxed)), (Some(1), 1));
		pending.fill(Err(Error::Gpu {
			reason: "the second".into(),
		}));
		assert_eq!((pending.replays(), heard.load(Ordering::Relaxed)), (Some(2), 2));
		assert!(matches!(pending.clone().wait(), Err(Error::Gpu { .. })));
		let once = PendingReport::to_come();
		assert_eq!(once.replays(), None);
	}
}
