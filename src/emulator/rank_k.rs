//! rank-k updates: `alpha a aᴴ` (a Gram matrix, SYRK for real types, HERK for complex ones) on
//! the entries of a symmetric or Hermitian destination that a faer [`BlockStructure`] names

use super::Emulator;
use crate::request::{Request, Routine, names};
use crate::view::View;
use crate::{Error, Precision, Scalar};
use faer::linalg::matmul::triangular::BlockStructure;
use faer::mat::{AsMatMut, AsMatRef};
use faer::traits::Conjugate;
use faer::{Accum, Mat, Par};

impl Emulator {
	/// `dst = alpha a aᴴ` ([`Accum::Replace`]) or `dst += alpha a aᴴ` ([`Accum::Add`]) on the
	/// entries of `dst` that `structure` names, the others neither read nor written: a rank-k
	/// update (`aᴴ` is `aᵀ` for real types). `structure` is faer's, as in
	/// `faer::linalg::matmul::triangular::matmul`: `TriangularLower` (`Upper`) the lower (upper)
	/// triangle with the diagonal, `StrictTriangularLower` and `UnitTriangularLower` (`Upper`)
	/// without it, `Rectangular` every entry. `alpha` is real; for complex types the written
	/// diagonal is real (its imaginary parts are zero, as cuBLAS's HERK writes them). The update
	/// takes `a` transposed, conjugated or adjoint without a copy (`a.transpose()` for `aᵀ a`).
	///
	/// The entries written are those of the emulated product `a aᴴ` ([`Emulator::matmul`] of
	/// `(a, a.adjoint())` with the same `accum`, `alpha` and precision) bit for bit: the same plan,
	/// the same bound, the same certified bits, the same report. That product is computed whole
	/// today, so an update costs what that product costs
	///
	/// # example
	/// ```
	/// use emugemm::{Accum, Backend, Emulator, Precision};
	/// use faer::linalg::matmul::triangular::BlockStructure;
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// let z = emugemm::testing::random_matrix::<faer::c64>(30, 40, 1.0, 1);
	/// // the lower triangle of the Gram matrix z zᴴ
	/// let mut g = faer::Mat::<faer::c64>::zeros(30, 30);
	/// emu.rank_k_update((&mut g, BlockStructure::TriangularLower), Accum::Replace, &z, 1.0, (faer::Par::Seq, Precision::F64))?;
	/// assert!((0..30).all(|i| g[(i, i)].im == 0.0));
	/// assert_eq!(g[(0, 29)], faer::c64::new(0.0, 0.0)); // the upper triangle is not written
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn rank_k_update<T: Scalar, A: Conjugate<Canonical = T>>(
		&self,
		(mut dst, structure): (impl AsMatMut<T = T, Rows = usize, Cols = usize>, BlockStructure),
		accum: Accum,
		a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
		alpha: T::RealPart,
		(par, precision): (Par, Precision),
	) -> Result<(), Error> {
		let (mut dst, a) = (dst.as_mat_mut(), a.as_mat_ref());
		let n = a.nrows();
		if dst.nrows() != n || dst.ncols() != n {
			return Err(Error::ShapeMismatch {
				lhs: (n, a.ncols()),
				rhs: (a.ncols(), n),
				dst: Some((dst.nrows(), dst.ncols())),
			});
		}
		// the product of the whole destination, then the named entries taken from it: each one
		// is the product's own (the destination's entry in, for `Accum::Add`)
		let mut full = Mat::<T>::zeros(n, n);
		for_each_named(structure, n, |i, j| full[(i, j)] = dst[(i, j)]);
		let alpha = T::from_parts(alpha.re(), 0.0);
		let views = (View::of(a), View::of(a.adjoint()));
		let request = Request {
			routine: Routine::RankK(structure),
			..self.request(accum, views, alpha, (self.precision_for(precision), par))
		};
		self.views_product(full.as_mut(), request)?;
		for_each_named(structure, n, |i, j| {
			let entry = full[(i, j)];
			dst[(i, j)] = if i == j { T::from_parts(entry.re(), 0.0) } else { entry };
		});
		Ok(())
	}
}

/// calls `f(i, j)` for each entry of an `n x n` matrix that `structure` names
fn for_each_named(structure: BlockStructure, n: usize, mut f: impl FnMut(usize, usize)) {
	for j in 0..n {
		for i in (0..n).filter(|&i| names(structure, i, j)) {
			f(i, j);
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::Backend;
	use crate::testing::{named, random_matrix};
	use BlockStructure::*;

	const STRUCTURES: [BlockStructure; 7] = [
		Rectangular,
		TriangularLower,
		StrictTriangularLower,
		UnitTriangularLower,
		TriangularUpper,
		StrictTriangularUpper,
		UnitTriangularUpper,
	];

	/// every structure, both accumulations and several precisions: the named entries are the
	/// emulated product `a aᴴ`'s bit for bit (its diagonal's imaginary parts zero), the others the
	/// destination's as they were; the plan is the product's
	fn equals_the_product<T: Scalar>(precisions: &[Precision]) {
		for a in operands::<T>() {
			equals_the_product_of(&a, precisions);
		}
	}

	/// `k x n` operands: ordinary, of a wide exponent range (which the screen sends native), and
	/// with a NaN and an infinity (entries computed natively)
	fn operands<T: Scalar>() -> [Mat<T>; 3] {
		let (n, k) = (23, 37);
		let mut special = random_matrix::<T>(k, n, 1.0, 5);
		special[(4, 2)] = T::from_parts(f64::NAN, 0.0);
		special[(9, 17)] = T::from_parts(f64::INFINITY, 1.0);
		[random_matrix::<T>(k, n, 1.0, 3), random_matrix::<T>(k, n, 4.0, 3), special]
	}

	fn equals_the_product_of<T: Scalar>(a: &Mat<T>, precisions: &[Precision]) {
		let emu = Emulator::with_backend(Backend::CpuEmulation).expect("the oracle runs anywhere");
		let n = a.ncols();
		let start = random_matrix::<T>(n, n, 1.0, 4);
		let alpha = T::RealPart::from_parts(-1.5, 0.0);
		for &precision in precisions {
			for accum in [Accum::Replace, Accum::Add] {
				// aᵀ a through a transposed view, without a copy
				let mut product = start.clone();
				let alpha_t = T::from_parts(-1.5, 0.0);
				let operands = (a.transpose(), a.transpose().adjoint());
				emu.matmul(&mut product, accum, operands, alpha_t, (Par::Seq, precision)).unwrap();
				let product_plan = emu.last_report().unwrap().plan;
				for structure in STRUCTURES {
					let mut dst = start.clone();
					emu.rank_k_update((&mut dst, structure), accum, a.transpose(), alpha, (Par::Seq, precision))
						.unwrap();
					// by `Debug`: an explicit plan's certified bits are NaN
					let plan = emu.last_report().unwrap().plan;
					assert_eq!(
						format!("{plan:?}"),
						format!("{product_plan:?}"),
						"{structure:?}: the product's plan"
					);
					let mut written = 0;
					for j in 0..n {
						for i in 0..n {
							let (got, was, want) = (dst[(i, j)], start[(i, j)], product[(i, j)]);
							let expected = if i == j { T::from_parts(want.re(), 0.0) } else { want };
							let named = named(structure, i, j);
							written += usize::from(named);
							let same = |x: T, y: T| bytemuck::bytes_of(&x) == bytemuck::bytes_of(&y);
							if named {
								assert!(
									same(got, expected),
									"{precision} {accum:?} {structure:?} ({i}, {j}): {got:?} against {expected:?}"
								);
							} else {
								assert!(same(got, was), "{precision} {accum:?} {structure:?} ({i}, {j}) was written");
							}
						}
					}
					let triangle = n * (n - 1) / 2;
					let diagonal = usize::from(matches!(structure, Rectangular | TriangularLower | TriangularUpper)) * n;
					let expected = if structure == Rectangular { n * n } else { triangle + diagonal };
					assert_eq!(written, expected, "{structure:?}");
				}
			}
		}
	}

	#[test]
	fn real_updates_are_the_products_entries() {
		let precisions = [
			Precision::F64,
			Precision::F32,
			Precision::SchemeI { slices: 3 },
			Precision::SchemeII { moduli: 9 },
		];
		equals_the_product::<f64>(&precisions);
		equals_the_product::<f32>(&[Precision::F32, Precision::Tf32, Precision::SchemeII { moduli: 6 }]);
	}

	#[test]
	fn hermitian_updates_are_the_products_entries_with_a_real_diagonal() {
		let precisions = [
			Precision::F64,
			Precision::Bits(30),
			Precision::SchemeI { slices: 4 },
			Precision::SchemeII { moduli: 12 },
		];
		equals_the_product::<faer::c64>(&precisions);
		equals_the_product::<faer::c32>(&[Precision::F32, Precision::SchemeI { slices: 2 }]);
	}

	#[test]
	fn shapes_that_do_not_fit_are_errors_and_empty_updates_write_nothing() {
		let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
		let a = random_matrix::<f64>(5, 3, 1.0, 1);
		let mut wrong = Mat::<f64>::zeros(5, 4);
		let err = emu.rank_k_update((&mut wrong, TriangularLower), Accum::Replace, &a, 1.0, (Par::Seq, Precision::F64));
		assert!(matches!(err, Err(Error::ShapeMismatch { dst: Some((5, 4)), .. })), "{err:?}");
		// k = 0: dst = 0 (Replace) on the triangle, or kept (Add)
		let empty = Mat::<f64>::zeros(5, 0);
		let mut dst = Mat::<f64>::from_fn(5, 5, |i, j| (i + 2 * j) as f64 + 1.0);
		emu.rank_k_update((&mut dst, TriangularUpper), Accum::Add, &empty, 2.0, (Par::Seq, Precision::F64))
			.unwrap();
		assert!((0..5).all(|j| (0..5).all(|i| dst[(i, j)] == (i + 2 * j) as f64 + 1.0)));
		emu.rank_k_update((&mut dst, TriangularUpper), Accum::Replace, &empty, 2.0, (Par::Seq, Precision::F64))
			.unwrap();
		assert!((0..5).all(|j| (0..5).all(|i| dst[(i, j)] == if i <= j { 0.0 } else { (i + 2 * j) as f64 + 1.0 })));
	}
}
