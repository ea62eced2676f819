//! complex products as four real products of their parts, each part of the operands scaled on
//! its own ([`crate::Plan::separate_parts`]), on the GPU: `split_parts` (cuda/parts.cu) copies the
//! parts into real `f64` operands, each real product runs the pipeline with the plan's scheme
//! (scheme II handing on the CRT's remainders), and `combine_parts` writes the complex output;
//! the same operations as src/cpu/parts.rs, so both give the same bits

use crate::bound::{Bound, PartBounds};
use crate::cpu::parts::PRODUCTS;
use crate::gpu::kernels::stats::{download_stats, launch_stats_into};
use crate::gpu::product::job::{DeviceOperand, Job, Outcome, Output, Terms};
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{alloc, elementwise, ptr};
use crate::gpu::runtime::slot::Slot;
use crate::gpu::schemes::scheme2::coarse_maxima;
use crate::policy::SCREEN;
use crate::settings::Settings;
use crate::shape::Shape;
use crate::{Error, PhaseTimes, Plan, Precision, Route, Scalar, Scaling, Scheme};
use cudarc::driver::CudaSlice;

/// the real and imaginary parts of both operands as real `f64` operands (`A` column-major, `B`
/// K-major), in buffers of their own
pub(crate) struct PartOperands {
	/// `Re A`, `Im A`, `Re B`, `Im B`
	_buffers: [CudaSlice<f64>; 4],
	a: [DeviceOperand<f64>; 2],
	b: [DeviceOperand<f64>; 2],
}

/// the bound of a real `f64` product under `scaling`, for outputs of `mantissa` bits; its
/// statistics in a scratch of their own, so that the complex operands' stay as they were
fn real_bound(gpu: &Gpu, (a, b): (DeviceOperand<f64>, DeviceOperand<f64>), mantissa: u32, scaling: Scaling) -> Result<Bound, Error> {
	let stats = download_stats(gpu, &launch_stats_into::<f64>(gpu, &[&a, &b], Slot::PartStats)?)?;
	let (sa, sb) = (&stats[0], &stats[1]);
	let coarse = match scaling {
		Scaling::Accurate => Some(coarse_maxima::<f64>(gpu, (&a, &b), (sa, sb))?),
		Scaling::Fast => None,
	};
	crate::gpu::kernels::bound::bound::<f64>(gpu, (&a, &b), (sa, sb), coarse.as_ref(), mantissa)
}

/// the parts of the complex operands `a` and `b`
pub(crate) fn split<T: Scalar>(gpu: &Gpu, (a, b): (&DeviceOperand<T>, &DeviceOperand<T>)) -> Result<PartOperands, Error> {
	type Parts = ([CudaSlice<f64>; 2], [DeviceOperand<f64>; 2]);
	let copy = |op: &DeviceOperand<T>, (rs, cs): (i64, i64)| -> Result<Parts, Error> {
		let len = op.rows * op.k;
		let (re, im) = (alloc::<f64>(gpu, len)?, alloc::<f64>(gpu, len)?);
		if len > 0 {
			let (rows, k) = (op.rows as i32, op.k as i32);
			let name = format!("split_parts_{}", T::NAME);
			launch!(
				gpu,
				name,
				elementwise(gpu, len),
				op.ptr,
				rows,
				k,
				op.rs,
				op.cs,
				ptr(gpu, &re),
				ptr(gpu, &im),
				rs,
				cs
			)?;
		}
		let part = |buffer: &CudaSlice<f64>| DeviceOperand {
			ptr: ptr(gpu, buffer),
			rows: op.rows,
			k: op.k,
			rs,
			cs,
		};
		let ops = [part(&re), part(&im)];
		Ok(([re, im], ops))
	};
	let ([ar, ai], a) = copy(a, (1, a.rows.max(1) as i64))?;
	let ([br, bi], b) = copy(b, (b.k.max(1) as i64, 1))?;
	Ok(PartOperands {
		_buffers: [ar, ai, br, bi],
		a,
		b,
	})
}

impl PartOperands {
	/// the operands of product `q` of [`PRODUCTS`]
	fn operands(&self, q: usize) -> (DeviceOperand<f64>, DeviceOperand<f64>) {
		let (s, t) = PRODUCTS[q];
		(self.a[s], self.b[t])
	}

	/// the error bounds of the four real products under `scaling`, for outputs of `mantissa` bits
	pub fn bounds(&self, gpu: &Gpu, mantissa: u32, scaling: Scaling) -> Result<PartBounds, Error> {
		let bound = |q: usize| real_bound(gpu, self.operands(q), mantissa, scaling);
		Ok(PartBounds([bound(0)?, bound(1)?, bound(2)?, bound(3)?]))
	}
}

/// the screen of [`crate::policy::PolicyInput::separate_parts_pay`] for the complex operands `a`
/// and `b`: the bound of `Re A Re B` on the leading [`SCREEN`] rows of `A` and columns of `B`
/// (only those are split into parts), for outputs of `mantissa` bits
pub(crate) fn screen<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand<T>, &DeviceOperand<T>),
	mantissa: u32,
	scaling: Scaling,
) -> Result<Bound, Error> {
	let leading = |op: &DeviceOperand<T>| DeviceOperand {
		rows: op.rows.min(SCREEN),
		..*op
	};
	let parts = split::<T>(gpu, (&leading(a), &leading(b)))?;
	real_bound(gpu, parts.operands(0), mantissa, scaling)
}

impl PartOperands {
	/// the complex product of `job` by `plan`: the entries of the rows and columns `job` flags are
	/// left to the native fixup, each real product by `real` (`alpha = 1`, nothing kept). The route
	/// and the phase times of the real products (summed)
	pub fn product<T: Scalar>(
		&self,
		job: &Job<'_, T>,
		plan: &Plan,
		settings: Settings,
		real: impl Fn(DeviceOperand<f64>, DeviceOperand<f64>, Output<f64>, Terms<'_>) -> Result<Outcome, Error>,
	) -> Result<(Route, PhaseTimes), Error> {
		let gpu = job.gpu;
		let Shape { m, n, .. } = job.dims();
		let mn = m * n;
		// the four products, then their remainders (zero where scheme I runs)
		let planes = alloc::<f64>(gpu, 8 * mn)?;
		let plane = |q: usize| ptr(gpu, &planes).add(q * mn);
		let (precision, scaling) = match plan.scheme {
			Scheme::SchemeI { slices } => (Precision::SchemeI { slices }, settings.scaling),
			Scheme::SchemeII { moduli, scaling } => (Precision::SchemeII { moduli }, scaling),
			Scheme::Native => unreachable!("a native plan has no parts"),
		};
		let settings = Settings { scaling, ..settings };
		let (mut route, mut times) = (Route::Native, PhaseTimes::default());
		for q in 0..4 {
			let (a, b) = self.operands(q);
			let out = Output {
				ptr: plane(q),
				ld: m,
				accumulate: false,
				remainder: matches!(plan.scheme, Scheme::SchemeII { .. }).then(|| plane(4 + q)),
				triangle: None,
			};
			let outcome = real(a, b, out, Terms::plain(precision, settings))?;
			route = outcome.route;
			times.split += outcome.times.split;
			times.products += outcome.times.products;
			times.reconstruct += outcome.times.reconstruct;
			times.total += outcome.times.total;
		}
		let (mi, ni) = (m as i32, n as i32);
		launch_output!(
			job,
			"combine_parts",
			T,
			elementwise(gpu, mn),
			ptr(gpu, &planes),
			mi,
			ni,
			job.bad_rows,
			job.bad_cols
		)?;
		Ok((route, times))
	}
}
