//! the parallelism a product may use, as faer's [`Par`]: the native product takes it as it is,
//! and the emulation's parallel loops (rayon) run in a pool of that many threads

use faer::Par;
use rayon::ThreadPool;
use std::sync::{Arc, Mutex};

/// `work`, its rayon loops on `par`'s threads: in the current pool where it has that many, else
/// in a pool of that many kept for later products (`Par::Seq`: one thread)
pub(crate) fn within<R: Send>(par: Par, work: impl FnOnce() -> R + Send) -> R {
	let threads = match par {
		Par::Seq => 1,
		Par::Rayon(n) => n.get(),
	};
	if threads == rayon::current_num_threads() {
		return work();
	}
	match pool(threads) {
		Some(pool) => pool.install(work),
		// a pool that cannot be built (no threads left): the current one
		None => work(),
	}
}

/// the kept pool of `threads` threads
fn pool(threads: usize) -> Option<Arc<ThreadPool>> {
	static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());
	let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
	if let Some((_, pool)) = pools.iter().find(|(n, _)| *n == threads) {
		return Some(pool.clone());
	}
	let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()?);
	pools.push((threads, pool.clone()));
	Some(pool)
}

#[cfg(test)]
mod tests {
	use super::*;

	/// the work sees the threads it was given
	#[test]
	fn work_runs_on_the_threads_asked_for() {
		assert_eq!(within(Par::Seq, rayon::current_num_threads), 1);
		assert_eq!(within(Par::rayon(3), rayon::current_num_threads), 3);
		let all = rayon::current_num_threads();
		assert_eq!(within(Par::rayon(all), rayon::current_num_threads), all);
	}
}
