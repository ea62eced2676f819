//! every operand form the API takes gives the `MatRef` path's product bit for bit: faer's
//! matrices, columns and rows (owned, views, mutable views), conjugated and adjoint views (equal
//! to conjugating first), the free function `matmul` on any `Par`, and nalgebra's matrices,
//! vectors, views and `emu_gemm`. Each product is checked to have run the emulation (the CPU
//! emulation backend, the native product reserved for rows no plan certifies), so that a native
//! fallback cannot make a comparison pass

mod common;

use common::{cpu, emulated, same_bits};
use emugemm::testing::random_matrix;
use emugemm::{Accum, EmuMatMul, Emulator, Precision, Route, Scalar, Scheme};
use faer::{Col, Mat, MatRef, Par, Row, c64};

/// the precisions the forms are checked at: a target (the bound and the policy run) and an
/// explicit plan of each scheme
const PRECISIONS: [Precision; 3] = [Precision::F64, Precision::SchemeI { slices: 4 }, Precision::SchemeII { moduli: 9 }];

/// the product that `report` describes ran the emulation on the CPU (a context's last report, or
/// for the global context, which other tests share, this thread's)
fn emulation_ran(report: Option<emugemm::Report>) {
	let report = report.expect("a report");
	assert_eq!(report.route, Route::Cpu, "{report}");
	assert_ne!(report.plan.scheme, Scheme::Native, "{report}");
}

/// the conjugate of `a`, copied
fn conjugated<T: Scalar>(a: MatRef<'_, T>) -> Mat<T> {
	Mat::from_fn(a.nrows(), a.ncols(), |i, j| T::from_parts(a[(i, j)].re(), -a[(i, j)].im()))
}

/// conjugated and adjoint views of either operand, and of both, equal the product of the
/// conjugates copied first, for every precision
#[test]
fn conjugated_views_equal_conjugating_first() {
	let emu = cpu();
	let z = random_matrix::<c64>(48, 40, 1.0, 1);
	let w = random_matrix::<c64>(48, 40, 1.0, 2);
	let (zh, zc) = (conjugated(z.as_ref().transpose()), conjugated(z.as_ref()));
	let wc = conjugated(w.as_ref());
	for precision in PRECISIONS {
		let expected = emulated(&emu, zh.as_ref(), w.as_ref(), precision);
		let got = z.adjoint().emu_mul_with(&emu, &w, precision).unwrap();
		emulation_ran(emu.last_report());
		assert!(same_bits(got.as_ref(), expected.as_ref()), "zᴴ w at {precision:?}");

		let expected = emulated(&emu, zc.as_ref(), wc.as_ref().transpose(), precision);
		let got = z.conjugate().emu_mul_with(&emu, &w.adjoint(), precision).unwrap();
		emulation_ran(emu.last_report());
		assert!(same_bits(got.as_ref(), expected.as_ref()), "conj(z) wᴴ at {precision:?}");

		let expected = emulated(&emu, z.as_ref(), wc.as_ref().transpose(), precision);
		let mut got = Mat::<c64>::zeros(48, 48);
		emu.matmul(
			got.as_mut(),
			Accum::Replace,
			(z.as_ref(), w.adjoint()),
			c64::new(1.0, 0.0),
			(faer::Par::rayon(0), precision),
		)
		.unwrap();
		emulation_ran(emu.last_report());
		assert!(same_bits(got.as_ref(), expected.as_ref()), "z wᴴ at {precision:?}");
	}
}

/// the native product reads conjugated views conjugated too
#[test]
fn native_products_read_conjugated_views() {
	let emu = Emulator::with_backend(emugemm::Backend::Native).unwrap();
	let z = random_matrix::<c64>(30, 20, 1.0, 3);
	let got = z.adjoint().emu_mul_with(&emu, &z, Precision::F64).unwrap();
	let expected = conjugated(z.as_ref().transpose()) * &z;
	assert_eq!(emu.last_report().unwrap().route, Route::Native);
	assert!((&got - &expected).norm_max() <= 1e-13 * expected.norm_max());
	assert!(got[(3, 3)].im.abs() <= 1e-12, "zᴴ z has a real diagonal");
}

/// owned matrices, views and mutable views, in every combination, equal the `MatRef` path
#[test]
fn matrix_forms_equal_the_view_path() {
	let emu = cpu();
	let mut a = random_matrix::<f64>(33, 47, 1.0, 4);
	let mut b = random_matrix::<f64>(47, 29, 1.0, 5);
	for precision in PRECISIONS {
		let expected = emulated(&emu, a.as_ref(), b.as_ref(), precision);
		let products = [
			a.emu_mul_with(&emu, &b, precision).unwrap(),
			a.emu_mul_with(&emu, &b.as_ref(), precision).unwrap(),
			a.as_ref().emu_mul_with(&emu, &b, precision).unwrap(),
			a.as_mut().emu_mul_with(&emu, &b.as_ref(), precision).unwrap(),
			a.as_ref().emu_mul_with(&emu, &b.as_mut(), precision).unwrap(),
		];
		emulation_ran(emu.last_report());
		for (form, got) in products.iter().enumerate() {
			assert!(same_bits(got.as_ref(), expected.as_ref()), "form {form} at {precision:?}");
		}
	}
}

/// `Mat * Col` is a `Col`, `Row * Mat` a `Row`, `Row * Col` a scalar and `Col * Row` a `Mat`,
/// each equal to the matching slice of the `MatRef` product
#[test]
fn columns_and_rows_equal_the_view_path() {
	let emu = cpu();
	let a = random_matrix::<c64>(37, 41, 1.0, 6);
	let x: Col<c64> = random_matrix::<c64>(41, 1, 1.0, 7).col(0).to_owned();
	let y: Row<c64> = random_matrix::<c64>(1, 37, 1.0, 8).row(0).to_owned();
	for precision in PRECISIONS {
		let ax = a.emu_mul_with(&emu, &x, precision).unwrap();
		emulation_ran(emu.last_report());
		let expected = emulated(&emu, a.as_ref(), x.as_mat(), precision);
		assert!(same_bits(ax.as_mat(), expected.as_ref()), "A x at {precision:?}");

		let ya = y.as_ref().emu_mul_with(&emu, &a, precision).unwrap();
		let expected = emulated(&emu, y.as_mat(), a.as_ref(), precision);
		assert!(same_bits(ya.as_mat(), expected.as_ref()), "y A at {precision:?}");

		let yax: c64 = y.emu_mul_with(&emu, &ax.as_ref(), precision).unwrap();
		let expected = emulated(&emu, y.as_mat(), ax.as_mat(), precision);
		assert!(
			same_bits(Mat::from_fn(1, 1, |_, _| yax).as_ref(), expected.as_ref()),
			"y (A x) at {precision:?}"
		);

		let outer = ax.emu_mul_with(&emu, &y, precision).unwrap();
		let expected = emulated(&emu, ax.as_mat(), y.as_mat(), precision);
		assert!(same_bits(outer.as_ref(), expected.as_ref()), "(A x) y at {precision:?}");
	}
}

/// the free function, on any `Par`, equals the context's product bit for bit (the global context
/// is the CPU emulation here, for every test of this file that uses it)
#[test]
fn the_free_function_equals_the_context_on_any_par() {
	Emulator::set_global(cpu());
	let a = random_matrix::<c64>(64, 50, 1.0, 9);
	let b = random_matrix::<c64>(50, 40, 1.0, 10);
	let alpha = c64::new(0.5, -2.0);
	for precision in PRECISIONS {
		let mut expected = random_matrix::<c64>(64, 40, 1.0, 11);
		let mut got = expected.clone();
		cpu()
			.matmul(
				expected.as_mut(),
				Accum::Add,
				(a.as_ref(), b.as_ref()),
				alpha,
				(faer::Par::rayon(0), precision),
			)
			.unwrap();
		for par in [Par::Seq, Par::rayon(2), Par::rayon(0)] {
			let mut c = got.clone();
			emugemm::matmul(&mut c, Accum::Add, (&a, b.as_ref()), alpha, (par, precision)).unwrap();
			emulation_ran(emugemm::last_report());
			assert!(same_bits(c.as_ref(), expected.as_ref()), "{par:?} at {precision:?}");
		}
		emugemm::matmul(got.as_mut(), Accum::Add, (a.as_ref(), &b), alpha, (Par::Seq, precision)).unwrap();
		assert!(same_bits(got.as_ref(), expected.as_ref()));
	}
}

/// nalgebra: matrices, vectors, views and static shapes give what `*` gives, equal to the faer
/// view path, and `emu_gemm` keeps nalgebra's `gemm` semantics
#[cfg(feature = "nalgebra")]
mod nalgebra_forms {
	use super::*;
	use nalgebra::{DMatrix, DVector, SMatrix, SVector};

	fn faer_view<T: Scalar>(m: &DMatrix<T>) -> MatRef<'_, T> {
		MatRef::from_column_major_slice(m.as_slice(), m.nrows(), m.ncols())
	}

	#[test]
	fn matrices_vectors_and_views_equal_the_view_path() {
		let emu = cpu();
		let a = random_matrix::<f64>(45, 38, 1.0, 12);
		let a = DMatrix::from_fn(45, 38, |i, j| a[(i, j)]);
		let x = DVector::from_fn(38, |i, _| (i as f64).sin());
		for precision in PRECISIONS {
			let ax: DVector<f64> = a.emu_mul_with(&emu, &x, precision).unwrap();
			emulation_ran(emu.last_report());
			let xm = DMatrix::from_column_slice(38, 1, x.as_slice());
			let expected = emulated(&emu, faer_view(&a), faer_view(&xm), precision);
			assert!(same_bits(
				faer_view(&DMatrix::from_column_slice(45, 1, ax.as_slice())),
				expected.as_ref()
			));

			// a strided view: rows 3.. of every other column
			let view = a.view((3, 0), (40, 38));
			let got = view.emu_mul_with(&emu, &a.transpose(), precision).unwrap();
			let owned = view.clone_owned();
			let expected = owned.emu_mul_with(&emu, &a.transpose(), precision).unwrap();
			assert!(same_bits(faer_view(&got), faer_view(&expected)), "view at {precision:?}");
		}
		let s = SMatrix::<f64, 3, 3>::from_fn(|i, j| (i + 3 * j) as f64);
		let v = SVector::<f64, 3>::new(1.0, -2.0, 0.5);
		let sv: SVector<f64, 3> = s.emu_mul_with(&emu, &v, Precision::F64).unwrap();
		assert_eq!(sv, s * v);
	}

	#[test]
	fn emu_gemm_keeps_gemm_semantics() {
		Emulator::set_global(cpu());
		let a = random_matrix::<f64>(40, 30, 1.0, 13);
		let b = random_matrix::<f64>(30, 20, 1.0, 14);
		let (a, b) = (
			DMatrix::from_fn(40, 30, |i, j| a[(i, j)]),
			DMatrix::from_fn(30, 20, |i, j| b[(i, j)]),
		);
		let c0 = DMatrix::from_fn(40, 20, |i, j| (i as f64 - j as f64) / 7.0);
		for precision in PRECISIONS {
			// beta = 0: c is not read, its NaNs do not spread
			let mut c = DMatrix::from_element(40, 20, f64::NAN);
			emugemm::emu_gemm(&mut c, 2.0, (&a, &b), 0.0, precision).unwrap();
			emulation_ran(emugemm::last_report());
			let mut expected = Mat::<f64>::zeros(40, 20);
			cpu()
				.matmul(
					expected.as_mut(),
					Accum::Replace,
					(faer_view(&a), faer_view(&b)),
					2.0,
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			assert!(same_bits(faer_view(&c), expected.as_ref()), "beta = 0 at {precision:?}");

			// beta = 0.5: c scaled first, the product added
			let mut c = c0.clone();
			emugemm::emu_gemm(&mut c, -1.5, (&a, &b), 0.5, precision).unwrap();
			let mut expected = Mat::<f64>::from_fn(40, 20, |i, j| 0.5 * c0[(i, j)]);
			cpu()
				.matmul(
					expected.as_mut(),
					Accum::Add,
					(faer_view(&a), faer_view(&b)),
					-1.5,
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			assert!(same_bits(faer_view(&c), expected.as_ref()), "beta = 0.5 at {precision:?}");
		}
		// a view as the destination, written in place
		let mut big = DMatrix::<f64>::zeros(50, 30);
		emugemm::emu_gemm(&mut big.view_mut((5, 5), (40, 20)), 1.0, (&a, &b), 0.0, Precision::F64).unwrap();
		assert_eq!(big[(0, 0)], 0.0);
		assert_ne!(big[(5, 5)], 0.0);
		// shapes that do not agree are an error, and c is left as it was
		let mut c = c0.clone();
		assert!(emugemm::emu_gemm(&mut c, 1.0, (&a, &a), 0.5, Precision::F64).is_err());
		assert_eq!(c, c0);
	}
}
