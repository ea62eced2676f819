//! the inner balancing on the GPU (`cuda/balance.cu`): the operands' exponent ranges per inner
//! index, the shifts on the host (`crate::balance::shifts`, as the CPU computes them), and the
//! balanced copies the pipeline then reads

use crate::balance::{Range, normal_exponents, shifts};
use crate::gpu::product::job::DeviceOperand;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{elementwise, ptr, to_device, to_host};
use crate::gpu::runtime::slot::Slot;
use crate::{Error, Scalar};
use cudarc::driver::{CudaSlice, LaunchConfig};

/// the balanced copies of both operands (in scratch, A column-major, B K-major) and the shifts they
/// were made with
pub(crate) struct Balanced<T> {
	pub a: DeviceOperand<T>,
	pub b: DeviceOperand<T>,
	_shifts: CudaSlice<i32>,
}

/// the exponent range of the nonzero finite parts at each inner index of `op`
pub(crate) fn ranges<T: Scalar>(gpu: &Gpu, op: &DeviceOperand<T>) -> Result<Vec<Range>, Error> {
	Ok(ranges_of::<T>(gpu, &[op])?.pop().expect("one operand"))
}

/// [`ranges`] of each of `ops` (of one inner dimension), in one buffer that one download brings
/// back: per operand `k` maxima, then `k` minima
fn ranges_of<T: Scalar>(gpu: &Gpu, ops: &[&DeviceOperand<T>]) -> Result<Vec<Vec<Range>>, Error> {
	let k = ops.first().map_or(0, |op| op.k);
	if k == 0 {
		return Ok(vec![Vec::new(); ops.len()]);
	}
	let empty = [vec![i32::MIN; k], vec![i32::MAX; k]].concat();
	let buffer = to_device(gpu, &empty.repeat(ops.len()))?;
	for (t, op) in ops.iter().enumerate().filter(|(_, op)| op.rows > 0) {
		let cfg = LaunchConfig {
			grid_dim: (k.div_ceil(32) as u32, op.rows.div_ceil(256) as u32, 1),
			block_dim: (32, 8, 1),
			shared_mem_bytes: 0,
		};
		let (rows, kk) = (op.rows as i32, k as i32);
		let max = ptr(gpu, &buffer).add(2 * k * t);
		launch!(
			gpu,
			format!("inner_ranges_{}", T::NAME),
			cfg,
			op.ptr,
			rows,
			kk,
			op.rs,
			op.cs,
			max,
			max.add(k)
		)?;
	}
	let all = to_host(gpu, &buffer)?;
	Ok(all
		.chunks(2 * k)
		.map(|x| {
			let (max, min) = x.split_at(k);
			max.iter().zip(min).map(|(&max, &min)| Range { max, min }).collect()
		})
		.collect())
}

/// what the inner balancing of `A B` found: both operands' exponent ranges per inner index, and
/// the shifts (`crate::balance::shifts`, `None` when no inner index moves)
pub(crate) struct InnerBalance {
	pub ranges: [Vec<Range>; 2],
	pub shifts: Option<Vec<i32>>,
}

/// the inner balancing of `A B` ([`InnerBalance`])
pub(crate) fn inner_balance<T: Scalar>(gpu: &Gpu, (a, b): (&DeviceOperand<T>, &DeviceOperand<T>)) -> Result<InnerBalance, Error> {
	let [ra, rb]: [Vec<Range>; 2] = ranges_of::<T>(gpu, &[a, b])?.try_into().expect("two operands");
	let shifts = shifts(&ra, &rb, normal_exponents(T::MANTISSA_BITS));
	Ok(InnerBalance { ranges: [ra, rb], shifts })
}

/// [`inner_balance`] of a Gram product `A Aᴴ` from `A` alone: `Aᴴ`'s row t is `A`'s column t
/// conjugated, with the same exponent range, so both operands' ranges are `A`'s and no inner index
/// is shifted (the shifts of equal ranges are all zero)
pub(crate) fn gram_balance<T: Scalar>(gpu: &Gpu, a: &DeviceOperand<T>) -> Result<InnerBalance, Error> {
	let ranges = ranges::<T>(gpu, a)?;
	Ok(InnerBalance {
		ranges: [ranges.clone(), ranges],
		shifts: None,
	})
}

/// `A D` and `D^-1 B` for the shifts `d` of a whole product (one per inner index), of which `a`
/// may hold some rows and `b` some columns
pub(crate) fn balanced<T: Scalar>(gpu: &Gpu, (a, b): (&DeviceOperand<T>, &DeviceOperand<T>), d: &[i32]) -> Result<Balanced<T>, Error> {
	let d = to_device(gpu, d)?;
	// the layouts the pipeline assumes (the native product passes them to cuBLAS): the rows of A
	// column-major, the columns of B K-major (B column-major)
	let copy = |slot: Slot, op: &DeviceOperand<T>, sign: i32, (rs, cs): (i64, i64)| -> Result<DeviceOperand<T>, Error> {
		let out = gpu.scratch(slot, (op.rows * op.k).max(1) * size_of::<T>())?.cast::<T>();
		let (rows, k) = (op.rows as i32, op.k as i32);
		let cfg = elementwise(gpu, op.rows * op.k);
		launch!(
			gpu,
			format!("balance_{}", T::NAME),
			cfg,
			op.ptr,
			rows,
			k,
			op.rs,
			op.cs,
			ptr(gpu, &d),
			sign,
			out,
			rs,
			cs
		)?;
		Ok(DeviceOperand {
			ptr: out,
			rows: op.rows,
			k: op.k,
			rs,
			cs,
		})
	};
	Ok(Balanced {
		a: copy(Slot::BalancedA, a, 1, (1, a.rows.max(1) as i64))?,
		b: copy(Slot::BalancedB, b, -1, (b.k.max(1) as i64, 1))?,
		_shifts: d,
	})
}
