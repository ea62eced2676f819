//! the C ABI's single products on a GPU: `emugemm_{s,d,c,z}gemm` equal the Rust API's product on
//! the same device memory bit for bit, with every op pair, `alpha` and `beta` behind host and
//! device pointers; `beta = 0` does not read `C`, `alpha = 0` reads neither `A` nor `B`; bad
//! arguments are statuses with a message, and the report says what ran. `emugemm_{s,d}syrk` and
//! `emugemm_{c,z}herk` equal the Rust API's rank-k update likewise, with both triangles and `A`
//! as stored and (conjugate-)transposed
//!
//! these tests need an NVIDIA GPU: they are ignored otherwise (run them with
//! `--include-ignored`; without a GPU they then fail, never pass)

mod common;

use common::gpu::{Element, addr, as_op, last_report, operation, same_as_rust, scalar_pointers, stored, stream, values};
use common::{C, DEVICE, F64, HOST, LOWER, N, T, UPPER, last_error, on_gpu};
use cudarc::driver::DevicePtrMut;
use emugemm::{Backend, DeviceView, DeviceViewMut, Emulator};
use emugemm_c::*;
use faer::linalg::matmul::triangular::BlockStructure;
use num_complex::Complex;

/// the C ABI's product of `T` against `gemm_on_stream` on the same memory: every op pair, host
/// and device scalars in turn, `beta` 0 (over NaN) and not, the target precision and an explicit
/// scheme in turn; the report is the Rust one's
fn abi_equals_rust<T: Element>() {
	let stream = stream();
	let emu = Emulator::with_backend(Backend::Gpu).expect("a GPU context");
	let (m, n, k) = (130, 70, 110);
	let (lda, ldb, ldc) = (m.max(k) + 5, n.max(k) + 2, m + 3);
	let reals = |v: Vec<f64>| v.into_iter().map(T::real).collect::<Vec<_>>();
	let a = stream.clone_htod(&reals(values(lda * m.max(k) * T::PARTS, 1))).unwrap();
	let b = stream.clone_htod(&reals(values(ldb * n.max(k) * T::PARTS, 2))).unwrap();
	let start = reals(values(ldc * n * T::PARTS, 3));
	let pairs = [N, T, C].into_iter().flat_map(|x| [N, T, C].map(move |y| (x, y)));
	for (case, (transa, transb)) in pairs.enumerate() {
		for beta_zero in [true, false] {
			let mode = [HOST, DEVICE][case % 2];
			let precision = if (case + usize::from(beta_zero)) % 2 == 0 {
				T::TARGET
			} else {
				T::EXPLICIT
			};
			let (opa, opb) = (operation(transa), operation(transb));
			let what = format!("{opa:?} {opb:?} beta = 0: {beta_zero} mode {mode} {precision}");
			let (alpha, beta) = ([1.25, -0.5], if beta_zero { [0.0, 0.0] } else { [-0.5, 0.25] });
			let (alpha_t, beta_t) = (T::of(alpha[0], alpha[1]), T::of(beta[0], beta[1]));
			let c_start = if beta_zero {
				vec![T::real(f64::NAN); start.len()]
			} else {
				start.clone()
			};
			let mut c = stream.clone_htod(&c_start).unwrap();
			let scalars = stream.clone_htod(&reals([&alpha[..T::PARTS], &beta[..T::PARTS]].concat())).unwrap();
			let (pa, pb) = scalar_pointers::<T, T::C, _>(mode, (&alpha_t, &beta_t), &scalars, &stream);
			let lda_used = stored(transa, (m, k)).0 + 5;
			let ldb_used = stored(transb, (k, n)).0 + 2;
			// SAFETY: every matrix lies within its buffer (the buffers hold the largest extent of
			// every op), the scalars where the mode says
			let status = unsafe {
				T::GEMM(
					transa,
					transb,
					m as i64,
					n as i64,
					k as i64,
					pa,
					addr(&a, &stream) as *const T::C,
					lda_used as i64,
					addr(&b, &stream) as *const T::C,
					ldb_used as i64,
					pb,
					c.device_ptr_mut(&stream).0 as *mut T::C,
					ldc as i64,
					mode,
					stream.cu_stream().cast(),
					precision.into(),
				)
			};
			assert_eq!(status, EmugemmStatus::Success, "{what}: {}", last_error());
			let report = last_report();
			assert_eq!((report.m, report.n, report.k), (m as i64, n as i64, k as i64));
			let got = stream.clone_dtoh(&c).unwrap();
			// the Rust API on the same memory
			let mut expected = stream.clone_htod(&c_start).unwrap();
			// SAFETY: the views lie within the buffers above, which outlive the product
			unsafe {
				let av = DeviceView::<T>::from_raw(addr(&a, &stream), stored(transa, (m, k)), lda_used).unwrap();
				let bv = DeviceView::<T>::from_raw(addr(&b, &stream), stored(transb, (k, n)), ldb_used).unwrap();
				let cv = DeviceViewMut::<T>::from_raw(expected.device_ptr_mut(&stream).0, (m, n), ldc).unwrap();
				emu.gemm_on_stream(
					cv,
					alpha_t,
					(as_op(av, transa), as_op(bv, transb)),
					beta_t,
					(precision, (&stream).into()),
				)
				.unwrap();
			}
			let expected = stream.clone_dtoh(&expected).unwrap();
			same_as_rust::<T>(&what, (&got, report), &expected, (&emu, precision));
		}
	}
}

/// the C ABI's rank-k update of `T` (SYRK or HERK) against `rank_k_on_stream` on the same
/// memory: both triangles, `A` as stored and (conjugate-)transposed, host and device scalars in
/// turn, `beta` 0 (over NaN) and not, the target precision and an explicit scheme in turn; the
/// triangle left and the padding rows are the start's in both, and the report is the Rust one's
fn rank_k_equals_rust<T: Element>() {
	let stream = stream();
	let emu = Emulator::with_backend(Backend::Gpu).expect("a GPU context");
	let (n, k) = (130, 110);
	let ldc = n + 3;
	let reals = |v: Vec<f64>| v.into_iter().map(T::real).collect::<Vec<_>>();
	let a = stream.clone_htod(&reals(values((n.max(k) + 5) * n.max(k) * T::PARTS, 4))).unwrap();
	let start = reals(values(ldc * n * T::PARTS, 5));
	// SYRK reads A transposed, HERK conjugate-transposed
	let adjoint = if T::PARTS == 2 { C } else { T };
	let triangles = [(LOWER, BlockStructure::TriangularLower), (UPPER, BlockStructure::TriangularUpper)];
	let cases = triangles.iter().flat_map(|&t| [N, adjoint].map(move |op| (t, op)));
	for (case, ((uplo, structure), trans)) in cases.enumerate() {
		for beta_zero in [true, false] {
			let mode = [HOST, DEVICE][case % 2];
			let precision = if (case + usize::from(beta_zero)) % 2 == 0 {
				T::TARGET
			} else {
				T::EXPLICIT
			};
			let what = format!("{structure:?} {:?} beta = 0: {beta_zero} mode {mode} {precision}", operation(trans));
			let (alpha, beta) = (1.25, if beta_zero { 0.0 } else { -0.5 });
			let (alpha_p, beta_p) = (T::real(alpha), T::real(beta));
			let c_start = if beta_zero {
				vec![T::real(f64::NAN); start.len()]
			} else {
				start.clone()
			};
			let mut c = stream.clone_htod(&c_start).unwrap();
			let scalars = stream.clone_htod(&[alpha_p, beta_p]).unwrap();
			let (pa, pb) = scalar_pointers::<T::R, T::R, _>(mode, (&alpha_p, &beta_p), &scalars, &stream);
			let stored = stored(trans, (n, k));
			let lda = stored.0 + 5;
			// SAFETY: A lies within its buffer (it holds the largest extent of every op), C in its
			// own, the scalars where the mode says
			let status = unsafe {
				T::RANK_K(
					uplo,
					trans,
					n as i64,
					k as i64,
					pa,
					addr(&a, &stream) as *const T::C,
					lda as i64,
					pb,
					c.device_ptr_mut(&stream).0 as *mut T::C,
					ldc as i64,
					mode,
					stream.cu_stream().cast(),
					precision.into(),
				)
			};
			assert_eq!(status, EmugemmStatus::Success, "{what}: {}", last_error());
			let report = last_report();
			assert_eq!((report.m, report.n, report.k), (n as i64, n as i64, k as i64));
			let got = stream.clone_dtoh(&c).unwrap();
			// the Rust API on the same memory
			let mut expected = stream.clone_htod(&c_start).unwrap();
			let real = |x: f64| <T::RealPart as emugemm::Scalar>::from_parts(x, 0.0);
			// SAFETY: the views lie within the buffers above, which outlive the update
			unsafe {
				let av = DeviceView::<T>::from_raw(addr(&a, &stream), stored, lda).unwrap();
				let cv = DeviceViewMut::<T>::from_raw(expected.device_ptr_mut(&stream).0, (n, n), ldc).unwrap();
				let on = (precision, (&stream).into());
				emu.rank_k_on_stream((cv, structure), real(alpha), as_op(av, trans), real(beta), on)
					.unwrap();
			}
			let expected = stream.clone_dtoh(&expected).unwrap();
			same_as_rust::<T>(&what, (&got, report), &expected, (&emu, precision));
		}
	}
}

on_gpu! {
	dgemm_equals_the_rust_api: abi_equals_rust::<f64>;
	sgemm_equals_the_rust_api: abi_equals_rust::<f32>;
	zgemm_equals_the_rust_api: abi_equals_rust::<Complex<f64>>;
	cgemm_equals_the_rust_api: abi_equals_rust::<Complex<f32>>;
	dsyrk_equals_the_rust_api: rank_k_equals_rust::<f64>;
	ssyrk_equals_the_rust_api: rank_k_equals_rust::<f32>;
	zherk_equals_the_rust_api: rank_k_equals_rust::<Complex<f64>>;
	cherk_equals_the_rust_api: rank_k_equals_rust::<Complex<f32>>;
}

/// `alpha = 0` reads neither `A` nor `B` (null here): `C = beta C`; bad arguments are statuses
/// with a message
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn quick_returns_and_bad_arguments() {
	let stream = stream();
	let mut c = stream.clone_htod(&[2.0f64; 12]).unwrap();
	let pc = c.device_ptr_mut(&stream).0 as *mut f64;
	let call = |m: i64, ld: i64, alpha: f64, beta: f64| {
		// SAFETY: A and B are never read (alpha = 0 or an argument error); C holds 12 elements
		unsafe {
			emugemm_dgemm(
				N,
				N,
				m,
				3,
				5,
				&alpha,
				std::ptr::null(),
				ld,
				std::ptr::null(),
				5,
				&beta,
				pc,
				ld,
				HOST,
				stream.cu_stream().cast(),
				F64,
			)
		}
	};
	assert_eq!(call(4, 4, 0.0, 3.0), EmugemmStatus::Success, "{}", last_error());
	assert!(stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 6.0));
	assert_eq!(call(-1, 4, 1.0, 0.0), EmugemmStatus::InvalidValue);
	assert!(last_error().contains("m = -1 is negative"), "{}", last_error());
	assert_eq!(call(4, 3, 1.0, 0.0), EmugemmStatus::InvalidValue);
	assert!(
		last_error().contains("lda = 3: the leading dimension is below max(1, 4)"),
		"{}",
		last_error()
	);
	assert!(
		stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 6.0),
		"a refused call writes nothing"
	);
}
