//! a tiled product as every pipeline's thread reads it (see [`crate::gpu::orchestration::tiled`]),
//! and the order in which its tiles visit the column panels

use crate::Scalar;
use crate::gpu::transfer::exchange::Exchange;
use crate::gpu::transfer::matrix::DeviceMatrix;
use crate::gpu::transfer::panels::Operand;
use crate::request::Request;
use std::ops::Range as Span;

/// the column panels of row panel `i` in the order they are visited: forwards, then backwards on
/// the next row panel, so that the last panel of `B` a row panel read is the first the next reads
/// (and is not uploaded again)
pub(crate) fn serpentine(i: usize, cols: usize) -> Box<dyn Iterator<Item = usize>> {
	if i.is_multiple_of(2) {
		Box::new(0..cols)
	} else {
		Box::new((0..cols).rev())
	}
}

/// a tiled product, as every pipeline's thread sees it
pub(crate) struct Tiled<'a, T: Scalar> {
	/// the call, on the operands' panels
	pub(crate) request: Request<T, Operand<'a, T>>,
	/// a device destination (a host one is given out in blocks to the shares)
	pub(crate) dst: Option<&'a DeviceMatrix<T>>,
	/// the row panels, `per_share` consecutive ones to each pipeline
	pub(crate) rows: Vec<Span<usize>>,
	pub(crate) per_share: usize,
	pub(crate) cols: Vec<Span<usize>>,
	pub(crate) exchange: Exchange,
}
