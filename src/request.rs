//! what one call asks for, built once at the front door (`Emulator`) and handed down
//! whole to the engine that runs it: the CPU oracle, the native product, or the GPU engine's
//! staged, in-core and tiled products

use crate::settings::Settings;
use crate::shape::Shape;
use crate::{Precision, Scalar};
use faer::linalg::matmul::triangular::BlockStructure;
use faer::{Accum, Par};
use std::cmp::Ordering;

/// the routine a call asks for: which product its operands make, and which entries of the
/// destination it writes. A new routine (a rank-k update, a batch) is a new variant, and each
/// engine's dispatch on it is where its own work begins
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Routine {
	/// `dst = alpha lhs rhs`, or `dst += alpha lhs rhs`: every entry of `dst`
	Gemm,
	/// a rank-k update's product (`rhs` is `lhs`'s adjoint, `dst` square): the entries the
	/// structure names are [`Routine::Gemm`]'s, bit for bit. An engine may skip the work of the
	/// output tiles that hold none of them ([`Routine::triangle`]); the entries it leaves are
	/// what the engine's own front says (the host's: anything, which the update does not read)
	RankK(BlockStructure),
}

#[cfg(feature = "cuda")]
impl Routine {
	/// the triangle of the output whose tiles an engine must compute: `None` for every tile
	pub fn triangle(self) -> Option<Triangle> {
		match self {
			Routine::RankK(s) if s.is_lower() => Some(Triangle::Lower),
			Routine::RankK(s) if s.is_upper() => Some(Triangle::Upper),
			Routine::Gemm | Routine::RankK(_) => None,
		}
	}
}

/// a triangle of a square matrix, its diagonal included
#[cfg(feature = "cuda")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Triangle {
	/// the entries `(i, j)` with `i >= j`
	Lower,
	/// the entries `(i, j)` with `i <= j`
	Upper,
}

/// whether `structure` (faer's, of a square matrix) names the entry `(i, j)`
pub(crate) fn names(structure: BlockStructure, i: usize, j: usize) -> bool {
	use BlockStructure::{Rectangular, TriangularLower, TriangularUpper};
	match i.cmp(&j) {
		Ordering::Equal => matches!(structure, Rectangular | TriangularLower | TriangularUpper),
		Ordering::Greater => !structure.is_upper(),
		Ordering::Less => !structure.is_lower(),
	}
}

/// one call: its routine, its operands as the layer that reads them holds them (`O`: host views,
/// device matrices, the panels of a tiled product), the product's shape, how the result meets
/// the destination, its scalar, the precision in force (the context's override applied), the
/// CPU's threads and the context's settings
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request<T, O> {
	pub routine: Routine,
	pub lhs: O,
	pub rhs: O,
	pub shape: Shape,
	pub accum: Accum,
	pub alpha: T,
	pub precision: Precision,
	pub par: Par,
	pub settings: Settings,
}

impl<T: Scalar, O> Request<T, O> {
	/// the same call on other operands of the same matrices (`lhs` and `rhs` as a layer below
	/// reads them, or a part of them), its shape taken from `shape`
	pub fn on<P>(&self, (lhs, rhs): (P, P), shape: Shape) -> Request<T, P> {
		Request {
			routine: self.routine,
			lhs,
			rhs,
			shape,
			accum: self.accum,
			alpha: self.alpha,
			precision: self.precision,
			par: self.par,
			settings: self.settings,
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::view::View;
	use crate::{Backend, Emulator};

	#[test]
	fn the_front_door_builds_one_request_and_a_part_keeps_the_rest_of_it() {
		let emu = Emulator::with_backend(Backend::CpuEmulation).expect("the oracle runs anywhere");
		let (a, b) = (faer::Mat::<f64>::zeros(4, 6), faer::Mat::<f64>::zeros(6, 5));
		let request = emu.request(
			Accum::Add,
			(View::of(a.as_ref()), View::of(b.as_ref())),
			2.0,
			(Precision::F64, Par::Seq),
		);
		assert_eq!((request.routine, request.shape), (Routine::Gemm, Shape::new(4, 5, 6)));
		let row = request.on((request.lhs.subrows(1, 1), request.rhs), Shape::new(1, 5, 6));
		assert_eq!((row.lhs.shape(), row.rhs.shape(), row.shape), ((1, 6), (6, 5), Shape::new(1, 5, 6)));
		assert_eq!(
			(row.routine, row.accum, row.alpha, row.precision),
			(Routine::Gemm, Accum::Add, 2.0, Precision::F64)
		);
		assert_eq!(row.settings, request.settings);
	}
}
