//! TMA tensor maps for the wgmma kernels: int8 K-major planes, 128-byte swizzle

use crate::Error;
use crate::gpu::runtime::ptr::DevPtr;
use cudarc::driver::sys::*;

/// a TMA descriptor, passed by value as a `__grid_constant__` kernel parameter
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct TensorMap(CUtensorMap);

// SAFETY: a plain 128-byte descriptor, copied into the kernel's parameter space
unsafe impl cudarc::driver::DeviceRepr for TensorMap {}

impl TensorMap {
	/// `planes` planes of `rows` K-major int8 rows of `k` bytes (a multiple of 16) at `ptr`, read
	/// in boxes of 128 bytes x `box_rows` rows x 1 plane with 128-byte swizzle; reads outside the
	/// planes return zeros
	pub fn planes(ptr: DevPtr<i8>, k: usize, rows: usize, planes: usize, box_rows: u32) -> Result<Self, Error> {
		Self::every(ptr, k, rows, planes, 1, box_rows)
	}

	/// [`TensorMap::planes`] of every `step`-th plane: `planes` planes, `step` planes apart, from `ptr`
	pub fn every(ptr: DevPtr<i8>, k: usize, rows: usize, planes: usize, step: usize, box_rows: u32) -> Result<Self, Error> {
		let swizzle = CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B;
		Self::encode(ptr, [k, rows, planes], step * k * rows, [128, box_rows, 1], swizzle)
	}

	/// `planes` planes of `rows` rows of `k` bytes at `ptr`, rows `k` bytes apart, planes
	/// `plane_bytes` apart, in boxes of `boxes` (bytes, rows, planes)
	fn encode(
		ptr: DevPtr<i8>,
		[k, rows, planes]: [usize; 3],
		plane_bytes: usize,
		boxes: [u32; 3],
		swizzle: CUtensorMapSwizzle,
	) -> Result<Self, Error> {
		let mut map = std::mem::MaybeUninit::<CUtensorMap>::zeroed();
		let dims = [k as u64, rows as u64, planes as u64];
		let strides = [k as u64, plane_bytes as u64];
		let elements = [1u32, 1, 1];
		// SAFETY: the arrays have the lengths rank 3 asks for; the driver writes the map
		let status = unsafe {
			cuTensorMapEncodeTiled(
				map.as_mut_ptr(),
				CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
				3,
				ptr.addr() as *mut _,
				dims.as_ptr(),
				strides.as_ptr(),
				boxes.as_ptr(),
				elements.as_ptr(),
				CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
				swizzle,
				CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
				CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
			)
		};
		if status != CUresult::CUDA_SUCCESS {
			return Err(Error::gpu(format!("cuTensorMapEncodeTiled: {status:?}")));
		}
		// SAFETY: initialised by the successful call above
		Ok(TensorMap(unsafe { map.assume_init() }))
	}
}
