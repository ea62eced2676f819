//! the user-facing behaviour: shapes, views, accumulation, errors, determinism, non-finite inputs

mod common;

use common::{cpu, emulated, native_product, plan_key, same_bits, test_n};
use emugemm::testing::{ExactProduct, Pair, Sampling, pair, random_matrix};
use emugemm::{Accum, Backend, EmuMatMul, Emulator, Error, Precision, Scalar, Scheme};
use faer::{Mat, MatRef, c32, c64};

/// odd shapes, K = 1 and 1x1x1 among them, for every type: the emulation keeps the F64 promise
fn odd_shapes<T: Scalar>() {
	let emu = cpu();
	for (m, k, n) in [(1, 1, 1), (7, 33, 5), (257, 1, 129), (3, 64, 1), (1, 200, 1)] {
		let a = random_matrix::<T>(m, k, 1.0, 5);
		let b = random_matrix::<T>(k, n, 1.0, 6);
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		for precision in [
			Precision::F64,
			Precision::F32,
			Precision::SchemeI { slices: 3 },
			Precision::SchemeII { moduli: 7 },
		] {
			let c = emulated(&emu, a.as_ref(), b.as_ref(), precision);
			let got = exact.accuracy(c.as_ref());
			let native = exact.accuracy(native_product(a.as_ref(), b.as_ref(), precision).as_ref());
			let plan = emu.last_report().unwrap().plan;
			println!("{} {m}x{k}x{n} {precision:?}: {plan}: {got} (native {:.1})", T::NAME, native.bits);
			match precision {
				Precision::F64 | Precision::F32 => {
					assert!(got.bits >= native.bits - 1.0, "{m}x{k}x{n} {precision:?}");
					assert_ne!(plan.scheme, Scheme::Native, "{m}x{k}x{n} {precision:?}: the emulation must run");
				},
				// explicit plans promise nothing: they run as given, on every row
				Precision::SchemeI { slices } => {
					assert_eq!((plan.scheme, plan.native_rows), (Scheme::SchemeI { slices }, 0))
				},
				_ => assert!(matches!(plan.scheme, Scheme::SchemeII { moduli: 7, .. }) && plan.native_rows == 0),
			}
		}
	}
}

#[test]
fn odd_shapes_f64() {
	odd_shapes::<f64>();
}

#[test]
fn odd_shapes_c64() {
	odd_shapes::<c64>();
}

#[test]
fn odd_shapes_f32() {
	odd_shapes::<f32>();
}

#[test]
fn odd_shapes_c32() {
	odd_shapes::<c32>();
}

/// K beyond the exact INT32 bound of scheme I (16383 at 8 slices, 8191 for complex) runs in passes
#[test]
fn k_above_the_scheme_one_bound() {
	let emu = cpu();
	let a = random_matrix::<f64>(3, 20000, 1.0, 1);
	let b = random_matrix::<f64>(20000, 2, 1.0, 2);
	let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	let c = emulated(&emu, a.as_ref(), b.as_ref(), Precision::SchemeI { slices: 8 });
	let report = emu.last_report().unwrap();
	assert_eq!(report.plan.k_passes, 2);
	let got = exact.accuracy(c.as_ref());
	println!("{report}: {got}");
	assert!(got.bits >= 50.0);
	let ac = random_matrix::<c64>(2, 9000, 1.0, 3);
	let bc = random_matrix::<c64>(9000, 2, 1.0, 4);
	let exact = ExactProduct::compute(ac.as_ref(), bc.as_ref(), Sampling::Full);
	let c = emulated(&emu, ac.as_ref(), bc.as_ref(), Precision::SchemeI { slices: 8 });
	assert_eq!(emu.last_report().unwrap().plan.k_passes, 2);
	assert!(exact.accuracy(c.as_ref()).bits >= 50.0);
}

/// transposed and strided views give the same bits as contiguous copies
#[test]
fn views_are_accepted_without_copies_changing_results() {
	let emu = cpu();
	let big = random_matrix::<c64>(40, 50, 1.0, 9);
	let a_view = big.as_ref().submatrix(3, 5, 20, 30).transpose(); // 30x20, strided and transposed
	let b = random_matrix::<c64>(20, 11, 1.0, 10);
	let b_view = b.as_ref().reverse_rows(); // negative stride
	let a_copy = a_view.to_owned();
	let b_copy = b_view.to_owned();
	for precision in [Precision::F64, Precision::Tf32] {
		let from_views = emulated(&emu, a_view, b_view, precision);
		let from_copies = emulated(&emu, a_copy.as_ref(), b_copy.as_ref(), precision);
		assert!(same_bits(from_views.as_ref(), from_copies.as_ref()));
	}
	let c = a_view.emu_mul(&b_view, Precision::F64);
	assert_eq!((c.nrows(), c.ncols()), (30, 11));
}

/// `C = alpha A B + C` with complex alpha
#[test]
fn alpha_and_accumulation() {
	let emu = cpu();
	let a = random_matrix::<c64>(17, 9, 1.0, 1);
	let b = random_matrix::<c64>(9, 13, 1.0, 2);
	let old = random_matrix::<c64>(17, 13, 1.0, 3);
	let alpha = c64::new(0.5, -2.0);
	let mut c = old.clone();
	emu.matmul(
		c.as_mut(),
		Accum::Add,
		(a.as_ref(), b.as_ref()),
		alpha,
		(faer::Par::rayon(0), Precision::F64),
	)
	.unwrap();
	let expected = &old + (&a * &b) * faer::Scale(alpha);
	assert!((&c - &expected).norm_max() <= 1e-14 * expected.norm_max());
	let mut r = Mat::<f32>::zeros(4, 4);
	let af = random_matrix::<f32>(4, 6, 1.0, 4);
	let bf = random_matrix::<f32>(6, 4, 1.0, 5);
	emu.matmul(
		r.as_mut(),
		Accum::Replace,
		(af.as_ref(), bf.as_ref()),
		3.0,
		(faer::Par::rayon(0), Precision::F32),
	)
	.unwrap();
	let expected = (&af * &bf) * faer::Scale(3.0f32);
	assert!((&r - &expected).norm_max() <= 1e-5 * expected.norm_max());
}

/// the same input gives the same bits, twice and on 1 or 2 threads
#[test]
fn deterministic_across_runs_and_thread_counts() {
	let n = test_n().min(64);
	let a = random_matrix::<c64>(n, n + 3, 2.0, 11);
	let b = random_matrix::<c64>(n + 3, n - 1, 2.0, 12);
	for precision in [Precision::F64, Precision::SchemeI { slices: 5 }, Precision::Tf32] {
		let run = |threads: usize| {
			let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
			pool.install(|| emulated(&cpu(), a.as_ref(), b.as_ref(), precision))
		};
		let first = run(2);
		assert!(same_bits(first.as_ref(), run(2).as_ref()), "{precision:?} twice");
		assert!(same_bits(first.as_ref(), run(1).as_ref()), "{precision:?} across thread counts");
	}
}

fn pattern<T: Scalar>(c: MatRef<'_, T>) -> Vec<(bool, bool, bool)> {
	let mut v = Vec::new();
	for j in 0..c.ncols() {
		for i in 0..c.nrows() {
			let x = c[(i, j)];
			v.push((
				x.re().is_nan() || x.im().is_nan(),
				x.re().is_infinite() || x.im().is_infinite(),
				x.re() > 0.0 && x.re().is_infinite(),
			));
		}
	}
	v
}

/// the textbook sums: each entry the plain sum of `x y` in `f64` with the complex product
/// `(xr yr - xi yi, xr yi + xi yr)`, before any scaling by alpha
fn plain_product<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>) -> Mat<T> {
	Mat::from_fn(a.nrows(), b.ncols(), |i, j| {
		let (mut re, mut im) = (0.0, 0.0);
		for h in 0..a.ncols() {
			let (x, y) = (a[(i, h)], b[(h, j)]);
			re += x.re() * y.re() - x.im() * y.im();
			im += x.re() * y.im() + x.im() * y.re();
		}
		T::from_parts(re, im)
	})
}

/// NaN and infinities give the non-finite pattern of the native product (faer's here; cuBLAS,
/// CuPy, PyTorch and NumPy give the same: a complex sum with an infinite part is scaled by the full
/// product with `1 + 0i`, which makes both parts NaN), under target precisions and explicit plans
/// alike, infinities meeting zeros included; other entries are emulated as usual
fn nonfinite<T: Scalar>() {
	let emu = cpu();
	let mut a = random_matrix::<T>(9, 12, 1.0, 1);
	let mut b = random_matrix::<T>(12, 7, 1.0, 2);
	a[(2, 3)] = T::from_parts(f64::NAN, 0.0);
	a[(5, 0)] = T::from_parts(f64::INFINITY, 0.0);
	b[(4, 6)] = T::from_parts(0.0, f64::NEG_INFINITY);
	b[(7, 1)] = T::from_parts(f64::INFINITY, 0.0);
	// the infinity of A meets a zero of B, and a zero of A meets the infinity of B
	b[(0, 2)] = T::from_parts(0.0, 0.0);
	a[(6, 7)] = T::from_parts(0.0, 0.0);
	let precisions = [
		Precision::F64,
		Precision::Tf32,
		Precision::SchemeI { slices: 4 },
		Precision::SchemeII { moduli: 14 },
	];
	for precision in precisions {
		let c = emulated(&emu, a.as_ref(), b.as_ref(), precision);
		let native = &a * &b;
		assert_eq!(pattern(c.as_ref()), pattern(native.as_ref()), "{} {precision:?}", T::NAME);
		assert!(c[(0, 0)].is_finite_value());
		let report = emu.last_report().unwrap();
		// two bad rows; two bad columns for complex types (a real type drops the imaginary -inf)
		let bad_cols = if T::IS_COMPLEX { 2 } else { 1 };
		assert_eq!(report.nonfinite_entries, 2 * 7 + bad_cols * 9 - 2 * bad_cols);
		assert_ne!(report.plan.scheme, Scheme::Native);
	}
}

#[test]
fn nonfinite_f64() {
	nonfinite::<f64>();
}

#[test]
fn nonfinite_c64() {
	nonfinite::<c64>();
}

#[test]
fn nonfinite_f32() {
	nonfinite::<f32>();
}

/// a product computed natively as a whole gives the non-finite parts of the textbook sum scaled by
/// the full complex product with `alpha`, as cuBLAS and NumPy do, on the smallest shapes too (where
/// faer alone skips a unit `alpha`): an infinity times a tiny real gives `(NaN, NaN)`, not
/// `(inf, NaN)`
#[test]
fn native_plans_give_the_textbook_nonfinite_parts() {
	let emu = Emulator::with_backend(Backend::Native).unwrap();
	let part = |x: f64| (x.is_nan(), x.is_infinite(), x > 0.0);
	for (m, n, k) in [(1, 1, 1), (2, 2, 1), (3, 2, 4), (17, 9, 33)] {
		for (alpha, accum) in [(c64::new(1.0, 0.0), Accum::Replace), (c64::new(0.5, -2.0), Accum::Add)] {
			let (mut a, b) = (random_matrix::<c64>(m, k, 1.0, 4), random_matrix::<c64>(k, n, 1.0, 5));
			a[(0, 0)] = c64::new(f64::INFINITY, 0.0);
			let mut c = random_matrix::<c64>(m, n, 1.0, 6);
			let old = c.clone();
			emu.matmul(
				c.as_mut(),
				accum,
				(a.as_ref(), b.as_ref()),
				alpha,
				(faer::Par::rayon(0), Precision::F64),
			)
			.unwrap();
			assert_eq!(emu.last_report().unwrap().plan.scheme, Scheme::Native);
			for j in 0..n {
				let (mut re, mut im) = (0.0, 0.0);
				for h in 0..k {
					let (x, y) = (a[(0, h)], b[(h, j)]);
					re += x.re * y.re - x.im * y.im;
					im += x.re * y.im + x.im * y.re;
				}
				let mut want = c64::new(alpha.re * re - alpha.im * im, alpha.re * im + alpha.im * re);
				if accum == Accum::Add {
					want += old[(0, j)];
				}
				let got = c[(0, j)];
				assert_eq!(
					(part(got.re), part(got.im)),
					(part(want.re), part(want.im)),
					"{m}x{n}x{k} {alpha:?} (0, {j}): {got:?} against {want:?}"
				);
			}
		}
	}
}

#[test]
fn shape_mismatch_is_an_error() {
	let a = Mat::<f64>::zeros(3, 4);
	let b = Mat::<f64>::zeros(5, 2);
	let err = a.try_emu_mul(&b, Precision::F64).unwrap_err();
	assert_eq!(
		err,
		Error::ShapeMismatch {
			lhs: (3, 4),
			rhs: (5, 2),
			dst: None
		}
	);
	assert!(err.to_string().contains("cannot multiply a 3x4 matrix by a 5x2 matrix"));
	let mut c = Mat::<f64>::zeros(2, 2);
	let err = cpu()
		.matmul(
			c.as_mut(),
			Accum::Replace,
			(a.as_ref(), Mat::<f64>::zeros(4, 3).as_ref()),
			1.0,
			(faer::Par::rayon(0), Precision::F64),
		)
		.unwrap_err();
	assert!(matches!(err, Error::ShapeMismatch { dst: Some((2, 2)), .. }), "{err}");
}

#[test]
#[should_panic(expected = "shape mismatch: cannot multiply a 3x4 matrix by a 5x2 matrix")]
fn emu_mul_panics_on_shape_mismatch() {
	let _ = Mat::<f32>::zeros(3, 4).emu_mul(&Mat::<f32>::zeros(5, 2), Precision::F32);
}

#[test]
fn invalid_precisions_are_errors() {
	let a = Mat::<f32>::zeros(2, 2);
	for precision in [
		Precision::SchemeI { slices: 0 },
		Precision::SchemeI { slices: 9 },
		Precision::SchemeII { moduli: 1 },
		Precision::SchemeII { moduli: 21 },
		Precision::Bits(53),
	] {
		let err = a.try_emu_mul(&a, precision).unwrap_err();
		assert!(matches!(err, Error::InvalidPrecision { .. }), "{precision:?}");
	}
}

/// `Bits(n)` at the most an `f32` output holds (23) is emulated and measured against the exact
/// reference; `f64` keeps 40 (more than a type holds is an error: tests/special_values.rs)
#[test]
fn bits_up_to_the_types_limit() {
	let emu = cpu();
	let (a, b) = (random_matrix::<f32>(64, 300, 1.0, 1), random_matrix::<f32>(300, 48, 1.0, 2));
	let c = emulated(&emu, a.as_ref(), b.as_ref(), Precision::Bits(23));
	assert_ne!(emu.last_report().unwrap().plan.scheme, Scheme::Native);
	let bits = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full)
		.accuracy(c.as_ref())
		.bits;
	assert!(bits >= 23.0, "{bits}");
	let (a, b) = (random_matrix::<f64>(64, 300, 1.0, 1), random_matrix::<f64>(300, 48, 1.0, 2));
	let c = emulated(&emu, a.as_ref(), b.as_ref(), Precision::Bits(40));
	let bits = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full)
		.accuracy(c.as_ref())
		.bits;
	assert!(bits >= 40.0, "{bits}");
}

/// a zero inner dimension and zero operands
#[test]
fn empty_and_zero_products() {
	let emu = cpu();
	let a = Mat::<f64>::zeros(4, 0);
	let b = Mat::<f64>::zeros(0, 3);
	let c = emulated(&emu, a.as_ref(), b.as_ref(), Precision::F64);
	assert_eq!(c, Mat::<f64>::zeros(4, 3));
	let z = Mat::<c64>::zeros(5, 5);
	assert_eq!(emulated(&emu, z.as_ref(), z.as_ref(), Precision::F64), z);
}

#[cfg(feature = "nalgebra")]
#[test]
fn nalgebra_matrices_and_views() {
	use nalgebra::DMatrix;
	let a = DMatrix::<f64>::from_fn(10, 8, |i, j| (i as f64 - 2.5) * (j as f64 + 0.25));
	let b = DMatrix::<f64>::from_fn(8, 6, |i, j| 1.0 / (1.0 + i as f64 + 2.0 * j as f64));
	let c = a.emu_mul(&b, Precision::F64);
	let native = &a * &b;
	assert!((&c - &native).amax() <= 1e-14 * native.amax());
	let view = a.view((1, 2), (5, 4));
	let bv = b.view((0, 1), (4, 3));
	let cv = view.emu_mul(&bv, Precision::F64);
	assert!((&cv - view * bv).amax() <= 1e-14);
	let z = DMatrix::<c32>::from_element(3, 3, c32::new(1.0, -1.0));
	assert_eq!(z.emu_mul(&z, Precision::F32)[(0, 0)], c32::new(0.0, -6.0));
	assert!(a.try_emu_mul(&a, Precision::F64).is_err());
}

/// without a usable GPU, `emu_mul` computes natively and says so in the report
#[test]
fn auto_backend_without_gpu_is_native() {
	if emugemm::Emulator::with_backend(emugemm::Backend::Gpu).is_ok() {
		println!("a GPU is present: Backend::Auto is tested by tests/gpu.rs");
		return;
	}
	let a = random_matrix::<f64>(8, 8, 1.0, 1);
	let c = a.emu_mul(&a, Precision::F64);
	let report = emugemm::last_report().unwrap();
	assert_eq!(report.backend, emugemm::Backend::Native);
	assert!(same_bits(c.as_ref(), (&a * &a).as_ref()));
}

/// the entries left to the native product (non-finite rows and columns) under `Accum::Add` and a
/// complex alpha: the non-finite pattern of the textbook product, and every other entry equal to
/// `old + alpha (A B)` against the exact reference (computed with the non-finite entries zeroed,
/// which those entries do not meet), with one scale for both parts and with separately scaled
/// parts (imaginary parts 2^-40 of the real ones)
#[test]
fn nonfinite_fixup_with_alpha_and_accumulation() {
	for separate in [false, true] {
		let (a, b) = if separate {
			pair::<c64>(Pair::SmallImaginary { log2_ratio: 40 }, 9, 12, 7, 1)
		} else {
			(random_matrix::<c64>(9, 12, 1.0, 1), random_matrix::<c64>(12, 7, 1.0, 2))
		};
		fixup_case(a, b, separate);
	}
}

fn fixup_case(mut a: Mat<c64>, mut b: Mat<c64>, separate: bool) {
	let emu = cpu();
	let (finite_a, finite_b) = (a.clone(), b.clone());
	a[(2, 3)] = c64::new(f64::NAN, 0.0);
	b[(7, 1)] = c64::new(0.0, f64::INFINITY);
	let exact = ExactProduct::compute(finite_a.as_ref(), finite_b.as_ref(), Sampling::Full);
	let old = random_matrix::<c64>(9, 7, 1.0, 3);
	let alpha = c64::new(0.75, -1.5);
	for (precision, bits) in [(Precision::F64, 50), (Precision::Bits(30), 28)] {
		let mut c = old.clone();
		emu.matmul(
			c.as_mut(),
			Accum::Add,
			(a.as_ref(), b.as_ref()),
			alpha,
			(faer::Par::rayon(0), precision),
		)
		.unwrap();
		let report = emu.last_report().unwrap();
		assert_ne!(report.plan.scheme, Scheme::Native);
		assert_eq!(report.plan.separate_parts, separate, "{}", report.plan);
		assert_eq!(report.nonfinite_entries, 7 + 9 - 1);
		let mut expected = plain_product(a.as_ref(), b.as_ref());
		for j in 0..7 {
			for i in 0..9 {
				let x = expected[(i, j)];
				expected[(i, j)] = old[(i, j)] + x * alpha;
			}
		}
		assert_eq!(pattern(c.as_ref()), pattern(expected.as_ref()), "{precision:?}");
		for (k, &(i, j)) in exact.positions().iter().enumerate().filter(|(_, (i, j))| *i != 2 && *j != 1) {
			let ((re, _), (im, _)) = exact.exact_double_double(k);
			let want = old[(i, j)] + c64::new(re, im) * alpha;
			let (s_re, s_im) = exact.scale(k);
			let tol = 2f64.powi(-bits) * (alpha.norm() * (s_re + s_im) + old[(i, j)].norm());
			assert!(
				(c[(i, j)] - want).norm() <= tol,
				"{precision:?} ({i}, {j}): {:?} against {want:?}",
				c[(i, j)]
			);
		}
	}
}

/// the native backend keeps the promise too: `f32` data at `F64` is accumulated in `f64` (an FP32
/// product loses about log2(K)/2 + 2 bits against FP64 rounded to `f32`), at `F32` it is faer's FP32
/// product
#[test]
fn native_backend_keeps_the_promise() {
	let emu = emugemm::Emulator::with_backend(emugemm::Backend::Native).unwrap();
	let (a, b) = (random_matrix::<f32>(40, 3000, 2.0, 1), random_matrix::<f32>(3000, 30, 2.0, 2));
	let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
	for precision in [Precision::F64, Precision::F32, Precision::Bits(22)] {
		let got = exact.accuracy(emulated(&emu, a.as_ref(), b.as_ref(), precision).as_ref());
		let native = exact.accuracy(native_product(a.as_ref(), b.as_ref(), precision).as_ref());
		assert_eq!(emu.last_report().unwrap().plan.scheme, Scheme::Native);
		println!("{precision:?}: {got} (native {native})");
		match precision {
			Precision::Bits(bits) => assert!(got.bits >= bits as f64, "{precision:?}: {got}"),
			_ => assert!(got.bits >= native.bits - 1.0, "{precision:?}: {got} against {native}"),
		}
	}
}

/// asked for, the native product competes with the emulated plans by time: a product this small
/// runs natively and the report says so, bit for bit the native backend's result; with the native
/// product reserved (the oracle's default) the same product is emulated, and the report names the
/// plan
#[test]
fn native_product_competes_by_time() {
	let competing = emugemm::Emulator::with_backend(emugemm::Backend::CpuEmulation)
		.unwrap()
		.with_native_candidate(true);
	let native = emugemm::Emulator::with_backend(emugemm::Backend::Native).unwrap();
	let (a, b) = (random_matrix::<f64>(48, 40, 1.0, 1), random_matrix::<f64>(40, 32, 1.0, 2));
	for precision in [Precision::F64, Precision::F32, Precision::Tf32, Precision::Bits(30)] {
		let got = emulated(&competing, a.as_ref(), b.as_ref(), precision);
		let report = competing.last_report().unwrap();
		assert_eq!(
			(report.plan.scheme, report.route),
			(Scheme::Native, emugemm::Route::Native),
			"{precision:?}"
		);
		assert_eq!(report.native_rows.len(), 48);
		assert!(same_bits(
			got.as_ref(),
			emulated(&native, a.as_ref(), b.as_ref(), precision).as_ref()
		));
		let _ = emulated(&cpu(), a.as_ref(), b.as_ref(), precision);
		let reserved = cpu().plan(a.as_ref(), b.as_ref(), precision).unwrap();
		assert_ne!(reserved.scheme, Scheme::Native, "{precision:?}");
		// the oracle's default: the same plan, the native product reserved without being asked
		let oracle = emugemm::Emulator::with_backend(emugemm::Backend::CpuEmulation).unwrap();
		assert!(!oracle.native_candidate());
		assert_eq!(
			plan_key(&oracle.plan(a.as_ref(), b.as_ref(), precision).unwrap()),
			plan_key(&reserved),
			"{precision:?}"
		);
	}
	// explicit plans run as given
	let _ = emulated(&competing, a.as_ref(), b.as_ref(), Precision::SchemeII { moduli: 6 });
	assert_ne!(competing.last_report().unwrap().plan.scheme, Scheme::Native);
}

/// rows the bound cannot certify are computed natively and reported, the others emulated: one
/// row whose largest entry (2^40) meets a zero row of `B`, so that its weight lies far below its
/// maximum where it meets `B`; for f64 and c64 every row, the native ones included, keeps the
/// promise against the exact reference
#[test]
fn uncertified_rows_go_native() {
	fn case<T: Scalar>(emu: &emugemm::Emulator) {
		let (mut a, mut b) = (random_matrix::<T>(64, 300, 1.0, 1), random_matrix::<T>(300, 40, 1.0, 2));
		a[(5, 17)] = T::from_parts(2f64.powi(40), 0.0);
		(0..40).for_each(|j| b[(17, j)] = T::from_parts(0.0, 0.0));
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		let got = emulated(emu, a.as_ref(), b.as_ref(), Precision::F64);
		let report = emu.last_report().unwrap();
		assert_ne!(report.plan.scheme, Scheme::Native, "{report}");
		assert!(report.native_rows.contains(&5), "{report}");
		let native = exact.accuracy(native_product(a.as_ref(), b.as_ref(), Precision::F64).as_ref());
		let rows = exact.accuracy_where(got.as_ref(), |i, _| report.native_rows.binary_search(&i).is_ok());
		assert!(rows.bits >= native.bits - 1.0, "native rows: {rows} against {native}");
		assert!(exact.accuracy(got.as_ref()).bits >= native.bits - 1.0);
	}
	case::<f64>(&cpu());
	case::<c64>(&cpu());
	if let Ok(gpu) = emugemm::Emulator::with_backend(emugemm::Backend::Gpu) {
		let gpu = gpu.with_native_candidate(false);
		case::<f64>(&gpu);
		case::<c64>(&gpu);
	} else {
		println!("uncertified_rows_go_native: no GPU here, the GPU half skipped");
	}
}

/// empty products (a dimension of zero) run natively on every backend, for the same reason, under
/// every precision; with K = 0 the output is `0` (or kept, accumulating), as faer writes it
#[test]
fn empty_products_report_alike() {
	let backends = [emugemm::Backend::CpuEmulation, emugemm::Backend::Native];
	let precisions = [
		Precision::F64,
		Precision::Tf32,
		Precision::SchemeII { moduli: 14 },
		Precision::SchemeI { slices: 3 },
	];
	for backend in backends {
		let emu = emugemm::Emulator::with_backend(backend).unwrap();
		for (m, n, k) in [(0, 5, 7), (5, 0, 7), (5, 7, 0), (0, 0, 0)] {
			for precision in precisions {
				let (a, b) = (random_matrix::<c64>(m, k, 1.0, 1), random_matrix::<c64>(k, n, 1.0, 2));
				let old = random_matrix::<c64>(m, n, 1.0, 3);
				for accum in [Accum::Replace, Accum::Add] {
					let mut c = old.clone();
					emu.matmul(
						c.as_mut(),
						accum,
						(a.as_ref(), b.as_ref()),
						c64::new(2.0, 1.0),
						(faer::Par::rayon(0), precision),
					)
					.unwrap();
					let report = emu.last_report().unwrap();
					let at = format!("{backend:?} {m}x{n}x{k} {precision:?} {accum:?}: {report}");
					assert_eq!(report.plan.scheme, Scheme::Native, "{at}");
					assert_eq!(report.native_reason, Some(emugemm::NativeReason::NotEmulated), "{at}");
					let kept = if accum == Accum::Add { old.clone() } else { Mat::zeros(m, n) };
					assert!(same_bits(c.as_ref(), kept.as_ref()), "{at}");
				}
				let plan = emu.plan(a.as_ref(), b.as_ref(), precision).unwrap();
				assert_eq!(plan.scheme, Scheme::Native, "{backend:?} {m}x{n}x{k} {precision:?}");
			}
		}
	}
}

/// the K boundaries, one below, at and one above each: a scheme I pass (f64 8 slices: 16,256;
/// c64: 8,064) and the bound's window (f64: 133,144; c64: 66,572). Each keeps its promise against
/// the exact product: `Bits(40)` measured, and the explicit plans at least what a plain FP64
/// product of the same inputs measures, minus 4 bits (they keep no promise; this catches a pass
/// or a window that drops terms)
#[test]
fn k_boundaries_keep_the_promise() {
	let emu = cpu();
	fn around(k: usize) -> [usize; 3] {
		[k - 1, k, k + 1]
	}
	fn check<T: Scalar>(emu: &emugemm::Emulator, k: usize, precision: Precision) {
		let (a, b) = (random_matrix::<T>(3, k, 1.0, 1), random_matrix::<T>(k, 2, 1.0, 2));
		let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
		let c = emulated(emu, a.as_ref(), b.as_ref(), precision);
		let report = emu.last_report().unwrap();
		let bits = exact.accuracy(c.as_ref()).bits;
		let floor = match precision.target_bits(T::MANTISSA_BITS, k) {
			Some(target) => {
				assert_ne!(report.plan.scheme, Scheme::Native, "{} K = {k}: {report}", T::NAME);
				target
			},
			None => exact.accuracy(native_product(a.as_ref(), b.as_ref(), Precision::F64).as_ref()).bits - 4.0,
		};
		assert!(
			bits >= floor,
			"{} K = {k} {precision:?}: {bits} bits, below {floor} ({report})",
			T::NAME
		);
	}
	for k in around(16_256) {
		check::<f64>(&emu, k, Precision::SchemeI { slices: 8 });
	}
	for k in around(8_064) {
		check::<c64>(&emu, k, Precision::SchemeI { slices: 8 });
	}
	for k in around(133_144) {
		check::<f64>(&emu, k, Precision::Bits(40));
	}
	for k in around(66_572) {
		check::<c64>(&emu, k, Precision::Bits(40));
	}
}
