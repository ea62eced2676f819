//! the CPU emulation backend: the same integer work as the GPU, on the CPU, exactly
//!
//! the integer stages are exact, and the floating-point reconstructions are the normative
//! functions of [`crate::scheme1`] and [`crate::scheme2`], so this backend is the oracle the GPU
//! is checked against bit for bit

pub(crate) mod bound;
mod igemm;
pub(crate) mod oracle;
pub(crate) mod parts;
mod scheme1;
mod scheme2;

pub(crate) use scheme2::coarse_maxima;
#[cfg(all(test, feature = "cuda"))]
pub(crate) use {igemm::Planes, scheme1::digit_planes, scheme2::residue_planes};

use crate::operand::Operand;
use crate::scheme2::{CoarseMaxima, Crt};
use crate::stats::RowStats;
use crate::{PhaseTimes, Plan, Scaling, Scheme};
use std::time::Instant;

/// an emulated product before `alpha` and accumulation: `f64` parts, column-major
pub(crate) struct Parts {
	pub re: Vec<f64>,
	/// empty for real products
	pub im: Vec<f64>,
	/// where asked of a real scheme II product: the remainders of `re`, the scaled CRT value
	/// before its last rounding being exactly `re + lo`; empty otherwise (read as zeros)
	pub lo: Vec<f64>,
}

impl Parts {
	fn from_pairs(pairs: Vec<(f64, f64)>) -> Self {
		let (re, im) = pairs.into_iter().unzip();
		Parts { re, im, lo: Vec::new() }
	}
}

/// records the end of each phase
pub(crate) struct Timer {
	last: Instant,
	times: PhaseTimes,
}

impl Timer {
	pub fn start() -> Self {
		Timer {
			last: Instant::now(),
			times: PhaseTimes::default(),
		}
	}

	fn lap(&mut self) -> std::time::Duration {
		let now = Instant::now();
		let d = now - self.last;
		self.last = now;
		d
	}

	/// the error bound took `d` (within the split phase)
	pub fn bound_took(&mut self, d: std::time::Duration) {
		self.times.bound = d;
	}

	pub fn split_done(&mut self) {
		let d = self.lap();
		self.times.split += d;
	}

	pub fn products_done(&mut self) {
		let d = self.lap();
		self.times.products += d;
	}

	pub fn reconstruct_done(&mut self) {
		let d = self.lap();
		self.times.reconstruct += d;
	}

	pub fn times(&self) -> PhaseTimes {
		self.times
	}
}

/// `A B` by `plan` (an emulated one), with the rows of `A` and the columns of `B` given, and the
/// coarse maxima of accurate scaling (needed by its scheme II plans); with the CRT's remainders
/// ([`Parts::lo`]) where `remainders` and the plan is scheme II on real operands
pub(crate) fn emulate(
	a: &Operand,
	b: &Operand,
	stats: (&[RowStats], &[RowStats]),
	coarse: Option<&CoarseMaxima>,
	(plan, remainders): (&Plan, bool),
	timer: &mut Timer,
) -> Parts {
	match plan.scheme {
		Scheme::SchemeI { slices } => scheme1::product(a, b, slices, &plan.pass_ranges(a.k, a.is_complex()), timer),
		Scheme::SchemeII { moduli, scaling } => {
			debug_assert_eq!(
				coarse.is_some(),
				scaling == Scaling::Accurate,
				"accurate scaling reads the coarse maxima"
			);
			scheme2::product(a, b, stats, (Crt::of(moduli), remainders), coarse, timer)
		},
		Scheme::Native => unreachable!("native plans do not reach the emulation backend"),
	}
}
