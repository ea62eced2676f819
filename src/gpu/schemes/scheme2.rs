//! Ozaki scheme II on the GPU: shifts, residue planes, the exact products mod each modulus (see
//! [`crate::gpu::kernels::residues`]) and the CRT (see [`crate::gpu::kernels::crt`]), in column tiles where the output is
//! downloaded as it completes

use crate::gpu::kernels::crt::crt_epilogue;
use crate::gpu::kernels::residues::{Overrides, fused_residues, unfused_residues};
use crate::gpu::kernels::stats::{OperandStats, StatsRegion};
use crate::gpu::product::job::{Clock, Columns, DeviceOperand, Job, Output, OutputTriangle, Phase, ResiduePlanes, pad16};
use crate::gpu::runtime::blas::Int8Gemm;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{alloc, elementwise, ptr, to_device, to_host};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::schemes::resident::{Layout, Resident, planes};
use crate::scheme2::{self, CoarseMaxima, Crt};
use crate::shape::Shape;
use crate::{Error, Scalar, Scaling, Scheme};
use cudarc::driver::CudaSlice;

/// the scheme II residue planes of an operand into `out` for the first `p` moduli of
/// [`scheme2::MODULI`] (compile-time constants of the kernel), with the rows' shifts at `shifts`:
/// per modulus 1 plane (real) or 3 (complex: re, im, re + im) of `rows x pad16(k)`; `out` must be
/// 8-byte aligned
pub(crate) fn split_residues<T: Scalar>(
	gpu: &Gpu,
	out: DevPtr<i8>,
	op: &DeviceOperand<T>,
	shifts: DevPtr<i32>,
	p: u32,
) -> Result<DevPtr<i8>, Error> {
	launch_split!(gpu, "split_residues", T, op, out, shifts, p as i32)?;
	Ok(out)
}

/// scheme II's row and column shifts on the device
pub(crate) struct ShiftsTwo {
	/// the shifts of the rows of A and of the columns of B (one each)
	a: DevPtr<i32>,
	b: DevPtr<i32>,
	/// whether B's shifts are A's, row for row (both operands' rows of one statistics region, or
	/// equal accurate shifts)
	equal: bool,
	/// the buffers behind `a` and `b` when they were uploaded (accurate scaling)
	_uploaded: Option<(CudaSlice<i32>, CudaSlice<i32>)>,
}

/// the shifts of scheme II: fast ones computed on the device from the operands' statistics
/// (`fast_shifts`, on the device: nothing crosses to the host), accurate ones on the host
/// from the coarse maxima, then uploaded
pub(crate) fn shifts_two<T: Scalar>(
	job: &Job<'_, T>,
	sa: &OperandStats,
	sb: &OperandStats,
	lambda: i32,
	coarse: Option<&CoarseMaxima>,
) -> Result<ShiftsTwo, Error> {
	let Some(coarse) = coarse else {
		let equal = sa.device.base == sb.device.base && sa.device.rows == sb.device.rows;
		let (a, b) = launch_fast_shifts(job.gpu, (sa.device, sb.device), lambda)?;
		return Ok(ShiftsTwo {
			a,
			b,
			equal,
			_uploaded: None,
		});
	};
	let (a, b) = coarse.shifts(lambda);
	let equal = a == b;
	let (a, b) = (to_device(job.gpu, &a)?, to_device(job.gpu, &b)?);
	Ok(ShiftsTwo {
		a: ptr(job.gpu, &a),
		b: ptr(job.gpu, &b),
		equal,
		_uploaded: Some((a, b)),
	})
}

/// launches `fast_shifts`: scheme II's fast shifts (`scheme2::fast_shift`) of the rows whose
/// statistics lie in `a` and in `b`, into the scratch of [`Slot::FastShifts`]; returns A's and
/// B's (one per row)
pub(crate) fn launch_fast_shifts(gpu: &Gpu, (a, b): (StatsRegion, StatsRegion), lambda: i32) -> Result<(DevPtr<i32>, DevPtr<i32>), Error> {
	let out = gpu.scratch(Slot::FastShifts, 4 * (a.rows + b.rows))?.cast::<i32>();
	launch_fast_shifts_at(gpu, (a, b), lambda, out)
}

/// [`launch_fast_shifts`] into `out` (room for one shift per row of both regions)
pub(crate) fn launch_fast_shifts_at(
	gpu: &Gpu,
	(a, b): (StatsRegion, StatsRegion),
	lambda: i32,
	out: DevPtr<i32>,
) -> Result<(DevPtr<i32>, DevPtr<i32>), Error> {
	let (rows_a, rows_b) = (a.rows as i32, b.rows as i32);
	launch!(
		gpu,
		"fast_shifts",
		elementwise(gpu, a.rows + b.rows),
		a.base,
		rows_a,
		b.base,
		rows_b,
		lambda,
		out
	)?;
	Ok((out, out.add(a.rows)))
}

/// what the accurate scaling of scheme II reads of `A B` (one extra INT8 product of coarse
/// magnitudes, its row and column maxima downloaded)
pub(crate) fn coarse_maxima<T: Scalar>(
	gpu: &Gpu,
	(a, b): (&DeviceOperand<T>, &DeviceOperand<T>),
	(sa, sb): (&OperandStats, &OperandStats),
) -> Result<CoarseMaxima, Error> {
	let (m, n, k) = (a.rows, b.rows, a.k);
	if k >= 1 << 19 {
		return Err(Error::gpu(
			"accurate scaling on the GPU supports K < 524288 (the bound product must stay exact in INT32)",
		));
	}
	let kpad = pad16(k);
	let coarse = |slot: Slot, op: &DeviceOperand<T>, s: &OperandStats| -> Result<(Vec<i32>, DevPtr<i8>), Error> {
		let s0: Vec<i32> = s.amax.iter().map(|&x| scheme2::coarse_shift(x, T::IS_COMPLEX)).collect();
		let d0 = to_device(gpu, &s0)?;
		let out = gpu.scratch(slot, op.rows * kpad)?.cast::<i8>();
		launch_split!(gpu, "split_coarse", T, op, out, ptr(gpu, &d0))?;
		Ok((s0, out))
	};
	let ((s0a, ca), (s0b, cb)) = (coarse(Slot::SplitA, a, sa)?, coarse(Slot::SplitB, b, sb)?);
	let c_hi = gpu.scratch(Slot::Int32, 4 * m * n)?.cast::<i32>();
	Int8Gemm {
		m,
		n,
		k: kpad,
		a: ca,
		lda: kpad,
		b: cb,
		ldb: kpad,
		c: c_hi,
		ldc: m,
		accumulate: false,
	}
	.run(&gpu.handles)?;
	let (row_max, col_max) = (alloc::<i32>(gpu, m)?, alloc::<i32>(gpu, n)?);
	launch!(
		gpu,
		"row_col_max",
		elementwise(gpu, m * n),
		c_hi,
		m as i32,
		n as i32,
		ptr(gpu, &row_max),
		ptr(gpu, &col_max)
	)?;
	let widen = |v: Vec<i32>| v.into_iter().map(i64::from).collect();
	Ok(CoarseMaxima {
		s0: (s0a, s0b),
		max: (widen(to_host(gpu, &row_max)?), widen(to_host(gpu, &col_max)?)),
	})
}

/// scheme II: residue planes, one exact product per modulus (3 for complex) reduced mod m (fused
/// or not), CRT; in column tiles handed on to `columns` where given (`A` split once, `B` tile by
/// tile). A real Gram product (`gram`, see `Terms::gram`) whose operands have the same shifts
/// splits `A` alone: `B`'s rows are `A`'s, and so are their planes
pub(crate) fn product<T: Scalar>(
	job: &Job<'_, T>,
	(sa, sb): (&OperandStats, &OperandStats),
	(p, coarse, fused, gram): (u32, Option<&CoarseMaxima>, bool, bool),
	keep: (Option<&mut Resident>, Option<&mut Resident>),
	clock: &mut Clock,
	columns: Option<&mut Columns<'_>>,
) -> Result<(), Error> {
	let gpu = job.gpu;
	let Shape { m, n, k } = job.dims();
	let (kpad, pu) = (pad16(k), p as usize);
	let crt = Crt::of(p);
	let shifts = shifts_two(job, sa, sb, crt.lambda, coarse)?;
	let scaling = if coarse.is_some() { Scaling::Accurate } else { Scaling::Fast };
	let per = if T::IS_COMPLEX { 3 } else { 1 };
	// accurate shifts depend on both operands: only fast-scaled splits are kept
	let fast = scaling == Scaling::Fast;
	let (keep_a, keep_b) = if fast { keep } else { (None, None) };
	let scheme = Scheme::SchemeII { moduli: p, scaling };
	// the residue planes of `op` (`rows` rows) into `slot` (kept where `keep` asks)
	let split = |keep: Option<&mut Resident>, op: &DeviceOperand<T>, shifts: DevPtr<i32>, rows: usize, slot: Slot| {
		planes(gpu, keep, (scheme, Layout::Planar), (per * pu * rows * kpad, &[slot]), |_, dst| {
			split_residues::<T>(gpu, dst, op, shifts, p)
		})
		.map(|planes| planes[0])
	};
	let ra = split(keep_a, &job.a, shifts.a, m, Slot::SplitA)?;
	let products = |ops, dims, moduli: &[u32], out| match fused {
		true => fused_residues(gpu, ops, dims, moduli, out, Overrides::default()),
		false => unfused_residues(gpu, ops, dims, moduli, out),
	};
	let Some(columns) = columns else {
		let rb = match gram && !T::IS_COMPLEX && shifts.equal && keep_b.is_none() {
			true => ra,
			false => split(keep_b, &job.b, shifts.b, n, Slot::SplitB)?,
		};
		clock.mark(gpu, Phase::Split)?;
		let planes = residue_planes::<T>(gpu, (m, n), pu, job.out.triangle)?;
		products((ra, rb), Shape::new(m, n, kpad), &crt.moduli, planes)?;
		return crt_epilogue(job, crt, planes, (shifts.a, shifts.b), clock);
	};
	clock.mark(gpu, Phase::Split)?;
	let width = n.div_ceil(columns.tiles);
	for start in (0..n).step_by(width) {
		let cols = start..(start + width).min(n);
		// the tile's columns of B, of the output, of their shifts and flags (one each)
		let tile = Job {
			b: DeviceOperand {
				ptr: job.b.ptr.add((start as i64 * job.b.rs) as usize),
				rows: cols.len(),
				..job.b
			},
			out: Output {
				ptr: job.out.ptr.add(start * job.out.ld),
				triangle: OutputTriangle::from_column(job.out.triangle, start),
				..job.out
			},
			bad_cols: job.bad_cols.add(start),
			..*job
		};
		let shifts_b = shifts.b.add(start);
		let rb = split_residues::<T>(
			gpu,
			gpu.scratch(Slot::SplitB, per * pu * width * kpad)?.cast(),
			&tile.b,
			shifts_b,
			p,
		)?;
		let planes = residue_planes::<T>(gpu, (m, cols.len()), pu, tile.out.triangle)?;
		products((ra, rb), Shape::new(m, cols.len(), kpad), &crt.moduli, planes)?;
		crt_epilogue(&tile, crt, planes, (shifts.a, shifts_b), clock)?;
		columns.send(cols)?;
	}
	Ok(())
}

/// the residue planes of an `m x n` product with `p` moduli, in scratch slots 7 (and 8 for the
/// imaginary parts of complex products), for the output's `triangle` where it has one
pub(crate) fn residue_planes<T: Scalar>(
	gpu: &Gpu,
	(m, n): (usize, usize),
	p: usize,
	triangle: Option<OutputTriangle>,
) -> Result<ResiduePlanes, Error> {
	let stride = ResiduePlanes::stride(m, n);
	Ok(ResiduePlanes {
		triangle,
		re: gpu.scratch(Slot::ResiduesRe, p * stride)?.cast(),
		im: if T::IS_COMPLEX {
			Some(gpu.scratch(Slot::ResiduesIm, p * stride)?.cast())
		} else {
			None
		},
		stride,
	})
}
