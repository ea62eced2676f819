//! the C ABI's batches on a GPU: the pointer-array and strided batches
//! `emugemm_{s,d,c,z}gemm_batched` and `emugemm_{s,d,c,z}gemm_strided_batched` equal the Rust
//! API's batch bit for bit, and single `emugemm_?gemm` calls on the same matrices where they are
//! emulated, with the last one's report; `alpha = 0` and `k = 0` read neither operand
//!
//! these tests need an NVIDIA GPU: they are ignored otherwise (run them with
//! `--include-ignored`; without a GPU they then fail, never pass)

mod common;

use common::gpu::{Element, addr, as_op, last_report, operation, same_bits, scalar_pointers, stored, stream, values};
use common::{C, DEVICE, F64, HOST, N, T, last_error, on_gpu};
use cudarc::driver::DevicePtrMut;
use emugemm::{Backend, DeviceView, DeviceViewMut, Emulator};
use emugemm_c::*;
use num_complex::Complex;
use std::ffi::c_void;

/// the C ABI's pointer-array and strided batches of `T` against single `emugemm_?gemm` calls on
/// the same matrices: three products a stride apart (above each matrix's extent), op pairs N/N,
/// T/C and C/T, leading dimensions above the rows, host and device scalars in turn, `beta` 0
/// (over NaN) and not, the target precision and an explicit scheme in turn; every product's bits
/// and the padding between them are the single calls', and the last report is the last one's
fn batches_equal_single_calls<T: Element>() {
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
	for (case, (transa, transb)) in [(N, N), (T, C), (C, T)].into_iter().enumerate() {
		for beta_zero in [true, false] {
			let mode = [HOST, DEVICE][(case + usize::from(beta_zero)) % 2];
			let precision = if case % 2 == 0 { T::TARGET } else { T::EXPLICIT };
			let (opa, opb) = (operation(transa), operation(transb));
			let what = format!("{opa:?} {opb:?} beta = 0: {beta_zero} mode {mode} {precision}");
			let (alpha, beta) = ([1.25, -0.5], if beta_zero { [0.0, 0.0] } else { [-0.5, 0.25] });
			let (alpha_t, beta_t) = (T::of(alpha[0], alpha[1]), T::of(beta[0], beta[1]));
			let c_start = if beta_zero {
				vec![T::real(f64::NAN); start.len()]
			} else {
				start.clone()
			};
			let scalars = stream.clone_htod(&reals([&alpha[..T::PARTS], &beta[..T::PARTS]].concat())).unwrap();
			let (pa, pb) = scalar_pointers::<T, T::C, _>(mode, (&alpha_t, &beta_t), &scalars, &stream);
			let (lda, ldb) = (stored(transa, (m, k)).0 + 5, stored(transb, (k, n)).0 + 2);
			let (base_a, base_b) = (addr(&a, &stream), addr(&b, &stream));
			// product i's matrix of the buffer at `base`, `stride` elements apart
			let at = |base: u64, stride: usize, i: usize| base + (i * stride * T::PARTS * size_of::<T::R>()) as u64;
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
	(got, report): (&[T::R], EmugemmReport),
	(single, last, rust): (&[T::R], EmugemmReport, &[T::R]),
) {
	assert!(same_bits::<T>(got, rust), "{what}: the batch against the Rust API's");
	if report.scheme != EmugemmScheme::Native {
		assert!(same_bits::<T>(got, single), "{what}: an emulated batch against single calls");
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

on_gpu! {
	dgemm_batches_equal_single_calls: batches_equal_single_calls::<f64>;
	sgemm_batches_equal_single_calls: batches_equal_single_calls::<f32>;
	zgemm_batches_equal_single_calls: batches_equal_single_calls::<Complex<f64>>;
	cgemm_batches_equal_single_calls: batches_equal_single_calls::<Complex<f32>>;
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
	let on = (HOST, stream.cu_stream().cast::<c_void>(), F64);
	let null = std::ptr::null();
	// SAFETY: A and B are never read (alpha = 0); C's array holds two pointers to 4 x 3 matrices
	let status = unsafe {
		emugemm_dgemm_batched(
			N,
			N,
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
			N,
			N,
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
