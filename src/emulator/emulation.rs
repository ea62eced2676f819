//! the emulation on the host's cores ([`crate::Backend::CpuEmulation`]): the operands' statistics and
//! split, the error bound and the policy's choice, the integer products and the reconstruction,
//! bit for bit what the GPU computes

use super::Emulator;
use super::native::{native_at, nonfinite_entries};
use crate::Backend;
use crate::balance;
use crate::bound::{Bound, PartBounds};
use crate::cpu::parts::PartOperands;
use crate::cpu::{self, Parts, Timer};
use crate::fp::combine;
use crate::operand::Operand;
use crate::policy::{Choice, Decided, Evidence, PolicyInput};
use crate::report::{NativeReason, PhaseTimes, Report, Route};
use crate::scheme2::CoarseMaxima;
use crate::shape::Shape;
use crate::stats::{RowStats, row_stats};
use crate::view::View;
use crate::{Error, Plan, Precision, Scalar, Scaling, Scheme};
use faer::{Accum, Mat, MatMut, Par};
use std::time::{Duration, Instant};

/// the ascending union of two ascending lists of rows
pub(crate) fn merged(x: &[usize], y: &[usize]) -> Vec<usize> {
	let mut v: Vec<usize> = x.iter().chain(y).copied().collect();
	v.sort_unstable();
	v.dedup();
	v
}

/// the entries of an `m x n` product that lie in `rows` rows or `cols` columns
pub(crate) fn entries(m: usize, n: usize, rows: usize, cols: usize) -> usize {
	rows * n + cols * m - rows * cols
}

pub(super) fn mask(len: usize, set: &[usize]) -> Vec<bool> {
	let mut m = vec![false; len];
	set.iter().for_each(|&i| m[i] = true);
	m
}

pub(super) struct Prepared {
	pub(super) a: Operand,
	pub(super) b: Operand,
	pub(super) sa: Vec<RowStats>,
	pub(super) sb: Vec<RowStats>,
	/// the coarse maxima of accurate scaling, where it needs them
	pub(super) coarse: Option<CoarseMaxima>,
	/// the operands' parts, for a plan with separately scaled parts
	pub(super) parts: Option<PartOperands>,
	pub(super) choice: Choice,
	/// the error bound's and the policy's time
	pub(super) bound_time: Duration,
}

impl Prepared {
	/// the integer products and their reconstruction by `plan`: of the separately scaled parts
	/// where the choice took them, else of the operands whole
	fn products(&self, plan: &Plan, timer: &mut Timer) -> Parts {
		match &self.parts {
			Some(ops) => ops.emulate(plan, timer),
			None => cpu::emulate(&self.a, &self.b, (&self.sa, &self.sb), self.coarse.as_ref(), (plan, false), timer),
		}
	}
}

impl Emulator {
	pub(super) fn report<T: Scalar>(&self, choice: Choice, shape: Shape, nonfinite_entries: usize, times: PhaseTimes) -> Report {
		let Choice { plan, native_rows, reason } = choice;
		let (backend, route) = if plan.scheme == Scheme::Native {
			(Backend::Native, Route::Native)
		} else {
			(self.backend, Route::Cpu)
		};
		Report {
			backend,
			plan,
			route,
			shape: shape.into_tuple(),
			element: T::NAME,
			nonfinite_entries,
			native_rows,
			times,
			host_routing: None,
			tiles: None,
			native_reason: reason,
		}
	}

	/// the operands as the emulation sees them: for a target precision balanced along the inner
	/// dimension ([`crate::balance`], exact: the product is unchanged)
	pub(super) fn operands<T: Scalar>(&self, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> (Operand, Operand) {
		let (mut a, mut b) = (Operand::lhs(lhs), Operand::rhs(rhs));
		if self.emulates(a.k) && precision.target_bits(T::MANTISSA_BITS, a.k).is_some() {
			let normal = balance::normal_exponents(T::MANTISSA_BITS);
			if let Some(d) = balance::shifts(&a.inner_ranges(), &b.inner_ranges(), normal) {
				a.scale_inner(&d, 1);
				b.scale_inner(&d, -1);
			}
		}
		(a, b)
	}

	/// the operands as the emulation reads them, their statistics, and the policy's decision on
	/// them ([`crate::policy::decide`], asking [`HostEvidence`])
	pub(super) fn prepare<T: Scalar>(&self, lhs: View<'_, T>, rhs: View<'_, T>, precision: Precision) -> Prepared {
		let (a, b) = self.operands(lhs, rhs, precision);
		let (sa, sb) = (row_stats(&a), row_stats(&b));
		let start = Instant::now();
		let (decided, coarse, parts) = self.decide::<T>((&a, &b), (&sa, &sb), precision);
		let choice = decided.choice;
		let parts = parts.filter(|_| choice.plan.separate_parts);
		let bound_time = start.elapsed();
		Prepared {
			a,
			b,
			sa,
			sb,
			coarse,
			parts,
			choice,
			bound_time,
		}
	}

	/// the policy's decision on the operands as the emulation reads them, with the coarse maxima
	/// of accurate scaling where the product needs them (a product the screen leaves native does
	/// not) and the separately scaled parts where the policy weighed them
	pub(super) fn decide<T: Scalar>(
		&self,
		(a, b): (&Operand, &Operand),
		(sa, sb): (&[RowStats], &[RowStats]),
		precision: Precision,
	) -> (Decided, Option<CoarseMaxima>, Option<PartOperands>) {
		let shape = Shape::new(a.len, b.len, a.k);
		let mut evidence = HostEvidence {
			emu: self,
			operands: (a, b),
			stats: (sa, sb),
			precision,
			mantissa: T::MANTISSA_BITS,
			coarse: None,
			parts: None,
		};
		let decided = match crate::policy::decide(self.policy_input::<T>(shape), precision, &mut evidence) {
			Ok(decided) => decided,
			Err(e) => unreachable!("the host's evidence is infallible: {e}"),
		};
		let HostEvidence { coarse, parts, .. } = evidence;
		let coarse = match coarse {
			Some(coarse) => Some(coarse),
			None if !decided.screened => self.coarse(a, b, precision),
			None => None,
		};
		(decided, coarse, parts)
	}

	/// where a GPU context routes a host product of `shape` at a target `precision` to the host's
	/// cores: with host routing on ([`Emulator::with_host_routing`]) and the host predicted faster
	#[cfg(feature = "cuda")]
	pub(super) fn host_route<T: Scalar>(&self, shape: Shape, accum: Accum, precision: Precision) -> Option<crate::HostRouting> {
		if !self.settings.host_routing || precision.target_bits(T::MANTISSA_BITS, shape.k).is_none() {
			return None;
		}
		let routing = crate::routing::route::<T>(
			shape,
			accum,
			precision,
			(crate::routing::host_rate::<T>(), self.settings.model.model()),
		);
		routing.on_host().then_some(routing)
	}

	/// why a product of `shape` at `precision` is computed natively before any bound, where it is:
	/// this context does not emulate it or it is empty, it is below the native size, or the native
	/// product is predicted faster than any emulation plus the bound ([`PolicyInput::skips_bound`])
	pub(super) fn goes_native<T: Scalar>(&self, shape: Shape, precision: Precision) -> Option<NativeReason> {
		if !self.emulates(shape.k) || shape.is_empty() {
			Some(NativeReason::NotEmulated)
		} else if self.below_native_size(shape) {
			Some(NativeReason::BelowNativeSize)
		} else {
			self.policy_input::<T>(shape)
				.skips_bound(precision)
				.then_some(NativeReason::FasterNatively)
		}
	}

	/// whether a dimension of `shape` is below [`Emulator::with_native_below`]'s size
	pub(super) fn below_native_size(&self, Shape { m, n, k }: Shape) -> bool {
		m.min(n).min(k) < self.native_below
	}

	/// whether this context emulates a product of inner dimension `k` (not on
	/// [`Backend::Native`], nor for K = 0)
	pub(super) fn emulates(&self, k: usize) -> bool {
		matches!(self.backend, Backend::CpuEmulation | Backend::Gpu) && k > 0
	}

	/// the coarse maxima of accurate scaling, computed once for the bound and the product (as the
	/// GPU pipeline does): under [`Scaling::Accurate`], for target precisions and scheme II plans
	pub(super) fn coarse(&self, a: &Operand, b: &Operand, precision: Precision) -> Option<CoarseMaxima> {
		let needed = !matches!(precision, Precision::SchemeI { .. });
		(self.settings.scaling == Scaling::Accurate && self.emulates(a.k) && needed).then(|| cpu::coarse_maxima(a, b))
	}

	/// the policy's view of a product of `shape` in this context, before any bound
	pub(super) fn policy_input<T: Scalar>(&self, shape: Shape) -> PolicyInput<'static> {
		PolicyInput::in_context::<T>(shape, &self.settings)
	}

	pub(super) fn emulate<T: Scalar>(
		&self,
		mut dst: MatMut<'_, T>,
		accum: Accum,
		(lhs, rhs): (View<'_, T>, View<'_, T>),
		alpha: T,
		(precision, par): (Precision, Par),
	) -> Report {
		let mut timer = Timer::start();
		let shape = Shape::new(lhs.nrows(), rhs.ncols(), lhs.ncols());
		if let Some(reason) = self.goes_native::<T>(shape, precision) {
			native_at(dst, accum, (lhs, rhs), alpha, (precision, par));
			return self.report::<T>(Choice::native(shape.m, reason), shape, 0, timer.times());
		}
		let prepared = self.prepare(lhs, rhs, precision);
		timer.bound_took(prepared.bound_time);
		let plan = prepared.choice.plan;
		if plan.scheme == Scheme::Native {
			native_at(dst, accum, (lhs, rhs), alpha, (precision, par));
			return self.report::<T>(prepared.choice, shape, 0, timer.times());
		}
		let parts = prepared.products(&plan, &mut timer);
		let Prepared { a, b, choice, .. } = prepared;
		let m = a.len;
		let native_rows = merged(&a.nonfinite, &choice.native_rows);
		let (bad_rows, bad_cols) = (mask(m, &native_rows), mask(b.len, &b.nonfinite));
		for j in (0..b.len).filter(|&j| !bad_cols[j]) {
			for i in (0..m).filter(|&i| !bad_rows[i]) {
				let c = (parts.re[i + j * m], parts.im.get(i + j * m).copied().unwrap_or(0.0));
				let old = (accum == Accum::Add).then(|| dst[(i, j)]);
				dst[(i, j)] = combine(c, alpha, old);
			}
		}
		let uncertified: Vec<usize> = choice
			.native_rows
			.iter()
			.copied()
			.filter(|i| a.nonfinite.binary_search(i).is_err())
			.collect();
		for &i in &uncertified {
			let mut row = Mat::<T>::zeros(1, b.len);
			native_at(row.as_mut(), Accum::Replace, (lhs.subrows(i, 1), rhs), alpha, (precision, par));
			for j in (0..b.len).filter(|&j| !bad_cols[j]) {
				let (old, v) = (dst[(i, j)], row[(0, j)]);
				dst[(i, j)] = if accum == Accum::Add {
					T::from_parts(old.re() + v.re(), old.im() + v.im())
				} else {
					v
				};
			}
		}
		nonfinite_entries(dst, accum, (lhs, rhs), alpha, (&a.nonfinite, &b.nonfinite));
		let nonfinite = entries(m, b.len, a.nonfinite.len(), b.nonfinite.len());
		self.report::<T>(choice, shape, nonfinite, timer.times())
	}
}

/// the CPU oracle's answers to the policy, on the operands as the emulation reads them
struct HostEvidence<'o> {
	emu: &'o Emulator,
	operands: (&'o Operand, &'o Operand),
	stats: (&'o [RowStats], &'o [RowStats]),
	precision: Precision,
	mantissa: u32,
	/// accurate scaling's coarse maxima, computed for the bound (the product reads them too)
	coarse: Option<CoarseMaxima>,
	/// the separately scaled parts, split for their screen
	parts: Option<PartOperands>,
}

impl Evidence for HostEvidence<'_> {
	fn stats(&mut self) -> Result<(&[RowStats], &[RowStats]), Error> {
		Ok(self.stats)
	}

	fn bound(&mut self) -> Result<Bound, Error> {
		let (a, b) = self.operands;
		self.coarse = self.emu.coarse(a, b, self.precision);
		Ok(cpu::bound::compute((a, b), self.stats, self.coarse.as_ref(), self.mantissa))
	}

	fn parts_screen(&mut self) -> Result<Option<Bound>, Error> {
		let (a, b) = self.operands;
		let parts = self
			.parts
			.insert(PartOperands::new(a, b, self.emu.settings.scaling == Scaling::Accurate));
		Ok(Some(parts.screen(self.mantissa)))
	}

	fn parts_bounds(&mut self) -> Result<PartBounds, Error> {
		let parts = self.parts.as_mut().expect("the policy screens the parts before their bounds");
		Ok(parts.bounds(self.mantissa))
	}
}
