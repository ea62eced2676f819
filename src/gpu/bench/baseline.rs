//! NVIDIA's own products on device matrices, timed with device events: the baselines that every
//! emugemm benchmark prints beside its own numbers (feature `cuda`)

use crate::gpu::bench::fp64_emulation::Fp64Emulation;
use crate::gpu::kernels::native::operand_gemm;
use crate::gpu::product::job::Outcome;
use crate::gpu::runtime::blas::{Int8Gemm, native_gemm};
use crate::gpu::runtime::context::{Gpu, gpu};
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::slot::Slot;
use crate::shape::{Shape, check_shapes};
use crate::{DeviceMatrix, Emulator, Error, Precision, Scalar};
use faer::{MatMut, MatRef};
use std::time::Duration;

pub use crate::gpu::runtime::blas::{EmulationMantissa, NativeMath};

fn timed(gpu: &Gpu, work: impl FnOnce() -> Result<(), Error>) -> Result<Duration, Error> {
	let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
	let (start, end) = (gpu.ctx.new_event(flags).map_err(driver)?, gpu.ctx.new_event(flags).map_err(driver)?);
	start.record(&gpu.stream).map_err(driver)?;
	work()?;
	end.record(&gpu.stream).map_err(driver)?;
	end.synchronize().map_err(driver)?;
	Ok(Duration::from_secs_f64(start.elapsed_ms(&end).map_err(driver)? as f64 / 1e3))
}

/// cuBLAS's FP64 emulation set up for a product of `dims` in `math` (restored when dropped), or
/// nothing for the other arithmetics
fn emulation<'g, T: Scalar>(g: &'g Gpu, math: NativeMath, dims: Shape) -> Result<Option<Fp64Emulation<'g>>, Error> {
	match math {
		NativeMath::Fp64Emulation(mantissa) => Fp64Emulation::enable::<T>(g, mantissa, dims).map(Some),
		NativeMath::Exact | NativeMath::Tf32 => Ok(None),
	}
}

/// the shape of a product on `emu`'s GPU with these shapes (`(rows, columns)`) of `lhs`, `rhs`
/// and `dst`, or why not
fn product_shape(emu: &Emulator, [lhs, rhs, dst]: [(usize, usize); 3]) -> Result<Shape, Error> {
	let _ = emu.zeros_on_device::<f64>(0, 0)?; // the emulator must be on the GPU
	check_shapes(lhs, rhs, Some(dst))?;
	Ok(Shape::new(lhs.0, rhs.1, lhs.1))
}

/// `dst = lhs rhs` by cuBLAS (`GemmEx`: DGEMM, ZGEMM, SGEMM, CGEMM, TF32 tensor cores for
/// `f32`/`c32` with [`NativeMath::Tf32`], or cuBLAS's FP64 emulation for `f64`/`c64` with
/// [`NativeMath::Fp64Emulation`]); returns the device time of the call
///
/// The matrices must lie whole on the first GPU, as those of a context on one GPU do
/// ([`Error::Placement`] otherwise, as for those of [`Emulator::on_gpus`]).
///
/// For the emulation the cuBLAS handle is set up before the timed call (its workspace allocated
/// untimed) and restored after it, so later products run as before; a cuBLAS without the
/// emulation (older than CUDA 13.0 Update 2) gives [`Error::Gpu`].
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, baseline};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let a = emu.upload(faer::Mat::<f64>::identity(1024, 1024).as_ref())?;
/// let mut c = emu.zeros_on_device::<f64>(1024, 1024)?;
/// let t = baseline::native_matmul(&emu, &mut c, &a, &a, baseline::NativeMath::Exact)?;
/// println!("DGEMM: {t:?}");
/// let dynamic = baseline::NativeMath::Fp64Emulation(baseline::EmulationMantissa::Dynamic);
/// let t = baseline::native_matmul(&emu, &mut c, &a, &a, dynamic)?;
/// println!("cuBLAS FP64 emulation, dynamic mantissa: {t:?}");
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn native_matmul<T: Scalar>(
	emu: &Emulator,
	dst: &mut DeviceMatrix<T>,
	lhs: &DeviceMatrix<T>,
	rhs: &DeviceMatrix<T>,
	math: NativeMath,
) -> Result<Duration, Error> {
	let shape = product_shape(emu, [lhs.shape(), rhs.shape(), dst.shape()])?;
	// cuBLAS on the first GPU's pipeline multiplies matrices that lie there whole
	crate::gpu::orchestration::engine::placed([&*dst, lhs, rhs], &[(0, 0)])?;
	let Shape { m, k, .. } = shape;
	let g = gpu()?;
	let (a, b, c) = (lhs.ptr(&g), rhs.ptr(&g), dst.ptr(&g));
	let (one, zero) = (T::from_parts(1.0, 0.0), T::from_parts(0.0, 0.0));
	// set up before the clock starts, restored when dropped after it stopped
	let _emulation = emulation::<T>(&g, math, shape)?;
	timed(&g, || {
		native_gemm(&g.handles, shape, ((a, m.max(1)), (b, k.max(1)), (c, m.max(1))), (one, zero), math)
	})
}

/// `dst = lhs rhs` for host matrices by cuBLAS in `math`, through the staging of host products
/// (the operands staged in chunks to device buffers kept between calls, the result staged back):
/// the best-practice native offload that host products on the GPU are measured against; returns
/// the wall time of the call
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, baseline};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let a = faer::Mat::<f64>::identity(1024, 1024);
/// let mut c = faer::Mat::<f64>::zeros(1024, 1024);
/// let t = baseline::native_staged(&emu, c.as_mut(), a.as_ref(), a.as_ref(), baseline::NativeMath::Exact)?;
/// println!("upload, DGEMM, download: {t:?}");
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn native_staged<T: Scalar>(
	emu: &Emulator,
	dst: MatMut<'_, T>,
	lhs: MatRef<'_, T>,
	rhs: MatRef<'_, T>,
	math: NativeMath,
) -> Result<Duration, Error> {
	let shape = product_shape(emu, [lhs.shape(), rhs.shape(), dst.shape()])?;
	let start = std::time::Instant::now();
	let request = emu.request(
		crate::Accum::Replace,
		(lhs.into(), rhs.into()),
		T::from_parts(1.0, 0.0),
		(Precision::F64, emu.par()),
	);
	crate::gpu::orchestration::engine::staged(&request, dst, |g, (a, b, out), dst| {
		let _emulation = emulation::<T>(g, math, shape)?;
		operand_gemm(g, (&a, &b), &out, T::from_parts(1.0, 0.0), math)?;
		let download = g.download(out.ptr, dst, emu.staging_buffers())?;
		Ok((Outcome::native(shape.m, crate::NativeReason::NotEmulated), download))
	})?;
	Ok(start.elapsed())
}

/// one `m x n x k` INT8 product (INT32 out, "TN") by cuBLASLt on scratch operands; returns the
/// device time of the call
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, baseline};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let t = baseline::int8_matmul(&emu, 8192, 8192, 8192)?;
/// println!("{:.0} TOPS", 2.0 * 8192f64.powi(3) / t.as_secs_f64() / 1e12);
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn int8_matmul(emu: &Emulator, m: usize, n: usize, k: usize) -> Result<Duration, Error> {
	let _ = emu.zeros_on_device::<f64>(0, 0)?;
	let g = gpu()?;
	let kpad = k.div_ceil(16) * 16;
	let (a, b, c) = (
		g.scratch(Slot::Bench(0), m * kpad)?.cast(),
		g.scratch(Slot::Bench(1), n * kpad)?.cast(),
		g.scratch(Slot::Bench(2), 4 * m * n)?.cast(),
	);
	timed(&g, || {
		Int8Gemm {
			m,
			n,
			k: kpad,
			a,
			lda: kpad,
			b,
			ldb: kpad,
			c,
			ldc: m,
			accumulate: false,
		}
		.run(&g.handles)
	})
}
