//! the plan and the inner balancing of a product in tiles, decided once for the whole product
//! from passes every pipeline runs over its panels (see [`crate::gpu::orchestration::tiled`])

use crate::balance::{Range, normal_exponents, shifts};
use crate::bound::{Bound, PartBounds, RowMaxima};
use crate::gpu::orchestration::tiling::{Tiled, serpentine};
use crate::gpu::product::job::FromWhole;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::schemes::resident::operand_stats;
use crate::gpu::transfer::panels::Panels;
use crate::policy::{Choice, Evidence, PolicyInput};
use crate::request::Request;
use crate::settings::Settings;
use crate::shape::Shape;
use crate::stats::RowStats;
use crate::{Error, NativeReason, Scalar, Scaling};

/// the whole product's balancing and choice where a target precision needs the bound, without
/// it otherwise: `Ok(given)` decided here, `Err(input)` for the bound to decide
fn without_bound<T: Scalar, O>(request: &Request<T, O>) -> Result<FromWhole, PolicyInput<'static>> {
	let Request { shape, precision, .. } = *request;
	let Shape { m, n, k } = shape;
	let input = PolicyInput::in_context::<T>(shape, &request.settings);
	let given = |choice| Ok(FromWhole { balance: None, choice });
	if m == 0 || n == 0 || k == 0 {
		given(Choice::native(m, NativeReason::NotEmulated))
	} else if input.native_from_shape(precision, 1) {
		given(Choice::native(m, NativeReason::FasterNatively))
	} else if precision.target_bits(T::MANTISSA_BITS, k).is_none() {
		given(input.choose(precision))
	} else {
		Err(input)
	}
}

/// the whole product's balancing and choice from passes every pipeline runs over its panels: the
/// inner exponent ranges of its row panels of `A` and of the column panels of `B` dealt to it,
/// then the error bound of its tiles (target precisions only), shared with the others. The policy
/// weighs neither separately scaled parts nor accurate scaling here (see the module's docs)
pub(crate) fn whole_product<T: Scalar>(gpu: &Gpu, job: &Tiled<'_, T>, me: usize, panels: &mut Panels<'_, T>) -> Result<FromWhole, Error> {
	let k = job.request.shape.k;
	let fast = Request {
		settings: Settings {
			scaling: Scaling::Fast,
			..job.request.settings
		},
		..job.request
	};
	let input = match without_bound(&fast) {
		Ok(given) => return Ok(given),
		Err(input) => input,
	};
	let union = |x: Vec<Range>, y: Vec<Range>| -> Vec<Range> {
		x.into_iter()
			.zip(y)
			.map(|(x, y)| Range {
				max: x.max.max(y.max),
				min: x.min.min(y.min),
			})
			.collect()
	};
	let (exchange, count) = (&job.exchange, job.exchange.count());
	let mine = &job.rows[me * job.per_share..(me + 1) * job.per_share];
	let (mut a_ranges, mut b_ranges) = (vec![Range::EMPTY; k], vec![Range::EMPTY; k]);
	// backwards, so that the first panels the bound pass reads are the ones uploaded last
	for r in mine.iter().rev().filter(|r| !r.is_empty()) {
		let a = panels.a(gpu, k, r)?;
		a_ranges = union(a_ranges, crate::gpu::kernels::balance::ranges::<T>(gpu, &a)?);
		panels.read(gpu)?;
	}
	for (j, c) in job.cols.iter().enumerate().rev() {
		let b = panels.b(gpu, k, c, (exchange, me))?;
		if j % count == me {
			b_ranges = union(b_ranges, crate::gpu::kernels::balance::ranges::<T>(gpu, &b)?);
		}
		panels.read(gpu)?;
	}
	let (a_ranges, b_ranges) = exchange
		.exchange(me, (a_ranges, b_ranges))?
		.into_iter()
		.reduce(|(a, b), (x, y)| (union(a, x), union(b, y)))
		.expect("one pipeline at least");
	let balance = shifts(&a_ranges, &b_ranges, normal_exponents(T::MANTISSA_BITS));
	let first = mine.first().map_or(0, |r| r.start);
	let mut maxima = vec![RowMaxima::default(); mine.last().map_or(0, |r| r.end) - first];
	// the row statistics of the whole product, which its tiles' are, for the screen
	let mut row_stats: Vec<Option<RowStats>> = vec![None; maxima.len()];
	let mut col_stats: Vec<Option<RowStats>> = vec![None; job.request.shape.n];
	for (local, r) in mine.iter().enumerate() {
		for c in serpentine(local, job.cols.len()).map(|j| &job.cols[j]) {
			let b = panels.b(gpu, k, c, (exchange, me))?;
			if r.is_empty() {
				continue;
			}
			let a = panels.a(gpu, k, r)?;
			let balanced = balance
				.as_ref()
				.map(|d| crate::gpu::kernels::balance::balanced::<T>(gpu, (&a, &b), d))
				.transpose()?;
			let (a, b) = balanced.as_ref().map_or((a, b), |x| (x.a, x.b));
			let (sa, sb) = operand_stats::<T>(gpu, (&a, &b), (None, None))?;
			row_stats[r.start - first..r.end - first]
				.iter_mut()
				.zip(&sa.rows)
				.for_each(|(x, y)| *x = Some(*y));
			col_stats[c.clone()].iter_mut().zip(&sb.rows).for_each(|(x, y)| *x = Some(*y));
			let tile = crate::gpu::kernels::bound::bound::<T>(gpu, (&a, &b), (&sa, &sb), None, T::MANTISSA_BITS)?;
			panels.read(gpu)?;
			maxima[r.start - first..r.end - first]
				.iter_mut()
				.zip(&tile.rows)
				.for_each(|(x, y)| x.merge(y));
		}
	}
	let bound = Bound {
		rows: exchange.exchange(me, maxima)?.concat(),
		shape: job.request.shape,
		complex: T::IS_COMPLEX,
		mantissa: T::MANTISSA_BITS,
	};
	let stats = exchange.exchange(me, (row_stats, col_stats))?;
	let all = |stats: &mut dyn Iterator<Item = Option<RowStats>>| -> Vec<RowStats> { stats.flatten().collect() };
	let sa = all(&mut stats.iter().flat_map(|(a, _)| a.iter().copied()));
	// every pipeline with rows read every column panel
	let sb = stats
		.iter()
		.map(|(_, b)| all(&mut b.iter().copied()))
		.find(|b| b.len() == job.request.shape.n)
		.unwrap_or_default();
	// the statistics come with the bound here, in one pass: the policy asks for them as it asks an
	// in-core product's, so that a tiled product takes the plan an in-core product takes
	let mut evidence = OnePass {
		stats: (sa, sb),
		bound: Some(bound),
	};
	let choice = crate::policy::decide(input, job.request.precision, &mut evidence)?.choice;
	Ok(FromWhole { balance, choice })
}

/// the answers of a tiled product to the policy: the statistics and the bound of its tiles, from
/// one pass over them; separately scaled parts are not weighed
struct OnePass {
	stats: (Vec<RowStats>, Vec<RowStats>),
	bound: Option<Bound>,
}

impl Evidence for OnePass {
	fn stats(&mut self) -> Result<(&[RowStats], &[RowStats]), Error> {
		Ok((&self.stats.0, &self.stats.1))
	}

	fn bound(&mut self) -> Result<Bound, Error> {
		Ok(self.bound.take().expect("the policy asks for the bound once"))
	}

	fn parts_screen(&mut self) -> Result<Option<Bound>, Error> {
		Ok(None)
	}

	fn parts_bounds(&mut self) -> Result<PartBounds, Error> {
		unreachable!("the policy weighs no separately scaled parts without their screen")
	}
}
