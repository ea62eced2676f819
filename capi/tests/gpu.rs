//! the C ABI on a GPU: `emugemm_{s,d,c,z}gemm` equal the Rust API's product on the same device
//! memory bit for bit, with every op pair, `alpha` and `beta` behind host and device pointers; `beta = 0` does not read `C`, `alpha = 0` reads neither `A` nor `B`; bad arguments
//! are statuses with a message, and the report says what ran. `emugemm_{s,d}syrk` and
//! `emugemm_{c,z}herk` equal the Rust API's rank-k update likewise, with both triangles and `A`
//! as stored and (conjugate-)transposed. The pointer-array and strided batches
//! `emugemm_{s,d,c,z}gemm_batched` and `emugemm_{s,d,c,z}gemm_strided_batched` equal the Rust
//! API's batch bit for bit, and single `emugemm_?gemm` calls on the same matrices where they are
//! emulated, with the last one's report
//!
//! these tests need an NVIDIA GPU: they are ignored otherwise (run them with
//! `--include-ignored`; without a GPU they then fail, never pass)

mod common;

use common::{RankK, last_error};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use emugemm::{Backend, DeviceView, DeviceViewMut, Emulator, Precision, Scheme};
use emugemm_c::*;
use faer::linalg::matmul::triangular::BlockStructure;
use num_complex::Complex;
use std::ffi::c_void;
use std::sync::Arc;

fn stream() -> Arc<CudaStream> {
	CudaContext::new(0)
		.unwrap_or_else(|e| panic!("these tests need a GPU: {e}"))
		.new_stream()
		.expect("a stream")
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

/// a C ABI pointer-array batch: cuBLAS's arguments with `C` elements, a stream and a precision
type Batched<C> = unsafe extern "C" fn(
	EmugemmOperation,
	EmugemmOperation,
	i64,
	i64,
	i64,
	*const C,
	*const *const C,
	i64,
	*const *const C,
	i64,
	*const C,
	*const *mut C,
	i64,
	i64,
	EmugemmPointerMode,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// a C ABI strided batch: cuBLAS's arguments with `C` elements, a stream and a precision
type Strided<C> = unsafe extern "C" fn(
	EmugemmOperation,
	EmugemmOperation,
	i64,
	i64,
	i64,
	*const C,
	*const C,
	i64,
	i64,
	*const C,
	i64,
	i64,
	*const C,
	*mut C,
	i64,
	i64,
	i64,
	EmugemmPointerMode,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// an element type of the C ABI: the Rust scalar, its real part as the buffers hold it, the C
/// element and functions (the GEMM, the rank-k update: SYRK or HERK, the pointer-array and the
/// strided batch), and the precisions it is tested at (a target, and an explicit scheme)
trait Element: emugemm::Scalar {
	type Part: DeviceRepr + ValidAsZeroBits + Copy + Unpin + 'static;
	type C;
	const PARTS: usize;
	const GEMM: Gemm<Self::C>;
	const RANK_K: RankK<Self::C, Self::Part>;
	const BATCHED: Batched<Self::C>;
	const STRIDED: Strided<Self::C>;
	const TARGET: Precision;
	const EXPLICIT: Precision;
	fn real(x: f64) -> Self::Part;
	fn bits(x: Self::Part) -> u64;
	fn of(re: f64, im: f64) -> Self;
}

/// implements [`Element`]: `$t` of `$real` scalars in `$parts` parts, through `$f`, `$rank_k`,
/// `$batched` and `$strided`
macro_rules! element {
	($t:ty, $real:ty, $c:ty, $parts:expr, ($f:ident, $rank_k:ident, $batched:ident, $strided:ident), $target:expr, $explicit:expr, |$re:ident, $im:ident| $of:expr) => {
		impl Element for $t {
			type Part = $real;
			type C = $c;
			const PARTS: usize = $parts;
			const GEMM: Gemm<$c> = $f;
			const RANK_K: RankK<$c, $real> = $rank_k;
			const BATCHED: Batched<$c> = $batched;
			const STRIDED: Strided<$c> = $strided;
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
	(emugemm_dgemm, emugemm_dsyrk, emugemm_dgemm_batched, emugemm_dgemm_strided_batched),
	Precision::F64,
	Precision::SchemeII { moduli: 14 },
	|re, _im| re
);
element!(
	f32,
	f32,
	f32,
	1,
	(emugemm_sgemm, emugemm_ssyrk, emugemm_sgemm_batched, emugemm_sgemm_strided_batched),
	Precision::F32,
	Precision::SchemeII { moduli: 8 },
	|re, _im| re as f32
);
element!(
	Complex<f64>,
	f64,
	EmugemmComplex64,
	2,
	(emugemm_zgemm, emugemm_zherk, emugemm_zgemm_batched, emugemm_zgemm_strided_batched),
	Precision::F64,
	Precision::SchemeII { moduli: 14 },
	|re, im| Complex::new(re, im)
);
element!(
	Complex<f32>,
	f32,
	EmugemmComplex32,
	2,
	(emugemm_cgemm, emugemm_cherk, emugemm_cgemm_batched, emugemm_cgemm_strided_batched),
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

/// the C ABI's pointer-array and strided batches of `T` against single `emugemm_?gemm` calls on
/// the same matrices: three products a stride apart (above each matrix's extent), op pairs N/N,
/// T/C and C/T, leading dimensions above the rows, host and device scalars in turn, `beta` 0
/// (over NaN) and not, the target precision and an explicit scheme in turn; every product's bits
/// and the padding between them are the single calls', and the last report is the last one's
fn batches_equal_single_calls<T: Element>() {
	use EmugemmOperation::{C, N, T as Tr};
	let stream = stream();
	let emu = Emulator::with_backend(Backend::Gpu).expect("a GPU context");
	let (m, n, k, count) = (130, 70, 110, 3);
	let (lda, ldb, ldc) = (m.max(k) + 5, n.max(k) + 2, m + 3);
	// the strides, in elements: each product's matrices start past the previous one's
	let (sa, sb, sc) = (lda * m.max(k) + 11, ldb * n.max(k) + 3, ldc * n + 1);
	let reals = |v: Vec<f64>| v.into_iter().map(T::real).collect::<Vec<_>>();
	let a = stream.clone_htod(&reals(values(sa * count * T::PARTS, 6))).unwrap();
	let b = stream.clone_htod(&reals(values(sb * count * T::PARTS, 7))).unwrap();
	let start = reals(values(sc * count * T::PARTS, 8));
	for (case, (transa, transb)) in [(N, N), (Tr, C), (C, Tr)].into_iter().enumerate() {
		for beta_zero in [true, false] {
			let mode = [EmugemmPointerMode::Host, EmugemmPointerMode::Device][(case + usize::from(beta_zero)) % 2];
			let precision = if case % 2 == 0 { T::TARGET } else { T::EXPLICIT };
			let what = format!("{transa:?} {transb:?} beta = 0: {beta_zero} {mode:?} {precision}");
			let (alpha, beta) = ([1.25, -0.5], if beta_zero { [0.0, 0.0] } else { [-0.5, 0.25] });
			let (alpha_t, beta_t) = (T::of(alpha[0], alpha[1]), T::of(beta[0], beta[1]));
			let c_start = if beta_zero {
				vec![T::real(f64::NAN); start.len()]
			} else {
				start.clone()
			};
			let scalars = stream.clone_htod(&reals([&alpha[..T::PARTS], &beta[..T::PARTS]].concat())).unwrap();
			let (pa, pb) = scalar_pointers::<T, T::C, _>(mode, (&alpha_t, &beta_t), &scalars, &stream);
			let stored = |op, (r, c)| if op == N { (r, c) } else { (c, r) };
			let (lda, ldb) = (stored(transa, (m, k)).0 + 5, stored(transb, (k, n)).0 + 2);
			let (base_a, base_b) = (addr(&a, &stream), addr(&b, &stream));
			// product i's matrix of the buffer at `base`, `stride` elements apart
			let at = |base: u64, stride: usize, i: usize| base + (i * stride * T::PARTS * size_of::<T::Part>()) as u64;
			let (shape, on) = (
				(m as i64, n as i64, k as i64),
				(mode, stream.cu_stream().cast::<c_void>(), precision.into()),
			);
			// the single calls
			let mut expected = stream.clone_htod(&c_start).unwrap();
			let base_c = expected.device_ptr_mut(&stream).0;
			for i in 0..count {
				// SAFETY: every matrix lies within its buffer, the scalars where the mode says
				let status = unsafe {
					T::GEMM(
						transa,
						transb,
						shape.0,
						shape.1,
						shape.2,
						pa,
						at(base_a, sa, i) as *const T::C,
						lda as i64,
						at(base_b, sb, i) as *const T::C,
						ldb as i64,
						pb,
						at(base_c, sc, i) as *mut T::C,
						ldc as i64,
						on.0,
						on.1,
						on.2,
					)
				};
				assert_eq!(status, EmugemmStatus::Success, "{what}: single {i}: {}", last_error());
			}
			let single = last_report();
			let expected = stream.clone_dtoh(&expected).unwrap();
			// the Rust API's batch of the same products
			let mut rust = stream.clone_htod(&c_start).unwrap();
			let base_r = rust.device_ptr_mut(&stream).0;
			// SAFETY: every product's matrices lie within their buffers, which outlive the batch
			unsafe {
				let view = |base, stride, i, op, shape, ld| {
					as_op(DeviceView::<T>::from_raw(at(base, stride, i), stored(op, shape), ld).unwrap(), op)
				};
				let lhs: Vec<_> = (0..count).map(|i| view(base_a, sa, i, transa, (m, k), lda)).collect();
				let rhs: Vec<_> = (0..count).map(|i| view(base_b, sb, i, transb, (k, n), ldb)).collect();
				let mut dst: Vec<_> = (0..count)
					.map(|i| DeviceViewMut::<T>::from_raw(at(base_r, sc, i), (m, n), ldc).unwrap())
					.collect();
				emu.gemm_batch_on_stream(&mut dst, alpha_t, (&lhs, &rhs), beta_t, (precision, (&stream).into()))
					.unwrap();
			}
			let rust = stream.clone_dtoh(&rust).unwrap();
			let expected = (&expected[..], single, &rust[..]);
			// the same products as a strided batch
			let mut c = stream.clone_htod(&c_start).unwrap();
			let base_c = c.device_ptr_mut(&stream).0;
			// SAFETY: every product's matrices lie within their buffers, the scalars where the mode
			// says
			let status = unsafe {
				T::STRIDED(
					transa,
					transb,
					shape.0,
					shape.1,
					shape.2,
					pa,
					base_a as *const T::C,
					lda as i64,
					sa as i64,
					base_b as *const T::C,
					ldb as i64,
					sb as i64,
					pb,
					base_c as *mut T::C,
					ldc as i64,
					sc as i64,
					count as i64,
					on.0,
					on.1,
					on.2,
				)
			};
			assert_eq!(status, EmugemmStatus::Success, "{what}: strided: {}", last_error());
			let got = stream.clone_dtoh(&c).unwrap();
			same_as_single::<T>(&format!("{what}: strided"), (&got, last_report()), expected);
			// and as a pointer-array batch, the arrays in device memory
			let mut c = stream.clone_htod(&c_start).unwrap();
			let base_c = c.device_ptr_mut(&stream).0;
			let arrays = [
				(0..count).map(|i| at(base_a, sa, i)).collect::<Vec<_>>(),
				(0..count).map(|i| at(base_b, sb, i)).collect(),
				(0..count).map(|i| at(base_c, sc, i)).collect(),
			]
			.map(|pointers| stream.clone_htod(&pointers).unwrap());
			let [pa_array, pb_array, pc_array] = arrays.each_ref().map(|array| addr(array, &stream));
			// SAFETY: the arrays hold `count` pointers to matrices within their buffers, the scalars
			// where the mode says
			let status = unsafe {
				T::BATCHED(
					transa,
					transb,
					shape.0,
					shape.1,
					shape.2,
					pa,
					pa_array as *const *const T::C,
					lda as i64,
					pb_array as *const *const T::C,
					ldb as i64,
					pb,
					pc_array as *const *mut T::C,
					ldc as i64,
					count as i64,
					on.0,
					on.1,
					on.2,
				)
			};
			assert_eq!(status, EmugemmStatus::Success, "{what}: pointer arrays: {}", last_error());
			let got = stream.clone_dtoh(&c).unwrap();
			same_as_single::<T>(&format!("{what}: pointer arrays"), (&got, last_report()), expected);
		}
	}
}

/// a batch's result `got` and last report against the single calls' result and last report and
/// the Rust API's batch: the Rust API's bits everywhere (the padding between the products
/// included); the single calls' bits where the products are emulated (natively computed ones are
/// cuBLAS's batched GEMM's, which cuBLAS does not promise equal to its single GEMM's); the same
/// plan
fn same_as_single<T: Element>(
	what: &str,
	(got, report): (&[T::Part], EmugemmReport),
	(single, last, rust): (&[T::Part], EmugemmReport, &[T::Part]),
) {
	let same = |x: &[T::Part], y: &[T::Part]| x.len() == y.len() && x.iter().zip(y).all(|(&p, &q)| T::bits(p) == T::bits(q));
	assert!(same(got, rust), "{what}: the batch against the Rust API's");
	if report.scheme != EmugemmScheme::Native {
		assert!(same(got, single), "{what}: an emulated batch against single calls");
	}
	assert_eq!((report.m, report.n, report.k), (last.m, last.n, last.k), "{what}");
	assert_eq!(
		(report.scheme, report.parameter),
		(last.scheme, last.parameter),
		"{what}: the last product's plan"
	);
	assert_eq!(
		report.certified_bits.to_bits(),
		last.certified_bits.to_bits(),
		"{what}: the last product's certified bits"
	);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn dgemm_batches_equal_single_calls() {
	batches_equal_single_calls::<f64>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn sgemm_batches_equal_single_calls() {
	batches_equal_single_calls::<f32>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn zgemm_batches_equal_single_calls() {
	batches_equal_single_calls::<Complex<f64>>();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cgemm_batches_equal_single_calls() {
	batches_equal_single_calls::<Complex<f32>>();
}

/// `alpha = 0` reads neither `A` nor `B` nor their pointer arrays (null here), `k = 0` reads
/// neither matrix: `C[i] = beta C[i]`
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn batched_quick_returns() {
	let stream = stream();
	let mut c = stream.clone_htod(&[2.0f64; 24]).unwrap();
	let base = c.device_ptr_mut(&stream).0;
	let pointers = stream.clone_htod(&[base, base + 12 * 8]).unwrap();
	let (zero, one, three) = (0.0f64, 1.0f64, 3.0f64);
	let on = (EmugemmPointerMode::Host, stream.cu_stream().cast::<c_void>(), F64);
	let n = EmugemmOperation::N;
	let null = std::ptr::null();
	// SAFETY: A and B are never read (alpha = 0); C's array holds two pointers to 4 x 3 matrices
	let status = unsafe {
		emugemm_dgemm_batched(
			n,
			n,
			4,
			3,
			5,
			&zero,
			null,
			4,
			null,
			5,
			&three,
			addr(&pointers, &stream) as *const *mut f64,
			4,
			2,
			on.0,
			on.1,
			on.2,
		)
	};
	assert_eq!(status, EmugemmStatus::Success, "{}", last_error());
	assert!(stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 6.0));
	// SAFETY: A and B are never read (k = 0); C holds two 4 x 3 matrices 12 elements apart
	let status = unsafe {
		emugemm_dgemm_strided_batched(
			n,
			n,
			4,
			3,
			0,
			&one,
			std::ptr::null(),
			4,
			0,
			std::ptr::null(),
			1,
			0,
			&three,
			base as *mut f64,
			4,
			12,
			2,
			on.0,
			on.1,
			on.2,
		)
	};
	assert_eq!(status, EmugemmStatus::Success, "{}", last_error());
	assert!(stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 18.0));
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
