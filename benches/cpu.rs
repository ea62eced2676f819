//! CPU benchmarks, on any machine: faer's native product (`&a * &b`) against the emulation on the
//! CPU (`Backend::CpuEmulation`, the native candidate off so that it always emulates) for f64 at
//! `Precision::F64` and `Precision::SchemeI { slices: 4 }` and for c64 at `Precision::F64`, at
//! n = 64, 128 and 256; then the phases of the emulated f64 `F64` product (the split with its error
//! bound, the exact integer products, the CRT reconstruction), timed from the product's report.
//!
//! The throughput of the products and of the integer products' phase is in effective flops (2n^3
//! per real product, 8n^3 per complex one), that of the split in operand entries (2n^2), that of
//! the reconstruction in output entries (n^2).
//!
//! `cargo bench --bench cpu` (a minute or two on two cores); a filter runs part of it, for
//! example `cargo bench --bench cpu -- c64`.

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main, measurement::WallTime};
use emugemm::testing::random_matrix;
use emugemm::{Backend, EmuMatMul, Emulator, PhaseTimes, Precision, Route, Scalar, Scheme};
use faer::{Mat, c64};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [usize; 3] = [64, 128, 256];

/// one phase's time in a product's report
type Phase = fn(&PhaseTimes) -> Duration;

/// the emulation on the CPU even where faer's native product is predicted faster (at these sizes
/// it always is, and the policy would otherwise pick it)
fn emulator() -> Emulator {
	Emulator::with_backend(Backend::CpuEmulation)
		.expect("the CPU emulation is always available")
		.with_native_candidate(false)
}

/// a group sized for products of milliseconds on two cores: few samples of one flat batch each
fn group<'c>(c: &'c mut Criterion, name: &str) -> BenchmarkGroup<'c, WallTime> {
	let mut group = c.benchmark_group(name);
	group
		.sample_size(10)
		.sampling_mode(SamplingMode::Flat)
		.warm_up_time(Duration::from_millis(300))
		.measurement_time(Duration::from_secs(3));
	group
}

/// one product of `emu`, checked to have run as the emulation on the CPU on every row: a bench
/// that timed a fallback to the native product would compare faer with itself
fn emulate_checked<T: Scalar>(emu: &Emulator, a: &Mat<T>, b: &Mat<T>, precision: Precision) -> Mat<T> {
	let c = a.emu_mul_with(emu, b, precision).expect("an emulated product");
	let report = emu.last_report().expect("a report");
	assert_eq!(report.route, Route::Cpu, "not the CPU emulation: {report}");
	assert!(report.native_rows.is_empty(), "rows computed natively: {report}");
	c
}

/// faer's native product against the emulation of `precision`, `T` at every size
fn products<T: Scalar>(c: &mut Criterion, precision: Precision, native: impl Fn(&Mat<T>, &Mat<T>) -> Mat<T>) {
	let emu = emulator();
	let mut group = group(c, &format!("{} {precision:?}", T::NAME));
	for n in SIZES {
		let (a, b) = (random_matrix::<T>(n, n, 1.0, 1), random_matrix::<T>(n, n, 1.0, 2));
		emulate_checked(&emu, &a, &b, precision);
		let flops = if T::IS_COMPLEX { 8 } else { 2 } * (n as u64).pow(3);
		group.throughput(Throughput::Elements(flops));
		group.bench_with_input(BenchmarkId::new("faer native", n), &n, |bench, _| {
			bench.iter(|| native(black_box(&a), black_box(&b)))
		});
		group.bench_with_input(BenchmarkId::new("emulated", n), &n, |bench, _| {
			bench.iter(|| a.emu_mul_with(&emu, black_box(&b), precision).expect("an emulated product"))
		});
	}
	group.finish();
}

fn f64_products(c: &mut Criterion) {
	products::<f64>(c, Precision::F64, |a, b| a * b);
	products::<f64>(c, Precision::SchemeI { slices: 4 }, |a, b| a * b);
}

fn c64_products(c: &mut Criterion) {
	products::<c64>(c, Precision::F64, |a, b| a * b);
}

/// the phases of the emulated f64 `F64` product at the largest size, each the sum of its times in
/// the reports of the timed products (`emugemm::scheme1` and `emugemm::scheme2` expose the
/// constants of the schemes, not the split and reconstruction kernels themselves)
fn phases(c: &mut Criterion) {
	let n = *SIZES.last().expect("a size");
	let emu = emulator();
	let (a, b) = (random_matrix::<f64>(n, n, 1.0, 1), random_matrix::<f64>(n, n, 1.0, 2));
	emulate_checked(&emu, &a, &b, Precision::F64);
	let plan = emu.last_report().expect("a report").plan;
	assert!(
		matches!(plan.scheme, Scheme::SchemeII { .. }),
		"F64 reconstructs by the CRT of scheme II, not {plan}"
	);
	let mut group = group(c, "f64 F64 phases");
	let phases: [(&str, u64, Phase); 3] = [
		("split and bound", 2 * (n * n) as u64, |t| t.split),
		("integer products", 2 * (n as u64).pow(3), |t| t.products),
		("CRT reconstruction", (n * n) as u64, |t| t.reconstruct),
	];
	for (name, elements, phase) in phases {
		group.throughput(Throughput::Elements(elements));
		group.bench_with_input(BenchmarkId::new(name, n), &n, |bench, _| {
			bench.iter_custom(|iters| {
				(0..iters)
					.map(|_| {
						black_box(a.emu_mul_with(&emu, &b, Precision::F64).expect("an emulated product"));
						phase(&emu.last_report().expect("a report").times)
					})
					.sum()
			})
		});
	}
	group.finish();
}

criterion_group!(benches, f64_products, c64_products, phases);
criterion_main!(benches);
