//! the fused scheme I kernel (`cuda/sm90_scheme1_fused.cu`, the default scheme I route on the GPU where the
//! cost model does not price the unfused pipeline cheaper) against
//! the CPU oracle and the unfused GPU route, bit for bit: every slice count, every type, odd
//! shapes, K passes, alpha and accumulation, adversarial and non-finite inputs
//!
//! these tests need an NVIDIA Hopper GPU and a build with the `cuda` feature: they are ignored
//! otherwise (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::{cpu, same_bits};
use emugemm::testing::{Adversarial, adversarial_matrix, random_matrix};
use emugemm::{Accum, Backend, Emulator, Precision, Route, Scalar, Scheme};
use faer::{Mat, MatRef, c32, c64};

/// the fused route (for every product, not only where the cost model prices it faster) and the
/// unfused one
fn gpus() -> (Emulator, Emulator) {
	let fused = Emulator::with_backend(Backend::Gpu)
		.unwrap_or_else(|e| panic!("these tests need a Hopper GPU and the cuda feature: {e}"))
		.with_priced_routes(false);
	assert!(fused.fused_products());
	(fused, Emulator::with_backend(Backend::Gpu).unwrap().with_fused_products(false))
}

/// `alpha a b (+ old)` by `emu`
fn product<T: Scalar>(emu: &Emulator, a: MatRef<'_, T>, b: MatRef<'_, T>, p: u32, alpha: T, old: Option<&Mat<T>>) -> Mat<T> {
	let mut c = old.cloned().unwrap_or_else(|| Mat::zeros(a.nrows(), b.ncols()));
	let accum = if old.is_some() { Accum::Add } else { Accum::Replace };
	emu.matmul(
		c.as_mut(),
		accum,
		(a, b),
		alpha,
		(faer::Par::rayon(0), Precision::SchemeI { slices: p }),
	)
	.expect("scheme I product");
	c
}

/// the entries whose bits differ (NaN equal to NaN), part by part
fn differing<T: Scalar>(x: &Mat<T>, y: &Mat<T>) -> usize {
	let same = |u: f64, v: f64| u.to_bits() == v.to_bits() || (u.is_nan() && v.is_nan());
	(0..x.ncols())
		.flat_map(|j| (0..x.nrows()).map(move |i| (i, j)))
		.filter(|&(i, j)| !(same(x[(i, j)].re(), y[(i, j)].re()) && same(x[(i, j)].im(), y[(i, j)].im())))
		.count()
}

/// fused GPU, unfused GPU and CPU oracle agree bit for bit on `alpha a b (+ old)` with `p` slices
fn agree<T: Scalar>(gpus: &(Emulator, Emulator), a: MatRef<'_, T>, b: MatRef<'_, T>, p: u32, alpha: T, old: Option<&Mat<T>>, what: &str) {
	let oracle = cpu();
	let fused = product(&gpus.0, a, b, p, alpha, old);
	let report = gpus.0.last_report().unwrap();
	assert_eq!(report.plan.scheme, Scheme::SchemeI { slices: p });
	let unfused = product(&gpus.1, a, b, p, alpha, old);
	let unfused_report = gpus.1.last_report().unwrap();
	// the routes that ran: a fallback from one to the other would compare a route with itself
	assert_eq!((report.route, unfused_report.route), (Route::Fused, Route::Unfused));
	let expected = product(&oracle, a, b, p, alpha, old);
	let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
	let (vs_cpu, vs_unfused) = (differing(&fused, &expected), differing(&fused, &unfused));
	println!(
		"{} {m}x{k}x{n} p={p} {what} ({} passes): fused {:?}, unfused {:?}; differing from the CPU {vs_cpu}, from unfused {vs_unfused}",
		T::NAME,
		report.plan.k_passes,
		report.times.products,
		unfused_report.times.products + unfused_report.times.reconstruct,
	);
	assert_eq!(vs_cpu, 0, "{} {m}x{k}x{n} p={p} {what}: fused differs from the CPU oracle", T::NAME);
	assert_eq!(
		vs_unfused,
		0,
		"{} {m}x{k}x{n} p={p} {what}: fused differs from the unfused route",
		T::NAME
	);
}

fn one<T: Scalar>() -> T {
	T::from_parts(1.0, 0.0)
}

/// every slice count on the odd shapes (TMA fills ragged tiles with zeros) and adversarial inputs
fn bit_exact<T: Scalar>() {
	let g = gpus();
	for (m, k, n) in [(1, 1, 1), (7, 33, 5), (33, 257, 7), (200, 300, 272)] {
		let a = random_matrix::<T>(m, k, 2.0, 1);
		let b = random_matrix::<T>(k, n, 2.0, 2);
		for p in 1..=8 {
			agree(&g, a.as_ref(), b.as_ref(), p, one(), None, "phi=2");
		}
	}
	for (x, y) in [
		(Adversarial::ScaledRows, Adversarial::ScaledCols),
		(Adversarial::ZeroRows, Adversarial::HugeEntries),
		(Adversarial::Subnormal, Adversarial::ScaledCols),
		(Adversarial::HugeEntries, Adversarial::Subnormal),
	] {
		let a = adversarial_matrix::<T>(x, 130, 70, 3);
		let b = adversarial_matrix::<T>(y, 70, 50, 4);
		for p in 1..=8 {
			agree(&g, a.as_ref(), b.as_ref(), p, one(), None, &format!("{x:?} x {y:?}"));
		}
	}
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_bit_exact_f64() {
	bit_exact::<f64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_bit_exact_f32() {
	bit_exact::<f32>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_bit_exact_c64() {
	bit_exact::<c64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_bit_exact_c32() {
	bit_exact::<c32>();
}

/// the design's large odd shape (many tiles per SM, grouped raster, partial tiles on both sides)
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_large_shape() {
	let g = gpus();
	let a = random_matrix::<f64>(1000, 3001, 1.0, 5);
	let b = random_matrix::<f64>(3001, 777, 1.0, 6);
	for p in 1..=8 {
		agree(&g, a.as_ref(), b.as_ref(), p, one(), None, "phi=1");
	}
	let a = random_matrix::<c32>(1000, 3001, 1.0, 7);
	let b = random_matrix::<c32>(3001, 777, 1.0, 8);
	for p in [2, 5] {
		agree(&g, a.as_ref(), b.as_ref(), p, one(), None, "phi=1");
	}
}

/// K beyond the exact INT32 bound: passes added in order through the kernel's carry buffer
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_k_passes() {
	let g = gpus();
	let passes = |emu: &Emulator| emu.last_report().unwrap().plan.k_passes;
	let a = random_matrix::<f64>(9, 40000, 1.0, 1);
	let b = random_matrix::<f64>(40000, 5, 1.0, 2);
	agree(&g, a.as_ref(), b.as_ref(), 8, one(), None, "3 passes");
	assert_eq!(passes(&g.0), 3);
	let a = random_matrix::<f32>(5, 140_000, 1.0, 3);
	let b = random_matrix::<f32>(140_000, 3, 1.0, 4);
	agree(&g, a.as_ref(), b.as_ref(), 1, one(), None, "2 passes");
	assert_eq!(passes(&g.0), 2);
	let a = random_matrix::<c64>(130, 20000, 1.0, 5);
	let b = random_matrix::<c64>(20000, 70, 1.0, 6);
	agree(&g, a.as_ref(), b.as_ref(), 8, one(), None, "3 passes");
	assert_eq!(passes(&g.0), 3);
	let a = random_matrix::<c32>(7, 30000, 1.0, 7);
	let b = random_matrix::<c32>(30000, 9, 1.0, 8);
	let old = random_matrix::<c32>(7, 9, 1.0, 9);
	agree(
		&g,
		a.as_ref(),
		b.as_ref(),
		5,
		c32::new(-0.5, 2.0),
		Some(&old),
		"3 passes, alpha, accumulate",
	);
	assert_eq!(passes(&g.0), 3);
}

/// alpha (complex) and accumulation into the destination, transposed and strided views
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_alpha_and_accumulation() {
	let g = gpus();
	let big = random_matrix::<c64>(150, 160, 1.0, 9);
	let a = big.as_ref().submatrix(3, 5, 120, 130).transpose();
	let b = random_matrix::<c64>(120, 70, 1.0, 10);
	let b = b.as_ref().reverse_rows();
	let old = random_matrix::<c64>(130, 70, 1.0, 11);
	for p in 1..=8 {
		agree(&g, a, b, p, c64::new(0.75, -1.5), Some(&old), "alpha, accumulate");
	}
	let a = random_matrix::<f32>(70, 90, 1.0, 12);
	let b = random_matrix::<f32>(90, 300, 1.0, 13);
	let old = random_matrix::<f32>(70, 300, 1.0, 14);
	for p in 1..=8 {
		agree(&g, a.as_ref(), b.as_ref(), p, -3.0, Some(&old), "alpha, accumulate");
	}
}

/// NaN and infinities: the native non-finite pattern (fixup) and all other entries bit for bit
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_scheme1_nonfinite_rows_and_columns() {
	let g = gpus();
	let mut a = random_matrix::<f64>(140, 40, 1.0, 1);
	let mut b = random_matrix::<f64>(40, 60, 1.0, 2);
	a[(2, 3)] = f64::NAN;
	a[(135, 0)] = f64::INFINITY;
	b[(7, 1)] = f64::NEG_INFINITY;
	b[(39, 59)] = f64::NAN;
	let mut z = random_matrix::<c64>(140, 40, 1.0, 3);
	z[(70, 10)] = c64::new(1.0, f64::INFINITY);
	let w = random_matrix::<c64>(40, 60, 1.0, 4);
	for p in 1..=8 {
		agree(&g, a.as_ref(), b.as_ref(), p, one(), None, "non-finite");
		assert_eq!(g.0.last_report().unwrap().nonfinite_entries, 2 * 60 + 2 * 140 - 4);
		agree(&g, z.as_ref(), w.as_ref(), p, one(), None, "non-finite");
		let native = &a * &b;
		let fused = product(&g.0, a.as_ref(), b.as_ref(), p, 1.0, None);
		for j in 0..60 {
			for i in 0..140 {
				let (x, y) = (fused[(i, j)], native[(i, j)]);
				assert_eq!((x.is_nan(), x.is_infinite()), (y.is_nan(), y.is_infinite()), "p={p} ({i}, {j})");
			}
		}
	}
	// the same bits as a product of the finite parts alone, away from the non-finite rows/columns
	assert!(same_bits(
		product(&g.0, a.as_ref().subrows(3, 100), b.as_ref().subcols(2, 50), 4, 1.0, None).as_ref(),
		product(&cpu(), a.as_ref().subrows(3, 100), b.as_ref().subcols(2, 50), 4, 1.0, None).as_ref()
	));
}

/// the default context runs each scheme I plan on the route the cost model prices cheaper (on
/// Hopper at n = 2048: 1 and 2 slices unfused, 4 fused), says so in the report, and gives the
/// bits of the fused kernel
#[test]
#[ignore = "needs a Hopper GPU"]
fn scheme1_default_route_is_the_priced_one() {
	let g = gpus();
	let priced = Emulator::with_backend(Backend::Gpu).unwrap();
	let a = random_matrix::<f32>(2048, 2048, 1.0, 1);
	let b = random_matrix::<f32>(2048, 2048, 1.0, 2);
	for (p, route) in [(1, Route::Unfused), (2, Route::Unfused), (4, Route::Fused)] {
		let c = product(&priced, a.as_ref(), b.as_ref(), p, 1.0, None);
		assert_eq!(priced.last_report().unwrap().route, route, "p={p}");
		let fused = product(&g.0, a.as_ref(), b.as_ref(), p, 1.0, None);
		assert_eq!(g.0.last_report().unwrap().route, Route::Fused, "p={p}");
		assert_eq!(differing(&c, &fused), 0, "p={p}");
	}
}
