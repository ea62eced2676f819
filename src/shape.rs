//! the shape of a matrix product, with its dimensions named, and the check of its operands' shapes

use crate::Error;

/// the shape of a product `C = A B`: `m` rows of the output and of the left operand `A`, `n`
/// columns of the output and of the right operand `B`, `k` the inner dimension (columns of `A`,
/// rows of `B`; where a caller says so, padded, as the int8 planes' K)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
	/// rows of the output and of the left operand
	pub m: usize,
	/// columns of the output and of the right operand
	pub n: usize,
	/// the inner dimension
	pub k: usize,
}

impl Shape {
	/// the shape of an `m x k` by `k x n` product
	pub const fn new(m: usize, n: usize, k: usize) -> Self {
		Shape { m, n, k }
	}

	/// whether a dimension is zero: the product has no entries, or every entry is a sum of no
	/// terms
	pub const fn is_empty(self) -> bool {
		self.m == 0 || self.n == 0 || self.k == 0
	}

	/// `(m, n, k)`, as [`crate::Report::shape`] gives it
	pub const fn into_tuple(self) -> (usize, usize, usize) {
		(self.m, self.n, self.k)
	}
}

/// `(m, n, k)`, in that order
impl From<(usize, usize, usize)> for Shape {
	fn from((m, n, k): (usize, usize, usize)) -> Self {
		Shape { m, n, k }
	}
}

/// the error of `lhs * rhs` into `dst` (where given) when the shapes (`(rows, columns)`) do not
/// agree
pub(crate) fn check_shapes(lhs: (usize, usize), rhs: (usize, usize), dst: Option<(usize, usize)>) -> Result<(), Error> {
	if lhs.1 == rhs.0 && dst.is_none_or(|d| d == (lhs.0, rhs.1)) {
		Ok(())
	} else {
		Err(Error::ShapeMismatch { lhs, rhs, dst })
	}
}
