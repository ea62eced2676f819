//! property-based tests: shapes (empty and ragged), strides, transposes, conjugation, alpha,
//! `Accum`, special values and every kind of precision, drawn by proptest. Each product is judged
//! against an independent reference: the same product on owned, plainly stored copies of the
//! operands (bit for bit, with the same plan), faer's own product (the pattern of NaN and
//! infinities), and the exact product (the promise of a target precision); each batch against
//! the single calls of its products, each rank-k update against the product `a aᴴ`.
//!
//! The case budget is fixed (`EMUGEMM_PROPTEST_CASES`, default 40 per property); the GPU variant
//! (`EMUGEMM_TEST_BACKEND=gpu`) runs the same properties on a GPU context and also compares
//! every product with the CPU oracle.

mod common;

use common::{cpu, emulated, plan_key, same_bits};
use emugemm::testing::{ExactProduct, Sampling, random_matrix};
use emugemm::{Accum, Backend, Emulator, Precision, Scalar, Scheme};
use faer::{Mat, MatRef, c32, c64};
use proptest::prelude::*;

fn cases() -> u32 {
	std::env::var("EMUGEMM_PROPTEST_CASES")
		.ok()
		.and_then(|v| v.parse().ok())
		.unwrap_or(40)
}

/// the context under test (the CPU oracle, or the GPU with `EMUGEMM_TEST_BACKEND=gpu`)
fn context() -> Emulator {
	match std::env::var("EMUGEMM_TEST_BACKEND").as_deref() {
		Ok("gpu") => Emulator::with_backend(Backend::Gpu)
			.expect("EMUGEMM_TEST_BACKEND=gpu needs a GPU")
			.with_native_candidate(false),
		_ => cpu(),
	}
}

/// every kind of precision a product of `T` can be asked for (`Bits(n)` up to what `T` holds)
fn precision<T: Scalar>() -> impl Strategy<Value = Precision> {
	prop_oneof![
		Just(Precision::F64),
		Just(Precision::F32),
		Just(Precision::Tf32),
		(6u32..=T::MANTISSA_BITS - 1).prop_map(Precision::Bits),
		(2u32..=20).prop_map(|moduli| Precision::SchemeII { moduli }),
		(1u32..=8).prop_map(|slices| Precision::SchemeI { slices }),
	]
}

/// how an operand is handed over: transposed (its transpose stored), conjugated (complex only),
/// and as a view into a larger matrix (strides other than the shape's)
#[derive(Clone, Copy, Debug)]
struct Form {
	transposed: bool,
	conjugated: bool,
	padded: bool,
}

fn form() -> impl Strategy<Value = Form> {
	(any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(transposed, conjugated, padded)| Form {
		transposed,
		conjugated,
		padded,
	})
}

/// the product of `a` and `b` handed over in the forms `fa`, `fb` (the logical operands are the
/// same), into a copy of `old`: the result and the report
fn product_in_forms<T: Scalar>(
	emu: &Emulator,
	(a, b): (&Mat<T>, &Mat<T>),
	(fa, fb): (Form, Form),
	(old, accum, alpha, precision): (&Mat<T>, Accum, T, Precision),
) -> (Mat<T>, emugemm::Report) {
	// the stored matrix whose (transposed, conjugated) view reads as `x`, inside a larger one
	let stored = |x: &Mat<T>, f: Form| -> Mat<T> {
		let conj = |v: T| {
			if f.conjugated && T::IS_COMPLEX {
				T::from_parts(v.re(), -v.im())
			} else {
				v
			}
		};
		let (r, c) = if f.transposed {
			(x.ncols(), x.nrows())
		} else {
			(x.nrows(), x.ncols())
		};
		let pad = if f.padded { 3 } else { 0 };
		Mat::from_fn(r + pad, c + pad, |i, j| {
			if i < r && j < c {
				conj(if f.transposed { x[(j, i)] } else { x[(i, j)] })
			} else {
				T::from_parts(f64::NAN, 7.0) // never read
			}
		})
	};
	let (sa, sb) = (stored(a, fa), stored(b, fb));
	fn view<'s, T: Scalar>(s: &'s Mat<T>, x: &Mat<T>, f: Form) -> MatRef<'s, T> {
		let (r, c) = if f.transposed {
			(x.ncols(), x.nrows())
		} else {
			(x.nrows(), x.ncols())
		};
		let v = s.as_ref().submatrix(0, 0, r, c);
		if f.transposed { v.transpose() } else { v }
	}
	let (va, vb) = (view(&sa, a, fa), view(&sb, b, fb));
	let mut c = old.clone();
	// a conjugated form is read through faer's conjugate view, which undoes the stored conjugate
	match (fa.conjugated && T::IS_COMPLEX, fb.conjugated && T::IS_COMPLEX) {
		(false, false) => emu.matmul(c.as_mut(), accum, (va, vb), alpha, (faer::Par::rayon(0), precision)),
		(true, false) => emu.matmul(c.as_mut(), accum, (va.conjugate(), vb), alpha, (faer::Par::rayon(0), precision)),
		(false, true) => emu.matmul(c.as_mut(), accum, (va, vb.conjugate()), alpha, (faer::Par::rayon(0), precision)),
		(true, true) => emu.matmul(
			c.as_mut(),
			accum,
			(va.conjugate(), vb.conjugate()),
			alpha,
			(faer::Par::rayon(0), precision),
		),
	}
	.unwrap();
	(c, emu.last_report().unwrap())
}

/// every form of the operands gives the bits and the plan of the plainly stored operands; with a
/// GPU context, also the CPU oracle's
fn forms_agree<T: Scalar>(
	(m, n, k): (usize, usize, usize),
	(fa, fb): (Form, Form),
	(accum, alpha, precision): (Accum, (f64, f64), Precision),
	seed: u64,
) -> Result<(), TestCaseError> {
	let emu = context();
	let (a, b) = (random_matrix::<T>(m, k, 1.0, seed), random_matrix::<T>(k, n, 1.0, seed + 1));
	let old = random_matrix::<T>(m, n, 1.0, seed + 2);
	let alpha = T::from_parts(alpha.0, alpha.1);
	let plain = Form {
		transposed: false,
		conjugated: false,
		padded: false,
	};
	let how = (&old, accum, alpha, precision);
	let (c, report) = product_in_forms(&emu, (&a, &b), (fa, fb), how);
	let (p, plain_report) = product_in_forms(&emu, (&a, &b), (plain, plain), how);
	let (o, oracle) = product_in_forms(&cpu(), (&a, &b), (fa, fb), how);
	prop_assert_eq!(plan_key(&report.plan), plan_key(&plain_report.plan));
	prop_assert_eq!(plan_key(&report.plan), plan_key(&oracle.plan));
	prop_assert_eq!(&report.native_rows, &oracle.native_rows);
	// the emulated rows bit for bit (native rows are faer's or cuBLAS's, whose kernels sum in an
	// order that depends on the layout)
	if report.plan.scheme != Scheme::Native {
		let bits = |x: T| (x.re().to_bits(), x.im().to_bits());
		for i in (0..m).filter(|i| report.native_rows.binary_search(i).is_err()) {
			for j in 0..n {
				prop_assert_eq!(bits(c[(i, j)]), bits(p[(i, j)]), "({}, {}) {:?} {:?}: {}", i, j, fa, fb, report);
				prop_assert_eq!(bits(c[(i, j)]), bits(o[(i, j)]), "({}, {}) against the oracle: {}", i, j, oracle);
			}
		}
	}
	Ok(())
}

/// a target precision keeps its promise against the exact product on the rows a plan certifies
/// (native rows carry the native product's accuracy, which `Bits(n)` does not raise), and the plan
/// says so: `predicted_bits` meets the target and is not NaN
fn keeps_the_promise<T: Scalar>((m, n, k): (usize, usize, usize), phi: f64, bits: u32, seed: u64) -> Result<(), TestCaseError> {
	let emu = context();
	let (a, b) = (random_matrix::<T>(m, k, phi, seed), random_matrix::<T>(k, n, phi, seed + 1));
	let precision = Precision::Bits(bits);
	let c = emulated(&emu, a.as_ref(), b.as_ref(), precision);
	let report = emu.last_report().unwrap();
	let target = precision.target_bits(T::MANTISSA_BITS, k).unwrap();
	if report.plan.scheme == Scheme::Native {
		prop_assert!(report.native_reason.is_some(), "{report}");
		return Ok(());
	}
	let predicted = report.plan.predicted_bits;
	prop_assert!(predicted >= target, "predicted {predicted} below the target {target}: {report}");
	let certified = |i: usize, _| report.native_rows.binary_search(&i).is_err();
	let measured = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full)
		.accuracy_where(c.as_ref(), certified)
		.bits;
	prop_assert!(measured >= target, "measured {measured} below the target {target}: {report}");
	Ok(())
}

/// special values anywhere: the pattern of NaN and infinities is that of the textbook sum scaled by
/// the full complex product with alpha, as cuBLAS and OpenBLAS (NumPy) give it (faer too, but for
/// its paths for the smallest shapes, which skip alpha), and the finite entries of the rows a plan
/// emulated the oracle's
fn specials_as_native<T: Scalar>(
	(m, n, k): (usize, usize, usize),
	specials: &[(bool, usize, usize, u8)],
	precision: Precision,
	seed: u64,
) -> Result<(), TestCaseError> {
	let emu = context();
	let (mut a, mut b) = (random_matrix::<T>(m, k, 1.0, seed), random_matrix::<T>(k, n, 1.0, seed + 1));
	let value = |kind: u8| match kind % 6 {
		0 => T::from_parts(f64::NAN, 0.0),
		1 => T::from_parts(f64::INFINITY, 0.0),
		2 => T::from_parts(0.0, f64::NEG_INFINITY),
		3 => T::from_parts(0.0, 0.0),
		4 => T::from_parts(f64::MIN_POSITIVE / 8.0, 0.0),
		_ => T::from_parts(-1e30, 1e30),
	};
	for &(in_a, i, j, kind) in specials {
		if in_a {
			a[(i % m, j % k)] = value(kind);
		} else {
			b[(i % k, j % n)] = value(kind);
		}
	}
	let alpha = T::from_parts(1.0, 0.0);
	let c = emulated(&emu, a.as_ref(), b.as_ref(), precision);
	let report = emu.last_report().unwrap();
	// rows the product computed natively are faer's or cuBLAS's, which need not agree bit for bit
	let emulated_row = |i: usize| report.plan.scheme != Scheme::Native && report.native_rows.binary_search(&i).is_err();
	let native = Mat::<T>::from_fn(m, n, |i, j| {
		let (mut re, mut im) = (0.0, 0.0);
		for h in 0..k {
			let (x, y) = (a[(i, h)], b[(h, j)]);
			re += x.re() * y.re() - x.im() * y.im();
			im += x.re() * y.im() + x.im() * y.re();
		}
		let (ar, ai) = (alpha.re(), alpha.im());
		if T::IS_COMPLEX {
			T::from_parts(ar * re - ai * im, ar * im + ai * re)
		} else {
			T::from_parts(ar * re, 0.0)
		}
	});
	let kind = |x: f64| (x.is_nan(), x.is_infinite(), x.is_infinite() && x > 0.0);
	let o = emulated(&cpu(), a.as_ref(), b.as_ref(), precision);
	for j in 0..n {
		for i in 0..m {
			let (x, z, y) = (c[(i, j)], native[(i, j)], o[(i, j)]);
			prop_assert_eq!(
				(kind(x.re()), kind(x.im())),
				(kind(z.re()), kind(z.im())),
				"({}, {}): {:?} against {:?}",
				i,
				j,
				x,
				z
			);
			if x.re().is_finite() && x.im().is_finite() && emulated_row(i) {
				prop_assert_eq!(
					(x.re().to_bits(), x.im().to_bits()),
					(y.re().to_bits(), y.im().to_bits()),
					"({}, {}): {}",
					i,
					j,
					report
				);
			}
		}
	}
	Ok(())
}

/// the smallest case the property found on a GPU: an infinity of `B` meets the zero imaginary
/// part of `alpha = 1 + 0i` in a product computed natively (NaN in both parts of entry (0, 2))
#[test]
fn specials_c64_infinity_meets_unit_alpha() {
	specials_as_native::<c64>((2, 3, 1), &[(false, 0, 16, 136), (false, 0, 23, 55)], Precision::F64, 0).unwrap();
}

fn shape() -> impl Strategy<Value = (usize, usize, usize)> {
	prop_oneof![
		// empty and tiny, ragged
		(0usize..4, 0usize..4, 0usize..4),
		(1usize..24, 1usize..24, 1usize..80),
		// long K, beyond one scheme I pass for many slices
		(1usize..6, 1usize..6, 200usize..700),
	]
}

fn accum() -> impl Strategy<Value = Accum> {
	prop_oneof![Just(Accum::Replace), Just(Accum::Add)]
}

fn alpha() -> impl Strategy<Value = (f64, f64)> {
	prop_oneof![Just((1.0, 0.0)), Just((0.0, 1.0)), (-2.0f64..2.0, -2.0f64..2.0)]
}

proptest! {
	#![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

	#[test]
	fn forms_agree_f64(s in shape(), f in (form(), form()), how in (accum(), alpha(), precision::<f64>()), seed in 0u64..1000) {
		forms_agree::<f64>(s, f, how, seed)?;
	}

	#[test]
	fn forms_agree_c64(s in shape(), f in (form(), form()), how in (accum(), alpha(), precision::<c64>()), seed in 0u64..1000) {
		forms_agree::<c64>(s, f, how, seed)?;
	}

	#[test]
	fn forms_agree_f32(s in shape(), f in (form(), form()), how in (accum(), alpha(), precision::<f32>()), seed in 0u64..1000) {
		forms_agree::<f32>(s, f, how, seed)?;
	}

	#[test]
	fn forms_agree_c32(s in shape(), f in (form(), form()), how in (accum(), alpha(), precision::<c32>()), seed in 0u64..1000) {
		forms_agree::<c32>(s, f, how, seed)?;
	}

	#[test]
	fn promise_f64(m in 1usize..40, n in 1usize..40, k in 1usize..400, phi in 0.0f64..3.0, bits in 8u32..=50, seed in 0u64..1000) {
		keeps_the_promise::<f64>((m, n, k), phi, bits, seed)?;
	}

	#[test]
	fn promise_c64(m in 1usize..30, n in 1usize..30, k in 1usize..300, phi in 0.0f64..3.0, bits in 8u32..=50, seed in 0u64..1000) {
		keeps_the_promise::<c64>((m, n, k), phi, bits, seed)?;
	}

	#[test]
	fn promise_f32(m in 1usize..40, n in 1usize..40, k in 1usize..400, phi in 0.0f64..3.0, bits in 6u32..=23, seed in 0u64..1000) {
		keeps_the_promise::<f32>((m, n, k), phi, bits, seed)?;
	}

	#[test]
	fn specials_f64(m in 2usize..12, n in 2usize..12, k in 1usize..40, sp in prop::collection::vec((any::<bool>(), 0usize..64, 0usize..64, any::<u8>()), 1..6), p in precision::<f64>(), seed in 0u64..1000) {
		specials_as_native::<f64>((m, n, k), &sp, p, seed)?;
	}

	#[test]
	fn specials_c64(m in 2usize..12, n in 2usize..12, k in 1usize..40, sp in prop::collection::vec((any::<bool>(), 0usize..64, 0usize..64, any::<u8>()), 1..6), p in precision::<c64>(), seed in 0u64..1000) {
		specials_as_native::<c64>((m, n, k), &sp, p, seed)?;
	}
}

/// a batch of products of any shapes (empty ones among them), with NaN and infinities in some:
/// each product with its single call's plan, native reason and bits, and the same report
fn batch_is_its_single_calls<T: Scalar>(
	shapes: &[(usize, usize, usize)],
	(accum, alpha, precision): (Accum, (f64, f64), Precision),
	specials: &[(usize, u8)],
	seed: u64,
) -> Result<(), TestCaseError> {
	let emu = context();
	let mut operands: Vec<(Mat<T>, Mat<T>)> = shapes
		.iter()
		.enumerate()
		.map(|(i, &(m, n, k))| {
			let s = seed + 3 * i as u64;
			(random_matrix::<T>(m, k, 1.5, s), random_matrix::<T>(k, n, 1.5, s + 1))
		})
		.collect();
	// a special value at the `at`-th entry of the product's `a` (even `kind`) or `b` (odd)
	for &(at, kind) in specials.iter().filter(|_| !shapes.is_empty()) {
		let (a, b) = &mut operands[at % shapes.len()];
		let x = if kind % 2 == 0 { a } else { b };
		let rows = x.nrows();
		if rows * x.ncols() > 0 {
			let e = at % (rows * x.ncols());
			let v = if kind % 4 < 2 { f64::NAN } else { f64::NEG_INFINITY };
			x[(e % rows, e / rows)] = T::from_parts(v, 0.0);
		}
	}
	let start: Vec<Mat<T>> = shapes
		.iter()
		.enumerate()
		.map(|(i, &(m, n, _))| random_matrix::<T>(m, n, 1.0, seed + 100 + i as u64))
		.collect();
	let alpha = T::from_parts(alpha.0, alpha.1);
	let mut batch = start.clone();
	let reports = {
		let mut dst: Vec<_> = batch.iter_mut().map(|c| c.as_mut()).collect();
		let lhs: Vec<_> = operands.iter().map(|(a, _)| a.as_ref()).collect();
		let rhs: Vec<_> = operands.iter().map(|(_, b)| b.as_ref()).collect();
		emu.matmul_batch(&mut dst, accum, (&lhs, &rhs), alpha, (faer::Par::Seq, precision))
			.unwrap()
	};
	prop_assert_eq!(reports.len(), shapes.len());
	for (i, ((a, b), report)) in operands.iter().zip(&reports).enumerate() {
		let mut single = start[i].clone();
		emu.matmul(single.as_mut(), accum, (a.as_ref(), b.as_ref()), alpha, (faer::Par::Seq, precision))
			.unwrap();
		let alone = emu.last_report().unwrap();
		prop_assert_eq!(plan_key(&report.plan), plan_key(&alone.plan), "product {}: {}", i, report);
		prop_assert_eq!(report.native_reason, alone.native_reason, "product {}", i);
		prop_assert_eq!(report.nonfinite_entries, alone.nonfinite_entries, "product {}", i);
		prop_assert_eq!(&report.native_rows, &alone.native_rows, "product {}", i);
		prop_assert!(
			same_bits(single.as_ref(), batch[i].as_ref()),
			"product {} {:?}: {}",
			i,
			shapes[i],
			report
		);
	}
	Ok(())
}

/// a rank-k update `alpha a aᴴ` through a transposed view of the stored `aᵀ` (or `a` itself),
/// on the entries `structure` names: those entries are the emulated product `a aᴴ`'s bit for bit
/// (its diagonal's imaginary parts zero), with the product's plan; the others untouched
fn update_is_the_products_entries<T: Scalar>(
	(n, k): (usize, usize),
	(structure, accum, transposed): (faer::linalg::matmul::triangular::BlockStructure, Accum, bool),
	(alpha, precision): (f64, Precision),
	seed: u64,
) -> Result<(), TestCaseError> {
	let emu = context();
	let stored = if transposed {
		random_matrix::<T>(k, n, 1.5, seed)
	} else {
		random_matrix::<T>(n, k, 1.5, seed)
	};
	let a = if transposed { stored.transpose() } else { stored.as_ref() };
	let start = random_matrix::<T>(n, n, 1.0, seed + 1);
	let mut product = start.clone();
	let alpha_t = T::from_parts(alpha, 0.0);
	emu.matmul(product.as_mut(), accum, (a, a.adjoint()), alpha_t, (faer::Par::Seq, precision))
		.unwrap();
	let product_report = emu.last_report().unwrap();
	let mut dst = start.clone();
	emu.rank_k_update(
		(&mut dst, structure),
		accum,
		a,
		T::RealPart::from_parts(alpha, 0.0),
		(faer::Par::Seq, precision),
	)
	.unwrap();
	let report = emu.last_report().unwrap();
	prop_assert_eq!(plan_key(&report.plan), plan_key(&product_report.plan), "{}", report);
	let bits = |x: T| (x.re().to_bits(), x.im().to_bits());
	use faer::linalg::matmul::triangular::BlockStructure::*;
	for j in 0..n {
		for i in 0..n {
			let named = match structure {
				Rectangular => true,
				TriangularLower => i >= j,
				StrictTriangularLower | UnitTriangularLower => i > j,
				TriangularUpper => i <= j,
				StrictTriangularUpper | UnitTriangularUpper => i < j,
			};
			let want = match (named, i == j) {
				(false, _) => start[(i, j)],
				(true, true) => T::from_parts(product[(i, j)].re(), 0.0),
				(true, false) => product[(i, j)],
			};
			prop_assert_eq!(
				bits(dst[(i, j)]),
				bits(want),
				"({}, {}) {:?} {:?}: {}",
				i,
				j,
				structure,
				accum,
				report
			);
		}
	}
	Ok(())
}

fn structure() -> impl Strategy<Value = faer::linalg::matmul::triangular::BlockStructure> {
	use faer::linalg::matmul::triangular::BlockStructure::*;
	prop_oneof![
		Just(Rectangular),
		Just(TriangularLower),
		Just(StrictTriangularLower),
		Just(UnitTriangularLower),
		Just(TriangularUpper),
		Just(StrictTriangularUpper),
		Just(UnitTriangularUpper),
	]
}

proptest! {
	#![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

	#[test]
	fn batch_f64(shapes in prop::collection::vec(shape(), 0..5), how in (accum(), alpha(), precision::<f64>()), sp in prop::collection::vec((0usize..4096, any::<u8>()), 0..3), seed in 0u64..1000) {
		batch_is_its_single_calls::<f64>(&shapes, how, &sp, seed)?;
	}

	#[test]
	fn batch_c64(shapes in prop::collection::vec(shape(), 0..5), how in (accum(), alpha(), precision::<c64>()), sp in prop::collection::vec((0usize..4096, any::<u8>()), 0..3), seed in 0u64..1000) {
		batch_is_its_single_calls::<c64>(&shapes, how, &sp, seed)?;
	}

	#[test]
	fn rank_k_f64(n in 0usize..20, k in 0usize..60, how in (structure(), accum(), any::<bool>()), alpha in -2.0f64..2.0, p in precision::<f64>(), seed in 0u64..1000) {
		update_is_the_products_entries::<f64>((n, k), how, (alpha, p), seed)?;
	}

	#[test]
	fn rank_k_c64(n in 0usize..20, k in 0usize..60, how in (structure(), accum(), any::<bool>()), alpha in -2.0f64..2.0, p in precision::<c64>(), seed in 0u64..1000) {
		update_is_the_products_entries::<c64>((n, k), how, (alpha, p), seed)?;
	}
}

/// the helper reads the stored operands as the product's: a transposed, conjugated and padded
/// form of an operand gives the logical operand back (the properties' premise)
#[test]
fn forms_read_back_the_operands() {
	let a = random_matrix::<c64>(3, 5, 1.0, 1);
	let id = Mat::<c64>::identity(5, 5);
	let f = Form {
		transposed: true,
		conjugated: true,
		padded: true,
	};
	let plain = Form {
		transposed: false,
		conjugated: false,
		padded: false,
	};
	let native = Emulator::with_backend(Backend::Native).unwrap();
	let (c, _) = product_in_forms(
		&native,
		(&a, &id),
		(f, plain),
		(&Mat::zeros(3, 5), Accum::Replace, c64::new(1.0, 0.0), Precision::F64),
	);
	assert!(same_bits(c.as_ref(), a.as_ref()));
}
