//! Ozaki scheme I on the GPU: digit planes, exact INT8 products into INT32 diagonals,
//! shift-reduce (the fused kernel where it takes the product, see [`crate::gpu::schemes::scheme1_fused`])

use crate::gpu::kernels::digits::Digits;
use crate::gpu::kernels::stats::OperandStats;
use crate::gpu::product::job::{Clock, DeviceOperand, Job, Phase, pad16};
use crate::gpu::runtime::blas::Int8Gemm;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{elementwise, ptr, to_device};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::schemes::resident::{Layout, Resident, planes};
use crate::gpu::schemes::scheme1_fused;
use crate::shape::Shape;
use crate::{Error, Plan, Scalar, Scheme, scheme1};
use cudarc::driver::CudaSlice;

/// scheme I: the fused kernel (`fused`, see [`scheme1_fused`]; the caller checked that it takes
/// the product), or unfused: digit planes, `p(p+1)/2` exact products per term and pass into INT32
/// diagonals, shift-reduce
pub(crate) fn product<T: Scalar>(
	job: &Job<'_, T>,
	(sa, sb): (&OperandStats, &OperandStats),
	(p, fused): (u32, bool),
	plan: &Plan,
	keep: (Option<&mut Resident>, Option<&mut Resident>),
	clock: &mut Clock,
) -> Result<(), Error> {
	let gpu = job.gpu;
	let Shape { m, n, k } = job.dims();
	let shifts_a: Vec<i32> = sa.amax.iter().map(|&x| scheme1::shift(x, p)).collect();
	let shifts_b: Vec<i32> = sb.amax.iter().map(|&x| scheme1::shift(x, p)).collect();
	let (da, db) = (to_device(gpu, &shifts_a)?, to_device(gpu, &shifts_b)?);
	if fused {
		return scheme1_fused::product(job, (&da, &db), p, keep, clock);
	}
	let (kpad, complex) = (pad16(k), T::IS_COMPLEX);
	let scheme = Scheme::SchemeI { slices: p };
	let (parts_a, parts_b) = if complex { (3, 2) } else { (1, 1) };
	// the digit planes of `op` (`rows` rows), one part into each slot (kept where `keep` asks)
	let split = |keep: Option<&mut Resident>, op: &DeviceOperand<T>, shifts: &CudaSlice<i32>, rows: usize, slots: &[Slot]| {
		planes(
			gpu,
			keep,
			(scheme, Layout::Planar),
			(p as usize * rows * kpad, slots),
			|part, dst| {
				let part = part as i32;
				Digits { op, shifts, p, part }.planes(gpu, dst)
			},
		)
	};
	// A: real, imaginary, negated imaginary digits; B: real, imaginary
	let slots_a = [Slot::SplitA, Slot::DigitsAIm, Slot::DigitsANegIm];
	let a = split(keep.0, &job.a, &da, m, &slots_a[..parts_a])?;
	let b = split(keep.1, &job.b, &db, n, &[Slot::DigitsB, Slot::DigitsBIm][..parts_b])?;
	let (a_re, b_re) = (a[0], b[0]);
	let (a_im, a_neg, b_im) = if complex {
		(Some(a[1]), Some(a[2]), Some(b[1]))
	} else {
		(None, None, None)
	};
	clock.mark(gpu, Phase::Split)?;
	let passes = plan.pass_ranges(k, complex);
	let p = p as usize;
	let diagonals = |slot, terms: &[(DevPtr<i8>, DevPtr<i8>)]| diagonals(gpu, slot, terms, &passes, (p, Shape::new(m, n, kpad)));
	let (acc_re, acc_im) = match (a_im, a_neg, b_im) {
		(Some(a_im), Some(a_neg), Some(b_im)) => (
			diagonals(Slot::DiagonalsRe, &[(a_re, b_re), (a_neg, b_im)])?,
			Some(diagonals(Slot::DiagonalsIm, &[(a_re, b_im), (a_im, b_re)])?),
		),
		_ => (diagonals(Slot::DiagonalsRe, &[(a_re, b_re)])?, None),
	};
	clock.mark(gpu, Phase::Products)?;
	let im = acc_im.unwrap_or(DevPtr::NULL);
	let counts = (p as i32, passes.len() as i32, m as i32, n as i32);
	launch_epilogue!(
		job,
		"shift_reduce",
		T,
		elementwise(gpu, m * n),
		(ptr(gpu, &da), ptr(gpu, &db)),
		acc_re,
		im,
		counts.0,
		counts.1,
		counts.2,
		counts.3
	)?;
	clock.mark(gpu, Phase::Reconstruct)
}

/// the INT32 diagonals of scheme I in scratch `slot`: per K pass and diagonal `s < p`, the sum
/// over `t <= s` and the `terms` (pairs of A's and B's planes) of `A_t B_(s-t)^T`, `m x n` each,
/// over the pass's K of the `kpad`-long planes (`dims`' K)
fn diagonals(
	gpu: &Gpu,
	slot: Slot,
	terms: &[(DevPtr<i8>, DevPtr<i8>)],
	passes: &[std::ops::Range<usize>],
	(p, Shape { m, n, k: kpad }): (usize, Shape),
) -> Result<DevPtr<i32>, Error> {
	let acc = gpu.scratch(slot, 4 * passes.len() * p * m * n)?.cast::<i32>();
	for (q, range) in passes.iter().enumerate() {
		let len = if q + 1 == passes.len() { kpad - range.start } else { range.len() };
		for s in 0..p {
			let c = acc.add((q * p + s) * m * n);
			let mut first = true;
			for t in 0..=s {
				for &(x, y) in terms {
					let a = x.add(t * m * kpad + range.start);
					let b = y.add((s - t) * n * kpad + range.start);
					Int8Gemm {
						m,
						n,
						k: len,
						a,
						lda: kpad,
						b,
						ldb: kpad,
						c,
						ldc: m,
						accumulate: !first,
					}
					.run(&gpu.handles)?;
					first = false;
				}
			}
		}
	}
	Ok(acc)
}
