//! rank-k updates on device memory the crate does not own (`Emulator::rank_k_on_stream`): the
//! entries a structure names equal bit for bit those of the GEMM `a aᴴ` on the same views
//! (`gemm_on_stream`, same plan), the diagonal real for complex types, the other entries and the
//! rows past the destination's never written, `c` not read under `beta = 0`; and equal to the CPU
//! oracle's update. Outputs of several tile rows and columns, so that the fused products skip the
//! tiles off the triangle
//!
//! these tests need an NVIDIA GPU and a build with the `cuda` feature: they are ignored otherwise
//! (run them with `--include-ignored`; without a GPU they then fail, never pass)
#![cfg(feature = "cuda")]

mod common;

use common::device::{download, padded, stream, upload};
use common::{cpu, gpu, plan_key};
use emugemm::testing::{named, random_matrix};
use emugemm::{Accum, DeviceView, DeviceViewMut, Emulator, Precision, Scalar, Scheme};
use faer::linalg::matmul::triangular::BlockStructure;
use faer::traits::Conjugate;
use faer::{Mat, c32, c64};
use std::ops::Mul;

fn bits<T: Scalar>(x: &T) -> &[u8] {
	bytemuck::bytes_of(x)
}

/// one update `c = alpha op(a) op(a)ᴴ + beta c` of an `n x n` destination (`op(a)` `n x k`,
/// stored `k x n` and read adjoint where `adjoint`) against the GEMM on the same views and the
/// CPU oracle's update; with `special`, `a` holds a NaN and an infinity (rows and columns of
/// entries computed natively)
fn one_case<T>(emu: &Emulator, (structure, adjoint, special): (BlockStructure, bool, bool), (alpha, beta): (f64, f64), precision: Precision)
where
	T: Scalar + Conjugate<Canonical = T> + Mul<Output = T>,
{
	let (n, k) = (600, 160);
	let stream = stream();
	let stored = if adjoint { (k, n) } else { (n, k) };
	let (lda, ldc) = (stored.0 + 3, n + 2);
	let mut a = random_matrix::<T>(stored.0, stored.1, 1.0, 21);
	if special {
		a[(5, 7)] = T::from_parts(f64::NAN, 0.0);
		a[(stored.0 - 2, stored.1 / 2)] = T::from_parts(f64::INFINITY, 1.0);
	}
	let old = random_matrix::<T>(n, n, 1.0, 22);
	let pad = T::from_parts(7.0, -7.0);
	let nan = T::from_parts(f64::NAN, f64::NAN);
	let start = if beta == 0.0 { Mat::from_fn(n, n, |_, _| nan) } else { old.clone() };
	let da = upload(&stream, &padded(a.as_ref(), lda, pad));
	let (alpha_t, beta_t) = (T::RealPart::from_parts(alpha, 0.0), T::RealPart::from_parts(beta, 0.0));
	let what = format!(
		"{} {precision:?} {structure:?} adjoint {adjoint} special {special} beta {beta}",
		T::NAME
	);
	// the update, then the GEMM of the same views
	let mut results = Vec::new();
	for update in [true, false] {
		let mut dc = upload(&stream, &padded(start.as_ref(), ldc, pad));
		{
			// SAFETY: the buffers hold these many elements of T, uploaded from them
			let a_t = unsafe { da.transmute::<T>(lda * stored.1) }.unwrap();
			let mut c_t = unsafe { dc.transmute_mut::<T>(ldc * n) }.unwrap();
			let view = DeviceView::new(&a_t, stored, lda).unwrap();
			let av = if adjoint { view.adjoint() } else { view };
			let cv = DeviceViewMut::new(&mut c_t, (n, n), ldc).unwrap();
			let on = (precision, (&stream).into());
			let done = if update {
				emu.rank_k_on_stream((cv, structure), alpha_t, av, beta_t, on)
			} else {
				let (alpha, beta) = (T::from_parts(alpha, 0.0), T::from_parts(beta, 0.0));
				emu.gemm_on_stream(cv, alpha, (av, av.adjoint()), beta, on)
			};
			done.unwrap_or_else(|e| panic!("{what}: {e}"));
		}
		results.push((download::<T>(&stream, &dc), emu.last_report().expect("a report")));
	}
	let ((got, update), (product, gemm)) = (&results[0], &results[1]);
	assert_eq!(plan_key(&update.plan), plan_key(&gemm.plan), "{what}: the GEMM's plan");
	assert_ne!(update.plan.scheme, Scheme::Native, "{what}: the emulation ran");
	// the CPU oracle's update, on `beta c` as the device scales it
	let ha = if adjoint {
		Mat::from_fn(n, k, |i, j| {
			let x = a[(j, i)];
			T::from_parts(x.re(), -x.im())
		})
	} else {
		a.clone()
	};
	let scaled = Mat::from_fn(n, n, |i, j| T::from_parts(beta, 0.0) * old[(i, j)]);
	let (mut oracle, accum) = if beta == 0.0 {
		(Mat::from_fn(n, n, |_, _| nan), Accum::Replace)
	} else {
		(scaled, Accum::Add)
	};
	let oracle_emu = cpu();
	oracle_emu
		.rank_k_update((&mut oracle, structure), accum, &ha, alpha_t, (faer::Par::rayon(0), precision))
		.unwrap();
	assert_eq!(
		plan_key(&oracle_emu.last_report().unwrap().plan),
		plan_key(&update.plan),
		"{what}: the oracle's plan"
	);
	let mut written = 0;
	for j in 0..n {
		for i in 0..ldc {
			let x = &got[i + j * ldc];
			if i >= n {
				assert_eq!(bits(x), bits(&pad), "{what}: padding ({i}, {j}) written");
			} else if named(structure, i, j) {
				let p = product[i + j * ldc];
				let want = if i == j { T::from_parts(p.re(), 0.0) } else { p };
				assert_eq!(bits(x), bits(&want), "{what}: ({i}, {j}) against the GEMM");
				let y = oracle[(i, j)];
				assert!(as_oracle(*x, y), "{what}: ({i}, {j}) against the oracle: {x:?}, {y:?}");
				written += 1;
			} else {
				assert_eq!(bits(x), bits(&start[(i, j)]), "{what}: ({i}, {j}) off the structure written");
			}
		}
	}
	assert!(written >= n * (n - 1) / 2, "{what}: {written} entries written");
	// the GEMM itself against the oracle's product, for the whole matrix
	let mut whole = Mat::from_fn(n, n, |i, j| {
		if beta == 0.0 {
			T::from_parts(0.0, 0.0)
		} else {
			T::from_parts(beta, 0.0) * old[(i, j)]
		}
	});
	cpu()
		.matmul(
			whole.as_mut(),
			accum,
			(ha.as_ref(), ha.adjoint()),
			T::from_parts(alpha, 0.0),
			(faer::Par::rayon(0), precision),
		)
		.unwrap();
	let gemm_result = Mat::from_fn(n, n, |i, j| product[i + j * ldc]);
	assert!(
		(0..n).all(|j| (0..n).all(|i| as_oracle(gemm_result[(i, j)], whole[(i, j)]))),
		"{what}: the GEMM against the oracle"
	);
}

/// whether the GPU's `x` is the oracle's `y` bit for bit, part by part, where a NaN is any NaN
/// (its payload is the arithmetic's own, and the GPU's and the host's differ)
fn as_oracle<T: Scalar>(x: T, y: T) -> bool {
	let part = |p: f64, q: f64| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan());
	part(x.re(), y.re()) && part(x.im(), y.im())
}

fn every_case<T>(target: Precision)
where
	T: Scalar + Conjugate<Canonical = T> + Mul<Output = T>,
{
	use BlockStructure::*;
	let emu = gpu();
	for precision in [target, Precision::SchemeII { moduli: 12 }, Precision::SchemeI { slices: 5 }] {
		for (structure, adjoint) in [
			(TriangularLower, false),
			(TriangularUpper, true),
			(StrictTriangularUpper, false),
			(UnitTriangularLower, true),
			(Rectangular, false),
		] {
			for beta in [0.0, 1.0, -0.75] {
				one_case::<T>(&emu, (structure, adjoint, false), (-1.5, beta), precision);
			}
		}
	}
	for adjoint in [false, true] {
		one_case::<T>(&emu, (BlockStructure::TriangularLower, adjoint, true), (-1.5, -0.75), target);
	}
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn updates_equal_the_gemm_and_the_oracle_f64() {
	every_case::<f64>(Precision::F64);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn updates_equal_the_gemm_and_the_oracle_c64() {
	every_case::<c64>(Precision::F64);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn updates_equal_the_gemm_and_the_oracle_f32() {
	every_case::<f32>(Precision::F32);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn updates_equal_the_gemm_and_the_oracle_c32() {
	every_case::<c32>(Precision::F32);
}
