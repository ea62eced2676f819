//! the points where failures can be injected (feature `faults`): the Nth device or page-locked
//! allocation, kernel or cuBLAS launch, or transfer after [`fail_nth`] fails as the driver's own
//! failure of that call would, without doing it. Without the feature the points compile to
//! nothing. [`crate::gpu::faults`] is the tests' view of them
//!
//! the counters are the process's: a test that injects faults runs alone (one test binary, or a
//! lock around its products)

use crate::Error;
#[cfg(feature = "faults")]
use std::sync::atomic::{AtomicU64, Ordering};

/// what can be made to fail
///
/// # example
/// ```
/// # #[cfg(feature = "faults")] {
/// use emugemm::faults::{Fault, count, reset};
/// reset();
/// assert_eq!(count(Fault::Launch), 0);
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
	/// a device or page-locked host allocation (a scratch buffer, a device matrix, a staging
	/// buffer, a module's first load): fails as memory running out does
	Allocation,
	/// a kernel launch or a cuBLAS product
	Launch,
	/// a copy between host and device, or between devices
	Transfer,
}

impl Fault {
	/// every kind, in order
	///
	/// # example
	/// ```
	/// # #[cfg(feature = "faults")]
	/// assert_eq!(emugemm::faults::Fault::ALL.len(), 3);
	/// ```
	pub const ALL: [Fault; 3] = [Fault::Allocation, Fault::Launch, Fault::Transfer];

	#[cfg(feature = "faults")]
	fn index(self) -> usize {
		self as usize
	}
}

/// per kind: the points passed since [`reset`]
#[cfg(feature = "faults")]
static PASSED: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];
/// per kind: the point (1-based, counted from [`reset`]) that fails; 0 for none
#[cfg(feature = "faults")]
static ARMED: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];

/// forgets every count and disarms every fault
///
/// # example
/// ```
/// # #[cfg(feature = "faults")] {
/// use emugemm::faults::{Fault, fail_nth, reset};
/// fail_nth(Fault::Transfer, 3);
/// reset(); // nothing fails any more
/// # }
/// ```
#[cfg(feature = "faults")]
pub fn reset() {
	for i in 0..3 {
		ARMED[i].store(0, Ordering::SeqCst);
		PASSED[i].store(0, Ordering::SeqCst);
	}
}

/// makes the `n`-th point of `kind` after the last [`reset`] fail (1 for the next; 0 for none)
///
/// # example
/// ```
/// # #[cfg(feature = "faults")] {
/// use emugemm::faults::{Fault, count, fail_nth, reset};
/// reset();
/// fail_nth(Fault::Allocation, 1);
/// // ... a GPU product here returns Err(Error::OutOfMemory { .. }) ...
/// assert_eq!(count(Fault::Allocation), 0);
/// reset();
/// # }
/// ```
#[cfg(feature = "faults")]
pub fn fail_nth(kind: Fault, n: u64) {
	ARMED[kind.index()].store(n, Ordering::SeqCst);
}

/// the points of `kind` passed (or failed) since the last [`reset`]: how many a product meets
///
/// # example
/// ```
/// # #[cfg(feature = "faults")] {
/// emugemm::faults::reset();
/// assert_eq!(emugemm::faults::count(emugemm::faults::Fault::Transfer), 0);
/// # }
/// ```
#[cfg(feature = "faults")]
pub fn count(kind: Fault) -> u64 {
	PASSED[kind.index()].load(Ordering::SeqCst)
}

/// whether the point of `kind` about to run fails, counting it
#[cfg(feature = "faults")]
fn fails(kind: Fault) -> bool {
	let n = PASSED[kind.index()].fetch_add(1, Ordering::SeqCst) + 1;
	ARMED[kind.index()].load(Ordering::SeqCst) == n
}

#[cfg(not(feature = "faults"))]
#[inline(always)]
fn fails(_: Fault) -> bool {
	false
}

/// a point where `kind` may be made to fail: the error the driver's failure gives there (`what`
/// names the call)
#[inline]
pub(crate) fn point(kind: Fault, what: impl FnOnce() -> String) -> Result<(), Error> {
	if !fails(kind) {
		return Ok(());
	}
	Err(match kind {
		Fault::Allocation => Error::OutOfMemory {
			what: format!("{} (an injected fault)", what()),
		},
		Fault::Launch | Fault::Transfer => Error::gpu(format!("{}: an injected fault", what())),
	})
}
