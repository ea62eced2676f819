//! products on device memory the crate does not own ([`emugemm::DeviceView`]) on a caller's
//! stream: equal bit for bit, and by plan, to the same product of device matrices and to the
//! CPU oracle's, for every element type, every op, leading dimensions above the rows, and
//! `beta` in {0, 1, other}; natively computed entries (native plans, non-finite rows and columns)
//! equal the device matrices' with operands read transposed where they lie; entries outside the
//! destination's rows and `c` under `beta = 0` never read or written; ordered after the caller's
//! earlier work on the stream and before its later; the layout errors
//!
//! these tests need an NVIDIA GPU and a build with the `cuda` feature: they are ignored otherwise
//! (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::device::{download, padded, stream, upload};
use common::{cpu, gpu, plan_key, same_bits};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use emugemm::testing::random_matrix;
use emugemm::{Accum, DeviceView, DeviceViewMut, Emulator, Error, Precision, Scalar, Scheme, Stream};
use faer::traits::Conjugate;
use faer::{Mat, MatRef, c32, c64};
use std::ops::Mul;

/// how a view reads its stored matrix, as cuBLAS's `op`
#[derive(Clone, Copy, Debug)]
enum Op {
	AsIs,
	Transpose,
	Adjoint,
}

impl Op {
	fn view<T: Scalar>(self, v: DeviceView<'_, T>) -> DeviceView<'_, T> {
		match self {
			Op::AsIs => v,
			Op::Transpose => v.transpose(),
			Op::Adjoint => v.adjoint(),
		}
	}

	/// the matrix this op reads from `stored`, copied
	fn host<T: Scalar + Conjugate<Canonical = T>>(self, stored: MatRef<'_, T>) -> Mat<T> {
		match self {
			Op::AsIs => stored.to_owned(),
			Op::Transpose => stored.transpose().to_owned(),
			Op::Adjoint => Mat::from_fn(stored.ncols(), stored.nrows(), |i, j| {
				let x = stored[(j, i)];
				T::from_parts(x.re(), -x.im())
			}),
		}
	}

	/// the stored shape of an operand this op reads as `rows x cols`
	fn stored(self, (rows, cols): (usize, usize)) -> (usize, usize) {
		match self {
			Op::AsIs => (rows, cols),
			_ => (cols, rows),
		}
	}
}

/// the entries of `m`, column by column
fn column_major(m: MatRef<'_, f64>) -> Vec<f64> {
	(0..m.nrows() * m.ncols())
		.map(|idx| m[(idx % m.nrows(), idx / m.nrows())])
		.collect()
}

/// the `rows x cols` matrix of `v` (leading dimension `ld`)
fn unpadded<T: Scalar>(v: &[T], (rows, cols): (usize, usize), ld: usize) -> Mat<T> {
	Mat::from_fn(rows, cols, |i, j| v[i + j * ld])
}

/// one product `c = alpha op(a) op(b) + beta c` on views against the device matrices' product
/// and the CPU oracle's
fn one_case<T>(emu: &Emulator, (opa, opb): (Op, Op), (alpha, beta): (T, T), precision: Precision)
where
	T: Scalar + Conjugate<Canonical = T> + Mul<Output = T>,
{
	let (m, n, k) = (70, 50, 90);
	let stream = stream();
	let (sa, sb) = (opa.stored((m, k)), opb.stored((k, n)));
	let (lda, ldb, ldc) = (sa.0 + 3, sb.0 + 1, m + 2);
	let a = random_matrix::<T>(sa.0, sa.1, 1.0, 11);
	let b = random_matrix::<T>(sb.0, sb.1, 1.0, 12);
	let old = random_matrix::<T>(m, n, 1.0, 13);
	let pad = T::from_parts(7.0, -7.0);
	let (da, db) = (
		upload(&stream, &padded(a.as_ref(), lda, pad)),
		upload(&stream, &padded(b.as_ref(), ldb, pad)),
	);
	// under beta = 0, `c` holds NaN: it must not be read
	let zero = T::from_parts(0.0, 0.0);
	let start = if beta == zero {
		Mat::from_fn(m, n, |_, _| T::from_parts(f64::NAN, f64::NAN))
	} else {
		old.clone()
	};
	let mut dc = upload(&stream, &padded(start.as_ref(), ldc, pad));
	{
		let (a_t, b_t) = (
			unsafe { da.transmute::<T>(lda * sa.1) }.unwrap(),
			unsafe { db.transmute::<T>(ldb * sb.1) }.unwrap(),
		);
		let mut c_t = unsafe { dc.transmute_mut::<T>(ldc * n) }.unwrap();
		let av = opa.view(DeviceView::new(&a_t, sa, lda).unwrap());
		let bv = opb.view(DeviceView::new(&b_t, sb, ldb).unwrap());
		let cv = DeviceViewMut::new(&mut c_t, (m, n), ldc).unwrap();
		emu.gemm_on_stream(cv, alpha, (av, bv), beta, (precision, (&stream).into()))
			.unwrap_or_else(|e| panic!("{precision:?} {opa:?} {opb:?}: {e}"));
	}
	let on_views = emu.last_report().expect("a report");
	let got = download::<T>(&stream, &dc);
	let what = format!("{} {precision:?} {opa:?} {opb:?} beta {beta:?}", T::NAME);
	// the rows past m in every column are the caller's
	for j in 0..n {
		for i in m..ldc {
			assert_eq!(
				bytemuck::bytes_of(&got[i + j * ldc]),
				bytemuck::bytes_of(&pad),
				"{what}: padding ({i}, {j}) written"
			);
		}
	}
	let got = unpadded(&got, (m, n), ldc);
	// the same product of device matrices: op(a), op(b) and beta c uploaded
	let (ha, hb) = (opa.host(a.as_ref()), opb.host(b.as_ref()));
	let accum = if beta == zero { Accum::Replace } else { Accum::Add };
	let scaled = Mat::from_fn(m, n, |i, j| if beta == zero { zero } else { beta * old[(i, j)] });
	let (ua, ub) = (emu.upload(ha.as_ref()).unwrap(), emu.upload(hb.as_ref()).unwrap());
	let mut uc = emu.upload(scaled.as_ref()).unwrap();
	emu.matmul_device(&mut uc, accum, (&ua, &ub), alpha, precision).unwrap();
	let on_matrices = emu.last_report().unwrap();
	assert_eq!(plan_key(&on_views.plan), plan_key(&on_matrices.plan), "{what}: plans");
	assert_ne!(on_views.plan.scheme, Scheme::Native, "{what}: the emulation ran");
	assert!(
		same_bits(got.as_ref(), uc.download().unwrap().as_ref()),
		"{what}: views against device matrices"
	);
	// and the CPU oracle's
	let mut expected = scaled.clone();
	cpu()
		.matmul(
			expected.as_mut(),
			accum,
			(ha.as_ref(), hb.as_ref()),
			alpha,
			(faer::Par::Seq, precision),
		)
		.unwrap();
	assert_eq!(
		plan_key(&cpu_plan(&ha, &hb, precision)),
		plan_key(&on_views.plan),
		"{what}: the oracle's plan"
	);
	assert!(same_bits(got.as_ref(), expected.as_ref()), "{what}: views against the CPU oracle");
}

fn cpu_plan<T: Scalar + Conjugate<Canonical = T>>(a: &Mat<T>, b: &Mat<T>, precision: Precision) -> emugemm::Plan {
	cpu().plan(a.as_ref(), b.as_ref(), precision).unwrap()
}

fn every_case<T>(alpha: T, target: Precision)
where
	T: Scalar + Conjugate<Canonical = T> + Mul<Output = T>,
{
	let emu = gpu();
	let ops = [
		(Op::AsIs, Op::AsIs),
		(Op::Transpose, Op::AsIs),
		(Op::AsIs, Op::Adjoint),
		(Op::Adjoint, Op::Transpose),
	];
	let betas = [T::from_parts(0.0, 0.0), T::from_parts(1.0, 0.0), T::from_parts(-0.75, 0.5)];
	for precision in [target, Precision::SchemeII { moduli: 12 }, Precision::SchemeI { slices: 5 }] {
		for ops in ops {
			for beta in betas {
				one_case::<T>(&emu, ops, (alpha, beta), precision);
			}
		}
	}
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn views_equal_device_matrices_and_the_oracle_f64() {
	every_case::<f64>(1.5, Precision::F64);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn views_equal_device_matrices_and_the_oracle_c64() {
	every_case::<c64>(c64::new(0.5, -1.25), Precision::F64);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn views_equal_device_matrices_and_the_oracle_f32() {
	every_case::<f32>(-2.0, Precision::F32);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn views_equal_device_matrices_and_the_oracle_c32() {
	every_case::<c32>(c32::new(1.0, 0.25), Precision::F32);
}

/// a product whose operand the caller's stream writes just before the call reads what was
/// written, and the caller's download just after it reads the product; raw pointers on a raw
/// stream give the same bits as cudarc buffers
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn products_keep_the_callers_stream_order() {
	let emu = gpu();
	let stream = stream();
	let n = 1024;
	let a = random_matrix::<f64>(n, n, 1.0, 21);
	let source = stream.clone_htod(&column_major(a.as_ref())).unwrap();
	let mut dst = stream.alloc_zeros::<f64>(n * n).unwrap();
	let mut busy = stream.alloc_zeros::<f64>(1 << 26).unwrap();
	let filler = stream.alloc_zeros::<f64>(1 << 26).unwrap();
	let mut c = stream.alloc_zeros::<f64>(n * n).unwrap();
	// half a gigabyte of copies queued ahead of the operand's own
	for _ in 0..4 {
		stream.memcpy_dtod(&filler, &mut busy).unwrap();
	}
	stream.memcpy_dtod(&source, &mut dst).unwrap();
	{
		let av = DeviceView::new(&dst, (n, n), n).unwrap();
		let cv = DeviceViewMut::new(&mut c, (n, n), n).unwrap();
		emu.gemm_on_stream(cv, 1.0, (av, av), 0.0, (Precision::F64, (&stream).into()))
			.unwrap();
	}
	let downloaded = stream.clone_dtoh(&c).unwrap();
	let got = Mat::from_fn(n, n, |i, j| downloaded[i + j * n]);
	let expected = {
		let ua = emu.upload(a.as_ref()).unwrap();
		let mut uc = emu.zeros_on_device::<f64>(n, n).unwrap();
		emu.matmul_device(&mut uc, Accum::Replace, (&ua, &ua), 1.0, Precision::F64).unwrap();
		uc.download().unwrap()
	};
	assert!(
		same_bits(got.as_ref(), expected.as_ref()),
		"the product read the operand before the caller wrote it"
	);
	// raw pointers on the raw stream
	let mut raw_c = stream.alloc_zeros::<f64>(n * n).unwrap();
	{
		let (pa, _ra) = dst.device_ptr(&stream);
		let (pc, _rc) = raw_c.device_ptr_mut(&stream);
		// SAFETY: both buffers hold n * n elements and outlive the call
		let (av, cv) = unsafe {
			(
				DeviceView::<f64>::from_raw(pa, (n, n), n).unwrap(),
				DeviceViewMut::<f64>::from_raw(pc, (n, n), n).unwrap(),
			)
		};
		// SAFETY: the test's live stream
		let raw = unsafe { Stream::from_raw(stream.cu_stream()) };
		emu.gemm_on_stream(cv, 1.0, (av, av), 0.0, (Precision::F64, raw)).unwrap();
	}
	let raw_got = stream.clone_dtoh(&raw_c).unwrap();
	assert!(
		raw_got
			.iter()
			.zip(column_major(expected.as_ref()))
			.all(|(x, y)| x.to_bits() == y.to_bits()),
		"raw pointers on a raw stream"
	);
}

/// leading dimensions below the rows, memory too short, misaligned addresses and shapes that do
/// not agree are errors before anything runs; empty products scale or keep `c` as cuBLAS does
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn layouts_errors_and_empty_products() {
	let emu = gpu();
	let stream = stream();
	let memory = stream.alloc_zeros::<f64>(12).unwrap();
	assert!(matches!(DeviceView::new(&memory, (4, 3), 3), Err(Error::InvalidLayout { .. })));
	assert!(matches!(DeviceView::new(&memory, (4, 4), 4), Err(Error::InvalidLayout { .. })));
	assert!(DeviceView::new(&memory, (4, 3), 4).is_ok());
	assert!(DeviceView::new(&memory, (0, 0), 1).is_ok());
	// a complex f64 view 8 bytes off its 16-byte alignment
	let bytes = stream.alloc_zeros::<u8>(16 * 17).unwrap();
	let mut out = stream.alloc_zeros::<u8>(16 * 16).unwrap();
	let (base, _r) = bytes.device_ptr(&stream);
	let (pc, _w) = out.device_ptr_mut(&stream);
	// SAFETY: 16 complex elements fit from base + 8 in 17 * 16 bytes, 16 from pc
	let (a, c) = unsafe {
		(
			DeviceView::<c64>::from_raw(base + 8, (4, 4), 4).unwrap(),
			DeviceViewMut::<c64>::from_raw(pc, (4, 4), 4).unwrap(),
		)
	};
	let one = c64::new(1.0, 0.0);
	let misaligned = emu.gemm_on_stream(c, one, (a, a), one, (Precision::F64, (&stream).into()));
	assert!(matches!(misaligned, Err(Error::InvalidLayout { .. })), "{misaligned:?}");
	// shapes
	let mut c = stream.alloc_zeros::<f64>(12).unwrap();
	let a = DeviceView::new(&memory, (4, 3), 4).unwrap();
	let cv = DeviceViewMut::new(&mut c, (4, 3), 4).unwrap();
	let mismatch = emu.gemm_on_stream(cv, 1.0, (a, a), 0.0, (Precision::F64, (&stream).into()));
	assert!(matches!(mismatch, Err(Error::ShapeMismatch { .. })), "{mismatch:?}");
	// k = 0: c = beta c, and c = 0 under beta = 0 (NaN not read)
	let empty = stream.alloc_zeros::<f64>(1).unwrap();
	for (beta, start, expected) in [(2.0, 1.5, 3.0), (0.0, f64::NAN, 0.0), (1.0, f64::INFINITY, f64::INFINITY)] {
		let mut c = stream.clone_htod(&[start; 6]).unwrap();
		{
			let (a, b) = (
				DeviceView::new(&empty, (3, 0), 3).unwrap(),
				DeviceView::new(&empty, (0, 2), 1).unwrap(),
			);
			let cv = DeviceViewMut::new(&mut c, (3, 2), 3).unwrap();
			emu.gemm_on_stream(cv, 1.0, (a, b), beta, (Precision::F64, (&stream).into()))
				.unwrap();
		}
		let got = stream.clone_dtoh(&c).unwrap();
		assert!(got.iter().all(|x| x.to_bits() == expected.to_bits()), "beta {beta}: {got:?}");
	}
}

/// `op(a) op(b)` on views against the same product of device matrices (op(a), op(b) uploaded
/// compact), bit for bit and by plan, without asserting which plan ran; `a`'s entries spread over
/// `phi` (see `random_matrix`), and with `special` `b` holds a NaN and an infinity; returns the
/// plan
fn against_device_matrices<T>(
	emu: &Emulator,
	(opa, opb): (Op, Op),
	(m, n, k): (usize, usize, usize),
	(phi, special): (f64, bool),
	precision: Precision,
) -> emugemm::Plan
where
	T: Scalar + Conjugate<Canonical = T> + Mul<Output = T>,
{
	let stream = stream();
	let (sa, sb) = (opa.stored((m, k)), opb.stored((k, n)));
	let (lda, ldb) = (sa.0 + 2, sb.0 + 5);
	let a = random_matrix::<T>(sa.0, sa.1, phi, 31);
	let mut b = random_matrix::<T>(sb.0, sb.1, 1.0, 32);
	if special {
		b[(1, 2)] = T::from_parts(f64::NAN, 0.0);
		b[(sb.0 - 1, sb.1 / 2)] = T::from_parts(f64::INFINITY, -1.0);
	}
	let pad = T::from_parts(3.0, 3.0);
	let (da, db) = (
		upload(&stream, &padded(a.as_ref(), lda, pad)),
		upload(&stream, &padded(b.as_ref(), ldb, pad)),
	);
	let mut dc = stream.alloc_zeros::<u8>(m * n * size_of::<T>()).unwrap();
	{
		// SAFETY: the buffers hold these many elements of T, uploaded from them
		let (a_t, b_t) = (
			unsafe { da.transmute::<T>(lda * sa.1) }.unwrap(),
			unsafe { db.transmute::<T>(ldb * sb.1) }.unwrap(),
		);
		let mut c_t = unsafe { dc.transmute_mut::<T>(m * n) }.unwrap();
		let av = opa.view(DeviceView::new(&a_t, sa, lda).unwrap());
		let bv = opb.view(DeviceView::new(&b_t, sb, ldb).unwrap());
		let cv = DeviceViewMut::new(&mut c_t, (m, n), m).unwrap();
		let one = T::from_parts(1.0, 0.0);
		emu.gemm_on_stream(cv, one, (av, bv), T::from_parts(0.0, 0.0), (precision, (&stream).into()))
			.unwrap();
	}
	let on_views = emu.last_report().unwrap();
	let got = unpadded(&download::<T>(&stream, &dc), (m, n), m);
	let (ua, ub) = (
		emu.upload(opa.host(a.as_ref()).as_ref()).unwrap(),
		emu.upload(opb.host(b.as_ref()).as_ref()).unwrap(),
	);
	let mut uc = emu.zeros_on_device::<T>(m, n).unwrap();
	emu.matmul_device(&mut uc, Accum::Replace, (&ua, &ub), T::from_parts(1.0, 0.0), precision)
		.unwrap();
	let what = format!("{} {precision:?} {opa:?} {opb:?} {m}x{n}x{k} special {special}", T::NAME);
	assert_eq!(
		plan_key(&on_views.plan),
		plan_key(&emu.last_report().unwrap().plan),
		"{what}: plans"
	);
	assert!(
		same_bits(got.as_ref(), uc.download().unwrap().as_ref()),
		"{what}: views against device matrices"
	);
	on_views.plan
}

/// products on views whose entries are computed natively (inputs `F64` leaves to cuBLAS whole or in
/// rows, TF32, non-finite rows and columns fixed up) equal the device matrices' bit for bit, with
/// the right operand read transposed where it lies
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn native_entries_equal_device_matrices() {
	// the policy weighs the native product here (the other tests' contexts leave it out)
	let emu = gpu().with_native_candidate(true);
	let ops = [(Op::AsIs, Op::Transpose), (Op::Transpose, Op::Adjoint), (Op::AsIs, Op::AsIs)];
	let small = (128, 128, 128);
	for ops in ops {
		// 128³ is faster natively at `F64` (the bound is skipped); TF32 is cuBLAS's
		let plan = against_device_matrices::<f64>(&emu, ops, small, (1.0, false), Precision::F64);
		assert_eq!(plan.scheme, Scheme::Native, "{ops:?}: a native plan");
		let plan = against_device_matrices::<f32>(&emu, ops, small, (1.0, false), Precision::Tf32);
		assert_eq!(plan.scheme, Scheme::Native, "{ops:?}: TF32");
		against_device_matrices::<c64>(&emu, ops, small, (1.0, false), Precision::F64);
		// operands spread over phi = 4: `F64` computes them natively, whole or in rows
		let wide = (300, 260, 200);
		let plan = against_device_matrices::<f64>(&emu, ops, wide, (4.0, false), Precision::F64);
		assert!(plan.scheme == Scheme::Native || plan.native_rows > 0, "{ops:?}: {plan:?}");
		// the non-finite entries fixed up natively in emulated products
		let scheme2 = Precision::SchemeII { moduli: 12 };
		let plan = against_device_matrices::<f64>(&emu, ops, wide, (1.0, true), scheme2);
		assert_ne!(plan.scheme, Scheme::Native, "{ops:?}: emulated, the non-finite entries fixed up");
		against_device_matrices::<c64>(&emu, ops, wide, (1.0, true), scheme2);
	}
}
