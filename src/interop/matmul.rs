//! [`matmul`]: faer's `matmul` with a precision, on the global context

use crate::{Emulator, Error, Precision, Scalar};
use faer::mat::{AsMatMut, AsMatRef};
use faer::traits::Conjugate;
use faer::{Accum, Par, Shape};

/// `dst = alpha lhs rhs` ([`Accum::Replace`]) or `dst += alpha lhs rhs` ([`Accum::Add`]) at
/// `precision`, the CPU's part on `par`: faer's `matmul` with a precision, on the global context
/// ([`Emulator::global`]; [`Emulator::matmul`] for a context of one's own). It takes what faer's
/// takes (matrices, columns, rows, owned or views, conjugated and adjoint views included, read
/// conjugated, not copied), the operands as one pair `(lhs, rhs)` and the threads with the
/// precision as another, `(par, precision)`
///
/// # example
/// ```
/// use emugemm::{Accum, Precision};
/// let z = emugemm::testing::random_matrix::<faer::c64>(20, 10, 1.0, 1);
/// let x = faer::Col::<faer::c64>::from_fn(20, |i| faer::c64::new(i as f64, 1.0));
/// let mut y = faer::Col::<faer::c64>::zeros(10);
/// // y = zᴴ x
/// emugemm::matmul(&mut y, Accum::Replace, (z.adjoint(), &x), faer::c64::new(1.0, 0.0), (faer::Par::Seq, Precision::F64))?;
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn matmul<T: Scalar, L: Conjugate<Canonical = T>, R: Conjugate<Canonical = T>, M: Shape, N: Shape, K: Shape>(
	mut dst: impl AsMatMut<T = T, Rows = M, Cols = N>,
	accum: Accum,
	operands: (impl AsMatRef<T = L, Rows = M, Cols = K>, impl AsMatRef<T = R, Rows = K, Cols = N>),
	alpha: T,
	(par, precision): (Par, Precision),
) -> Result<(), Error> {
	Emulator::global().matmul(dst.as_mat_mut(), accum, operands, alpha, (par, precision))
}
