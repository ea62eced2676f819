//! conjugated views on the GPU: host products staged whole, in tiles (out of core) and over two
//! pipelines, and conjugated uploads, all equal to the CPU oracle's product of the conjugates
//! copied first, bit for bit, with the GPU's emulation checked to have run
//!
//! these tests need an NVIDIA Hopper GPU and a build with the `cuda` feature: they are ignored
//! otherwise (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::{cpu, same_bits};
use emugemm::testing::random_matrix;
use emugemm::{Accum, Backend, Emulator, Precision, Route, Scheme};
use faer::{Mat, MatRef, c64};

/// the GPU backend, the native product reserved for what no plan certifies
fn gpu() -> Emulator {
	Emulator::with_backend(Backend::Gpu)
		.unwrap_or_else(|e| panic!("these tests need a Hopper GPU and the cuda feature: {e}"))
		.with_native_candidate(false)
}

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
					lhs_copy.as_ref(),
					rhs_copy.as_ref(),
					alpha,
					precision,
				)
				.unwrap();
			let mut got = old.clone();
			if *adjoint_lhs {
				emu.matmul(got.as_mut(), Accum::Add, z.adjoint(), w.as_ref(), alpha, precision)
					.unwrap();
			} else {
				emu.matmul(got.as_mut(), Accum::Add, y.conjugate(), v.adjoint(), alpha, precision)
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
	let emu = Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false);
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
