//! conjugated views on the GPU: host products staged whole, in tiles (out of core) and over two
//! pipelines, and conjugated uploads, all equal to the CPU oracle's product of the conjugates
//! copied first, bit for bit, with the GPU's emulation checked to have run; and results the call
//! allocates (made resident while the GPU computes) equal to products into a matrix the caller
//! wrote first
//!
//! these tests need an NVIDIA Hopper GPU and a build with the `cuda` feature: they are ignored
//! otherwise (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::{cpu, emulated, gpu, on_path, same_bits};
use emugemm::testing::random_matrix;
use emugemm::{Accum, EmuMatMul, Emulator, Precision, Route, Scalar, Scheme};
use faer::traits::Conjugate;
use faer::{Mat, MatRef, c32, c64};

fn conjugated(a: MatRef<'_, c64>) -> Mat<c64> {
	Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[(i, j)].conj())
}

/// `zᴴ w` and `conj(y) vᴴ` (`Accum::Add`, a complex alpha) on `emu` equal the oracle's product of
/// the conjugates copied first
fn conjugated_products(emu: &Emulator, what: &str) {
	let (m, k, n) = (300, 170, 260);
	let z = random_matrix::<c64>(k, m, 1.0, 1);
	let w = random_matrix::<c64>(k, n, 1.0, 2);
	let y = random_matrix::<c64>(m, k, 1.0, 3);
	let v = random_matrix::<c64>(n, k, 1.0, 6);
	let old = random_matrix::<c64>(m, n, 1.0, 4);
	let alpha = c64::new(0.5, -1.25);
	let cases: [(Mat<c64>, Mat<c64>, bool); 2] = [
		(conjugated(z.as_ref().transpose()), w.clone(), true),
		(conjugated(y.as_ref()), conjugated(v.as_ref().transpose()), false),
	];
	for precision in [Precision::F64, Precision::SchemeII { moduli: 10 }, Precision::SchemeI { slices: 5 }] {
		for (lhs_copy, rhs_copy, adjoint_lhs) in &cases {
			let mut expected = old.clone();
			cpu()
				.matmul(
					expected.as_mut(),
					Accum::Add,
					(lhs_copy.as_ref(), rhs_copy.as_ref()),
					alpha,
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			let mut got = old.clone();
			if *adjoint_lhs {
				emu.matmul(
					got.as_mut(),
					Accum::Add,
					(z.adjoint(), w.as_ref()),
					alpha,
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			} else {
				emu.matmul(
					got.as_mut(),
					Accum::Add,
					(y.conjugate(), v.adjoint()),
					alpha,
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			}
			let report = emu.last_report().unwrap();
			assert!(!matches!(report.route, Route::Native | Route::Cpu), "{what}: {report}");
			assert_ne!(report.plan.scheme, Scheme::Native, "{what}: {report}");
			assert!(same_bits(got.as_ref(), expected.as_ref()), "{what} {precision:?}: {report}");
		}
	}
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn conjugated_views_staged_whole() {
	conjugated_products(&gpu(), "staged whole");
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn conjugated_views_out_of_core() {
	let emu = gpu().with_device_memory(3 << 20);
	conjugated_products(&emu, "out of core");
	assert!(emu.last_report().unwrap().tiles.is_some());
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn conjugated_views_over_two_pipelines() {
	let emu = on_path(Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false));
	conjugated_products(&emu, "two pipelines");
	assert!(emu.last_report().unwrap().tiles.is_some());
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn conjugated_uploads() {
	let emu = gpu();
	let z = random_matrix::<c64>(200, 150, 1.0, 5);
	let dz = emu.upload(z.adjoint()).unwrap();
	let host = dz.download().unwrap();
	assert!(same_bits(host.as_ref(), conjugated(z.as_ref().transpose()).as_ref()));
}

/// `a.emu_mul_with(emu, b)` of `T`, a result large enough to be made resident while the GPU
/// computes (several MiB), equals the product into a matrix written first, bit for bit, with the
/// emulation checked to have run; so does the nalgebra form, and a device matrix's download
/// equals what was uploaded
fn fresh_results<T: Scalar + Conjugate<Canonical = T>>(emu: &Emulator, what: &str, precision: Precision) {
	let (m, k, n) = (1500, 96, 1300);
	let a = random_matrix::<T>(m, k, 1.0, 7);
	let b = random_matrix::<T>(k, n, 1.0, 8);
	let expected = emulated(emu, a.as_ref(), b.as_ref(), precision);
	let fresh = a.emu_mul_with(emu, &b, precision).unwrap();
	let report = emu.last_report().unwrap();
	assert_ne!(report.plan.scheme, Scheme::Native, "{what} {}: {report}", T::NAME);
	assert!(same_bits(fresh.as_ref(), expected.as_ref()), "{what} {}: {report}", T::NAME);
	#[cfg(feature = "nalgebra")]
	{
		let (na, nb) = (
			nalgebra::DMatrix::<T>::from_column_slice(
				m,
				k,
				&a.col_iter().flat_map(|c| c.iter().copied().collect::<Vec<_>>()).collect::<Vec<_>>(),
			),
			nalgebra::DMatrix::<T>::from_column_slice(
				k,
				n,
				&b.col_iter().flat_map(|c| c.iter().copied().collect::<Vec<_>>()).collect::<Vec<_>>(),
			),
		);
		let c = na.emu_mul_with(emu, &nb, precision).unwrap();
		let c = MatRef::from_column_major_slice(c.as_slice(), m, n);
		assert!(same_bits(c, expected.as_ref()), "{what} {}: nalgebra", T::NAME);
	}
	let back = emu.upload(expected.as_ref()).unwrap().download().unwrap();
	assert!(same_bits(back.as_ref(), expected.as_ref()), "{what} {}: download", T::NAME);
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn fresh_results_staged_whole() {
	let emu = gpu();
	fresh_results::<f64>(&emu, "staged whole", Precision::F64);
	fresh_results::<c64>(&emu, "staged whole", Precision::SchemeII { moduli: 12 });
	fresh_results::<f32>(&emu, "staged whole", Precision::F32);
	fresh_results::<c32>(&emu, "staged whole", Precision::SchemeI { slices: 3 });
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn fresh_results_out_of_core_and_over_two_pipelines() {
	// less than the 15.6 MB of the result alone
	let tiled = gpu().with_device_memory(8 << 20);
	fresh_results::<f64>(&tiled, "out of core", Precision::F64);
	assert!(tiled.last_report().unwrap().tiles.is_some());
	let two = on_path(Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false));
	fresh_results::<c64>(&two, "two pipelines", Precision::F64);
}
