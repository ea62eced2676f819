//! what the `EmuMatMul` implementations share: the shape check

use crate::Error;

/// the error of `lhs * rhs` (shapes `(rows, columns)`) when the inner dimensions differ
pub(crate) fn check_inner(lhs: (usize, usize), rhs: (usize, usize)) -> Result<(), Error> {
	if lhs.1 == rhs.0 {
		Ok(())
	} else {
		Err(Error::ShapeMismatch { lhs, rhs, dst: None })
	}
}
