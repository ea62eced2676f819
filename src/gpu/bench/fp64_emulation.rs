//! cuBLAS's own FP64 emulation (Ozaki scheme I on the INT8 tensor cores), set up on the cuBLAS
//! handle for the benchmark's baselines (feature `bench`)

use crate::gpu::runtime::blas::{EmulationMantissa, blas_check};
use crate::gpu::runtime::context::Gpu;
use crate::shape::Shape;
use crate::{Error, Scalar};
use cudarc::cublas::sys as blas;
use cudarc::driver::{CudaSlice, DevicePtr};
use std::ffi::{c_int, c_void};

/// a cuBLAS function that cudarc does not bind, looked up in the library cudarc loaded
///
/// # Safety
/// `F` must be the C signature of `name`
unsafe fn unbound<F: Copy>(name: &str) -> Result<F, Error> {
	// SAFETY: the signature is the caller's promise; the library stays loaded for the process
	unsafe { blas::culib().get::<F>(name.as_bytes()) }.map(|f| *f).map_err(|e| {
		Error::gpu(format!(
			"cuBLAS has no {name}, so no FP64 emulation: it needs the cuBLAS of CUDA 13.0 Update 2 or later ({e})"
		))
	})
}

/// the cuBLAS handle set up for FP64 emulation until dropped; dropping restores the math mode and
/// the emulation strategy it found and the default workspace pool (the mantissa settings only
/// act in emulation, so they stay)
pub(crate) struct Fp64Emulation<'a> {
	gpu: &'a Gpu,
	math: blas::cublasMath_t,
	strategy: blas::cublasEmulationStrategy_t,
	/// freed (stream-ordered) after the handle has let go of it
	workspace: CudaSlice<u8>,
}

impl<'a> Fp64Emulation<'a> {
	/// sets up the handle for `m x n x k` products of `T` (`f64`/`c64`) with this mantissa, with a
	/// workspace of the size cuBLAS's "Fixed-Point Workspace Requirements" give (so that cuBLAS
	/// neither allocates while timed nor falls back to native DGEMM for lack of memory)
	pub fn enable<T: Scalar>(gpu: &'a Gpu, mantissa: EmulationMantissa, Shape { m, n, k }: Shape) -> Result<Self, Error> {
		if T::MANTISSA_BITS != 53 {
			return Err(Error::gpu(format!(
				"cuBLAS's FP64 emulation multiplies f64 and c64, not {}",
				T::NAME
			)));
		}
		let bits = c_int::try_from(mantissa.max_bits()).map_err(|_| Error::gpu("too many emulation mantissa bits"))?;
		type Control = unsafe extern "C" fn(blas::cublasHandle_t, blas::cudaEmulationMantissaControl_t) -> blas::cublasStatus_t;
		type Bits = unsafe extern "C" fn(blas::cublasHandle_t, c_int) -> blas::cublasStatus_t;
		// SAFETY: the signatures of cublas_api.h (cuBLAS 13 documentation, 2.4.31 and 2.4.33)
		let (set_control, set_bits) = unsafe {
			(
				unbound::<Control>("cublasSetFixedPointEmulationMantissaControl")?,
				unbound::<Bits>("cublasSetFixedPointEmulationMaxMantissaBitCount")?,
			)
		};
		let workspace_bytes = workspace_size(m, n, k, T::IS_COMPLEX, mantissa);
		// the baselines enable the emulation between products, so the kept scratch may be freed
		// SAFETY: cuBLAS's scratch memory, written by cuBLAS before it reads it
		let alloc = || unsafe { gpu.stream.alloc::<u8>(workspace_bytes) };
		let what = || format!("{workspace_bytes} bytes of cuBLAS FP64 emulation workspace");
		let workspace = gpu.freeing_scratch(what, alloc)?;
		let handle = *gpu.handles.blas.handle();
		let (mut math, mut strategy) = (
			blas::cublasMath_t::CUBLAS_DEFAULT_MATH,
			blas::cublasEmulationStrategy_t::CUBLAS_EMULATION_STRATEGY_DEFAULT,
		);
		// SAFETY: a live handle; the enum values are cuBLAS's own
		unsafe {
			blas_check(blas::cublasGetMathMode(handle, &mut math), "GetMathMode")?;
			blas_check(blas::cublasGetEmulationStrategy(handle, &mut strategy), "GetEmulationStrategy")?;
		}
		let emulation = Fp64Emulation {
			gpu,
			math,
			strategy,
			workspace,
		};
		use blas::cudaEmulationMantissaControl_t::*;
		let control = match mantissa {
			EmulationMantissa::Fixed(_) => CUDA_EMULATION_MANTISSA_CONTROL_FIXED,
			EmulationMantissa::Dynamic => CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC,
		};
		let ptr = emulation.workspace.device_ptr(&gpu.stream).0;
		// SAFETY: as above; the workspace outlives the handle's use of it (see `drop`); from here on
		// an error drops `emulation`, which restores the handle
		unsafe {
			blas_check(
				blas::cublasSetWorkspace_v2(handle, ptr as *mut c_void, workspace_bytes),
				"SetWorkspace",
			)?;
			blas_check(
				blas::cublasSetMathMode(handle, blas::cublasMath_t::CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH),
				"SetMathMode",
			)?;
			blas_check(
				blas::cublasSetEmulationStrategy(handle, blas::cublasEmulationStrategy_t::CUBLAS_EMULATION_STRATEGY_EAGER),
				"SetEmulationStrategy",
			)?;
			blas_check(set_control(handle, control), "SetFixedPointEmulationMantissaControl")?;
			blas_check(set_bits(handle, bits), "SetFixedPointEmulationMaxMantissaBitCount")?;
		}
		Ok(emulation)
	}
}

impl Drop for Fp64Emulation<'_> {
	fn drop(&mut self) {
		let (handle, stream) = (*self.gpu.handles.blas.handle(), self.gpu.stream.cu_stream());
		// SAFETY: a live handle; setting the stream again returns it to the default workspace pool
		// (cuBLAS 13 documentation, 2.4.7) before the workspace is freed
		unsafe {
			blas::cublasSetMathMode(handle, self.math);
			blas::cublasSetEmulationStrategy(handle, self.strategy);
			blas::cublasSetStream_v2(handle, stream as blas::cudaStream_t);
		}
	}
}

/// the safe upper bound on the workspace of cuBLAS's fixed-point emulation, as cuBLAS 13
/// documents it ("Fixed-Point Workspace Requirements")
fn workspace_size(m: usize, n: usize, k: usize, complex: bool, mantissa: EmulationMantissa) -> usize {
	let mult = if complex { 2 } else { 1 };
	let slices = (mantissa.max_bits() as usize + 1).div_ceil(8);
	let (pm, pn, pk) = (m.div_ceil(1024) * 1024, n.div_ceil(1024) * 1024, k.div_ceil(128) * 128);
	let (blocks_k, max_split_k) = (k.div_ceil(64), k.div_ceil(8192));
	let mut gemm = (pm * pk + pn * pk) * mult * slices + 4 * (pm + pn) * mult;
	let acc_complex = if complex { 8 * m * n * mult * mult } else { 0 };
	gemm += acc_complex.max((4 * pm * pn * mult * mult * slices).min(1 << 32) * max_split_k);
	let adaptive = match mantissa {
		EmulationMantissa::Dynamic => 4 * (m * blocks_k + n * blocks_k + m * n) * mult,
		EmulationMantissa::Fixed(_) => 0,
	};
	(gemm.max(adaptive) as f64 * 1.25) as usize + (128 << 20)
}
