//! the scheme I split on the GPU: the balanced int8 digits of an operand's part, as planes (the
//! unfused route's cuBLASLt products) or interleaved (the fused kernel's layout)

use crate::gpu::product::job::DeviceOperand;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::ptr;
use crate::gpu::runtime::ptr::DevPtr;
use crate::{Error, Scalar};
use cudarc::driver::CudaSlice;

/// the K padding of the interleaved layout: a multiple of 128 (the kernels' K blocks are 1, 2 or 4
/// chunks of 32, and [`pass_len`](crate::precision::pass_len) is a multiple of 128)
pub(crate) fn pad128(k: usize) -> usize {
	k.div_ceil(128) * 128
}

/// the scheme I digits of one part of an operand (`part`: 0 real, 1 imaginary, 2 negated
/// imaginary), `p` per element at its row's shift in `shifts`: as planes ([`Digits::planes`]), or
/// interleaved for the fused kernel ([`Digits::interleaved`])
pub(crate) struct Digits<'a, T> {
	pub op: &'a DeviceOperand<T>,
	pub shifts: &'a CudaSlice<i32>,
	pub p: u32,
	pub part: i32,
}

impl<T: Scalar> Digits<'_, T> {
	/// the digits into `out`: `p` planes of `rows x pad16(k)`
	pub(crate) fn planes(&self, gpu: &Gpu, out: DevPtr<i8>) -> Result<DevPtr<i8>, Error> {
		launch_split!(
			gpu,
			"split_digits",
			T,
			self.op,
			out,
			ptr(gpu, self.shifts),
			self.p as i32,
			self.part
		)?;
		Ok(out)
	}

	/// the digits into `out`, interleaved: `rows` rows of `p pad128(k)` bytes (see `cuda/split.cu`)
	pub(crate) fn interleaved(&self, gpu: &Gpu, out: DevPtr<i8>) -> Result<(), Error> {
		launch_split!(@padded pad128, gpu, "split_digits_interleaved", T, self.op, out, ptr(gpu, self.shifts), self.p as i32, self.part)
	}
}
