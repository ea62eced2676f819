//! the cost model of a GPU: its data sheet's where the table knows the GPU, otherwise its rates
//! measured once, at first use: a DGEMM, an SGEMM, a TF32 GEMM (cuBLAS) and an INT8 GEMM
//! (cuBLASLt) of 2048 x 2048 x 2048, and a device-to-device copy of 32 MiB (tens of
//! milliseconds in all)

use crate::Error;
use crate::datasheets::{DataSheet, GpuModel};
use crate::gpu::runtime::blas::{Int8Gemm, NativeMath, native_gemm};
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::shape::Shape;

/// the size of the measured products
const N: usize = 2048;

/// the cost model of `gpu`, from the table or measured (once per GPU and process)
pub(crate) fn model(gpu: &Gpu) -> Result<GpuModel, Error> {
	if let Some(model) = gpu.model.get() {
		return Ok(model);
	}
	let model = match GpuModel::named(&gpu.name) {
		Some(model) => model,
		None => GpuModel::register(measure(gpu, Box::leak(gpu.name.clone().into_boxed_str()))?),
	};
	gpu.model.set(Some(model));
	Ok(model)
}

/// the rates of `gpu`, measured (the best of three runs of each)
pub(crate) fn measure(gpu: &Gpu, name: &'static str) -> Result<DataSheet, Error> {
	let shape = Shape::new(N, N, N);
	let ops = 2.0 * (N * N * N) as f64;
	let best = |work: &mut dyn FnMut() -> Result<(), Error>| -> Result<f64, Error> {
		work()?;
		let mut fastest = f64::INFINITY;
		for _ in 0..3 {
			fastest = fastest.min(gpu.timed(&mut *work)?.as_secs_f64());
		}
		Ok(fastest)
	};
	let [a, b, c] = [Slot::StagedA, Slot::StagedB, Slot::StagedC].map(|slot| gpu.scratch(slot, N * N * 8));
	let (a, b, c) = (a?, b?, c?);
	for buffer in [a, b, c] {
		// SAFETY: each slot holds N N 8 bytes; zeros are valid operands of every GEMM below
		unsafe { cudarc::driver::result::memset_d8_async(buffer.addr(), 0, N * N * 8, gpu.stream.cu_stream()) }.map_err(driver)?;
	}
	let gemm = |math: NativeMath, wide: bool| {
		move || -> Result<(), Error> {
			if wide {
				native_gemm::<f64>(&gpu.handles, shape, ((a.cast(), N), (b.cast(), N), (c.cast(), N)), (1.0, 0.0), math)
			} else {
				native_gemm::<f32>(&gpu.handles, shape, ((a.cast(), N), (b.cast(), N), (c.cast(), N)), (1.0, 0.0), math)
			}
		}
	};
	let fp64 = ops / best(&mut gemm(NativeMath::Exact, true))?;
	let fp32 = ops / best(&mut gemm(NativeMath::Exact, false))?;
	let tf32 = ops / best(&mut gemm(NativeMath::Tf32, false))?;
	let int8 = Int8Gemm {
		m: N,
		n: N,
		k: N,
		a: a.cast(),
		lda: N,
		b: b.cast(),
		ldb: N,
		c: c.cast(),
		ldc: N,
		accumulate: false,
	};
	let int8 = ops / best(&mut || int8.run(&gpu.handles))?;
	// one operand buffer copied into another: the GEMMs are done with them
	let bytes = N * N * 8;
	let (copy, copy_from): (DevPtr<u8>, DevPtr<u8>) = (c.cast(), a.cast());
	let copy_time = best(&mut || {
		// SAFETY: both buffers hold `bytes`
		unsafe { cudarc::driver::result::memcpy_dtod_async(copy.addr(), copy_from.addr(), bytes, gpu.stream.cu_stream()) }.map_err(driver)
	})?;
	// a copy reads and writes every byte
	let bandwidth = 2.0 * bytes as f64 / copy_time;
	log::info!(
		"emugemm: {name} is not in the table of GPUs; measured DGEMM {:.1} TF/s, SGEMM {:.1}, TF32 {:.1}, INT8 {:.0} TOPS, {:.0} GB/s",
		fp64 / 1e12,
		fp32 / 1e12,
		tf32 / 1e12,
		int8 / 1e12,
		bandwidth / 1e9
	);
	Ok(DataSheet::measured(name, [fp64, fp32, tf32, int8, bandwidth], gpu.arch))
}
