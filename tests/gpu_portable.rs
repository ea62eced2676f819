//! the portable path (the generic kernels from `compute_80` PTX, compiled by the driver, and
//! cuBLASLt's INT8 products), forced on the Hopper GPU: bit for bit the CPU oracle's result for
//! every type, for explicit plans of both schemes and a target precision, and named in the report
//!
//! these tests need an NVIDIA Hopper GPU and a build with the `cuda` feature: they are ignored
//! otherwise (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::{cpu, emulated, same_bits};
use emugemm::testing::{InnerPattern, Pair, pair, random_matrix};
use emugemm::{Accum, Backend, Emulator, Precision, Route, Scalar, Scheme};
use faer::{c32, c64};

/// the portable path on the Hopper GPU, the native product reserved for what no plan certifies
fn portable() -> Emulator {
	Emulator::with_backend(Backend::Gpu)
		.unwrap_or_else(|e| panic!("these tests need a Hopper GPU and the cuda feature: {e}"))
		.with_portable_path(true)
		.with_native_candidate(false)
}

fn equals_the_oracle<T: Scalar>() {
	let (emu, oracle) = (portable(), cpu());
	let (m, k, n) = (211, 300, 173);
	let inputs = [
		(random_matrix::<T>(m, k, 1.0, 1), random_matrix::<T>(k, n, 1.0, 2)),
		pair::<T>(
			Pair::InnerScaled {
				pattern: InnerPattern::Blocks,
				range: 30,
			},
			m,
			k,
			n,
			3,
		),
	];
	let precisions = [
		Precision::SchemeI { slices: 3 },
		Precision::SchemeI { slices: 7 },
		Precision::SchemeII { moduli: 9 },
		Precision::SchemeII { moduli: 18 },
		Precision::F64,
	];
	for (a, b) in &inputs {
		for precision in precisions {
			let got = emulated(&emu, a.as_ref(), b.as_ref(), precision);
			let report = emu.last_report().unwrap();
			let expected = emulated(&oracle, a.as_ref(), b.as_ref(), precision);
			let reference = oracle.last_report().unwrap();
			assert_eq!(
				report.plan.scheme,
				reference.plan.scheme,
				"{} {precision:?}: the same plan",
				T::NAME
			);
			assert_ne!(report.plan.scheme, Scheme::Native, "{} {precision:?}: {report}", T::NAME);
			assert_eq!(report.route, Route::Portable, "{} {precision:?}: {report}", T::NAME);
			assert_eq!(report.native_rows, reference.native_rows);
			assert!(same_bits(got.as_ref(), expected.as_ref()), "{} {precision:?}: {report}", T::NAME);
		}
	}
	// alpha and accumulation, through the same path
	let (a, b) = &inputs[0];
	let old = random_matrix::<T>(m, n, 1.0, 4);
	let alpha = T::from_parts(-0.75, 0.5);
	let (mut got, mut expected) = (old.clone(), old);
	let precision = Precision::SchemeII { moduli: 14 };
	emu.matmul(
		got.as_mut(),
		Accum::Add,
		(a.as_ref(), b.as_ref()),
		alpha,
		(faer::Par::rayon(0), precision),
	)
	.unwrap();
	oracle
		.matmul(
			expected.as_mut(),
			Accum::Add,
			(a.as_ref(), b.as_ref()),
			alpha,
			(faer::Par::rayon(0), precision),
		)
		.unwrap();
	assert!(same_bits(got.as_ref(), expected.as_ref()), "{} with alpha and Accum::Add", T::NAME);
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn portable_path_f64() {
	equals_the_oracle::<f64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn portable_path_c64() {
	equals_the_oracle::<c64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn portable_path_f32() {
	equals_the_oracle::<f32>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn portable_path_c32() {
	equals_the_oracle::<c32>();
}

/// the fused path stays the Hopper GPU's default, and a portable product leaves it so
#[test]
#[ignore = "needs a Hopper GPU"]
fn hopper_keeps_the_fused_path() {
	let a = random_matrix::<f64>(256, 256, 1.0, 5);
	let _ = emulated(&portable(), a.as_ref(), a.as_ref(), Precision::SchemeII { moduli: 12 });
	let fused = Emulator::with_backend(Backend::Gpu).unwrap().with_native_candidate(false);
	let _ = emulated(&fused, a.as_ref(), a.as_ref(), Precision::SchemeII { moduli: 12 });
	assert_eq!(fused.last_report().unwrap().route, Route::Fused);
}
