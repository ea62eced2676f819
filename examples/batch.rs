//! Batches of products on the GPU against cuBLAS and against single calls, operands on the
//! device, in one process; medians of device-event times over `EMUGEMM_BATCH_RUNS` runs (default
//! 10), one row each:
//! - f64 `Precision::F64`, 1,000 products of 128³: `gemm_batch_on_stream` against 1,000 calls of
//!   `gemm_on_stream` and against cuBLAS's strided batch;
//! - f64 and c64, `SchemeII { moduli: 15 }` and `F64`, 64 products of 1024³: the batch against
//!   cuBLAS's strided batch, and one product of the same work (4096³) against DGEMM/ZGEMM.
//!
//! ```text
//! cargo run --release --features cuda,testing --example batch
//! ```
#[cfg(feature = "cuda")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
	bench::main()
}

#[cfg(not(feature = "cuda"))]
fn main() {
	eprintln!("batch: needs the `cuda` feature and an NVIDIA GPU");
}

#[cfg(feature = "cuda")]
#[path = "common/timing.rs"]
mod timing;

#[cfg(feature = "cuda")]
mod bench {
	use super::timing::{median_host_ms, median_ms};
	use cudarc::cublas::{CudaBlas, sys as blas};
	use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
	use emugemm::{DeviceView, DeviceViewMut, Emulator, Precision, Report, Scalar};
	use std::sync::Arc;

	/// cuBLAS's strided batch of `count` products `C_i = A_i B_i` of `n x n` matrices, packed
	fn cublas_strided<T: Scalar>(h: blas::cublasHandle_t, (n, count): (usize, usize), (a, b, c): (u64, u64, u64)) {
		let (ni, s, cnt) = (n as i32, (n * n) as i64, count as i32);
		use blas::cublasOperation_t::CUBLAS_OP_N as N;
		// SAFETY: a, b and c hold `count` packed n x n matrices of T on the handle's stream
		let status = unsafe {
			if T::IS_COMPLEX {
				let (one, zero) = (blas::cuDoubleComplex { x: 1.0, y: 0.0 }, blas::cuDoubleComplex { x: 0.0, y: 0.0 });
				blas::cublasZgemmStridedBatched(h, N, N, ni, ni, ni, &one, a as _, ni, s, b as _, ni, s, &zero, c as _, ni, s, cnt)
			} else {
				let (one, zero) = (1.0f64, 0.0f64);
				blas::cublasDgemmStridedBatched(h, N, N, ni, ni, ni, &one, a as _, ni, s, b as _, ni, s, &zero, c as _, ni, s, cnt)
			}
		};
		status.result().unwrap();
	}

	/// `count` packed `n x n` random matrices of `T` on the device
	fn matrices<T: Scalar>(stream: &Arc<CudaStream>, (n, count): (usize, usize), seed: u64) -> CudaSlice<u8> {
		let host = emugemm::testing::random_matrix::<T>(n * n, count, 1.0, seed);
		let values: Vec<T> = (0..n * n * count).map(|idx| host[(idx % (n * n), idx / (n * n))]).collect();
		stream.clone_htod(bytemuck::cast_slice::<T, u8>(&values)).unwrap()
	}

	/// a batch of `count` products of `n x n` matrices, packed in three buffers
	struct Batch {
		n: usize,
		count: usize,
		a: CudaSlice<u8>,
		b: CudaSlice<u8>,
		c: CudaSlice<u8>,
	}

	impl Batch {
		fn new<T: Scalar>(stream: &Arc<CudaStream>, (n, count): (usize, usize)) -> Batch {
			let c = stream.alloc_zeros(n * n * count * size_of::<T>()).unwrap();
			let (a, b) = (matrices::<T>(stream, (n, count), 1), matrices::<T>(stream, (n, count), 2));
			Batch { n, count, a, b, c }
		}

		fn addresses(&self, stream: &Arc<CudaStream>) -> (u64, u64, u64) {
			(
				self.a.device_ptr(stream).0,
				self.b.device_ptr(stream).0,
				self.c.device_ptr(stream).0,
			)
		}

		/// the products as one batch (`batch`) or one call each; the reports
		fn run<T: Scalar>(&self, emu: &Emulator, stream: &Arc<CudaStream>, (precision, batch): (Precision, bool)) -> Vec<Report> {
			let (pa, pb, pc) = self.addresses(stream);
			let bytes = (self.n * self.n * size_of::<T>()) as u64;
			let at = |base: u64, i: usize| base + i as u64 * bytes;
			let shape = (self.n, self.n);
			// SAFETY: the buffers hold the `count` matrices and outlive the views
			let views = |base| (0..self.count).map(move |i| unsafe { DeviceView::<T>::from_raw(at(base, i), shape, self.n) }.unwrap());
			let (lhs, rhs): (Vec<_>, Vec<_>) = (views(pa).collect(), views(pb).collect());
			let mut dst: Vec<_> = (0..self.count)
				.map(|i| unsafe { DeviceViewMut::<T>::from_raw(at(pc, i), shape, self.n) }.unwrap())
				.collect();
			let (one, zero) = (T::from_parts(1.0, 0.0), T::from_parts(0.0, 0.0));
			if batch {
				return emu
					.gemm_batch_on_stream(&mut dst, one, (&lhs, &rhs), zero, (precision, stream.into()))
					.unwrap();
			}
			let mut reports = Vec::new();
			for ((c, a), b) in dst.into_iter().zip(lhs).zip(rhs) {
				emu.gemm_on_stream(c, one, (a, b), zero, (precision, stream.into())).unwrap();
				reports.push(emu.last_report().unwrap());
			}
			reports
		}
	}

	/// the plans of `reports`, each with the products that shared its launches
	fn plans(reports: &[Report]) -> String {
		let shared = |r: &Report| r.shared_launch.map_or(String::new(), |c| format!(", {c} products a launch"));
		let mut plans: Vec<String> = reports.iter().map(|r| format!("{}{}", r.plan, shared(r))).collect();
		plans.dedup();
		plans.join(" / ")
	}

	fn row(device: &str, what: &str, (plan, ms): (&str, f32), vs: (&str, f32)) {
		println!(
			"| {device} | {what} | {plan} | {ms:.3} | {} {:.3} ms | {:.2} |",
			vs.0,
			vs.1,
			vs.1 / ms
		);
	}

	pub fn main() -> Result<(), Box<dyn std::error::Error>> {
		let runs = std::env::var("EMUGEMM_BATCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
		let stream = CudaContext::new(0)?.new_stream()?;
		let emu = Emulator::global();
		let device = emu.gpu_name()?;
		let cublas = CudaBlas::new(stream.clone())?;
		let h = *cublas.handle();
		println!("| GPU | products | plan | median ms | against | x |");
		println!("|---|---|---|---|---|---|");
		// many small products: the batch against single calls
		let small = Batch::new::<f64>(&stream, (128, 1000));
		let strided = median_ms(&stream, runs, || cublas_strided::<f64>(h, (128, 1000), small.addresses(&stream)));
		let batched = median_ms(&stream, runs, || drop(small.run::<f64>(&emu, &stream, (Precision::F64, true))));
		let reports = small.run::<f64>(&emu, &stream, (Precision::F64, true));
		let batch_bits = stream.clone_dtoh(&small.c)?;
		let singles = median_ms(&stream, runs, || drop(small.run::<f64>(&emu, &stream, (Precision::F64, false))));
		let same = batch_bits == stream.clone_dtoh(&small.c)?;
		let what = format!(
			"f64 F64, 1000 x 128^3, batch (bits {} the single calls')",
			if same { "equal" } else { "DIFFER from" }
		);
		row(&device, &what, (&plans(&reports), batched), ("1000 single calls", singles));
		row(
			&device,
			"f64 F64, 1000 x 128^3, batch",
			(&plans(&reports), batched),
			("cuBLAS strided batch", strided),
		);
		large::<f64>((&emu, &stream, h), runs, &device);
		large::<faer::c64>((&emu, &stream, h), runs, &device);
		Ok(())
	}

	/// 64 products of 1024³ against cuBLAS's strided batch, and one product of 4096³ against
	/// cuBLAS's GEMM, at `SchemeII { moduli: 15 }` and `F64`
	fn large<T: Scalar>((emu, stream, h): (&Emulator, &Arc<CudaStream>, blas::cublasHandle_t), runs: usize, device: &str) {
		let batch = Batch::new::<T>(stream, (1024, 64));
		let one = Batch::new::<T>(stream, (4096, 1));
		let strided = median_ms(stream, runs, || cublas_strided::<T>(h, (1024, 64), batch.addresses(stream)));
		let single = median_ms(stream, runs, || cublas_strided::<T>(h, (4096, 1), one.addresses(stream)));
		for precision in [Precision::SchemeII { moduli: 15 }, Precision::F64] {
			let b = median_ms(stream, runs, || drop(batch.run::<T>(emu, stream, (precision, true))));
			let batch_plans = plans(&batch.run::<T>(emu, stream, (precision, true)));
			let s = median_ms(stream, runs, || drop(one.run::<T>(emu, stream, (precision, false))));
			let single_plan = plans(&one.run::<T>(emu, stream, (precision, false)));
			let what = |shape: &str| format!("{} {precision}, {shape}", T::NAME);
			row(
				device,
				&what("64 x 1024^3, batch"),
				(&batch_plans, b),
				("cuBLAS strided batch", strided),
			);
			row(device, &what("4096^3, one product"), (&single_plan, s), ("cuBLAS GEMM", single));
			println!(
				"| {device} | {} | batch speed-up / single speed-up | {:.3} | | |",
				what("64 x 1024^3 against 4096^3"),
				(strided / b) / (single / s)
			);
			let host = median_host_ms(stream, runs, || drop(batch.run::<T>(emu, stream, (precision, true))));
			println!(
				"| {device} | {} | the call's return, on the host | {host:.3} | | |",
				what("64 x 1024^3, batch")
			);
		}
	}
}
