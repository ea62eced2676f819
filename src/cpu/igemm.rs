//! exact integer products of int8 rows: the CPU stand-in for the tensor cores

use rayon::prelude::*;

/// INT32 accumulation is exact for this many products of int8 values (`128^2 * K < 2^31`)
pub(crate) const EXACT_K: usize = 131_071;

/// `sum_h a[h] * b[h]` in INT32 (wrapping, like the tensor cores; the callers keep K within
/// [`EXACT_K`] or within the plan's bound, where it is exact)
#[inline]
pub(crate) fn dot(a: &[i8], b: &[i8]) -> i32 {
	debug_assert_eq!(a.len(), b.len());
	#[cfg(target_arch = "x86_64")]
	if std::arch::is_x86_feature_detected!("avx2") {
		// SAFETY: the CPU supports AVX2 (checked above)
		return unsafe { dot_avx2(a, b) };
	}
	dot_portable(a, b)
}

/// [`dot_portable`] compiled for AVX2 (the same exact integer result, faster)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
	dot_portable(a, b)
}

/// blocks of 16 products summed in INT16 pairs would overflow, so each lane widens to INT32
#[inline(always)]
fn dot_portable(a: &[i8], b: &[i8]) -> i32 {
	const LANES: usize = 32;
	let mut acc = [0i32; LANES];
	let (a_blocks, b_blocks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
	let tail = a_blocks
		.remainder()
		.iter()
		.zip(b_blocks.remainder())
		.fold(0i32, |s, (&x, &y)| s.wrapping_add(x as i32 * y as i32));
	for (x, y) in a_blocks.zip(b_blocks) {
		for l in 0..LANES {
			acc[l] = acc[l].wrapping_add(x[l] as i32 * y[l] as i32);
		}
	}
	acc.iter().fold(tail, |s, &v| s.wrapping_add(v))
}

/// the exact `sum_h a[h] * b[h]` for any length, as INT32 pieces of at most [`EXACT_K`] summed in INT64
#[inline]
pub(crate) fn dot_wide(a: &[i8], b: &[i8]) -> i64 {
	a.chunks(EXACT_K).zip(b.chunks(EXACT_K)).map(|(x, y)| dot(x, y) as i64).sum()
}

/// int8 rows stored plane after plane: plane `t`, row `i` at `((t * rows) + i) * k`
pub(crate) struct Planes {
	pub rows: usize,
	pub k: usize,
	pub data: Vec<i8>,
}

impl Planes {
	/// `count` zeroed planes of `rows x k`
	pub fn zeros(count: usize, rows: usize, k: usize) -> Self {
		Planes {
			rows,
			k,
			data: vec![0; count * rows * k],
		}
	}

	/// row `i` of plane `t`
	#[inline]
	pub fn row(&self, t: usize, i: usize) -> &[i8] {
		let start = (t * self.rows + i) * self.k;
		&self.data[start..start + self.k]
	}

	/// the rows of every plane, mutably, in order `(t, i)`
	pub fn rows_mut(&mut self) -> impl IndexedParallelIterator<Item = &mut [i8]> {
		self.data.par_chunks_mut(self.k.max(1))
	}
}

/// fills `width` values for every entry `(i, j)` of an `m x n` result, in parallel; entries are
/// stored column-major (`i + j m`), each as `width` consecutive values
pub(crate) fn fill_entries<X: Copy + Default + Send + Sync>(
	m: usize,
	n: usize,
	width: usize,
	fill: impl Fn(usize, usize, &mut [X]) + Sync,
) -> Vec<X> {
	let mut out = vec![X::default(); m * n * width];
	if width > 0 {
		out.par_chunks_mut(width).enumerate().for_each(|(idx, w)| fill(idx % m, idx / m, w));
	}
	out
}

/// maps every entry's `width` values (as laid out by [`fill_entries`]) to one output, in parallel
pub(crate) fn map_entries<X: Sync, Y: Send>(m: usize, width: usize, data: &[X], f: impl Fn(usize, usize, &[X]) -> Y + Sync) -> Vec<Y> {
	data.par_chunks(width).enumerate().map(|(idx, w)| f(idx % m, idx / m, w)).collect()
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn dot_is_exact_at_the_bound() {
		let a = vec![-128i8; EXACT_K];
		assert_eq!(dot(&a, &a) as i64, 16384 * EXACT_K as i64);
		let long = vec![-128i8; 3 * EXACT_K + 5];
		assert_eq!(dot_wide(&long, &long), 16384 * (3 * EXACT_K + 5) as i64);
	}
}
