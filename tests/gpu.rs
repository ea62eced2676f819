//! the GPU backend against the CPU oracle: bit for bit, for every type, scheme and odd shape
//!
//! these tests need an NVIDIA Hopper GPU and a build with the `cuda` feature: they are ignored
//! otherwise (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::{cpu, emulated, gpu, on_path, plan_key, portable_run, route, same_bits, skipped_on_one_gpu};
use emugemm::testing::{Adversarial, InnerPattern, Pair, adversarial_matrix, pair, random_matrix};
use emugemm::{Accum, Backend, EmuMatMul, Emulator, Error, Precision, Report, Route, Scalar, Scaling, Scheme};
use faer::{Mat, MatRef, c32, c64};

/// `$case::<T>()` for every element type
macro_rules! every_type {
	($case:ident) => {
		$case::<f64>();
		$case::<c64>();
		$case::<f32>();
		$case::<c32>();
	};
}

const NEEDS_GPU: &str = "needs a Hopper GPU";

/// the GPU and the CPU oracle give the same plan and the same bits
fn same_as_oracle<T: Scalar>(gpu: &Emulator, oracle: &Emulator, a: MatRef<'_, T>, b: MatRef<'_, T>, precision: Precision) {
	let g = emulated(gpu, a, b, precision);
	let gr = gpu.last_report().unwrap();
	let c = emulated(oracle, a, b, precision);
	let cr = oracle.last_report().unwrap();
	// the same bound: the same plan, the same certified bits, the same native rows
	assert_eq!(plan_key(&gr.plan), plan_key(&cr.plan), "{} {precision:?}: plans differ", T::NAME);
	assert_eq!(gr.native_rows, cr.native_rows, "{} {precision:?}: native rows differ", T::NAME);
	if gr.plan.scheme == Scheme::Native {
		return; // cuBLAS and faer need not agree bit for bit
	}
	let emulated_rows: Vec<usize> = (0..g.nrows()).filter(|i| gr.native_rows.binary_search(i).is_err()).collect();
	let mismatches = (0..g.ncols())
		.flat_map(|j| emulated_rows.iter().map(move |&i| (i, j)))
		.filter(|&(i, j)| g[(i, j)].re().to_bits() != c[(i, j)].re().to_bits() || g[(i, j)].im().to_bits() != c[(i, j)].im().to_bits())
		.count();
	assert_eq!(
		mismatches,
		0,
		"{} {}x{}x{} {precision:?} ({}): {mismatches} entries differ from the CPU oracle",
		T::NAME,
		a.nrows(),
		a.ncols(),
		b.ncols(),
		gr.plan
	);
}

fn plans<T: Scalar>() -> Vec<Precision> {
	let mut v = vec![
		Precision::Tf32,
		Precision::F32,
		Precision::F64,
		Precision::Bits(T::MANTISSA_BITS - 4),
	];
	v.extend((1..=8).map(|slices| Precision::SchemeI { slices }));
	v.extend([2, 3, 6, 7, 8, 12, 15, 16, 20].map(|moduli| Precision::SchemeII { moduli }));
	v
}

fn bit_exact<T: Scalar>() {
	let (g, o) = (gpu(), cpu());
	let (ga, oa) = (gpu().with_scaling(Scaling::Accurate), cpu().with_scaling(Scaling::Accurate));
	for (m, k, n) in [(1, 1, 1), (7, 33, 5), (33, 257, 7), (64, 96, 48)] {
		for (phi, seed) in [(1.0, 1), (4.0, 2)] {
			let a = random_matrix::<T>(m, k, phi, seed);
			let b = random_matrix::<T>(k, n, phi, seed + 10);
			for precision in plans::<T>() {
				same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), precision);
			}
			for moduli in [8, 14] {
				same_as_oracle(&ga, &oa, a.as_ref(), b.as_ref(), Precision::SchemeII { moduli });
			}
		}
	}
	for family in [
		Pair::InnerScaled {
			pattern: InnerPattern::Random,
			range: 8,
		},
		Pair::InnerScaled {
			pattern: InnerPattern::Alternating,
			range: 60,
		},
		Pair::Bimodal { gap: 30 },
		Pair::SmallImaginary { log2_ratio: 4 },
		Pair::SmallImaginary { log2_ratio: 40 },
		Pair::Cancellation,
		Pair::DominantMeetsSmall,
	] {
		let (a, b) = pair::<T>(family, 70, 300, 50, 5);
		for precision in [
			Precision::F64,
			Precision::F32,
			Precision::Bits(20),
			Precision::SchemeII { moduli: 16 },
		] {
			same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), precision);
			same_as_oracle(&ga, &oa, a.as_ref(), b.as_ref(), precision);
		}
	}
	for (x, y) in [
		(Adversarial::ScaledRows, Adversarial::ScaledCols),
		(Adversarial::ZeroRows, Adversarial::HugeEntries),
		(Adversarial::Subnormal, Adversarial::ScaledCols),
	] {
		let a = adversarial_matrix::<T>(x, 40, 70, 3);
		let b = adversarial_matrix::<T>(y, 70, 30, 4);
		for precision in [
			Precision::F64,
			Precision::Tf32,
			Precision::SchemeI { slices: 5 },
			Precision::SchemeII { moduli: 18 },
		] {
			same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), precision);
		}
	}
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bit_exact_f64() {
	bit_exact::<f64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bit_exact_c64() {
	bit_exact::<c64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bit_exact_f32() {
	bit_exact::<f32>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bit_exact_c32() {
	bit_exact::<c32>();
}

/// the suite runs on the path it is asked for: the sm_90a kernels, or the portable path
/// (`EMUGEMM_TEST_PORTABLE=1`), on host operands, split products and device matrices alike
#[test]
#[ignore = "needs a Hopper GPU"]
fn the_suite_runs_on_its_path() {
	let a = random_matrix::<c64>(150, 260, 1.0, 1);
	let expected = if portable_run() { Route::Portable } else { Route::Fused };
	let one = gpu();
	for emu in [&one, &on_path(Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false))] {
		emulated(emu, a.as_ref(), a.transpose(), Precision::SchemeII { moduli: 16 });
		assert_eq!(emu.last_report().unwrap().route, expected, "{}", emu.last_report().unwrap());
	}
	let da = one.upload(a.as_ref()).unwrap();
	let dt = one.upload(a.transpose()).unwrap();
	let mut dc = one.zeros_on_device::<c64>(150, 150).unwrap();
	one.matmul_device(
		&mut dc,
		Accum::Replace,
		(&da, &dt),
		c64::new(1.0, 0.0),
		Precision::SchemeII { moduli: 16 },
	)
	.unwrap();
	assert_eq!(one.last_report().unwrap().route, expected);
}

/// the design's large odd shape, and K beyond scheme I's exact INT32 bound (passes)
#[test]
#[ignore = "needs a Hopper GPU"]
fn bit_exact_large_and_long() {
	let (g, o) = (gpu(), cpu());
	let a = random_matrix::<f64>(1000, 3001, 1.0, 5);
	let b = random_matrix::<f64>(3001, 777, 1.0, 6);
	for precision in [Precision::F64, Precision::SchemeI { slices: 3 }] {
		same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), precision);
	}
	let a = random_matrix::<c64>(9, 20000, 1.0, 7);
	let b = random_matrix::<c64>(20000, 5, 1.0, 8);
	same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), Precision::SchemeI { slices: 8 });
	assert_eq!(g.last_report().unwrap().plan.k_passes, 3);
	same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), Precision::SchemeII { moduli: 16 });
	// K above 8,192: complex scheme II takes its three products in three launches
	assert_eq!(g.last_report().unwrap().route, route(Route::FusedThreeLaunches));
	let small = random_matrix::<c64>(9, 300, 1.0, 9);
	same_as_oracle(&g, &o, small.as_ref(), small.transpose(), Precision::SchemeII { moduli: 16 });
	assert_eq!(g.last_report().unwrap().route, route(Route::Fused));
	let unfused = gpu().with_fused_products(false);
	same_as_oracle(&unfused, &o, small.as_ref(), small.transpose(), Precision::SchemeII { moduli: 16 });
	assert_eq!(unfused.last_report().unwrap().route, route(Route::Unfused));
}

/// transposed and strided host views, alpha and accumulation
#[test]
#[ignore = "needs a Hopper GPU"]
fn views_alpha_and_accumulation() {
	let (g, o) = (gpu(), cpu());
	let big = random_matrix::<c64>(50, 60, 1.0, 9);
	let b = random_matrix::<c64>(20, 11, 1.0, 10);
	let b = b.as_ref().reverse_rows();
	// 30 rows: the output entry by entry; 32 rows: 4 entries per vector store (cuda/reconstruct.cu)
	for rows in [30, 32] {
		let a = big.as_ref().submatrix(3, 5, 20, rows).transpose();
		same_as_oracle(&g, &o, a, b, Precision::F64);
		let old = random_matrix::<c64>(rows, 11, 1.0, 11);
		let alpha = c64::new(0.75, -1.5);
		let run = |emu: &Emulator| {
			let mut c = old.clone();
			emu.matmul(
				c.as_mut(),
				Accum::Add,
				(a, b),
				alpha,
				(faer::Par::rayon(0), Precision::SchemeII { moduli: 13 }),
			)
			.unwrap();
			c
		};
		assert!(same_bits(run(&g).as_ref(), run(&o).as_ref()), "{rows} rows");
	}
}

/// complex products with separately scaled parts (imaginary parts 2^-40 of the real ones), with
/// alpha, accumulation and non-finite entries: the plan scales the parts separately, and the GPU
/// gives the oracle's bits (the non-finite entries the native fixup's, alike on both)
#[test]
#[ignore = "needs a Hopper GPU"]
fn separate_parts_bit_exact() {
	fn case<T: Scalar>(precision: Precision, (m, k, n): (usize, usize, usize)) {
		let (g, o) = (gpu(), cpu());
		let (mut a, mut b) = pair::<T>(Pair::SmallImaginary { log2_ratio: 40 }, m, k, n, 3);
		same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), precision);
		assert!(g.last_report().unwrap().plan.separate_parts, "{}", g.last_report().unwrap().plan);
		a[(3, 7)] = T::from_parts(f64::NAN, 0.0);
		b[(9, 2)] = T::from_parts(0.0, f64::INFINITY);
		let old = random_matrix::<T>(m, n, 1.0, 4);
		let alpha = T::from_parts(0.75, -2.0);
		let run = |emu: &Emulator| {
			let mut c = old.clone();
			emu.matmul(
				c.as_mut(),
				Accum::Add,
				(a.as_ref(), b.as_ref()),
				alpha,
				(faer::Par::rayon(0), precision),
			)
			.unwrap();
			(c, emu.last_report().unwrap())
		};
		let ((gc, gr), (oc, or)) = (run(&g), run(&o));
		assert!(gr.plan.separate_parts && or.plan.separate_parts, "{}", gr.plan);
		assert_eq!(gr.nonfinite_entries, n + m - 1);
		let same = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
		for j in 0..n {
			for i in 0..m {
				let (x, y) = (gc[(i, j)], oc[(i, j)]);
				assert!(
					same(x.re(), y.re()) && same(x.im(), y.im()),
					"{} {precision:?} ({i}, {j}): {x:?} against {y:?}",
					T::NAME
				);
			}
		}
	}
	for precision in [Precision::F64, Precision::Bits(40), Precision::F32, Precision::Tf32] {
		case::<c64>(precision, (70, 300, 50));
		case::<c64>(precision, (33, 1000, 9));
	}
	for precision in [Precision::F32, Precision::Tf32, Precision::Bits(20)] {
		case::<c32>(precision, (70, 300, 50));
	}
}

/// NaN and infinities, infinities meeting zeros among them: the GPU gives the non-finite pattern
/// of the native product (faer's, which cuBLAS's equals: a complex sum with an infinite part,
/// scaled by `1 + 0i`, is NaN in both parts), and the other entries bit for bit as the oracle
#[test]
#[ignore = "needs a Hopper GPU"]
fn nonfinite_inputs() {
	fn check<T: Scalar>() {
		let (g, o) = (gpu(), cpu());
		let kind = |x: f64| (x.is_nan(), x.is_infinite(), x.is_infinite() && x > 0.0);
		// 9 rows: the output entry by entry; 12: by 4 entries, some with a non-finite row among them
		let precisions = [Precision::F64, Precision::SchemeI { slices: 4 }, Precision::SchemeII { moduli: 14 }];
		for (m, precision) in [9, 12].into_iter().flat_map(|m| precisions.map(|p| (m, p))) {
			let mut a = random_matrix::<T>(m, 12, 1.0, 1);
			let mut b = random_matrix::<T>(12, 7, 1.0, 2);
			a[(2, 3)] = T::from_parts(f64::NAN, 0.0);
			a[(5, 0)] = T::from_parts(f64::INFINITY, 0.0);
			b[(7, 1)] = T::from_parts(f64::NEG_INFINITY, 0.0);
			b[(0, 4)] = T::from_parts(0.0, 0.0);
			a[(6, 7)] = T::from_parts(0.0, 0.0);
			let gc = emulated(&g, a.as_ref(), b.as_ref(), precision);
			let oc = emulated(&o, a.as_ref(), b.as_ref(), precision);
			assert_ne!(g.last_report().unwrap().plan.scheme, Scheme::Native);
			let native = &a * &b;
			for j in 0..7 {
				for i in 0..m {
					let (x, y, z) = (gc[(i, j)], oc[(i, j)], native[(i, j)]);
					let at = format!("{} {precision:?} ({i}, {j}): {x:?} against {z:?}", T::NAME);
					assert_eq!((kind(x.re()), kind(x.im())), (kind(z.re()), kind(z.im())), "{at}");
					if z.re().is_finite() && z.im().is_finite() {
						assert_eq!((x.re().to_bits(), x.im().to_bits()), (y.re().to_bits(), y.im().to_bits()), "{at}");
					}
				}
			}
			assert_eq!(g.last_report().unwrap().nonfinite_entries, 2 * 7 + m - 2);
		}
	}
	check::<f64>();
	check::<c64>();
	check::<c32>();
}

/// a complex product the GPU computes natively as a whole (here: small enough that the native
/// product is predicted faster) gives the non-finite pattern of the sum scaled by `alpha`, as the
/// CPU's native product and an emulated product give it, replacing or adding to the destination;
/// cuBLAS's kernels for these shapes, left alone, scale `A` by `alpha` first and give infinities
/// where an infinity meets the zero imaginary part of `1 + 0i`
#[test]
#[ignore = "needs a Hopper GPU"]
fn nonfinite_inputs_of_native_products() {
	fn check<T: Scalar>() {
		let g = Emulator::with_backend(Backend::Gpu).expect("a GPU");
		let kind = |x: f64| (x.is_nan(), x.is_infinite(), x.is_infinite() && x > 0.0);
		// infinities in a column of B and a row of A, or a NaN in A's first row alone, beside a
		// subnormal entry of B
		for ((m, n, k), nan) in [
			((2, 3, 1), false),
			((9, 7, 12), false),
			((33, 5, 3), false),
			((2, 2, 1), true),
			((9, 7, 12), true),
		] {
			let mut a = random_matrix::<T>(m, k, 1.0, 3);
			let mut b = random_matrix::<T>(k, n, 1.0, 4);
			if nan {
				a[(0, 0)] = T::from_parts(f64::NAN, 0.0);
			} else {
				b[(0, n - 1)] = T::from_parts(f64::INFINITY, 0.0);
				a[(m - 1, k - 1)] = T::from_parts(0.0, f64::NEG_INFINITY);
			}
			b[(0, 1)] = T::from_parts(f64::MIN_POSITIVE / 8.0, 0.0);
			for accum in [Accum::Replace, Accum::Add] {
				let mut old = random_matrix::<T>(m, n, 1.0, 5);
				old[(0, 0)] = T::from_parts(f64::NEG_INFINITY, 1.0);
				let alpha = T::from_parts(1.0, 0.0);
				let mut c = old.clone();
				g.matmul(&mut c, accum, (&a, &b), alpha, (faer::Par::Seq, Precision::F64)).unwrap();
				let report = g.last_report().unwrap();
				assert_eq!(report.plan.scheme, Scheme::Native, "{report}");
				for j in 0..n {
					for i in 0..m {
						let (mut re, mut im) = (0.0, 0.0);
						for h in 0..k {
							let (x, y) = (a[(i, h)], b[(h, j)]);
							re += x.re() * y.re() - x.im() * y.im();
							if T::IS_COMPLEX {
								im += x.re() * y.im() + x.im() * y.re();
							}
						}
						let scaled = if T::IS_COMPLEX {
							(re * alpha.re() - im * alpha.im(), re * alpha.im() + im * alpha.re())
						} else {
							(re * alpha.re(), 0.0)
						};
						let expected = if accum == Accum::Add {
							(old[(i, j)].re() + scaled.0, old[(i, j)].im() + scaled.1)
						} else {
							scaled
						};
						let x = c[(i, j)];
						assert_eq!(
							(kind(x.re()), kind(x.im())),
							(kind(expected.0), kind(expected.1)),
							"{} {accum:?} {m}x{n}x{k} ({i}, {j}): {x:?} against {expected:?}",
							T::NAME
						);
					}
				}
			}
		}
	}
	check::<c64>();
	check::<c32>();
	check::<f64>();
}

/// the screens decide on the GPU as in the oracle: wide-range inputs large enough to sample go
/// native on the sampled screen's word (real ones before their balanced copies and statistics),
/// with the same reason in both reports; inputs with an inner scaling that the balancing undoes
/// and ordinary ones stay emulated, with the oracle's plan and bits
#[test]
#[ignore = "needs a Hopper GPU"]
fn screens_as_the_oracle() {
	fn check<T: Scalar>(precision: Precision) {
		let (g, o) = (gpu(), cpu());
		let (m, k, n) = (700, 1024, 600);
		for phi in [4.0, 8.0] {
			let (a, b) = (random_matrix::<T>(m, k, phi, 3), random_matrix::<T>(k, n, phi, 4));
			let _ = emulated(&g, a.as_ref(), b.as_ref(), precision);
			let _ = emulated(&o, a.as_ref(), b.as_ref(), precision);
			let (gr, or) = (g.last_report().unwrap(), o.last_report().unwrap());
			assert_eq!(gr.plan.scheme, Scheme::Native, "{} phi {phi}: {gr}", T::NAME);
			assert_eq!(gr.native_reason, or.native_reason, "{} phi {phi}: {gr} / {or}", T::NAME);
			assert!(
				matches!(
					gr.native_reason,
					Some(emugemm::NativeReason::Screen {
						sampled: Some((350, 300)),
						..
					})
				),
				"{} phi {phi}: {gr}",
				T::NAME
			);
		}
		let inner = pair::<T>(
			Pair::InnerScaled {
				pattern: InnerPattern::Blocks,
				range: 40,
			},
			m,
			k,
			n,
			5,
		);
		for (a, b) in [inner, (random_matrix::<T>(m, k, 1.0, 6), random_matrix::<T>(k, n, 1.0, 7))] {
			same_as_oracle(&g, &o, a.as_ref(), b.as_ref(), precision);
			assert_ne!(g.last_report().unwrap().plan.scheme, Scheme::Native, "{}", T::NAME);
		}
	}
	check::<f64>(Precision::F64);
	check::<f32>(Precision::F32);
	check::<c64>(Precision::F64);
}

/// device-resident operands: repeated products without transfers give the staged result
#[test]
#[ignore = "needs a Hopper GPU"]
fn device_resident_products() {
	let g = gpu();
	let a = random_matrix::<f64>(70, 40, 1.0, 1);
	let b = random_matrix::<f64>(40, 30, 1.0, 2);
	let (da, db) = (g.upload(a.as_ref()).unwrap(), g.upload(b.as_ref()).unwrap());
	assert!(same_bits(da.download().unwrap().as_ref(), a.as_ref()));
	let mut dc = g.zeros_on_device::<f64>(70, 30).unwrap();
	g.matmul_device(&mut dc, Accum::Replace, (&da, &db), 1.0, Precision::F64).unwrap();
	g.matmul_device(&mut dc, Accum::Add, (&da, &db), -1.0, Precision::F64).unwrap();
	assert!(dc.download().unwrap().norm_max() == 0.0);
	g.matmul_device(&mut dc, Accum::Replace, (&da, &db), 1.0, Precision::F64).unwrap();
	let staged = a.emu_mul_with(&g, &b, Precision::F64).unwrap();
	assert!(same_bits(dc.download().unwrap().as_ref(), staged.as_ref()));
	let mut wrong = g.zeros_on_device::<f64>(3, 3).unwrap();
	assert!(matches!(
		g.matmul_device(&mut wrong, Accum::Replace, (&da, &db), 1.0, Precision::F64),
		Err(Error::ShapeMismatch { .. })
	));
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn out_of_memory_is_an_error() {
	let g = gpu();
	let err = g.zeros_on_device::<c64>(1 << 21, 1 << 21).map(|_| ()).unwrap_err();
	assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
	println!("{err}");
	// the GPU is still usable afterwards
	let a = Mat::<f64>::identity(8, 8);
	assert_eq!(a.emu_mul_with(&g, &a, Precision::F64).unwrap(), a);
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn auto_backend_picks_the_gpu() {
	assert_eq!(Emulator::new().unwrap().backend(), Backend::Gpu, "{NEEDS_GPU}");
	let a = random_matrix::<f64>(16, 16, 1.0, 3);
	// an explicit plan: a target precision computes a product this small natively
	let _ = a.emu_mul(&a, Precision::SchemeII { moduli: 8 });
	assert_eq!(emugemm::last_report().unwrap().backend, Backend::Gpu);
}

/// by default the native product competes by time: a small `F64` product runs DGEMM, and `Tf32`
/// of `f32` operands a TF32 GEMM (faster than any emulation), bit for bit cuBLAS's own, and the
/// report says so; with the native product reserved, both are emulated
/// (it times cuBLAS through `baseline`, of the feature `bench`)
#[cfg(feature = "bench")]
#[test]
#[ignore = "needs a Hopper GPU"]
fn native_products_compete_by_time() {
	let default = on_path(Emulator::with_backend(Backend::Gpu).expect(NEEDS_GPU));
	let reserved = gpu();
	let small = random_matrix::<f64>(64, 64, 1.0, 1);
	let _ = small.emu_mul_with(&default, &small, Precision::F64).unwrap();
	let report = default.last_report().unwrap();
	assert_eq!(
		(report.plan.scheme, report.route, report.backend),
		(Scheme::Native, Route::Native, Backend::Native)
	);
	let _ = small.emu_mul_with(&reserved, &small, Precision::F64).unwrap();
	assert_ne!(reserved.last_report().unwrap().plan.scheme, Scheme::Native);

	const N: usize = 4096;
	let (a, b) = (random_matrix::<f32>(N, N, 1.0, 2), random_matrix::<f32>(N, N, 1.0, 3));
	let (da, db) = (default.upload(a.as_ref()).unwrap(), default.upload(b.as_ref()).unwrap());
	let mut got = default.zeros_on_device::<f32>(N, N).unwrap();
	default
		.matmul_device(&mut got, Accum::Replace, (&da, &db), 1.0, Precision::Tf32)
		.unwrap();
	assert_eq!(default.last_report().unwrap().plan.scheme, Scheme::Native);
	let mut tf32 = default.zeros_on_device::<f32>(N, N).unwrap();
	emugemm::baseline::native_matmul(&default, &mut tf32, &da, &db, emugemm::baseline::NativeMath::Tf32).unwrap();
	let mut fp32 = default.zeros_on_device::<f32>(N, N).unwrap();
	emugemm::baseline::native_matmul(&default, &mut fp32, &da, &db, emugemm::baseline::NativeMath::Exact).unwrap();
	let (got, tf32, fp32) = (got.download().unwrap(), tf32.download().unwrap(), fp32.download().unwrap());
	assert!(same_bits(got.as_ref(), tf32.as_ref()), "Tf32 ran cuBLAS's TF32 GEMM");
	assert!(!same_bits(got.as_ref(), fp32.as_ref()), "TF32 and FP32 GEMMs differ on random data");
	reserved
		.matmul_device(
			&mut default.zeros_on_device::<f32>(N, N).unwrap(),
			Accum::Replace,
			(&da, &db),
			1.0,
			Precision::Tf32,
		)
		.unwrap();
	assert_ne!(reserved.last_report().unwrap().plan.scheme, Scheme::Native);
}

/// operands that keep their splits: the same bits as without, for every scheme and side, and a
/// matrix written by a product is split anew
#[test]
#[ignore = "needs a Hopper GPU"]
fn reused_splits_give_the_same_bits() {
	let g = gpu();
	let a = random_matrix::<c64>(60, 50, 1.0, 1);
	let b = random_matrix::<c64>(50, 40, 1.0, 2);
	let (da, db) = (g.upload(a.as_ref()).unwrap(), g.upload(b.as_ref()).unwrap());
	let one = c64::new(1.0, 0.0);
	let product = |precision| {
		let mut dc = g.zeros_on_device::<c64>(60, 40).unwrap();
		g.matmul_device(&mut dc, Accum::Replace, (&da, &db), one, precision).unwrap();
		(dc.download().unwrap(), g.last_report().unwrap())
	};
	let plans = [
		Precision::SchemeII { moduli: 14 },
		Precision::SchemeI { slices: 3 },
		Precision::F64,
		Precision::SchemeII { moduli: 14 },
	];
	let fresh: Vec<_> = plans.iter().map(|&p| product(p).0).collect();
	da.reuse_splits(true);
	db.reuse_splits(true);
	for (precision, expected) in plans.iter().zip(&fresh) {
		for _ in 0..2 {
			let (c, report) = product(*precision);
			assert!(same_bits(c.as_ref(), expected.as_ref()), "{precision:?}: {report}");
		}
	}
	// the product's destination, reused as an operand after being overwritten
	let mut dc = g.zeros_on_device::<c64>(60, 50).unwrap();
	dc.reuse_splits(true);
	let dsq = g.upload(random_matrix::<c64>(50, 50, 1.0, 3).as_ref()).unwrap();
	let mut out = g.zeros_on_device::<c64>(60, 50).unwrap();
	g.matmul_device(&mut dc, Accum::Replace, (&da, &dsq), one, Precision::F64).unwrap();
	g.matmul_device(&mut out, Accum::Replace, (&dc, &dsq), one, Precision::F64).unwrap();
	g.matmul_device(&mut dc, Accum::Add, (&da, &dsq), one, Precision::F64).unwrap();
	g.matmul_device(&mut out, Accum::Replace, (&dc, &dsq), one, Precision::F64).unwrap();
	let expected = emulated(
		&cpu(),
		dc.download().unwrap().as_ref(),
		dsq.download().unwrap().as_ref(),
		Precision::F64,
	);
	assert!(same_bits(out.download().unwrap().as_ref(), expected.as_ref()));
}

/// host products staged in chunks: for chunk sizes down to one element (ragged chunks, chunks
/// that end inside a column, many of them) and for every layout (column-major, transposed,
/// reversed rows, strided submatrices), the staged result equals the device-resident one bit for
/// bit, with `Accum::Add` and complex types; uploads and downloads round-trip exactly
#[test]
#[ignore = "needs a Hopper GPU"]
fn staged_products_in_small_chunks() {
	fn case<T: Scalar>() {
		let resident = gpu();
		let big_a = random_matrix::<T>(90, 80, 1.0, 1);
		let big_b = random_matrix::<T>(80, 70, 1.0, 2);
		let old = random_matrix::<T>(37, 29, 1.0, 3);
		let alpha = T::from_parts(0.75, -0.5);
		let views: [(&str, MatRef<'_, T>, MatRef<'_, T>); 3] = [
			(
				"column-major",
				big_a.as_ref().submatrix(0, 0, 37, 41),
				big_b.as_ref().submatrix(0, 0, 41, 29),
			),
			(
				"transposed and reversed",
				big_a.as_ref().submatrix(3, 5, 41, 37).transpose(),
				big_b.as_ref().submatrix(2, 1, 41, 29).reverse_rows(),
			),
			(
				"strided",
				big_a.as_ref().submatrix(1, 2, 37, 41),
				big_b.as_ref().transpose().submatrix(4, 3, 29, 41).transpose(),
			),
		];
		for (what, a, b) in views {
			let (da, db) = (resident.upload(a).unwrap(), resident.upload(b).unwrap());
			assert!(same_bits(da.download().unwrap().as_ref(), a), "{what}: upload round trip");
			let mut dc = resident.upload(old.as_ref()).unwrap();
			resident
				.matmul_device(&mut dc, Accum::Add, (&da, &db), alpha, Precision::F64)
				.unwrap();
			let expected = dc.download().unwrap();
			for bytes in [size_of::<T>(), 1000, 4096 + 8, 1 << 20] {
				let staged = gpu().with_staging_buffers(bytes);
				let mut c = old.clone();
				staged
					.matmul(c.as_mut(), Accum::Add, (a, b), alpha, (faer::Par::rayon(0), Precision::F64))
					.unwrap();
				assert!(
					same_bits(c.as_ref(), expected.as_ref()),
					"{} {what}, chunks of {bytes} bytes",
					T::NAME
				);
				let report = staged.last_report().unwrap();
				assert!(!report.times.upload.is_zero() && !report.times.download.is_zero(), "{report}");
				let round_trip = staged.upload(a).unwrap().download().unwrap();
				assert!(same_bits(round_trip.as_ref(), a), "{what}: round trip in chunks of {bytes} bytes");
			}
		}
	}
	every_type!(case);
}

/// host products run out of core, tile by tile (ragged tiles, budgets forced small), equal the
/// in-core products bit for bit with the same plan: inner-scaled operands (balanced by the whole
/// product's shifts), rows and columns of very different scales, a NaN and an infinity,
/// `Accum::Add` and alpha, target precisions and explicit plans of both schemes
#[test]
#[ignore = "needs a Hopper GPU"]
fn out_of_core_products_equal_in_core() {
	fn case<T: Scalar>() {
		let (m, k, n) = (301, 150, 203);
		let family = Pair::InnerScaled {
			pattern: InnerPattern::Blocks,
			range: 30,
		};
		let (mut a, mut b) = pair::<T>(family, m, k, n, 5);
		for h in 0..k {
			let scaled = |x: T, e: i32| T::from_parts(x.re() * 2f64.powi(e), x.im() * 2f64.powi(e));
			a[(7, h)] = scaled(a[(7, h)], -60);
			b[(h, 11)] = scaled(b[(h, 11)], 40);
		}
		a[(40, 3)] = T::from_parts(f64::NAN, 0.0);
		b[(5, 190)] = T::from_parts(f64::INFINITY, 0.0);
		let old = random_matrix::<T>(m, n, 1.0, 9);
		let alpha = T::from_parts(0.75, -0.5);
		let precisions = [
			Precision::F64,
			Precision::F32,
			Precision::Bits(T::MANTISSA_BITS - 6),
			Precision::SchemeII { moduli: 9 },
			Precision::SchemeI { slices: 6 },
		];
		for precision in precisions {
			let in_core = gpu();
			let mut expected = old.clone();
			in_core
				.matmul(
					expected.as_mut(),
					Accum::Add,
					(a.as_ref(), b.as_ref()),
					alpha,
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			let whole = in_core.last_report().unwrap();
			assert!(whole.tiles.is_none() && whole.plan.scheme != Scheme::Native, "{whole}");
			// (whole, every type's product takes more than 3 MiB here)
			for budget in [1 << 20, 2 << 20, 3 << 20] {
				let tiled = gpu().with_device_memory(budget);
				let mut c = old.clone();
				match tiled.matmul(
					c.as_mut(),
					Accum::Add,
					(a.as_ref(), b.as_ref()),
					alpha,
					(faer::Par::rayon(0), precision),
				) {
					// complex tiles of 64 x 64 need more than 1 MiB
					Err(Error::OutOfMemory { .. }) if budget == 1 << 20 && T::IS_COMPLEX => continue,
					other => other.unwrap(),
				}
				let report = tiled.last_report().unwrap();
				let (rows, cols) = report.tiles.unwrap_or_else(|| panic!("{budget} bytes: not tiled: {report}"));
				assert!(rows * cols >= 2, "{report}");
				let plan = |r: &emugemm::Report| {
					(
						r.plan.scheme,
						r.plan.predicted_bits.to_bits(),
						r.plan.native_rows,
						r.native_rows.clone(),
					)
				};
				assert_eq!(
					plan(&report),
					plan(&whole),
					"{} {precision:?} {budget} bytes: {report} against {whole}",
					T::NAME
				);
				assert_eq!(report.nonfinite_entries, whole.nonfinite_entries);
				assert!(
					same_bits(c.as_ref(), expected.as_ref()),
					"{} {precision:?}, {rows} x {cols} tiles: {report}",
					T::NAME
				);
			}
		}
	}
	every_type!(case);
}

/// host products large enough to compute in column tiles (whose downloads overlap the next
/// tiles' compute) equal the device-resident product, computed whole, bit for bit: inner-scaled
/// operands, `Accum::Add` and alpha, real and complex, a target precision and an explicit plan
#[test]
#[ignore = "needs a Hopper GPU"]
fn host_products_in_column_tiles_equal_whole() {
	fn case<T: Scalar>(n: usize) {
		let emu = gpu();
		let family = Pair::InnerScaled {
			pattern: InnerPattern::Random,
			range: 20,
		};
		let (a, b) = pair::<T>(family, n, 1000, n + 3, 7);
		let old = random_matrix::<T>(n, n + 3, 1.0, 8);
		let alpha = T::from_parts(-1.25, 0.5);
		for precision in [Precision::F64, Precision::SchemeII { moduli: 12 }] {
			let mut c = old.clone();
			emu.matmul(
				c.as_mut(),
				Accum::Add,
				(a.as_ref(), b.as_ref()),
				alpha,
				(faer::Par::rayon(0), precision),
			)
			.unwrap();
			let staged = emu.last_report().unwrap();
			let (da, db) = (emu.upload(a.as_ref()).unwrap(), emu.upload(b.as_ref()).unwrap());
			let mut dc = emu.upload(old.as_ref()).unwrap();
			emu.matmul_device(&mut dc, Accum::Add, (&da, &db), alpha, precision).unwrap();
			let whole = emu.last_report().unwrap();
			let plan = |r: &emugemm::Report| (r.plan.scheme, r.plan.predicted_bits.to_bits(), r.native_rows.clone());
			assert_eq!(plan(&staged), plan(&whole), "{} {precision:?}", T::NAME);
			assert_ne!(whole.plan.scheme, Scheme::Native);
			assert!(
				same_bits(c.as_ref(), dc.download().unwrap().as_ref()),
				"{} {precision:?}: {staged}",
				T::NAME
			);
		}
	}
	case::<f64>(4096);
	case::<c64>(2048);
}

/// nalgebra views (a strided block, a transposed block) staged in chunks equal the same product of
/// faer copies on the device, bit for bit
#[cfg(feature = "nalgebra")]
#[test]
#[ignore = "needs a Hopper GPU"]
fn staged_nalgebra_views() {
	let a = nalgebra::DMatrix::<f64>::from_fn(90, 80, |i, j| ((i * 31 + j * 17) % 23) as f64 - 11.5);
	let b = nalgebra::DMatrix::<f64>::from_fn(80, 70, |i, j| 1.0 / (1.0 + i as f64 + 3.0 * j as f64));
	let (va, vb) = (a.view((3, 5), (41, 37)), b.view((2, 1), (29, 37)));
	let vbt = vb.transpose();
	let staged = gpu().with_staging_buffers(1000);
	let c = va.emu_mul_with(&staged, &vbt, Precision::F64).unwrap();
	let report = staged.last_report().unwrap();
	assert!(!report.times.upload.is_zero(), "{report}");
	let fa = Mat::from_fn(41, 37, |i, j| va[(i, j)]);
	let fb = Mat::from_fn(37, 29, |i, j| vbt[(i, j)]);
	let resident = gpu();
	let mut dc = resident.zeros_on_device::<f64>(41, 29).unwrap();
	let (da, db) = (resident.upload(fa.as_ref()).unwrap(), resident.upload(fb.as_ref()).unwrap());
	resident
		.matmul_device(&mut dc, Accum::Replace, (&da, &db), 1.0, Precision::F64)
		.unwrap();
	let expected = dc.download().unwrap();
	assert!((0..41).all(|i| (0..29).all(|j| c[(i, j)].to_bits() == expected[(i, j)].to_bits())));
}

/// `emu`'s product `old + alpha a b`, from the host and from device matrices it uploaded; the
/// reports of both
fn host_and_device<T: Scalar>(
	emu: &Emulator,
	(a, b, old): (&Mat<T>, &Mat<T>, &Mat<T>),
	alpha: T,
	precision: Precision,
) -> [(Mat<T>, Report); 2] {
	let mut c = old.clone();
	emu.matmul(
		c.as_mut(),
		Accum::Add,
		(a.as_ref(), b.as_ref()),
		alpha,
		(faer::Par::rayon(0), precision),
	)
	.unwrap();
	let host = (c, emu.last_report().unwrap());
	let (da, db, mut dc) = (
		emu.upload(a.as_ref()).unwrap(),
		emu.upload(b.as_ref()).unwrap(),
		emu.upload(old.as_ref()).unwrap(),
	);
	emu.matmul_device(&mut dc, Accum::Add, (&da, &db), alpha, precision).unwrap();
	let report = emu.last_report().unwrap();
	[host, (dc.download().unwrap(), report)]
}

/// the entries of `c` that differ from `expected` in their bits, outside the rows `native` (which
/// cuBLAS computes per tile, and whose kernel for a narrower tile may round differently)
fn differing<T: Scalar>(c: &Mat<T>, expected: &Mat<T>, native: &[usize]) -> usize {
	(0..c.nrows())
		.filter(|i| native.binary_search(i).is_err())
		.flat_map(|i| (0..c.ncols()).map(move |j| (i, j)))
		.filter(|&(i, j)| !same_bits(c.as_ref().submatrix(i, j, 1, 1), expected.as_ref().submatrix(i, j, 1, 1)))
		.count()
}

/// a context over two pipelines that are both on GPU 0 splits a product's rows between them
/// (each its own panels, bound pass and tiles, the panels of `B` shared between them by copies)
/// and gives the one GPU's result bit for bit, from host and from device matrices: inner-scaled
/// operands, ragged rows, a product of one row (one pipeline without rows), `Accum::Add`, a
/// target precision and an explicit plan, in core and with budgets forcing several tiles per
/// pipeline
#[test]
#[ignore = "needs a Hopper GPU"]
fn split_over_two_logical_devices() {
	fn case<T: Scalar>() {
		let family = Pair::InnerScaled {
			pattern: InnerPattern::Alternating,
			range: 25,
		};
		let alpha = T::from_parts(1.5, 0.25);
		// the last shape's tiles are large enough to be downloaded in column tiles
		// a budget that leaves the device matrices room for tiles of 64 x 64, not for one per pipeline
		let small = Some(size_of::<T>() << 19);
		for ((m, k, n), budgets) in [
			((333, 200, 190), &[None, small][..]),
			((1, 40, 3), &[None, small]),
			((4096, 64, 4096), &[None]),
		] {
			let (a, b) = pair::<T>(family, m, k, n, 11);
			let old = random_matrix::<T>(m, n, 1.0, 12);
			for precision in [Precision::F64, Precision::SchemeII { moduli: 10 }] {
				let [(expected, whole), _] = host_and_device(&gpu(), (&a, &b, &old), alpha, precision);
				assert_ne!(whole.plan.scheme, Scheme::Native, "{whole}");
				let plan = |r: &Report| (r.plan.scheme, r.plan.predicted_bits.to_bits(), r.native_rows.clone());
				for &budget in budgets {
					let mut two = on_path(Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false));
					if let Some(bytes) = budget {
						two = two.with_device_memory(bytes);
					}
					assert_eq!(two.gpus(), vec![0, 0]);
					for (c, report) in host_and_device(&two, (&a, &b, &old), alpha, precision) {
						let (rows, _) = report.tiles.unwrap_or_else(|| panic!("not split: {report}"));
						assert!(rows >= 2, "{report}");
						assert_eq!(plan(&report), plan(&whole), "{report}");
						let differ = differing(&c, &expected, &whole.native_rows);
						assert_eq!(differ, 0, "{} {m}x{n}x{k} {precision:?} {budget:?}: {report}", T::NAME);
					}
				}
			}
		}
	}
	every_type!(case);
	assert!(Emulator::on_gpus(&[]).is_err() && Emulator::on_gpus(&[0; 9]).is_err());
	let (one, two) = (gpu(), on_path(Emulator::on_gpus(&[0, 0]).unwrap()));
	let a = one.upload(Mat::<f64>::identity(4, 4).as_ref()).unwrap();
	let mut c = two.zeros_on_device::<f64>(4, 4).unwrap();
	let err = two
		.matmul_device(&mut c, Accum::Replace, (&a, &a), 1.0, Precision::F64)
		.unwrap_err();
	assert!(matches!(err, Error::Placement { .. }), "{err}");
}

/// on a machine with two GPUs or more: a product split over GPUs 0 and 1 gives GPU 0's result
/// bit for bit, from host and from device matrices (f64, c64 and f32, ragged rows and columns,
/// `Accum::Add`, in core and in several tiles per GPU); skipped, and said so, with one GPU, unless
/// `EMUGEMM_TEST_GPUS=2` says that the machine has two (then it fails)
#[test]
#[ignore = "needs a Hopper GPU"]
fn split_over_two_gpus() {
	if Emulator::on_gpus(&[0, 1]).is_err() {
		// (the split is tested on one GPU by split_over_two_logical_devices)
		skipped_on_one_gpu("split_over_two_gpus");
		return;
	}
	fn case<T: Scalar>() {
		let (a, b) = (random_matrix::<T>(1001, 700, 1.0, 21), random_matrix::<T>(700, 651, 1.0, 22));
		let old = random_matrix::<T>(1001, 651, 1.0, 23);
		let alpha = T::from_parts(1.0, 0.0);
		let [(expected, whole), (resident, _)] = host_and_device(&gpu(), (&a, &b, &old), alpha, Precision::F64);
		assert!(
			whole.native_rows.is_empty() && same_bits(expected.as_ref(), resident.as_ref()),
			"{whole}"
		);
		// tiles per GPU from the host, and from device matrices beside them
		for budget in [None, Some(size_of::<T>() << 22)] {
			let mut emu = on_path(Emulator::on_gpus(&[0, 1]).unwrap().with_native_candidate(false));
			if let Some(bytes) = budget {
				emu = emu.with_device_memory(bytes);
			}
			for (c, report) in host_and_device(&emu, (&a, &b, &old), alpha, Precision::F64) {
				assert!(report.tiles.is_some() && report.plan == whole.plan, "{report}");
				assert!(same_bits(c.as_ref(), expected.as_ref()), "{}: {report}", T::NAME);
			}
		}
	}
	case::<f64>();
	case::<c64>();
	case::<f32>();
}

/// an `Auto` context routes small host products at a target precision to the host's cores (the
/// report gives both predictions), large ones and explicit plans to the GPU; a `Gpu` context never
/// routes
#[test]
#[ignore = "needs a Hopper GPU"]
fn auto_routes_small_host_products_to_the_host() {
	let auto = Emulator::new().unwrap();
	assert_eq!(auto.backend(), Backend::Gpu, "{NEEDS_GPU}");
	assert!(auto.host_routing() && !gpu().host_routing());
	let small = random_matrix::<f64>(64, 64, 1.0, 1);
	let c = small.emu_mul_with(&auto, &small, Precision::F64).unwrap();
	let report = auto.last_report().unwrap();
	let routing = report.host_routing.expect("a 64 x 64 product runs on the host");
	assert!(
		routing.host_seconds < routing.gpu_seconds && report.backend == Backend::Native,
		"{report}"
	);
	let native = Emulator::with_backend(Backend::Native).unwrap();
	assert!(same_bits(
		c.as_ref(),
		small.emu_mul_with(&native, &small, Precision::F64).unwrap().as_ref()
	));
	let _ = small.emu_mul_with(&auto, &small, Precision::SchemeII { moduli: 8 }).unwrap();
	assert_eq!(auto.last_report().unwrap().backend, Backend::Gpu);
	let large = random_matrix::<f64>(2048, 2048, 1.0, 2);
	let _ = large.emu_mul_with(&auto, &large, Precision::F64).unwrap();
	let report = auto.last_report().unwrap();
	assert!(report.host_routing.is_none() && !report.times.upload.is_zero(), "{report}");
}

/// empty products (a dimension of zero) report on the GPU what they report on the CPU: a native
/// plan for the same reason, with host and with device operands
#[test]
#[ignore = "needs a Hopper GPU"]
fn empty_products_report_as_the_oracle() {
	let (g, o) = (gpu(), cpu());
	for (m, n, k) in [(0, 5, 7), (5, 0, 7), (5, 7, 0), (0, 0, 0)] {
		for precision in [Precision::F64, Precision::SchemeII { moduli: 14 }, Precision::SchemeI { slices: 3 }] {
			let (a, b) = (random_matrix::<f64>(m, k, 1.0, 1), random_matrix::<f64>(k, n, 1.0, 2));
			let old = random_matrix::<f64>(m, n, 1.0, 3);
			let at = format!("{m}x{n}x{k} {precision:?}");
			let reason = |r: &Report| (r.plan.scheme, r.native_reason);
			let (mut gc, mut oc) = (old.clone(), old.clone());
			for (emu, c) in [(&g, &mut gc), (&o, &mut oc)] {
				emu.matmul(
					c.as_mut(),
					Accum::Add,
					(a.as_ref(), b.as_ref()),
					2.0,
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			}
			let (gr, or) = (g.last_report().unwrap(), o.last_report().unwrap());
			assert_eq!(reason(&gr), reason(&or), "{at}: {gr} / {or}");
			assert_eq!(or.native_reason, Some(emugemm::NativeReason::NotEmulated), "{at}");
			assert!(same_bits(gc.as_ref(), oc.as_ref()), "{at}");
			let (da, db) = (g.upload(a.as_ref()).unwrap(), g.upload(b.as_ref()).unwrap());
			let mut dc = g.zeros_on_device::<f64>(m, n).unwrap();
			g.matmul_device(&mut dc, Accum::Replace, (&da, &db), 2.0, precision).unwrap();
			assert_eq!(reason(&g.last_report().unwrap()), reason(&or), "{at} on the device");
		}
	}
}

/// the K boundaries, one below, at and one above each: a scheme I pass (f64 8 slices: 16,256;
/// c64: 8,064), the one-launch 3M kernel of complex scheme II (8,192), the unfused INT32 chunk
/// (131,056) and the bound's window (f64: 133,144; c64: 66,572 terms' worth). The GPU gives the
/// oracle's plan and bits on each
#[test]
#[ignore = "needs a Hopper GPU"]
fn k_boundaries_as_the_oracle() {
	fn around<T: Scalar>((g, o): (&Emulator, &Emulator), boundary: usize, (m, n): (usize, usize), precision: Precision) {
		for k in [boundary - 1, boundary, boundary + 1] {
			let (a, b) = (random_matrix::<T>(m, k, 1.0, 1), random_matrix::<T>(k, n, 1.0, 2));
			same_as_oracle(g, o, a.as_ref(), b.as_ref(), precision);
		}
	}
	let (g, o) = (gpu(), cpu());
	let unfused = gpu().with_fused_products(false);
	around::<f64>((&g, &o), 16_256, (5, 3), Precision::SchemeI { slices: 8 });
	around::<c64>((&g, &o), 8_064, (5, 3), Precision::SchemeI { slices: 8 });
	around::<c64>((&g, &o), 8_192, (5, 3), Precision::SchemeII { moduli: 14 });
	around::<f64>((&unfused, &o), 131_056, (4, 3), Precision::SchemeII { moduli: 14 });
	around::<f64>((&g, &o), 133_144, (4, 3), Precision::F64);
	around::<c64>((&g, &o), 66_572, (4, 3), Precision::F64);
}

/// the policy's one sequence (screen, bound, plan, separately scaled parts) reaches the same plan
/// from the CPU oracle, the GPU in core, the GPU in tiles and a product split over two pipelines:
/// on ordinary inputs, inputs the screen sends native, and inner-scaled ones; the tiles and the
/// split product weigh no separately scaled parts, so the complex inputs here are ones where the
/// parts do not pay
#[test]
#[ignore = "needs a Hopper GPU"]
fn one_policy_for_every_path() {
	fn check<T: Scalar>(precision: Precision) {
		let (m, k, n) = (700, 1024, 600);
		let inner = pair::<T>(
			Pair::InnerScaled {
				pattern: InnerPattern::Alternating,
				range: 30,
			},
			m,
			k,
			n,
			9,
		);
		let inputs = [
			("phi 1", (random_matrix::<T>(m, k, 1.0, 1), random_matrix::<T>(k, n, 1.0, 2))),
			("phi 4", (random_matrix::<T>(m, k, 4.0, 3), random_matrix::<T>(k, n, 4.0, 4))),
			("inner-scaled", inner),
		];
		// a budget of the operands' and the output's bytes: below the in-core product's footprint
		// (its planes), above that of tiles of 64 x 64
		let budget = (m * k + k * n + m * n) * size_of::<T>();
		let paths = [
			("GPU in core", gpu()),
			("GPU in tiles", gpu().with_device_memory(budget)),
			(
				"split over two pipelines",
				on_path(Emulator::on_gpus(&[0, 0]).unwrap().with_native_candidate(false)),
			),
		];
		for (input, (a, b)) in &inputs {
			let oracle = cpu().plan(a.as_ref(), b.as_ref(), precision).unwrap();
			for (path, emu) in &paths {
				let _ = emulated(emu, a.as_ref(), b.as_ref(), precision);
				let report = emu.last_report().unwrap();
				if *path != "GPU in core" {
					assert!(report.tiles.is_some(), "{} {input} {path}: not tiled: {report}", T::NAME);
				}
				assert_eq!(
					plan_key(&report.plan),
					plan_key(&oracle),
					"{} {input} {path}: {report} / oracle {oracle}",
					T::NAME
				);
			}
		}
	}
	check::<f64>(Precision::F64);
	check::<f32>(Precision::F32);
	check::<c64>(Precision::F64);
}
