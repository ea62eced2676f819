//! the threads of one product over several pipelines meet: each hands the others a value and
//! takes theirs, and a thread that fails releases the others with an error instead of leaving them
//! waiting for it

use crate::Error;
use std::any::Any;
use std::sync::{Condvar, Mutex, MutexGuard};

/// where `count` threads meet, each with its index
pub(crate) struct Exchange {
	count: usize,
	state: Mutex<State>,
	turn: Condvar,
}

struct State {
	/// threads arrived in this round
	arrived: usize,
	round: u64,
	/// the first thread that failed, once one has
	failed: Option<usize>,
	/// each thread's value of the exchange under way
	values: Vec<Option<Box<dyn Any + Send>>>,
}

impl Exchange {
	pub fn new(count: usize) -> Self {
		Exchange {
			count,
			state: Mutex::new(State {
				arrived: 0,
				round: 0,
				failed: None,
				values: (0..count).map(|_| None).collect(),
			}),
			turn: Condvar::new(),
		}
	}

	/// how many threads meet
	pub fn count(&self) -> usize {
		self.count
	}

	fn lock(&self) -> MutexGuard<'_, State> {
		self.state.lock().unwrap_or_else(|e| e.into_inner())
	}

	/// waits until every thread has arrived; an error once one has failed
	fn wait<'a>(&'a self, mut state: MutexGuard<'a, State>) -> Result<MutexGuard<'a, State>, Error> {
		let released = |state: &State| state.failed.map(|t| Error::gpu(format!("the share of pipeline {t} failed")));
		if let Some(e) = released(&state) {
			return Err(e);
		}
		let round = state.round;
		state.arrived += 1;
		if state.arrived == self.count {
			(state.arrived, state.round) = (0, round + 1);
			self.turn.notify_all();
		}
		while state.round == round && state.failed.is_none() {
			state = self.turn.wait(state).unwrap_or_else(|e| e.into_inner());
		}
		match released(&state) {
			Some(e) => Err(e),
			None => Ok(state),
		}
	}

	/// hands `value` to the others: every thread's value, in the order of their indices
	pub fn exchange<V: Clone + Send + 'static>(&self, me: usize, value: V) -> Result<Vec<V>, Error> {
		if self.count == 1 {
			return Ok(vec![value]);
		}
		let mut state = self.lock();
		state.values[me] = Some(Box::new(value));
		let state = self.wait(state)?;
		let all = state
			.values
			.iter()
			.map(|v| {
				v.as_ref()
					.and_then(|v| v.downcast_ref::<V>())
					.cloned()
					.expect("every thread hands a value of one type")
			})
			.collect();
		// nobody writes the next exchange's values before everybody has read these
		drop(self.wait(state)?);
		Ok(all)
	}

	/// thread `me` will not come again: the others are released with an error
	pub fn fail(&self, me: usize) {
		let mut state = self.lock();
		state.failed.get_or_insert(me);
		self.turn.notify_all();
	}

	/// the first thread that failed
	pub fn failed(&self) -> Option<usize> {
		self.lock().failed
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	/// every thread gets every value in order, round after round; a failed thread releases the
	/// others with an error
	#[test]
	fn threads_exchange_and_fail_together() {
		let exchange = Exchange::new(3);
		let sums: Vec<Vec<usize>> = std::thread::scope(|s| {
			let threads: Vec<_> = (0..3)
				.map(|me| {
					let exchange = &exchange;
					s.spawn(move || {
						(0..50)
							.map(|round| exchange.exchange(me, me * 100 + round).unwrap().iter().sum())
							.collect()
					})
				})
				.collect();
			threads.into_iter().map(|t| t.join().unwrap()).collect()
		});
		assert!(
			sums.iter()
				.all(|s| s.iter().enumerate().all(|(round, &sum)| sum == 300 + 3 * round))
		);
		let exchange = Exchange::new(2);
		std::thread::scope(|s| {
			let waiting = s.spawn(|| exchange.exchange(0, 1));
			exchange.fail(1);
			assert!(waiting.join().unwrap().is_err());
		});
		assert_eq!(exchange.failed(), Some(1));
	}
}
