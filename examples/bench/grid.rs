//! the benchmark's grid (`grid`, or `grid f64`, `grid c64`, `grid f32`, `grid c32`): products on
//! device views of a caller's stream, as the C ABI and the cuBLAS interposer run them, over the
//! shapes programs make: square from 256 to 16384, m = n from 1024 to 16384 with k from 64 to
//! 16384, skinny products, and the trailing updates of blocked LU and QR of order 8192 (blocks of
//! 256, 512, 1024), for f64 and c64 at `F64` and f32 and c32 at `F32`. Per shape, each the median
//! of its device spans (events on the caller's stream around the call, so that the host's
//! decisions count) after one warm-up:
//! - `native`: the type's cuBLAS GEMM on the caller's stream, as the program would call it;
//! - `chosen`: the call on the default context (the plan its tiers choose), and its host time;
//! - `emulated`: the same call with the native product off the candidates (the plan the bound
//!   certifies, with its certificate), and `alone`: that plan given explicitly (no bound);
//!
//! then the faster of `native` and `emulated`, and `chosen / faster`. Then `grid screened` rows:
//! the call at 4096³ and 8192³ on operands of spread phi = 4, which the screen sends native
//! (`chosen / native`, the price of the statistics and the screen). The rows are what the cost
//! model is fitted to (`src/cost.rs`); a chosen route more than 5% slower than the faster one is
//! the model's error at that shape

use super::timing::median_spans;
use cudarc::cublas::{CudaBlas, sys as blas};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use emugemm::{DeviceView, DeviceViewMut, Emulator, Precision, Scalar, Scheme};
use faer::{c32, c64};
use rayon::prelude::*;
use std::sync::Arc;

/// the grid's shapes `(m, n, k)`
pub fn shapes() -> Vec<(usize, usize, usize)> {
	let mut shapes: Vec<(usize, usize, usize)> = [256, 512, 1024, 2048, 4096, 8192, 16384].map(|n| (n, n, n)).into();
	for n in [1024, 4096, 8192, 16384] {
		for k in [64, 256, 1024, 4096, 16384] {
			shapes.push((n, n, k));
		}
	}
	shapes.extend([(2048, 2048, 64), (2048, 2048, 512), (2048, 2048, 16384)]);
	shapes.extend([
		(65536, 64, 4096),
		(64, 65536, 4096),
		(16384, 256, 16384),
		(256, 16384, 16384),
		(4096, 64, 65536),
	]);
	// blocked LU of order 8192: the trailing updates `(n - j b)^2 x b`; QR: `W = Yᴴ A` and `A -= Y W`
	for b in [256, 512, 1024] {
		for rest in [8192 - b, 6144, 4096, 2048] {
			shapes.push((rest, rest, b));
		}
		shapes.extend([(b, 8192 - b, 8192), (8192, 8192 - b, b)]);
	}
	let mut seen = std::collections::HashSet::new();
	shapes.retain(|s| seen.insert(*s));
	shapes
}

/// the largest product the grid runs for complex types (ZGEMM of 16384³ alone takes 0.7 s a run)
const COMPLEX_WORK: usize = 1 << 41;

/// the grid for every type selected by `selected(label)` (`grid f64`, ...), its rows to `rows`
pub fn grid(selected: &dyn Fn(&str) -> bool, rows: &mut dyn FnMut(String)) {
	let ctx = CudaContext::new(0).expect("GPU 0");
	let stream = ctx.new_stream().expect("a stream");
	rows("| grid | type | m | n | k | tier | chosen plan | chosen ms | chosen host us | native ms | emulated plan | emulated ms | alone ms | faster | chosen / faster |".into());
	if selected("grid f64") {
		run::<f64>(&stream, Precision::F64, rows);
	}
	if selected("grid c64") {
		run::<c64>(&stream, Precision::F64, rows);
	}
	if selected("grid f32") {
		run::<f32>(&stream, Precision::F32, rows);
	}
	if selected("grid c32") {
		run::<c32>(&stream, Precision::F32, rows);
	}
}

/// the type's cuBLAS GEMM, `C = A B` column-major with compact leading dimensions
pub trait Gemm: Scalar {
	/// # Safety
	/// `a`, `b`, `c` are device addresses of `m x k`, `k x n`, `m x n` matrices of this type
	unsafe fn gemm(handle: blas::cublasHandle_t, shape: (usize, usize, usize), matrices: (u64, u64, u64)) -> blas::cublasStatus_t;
}

macro_rules! gemm {
	($t:ty, $f:ident, $e:ty, $one:expr, $zero:expr) => {
		impl Gemm for $t {
			unsafe fn gemm(handle: blas::cublasHandle_t, (m, n, k): (usize, usize, usize), (a, b, c): (u64, u64, u64)) -> blas::cublasStatus_t {
				let (one, zero): ($e, $e) = ($one, $zero);
				let op = blas::cublasOperation_t::CUBLAS_OP_N;
				let (mi, ni, ki) = (m as i32, n as i32, k as i32);
				// SAFETY: the caller's promise; host scalars in the handle's default pointer mode
				unsafe { blas::$f(handle, op, op, mi, ni, ki, &one, a as *const $e, mi, b as *const $e, ki, &zero, c as *mut $e, mi) }
			}
		}
	};
}
gemm!(f64, cublasDgemm_v2, f64, 1.0, 0.0);
gemm!(f32, cublasSgemm_v2, f32, 1.0, 0.0);
gemm!(
	c64,
	cublasZgemm_v2,
	blas::double2,
	blas::double2 { x: 1.0, y: 0.0 },
	blas::double2 { x: 0.0, y: 0.0 }
);
gemm!(
	c32,
	cublasCgemm_v2,
	blas::float2,
	blas::float2 { x: 1.0, y: 0.0 },
	blas::float2 { x: 0.0, y: 0.0 }
);

/// `count` values of `T` as `(u - 0.5) e^(phi z)` parts (`u` uniform, `z` standard normal), from a
/// hash of each index: any block of them is as random as the whole
fn filled<T: Scalar>(count: usize, (phi, seed): (f64, u64)) -> Vec<T> {
	let mix = |mut x: u64| {
		x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
		x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
		x ^ (x >> 31)
	};
	let unit = |x: u64| ((x >> 11) as f64 + 0.5) * f64::powi(2.0, -53);
	let part = |i: u64| {
		let (u, v, w) = (unit(mix(i)), unit(mix(i ^ 0x5555)), unit(mix(i ^ 0xAAAA)));
		let z = (-2.0 * v.ln()).sqrt() * (std::f64::consts::TAU * w).cos();
		(u - 0.5) * (phi * z).exp()
	};
	(0..count)
		.into_par_iter()
		.map(|i| {
			let at = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (2 * i as u64);
			T::from_parts(part(at), if T::IS_COMPLEX { part(at + 1) } else { 0.0 })
		})
		.collect()
}

/// the medians of the device span (ms) and of the host time (µs) of `call` on `stream`, over 3
/// runs for the largest products and 5 otherwise
fn timed(stream: &Arc<CudaStream>, work: usize, call: impl FnMut()) -> (f64, f64) {
	let runs = if work > 1 << 38 { 3 } else { 5 };
	let (device, host) = median_spans(stream, runs, call);
	(f64::from(device), 1e3 * f64::from(host))
}

/// the grid of `T` at `precision`
fn run<T: Gemm>(stream: &Arc<CudaStream>, precision: Precision, rows: &mut dyn FnMut(String)) {
	let shapes: Vec<_> = shapes()
		.into_iter()
		.filter(|&(m, n, k)| !T::IS_COMPLEX || m * n * k <= COMPLEX_WORK)
		.collect();
	let largest = |f: fn(&(usize, usize, usize)) -> usize| shapes.iter().map(f).max().unwrap_or(0);
	let a = upload::<T>(stream, largest(|s| s.0 * s.2), (1.0, 1));
	let b = upload::<T>(stream, largest(|s| s.2 * s.1), (1.0, 2));
	let c = upload::<T>(stream, largest(|s| s.0 * s.1), (1.0, 3));
	let addr = |x: &CudaSlice<u8>| x.device_ptr(stream).0;
	let (pa, pb, pc) = (addr(&a), addr(&b), addr(&c));
	let handle = CudaBlas::new(stream.clone()).expect("cuBLAS");
	let chosen = Emulator::new().expect("a GPU context");
	let forced = Emulator::new().expect("a GPU context").with_native_candidate(false);
	for (m, n, k) in shapes {
		let at = (pa, pb, pc);
		let product = |emu: &Emulator, precision: Precision| multiply::<T>(emu, stream, ((m, n, k), at), precision);
		let work = m * n * k * if T::IS_COMPLEX { 4 } else { 1 };
		let (native, _) = timed(stream, work, || gemm::<T>(&handle, (m, n, k), at));
		let (chosen_ms, chosen_host) = timed(stream, work, || product(&chosen, precision));
		let report = chosen.last_report().expect("a report");
		let (emulated_ms, _) = timed(stream, work, || product(&forced, precision));
		let emulated = forced.last_report().expect("a report").plan.scheme;
		let given = match emulated {
			Scheme::SchemeI { slices } => Some(Precision::SchemeI { slices }),
			Scheme::SchemeII { moduli, .. } => Some(Precision::SchemeII { moduli }),
			Scheme::Native => None,
		};
		let alone = given.map(|p| timed(stream, work, || product(&chosen, p)).0);
		let faster = if emulated == Scheme::Native {
			native
		} else {
			native.min(emulated_ms)
		};
		rows(format!(
			"| grid | {} | {m} | {n} | {k} | {} | {} | {chosen_ms:.4} | {chosen_host:.1} | {native:.4} | {emulated} | {} | {} | {} | {:.3} |",
			T::NAME,
			report.tier(),
			report.plan.scheme,
			if emulated == Scheme::Native {
				"-".into()
			} else {
				format!("{emulated_ms:.4}")
			},
			alone.map_or("-".into(), |t| format!("{t:.4}")),
			if faster == native { "native" } else { "emulated" },
			chosen_ms / faster
		));
	}
	drop((a, b, c));
	screened::<T>(stream, (precision, &handle), rows);
}

/// `elements` values of `T` filled with spread `phi` from `seed`, on the device
pub fn upload<T: Scalar>(stream: &Arc<CudaStream>, elements: usize, phi_seed: (f64, u64)) -> CudaSlice<u8> {
	stream
		.clone_htod(bytemuck::cast_slice::<T, u8>(&filled::<T>(elements, phi_seed)))
		.expect("the upload")
}

/// the call on operands of spread phi = 4 (`(u - 0.5) e^(4 z)`), which no plan certifies at the
/// target: what the statistics and the screen cost a call that ends native, against the GEMM
fn screened<T: Gemm>(stream: &Arc<CudaStream>, (precision, handle): (Precision, &CudaBlas), rows: &mut dyn FnMut(String)) {
	let chosen = Emulator::new().expect("a GPU context");
	for n in [4096, 8192] {
		let (a, b, c) = (
			upload::<T>(stream, n * n, (4.0, 4)),
			upload::<T>(stream, n * n, (4.0, 5)),
			upload::<T>(stream, n * n, (0.0, 6)),
		);
		let addr = |x: &CudaSlice<u8>| x.device_ptr(stream).0;
		let (pa, pb, pc) = (addr(&a), addr(&b), addr(&c));
		let work = n * n * n * if T::IS_COMPLEX { 4 } else { 1 };
		let at = (pa, pb, pc);
		let (native, _) = timed(stream, work, || gemm::<T>(handle, (n, n, n), at));
		let (chosen_ms, chosen_host) = timed(stream, work, || multiply::<T>(&chosen, stream, ((n, n, n), at), precision));
		let report = chosen.last_report().expect("a report");
		rows(format!(
			"| grid screened | {} | {n} | {n} | {n} | {} | {} | {chosen_ms:.4} | {chosen_host:.1} | {native:.4} | - | - | - | native | {:.3} |",
			T::NAME,
			report.tier(),
			report.plan.scheme,
			chosen_ms / native
		));
	}
}

/// `C = A B` by the type's cuBLAS GEMM on `handle`'s stream, of the compact `m x k`, `k x n` and
/// `m x n` matrices at `at`
pub fn gemm<T: Gemm>(handle: &CudaBlas, shape: (usize, usize, usize), at: (u64, u64, u64)) {
	// SAFETY: the grid's buffers hold the matrices of every shape it runs
	let status = unsafe { T::gemm(*handle.handle(), shape, at) };
	assert_eq!(status, blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS);
}

/// `C = A B` at `precision` on `emu`, on device views of the compact `m x k`, `k x n` and `m x n`
/// matrices at `(a, b, c)`, on `stream`
pub fn multiply<T: Scalar>(
	emu: &Emulator,
	stream: &Arc<CudaStream>,
	((m, n, k), (a, b, c)): ((usize, usize, usize), (u64, u64, u64)),
	precision: Precision,
) {
	// SAFETY: the grid's buffers hold the matrices of every shape it runs
	let (va, vb, vc) = unsafe {
		(
			DeviceView::<T>::from_raw(a, (m, k), m).unwrap(),
			DeviceView::<T>::from_raw(b, (k, n), k).unwrap(),
			DeviceViewMut::<T>::from_raw(c, (m, n), m).unwrap(),
		)
	};
	emu.gemm_on_stream(
		vc,
		T::from_parts(1.0, 0.0),
		(va, vb),
		T::from_parts(0.0, 0.0),
		(precision, stream.into()),
	)
	.expect("the product");
}
