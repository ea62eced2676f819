//! multiplies two generated 1024x1024 f64 matrices at `Precision::F64`, and shows what ran and how
//! accurate it was against an exact reference (sampled entries)
//!
//! `cargo run --release --example quickstart`

use emugemm::testing::{ExactProduct, Sampling, random_matrix};
use emugemm::{Backend, EmuMatMul, Emulator, Precision};
use std::time::Instant;

fn main() -> Result<(), emugemm::Error> {
	let n = 1024;
	let a = random_matrix::<f64>(n, n, 1.0, 1);
	let b = random_matrix::<f64>(n, n, 1.0, 2);
	let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Sampled { entries: 4096, seed: 3 });

	// the drop-in call: the GPU when there is one, faer's native product otherwise
	let start = Instant::now();
	let c = a.try_emu_mul(&b, Precision::F64)?;
	let elapsed = start.elapsed();
	let report = emugemm::last_report().expect("a report");
	println!("a.emu_mul(&b, Precision::F64), {n}x{n}x{n}");
	println!("  backend   {:?}", report.backend);
	println!("  plan      {}", report.plan);
	println!("  accuracy  {}", exact.accuracy(c.as_ref()));
	println!("  time      {elapsed:.3?}");

	// the emulation itself, on the CPU: bit for bit what the GPU computes. This oracle emulates
	// every product a plan certifies (its native candidate is off by default)
	let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	let start = Instant::now();
	let c = a.emu_mul_with(&emu, &b, Precision::F64)?;
	let elapsed = start.elapsed();
	let report = emu.last_report().expect("a report");
	println!("the emulation on the CPU (Backend::CpuEmulation)");
	println!("  plan      {}", report.plan);
	println!("  accuracy  {}", exact.accuracy(c.as_ref()));
	println!(
		"  time      {elapsed:.3?} (split {:.3?}, integer products {:.3?}, reconstruction {:.3?})",
		report.times.split, report.times.products, report.times.reconstruct
	);

	let start = Instant::now();
	let native = &a * &b;
	let elapsed = start.elapsed();
	println!("native faer product (a * b)");
	println!("  accuracy  {}", exact.accuracy(native.as_ref()));
	println!("  time      {elapsed:.3?}");
	Ok(())
}
