//! special values that finite operands produce, and targets an output type cannot hold:
//!
//! - a complex product whose real or imaginary part overflows keeps the other part exact, the
//!   overflowing part the infinity of its sign (as the exact product rounded to the type, and
//!   IEEE arithmetic on each part, give it), under certified and explicit plans, scheme I (4M)
//!   and scheme II (3M) and separately scaled parts, with and without accumulation, for `c64`
//!   and `c32` (and the real types); every entry judged against its exact value, never against
//!   the crate's own arithmetic, and the emulation checked to have run;
//! - `Precision::Bits(n)` above the output type's significand bits minus one is
//!   `Error::InvalidPrecision` on every entry point.
//!
//! The products run on the CPU oracle, or with `EMUGEMM_TEST_BACKEND=gpu` on the GPU (the fused
//! and unfused routes), each of them then also bit for bit the oracle's. The device entry points
//! need an NVIDIA GPU and a build with the `cuda` feature: their test is ignored otherwise.

mod common;

use common::{cpu, same_bits};
use emugemm::{Accum, Backend, EmuMatMul, Emulator, Error, Precision, Scalar, Scheme};
use faer::linalg::matmul::triangular::BlockStructure;
use faer::{Mat, Par, c32, c64};

/// the contexts under test: the CPU oracle, or the GPU's routes with `EMUGEMM_TEST_BACKEND=gpu`
fn contexts() -> Vec<(&'static str, Emulator)> {
	match std::env::var("EMUGEMM_TEST_BACKEND").as_deref() {
		Ok("gpu") => vec![
			("gpu", common::gpu()),
			("gpu fused scheme I", common::gpu().with_priced_routes(false)),
			("gpu unfused", common::gpu().with_fused_products(false)),
		],
		_ => vec![("oracle", cpu())],
	}
}

/// one product `a b` (a row times a column) of finite operands, with its exact value: each
/// operand entry and each part of the result a multiple of a power of the type's scale `s`
/// (`s^2` overflows the type), the result's parts rounded to the type (`±inf` where they overflow)
struct Case {
	what: &'static str,
	/// the entries of the row `a` and of the column `b`, as `(re, im)` in units of `s`
	a: Vec<(f64, f64)>,
	b: Vec<(f64, f64)>,
	/// the exact product, each part in units of `s^2`
	exact: (f64, f64),
}

/// the cases of an output type: every one for complex types, those of real operands for the others
fn cases(complex: bool) -> Vec<Case> {
	let t = 2f64.powi(-14);
	let all = [
		Case {
			what: "real part overflows",
			a: vec![(1.0, 0.0)],
			b: vec![(1.0, 0.0)],
			exact: (1.0, 0.0),
		},
		Case {
			what: "imaginary part overflows",
			a: vec![(0.0, 1.0)],
			b: vec![(1.0, 0.0)],
			exact: (0.0, 1.0),
		},
		Case {
			what: "both parts overflow",
			a: vec![(1.0, 1.0)],
			b: vec![(1.0, 0.0)],
			exact: (1.0, 1.0),
		},
		Case {
			what: "real part overflows negative, imaginary part finite",
			a: vec![(-1.0, t)],
			b: vec![(1.0, 0.0)],
			exact: (-1.0, t),
		},
		Case {
			what: "imaginary part overflows, real part finite",
			a: vec![(1.0, t)],
			b: vec![(0.0, 1.0)],
			exact: (-t, 1.0),
		},
		Case {
			what: "the sum overflows, each term finite",
			a: vec![(0.5, 0.0), (0.5, 0.0)],
			b: vec![(1.0, 0.0), (1.0, 0.0)],
			exact: (1.0, 0.0),
		},
		Case {
			what: "the cross terms of 3M overflow, the imaginary part is zero",
			a: vec![(1.0, 1.0)],
			b: vec![(1.0, -1.0)],
			exact: (2.0, 0.0),
		},
		Case {
			what: "the parts' products overflow, the real part is zero",
			a: vec![(1.0, 1.0)],
			b: vec![(1.0, 1.0)],
			exact: (0.0, 2.0),
		},
	];
	let real = |c: &Case| c.a.iter().chain(&c.b).all(|&(_, im)| im == 0.0);
	all.into_iter().filter(|c| complex || real(c)).collect()
}

/// the type's scale: `s^2` overflows it, `s^2 2^-14` does not
fn scale<T: Scalar>() -> f64 {
	if T::MANTISSA_BITS == 53 { 2f64.powi(514) } else { 2f64.powi(64) }
}

/// `x` rounded to `T`'s parts
fn rounded<T: Scalar>(x: f64) -> f64 {
	T::from_parts(x, 0.0).re()
}

/// `a x` for a part `a` of alpha and a part `x` of the exact product: a zero part of alpha
/// contributes nothing, whatever the product's part
fn times(a: f64, x: f64) -> f64 {
	if a == 0.0 { 0.0 } else { a * x }
}

/// the precisions under test: a certified target, and explicit plans of scheme II (3M) and
/// scheme I (4M)
const PRECISIONS: [Precision; 3] = [Precision::F64, Precision::SchemeII { moduli: 15 }, Precision::SchemeI { slices: 4 }];

/// the accumulations under test: `(accum, alpha)`, alpha's parts as `(re, im)`
const ACCUMULATIONS: [(Accum, (f64, f64)); 3] = [(Accum::Replace, (1.0, 0.0)), (Accum::Add, (-2.0, 0.0)), (Accum::Add, (0.0, 1.0))];

/// the value of `dst` before an accumulating product
const OLD: (f64, f64) = (1.0, -3.0);

/// checks that the emulation the call asked for ran (no fallback to the native product, no
/// native rows), with the scheme of an explicit plan
fn assert_emulated(emu: &Emulator, precision: Precision, what: &str) -> emugemm::Plan {
	let report = emu.last_report().expect("a report");
	let backend = if emu.backend() == Backend::Gpu {
		Backend::Gpu
	} else {
		Backend::CpuEmulation
	};
	assert_eq!(report.backend, backend, "{what}: {report}");
	assert_ne!(report.plan.scheme, Scheme::Native, "{what}: {report}");
	assert!(report.native_rows.is_empty() && report.plan.native_rows == 0, "{what}: {report}");
	assert_eq!(report.nonfinite_entries, 0, "{what}: finite operands: {report}");
	match (precision, report.plan.scheme) {
		(Precision::SchemeI { slices }, scheme) => assert_eq!(scheme, Scheme::SchemeI { slices }, "{what}"),
		(Precision::SchemeII { moduli }, Scheme::SchemeII { moduli: ran, .. }) => assert_eq!(ran, moduli, "{what}"),
		(Precision::SchemeII { .. }, scheme) => panic!("{what}: {scheme:?} ran for {precision:?}"),
		_ => {},
	}
	report.plan
}

/// `a b` (1 x 1) by `emu` at `precision`, accumulated as `how` says into [`OLD`]
fn product<T: Scalar>(emu: &Emulator, (a, b): (&Mat<T>, &Mat<T>), precision: Precision, how: (Accum, (f64, f64))) -> T {
	let (accum, alpha) = how;
	let mut c = Mat::from_fn(1, 1, |_, _| T::from_parts(OLD.0, OLD.1));
	emu.matmul(
		c.as_mut(),
		accum,
		(a.as_ref(), b.as_ref()),
		T::from_parts(alpha.0, alpha.1),
		(Par::Seq, precision),
	)
	.expect("a product of finite operands");
	c[(0, 0)]
}

/// [`product`] on `emu`, checked to have run the emulation asked for ([`assert_emulated`]) and,
/// on a GPU, to give the oracle's bits; the entry and the plan that ran
fn checked_product<T: Scalar>(
	emu: &Emulator,
	(a, b): (&Mat<T>, &Mat<T>),
	(precision, how): (Precision, (Accum, (f64, f64))),
	what: &str,
) -> (T, emugemm::Plan) {
	let got = product(emu, (a, b), precision, how);
	let plan = assert_emulated(emu, precision, what);
	if emu.backend() == Backend::Gpu {
		let oracle = product(&cpu(), (a, b), precision, how);
		let (g, o) = (Mat::from_fn(1, 1, |_, _| got), Mat::from_fn(1, 1, |_, _| oracle));
		assert!(same_bits(g.as_ref(), o.as_ref()), "{what}: {got:?}, oracle {oracle:?}");
	}
	(got, plan)
}

/// the exact entry of `T` that a product whose exact value has the parts `exact` (each rounded to
/// `T`) gives under `how`: alpha times it, plus [`OLD`] when accumulating, rounded to `T`
fn exact_entry<T: Scalar>(exact: (f64, f64), (accum, (ar, ai)): (Accum, (f64, f64))) -> (f64, f64) {
	let (re, im) = (times(ar, exact.0) - times(ai, exact.1), times(ar, exact.1) + times(ai, exact.0));
	let (re, im) = match accum {
		Accum::Add => (OLD.0 + re, OLD.1 + im),
		Accum::Replace => (re, im),
	};
	(rounded::<T>(re), if T::IS_COMPLEX { rounded::<T>(im) } else { 0.0 })
}

/// every case of `T` under every precision and accumulation on every context: each part of the
/// result is the exact one, accumulated and rounded to `T`
fn overflowing_parts<T: Scalar>() {
	let s = scale::<T>();
	let (mut failures, mut forms) = (Vec::new(), std::collections::BTreeSet::new());
	for (on, emu) in contexts() {
		for case in cases(T::IS_COMPLEX) {
			let a = Mat::<T>::from_fn(1, case.a.len(), |_, h| T::from_parts(case.a[h].0 * s, case.a[h].1 * s));
			let b = Mat::<T>::from_fn(case.b.len(), 1, |h, _| T::from_parts(case.b[h].0 * s, case.b[h].1 * s));
			// each part of the exact product, rounded to T: infinite where it overflows
			let exact = (rounded::<T>(case.exact.0 * s * s), rounded::<T>(case.exact.1 * s * s));
			for precision in PRECISIONS {
				for how in ACCUMULATIONS {
					let (accum, (ar, ai)) = how;
					let what = format!("{} {} on {on}, {precision:?}, {accum:?} alpha ({ar}, {ai})", T::NAME, case.what);
					let (got, plan) = checked_product(&emu, (&a, &b), (precision, how), &what);
					forms.insert(form(&plan));
					let want = exact_entry::<T>(exact, how);
					if got.re() != want.0 || got.im() != want.1 {
						let (x, y) = (got.re(), got.im());
						failures.push(format!("{what}: {plan}: got ({x:e}, {y:e}), exact ({:e}, {:e})", want.0, want.1));
					}
				}
			}
		}
	}
	assert!(failures.is_empty(), "{} wrong entries:\n{}", failures.len(), failures.join("\n"));
	if T::IS_COMPLEX {
		assert_eq!(forms.len(), 3, "every complex form ran: {forms:?}");
	}
}

/// how a plan multiplies complex operands: 4M (scheme I), 3M (scheme II), or four real products
/// of separately scaled parts
fn form(plan: &emugemm::Plan) -> &'static str {
	match plan.scheme {
		_ if plan.separate_parts => "separately scaled parts",
		Scheme::SchemeI { .. } => "4M",
		_ => "3M",
	}
}

/// a part whose two separately scaled products both overflow (`Re A Re B` and `Im A Im B` beyond
/// `f64`, their difference zero) cannot be recovered from them: it is NaN, as native arithmetic
/// gives it, or its exact value; the other part keeps its exact value, alpha's zero part not
/// carrying the loss over
#[test]
fn a_lost_part_leaves_the_other() {
	let a = Mat::from_fn(1, 1, |_, _| c64::new(2f64.powi(600), 2f64.powi(500)));
	let b = Mat::from_fn(1, 1, |_, _| c64::new(2f64.powi(500), 2f64.powi(600)));
	let exact = (0.0, f64::INFINITY);
	for (on, emu) in contexts() {
		for how in ACCUMULATIONS {
			let what = format!("{on}, {how:?}");
			let (got, plan) = checked_product(&emu, (&a, &b), (Precision::F64, how), &what);
			assert!(plan.separate_parts, "{what}: {plan}");
			let want = exact_entry::<c64>(exact, how);
			// alpha real: the real part is the lost one; alpha imaginary: the imaginary part
			let (lost, kept, want_lost, want_kept) = match how.1 {
				(_, 0.0) => (got.re, got.im, want.0, want.1),
				_ => (got.im, got.re, want.1, want.0),
			};
			assert_eq!(kept, want_kept, "{what}: {got:?}, exact {want:?}");
			assert!(lost.is_nan() || lost == want_lost, "{what}: {got:?}, exact {want:?}");
		}
	}
}

#[test]
fn overflowing_parts_c64() {
	overflowing_parts::<c64>();
}

#[test]
fn overflowing_parts_c32() {
	overflowing_parts::<c32>();
}

#[test]
fn overflowing_parts_f64() {
	overflowing_parts::<f64>();
}

#[test]
fn overflowing_parts_f32() {
	overflowing_parts::<f32>();
}

/// the result of every host entry point for a product of `T` at `precision`, by name: the
/// context's product, plan, candidates, batch and rank-k update, the `EmuMatMul` methods, and
/// `emugemm::matmul` on the global context
fn host_calls<T: Scalar>(emu: &Emulator, precision: Precision) -> Vec<(&'static str, Result<(), Error>)> {
	let a = Mat::<T>::from_fn(3, 2, |i, j| T::from_parts(1.0 + i as f64, j as f64));
	let b = Mat::<T>::from_fn(2, 4, |i, j| T::from_parts(j as f64 - 1.0, i as f64));
	let one = T::from_parts(1.0, 0.0);
	let (mut c, mut d) = (Mat::<T>::zeros(3, 4), Mat::<T>::zeros(3, 4));
	let mut batch = [d.as_mut()];
	vec![
		(
			"Emulator::matmul",
			emu.matmul(c.as_mut(), Accum::Replace, (&a, &b), one, (Par::Seq, precision)),
		),
		("Emulator::plan", emu.plan(a.as_ref(), b.as_ref(), precision).map(|_| ())),
		(
			"Emulator::candidates",
			emu.candidates(a.as_ref(), b.as_ref(), precision).map(|_| ()),
		),
		(
			"Emulator::matmul_batch",
			emu.matmul_batch(&mut batch, Accum::Add, (&[a.as_ref()], &[b.as_ref()]), one, (Par::Seq, precision))
				.map(|_| ()),
		),
		(
			"Emulator::rank_k_update",
			emu.rank_k_update(
				(Mat::<T>::zeros(3, 3), BlockStructure::TriangularLower),
				Accum::Replace,
				&a,
				T::RealPart::from_parts(1.0, 0.0),
				(Par::Seq, precision),
			),
		),
		("EmuMatMul::emu_mul_with", a.emu_mul_with(emu, &b, precision).map(|_| ())),
		("EmuMatMul::try_emu_mul", a.try_emu_mul(&b, precision).map(|_| ())),
		(
			"emugemm::matmul",
			emugemm::matmul(c.as_mut(), Accum::Replace, (&a, &b), one, (Par::Seq, precision)),
		),
	]
}

/// `Bits(n)` beyond what `T`'s output holds (`limit` bits) is `Error::InvalidPrecision` on every
/// host entry point, its message naming the limit; `Bits(limit)` runs on every one
fn bits_within_the_types_limit<T: Scalar>(limit: u32) {
	let emu = cpu();
	for n in [limit + 1, 40, 52, 53, 60].into_iter().filter(|&n| n > limit) {
		for (call, result) in host_calls::<T>(&emu, Precision::Bits(n)) {
			match result {
				Err(e @ Error::InvalidPrecision { .. }) => {
					assert!(
						e.to_string().contains(&format!("at most {limit} bits")),
						"{} {call} Bits({n}): {e}",
						T::NAME
					)
				},
				other => panic!("{} {call} Bits({n}): {other:?}, not InvalidPrecision", T::NAME),
			}
		}
	}
	for (call, result) in host_calls::<T>(&emu, Precision::Bits(limit)) {
		assert!(result.is_ok(), "{} {call} Bits({limit}): {result:?}", T::NAME);
	}
	// the emulation serves the limit, certified to it
	let a = Mat::<T>::from_fn(16, 40, |i, j| {
		T::from_parts(((i * 7 + j * 3) % 11) as f64 - 5.0, (i + j) as f64 / 8.0)
	});
	a.emu_mul_with(&emu, &a.transpose().to_owned(), Precision::Bits(limit)).unwrap();
	let plan = assert_emulated(&emu, Precision::Bits(limit), &format!("{} Bits({limit})", T::NAME));
	assert!(plan.predicted_bits >= limit as f64, "{plan}");
}

#[test]
fn bits_within_the_limit_of_f32_and_c32() {
	bits_within_the_types_limit::<f32>(23);
	bits_within_the_types_limit::<c32>(23);
}

#[test]
fn bits_within_the_limit_of_f64_and_c64() {
	bits_within_the_types_limit::<f64>(52);
	bits_within_the_types_limit::<c64>(52);
}

/// the device entry points of `T` (`f32` or `c32`) refuse `Bits(24)` and serve `Bits(23)`: products
/// of device matrices, and on device views the product, the rank-k update and the batch
#[cfg(feature = "cuda")]
fn device_bits<T: Scalar>() {
	use common::device::{stream, upload};
	use emugemm::{DeviceView, DeviceViewMut};
	let (emu, stream) = (common::gpu(), stream());
	let (one, zero) = (T::from_parts(1.0, 0.0), T::from_parts(0.0, 0.0));
	let a = Mat::<T>::from_fn(8, 8, |i, j| T::from_parts((i + 2 * j) as f64, 1.0));
	let da = emu.upload(a.as_ref()).unwrap();
	let (operand, mut output) = (upload(&stream, &[one; 64]), upload(&stream, &[zero; 64]));
	let x = unsafe { operand.transmute::<T>(64) }.unwrap();
	let mut y = unsafe { output.transmute_mut::<T>(64) }.unwrap();
	let xv = DeviceView::new(&x, (8, 8), 8).unwrap();
	for (n, refused) in [(24, true), (23, false)] {
		let (precision, on) = (Precision::Bits(n), (&stream).into());
		let mut dc = emu.zeros_on_device::<T>(8, 8).unwrap();
		let mut results = vec![(
			"Emulator::matmul_device",
			emu.matmul_device(&mut dc, Accum::Replace, (&da, &da), one, precision),
		)];
		let view = DeviceViewMut::new(&mut y, (8, 8), 8).unwrap();
		results.push((
			"Emulator::gemm_on_stream",
			emu.gemm_on_stream(view, one, (xv, xv), zero, (precision, on))
				.and_then(|pending| pending.wait())
				.map(|_| ()),
		));
		let view = DeviceViewMut::new(&mut y, (8, 8), 8).unwrap();
		let (alpha, beta) = (T::RealPart::from_parts(1.0, 0.0), T::RealPart::from_parts(0.0, 0.0));
		let update = emu.rank_k_on_stream((view, BlockStructure::TriangularLower), alpha, xv, beta, (precision, on));
		results.push(("Emulator::rank_k_on_stream", update.and_then(|pending| pending.wait()).map(|_| ())));
		let mut views = [DeviceViewMut::new(&mut y, (8, 8), 8).unwrap()];
		let batch = emu.gemm_batch_on_stream(&mut views, one, (&[xv], &[xv]), zero, (precision, on));
		results.push(("Emulator::gemm_batch_on_stream", batch.map(|_| ())));
		for (call, result) in results {
			match result {
				Err(Error::InvalidPrecision { .. }) if refused => {},
				Ok(()) if !refused => {},
				other => panic!("{} {call} Bits({n}): {other:?}", T::NAME),
			}
		}
	}
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_bits_within_the_limit_of_f32_and_c32() {
	device_bits::<f32>();
	device_bits::<c32>();
}
