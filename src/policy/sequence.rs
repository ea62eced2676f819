//! the policy's sequence of questions, asked in one place for every backend: the screen from the
//! operands' statistics, the plan from the error bound, then plans with separately scaled parts
//! where they may pay. Each backend answers through [`Evidence`], computing what a question needs
//! only when it is asked, so that every backend reaches the same plan on the same operands

use super::{Choice, PolicyInput};
use crate::Error;
use crate::Precision;
use crate::bound::{Bound, PartBounds};
use crate::stats::RowStats;

/// what a backend computes for the policy, on the operands as the emulation reads them (balanced
/// along K for target precisions), each when [`decide`] first asks for it
pub(crate) trait Evidence {
	/// the row statistics of the rows of `A` and of the columns of `B`
	fn stats(&mut self) -> Result<(&[RowStats], &[RowStats]), Error>;

	/// the product's error bound (under accurate scaling, with its coarse maxima)
	fn bound(&mut self) -> Result<Bound, Error>;

	/// the screen of separately scaled parts (the bound of `Re A Re B` on the leading rows and
	/// columns); `None` where the backend does not weigh such plans
	fn parts_screen(&mut self) -> Result<Option<Bound>, Error>;

	/// the bounds of the four real products of separately scaled parts
	fn parts_bounds(&mut self) -> Result<PartBounds, Error>;
}

/// what [`decide`] found: the choice, and what it was weighed on (for the ranking of every
/// candidate: [`PolicyInput::candidates`])
pub(crate) struct Decided {
	pub choice: Choice,
	/// the product's bound, where the screen left the product to it
	pub bound: Option<Bound>,
	/// the bounds of separately scaled parts, where they were weighed
	pub parts: Option<PartBounds>,
	/// whether the screen found that no plan certifies the product (no bound was computed)
	pub screened: bool,
}

impl Decided {
	/// every candidate of `precision` on what was weighed, cheapest first (see
	/// [`PolicyInput::candidates`]); where the screen left nothing to weigh, its native choice if
	/// the native product competes
	pub fn candidates(&self, input: PolicyInput<'_>, precision: Precision) -> Vec<Choice> {
		if self.screened && self.parts.is_none() {
			return [self.choice.clone()].into_iter().filter(|_| input.native_candidate).collect();
		}
		PolicyInput {
			bound: self.bound.as_ref(),
			parts: self.parts.as_ref(),
			..input
		}
		.candidates(precision)
	}
}

/// the choice for `precision` of the product `input` describes (without a bound): an explicit
/// precision's plan as given; for a target precision, the native product where the screen finds
/// that no plan certifies it, otherwise the plan the bound certifies; then, where that choice
/// leaves rows native and the screen of separately scaled parts says they may pay, plans with
/// separately scaled parts weighed against it
pub(crate) fn decide(input: PolicyInput<'_>, precision: Precision, evidence: &mut impl Evidence) -> Result<Decided, Error> {
	if precision.target_bits(input.mantissa, input.shape.k).is_none() {
		return Ok(Decided {
			choice: input.choose(precision),
			bound: None,
			parts: None,
			screened: false,
		});
	}
	let (first, bound, screened) = match input.screened(precision, evidence.stats()?) {
		Some(native) => (native, None, true),
		None => {
			let bound = evidence.bound()?;
			let first = PolicyInput {
				bound: Some(&bound),
				..input
			}
			.choose(precision);
			(first, Some(bound), false)
		},
	};
	let weighed = PolicyInput {
		bound: bound.as_ref(),
		..input
	};
	let mut parts = None;
	let mut choice = first;
	if weighed.weighs_separate_parts(&choice, precision)
		&& let Some(screen) = evidence.parts_screen()?
		&& weighed.separate_parts_pay(&choice, &screen, precision)
	{
		let bounds = evidence.parts_bounds()?;
		choice = weighed.with_parts(choice, &bounds, precision);
		parts = Some(bounds);
	}
	Ok(Decided {
		choice,
		bound,
		parts,
		screened,
	})
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::cpu::parts::PartOperands;
	use crate::operand::Operand;
	use crate::settings::Settings;
	use crate::shape::Shape;
	use crate::stats::row_stats;
	use crate::testing::{Pair, pair, random_matrix};
	use crate::{Scalar, Scheme};
	use faer::{Mat, c64};

	/// the host's answers, with a count of every question asked
	struct Counted {
		operands: (Operand, Operand),
		stats: (Vec<RowStats>, Vec<RowStats>),
		parts: Option<PartOperands>,
		asked: Vec<&'static str>,
	}

	impl Counted {
		fn new<T: Scalar>(a: &Mat<T>, b: &Mat<T>) -> Self {
			let operands = (Operand::lhs(a.as_ref()), Operand::rhs(b.as_ref()));
			let stats = (row_stats(&operands.0), row_stats(&operands.1));
			Counted {
				operands,
				stats,
				parts: None,
				asked: Vec::new(),
			}
		}
	}

	impl Evidence for Counted {
		fn stats(&mut self) -> Result<(&[RowStats], &[RowStats]), Error> {
			self.asked.push("stats");
			Ok((&self.stats.0, &self.stats.1))
		}

		fn bound(&mut self) -> Result<Bound, Error> {
			self.asked.push("bound");
			let stats = (&self.stats.0[..], &self.stats.1[..]);
			Ok(crate::cpu::bound::compute((&self.operands.0, &self.operands.1), stats, None, 52))
		}

		fn parts_screen(&mut self) -> Result<Option<Bound>, Error> {
			self.asked.push("parts screen");
			let parts = self.parts.insert(PartOperands::new(&self.operands.0, &self.operands.1, false));
			Ok(Some(parts.screen(52)))
		}

		fn parts_bounds(&mut self) -> Result<PartBounds, Error> {
			self.asked.push("parts bounds");
			Ok(self.parts.as_mut().unwrap().bounds(52))
		}
	}

	/// the CPU oracle's settings, with the native product reserved for what no plan certifies
	fn host_settings() -> Settings {
		crate::Emulator::with_backend(crate::Backend::CpuEmulation)
			.unwrap()
			.with_native_candidate(false)
			.settings()
	}

	fn decided<T: Scalar>(a: &Mat<T>, b: &Mat<T>, precision: Precision) -> (Decided, Vec<&'static str>) {
		let mut evidence = Counted::new(a, b);
		let settings = host_settings();
		let input = PolicyInput::in_context::<T>(Shape::new(a.nrows(), b.ncols(), a.ncols()), &settings);
		(decide(input, precision, &mut evidence).unwrap(), evidence.asked)
	}

	/// each question is asked only where the answers before it leave the choice open, and once: an
	/// explicit plan asks nothing; inputs the screen sends native pay no bound; ordinary ones pay
	/// the bound and, where it leaves no row native, nothing more; complex inputs whose imaginary
	/// parts lie far below their real parts weigh separately scaled parts after the screen
	#[test]
	fn asks_each_question_only_where_it_decides() {
		let (m, k, n) = (64, 512, 48);
		let (a, b) = (random_matrix::<f64>(m, k, 1.0, 1), random_matrix::<f64>(k, n, 1.0, 2));
		let (explicit, asked) = decided(&a, &b, Precision::SchemeII { moduli: 9 });
		assert!(asked.is_empty() && !explicit.screened && explicit.bound.is_none());
		assert!(matches!(explicit.choice.plan.scheme, Scheme::SchemeII { moduli: 9, .. }));
		let (ordinary, asked) = decided(&a, &b, Precision::F64);
		assert_eq!(asked, ["stats", "bound"]);
		assert!(ordinary.choice.native_rows.is_empty() && ordinary.bound.is_some() && ordinary.parts.is_none());
		let (wide_a, wide_b) = (random_matrix::<f64>(m, 8192, 8.0, 3), random_matrix::<f64>(8192, n, 8.0, 4));
		let (wide, asked) = decided(&wide_a, &wide_b, Precision::F64);
		assert_eq!(asked, ["stats"]);
		assert!(wide.screened && wide.choice.plan.scheme == Scheme::Native && wide.bound.is_none());
		let (sa, sb) = pair::<c64>(Pair::SmallImaginary { log2_ratio: 40 }, 32, 256, 32, 3);
		let (parts, asked) = decided(&sa, &sb, Precision::F64);
		assert_eq!(asked, ["stats", "parts screen", "parts bounds"]);
		assert!(
			parts.screened && parts.choice.plan.separate_parts && parts.parts.is_some(),
			"{:?}",
			parts.choice
		);
		assert!(
			parts.candidates(
				PolicyInput::in_context::<c64>(Shape::new(32, 32, 256), &host_settings()),
				Precision::F64
			)[0]
			.plan
			.separate_parts
		);
	}
}
