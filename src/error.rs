//! the one error type of the crate

use crate::{Backend, Precision};
use core::fmt;

/// everything that can go wrong in a product, with what to do about it
///
/// # example
/// ```
/// use emugemm::{EmuMatMul, Error, Precision};
/// let a = faer::Mat::<f64>::zeros(3, 4);
/// let b = faer::Mat::<f64>::zeros(5, 2);
/// let err = a.try_emu_mul(&b, Precision::F64).unwrap_err();
/// assert!(matches!(err, Error::ShapeMismatch { .. }));
/// println!("{err}");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
	/// the operands (or the destination) do not fit together
	ShapeMismatch {
		/// rows and columns of the left operand
		lhs: (usize, usize),
		/// rows and columns of the right operand
		rhs: (usize, usize),
		/// rows and columns of the destination, when there is one
		dst: Option<(usize, usize)>,
	},
	/// an explicit plan with parameters out of range, or more bits than the output type holds
	InvalidPrecision {
		/// what was asked for
		precision: Precision,
		/// why it cannot be served
		reason: &'static str,
	},
	/// the backend asked for cannot run here
	BackendUnavailable {
		/// the backend asked for
		backend: Backend,
		/// why, and what to do
		reason: String,
	},
}

impl fmt::Display for Error {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match self {
			Error::ShapeMismatch { lhs, rhs, dst: None } => write!(
				f,
				"shape mismatch: cannot multiply a {}x{} matrix by a {}x{} matrix (the left operand's columns must equal the right operand's rows)",
				lhs.0, lhs.1, rhs.0, rhs.1
			),
			Error::ShapeMismatch { lhs, rhs, dst: Some(dst) } => write!(
				f,
				"shape mismatch: a {}x{} times {}x{} product does not fit a {}x{} destination (expected {}x{} with {} == {})",
				lhs.0, lhs.1, rhs.0, rhs.1, dst.0, dst.1, lhs.0, rhs.1, lhs.1, rhs.0
			),
			Error::InvalidPrecision { precision, reason } => write!(f, "invalid precision {precision:?}: {reason}"),
			Error::BackendUnavailable { backend, reason } => write!(f, "backend {backend:?} unavailable: {reason}"),
		}
	}
}

impl std::error::Error for Error {}
