//! GPU benchmarks (feature `bench`, an NVIDIA Hopper GPU): products of device-resident operands
//! (`Emulator::upload`, `Emulator::matmul_device`) against cuBLAS on the same operands
//! (`baseline::native_matmul`): f64 at `Precision::F64` and `SchemeII { moduli: 15 }` against
//! DGEMM, c64 at `Precision::F64` against ZGEMM, at n = 4096 and 8192.
//!
//! The times are device times, measured with CUDA events and handed to criterion through
//! `iter_custom`: cuBLAS's call between two events, the emulated product as the sum of its phases
//! (split, integer products, reconstruction), which the pipeline times with events
//! (`Report::times`); a product that the policy computes natively has no phases, and the wall time
//! of its call stands in. The throughput is in effective flops: 2n^3 per real product, 8n^3 per
//! complex one. The report of each emulated product is printed once before it is timed, so that
//! the plan and the route that ran are on record. Without a usable GPU it says so and exits
//! successfully.
//!
//! `NVCC="$(scripts/install-nvcc.sh)" cargo bench --features bench --bench gpu`; other sizes with
//! `EMUGEMM_BENCH_SIZES=8192,16384` (as examples/bench.rs reads it).

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use emugemm::baseline::{self, NativeMath};
use emugemm::testing::random_matrix;
use emugemm::{Accum, Backend, DeviceMatrix, Emulator, Error, PhaseTimes, Precision, Scalar};
use faer::c64;
use std::time::Duration;

/// the device time of a product on device matrices: its phases, each timed with events; a product
/// that the policy computed natively (cuBLAS) has no phases, and its wall time stands in (the call
/// returns once the product is done)
fn device_time(times: &PhaseTimes) -> Duration {
	let phases = times.split + times.products + times.reconstruct;
	if phases.is_zero() { times.total } else { phases }
}

/// the context on GPU 0, checked by one small emulated product (an explicit plan, which the policy
/// does not send to cuBLAS: a build without the kernels fails it)
fn gpu() -> Result<Emulator, Error> {
	let emu = Emulator::with_backend(Backend::Gpu)?;
	let a = emu.upload(random_matrix::<f64>(64, 64, 1.0, 1).as_ref())?;
	let mut c = emu.zeros_on_device::<f64>(64, 64)?;
	emu.matmul_device(&mut c, Accum::Replace, (&a, &a), 1.0, Precision::SchemeII { moduli: 15 })?;
	Ok(emu)
}

/// cuBLAS (`native`, e.g. `cuBLAS DGEMM`) and emugemm at each of `precisions`, on `T` operands of
/// every size in `sizes`
fn products<T: Scalar>(c: &mut Criterion, emu: &Emulator, sizes: &[usize], native: &str, precisions: &[Precision]) -> Result<(), Error> {
	let one = T::from_parts(1.0, 0.0);
	let mut group = c.benchmark_group(T::NAME);
	group
		.sample_size(10)
		.sampling_mode(SamplingMode::Flat)
		.warm_up_time(Duration::from_secs(1))
		.measurement_time(Duration::from_secs(3));
	for &n in sizes {
		let a: DeviceMatrix<T> = emu.upload(random_matrix::<T>(n, n, 1.0, 1).as_ref())?;
		let b: DeviceMatrix<T> = emu.upload(random_matrix::<T>(n, n, 1.0, 2).as_ref())?;
		let mut dst = emu.zeros_on_device::<T>(n, n)?;
		group.throughput(Throughput::Elements(if T::IS_COMPLEX { 8 } else { 2 } * (n as u64).pow(3)));
		group.bench_function(BenchmarkId::new(native, n), |bench| {
			bench.iter_custom(|iters| {
				(0..iters)
					.map(|_| baseline::native_matmul(emu, &mut dst, &a, &b, NativeMath::Exact).expect("a cuBLAS product"))
					.sum()
			})
		});
		for &precision in precisions {
			emu.matmul_device(&mut dst, Accum::Replace, (&a, &b), one, precision)?;
			println!("emugemm {precision:?}: {}", emu.last_report().expect("a report"));
			group.bench_function(BenchmarkId::new(format!("emugemm {precision:?}"), n), |bench| {
				bench.iter_custom(|iters| {
					(0..iters)
						.map(|_| {
							emu.matmul_device(&mut dst, Accum::Replace, (&a, &b), one, precision)
								.expect("an emulated product");
							device_time(&emu.last_report().expect("a report").times)
						})
						.sum()
				})
			});
		}
	}
	group.finish();
	Ok(())
}

fn main() {
	let emu = match gpu() {
		Ok(emu) => emu,
		Err(e) => {
			println!("emugemm gpu benches: no usable GPU ({e}), skipped");
			return;
		},
	};
	println!("emugemm gpu benches on {}", emu.gpu_name().unwrap_or_else(|e| e.to_string()));
	let sizes: Vec<usize> = std::env::var("EMUGEMM_BENCH_SIZES")
		.unwrap_or_else(|_| "4096,8192".into())
		.split(',')
		.filter_map(|s| s.trim().parse().ok())
		.collect();
	let mut c = Criterion::default().configure_from_args();
	products::<f64>(
		&mut c,
		&emu,
		&sizes,
		"cuBLAS DGEMM",
		&[Precision::F64, Precision::SchemeII { moduli: 15 }],
	)
	.expect("the f64 benches");
	products::<c64>(&mut c, &emu, &sizes, "cuBLAS ZGEMM", &[Precision::F64]).expect("the c64 benches");
	c.final_summary();
}
