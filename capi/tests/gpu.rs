//! the C ABI on a GPU: `emugemm_{s,d,c,z}gemm` equal the Rust API's product on the same device
//! memory bit for bit, with every op pair, `alpha` and `beta` behind host and device pointers; `beta = 0` does not read `C`, `alpha = 0` reads neither `A` nor `B`; bad arguments
//! are statuses with a message, and the report says what ran. `emugemm_{s,d}syrk` and
//! `emugemm_{c,z}herk` equal the Rust API's rank-k update likewise, with both triangles and `A`
//! as stored and (conjugate-)transposed
//!
//! these tests need an NVIDIA GPU: they are ignored otherwise (run them with
//! `--include-ignored`; without a GPU they then fail, never pass)

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use emugemm::{Backend, DeviceView, DeviceViewMut, Emulator, Precision, Scheme};
use emugemm_c::*;
use faer::linalg::matmul::triangular::BlockStructure;
use num_complex::Complex;
use std::ffi::{CStr, c_void};
use std::sync::Arc;

fn stream() -> Arc<CudaStream> {
	CudaContext::new(0)
		.unwrap_or_else(|e| panic!("these tests need a GPU: {e}"))
		.new_stream()
		.expect("a stream")
}

fn last_error() -> String {
	// SAFETY: the library's own NUL-terminated string
	unsafe { CStr::from_ptr(emugemm_last_error()) }.to_string_lossy().into_owned()
}

fn last_report() -> EmugemmReport {
	let mut report = EmugemmReport::default();
	// SAFETY: a writable report
	assert_eq!(unsafe { emugemm_last_report(&mut report) }, EmugemmStatus::Success);
	report
}

/// a deterministic fill, wide enough in range that the plan is not trivial
fn values(len: usize, seed: u64) -> Vec<f64> {
	let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
	(0..len)
		.map(|_| {
			x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
			((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * f64::powi(2.0, ((x >> 3) % 9) as i32 - 4)
		})
		.collect()
}

fn addr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
	s.device_ptr(stream).0
}

const F64: EmugemmPrecision = EmugemmPrecision {
	kind: EmugemmPrecisionKind::F64,
	parameter: 0,
};

/// a C ABI product: cuBLAS's arguments with `C` elements, a stream and a precision
type Gemm<C> = unsafe extern "C" fn(
	EmugemmOperation,
	EmugemmOperation,
	i64,
	i64,
	i64,
	*const C,
	*const C,
	i64,
	*const C,
	i64,
	*const C,
	*mut C,
	i64,
	EmugemmPointerMode,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// a C ABI rank-k update: cuBLAS's arguments with `C` elements and real `R` scalars, a stream and
/// a precision
type RankK<C, R> = unsafe extern "C" fn(
	EmugemmFillMode,
	EmugemmOperation,
	i64,
	i64,
	*const R,
	*const C,
	i64,
	*const R,
	*mut C,
	i64,
	EmugemmPointerMode,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// an element type of the C ABI: the Rust scalar, its real part as the buffers hold it, the C
/// element and functions (the GEMM, and the rank-k update: SYRK or HERK), and the precisions it
/// is tested at (a target, and an explicit scheme)
trait Element: emugemm::Scalar {
	type Part: DeviceRepr + ValidAsZeroBits + Copy + Unpin + 'static;
	type C;
	const PARTS: usize;
	const GEMM: Gemm<Self::C>;
	const RANK_K: RankK<Self::C, Self::Part>;
	const TARGET: Precision;
	const EXPLICIT: Precision;
	fn real(x: f64) -> Self::Part;
	fn bits(x: Self::Part) -> u64;
	fn of(re: f64, im: f64) -> Self;
}

/// implements [`Element`]: `$t` of `$real` scalars in `$parts` parts, through `$f` and `$rank_k`
macro_rules! element {
	($t:ty, $real:ty, $c:ty, $parts:expr, ($f:ident, $rank_k:ident), $target:expr, $explicit:expr, |$re:ident, $im:ident| $of:expr) => {
		impl Element for $t {
			type Part = $real;
			type C = $c;
			const PARTS: usize = $parts;
			const GEMM: Gemm<$c> = $f;
			const RANK_K: RankK<$c, $real> = $rank_k;
			const TARGET: Precision = $target;
			const EXPLICIT: Precision = $explicit;
			fn real(x: f64) -> $real {
				x as $real
			}
			fn bits(x: $real) -> u64 {
				x.to_bits().into()
			}
			fn of($re: f64, $im: f64) -> Self {
				$of
			}
		}
	};
}

element!(
	f64,
	f64,
	f64,
	1,
	(emugemm_dgemm, emugemm_dsyrk),
	Precision::F64,
	Precision::SchemeII { moduli: 14 },
	|re, _im| re
);
element!(
	f32,
	f32,
	f32,
	1,
	(emugemm_sgemm, emugemm_ssyrk),
	Precision::F32,
	Precision::SchemeII { moduli: 8 },
	|re, _im| re as f32
);
element!(
	Complex<f64>,
	f64,
	EmugemmComplex64,
	2,
	(emugemm_zgemm, emugemm_zherk),
	Precision::F64,
	Precision::SchemeII { moduli: 14 },
	|re, im| Complex::new(re, im)
);
element!(
	Complex<f32>,
	f32,
	EmugemmComplex32,
	2,
	(emugemm_cgemm, emugemm_cherk),
	Precision::F32,
	Precision::SchemeI { slices: 4 },
	|re, im| Complex::new(re as f32, im as f32)
);

/// `v` read as `op` reads it
fn as_op<T: emugemm::Scalar>(v: DeviceView<'_, T>, op: EmugemmOperation) -> DeviceView<'_, T> {
	match op {
		EmugemmOperation::N => v,
		EmugemmOperation::T => v.transpose(),
		EmugemmOperation::C => v.adjoint(),
	}
}

/// `alpha` and `beta` where `mode` says: at `host`, or the two elements of `P` at the start of
/// `device`
fn scalar_pointers<P, C, D>(mode: EmugemmPointerMode, host: (&P, &P), device: &CudaSlice<D>, stream: &CudaStream) -> (*const C, *const C) {
	match mode {
		EmugemmPointerMode::Host => ((host.0 as *const P).cast(), (host.1 as *const P).cast()),
		EmugemmPointerMode::Device => {
			let at = addr(device, stream);
			(at as *const C, (at + size_of::<P>() as u64) as *const C)
		},
	}
}

/// the C ABI's result `got` and `report` against the Rust API's `expected` and `emu`'s last
/// report: the same bits, the same certified bits, and an emulation where `precision` is an
/// explicit scheme
fn same_as_rust<T: Element>(
	what: &str,
	(got, report): (&[T::Part], EmugemmReport),
	expected: &[T::Part],
	(emu, precision): (&Emulator, Precision),
) {
	let rust = emu.last_report().unwrap();
	assert_eq!(
		report.certified_bits.to_bits(),
		rust.plan.predicted_bits.to_bits(),
		"{what}: the C report is the Rust one's"
	);
	if precision == T::EXPLICIT {
		assert_ne!(rust.plan.scheme, Scheme::Native, "{what}: the emulation ran");
		assert_ne!(report.scheme, EmugemmScheme::Native, "{what}: the C report says so");
	}
	assert!(
		got.iter().zip(expected).all(|(&x, &y)| T::bits(x) == T::bits(y)),
		"{what}: C ABI against the Rust API"
	);
}

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
	let ops = [EmugemmOperation::N, EmugemmOperation::T, EmugemmOperation::C];
	let pairs = ops.iter().flat_map(|&x| ops.iter().map(move |&y| (x, y)));
	for (case, (transa, transb)) in pairs.enumerate() {
		for beta_zero in [true, false] {
			let mode = [EmugemmPointerMode::Host, EmugemmPointerMode::Device][case % 2];
			let precision = if (case + usize::from(beta_zero)) % 2 == 0 {
				T::TARGET
			} else {
				T::EXPLICIT
			};
			let what = format!("{transa:?} {transb:?} beta = 0: {beta_zero} {mode:?} {precision}");
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
			let stored = |op, (r, c)| if op == EmugemmOperation::N { (r, c) } else { (c, r) };
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
	let adjoint = if T::PARTS == 2 { EmugemmOperation::C } else { EmugemmOperation::T };
	let triangles = [
		(EmugemmFillMode::Lower, BlockStructure::TriangularLower),
		(EmugemmFillMode::Upper, BlockStructure::TriangularUpper),
	];
	let cases = triangles
		.iter()
		.flat_map(|&t| [EmugemmOperation::N, adjoint].map(move |op| (t, op)));
	for (case, ((uplo, structure), trans)) in cases.enumerate() {
		for beta_zero in [true, false] {
			let mode = [EmugemmPointerMode::Host, EmugemmPointerMode::Device][case % 2];
			let precision = if (case + usize::from(beta_zero)) % 2 == 0 {
				T::TARGET
			} else {
				T::EXPLICIT
			};
			let what = format!("{uplo:?} {trans:?} beta = 0: {beta_zero} {mode:?} {precision}");
			let (alpha, beta) = (1.25, if beta_zero { 0.0 } else { -0.5 });
			let (alpha_p, beta_p) = (T::real(alpha), T::real(beta));
			let c_start = if beta_zero {
				vec![T::real(f64::NAN); start.len()]
			} else {
				start.clone()
			};
			let mut c = stream.clone_htod(&c_start).unwrap();
			let scalars = stream.clone_htod(&[alpha_p, beta_p]).unwrap();
			let (pa, pb) = scalar_pointers::<T::Part, T::Part, _>(mode, (&alpha_p, &beta_p), &scalars, &stream);
			let stored = if trans == EmugemmOperation::N { (n, k) } else { (k, n) };
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

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn dgemm_equals_the_rust_api() {
	abi_equals_rust::<f64>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn sgemm_equals_the_rust_api() {
	abi_equals_rust::<f32>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn zgemm_equals_the_rust_api() {
	abi_equals_rust::<Complex<f64>>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cgemm_equals_the_rust_api() {
	abi_equals_rust::<Complex<f32>>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn dsyrk_equals_the_rust_api() {
	rank_k_equals_rust::<f64>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn ssyrk_equals_the_rust_api() {
	rank_k_equals_rust::<f32>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn zherk_equals_the_rust_api() {
	rank_k_equals_rust::<Complex<f64>>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cherk_equals_the_rust_api() {
	rank_k_equals_rust::<Complex<f32>>();
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
				EmugemmOperation::N,
				EmugemmOperation::N,
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
				EmugemmPointerMode::Host,
				stream.cu_stream().cast(),
				F64,
			)
		}
	};
	assert_eq!(call(4, 4, 0.0, 3.0), EmugemmStatus::Success, "{}", last_error());
	assert!(stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 6.0));
	assert_eq!(call(-1, 4, 1.0, 0.0), EmugemmStatus::InvalidValue);
	assert!(last_error().contains("negative"), "{}", last_error());
	assert_eq!(call(4, 3, 1.0, 0.0), EmugemmStatus::InvalidValue);
	assert!(last_error().contains("leading dimension"), "{}", last_error());
}
