//! [`rank_k_update`]: `alpha a aᴴ` on a triangle, on the global context

use crate::{Emulator, Error, Precision, Scalar};
use faer::linalg::matmul::triangular::BlockStructure;
use faer::mat::{AsMatMut, AsMatRef};
use faer::traits::Conjugate;
use faer::{Accum, Par};

/// `dst = alpha a aᴴ` ([`Accum::Replace`]) or `dst += alpha a aᴴ` ([`Accum::Add`]) on the entries
/// of `dst` that `structure` names, at `precision`, the CPU's part on `par`, on the global context
/// ([`Emulator::global`]): a rank-k update (SYRK for real types, HERK with a real diagonal for
/// complex ones), the emulated product `a aᴴ`'s entries bit for bit. See
/// [`Emulator::rank_k_update`]
///
/// # example
/// ```
/// use emugemm::{Accum, Precision};
/// use faer::linalg::matmul::triangular::BlockStructure;
/// let a = emugemm::testing::random_matrix::<f64>(100, 20, 1.0, 1);
/// // the upper triangle of the covariance-like aᵀ a
/// let mut c = faer::Mat::<f64>::zeros(20, 20);
/// emugemm::rank_k_update((&mut c, BlockStructure::TriangularUpper), Accum::Replace, a.transpose(), 1.0, (faer::Par::Seq, Precision::F64))?;
/// assert_eq!(c[(19, 0)], 0.0);
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn rank_k_update<T: Scalar, A: Conjugate<Canonical = T>>(
	dst: (impl AsMatMut<T = T, Rows = usize, Cols = usize>, BlockStructure),
	accum: Accum,
	a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
	alpha: T::RealPart,
	(par, precision): (Par, Precision),
) -> Result<(), Error> {
	Emulator::global().rank_k_update(dst, accum, a, alpha, (par, precision))
}
