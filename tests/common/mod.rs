//! helpers shared by the integration tests: native comparison products, sizes, emulators
#![allow(dead_code)]

#[cfg(feature = "cuda")]
pub mod device;

use emugemm::{Accum, Backend, Emulator, Precision, Scalar};
use faer::{Mat, MatRef, c64};

/// the size of the square accuracy tests (`EMUGEMM_TEST_N`, default 96)
pub fn test_n() -> usize {
	std::env::var("EMUGEMM_TEST_N").ok().and_then(|v| v.parse().ok()).unwrap_or(96)
}

/// the CPU emulation backend, with the native product reserved for products no plan certifies
/// (so that the tests' small products run the emulation they test)
pub fn cpu() -> Emulator {
	Emulator::with_backend(Backend::CpuEmulation)
		.expect("the CPU emulation backend is always available")
		.with_native_candidate(false)
}

/// whether the GPU tests run on the portable path (`EMUGEMM_TEST_PORTABLE=1`: the generic kernels
/// from their PTX and cuBLASLt's INT8 products, forced on a Hopper GPU), so that one suite covers
/// both paths
pub fn portable_run() -> bool {
	std::env::var("EMUGEMM_TEST_PORTABLE").as_deref() == Ok("1")
}

/// `emu` on the path the run asks for (see [`portable_run`])
pub fn on_path(emu: Emulator) -> Emulator {
	emu.with_portable_path(portable_run())
}

/// the route a product on a Hopper GPU takes: `fused`, or the portable path's on a portable run
pub fn route(fused: emugemm::Route) -> emugemm::Route {
	if portable_run() { emugemm::Route::Portable } else { fused }
}

/// the GPU backend on the run's path, with the native product reserved for products no plan
/// certifies (so that the tests' small products run the emulation they test)
pub fn gpu() -> Emulator {
	let emu = Emulator::with_backend(Backend::Gpu).unwrap_or_else(|e| panic!("these tests need a GPU and the cuda feature: {e}"));
	on_path(emu.with_native_candidate(false))
}

/// the backend of the accuracy tables: the CPU emulation, or the GPU when `EMUGEMM_TEST_BACKEND=gpu`
/// (bit for bit the same results, see tests/gpu.rs; much faster for large `EMUGEMM_TEST_N`)
pub fn table_backend() -> Emulator {
	match std::env::var("EMUGEMM_TEST_BACKEND").as_deref() {
		Ok("gpu") => Emulator::with_backend(Backend::Gpu)
			.expect("EMUGEMM_TEST_BACKEND=gpu needs a GPU")
			.with_native_candidate(false),
		_ => cpu(),
	}
}

/// a plan as a comparable value: `predicted_bits` by its bits (NaN for explicit plans, which
/// `Plan`'s own `==` never finds equal)
pub fn plan_key(p: &emugemm::Plan) -> (emugemm::Scheme, u64, usize, usize, bool) {
	(p.scheme, p.predicted_bits.to_bits(), p.k_passes, p.native_rows, p.separate_parts)
}

/// says that `test` is skipped on a machine with one GPU; fails instead where `EMUGEMM_TEST_GPUS=2`
/// says that the machine has two (so that a two-GPU run cannot pass by skipping)
pub fn skipped_on_one_gpu(test: &str) {
	assert_ne!(
		std::env::var("EMUGEMM_TEST_GPUS").as_deref(),
		Ok("2"),
		"{test}: EMUGEMM_TEST_GPUS=2, but no context over GPUs 0 and 1"
	);
	println!("{test}: SKIPPED, this machine has one GPU");
}

/// `a b` by `emu` at `precision`
pub fn emulated<T: Scalar>(emu: &Emulator, a: MatRef<'_, T>, b: MatRef<'_, T>, precision: Precision) -> Mat<T> {
	let mut c = Mat::zeros(a.nrows(), b.ncols());
	emu.matmul(
		c.as_mut(),
		Accum::Replace,
		(a, b),
		T::from_parts(1.0, 0.0),
		(faer::Par::rayon(0), precision),
	)
	.expect("emulated product");
	c
}

/// `x` rounded to TF32 (10 fraction bits, to nearest, ties to even), as the tensor cores read it
pub fn round_tf32(x: f64) -> f64 {
	let bits = (x as f32).to_bits();
	let lsb = (bits >> 13) & 1;
	f32::from_bits(bits.wrapping_add(0xFFF + lsb) & !0x1FFF) as f64
}

fn product_as<S: Scalar, T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>, round: fn(f64) -> f64) -> Mat<T> {
	let cast = |m: MatRef<'_, T>| {
		Mat::<S>::from_fn(m.nrows(), m.ncols(), |i, j| {
			S::from_parts(round(m[(i, j)].re()), round(m[(i, j)].im()))
		})
	};
	let c = &cast(a) * &cast(b);
	Mat::from_fn(c.nrows(), c.ncols(), |i, j| T::from_parts(c[(i, j)].re(), c[(i, j)].im()))
}

/// the native product that the promise of `precision` is measured against: FP64 (rounded to
/// `T`), FP32 on inputs rounded to FP32, or TF32 (inputs rounded to TF32, FP32 accumulation)
pub fn native_product<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>, precision: Precision) -> Mat<T> {
	fn keep(x: f64) -> f64 {
		x
	}
	fn to_f32(x: f64) -> f64 {
		x as f32 as f64
	}
	match (precision, T::IS_COMPLEX) {
		(Precision::F32, false) => product_as::<f32, T>(a, b, to_f32),
		(Precision::F32, true) => product_as::<faer::c32, T>(a, b, to_f32),
		(Precision::Tf32, false) => product_as::<f32, T>(a, b, round_tf32),
		(Precision::Tf32, true) => product_as::<faer::c32, T>(a, b, round_tf32),
		(_, false) => product_as::<f64, T>(a, b, keep),
		(_, true) => product_as::<c64, T>(a, b, keep),
	}
}

// the crate's own test of bit equality; not every test file that includes this module uses it
#[allow(unused_imports)]
pub use emugemm::testing::same_bits;
