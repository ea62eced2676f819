//! the device memory a product takes on the GPU, the tiles of the output that fit a budget, and
//! the spans that split a dimension

use crate::Scalar;
use crate::gpu::product::job::{ResiduePlanes, pad16};
use crate::scheme2::MAX_MODULI;
use crate::shape::Shape;
use std::ops::Range as Span;

/// the smallest tile side the halving goes down to: below it, a product that does not fit is an
/// out-of-memory error
const MIN_TILE: usize = 64;

/// an upper bound of the device memory the pipeline takes for an `m x n x k` product of `T`: the
/// staged operands and result, their balanced copies, the error bound's windows and INT32
/// magnitude products, the split planes of the widest plan (20 moduli, three planes each for
/// complex operands) and the residue planes of the product
pub(crate) fn footprint<T: Scalar>(Shape { m, n, k }: Shape) -> usize {
	let (size, kpad, moduli) = (size_of::<T>(), pad16(k), MAX_MODULI as usize);
	let (planes, parts) = if T::IS_COMPLEX { (3, 2) } else { (1, 1) };
	let operands = size * (m * k + k * n);
	let result = size * m * n;
	let bound = parts * (m + n) * kpad + parts * 4 * m * n;
	let split = planes * moduli * (m + n) * kpad;
	let residues = parts * moduli * ResiduePlanes::stride(m, n);
	2 * operands + result + bound + split + residues
}

/// the device memory a tile of a tiled product takes: its [`footprint`], and the second buffers
/// its panels and output take turns with
fn tile_footprint<T: Scalar>(shape: Shape) -> usize {
	let Shape { m, n, k } = shape;
	footprint::<T>(shape) + size_of::<T>() * ((m + n) * k + m * n)
}

/// the tile of the output `(rows, columns)` whose [`tile_footprint`] fits in `budget` bytes: the whole
/// product where it fits, otherwise the larger side halved until it does; `None` where not even
/// tiles of [`MIN_TILE`] do (or, for products that fit, a single tile)
pub(crate) fn tile<T: Scalar>(Shape { m, n, k }: Shape, budget: usize) -> Option<(usize, usize)> {
	let (mut ti, mut tj) = (m.max(1), n.max(1));
	while tile_footprint::<T>(Shape::new(ti, tj, k)) > budget {
		if ti >= tj && ti > MIN_TILE {
			ti = ti.div_ceil(2);
		} else if tj > MIN_TILE {
			tj = tj.div_ceil(2);
		} else {
			return None;
		}
	}
	Some((ti, tj))
}

/// the spans of `len` in pieces of `size` (the last one ragged)
pub(crate) fn spans(len: usize, size: usize) -> Vec<Span<usize>> {
	(0..len.div_ceil(size)).map(|t| t * size..((t + 1) * size).min(len)).collect()
}

/// `count` consecutive spans that cover `len` as evenly as can be (empty ones where `count > len`)
pub(crate) fn split(len: usize, count: usize) -> Vec<Span<usize>> {
	(0..count).map(|p| p * len / count..(p + 1) * len / count).collect()
}

#[cfg(test)]
mod tests {
	use super::*;
	use faer::c64;

	/// the tiles cover the output once; a product that fits is one tile; the halving stops at
	/// what fits, and reports what does not
	#[test]
	fn tiles_fit_the_budget() {
		let shape = Shape::new(1000, 700, 300);
		assert_eq!(tile::<f64>(shape, tile_footprint::<f64>(shape)), Some((1000, 700)));
		let budget = tile_footprint::<c64>(shape) / 5;
		let (ti, tj) = tile::<c64>(shape, budget).unwrap();
		assert!(tile_footprint::<c64>(Shape::new(ti, tj, 300)) <= budget && (ti, tj) != (1000, 700));
		assert_eq!(tile::<f64>(Shape::new(10_000, 10_000, 1 << 30), 1 << 30), None);
		for (len, size) in [(1000, 250), (1000, 333), (7, 10), (1, 1)] {
			let s = spans(len, size);
			assert_eq!((s[0].start, s.last().unwrap().end), (0, len));
			assert!(s.windows(2).all(|w| w[0].end == w[1].start) && s.iter().all(|x| !x.is_empty() && x.len() <= size));
		}
		for (len, count) in [(1000, 3), (5, 8), (0, 2), (7, 7)] {
			let s = split(len, count);
			assert_eq!((s.len(), s[0].start, s.last().unwrap().end), (count, 0, len));
			assert!(s.windows(2).all(|w| w[0].end == w[1].start && w[0].len().abs_diff(w[1].len()) <= 1));
		}
	}
}
