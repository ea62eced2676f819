//! the C ABI on a GPU: `emugemm_dgemm` and `emugemm_zgemm` equal the Rust API's product on the
//! same device memory bit for bit, with every op, `alpha` and `beta` behind host and device
//! pointers; `beta = 0` does not read `C`, `alpha = 0` reads neither `A` nor `B`; bad arguments
//! are statuses with a message, and the report says what ran
//!
//! these tests need an NVIDIA GPU: they are ignored otherwise (run them with
//! `--include-ignored`; without a GPU they then fail, never pass)

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use emugemm::{Backend, DeviceView, DeviceViewMut, Emulator, Precision, Scheme};
use emugemm_c::*;
use num_complex::Complex;
use std::ffi::CStr;
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

/// `emugemm_dgemm` against `gemm_on_stream` on the same memory, every op pair, host and device
/// scalars, `beta` 0 (over NaN), 1 and other
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn dgemm_equals_the_rust_api() {
	let stream = stream();
	let emu = Emulator::with_backend(Backend::Gpu).expect("a GPU context");
	let (m, n, k) = (130, 70, 110);
	let (lda, ldb, ldc) = (k + 5, n + 2, m + 3);
	let a = stream.clone_htod(&values(lda * k.max(m), 1)).unwrap();
	let b = stream.clone_htod(&values(ldb * n.max(k), 2)).unwrap();
	let start = values(ldc * n, 3);
	let ops = [EmugemmOperation::N, EmugemmOperation::T, EmugemmOperation::C];
	for (transa, transb) in ops.iter().flat_map(|&x| ops.iter().map(move |&y| (x, y))) {
		for beta in [0.0, 1.0, -0.5] {
			for mode in [EmugemmPointerMode::Host, EmugemmPointerMode::Device] {
				let alpha = 1.25;
				let c_start: Vec<f64> = if beta == 0.0 { vec![f64::NAN; start.len()] } else { start.clone() };
				let mut c = stream.clone_htod(&c_start).unwrap();
				let scalars = stream.clone_htod(&[alpha, beta]).unwrap();
				let (sa, sb) = (addr(&scalars, &stream), addr(&scalars, &stream) + 8);
				let (pa, pb) = match mode {
					EmugemmPointerMode::Host => (&alpha as *const f64, &beta as *const f64),
					EmugemmPointerMode::Device => (sa as *const f64, sb as *const f64),
				};
				let lda_used = if transa == EmugemmOperation::N { m + 5 } else { lda };
				let ldb_used = if transb == EmugemmOperation::N { k + 3 } else { ldb };
				let pc = c.device_ptr_mut(&stream).0 as *mut f64;
				// SAFETY: every matrix lies within its buffer (the buffers hold the largest
				// extent of every op), the scalars where the mode says
				let status = unsafe {
					emugemm_dgemm(
						transa,
						transb,
						m as i64,
						n as i64,
						k as i64,
						pa,
						addr(&a, &stream) as *const f64,
						lda_used as i64,
						addr(&b, &stream) as *const f64,
						ldb_used as i64,
						pb,
						pc,
						ldc as i64,
						mode,
						stream.cu_stream().cast(),
						F64,
					)
				};
				assert_eq!(status, EmugemmStatus::Success, "{transa:?} {transb:?} {mode:?}: {}", last_error());
				let report = last_report();
				assert_eq!((report.m, report.n, report.k), (m as i64, n as i64, k as i64));
				let got = stream.clone_dtoh(&c).unwrap();
				// the Rust API on the same memory
				let mut expected = stream.clone_htod(&c_start).unwrap();
				{
					let stored = |op, (r, c)| if op == EmugemmOperation::N { (r, c) } else { (c, r) };
					let av = as_op(DeviceView::new(&a, stored(transa, (m, k)), lda_used).unwrap(), transa);
					let bv = as_op(DeviceView::new(&b, stored(transb, (k, n)), ldb_used).unwrap(), transb);
					let cv = DeviceViewMut::new(&mut expected, (m, n), ldc).unwrap();
					emu.gemm_on_stream(cv, alpha, (av, bv), beta, (Precision::F64, (&stream).into()))
						.unwrap();
				}
				let rust = emu.last_report().unwrap();
				assert_eq!(
					report.certified_bits.to_bits(),
					rust.plan.predicted_bits.to_bits(),
					"the C report is the Rust one's"
				);
				assert_ne!(rust.plan.scheme, Scheme::Native, "the emulation ran");
				let expected = stream.clone_dtoh(&expected).unwrap();
				assert!(
					got.iter().zip(&expected).all(|(x, y)| x.to_bits() == y.to_bits()),
					"{transa:?} {transb:?} beta {beta} {mode:?}: C ABI against the Rust API"
				);
			}
		}
	}
}

/// `emugemm_zgemm` with conjugate-transposed operands and a complex alpha, against the Rust API
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn zgemm_equals_the_rust_api() {
	let stream = stream();
	let emu = Emulator::with_backend(Backend::Gpu).expect("a GPU context");
	let (m, n, k) = (90, 60, 75);
	let complex = |seed| {
		let v = values(2 * m * k.max(n), seed);
		v.chunks(2).map(|p| Complex::new(p[0], p[1])).collect::<Vec<_>>()
	};
	let a = stream.clone_htod(bytemuck_free(&complex(4))).unwrap();
	let b = stream.clone_htod(bytemuck_free(&complex(5))).unwrap();
	let (alpha, beta) = (EmugemmComplex64 { re: 0.5, im: -1.0 }, EmugemmComplex64 { re: 0.0, im: 0.0 });
	let mut c = stream.alloc_zeros::<f64>(2 * m * n).unwrap();
	let precision = EmugemmPrecision {
		kind: EmugemmPrecisionKind::SchemeII,
		parameter: 14,
	};
	let pc = c.device_ptr_mut(&stream).0 as *mut EmugemmComplex64;
	// SAFETY: A is k x m (read as its adjoint), B is n x k (read as its adjoint), C m x n
	let status = unsafe {
		emugemm_zgemm(
			EmugemmOperation::C,
			EmugemmOperation::C,
			m as i64,
			n as i64,
			k as i64,
			&alpha,
			addr(&a, &stream) as *const EmugemmComplex64,
			k as i64,
			addr(&b, &stream) as *const EmugemmComplex64,
			n as i64,
			&beta,
			pc,
			m as i64,
			EmugemmPointerMode::Host,
			stream.cu_stream().cast(),
			precision,
		)
	};
	assert_eq!(status, EmugemmStatus::Success, "{}", last_error());
	assert_eq!((last_report().scheme, last_report().parameter), (EmugemmScheme::SchemeII, 14));
	let got = stream.clone_dtoh(&c).unwrap();
	let mut expected = stream.alloc_zeros::<f64>(2 * m * n).unwrap();
	{
		// SAFETY: the same bytes, as complex elements
		let (ta, tb) = unsafe {
			(
				a.transmute::<Complex<f64>>(m * k).unwrap(),
				b.transmute::<Complex<f64>>(k * n).unwrap(),
			)
		};
		// SAFETY: as above
		let mut tc = unsafe { expected.transmute_mut::<Complex<f64>>(m * n).unwrap() };
		let av = DeviceView::new(&ta, (k, m), k).unwrap().adjoint();
		let bv = DeviceView::new(&tb, (n, k), n).unwrap().adjoint();
		let cv = DeviceViewMut::new(&mut tc, (m, n), m).unwrap();
		let zero = Complex::new(0.0, 0.0);
		emu.gemm_on_stream(
			cv,
			Complex::new(0.5, -1.0),
			(av, bv),
			zero,
			(Precision::SchemeII { moduli: 14 }, (&stream).into()),
		)
		.unwrap();
	}
	let expected = stream.clone_dtoh(&expected).unwrap();
	assert!(
		got.iter().zip(&expected).all(|(x, y)| x.to_bits() == y.to_bits()),
		"zgemm against the Rust API"
	);
}

/// `v` read as the real `op` reads it
fn as_op(v: DeviceView<'_, f64>, op: EmugemmOperation) -> DeviceView<'_, f64> {
	if op == EmugemmOperation::N { v } else { v.transpose() }
}

/// the complex values as interleaved `f64`s, for an upload without a complex device type
fn bytemuck_free(v: &[Complex<f64>]) -> &[f64] {
	// SAFETY: `Complex<f64>` is `repr(C)`: two `f64`s
	unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<f64>(), v.len() * 2) }
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
