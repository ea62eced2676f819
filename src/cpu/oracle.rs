//! the CPU oracle ([`crate::Backend::CpuEmulation`]) on one request: the operands' statistics and
//! split, the error bound and the policy's choice, the integer products and the reconstruction,
//! bit for bit what the GPU computes

use super::parts::PartOperands;
use super::{Parts, Timer};
use crate::balance;
use crate::bound::{Bound, PartBounds};
use crate::fp::{Sum, combine};
use crate::native::{HostRequest, native_at, nonfinite_entries};
use crate::operand::Operand;
use crate::policy::{Choice, Decided, Evidence, PolicyInput};
use crate::report::{PhaseTimes, Report, Route};
use crate::request::Request;
use crate::scheme2::CoarseMaxima;
use crate::settings::Settings;
use crate::shape::Shape;
use crate::stats::{RowStats, row_stats};
use crate::{Backend, Error, Plan, Precision, Scalar, Scaling, Scheme};
use faer::{Accum, Mat, MatMut};
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

fn mask(len: usize, set: &[usize]) -> Vec<bool> {
	let mut m = vec![false; len];
	set.iter().for_each(|&i| m[i] = true);
	m
}

/// a request as the oracle computes it: the operands as it reads them, their statistics, and the
/// policy's choice on them
pub(crate) struct Prepared {
	a: Operand,
	b: Operand,
	sa: Vec<RowStats>,
	sb: Vec<RowStats>,
	/// the coarse maxima of accurate scaling, where it needs them
	coarse: Option<CoarseMaxima>,
	/// the operands' parts, for a plan with separately scaled parts
	parts: Option<PartOperands>,
	pub choice: Choice,
	/// the error bound's and the policy's time
	bound_time: Duration,
}

impl Prepared {
	/// the integer products and their reconstruction by `plan`: of the separately scaled parts
	/// where the choice took them, else of the operands whole
	fn products(&self, plan: &Plan, timer: &mut Timer) -> Parts {
		match &self.parts {
			Some(ops) => ops.emulate(plan, timer),
			None => super::emulate(&self.a, &self.b, (&self.sa, &self.sb), self.coarse.as_ref(), (plan, false), timer),
		}
	}
}

/// the report of a product computed on the host's cores, by the oracle or natively (`choice`'s
/// plan native)
pub(crate) fn report<T: Scalar>(choice: Choice, shape: Shape, nonfinite_entries: usize, times: PhaseTimes) -> Report {
	let Choice { plan, native_rows, reason } = choice;
	let (backend, route) = if plan.scheme == Scheme::Native {
		(Backend::Native, Route::Native)
	} else {
		(Backend::CpuEmulation, Route::Cpu)
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
		shared_launch: None,
		native_reason: reason,
	}
}

/// the operands of an emulated `request` as the oracle reads them: for a target precision
/// balanced along the inner dimension ([`crate::balance`], exact: the product is unchanged)
fn operands<T: Scalar>(request: &HostRequest<'_, T>) -> (Operand, Operand) {
	let (mut a, mut b) = (Operand::lhs(request.lhs), Operand::rhs(request.rhs));
	if a.k > 0 && request.precision.target_bits(T::MANTISSA_BITS, a.k).is_some() {
		let normal = balance::normal_exponents(T::MANTISSA_BITS);
		if let Some(d) = balance::shifts(&a.inner_ranges(), &b.inner_ranges(), normal) {
			a.scale_inner(&d, 1);
			b.scale_inner(&d, -1);
		}
	}
	(a, b)
}

/// an emulated `request`'s operands as the oracle reads them, their statistics, and the policy's
/// decision on them ([`crate::policy::decide`], asking [`HostEvidence`])
pub(crate) fn prepare<T: Scalar>(request: &HostRequest<'_, T>) -> Prepared {
	let (a, b) = operands(request);
	let (sa, sb) = (row_stats(&a), row_stats(&b));
	let start = Instant::now();
	let (decided, coarse, parts) = decide::<T>(request, (&a, &b), (&sa, &sb));
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

/// the plans the policy weighs for an emulated `request`, cheapest first
/// (what `Emulator::candidates` returns)
pub(crate) fn candidates<T: Scalar>(request: &HostRequest<'_, T>) -> Vec<Plan> {
	let (a, b) = operands(request);
	let (sa, sb) = (row_stats(&a), row_stats(&b));
	let (decided, ..) = decide::<T>(request, (&a, &b), (&sa, &sb));
	let ranked = decided.candidates(PolicyInput::in_context::<T>(request.shape, &request.settings), request.precision);
	ranked.into_iter().map(|c| c.plan).collect()
}

/// the policy's decision on the operands as the oracle reads them, with the coarse maxima of
/// accurate scaling where the product needs them (a product the screen leaves native does not)
/// and the separately scaled parts where the policy weighed them
fn decide<T: Scalar>(
	request: &HostRequest<'_, T>,
	(a, b): (&Operand, &Operand),
	(sa, sb): (&[RowStats], &[RowStats]),
) -> (Decided, Option<CoarseMaxima>, Option<PartOperands>) {
	let Request { precision, settings, .. } = *request;
	let mut evidence = HostEvidence {
		settings,
		operands: (a, b),
		stats: (sa, sb),
		precision,
		mantissa: T::MANTISSA_BITS,
		coarse: None,
		parts: None,
	};
	let input = PolicyInput::in_context::<T>(Shape::new(a.len, b.len, a.k), &settings);
	let decided = match crate::policy::decide(input, precision, &mut evidence) {
		Ok(decided) => decided,
		Err(e) => unreachable!("the host's evidence is infallible: {e}"),
	};
	let HostEvidence { coarse, parts, .. } = evidence;
	let coarse = match coarse {
		Some(coarse) => Some(coarse),
		None if !decided.screened => coarse_maxima(&settings, (a, b), precision),
		None => None,
	};
	(decided, coarse, parts)
}

/// the coarse maxima of accurate scaling, computed once for the bound and the product (as the
/// GPU pipeline does): under [`Scaling::Accurate`], for target precisions and scheme II plans
fn coarse_maxima(settings: &Settings, (a, b): (&Operand, &Operand), precision: Precision) -> Option<CoarseMaxima> {
	let needed = !matches!(precision, Precision::SchemeI { .. });
	(settings.scaling == Scaling::Accurate && a.k > 0 && needed).then(|| super::coarse_maxima(a, b))
}

/// `request` computed by the oracle: the policy's plan, its native rows, and the entries of
/// non-finite rows and columns computed natively. The front door sends here only what it
/// emulates: a product of K > 0 on the CPU emulation backend
pub(crate) fn emulate<T: Scalar>(mut dst: MatMut<'_, T>, request: &HostRequest<'_, T>) -> Report {
	let mut timer = Timer::start();
	let Request { shape, accum, alpha, .. } = *request;
	let prepared = prepare(request);
	timer.bound_took(prepared.bound_time);
	let plan = prepared.choice.plan;
	if plan.scheme == Scheme::Native {
		native_at(dst, request);
		return report::<T>(prepared.choice, shape, 0, timer.times());
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
			dst[(i, j)] = combine(c, alpha, old, Sum::Emulated);
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
		let one_row = Request {
			accum: Accum::Replace,
			..request.on((request.lhs.subrows(i, 1), request.rhs), Shape { m: 1, ..shape })
		};
		native_at(row.as_mut(), &one_row);
		for j in (0..b.len).filter(|&j| !bad_cols[j]) {
			let (old, v) = (dst[(i, j)], row[(0, j)]);
			dst[(i, j)] = if accum == Accum::Add {
				T::from_parts(old.re() + v.re(), old.im() + v.im())
			} else {
				v
			};
		}
	}
	nonfinite_entries(dst.as_mut(), request, (&a.nonfinite, &b.nonfinite));
	let nonfinite = entries(m, b.len, a.nonfinite.len(), b.nonfinite.len());
	report::<T>(choice, shape, nonfinite, timer.times())
}

/// the CPU oracle's answers to the policy, on the operands as the emulation reads them
struct HostEvidence<'o> {
	settings: Settings,
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
		self.coarse = coarse_maxima(&self.settings, (a, b), self.precision);
		Ok(super::bound::compute((a, b), self.stats, self.coarse.as_ref(), self.mantissa))
	}

	fn parts_screen(&mut self) -> Result<Option<Bound>, Error> {
		let (a, b) = self.operands;
		let parts = self
			.parts
			.insert(PartOperands::new(a, b, self.settings.scaling == Scaling::Accurate));
		Ok(Some(parts.screen(self.mantissa)))
	}

	fn parts_bounds(&mut self) -> Result<PartBounds, Error> {
		let parts = self.parts.as_mut().expect("the policy screens the parts before their bounds");
		Ok(parts.bounds(self.mantissa))
	}
}
