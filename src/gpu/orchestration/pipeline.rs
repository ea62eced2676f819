//! the Ozaki pipeline on the GPU: statistics, policy, split, exact INT8 products (the mod-m
//! reduction fused into our wgmma kernels for scheme II), reconstruction; every constant comes
//! from the same Rust functions as the CPU oracle's

use crate::bound::{Bound, PartBounds};
use crate::cost::NativeArithmetic;
use crate::gpu::kernels::native::{self, fixup, whole_native};
use crate::gpu::kernels::residues::fused_route;
use crate::gpu::kernels::stats::{OperandStats, nonfinite_entries};
use crate::gpu::product::job::{Clock, DeviceOperand, Job, Outcome, Output, Phase, Terms, pad16};
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{ptr, to_device};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::schemes::resident::{Resident, gram_stats, operand_stats};
use crate::gpu::schemes::scheme1_fused;
use crate::gpu::schemes::scheme1_unfused;
use crate::gpu::schemes::scheme2;
use crate::gpu::schemes::scheme2::coarse_maxima;
use crate::policy::{Choice, Evidence, PolicyInput, native_arithmetic};
use crate::scheme2::CoarseMaxima;
use crate::screen;
use crate::settings::Settings;
use crate::shape::Shape;
use crate::stats::RowStats;
use crate::{Error, NativeReason, PhaseTimes, Plan, Precision, Route, Scalar, Scaling, Scheme};
use cudarc::driver::CudaSlice;

/// `dst = alpha A B (+ dst)` on the GPU (see [`Terms`])
pub(crate) fn product<T: Scalar>(
	gpu: &Gpu,
	(a, b): (DeviceOperand<T>, DeviceOperand<T>),
	out: Output<T>,
	alpha: T,
	mut terms: Terms<'_>,
	keep: (Option<&mut Resident>, Option<&mut Resident>),
) -> Result<Outcome, Error> {
	let outcome = compute(gpu, (a, b), out, alpha, &mut terms, keep)?;
	if let Some(columns) = terms.columns {
		columns.finish(b.rows)?;
	}
	Ok(outcome)
}

/// [`product`], but for the columns of routes that compute the output whole
fn compute<T: Scalar>(
	gpu: &Gpu,
	(a, b): (DeviceOperand<T>, DeviceOperand<T>),
	out: Output<T>,
	alpha: T,
	terms: &mut Terms<'_>,
	(mut keep_a, mut keep_b): (Option<&mut Resident>, Option<&mut Resident>),
) -> Result<Outcome, Error> {
	let (precision, settings, given) = (terms.precision, terms.settings, terms.given);
	let mut clock = Clock::start(gpu, terms.timed)?;
	let (m, n, k) = (a.rows, b.rows, a.k);
	let empty = m == 0 || n == 0 || k == 0;
	if empty || (given.is_none() && PolicyInput::in_context::<T>(Shape::new(m, n, k), &settings).native_from_shape(precision, 1)) {
		let reason = if empty {
			native::native::<T>(gpu, &a, &b, &out, alpha, precision)?;
			NativeReason::NotEmulated
		} else {
			whole_native::<T>(gpu, (a, b), out, alpha, precision, None)?;
			NativeReason::FasterNatively
		};
		return Ok(Outcome::native(m, reason));
	}
	// a target precision reads the operands balanced along K (exact; kept statistics and splits
	// are those of the unbalanced operands, so nothing is kept then)
	let target = precision.target_bits(T::MANTISSA_BITS, k).is_some();
	let inner = match (given.is_none() && target, terms.gram) {
		(false, _) => None,
		(true, false) => Some(crate::gpu::kernels::balance::inner_balance::<T>(gpu, (&a, &b))?),
		// a Gram product's inner ranges are one operand's (`B`'s row t is `A`'s column t,
		// conjugated): nothing to balance, and only a real product reads the ranges
		(true, true) if T::IS_COMPLEX => None,
		(true, true) => Some(crate::gpu::kernels::balance::gram_balance::<T>(gpu, &a)?),
	};
	let computed = inner.as_ref().and_then(|x| x.shifts.as_deref());
	let shifts = given.and_then(|g| g.balance.as_deref()).or(computed);
	// a real product the sampled screen leaves native runs natively on the operands as given,
	// before the balanced copies and the statistics (complex ones weigh separately scaled parts
	// after it, from the balanced operands). It runs here only where the ranges are wide; the
	// screen after the statistics asks it again, so that every product is decided alike
	if !T::IS_COMPLEX
		&& inner.as_ref().is_some_and(|x| wide_ranges(&x.ranges))
		&& let Some(screened) = sampled_screen::<T>(gpu, (&a, &b), shifts, terms)?
	{
		whole_native::<T>(gpu, (a, b), out, alpha, precision, None)?;
		return Ok(screened.outcome(Route::Native, 0, PhaseTimes::default()));
	}
	let balanced = shifts
		.map(|d| crate::gpu::kernels::balance::balanced::<T>(gpu, (&a, &b), d))
		.transpose()?;
	let (a, b) = balanced.as_ref().map_or((a, b), |x| (x.a, x.b));
	// (but the tiles of one product balance alike, and keep only among themselves)
	if balanced.is_some() && given.is_none() {
		(keep_a, keep_b) = (None, None);
	}
	// balancing scales A's columns and B's rows apart: a balanced Gram product is not one
	terms.gram &= balanced.is_none();
	let (sa, sb) = match terms.gram {
		true => gram_stats::<T>(gpu, &a)?,
		false => operand_stats::<T>(gpu, (&a, &b), (keep_a.as_deref_mut(), keep_b.as_deref_mut()))?,
	};
	let (decision, coarse) = decide::<T>(gpu, (&a, &b), (&sa, &sb), terms)?;
	let plan = decision.choice.plan;
	if plan.scheme == Scheme::Native {
		whole_native::<T>(gpu, (a, b), out, alpha, precision, Some((&sa, &sb)))?;
		return Ok(decision.outcome(Route::Native, 0, PhaseTimes::default()));
	}
	let natives = NativeRows::new::<T>(gpu, &decision, (&sa, &sb), precision)?;
	let nonfinite_entries = nonfinite_entries(natives.bad, (m, n));
	let emulation = Emulation {
		job: natives.job(gpu, (a, b), out, alpha, (&sa, &sb)),
		stats: (&sa, &sb),
		plan,
		settings,
		coarse: coarse.as_ref(),
		natives: &natives,
	};
	let (route, times) = match &decision.parts {
		Some(ops) => separate_parts(&emulation, ops, &mut clock)?,
		None => {
			let route = emulate(&emulation, (keep_a, keep_b), terms, &mut clock)?;
			clock.mark(gpu, Phase::Reconstruct)?;
			(route, clock.phase_times()?)
		},
	};
	Ok(decision.outcome(route, nonfinite_entries, times))
}

/// what the emulation of a product reads once the policy has decided it: its job (the rows it
/// skips flagged), the operands' statistics, the plan and the settings it runs by, accurate
/// scaling's coarse maxima where the product reads them, and the rows left to the native product
struct Emulation<'e, T: Scalar> {
	job: Job<'e, T>,
	stats: (&'e OperandStats, &'e OperandStats),
	plan: Plan,
	settings: Settings,
	coarse: Option<&'e CoarseMaxima>,
	natives: &'e NativeRows,
}

/// the product of separately scaled parts `ops` by `emulation`'s plan, and its native rows; the
/// route and the phases: the statistics, bounds and policy before the real products join their
/// splits; their reconstructions, the combination and the fixup are the reconstruction
fn separate_parts<T: Scalar>(
	emulation: &Emulation<'_, T>,
	ops: &crate::gpu::schemes::parts::PartOperands,
	clock: &mut Clock,
) -> Result<(Route, PhaseTimes), Error> {
	let job = &emulation.job;
	clock.mark(job.gpu, Phase::Split)?;
	let real = |a, b, out, terms: Terms<'_>| product::<f64>(job.gpu, (a, b), out, 1.0, terms, (None, None));
	let (route, real) = ops.product(job, &emulation.plan, emulation.settings, real)?;
	emulation.natives.compute(job)?;
	clock.mark(job.gpu, Phase::Reconstruct)?;
	let laps = clock.laps()?;
	let (before, after) = (laps[0], laps[1]);
	let times = PhaseTimes {
		split: before + real.split,
		products: real.products,
		reconstruct: after.saturating_sub(real.split + real.products),
		total: before + after,
		..PhaseTimes::default()
	};
	Ok((route, times))
}

/// what the policy decided: the choice, the operands' separately scaled parts where the plan
/// takes them, and the host time of the bound (it ends with a download that waits for its
/// kernels) and the policy
struct Decision {
	choice: Choice,
	parts: Option<crate::gpu::schemes::parts::PartOperands>,
	bound_time: std::time::Duration,
}

impl Decision {
	/// what a product that followed this decision reports, with its route, its non-finite
	/// entries and the times of its phases (the bound's added)
	fn outcome(&self, route: Route, nonfinite_entries: usize, times: PhaseTimes) -> Outcome {
		Outcome {
			plan: self.choice.plan,
			route,
			nonfinite_entries,
			native_rows: self.choice.native_rows.clone(),
			times: PhaseTimes {
				bound: self.bound_time,
				..times
			},
			native_reason: self.choice.reason,
		}
	}
}

/// the span, in binades, of the parts at a typical inner index from which the sampled screen
/// runs before the whole operands' statistics: the inputs it sends natively span more (phi = 4:
/// about 55 binades along an inner index of 8192 entries), ordinary ones less (phi = 1: about
/// 25), which then do not pay its launches twice
const WIDE_SPAN: i32 = 32;

/// whether the parts at the median inner index of either operand (`ranges`: per operand, per
/// inner index) span [`WIDE_SPAN`] binades or more
fn wide_ranges(ranges: &[Vec<crate::balance::Range>]) -> bool {
	ranges.iter().any(|r| {
		let mut spans: Vec<i32> = r.iter().filter(|x| x.max >= x.min).map(|x| x.max - x.min).collect();
		let mid = spans.len() / 2;
		!spans.is_empty() && *spans.select_nth_unstable(mid).1 >= WIDE_SPAN
	})
}

/// the sampled screen's native decision ([`crate::screen::sampled`]) for a product of `a` and
/// `b` at `terms`'s target precision: from the statistics of evenly spaced rows of `A` and
/// columns of `B` (strided views of the operands, balanced by `shifts` in small copies), `None`
/// where it leaves the product to the full statistics or the operands are too small to sample
fn sampled_screen<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand<T>, &DeviceOperand<T>),
	shifts: Option<&[i32]>,
	terms: &Terms<'_>,
) -> Result<Option<Decision>, Error> {
	let start = std::time::Instant::now();
	let (Some(stride_a), Some(stride_b)) = (screen::sample_stride(a.rows), screen::sample_stride(b.rows)) else {
		return Ok(None);
	};
	let view = |op: &DeviceOperand<T>, stride: usize| DeviceOperand {
		rows: op.rows.div_ceil(stride),
		rs: op.rs * stride as i64,
		..*op
	};
	let (va, vb) = (view(a, stride_a), view(b, stride_b));
	let balanced = shifts
		.map(|d| crate::gpu::kernels::balance::balanced::<T>(gpu, (&va, &vb), d))
		.transpose()?;
	let (va, vb) = balanced.as_ref().map_or((va, vb), |x| (x.a, x.b));
	let (sa, sb) = operand_stats::<T>(gpu, (&va, &vb), (None, None))?;
	let shape = Shape::new(a.rows, b.rows, a.k);
	let choice = PolicyInput::in_context::<T>(shape, &terms.settings).screened_sample(terms.precision, (&sa.rows, &sb.rows));
	Ok(choice.map(|choice| Decision {
		choice,
		parts: None,
		bound_time: start.elapsed(),
	}))
}

/// the plan of the product of `a` and `b` (statistics `sa`, `sb`): a tile's from the whole
/// product; otherwise the policy's ([`crate::policy::decide`], asking [`PipelineEvidence`]),
/// with the coarse maxima of accurate scaling where the product needs them (a product the screen
/// leaves native pays neither them nor the bound); its host time counted from the statistics
fn decide<T: Scalar>(
	gpu: &Gpu,
	operands: (&DeviceOperand<T>, &DeviceOperand<T>),
	stats: (&OperandStats, &OperandStats),
	terms: &Terms<'_>,
) -> Result<(Decision, Option<CoarseMaxima>), Error> {
	let start = std::time::Instant::now();
	let (precision, settings) = (terms.precision, terms.settings);
	if let Some(given) = terms.given {
		let decision = Decision {
			choice: given.choice.clone(),
			parts: None,
			bound_time: start.elapsed(),
		};
		return Ok((decision, None));
	}
	let (a, b) = operands;
	let mut evidence = PipelineEvidence {
		gpu,
		operands,
		stats,
		precision,
		scaling: settings.scaling,
		gram: terms.gram,
		coarse: None,
		parts: None,
	};
	let decided = crate::policy::decide(
		PolicyInput::in_context::<T>(Shape::new(a.rows, b.rows, a.k), &settings),
		precision,
		&mut evidence,
	)?;
	let PipelineEvidence { coarse, parts, .. } = evidence;
	let coarse = match coarse {
		None if !decided.screened && needs_coarse::<T>(precision, settings.scaling, a.k) => Some(coarse_maxima::<T>(gpu, operands, stats)?),
		coarse => coarse,
	};
	let decision = Decision {
		parts: parts.filter(|_| decided.choice.plan.separate_parts),
		choice: decided.choice,
		bound_time: start.elapsed(),
	};
	Ok((decision, coarse))
}

/// whether a product at `precision` under `scaling` reads accurate scaling's coarse maxima: a
/// target precision's bound, and a scheme II product's shifts
fn needs_coarse<T: Scalar>(precision: Precision, scaling: Scaling, k: usize) -> bool {
	let target = precision.target_bits(T::MANTISSA_BITS, k).is_some();
	scaling == Scaling::Accurate && (target || matches!(precision, Precision::SchemeII { .. }))
}

/// the GPU pipeline's answers to the policy, on the operands as the emulation reads them
struct PipelineEvidence<'e, T: Scalar> {
	gpu: &'e Gpu,
	operands: (&'e DeviceOperand<T>, &'e DeviceOperand<T>),
	stats: (&'e OperandStats, &'e OperandStats),
	precision: Precision,
	scaling: Scaling,
	/// a Gram product's (see [`Terms::gram`]): its bound from A alone
	gram: bool,
	/// accurate scaling's coarse maxima, computed for the bound (the product reads them too)
	coarse: Option<CoarseMaxima>,
	/// the separately scaled parts, split for their bounds
	parts: Option<crate::gpu::schemes::parts::PartOperands>,
}

impl<T: Scalar> Evidence for PipelineEvidence<'_, T> {
	fn stats(&mut self) -> Result<(&[RowStats], &[RowStats]), Error> {
		Ok((&self.stats.0.rows, &self.stats.1.rows))
	}

	fn bound(&mut self) -> Result<Bound, Error> {
		let (gpu, operands, stats) = (self.gpu, self.operands, self.stats);
		if needs_coarse::<T>(self.precision, self.scaling, operands.0.k) {
			self.coarse = Some(coarse_maxima::<T>(gpu, operands, stats)?);
		}
		let coarse = self.coarse.as_ref();
		if self.gram
			&& let Some(bound) = crate::gpu::kernels::bound::gram_bound::<T>(gpu, operands.0, stats.0, coarse, T::MANTISSA_BITS)?
		{
			return Ok(bound);
		}
		crate::gpu::kernels::bound::bound::<T>(gpu, operands, stats, coarse, T::MANTISSA_BITS)
	}

	fn parts_screen(&mut self) -> Result<Option<Bound>, Error> {
		crate::gpu::schemes::parts::screen::<T>(self.gpu, self.operands, T::MANTISSA_BITS, self.scaling).map(Some)
	}

	fn parts_bounds(&mut self) -> Result<PartBounds, Error> {
		let parts = crate::gpu::schemes::parts::split::<T>(self.gpu, self.operands)?;
		let bounds = parts.bounds(self.gpu, T::MANTISSA_BITS, self.scaling)?;
		self.parts = Some(parts);
		Ok(bounds)
	}
}

/// the rows the emulation skips and the native product computes: those the bound leaves native
/// besides the non-finite ones. They are computed by cuBLAS on the rows alone, but for f32/c32
/// outputs above FP32 level, which the native entries' kernel computes with the non-finite rows
/// (flags in buffers of their own where the real products of separate parts, whose statistics
/// reuse the scratch of the operands' statistics, run before them)
struct NativeRows {
	/// the native entries' kernel computes them (`f32`/`c32` above FP32 level)
	wide: bool,
	/// finite rows the bound leaves native
	uncertified: Vec<usize>,
	/// the flags of the rows the emulation skips, and of those the native entries' kernel computes
	skipped: Option<CudaSlice<i32>>,
	fixed: Option<CudaSlice<i32>>,
	/// the non-finite columns' flags, where the parts need their own
	bad_cols: Option<CudaSlice<i32>>,
	/// non-finite rows of A and columns of B
	bad: (usize, usize),
	/// the operands' own non-finite flags
	flags: (DevPtr<i32>, DevPtr<i32>),
}

impl NativeRows {
	fn new<T: Scalar>(
		gpu: &Gpu,
		decision: &Decision,
		(sa, sb): (&OperandStats, &OperandStats),
		precision: Precision,
	) -> Result<Self, Error> {
		let wide = native_arithmetic(precision, T::MANTISSA_BITS) == NativeArithmetic::Wide;
		let choice = &decision.choice;
		let uncertified: Vec<usize> = choice.native_rows.iter().copied().filter(|&i| sa.nonfinite[i] == 0).collect();
		let own_flags = decision.parts.is_some();
		let flags = |rows: &[usize]| -> Result<Option<CudaSlice<i32>>, Error> {
			if !own_flags && rows.is_empty() {
				return Ok(None);
			}
			let mut flags = sa.nonfinite.clone();
			rows.iter().for_each(|&i| flags[i] = 1);
			to_device(gpu, &flags).map(Some)
		};
		let (skipped, fixed) = (flags(&uncertified)?, flags(if wide { &uncertified } else { &[] })?);
		let bad_cols = own_flags.then(|| to_device(gpu, &sb.nonfinite)).transpose()?;
		Ok(NativeRows {
			wide,
			uncertified,
			skipped,
			fixed,
			bad_cols,
			bad: (sa.nonfinite_rows(), sb.nonfinite_rows()),
			flags: (sa.device.nonfinite(), sb.device.nonfinite()),
		})
	}

	/// the emulation's job: the rows and columns it skips flagged
	fn job<'a, T: Scalar>(
		&self,
		gpu: &'a Gpu,
		(a, b): (DeviceOperand<T>, DeviceOperand<T>),
		out: Output<T>,
		alpha: T,
		(sa, sb): (&OperandStats, &OperandStats),
	) -> Job<'a, T> {
		Job {
			gpu,
			a,
			b,
			out,
			alpha,
			bad_rows: self.skipped.as_ref().map_or(sa.device.nonfinite(), |f| ptr(gpu, f)),
			bad_cols: self.bad_cols.as_ref().map_or(sb.device.nonfinite(), |f| ptr(gpu, f)),
		}
	}

	/// the native rows and the non-finite entries of `job`'s output (before or after the
	/// emulation: it skips them)
	fn compute<T: Scalar>(&self, job: &Job<'_, T>) -> Result<(), Error> {
		if !self.wide {
			crate::gpu::kernels::rows::native_rows(job, &self.uncertified)?;
		}
		let fixed_rows = self.fixed.as_ref().map_or(self.flags.0, |f| ptr(job.gpu, f));
		if self.bad != (0, 0) || (self.wide && !self.uncertified.is_empty()) {
			fixup(&Job {
				bad_rows: fixed_rows,
				..*job
			})?;
		}
		Ok(())
	}
}

/// the emulation of `emulation`'s job by its plan (scheme I or II, fused where its settings and
/// the kernels allow, scheme I where its cost model does not price the unfused pipeline cheaper),
/// and its native rows; returns the route it took. Scheme II computes in column tiles where `terms`
/// asks (and nothing is kept of B), the native rows and entries first: the reconstruction
/// skips them, so the order does not matter
fn emulate<T: Scalar>(
	emulation: &Emulation<'_, T>,
	(keep_a, keep_b): (Option<&mut Resident>, Option<&mut Resident>),
	terms: &mut Terms<'_>,
	clock: &mut Clock,
) -> Result<Route, Error> {
	let Emulation {
		ref job,
		stats: (sa, sb),
		ref plan,
		settings,
		coarse,
		natives,
	} = *emulation;
	let Shape { m, n, k } = job.dims();
	let fused = settings.fused;
	let tiles = match (plan.scheme, &keep_b) {
		(Scheme::SchemeII { .. }, None) => terms.columns.as_deref_mut().filter(|c| c.tiles > 1),
		_ => None,
	};
	let tile_n = tiles.as_ref().map_or(n, |c| n.div_ceil(c.tiles));
	let route = match plan.scheme {
		Scheme::SchemeI { slices } if scheme1_fused::supported(job, slices) => settings.scheme1_route(slices, job.dims(), T::IS_COMPLEX),
		Scheme::SchemeII { .. } if fused => fused_route(T::IS_COMPLEX, Shape::new(m, tile_n, pad16(k))),
		_ => Route::Unfused,
	};
	match plan.scheme {
		Scheme::SchemeI { slices } => {
			scheme1_unfused::product(job, (sa, sb), (slices, route == Route::Fused), plan, (keep_a, keep_b), clock)?;
			natives.compute(job)?;
		},
		Scheme::SchemeII { moduli, .. } => {
			let two = (moduli, coarse, fused, terms.gram);
			match tiles {
				Some(columns) => {
					natives.compute(job)?;
					scheme2::product(job, (sa, sb), two, (keep_a, None), clock, Some(columns))?;
				},
				None => {
					scheme2::product(job, (sa, sb), two, (keep_a, keep_b), clock, None)?;
					natives.compute(job)?;
				},
			}
		},
		Scheme::Native => unreachable!("native plans return before the emulation"),
	}
	Ok(route)
}
