//! which entries of a square matrix a faer `BlockStructure` names, written from faer's
//! documentation of it, apart from the library's own code, so that the tests of rank-k updates
//! check against it

use faer::linalg::matmul::triangular::BlockStructure;

/// whether `structure` names the entry `(i, j)` of a square matrix: `TriangularLower` the entries
/// with `i >= j`, `StrictTriangularLower` and `UnitTriangularLower` those with `i > j`, the upper
/// ones alike, `Rectangular` all
///
/// # example
/// ```
/// use faer::linalg::matmul::triangular::BlockStructure;
/// assert!(emugemm::testing::named(BlockStructure::TriangularLower, 2, 2));
/// assert!(!emugemm::testing::named(BlockStructure::StrictTriangularUpper, 2, 2));
/// ```
pub fn named(structure: BlockStructure, i: usize, j: usize) -> bool {
	use BlockStructure::*;
	match structure {
		Rectangular => true,
		TriangularLower => i >= j,
		StrictTriangularLower | UnitTriangularLower => i > j,
		TriangularUpper => i <= j,
		StrictTriangularUpper | UnitTriangularUpper => i < j,
	}
}
