//! Rank-k updates on the GPU against cuBLAS, operands on the device, in one process: for f64 and
//! c64, `c = a aᴴ` (lower triangle) by cuBLAS DSYRK/ZHERK, by the emulated GEMM of the same
//! operands (`gemm_on_stream`, every entry) and by the emulated update (`rank_k_on_stream`), at
//! `Precision::F64` and at `SchemeII { moduli: 15 }`; the medians of device-event times over
//! `EMUGEMM_RANK_K_RUNS` runs (default 10) at `n = k = EMUGEMM_RANK_K_N` (default 8192), one row
//! each (the emulated rows with their host time from the statistics to the plan: the bound's
//! kernels, its download and the policy), and whether the update's triangle equals the GEMM's bit
//! for bit (it must).
//!
//! ```text
//! cargo run --release --features cuda,testing --example rank_k
//! ```
#[cfg(feature = "cuda")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
	bench::main()
}

#[cfg(not(feature = "cuda"))]
fn main() {
	eprintln!("rank_k: needs the `cuda` feature and an NVIDIA GPU");
}

#[cfg(feature = "cuda")]
#[path = "common/timing.rs"]
mod timing;

#[cfg(feature = "cuda")]
mod bench {
	use super::timing::median_ms;
	use cudarc::cublas::{CudaBlas, sys as blas};
	use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
	use emugemm::{DeviceView, DeviceViewMut, Emulator, Precision, Scalar};
	use faer::linalg::matmul::triangular::BlockStructure;
	use std::sync::Arc;

	fn env(name: &str, default: usize) -> usize {
		std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
	}

	/// an element type's cuBLAS routines: the rank-k update and the GEMM `a aᴴ`, lower triangle
	trait Blas: Scalar {
		fn syrk(h: blas::cublasHandle_t, n: i32, k: i32, a: u64, c: u64);
		fn gemm(h: blas::cublasHandle_t, n: i32, k: i32, a: u64, c: u64);
	}

	impl Blas for f64 {
		fn syrk(h: blas::cublasHandle_t, n: i32, k: i32, a: u64, c: u64) {
			let (alpha, beta) = (1.0f64, 0.0f64);
			use blas::{cublasFillMode_t::CUBLAS_FILL_MODE_LOWER as LOWER, cublasOperation_t::CUBLAS_OP_N as N};
			// SAFETY: a (n x k) and c (n x n) are device buffers of f64 on the handle's stream
			unsafe { blas::cublasDsyrk_v2(h, LOWER, N, n, k, &alpha, a as _, n, &beta, c as _, n) }
				.result()
				.unwrap();
		}
		fn gemm(h: blas::cublasHandle_t, n: i32, k: i32, a: u64, c: u64) {
			let (alpha, beta) = (1.0f64, 0.0f64);
			use blas::cublasOperation_t::{CUBLAS_OP_N as N, CUBLAS_OP_T as T};
			// SAFETY: as above
			unsafe { blas::cublasDgemm_v2(h, N, T, n, n, k, &alpha, a as _, n, a as _, n, &beta, c as _, n) }
				.result()
				.unwrap();
		}
	}

	impl Blas for faer::c64 {
		fn syrk(h: blas::cublasHandle_t, n: i32, k: i32, a: u64, c: u64) {
			let (alpha, beta) = (1.0f64, 0.0f64);
			use blas::{cublasFillMode_t::CUBLAS_FILL_MODE_LOWER as LOWER, cublasOperation_t::CUBLAS_OP_N as N};
			// SAFETY: a (n x k) and c (n x n) are device buffers of complex f64 on the handle's stream
			unsafe { blas::cublasZherk_v2(h, LOWER, N, n, k, &alpha, a as _, n, &beta, c as _, n) }
				.result()
				.unwrap();
		}
		fn gemm(h: blas::cublasHandle_t, n: i32, k: i32, a: u64, c: u64) {
			let one = blas::cuDoubleComplex { x: 1.0, y: 0.0 };
			let zero = blas::cuDoubleComplex { x: 0.0, y: 0.0 };
			use blas::cublasOperation_t::{CUBLAS_OP_C as C, CUBLAS_OP_N as N};
			// SAFETY: as above
			unsafe { blas::cublasZgemm_v2(h, N, C, n, n, k, &one, a as _, n, a as _, n, &zero, c as _, n) }
				.result()
				.unwrap();
		}
	}

	fn rows<T: Blas>(emu: &Emulator, stream: &Arc<CudaStream>, (n, k, runs): (usize, usize, usize), device: &str) {
		let host = emugemm::testing::random_matrix::<T>(n, k, 1.0, 1);
		let values: Vec<T> = (0..n * k).map(|idx| host[(idx % n, idx / n)]).collect();
		let bytes = size_of::<T>();
		let a: CudaSlice<u8> = stream.clone_htod(bytemuck::cast_slice::<T, u8>(&values)).unwrap();
		let mut c: CudaSlice<u8> = stream.alloc_zeros(n * n * bytes).unwrap();
		let mut dst: CudaSlice<u8> = stream.alloc_zeros(n * n * bytes).unwrap();
		let cublas = CudaBlas::new(stream.clone()).unwrap();
		let h = *cublas.handle();
		let (ni, ki) = (n as i32, k as i32);
		let (pa, pc) = (a.device_ptr(stream).0, c.device_ptr(stream).0);
		// SAFETY: the buffers hold n k and n n elements of T
		let a = unsafe { a.transmute::<T>(n * k) }.unwrap();
		let download = |s: &CudaSlice<u8>| -> Vec<T> {
			let b = stream.clone_dtoh(s).unwrap();
			b.chunks_exact(bytes).map(bytemuck::pod_read_unaligned).collect()
		};
		let syrk = median_ms(stream, runs, || T::syrk(h, ni, ki, pa, pc));
		let gemm = median_ms(stream, runs, || T::gemm(h, ni, ki, pa, pc));
		let row = |what: &str, plan: &str, ms: f32| {
			println!(
				"| {device} | {} | {what} | {plan} | {n} | {k} | {ms:.3} | {:.2} |",
				T::NAME,
				syrk / ms
			)
		};
		row("cuBLAS rank-k (SYRK/HERK)", "native", syrk);
		row("cuBLAS GEMM a aᴴ", "native", gemm);
		for precision in [Precision::F64, Precision::SchemeII { moduli: 15 }] {
			let on = || (precision, stream.into());
			let product = |c: &mut CudaSlice<u8>| {
				let av = DeviceView::new(&a, (n, k), n).unwrap();
				// SAFETY: as above
				let mut c = unsafe { c.transmute_mut::<T>(n * n) }.unwrap();
				let cv = DeviceViewMut::new(&mut c, (n, n), n).unwrap();
				emu.gemm_on_stream(cv, T::from_parts(1.0, 0.0), (av, av.adjoint()), T::from_parts(0.0, 0.0), on())
					.unwrap();
			};
			let g = median_ms(stream, runs, || product(&mut c));
			let report = emu.last_report().unwrap();
			let plan = report.plan.to_string();
			// the host time from the statistics to the plan: the bound's kernels, its download, the policy
			let bound = |r: &emugemm::Report| format!("; bound and policy {:.2} ms", r.times.bound.as_secs_f64() * 1e3);
			let gemm_bound = bound(&report);
			let whole = download(&c);
			let one = T::RealPart::from_parts(1.0, 0.0);
			let zero = T::RealPart::from_parts(0.0, 0.0);
			let update = |c: &mut CudaSlice<u8>| {
				let av = DeviceView::new(&a, (n, k), n).unwrap();
				// SAFETY: as above
				let mut c = unsafe { c.transmute_mut::<T>(n * n) }.unwrap();
				let cv = DeviceViewMut::new(&mut c, (n, n), n).unwrap();
				emu.rank_k_on_stream((cv, BlockStructure::TriangularLower), one, av, zero, on())
					.unwrap();
			};
			let u = median_ms(stream, runs, || update(&mut dst));
			let report = emu.last_report().unwrap();
			let update_plan = report.plan.to_string();
			let update_bound = bound(&report);
			let lower = download(&dst);
			let differ = (0..n)
				.flat_map(|j| (j..n).map(move |i| (i, j)))
				.filter(|&(i, j)| {
					let x = whole[i + j * n];
					let want = if i == j { T::from_parts(x.re(), 0.0) } else { x };
					bytemuck::bytes_of(&lower[i + j * n]) != bytemuck::bytes_of(&want)
				})
				.count();
			row(&format!("emugemm GEMM a aᴴ, {precision}"), &(plan.clone() + &gemm_bound), g);
			row(&format!("emugemm rank-k, {precision}"), &(update_plan.clone() + &update_bound), u);
			println!(
				"| {device} | {} | rank-k / GEMM, {precision} | {} | {n} | {k} | {:.3} | entries of the triangle differing from the GEMM's: {differ} |",
				T::NAME,
				if plan == update_plan { "same plan" } else { "PLANS DIFFER" },
				u / g
			);
		}
	}

	pub fn main() -> Result<(), Box<dyn std::error::Error>> {
		let (n, runs) = (env("EMUGEMM_RANK_K_N", 8192), env("EMUGEMM_RANK_K_RUNS", 10));
		let stream = CudaContext::new(0)?.new_stream()?;
		let emu = Emulator::global();
		let device = emu.gpu_name()?;
		println!("| GPU | type | routine | plan | n | k | median ms | x cuBLAS rank-k |");
		println!("|---|---|---|---|---|---|---|---|");
		rows::<f64>(&emu, &stream, (n, n, runs), &device);
		rows::<faer::c64>(&emu, &stream, (n, n, runs), &device);
		Ok(())
	}
}
