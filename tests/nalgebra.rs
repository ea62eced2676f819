//! nalgebra's forms: `emu_tr_mul` and `emu_ad_mul` (aᵀ b and aᴴ b read through transposed and
//! adjoint views of `a`) give the bits of the emulated product of the transposed and adjoint
//! copies, and nalgebra's `tr_mul`/`ad_mul` within the promise of `Precision::F64`, on static,
//! dynamic and strided shapes; `emu_gemm` on a context of one's own gives the global context's
//! bits and nalgebra's `gemm` within the promise; dynamic shapes that do not agree are an error
//! when the product runs (static ones do not compile: the doc examples show it). The products run
//! on the CPU oracle with the native candidate off, and each is checked to have run the emulation,
//! so that a native fallback cannot make a comparison pass
#![cfg(feature = "nalgebra")]

use emugemm::testing::{ExactProduct, Sampling, random_matrix};
use emugemm::{Backend, EmuMatMul, EmuTrMul, Emulator, Error, Precision, Scalar, Scheme};
use faer::{Mat, MatRef, c64};
use nalgebra::allocator::Allocator;
use nalgebra::constraint::{SameNumberOfRows, ShapeConstraint};
use nalgebra::{DMatrix, DefaultAllocator, Dim, Dyn, Matrix, OMatrix, RawStorage, SMatrix, SVector, U5};

/// the precisions the forms are checked at: a target (the bound and the policy run) and an
/// explicit plan of each scheme
const PRECISIONS: [Precision; 3] = [Precision::F64, Precision::SchemeI { slices: 4 }, Precision::SchemeII { moduli: 9 }];

/// the CPU oracle, with the native product reserved for rows no plan certifies (so that these
/// small products run the emulation)
fn cpu() -> Emulator {
	Emulator::with_backend(Backend::CpuEmulation)
		.expect("the CPU emulation backend is always available")
		.with_native_candidate(false)
}

/// the last product on `emu` ran a plan of the emulation
fn emulation_ran(emu: &Emulator) {
	let report = emu.last_report().expect("a report");
	assert_ne!(report.plan.scheme, Scheme::Native, "{report}");
}

/// a dynamic nalgebra matrix of test entries (`emugemm::testing::random_matrix`)
fn random<T: Scalar + nalgebra::Scalar>(nrows: usize, ncols: usize, seed: u64) -> DMatrix<T> {
	let a = random_matrix::<T>(nrows, ncols, 1.0, seed);
	DMatrix::from_fn(nrows, ncols, |i, j| a[(i, j)])
}

/// true when `x` and `y` have the same shape and the same bits, part by part
fn same_bits<T: Scalar, R1: Dim, C1: Dim, R2: Dim, C2: Dim>(
	x: &Matrix<T, R1, C1, impl RawStorage<T, R1, C1>>,
	y: &Matrix<T, R2, C2, impl RawStorage<T, R2, C2>>,
) -> bool {
	let bits = |v: T| (Scalar::re(v).to_bits(), Scalar::im(v).to_bits());
	x.shape() == y.shape() && x.iter().zip(y.iter()).all(|(&u, &v)| bits(u) == bits(v))
}

/// a faer copy of any nalgebra matrix or view
fn to_faer<T: Scalar, R: Dim, C: Dim>(m: &Matrix<T, R, C, impl RawStorage<T, R, C>>) -> Mat<T> {
	Mat::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
}

/// a dynamic copy of any nalgebra matrix or view
fn to_dynamic<T: Scalar + nalgebra::Scalar, R: Dim, C: Dim>(m: &Matrix<T, R, C, impl RawStorage<T, R, C>>) -> DMatrix<T> {
	DMatrix::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
}

/// the magnitude of an entry
fn magnitude<T: Scalar>(x: T) -> f64 {
	Scalar::re(x).hypot(Scalar::im(x))
}

/// `aᵀ b` and `aᴴ b` of any nalgebra operands, read in place: the bits of the emulated product of
/// the contiguous copies `aᵀ` and `aᴴ` on the same context, a plan of the emulation run, at every
/// precision; at `Precision::F64`, at least the accuracy of nalgebra's `tr_mul`/`ad_mul` minus
/// one bit (the promise), both measured against the exact product
fn check_tr_ad<T, R1: Dim, C1: Dim, R2: Dim, C2: Dim, S1, S2>(
	emu: &Emulator,
	a: &Matrix<T, R1, C1, S1>,
	b: &Matrix<T, R2, C2, S2>,
	what: &str,
) where
	T: Scalar + nalgebra::ComplexField,
	S1: RawStorage<T, R1, C1>,
	S2: RawStorage<T, R2, C2>,
	DefaultAllocator: Allocator<C1, C2>,
	ShapeConstraint: SameNumberOfRows<R1, R2>,
{
	let (a_copy, b_copy) = (to_dynamic(a), to_dynamic(b));
	let at = DMatrix::from_fn(a.ncols(), a.nrows(), |i, j| a[(j, i)]);
	let ah = DMatrix::from_fn(a.ncols(), a.nrows(), |i, j| {
		T::from_parts(Scalar::re(a[(j, i)]), -Scalar::im(a[(j, i)]))
	});
	for precision in PRECISIONS {
		let got = a.emu_tr_mul_with(emu, b, precision).unwrap();
		emulation_ran(emu);
		let expected = at.emu_mul_with(emu, &b_copy, precision).unwrap();
		assert!(same_bits(&got, &expected), "{what}: aᵀ b at {precision:?}");

		let got_h = a.emu_ad_mul_with(emu, b, precision).unwrap();
		emulation_ran(emu);
		let expected_h = ah.emu_mul_with(emu, &b_copy, precision).unwrap();
		assert!(same_bits(&got_h, &expected_h), "{what}: aᴴ b at {precision:?}");
		if !T::IS_COMPLEX {
			assert!(same_bits(&got_h, &got), "{what}: a real aᴴ b is aᵀ b at {precision:?}");
		}

		if precision == Precision::F64 {
			let b_faer = to_faer(b);
			let forms = [
				(to_faer(&got), &at, a_copy.tr_mul(&b_copy), "tr_mul"),
				(to_faer(&got_h), &ah, a_copy.ad_mul(&b_copy), "ad_mul"),
			];
			for (got, copy, native, form) in forms {
				let exact = ExactProduct::compute(to_faer(copy).as_ref(), b_faer.as_ref(), Sampling::Full);
				let (got, native) = (exact.accuracy(got.as_ref()), exact.accuracy(to_faer(&native).as_ref()));
				assert!(got.bits >= native.bits - 1.0, "{what}: {form}, {got} against nalgebra's {native}");
				assert!(got.bits >= 50.0, "{what}: {form}, {got}");
			}
		}
	}
}

/// `emu_tr_mul`/`emu_ad_mul` on dynamic matrices, on strided views (a block, every other row), on
/// vectors, for one element type
fn tr_ad_dynamic_and_views<T: Scalar + nalgebra::ComplexField>(seed: u64) {
	let emu = cpu();
	let (a, b) = (random::<T>(45, 38, seed), random::<T>(45, 30, seed + 1));
	check_tr_ad(&emu, &a, &b, "dynamic");

	// a block of a larger matrix (column stride 50) times every other row of another (row stride 2)
	let big = random::<T>(50, 45, seed + 2);
	let block = big.view((3, 4), (45, 38));
	let tall = random::<T>(90, 30, seed + 3);
	let every_other = tall.view_with_steps((0, 0), (45, 30), (1, 0));
	assert_eq!((block.strides(), every_other.strides().0), ((1, 50), 2));
	check_tr_ad(&emu, &block, &every_other, "strided views");
	// the views' products are the products of the views' entries, copied
	let got = block.emu_ad_mul_with(&emu, &every_other, Precision::F64).unwrap();
	let expected = block
		.clone_owned()
		.emu_ad_mul_with(&emu, &every_other.clone_owned(), Precision::F64)
		.unwrap();
	assert!(same_bits(&got, &expected));

	// a vector on the right gives a vector
	let x = random::<T>(45, 1, seed + 4).column(0).into_owned();
	let y: nalgebra::DVector<T> = a.emu_ad_mul_with(&emu, &x, Precision::F64).unwrap();
	emulation_ran(&emu);
	let expected = a.adjoint().emu_mul_with(&emu, &x, Precision::F64).unwrap();
	assert!(same_bits(&y, &expected));
}

/// `emu_tr_mul`/`emu_ad_mul` on static shapes keep them static (the types are checked here),
/// static views included, and a static operand may meet a dynamic one, for one element type
fn tr_ad_static<T: Scalar + nalgebra::ComplexField>(seed: u64) {
	let emu = cpu();
	let a = SMatrix::<T, 7, 5>::from_iterator(random::<T>(7, 5, seed).iter().copied());
	let b = SMatrix::<T, 7, 3>::from_iterator(random::<T>(7, 3, seed + 1).iter().copied());
	let c: SMatrix<T, 5, 3> = a.emu_tr_mul_with(&emu, &b, Precision::F64).unwrap();
	emulation_ran(&emu);
	let expected: SMatrix<T, 5, 3> = a.transpose().emu_mul_with(&emu, &b, Precision::F64).unwrap();
	assert!(same_bits(&c, &expected));
	check_tr_ad(&emu, &a, &b, "static");

	// a static view with strides (a block of a larger matrix) and a static vector
	let big = random::<T>(12, 9, seed + 2);
	let block = big.fixed_view::<7, 5>(2, 3);
	let x = SVector::<T, 7>::from_iterator(random::<T>(7, 1, seed + 3).iter().copied());
	let y: SVector<T, 5> = block.emu_ad_mul_with(&emu, &x, Precision::F64).unwrap();
	emulation_ran(&emu);
	let expected: SVector<T, 5> = block.adjoint().emu_mul_with(&emu, &x, Precision::F64).unwrap();
	assert!(same_bits(&y, &expected));
	check_tr_ad(&emu, &block, &x, "static view");

	// static rows against dynamic ones: the static dimensions stay static
	let d = random::<T>(7, 4, seed + 4);
	let mixed: OMatrix<T, U5, Dyn> = a.emu_tr_mul_with(&emu, &d, Precision::F64).unwrap();
	let expected = a.transpose().emu_mul_with(&emu, &d, Precision::F64).unwrap();
	assert!(same_bits(&mixed, &expected));
}

#[test]
fn tr_and_ad_mul_f64_dynamic_and_strided_views() {
	tr_ad_dynamic_and_views::<f64>(10);
}

#[test]
fn tr_and_ad_mul_c64_dynamic_and_strided_views() {
	tr_ad_dynamic_and_views::<c64>(20);
}

#[test]
fn tr_and_ad_mul_f64_static_shapes() {
	tr_ad_static::<f64>(30);
}

#[test]
fn tr_and_ad_mul_c64_static_shapes() {
	tr_ad_static::<c64>(40);
}

/// the global context's forms (`emu_tr_mul`, `try_emu_ad_mul`) run there, on the same bits
#[test]
fn tr_and_ad_mul_on_the_global_context() {
	Emulator::set_global(cpu());
	let emu = cpu();
	let (z, w) = (random::<c64>(30, 20, 50), random::<c64>(30, 25, 51));
	let got = z.emu_tr_mul(&w, Precision::F64);
	assert!(same_bits(&got, &z.emu_tr_mul_with(&emu, &w, Precision::F64).unwrap()));
	let got = z.try_emu_ad_mul(&w, Precision::F64).unwrap();
	assert!(same_bits(&got, &z.emu_ad_mul_with(&emu, &w, Precision::F64).unwrap()));
}

/// `got`, `c = alpha a b + beta c` at `Precision::F64`, is nalgebra's `gemm` within the errors of
/// both: entry by entry, within 2^-46 of `|alpha| (|a| |b|)_ij + |beta c_ij|`, which holds
/// nalgebra's error bound `(k + 2) u` (k = 30, u = 2^-53: about 2^-48) with a factor 4 for complex
/// arithmetic, plus the emulation's 2^-52
fn near_gemm<T: Scalar + nalgebra::ComplexField>(got: &DMatrix<T>, (alpha, a, b, beta, c0): (T, &DMatrix<T>, &DMatrix<T>, T, &DMatrix<T>)) {
	let mut expected = c0.clone();
	expected.gemm(alpha, a, b, beta);
	let (abs_a, abs_b) = (a.map(magnitude), b.map(magnitude));
	let scale = &abs_a * &abs_b * magnitude(alpha) + c0.map(magnitude) * magnitude(beta);
	for j in 0..got.ncols() {
		for i in 0..got.nrows() {
			let err = magnitude(got[(i, j)] - expected[(i, j)]);
			assert!(
				err <= 2.0f64.powi(-46) * scale[(i, j)],
				"({i}, {j}): {err:e} of {:e}",
				scale[(i, j)]
			);
		}
	}
}

/// `emu.emu_gemm` on a context of one's own, for one element type: the global context's bits for
/// the same backend, nalgebra's `gemm` within the promise, `beta = 0` not reading `c`, views as
/// the destination and static shapes
fn gemm_on_a_context<T: Scalar + nalgebra::ComplexField>(seed: u64) {
	let emu = cpu();
	Emulator::set_global(cpu());
	let (a, b) = (random::<T>(40, 30, seed), random::<T>(30, 20, seed + 1));
	let c0 = random::<T>(40, 20, seed + 2);
	let (alpha, beta) = (T::from_parts(-1.5, 0.25), T::from_parts(0.5, -2.0));
	for precision in PRECISIONS {
		let (mut mine, mut global) = (c0.clone(), c0.clone());
		emu.emu_gemm(&mut mine, alpha, (&a, &b), beta, precision).unwrap();
		emulation_ran(&emu);
		emugemm::emu_gemm(&mut global, alpha, (&a, &b), beta, precision).unwrap();
		assert_ne!(emugemm::last_report().unwrap().plan.scheme, Scheme::Native);
		assert!(same_bits(&mine, &global), "{precision:?}");
		if precision == Precision::F64 {
			near_gemm(&mine, (alpha, &a, &b, beta, &c0));
		}

		// beta = 0: c is not read, its NaNs do not spread
		let zero = T::from_parts(0.0, 0.0);
		let (mut mine, mut global) = (DMatrix::from_element(40, 20, T::from_parts(f64::NAN, f64::NAN)), c0.clone());
		emu.emu_gemm(&mut mine, alpha, (&a, &b), zero, precision).unwrap();
		emugemm::emu_gemm(&mut global, alpha, (&a, &b), zero, precision).unwrap();
		assert!(same_bits(&mine, &global), "beta = 0 at {precision:?}");
		if precision == Precision::F64 {
			near_gemm(&mine, (alpha, &a, &b, zero, &c0));
		}
	}

	// a strided view as the destination, written in place, the rest left alone
	let mut big = DMatrix::from_element(90, 30, T::from_parts(7.0, 0.0));
	let mut expected = c0.clone();
	emu.emu_gemm(&mut expected, alpha, (&a, &b), beta, Precision::F64).unwrap();
	let mut dst = big.view_with_steps_mut((1, 2), (40, 20), (1, 0));
	dst.copy_from(&c0);
	emu.emu_gemm(&mut dst, alpha, (&a, &b), beta, Precision::F64).unwrap();
	assert!(same_bits(&big.view_with_steps((1, 2), (40, 20), (1, 0)), &expected));
	assert_eq!(big[(2, 2)], T::from_parts(7.0, 0.0));
	assert_eq!(big[(1, 1)], T::from_parts(7.0, 0.0));

	// static shapes
	let sa = SMatrix::<T, 5, 7>::from_iterator(random::<T>(5, 7, seed + 3).iter().copied());
	let sb = SMatrix::<T, 7, 3>::from_iterator(random::<T>(7, 3, seed + 4).iter().copied());
	let sc0 = SMatrix::<T, 5, 3>::from_iterator(random::<T>(5, 3, seed + 5).iter().copied());
	let (mut mine, mut global) = (sc0, sc0);
	emu.emu_gemm(&mut mine, alpha, (&sa, &sb), beta, Precision::F64).unwrap();
	emulation_ran(&emu);
	emugemm::emu_gemm(&mut global, alpha, (&sa, &sb), beta, Precision::F64).unwrap();
	assert!(same_bits(&mine, &global));
	near_gemm(
		&to_dynamic(&mine),
		(alpha, &to_dynamic(&sa), &to_dynamic(&sb), beta, &to_dynamic(&sc0)),
	);
}

#[test]
fn emu_gemm_on_a_context_f64() {
	gemm_on_a_context::<f64>(60);
}

#[test]
fn emu_gemm_on_a_context_c64() {
	gemm_on_a_context::<c64>(70);
}

/// the shapes that the error of shapes that do not agree names: `(lhs, rhs, dst)`
type Shapes = ((usize, usize), (usize, usize), Option<(usize, usize)>);

/// the shapes named by `result`, the error of shapes that do not agree
fn mismatch<T>(result: Result<T, Error>) -> Shapes {
	match result {
		Err(Error::ShapeMismatch { lhs, rhs, dst }) => (lhs, rhs, dst),
		Err(e) => panic!("not a shape mismatch: {e}"),
		Ok(_) => panic!("shapes that do not agree gave a product"),
	}
}

/// dynamic shapes that do not agree are an error when the product runs, on every form, and leave
/// `emu_gemm`'s `c` as it was
#[test]
fn dynamic_shape_mismatches_are_errors() {
	let emu = cpu();
	let (a, b) = (random::<f64>(6, 4, 80), random::<f64>(5, 3, 81));
	// aᵀ b: rows 6 and 5; the error names aᵀ
	assert_eq!(mismatch(a.emu_tr_mul_with(&emu, &b, Precision::F64)), ((4, 6), (5, 3), None));
	assert_eq!(mismatch(a.emu_ad_mul_with(&emu, &b, Precision::F64)), ((4, 6), (5, 3), None));
	assert_eq!(mismatch(a.try_emu_tr_mul(&b, Precision::F64)), ((4, 6), (5, 3), None));
	let z = random::<c64>(6, 4, 82);
	assert_eq!(
		mismatch(z.try_emu_ad_mul(&random::<c64>(4, 6, 83), Precision::F64)),
		((4, 6), (4, 6), None)
	);
	// a b: columns 4 against rows 5
	assert_eq!(mismatch(a.emu_mul_with(&emu, &b, Precision::F64)), ((6, 4), (5, 3), None));
	assert_eq!(mismatch(a.try_emu_mul(&b, Precision::F64)), ((6, 4), (5, 3), None));
	// a static operand against a dynamic one compiles, and is checked when it runs
	let s = SMatrix::<f64, 6, 4>::from_iterator(a.iter().copied());
	assert_eq!(mismatch(s.emu_tr_mul_with(&emu, &b, Precision::F64)), ((4, 6), (5, 3), None));
	assert_eq!(mismatch(s.emu_mul_with(&emu, &b, Precision::F64)), ((6, 4), (5, 3), None));

	// gemm: c's rows, c's columns, the inner dimension; c left as it was
	for (rows, cols, inner) in [(7, 3, 4), (6, 2, 4), (6, 3, 5)] {
		let (a, b) = (random::<f64>(6, inner, 84), random::<f64>(4, 3, 85));
		let c0 = random::<f64>(rows, cols, 86);
		let mut c = c0.clone();
		let shapes = ((6, inner), (4, 3), Some((rows, cols)));
		assert_eq!(mismatch(emu.emu_gemm(&mut c, 1.0, (&a, &b), 0.5, Precision::F64)), shapes);
		assert!(same_bits(&c, &c0), "c was touched");
		assert_eq!(mismatch(emugemm::emu_gemm(&mut c, 1.0, (&a, &b), 0.5, Precision::F64)), shapes);
		assert!(same_bits(&c, &c0), "c was touched");
		if (rows, cols) == (6, 3) {
			// a static destination against dynamic operands
			let mut s = SMatrix::<f64, 6, 3>::from_element(2.0);
			assert_eq!(mismatch(emu.emu_gemm(&mut s, 1.0, (&a, &b), 0.5, Precision::F64)), shapes);
			assert_eq!(s, SMatrix::<f64, 6, 3>::from_element(2.0));
		}
	}
}

/// the panicking form panics on dynamic shapes that do not agree
#[test]
#[should_panic(expected = "cannot multiply a 4x6 matrix by a 5x3 matrix")]
fn emu_tr_mul_panics_on_a_dynamic_mismatch() {
	let (a, b) = (DMatrix::<f64>::zeros(6, 4), DMatrix::<f64>::zeros(5, 3));
	let _ = a.emu_tr_mul(&b, Precision::F64);
}

/// a faer view of a contiguous nalgebra matrix, to compare with the faer path
fn faer_view<T: Scalar>(m: &DMatrix<T>) -> MatRef<'_, T> {
	MatRef::from_column_major_slice(m.as_slice(), m.nrows(), m.ncols())
}

/// `aᴴ b` through nalgebra equals faer's `a.adjoint().emu_mul(&b)` on the same entries
#[test]
fn ad_mul_equals_the_faer_adjoint_path() {
	let emu = cpu();
	let (z, w) = (random::<c64>(33, 21, 90), random::<c64>(33, 17, 91));
	let got = z.emu_ad_mul_with(&emu, &w, Precision::F64).unwrap();
	let expected = faer_view(&z).adjoint().emu_mul_with(&emu, &faer_view(&w), Precision::F64).unwrap();
	assert!(same_bits(&got, &DMatrix::from_fn(21, 17, |i, j| expected[(i, j)])));
}
