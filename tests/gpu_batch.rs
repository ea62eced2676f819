//! batches of products on device views (`Emulator::gemm_batch_on_stream`): every product with its
//! single call's (`gemm_on_stream`) plan and native reason, every emulated product bit for bit its
//! single call, every native one within the native error bound of it, in batches that
//! mix the products cuBLAS runs as one batched GEMM (small, real, as stored, at a target
//! precision) with transposed, complex, emulated and empty ones; `c` not read under `beta = 0`;
//! the errors, which enqueue nothing; the empty batch
//!
//! these tests need an NVIDIA GPU and a build with the `cuda` feature: they are ignored otherwise
//! (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::device::stream;
use common::{gpu, plan_key};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use emugemm::testing::random_matrix;
use emugemm::{DeviceView, DeviceViewMut, Emulator, Error, Precision, Route, Scalar, Scheme};
use faer::{Mat, c64};
use std::sync::Arc;

/// one product of a batch
#[derive(Clone, Copy, Debug)]
struct Case {
	/// `(m, n, k)`
	shape: (usize, usize, usize),
	/// whether `a` is stored transposed
	transposed: bool,
	precision: Precision,
	/// a NaN in `a`'s first row and an infinity in `b`'s last column
	nonfinite: bool,
}

/// a product of finite entries
fn case(shape: (usize, usize, usize), transposed: bool, precision: Precision) -> Case {
	Case {
		shape,
		transposed,
		precision,
		nonfinite: false,
	}
}

/// the matrices of a batch's products, packed in three buffers: each product's `a` (stored `m x k`,
/// or `k x m` read transposed), `b` (`k x n`) and `c` (`m x n`, NaN under `beta = 0`), column-major
struct Packed<T> {
	a: CudaSlice<u8>,
	b: CudaSlice<u8>,
	c: CudaSlice<u8>,
	at: Vec<(usize, usize, usize)>,
	_t: std::marker::PhantomData<T>,
}

fn packed<T: Scalar>(stream: &Arc<CudaStream>, cases: &[Case], beta_zero: bool) -> Packed<T> {
	let (mut a, mut b, mut c, mut at) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
	for (i, case) in cases.iter().enumerate() {
		let ((m, n, k), transposed) = (case.shape, case.transposed);
		at.push((a.len(), b.len(), c.len()));
		let stored = if transposed { (k, m) } else { (m, k) };
		let seed = 10 * i as u64;
		let column_major = |x: Mat<T>| (0..x.nrows() * x.ncols()).map(move |idx| x[(idx % x.nrows(), idx / x.nrows())]);
		let (mut x, mut y) = (
			random_matrix::<T>(stored.0, stored.1, 1.0, seed),
			random_matrix::<T>(k, n, 1.0, seed + 1),
		);
		if case.nonfinite {
			// stored (0, 0) is op(a)'s (0, 0) either way
			x[(0, 0)] = T::from_parts(f64::NAN, 0.0);
			y[(k / 2, n - 1)] = T::from_parts(f64::INFINITY, 0.0);
		}
		a.extend(column_major(x));
		b.extend(column_major(y));
		let nan = T::from_parts(f64::NAN, f64::NAN);
		c.extend(column_major(if beta_zero {
			Mat::from_fn(m, n, |_, _| nan)
		} else {
			random_matrix::<T>(m, n, 1.0, seed + 2)
		}));
	}
	let up = |v: &[T]| stream.clone_htod(bytemuck::cast_slice::<T, u8>(v)).expect("an upload");
	Packed {
		a: up(&a),
		b: up(&b),
		c: up(&c),
		at,
		_t: std::marker::PhantomData,
	}
}

/// runs `cases` as one batch (`batch`) or as single calls, at `alpha`, `beta`; the result `c` and
/// the reports
fn run<T: Scalar>(emu: &Emulator, cases: &[Case], (alpha, beta): (T, T), batch: bool) -> (Vec<u8>, Vec<emugemm::Report>) {
	let stream = stream();
	let zero = beta == T::from_parts(0.0, 0.0);
	let mut p = packed::<T>(&stream, cases, zero);
	let e = size_of::<T>() as u64;
	let reports = {
		let (pa, _ra) = p.a.device_ptr(&stream);
		let (pb, _rb) = p.b.device_ptr(&stream);
		let (pc, _rc) = p.c.device_ptr_mut(&stream);
		let mut lhs = Vec::new();
		let mut rhs = Vec::new();
		let mut dst = Vec::new();
		for (case, &(ia, ib, ic)) in cases.iter().zip(&p.at) {
			let ((m, n, k), transposed) = (case.shape, case.transposed);
			// SAFETY: the packed buffers hold these matrices and outlive the views
			unsafe {
				let a = if transposed {
					DeviceView::<T>::from_raw(pa + ia as u64 * e, (k, m), k.max(1)).unwrap().transpose()
				} else {
					DeviceView::<T>::from_raw(pa + ia as u64 * e, (m, k), m.max(1)).unwrap()
				};
				lhs.push(a);
				rhs.push(DeviceView::<T>::from_raw(pb + ib as u64 * e, (k, n), k.max(1)).unwrap());
				dst.push(DeviceViewMut::<T>::from_raw(pc + ic as u64 * e, (m, n), m.max(1)).unwrap());
			}
		}
		let precision = cases[0].precision;
		if batch {
			assert!(cases.iter().all(|c| c.precision == precision), "one precision per batch");
			emu.gemm_batch_on_stream(&mut dst, alpha, (&lhs, &rhs), beta, (precision, (&stream).into()))
				.unwrap()
		} else {
			let mut reports = Vec::new();
			for ((c, a), b) in dst.into_iter().zip(lhs).zip(rhs) {
				emu.gemm_on_stream(c, alpha, (a, b), beta, (precision, (&stream).into())).unwrap();
				reports.push(emu.last_report().unwrap());
			}
			reports
		}
	};
	(stream.clone_dtoh(&p.c).unwrap(), reports)
}

/// a batch against the single calls of its products, by plan; the emulated products bit for bit,
/// the native ones (cuBLAS's batched GEMM, whose bits cuBLAS does not promise equal to its
/// single GEMM's) within twice the native product's error bound of the single call's
fn equals_single_calls<T: Scalar>(cases: &[Case], alpha: T) {
	equals_single_calls_on(&gpu(), cases, alpha);
}

/// [`equals_single_calls`] in the context `emu`; the reports of the batch's (for `beta = 0`)
fn equals_single_calls_on<T: Scalar>(emu: &Emulator, cases: &[Case], alpha: T) -> Vec<emugemm::Report> {
	let mut first = None;
	for beta in [T::from_parts(0.0, 0.0), T::from_parts(1.0, 0.0), T::from_parts(-0.75, 0.0)] {
		let (batch, batch_reports) = run::<T>(emu, cases, (alpha, beta), true);
		let (single, single_reports) = run::<T>(emu, cases, (alpha, beta), false);
		assert_eq!(batch_reports.len(), cases.len());
		first.get_or_insert_with(|| batch_reports.clone());
		let (batch, single) = (as_elements::<T>(&batch), as_elements::<T>(&single));
		let mut at = 0;
		for (i, (x, y)) in batch_reports.iter().zip(&single_reports).enumerate() {
			let what = format!("{} product {i} {:?} beta {beta:?}", T::NAME, cases[i]);
			assert_eq!(plan_key(&x.plan), plan_key(&y.plan), "{what}: plans");
			assert_eq!(x.native_reason, y.native_reason, "{what}: native reasons");
			assert_eq!(
				(x.nonfinite_entries, x.route),
				(y.nonfinite_entries, y.route),
				"{what}: non-finite entries and routes"
			);
			// explicit scheme II products read as stored share their launches in a batch where
			// the fused kernels run them (not on the portable path), and single calls never do
			let ((m, n, k), transposed) = (cases[i].shape, cases[i].transposed);
			let fused = matches!(y.route, Route::Fused | Route::FusedThreeLaunches);
			let shares = matches!(cases[i].precision, Precision::SchemeII { .. }) && fused && !transposed && m * n * k != 0;
			assert_eq!(x.shared_launch.is_some(), shares, "{what}: shared launches {:?}", x.shared_launch);
			assert_eq!(y.shared_launch, None, "{what}: a single call's shared launches");
			let (got, expected) = (&batch[at..at + m * n], &single[at..at + m * n]);
			at += m * n;
			if x.plan.scheme != Scheme::Native {
				assert!(
					got.iter().zip(expected).all(|(p, q)| bits(*p) == bits(*q)),
					"{what}: an emulated product against its single call"
				);
				continue;
			}
			// |alpha| |op(a)| |b| + |beta| |c|, the scale of the native error bound
			let a = random_matrix::<T>(if transposed { k } else { m }, if transposed { m } else { k }, 1.0, 10 * i as u64);
			let b = random_matrix::<T>(k, n, 1.0, 10 * i as u64 + 1);
			let c = random_matrix::<T>(m, n, 1.0, 10 * i as u64 + 2);
			let abs = |x: Mat<T>| Mat::<f64>::from_fn(x.nrows(), x.ncols(), |r, s| x[(r, s)].re().hypot(x[(r, s)].im()));
			let a = if transposed { abs(a).transpose().to_owned() } else { abs(a) };
			let scale = &a * &abs(b);
			let unit = f64::powi(2.0, -(T::MANTISSA_BITS as i32));
			for (e, (p, q)) in got.iter().zip(expected).enumerate() {
				let (r, s) = (e % m, e / m);
				let bound =
					16.0 * (k + 2) as f64 * unit * (alpha.re().hypot(alpha.im()) * scale[(r, s)] + beta.re().abs() * abs_at(&c, (r, s)));
				let gap = (p.re() - q.re()).hypot(p.im() - q.im());
				assert!(
					gap <= bound,
					"{what}: entry ({r}, {s}) of a native product {gap:e} from its single call's, bound {bound:e}"
				);
			}
		}
	}
	first.expect("three values of beta")
}

/// the elements of `T` of the bytes `v`
fn as_elements<T: Scalar>(v: &[u8]) -> Vec<T> {
	v.chunks_exact(size_of::<T>()).map(bytemuck::pod_read_unaligned).collect()
}

/// an element's bits, both parts
fn bits<T: Scalar>(x: T) -> (u64, u64) {
	(x.re().to_bits(), x.im().to_bits())
}

/// `|c[(r, s)]|`
fn abs_at<T: Scalar>(c: &Mat<T>, (r, s): (usize, usize)) -> f64 {
	c[(r, s)].re().hypot(c[(r, s)].im())
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn batches_equal_single_calls() {
	let f64_target = Precision::F64;
	let mut cases: Vec<Case> = Vec::new();
	// natives unread, in two groups of shapes, between transposed and emulated-size products
	for i in 0..40 {
		cases.push(case((128, 128, 128), i % 7 == 3, f64_target));
		cases.push(case((64, 96, 32), false, f64_target));
	}
	cases.push(case((0, 5, 7), false, f64_target));
	cases.push(case((5, 3, 0), false, f64_target));
	cases.push(case((700, 300, 500), false, f64_target));
	equals_single_calls::<f64>(&cases, 1.5);
	// one shape at one stride: cuBLAS's strided batch
	let strided: Vec<Case> = (0..30).map(|_| case((128, 128, 128), false, f64_target)).collect();
	equals_single_calls::<f64>(&strided, 1.5);
	// explicit plans are emulated at every size
	let explicit: Vec<Case> = (0..6)
		.map(|i| case((100 + 10 * i, 90, 80), i % 2 == 1, Precision::SchemeII { moduli: 12 }))
		.collect();
	equals_single_calls::<f64>(&explicit, -0.5);
	// complex products are never batched natively (their native path reads the statistics)
	let complex: Vec<Case> = (0..10).map(|i| case((64, 64, 64), i == 4, Precision::F64)).collect();
	equals_single_calls::<c64>(&complex, c64::new(0.5, -1.0));
	// f32 at FP32 level: natives unread; above it: the native entries' kernel, one by one
	let f32_cases: Vec<Case> = (0..12).map(|_| case((96, 96, 96), false, Precision::F32)).collect();
	equals_single_calls::<f32>(&f32_cases, 2.0);
	let wide: Vec<Case> = (0..3).map(|_| case((96, 96, 96), false, Precision::Bits(23))).collect();
	equals_single_calls::<f32>(&wide, 2.0);
}

/// explicit scheme II products of one shape share their launches, bit for bit their single calls:
/// real and complex, with NaN and infinite entries, beside products of that shape read
/// transposed (which run one by one) and of other shapes; and in chunks where the context's
/// device memory holds only some of them at once
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn shared_launches_equal_single_calls() {
	let explicit = |moduli| Precision::SchemeII { moduli };
	let mixed = |p: Precision| -> Vec<Case> {
		(0..9)
			.map(|i| Case {
				nonfinite: i == 2 || i == 5,
				..case(if i == 6 { (48, 130, 33) } else { (96, 80, 72) }, i == 7, p)
			})
			.collect()
	};
	equals_single_calls::<f64>(&mixed(explicit(12)), -0.5);
	equals_single_calls::<c64>(&mixed(explicit(10)), c64::new(0.5, -1.0));
	equals_single_calls::<f32>(&mixed(explicit(6)), 2.0);
	equals_single_calls::<faer::c32>(&mixed(explicit(7)), faer::c32::new(-1.0, 0.25));
	// a context of 0.75 MB: the f64 pipeline's footprint at 96 x 80 x 72 fits (0.74 MB), and
	// the chunks hold two products each (0.26 MB of split and residue planes a product)
	let cases: Vec<Case> = (0..5)
		.map(|i| Case {
			nonfinite: i == 3,
			..case((96, 80, 72), false, explicit(12))
		})
		.collect();
	let reports = equals_single_calls_on::<f64>(&gpu().with_device_memory(750_000), &cases, 1.25);
	if reports[0].route != Route::Fused {
		println!("shared_launches_equal_single_calls: chunks SKIPPED, the fused kernels do not run here");
		return;
	}
	let counts: Vec<usize> = reports.iter().map(|r| r.shared_launch.expect("shared")).collect();
	let mut at = 0;
	let mut chunks = 0;
	while at < counts.len() {
		let size = counts[at];
		assert!(
			counts[at..(at + size).min(counts.len())].iter().all(|&c| c == size),
			"chunks {counts:?}"
		);
		at += size;
		chunks += 1;
	}
	assert_eq!(at, counts.len(), "chunks {counts:?}");
	assert!(chunks > 1 && counts[0] > 1, "chunks {counts:?}");
}

/// a batch of lengths that differ, or with one product whose shapes do not fit, is an error that
/// writes nothing; the empty batch reports nothing
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn batch_errors_write_nothing() {
	let emu = gpu();
	let stream = stream();
	let a = stream.clone_htod(&vec![1.0f64; 64]).unwrap();
	let mut c = stream.clone_htod(&vec![3.0f64; 64]).unwrap();
	let on = || (Precision::F64, (&stream).into());
	{
		let (pa, _ra) = a.device_ptr(&stream);
		let (pc, _rc) = c.device_ptr_mut(&stream);
		// SAFETY: the buffers hold 64 elements and outlive the views
		let (good, bad, mut dst) = unsafe {
			(
				DeviceView::<f64>::from_raw(pa, (4, 4), 4).unwrap(),
				DeviceView::<f64>::from_raw(pa, (5, 4), 5).unwrap(),
				vec![
					DeviceViewMut::<f64>::from_raw(pc, (4, 4), 4).unwrap(),
					DeviceViewMut::<f64>::from_raw(pc + 128, (4, 4), 4).unwrap(),
				],
			)
		};
		let err = emu.gemm_batch_on_stream(&mut dst, 1.0, (&[good, good], &[good]), 0.0, on());
		assert!(matches!(err, Err(Error::BatchLengths { dst: 2, lhs: 2, rhs: 1 })), "{err:?}");
		let err = emu.gemm_batch_on_stream(&mut dst, 1.0, (&[good, bad], &[good, good]), 0.0, on());
		assert!(matches!(err, Err(Error::ShapeMismatch { .. })), "{err:?}");
		let none = emu.gemm_batch_on_stream::<f64>(&mut [], 1.0, (&[], &[]), 0.0, on()).unwrap();
		assert!(none.is_empty());
	}
	assert!(
		stream.clone_dtoh(&c).unwrap().iter().all(|&x| x == 3.0),
		"an error wrote the destination"
	);
}

/// products that share a destination run in the batch's order: each adds to what the one before
/// it wrote, bit for bit as single calls in that order, natively computed and emulated
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_shared_destination_runs_in_order() {
	let emu = gpu();
	let stream = stream();
	let (n, count) = (160usize, 4u64);
	let column_major = |x: Mat<f64>| (0..n * n).map(move |idx| x[(idx % n, idx / n)]).collect::<Vec<_>>();
	let many = |seed: u64| {
		(0..count)
			.flat_map(|i| column_major(random_matrix::<f64>(n, n, 1.0, seed + i)))
			.collect::<Vec<_>>()
	};
	let (a, b) = (stream.clone_htod(&many(50)).unwrap(), stream.clone_htod(&many(60)).unwrap());
	let start = column_major(random_matrix::<f64>(n, n, 1.0, 70));
	for precision in [Precision::F64, Precision::SchemeII { moduli: 12 }] {
		let mut results = Vec::new();
		for batch in [true, false] {
			let mut c = stream.clone_htod(&start).unwrap();
			{
				let ((pa, _ra), (pb, _rb), (pc, _rc)) = (a.device_ptr(&stream), b.device_ptr(&stream), c.device_ptr_mut(&stream));
				let at = |base: u64, i: u64| base + i * (n * n * 8) as u64;
				// SAFETY: the buffers hold these matrices and outlive the views; the destinations
				// alias on purpose
				let (lhs, rhs, mut dst) = unsafe {
					let view = |base, i| DeviceView::<f64>::from_raw(at(base, i), (n, n), n).unwrap();
					(
						(0..count).map(|i| view(pa, i)).collect::<Vec<_>>(),
						(0..count).map(|i| view(pb, i)).collect::<Vec<_>>(),
						(0..count)
							.map(|_| DeviceViewMut::<f64>::from_raw(pc, (n, n), n).unwrap())
							.collect::<Vec<_>>(),
					)
				};
				let on = (precision, (&stream).into());
				if batch {
					emu.gemm_batch_on_stream(&mut dst, 1.5, (&lhs, &rhs), -0.75, on).unwrap();
				} else {
					for ((c, a), b) in dst.into_iter().zip(lhs).zip(rhs) {
						emu.gemm_on_stream(c, 1.5, (a, b), -0.75, on).unwrap();
					}
				}
			}
			results.push(stream.clone_dtoh(&c).unwrap());
		}
		let differ = results[0]
			.iter()
			.zip(&results[1])
			.filter(|(x, y)| x.to_bits() != y.to_bits())
			.count();
		assert_eq!(differ, 0, "{precision}: entries of the batch differing from single calls in order");
	}
}
