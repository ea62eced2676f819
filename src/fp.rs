//! exact floating-point helpers shared by both schemes (and mirrored by the GPU kernels)

/// `2^e` for `e` in `[-1022, 1023]`, built from its bits
#[inline]
pub(crate) fn pow2(e: i32) -> f64 {
	debug_assert!((-1022..=1023).contains(&e));
	f64::from_bits(((e + 1023) as u64) << 52)
}

/// `x * 2^e` by a fixed sequence of multiplications by exact powers of two
///
/// exact whenever the result is a normal number; the GPU kernels perform the same sequence, so
/// results that round (subnormal results) round identically
#[inline]
pub(crate) fn scale_pow2(mut x: f64, mut e: i32) -> f64 {
	while e > 1023 {
		x *= pow2(1023);
		e -= 1023;
	}
	while e < -1022 {
		x *= pow2(-1022);
		e += 1022;
	}
	x * pow2(e)
}

/// the binary exponent of a finite nonzero `x`: `floor(log2 |x|)`, subnormals included
#[inline]
pub(crate) fn exponent(x: f64) -> i32 {
	debug_assert!(x != 0.0 && x.is_finite());
	let bits = x.to_bits();
	let biased = ((bits >> 52) & 0x7FF) as i32;
	if biased != 0 {
		biased - 1023
	} else {
		let mant = bits & ((1u64 << 52) - 1);
		(63 - mant.leading_zeros() as i32) - 1074
	}
}

/// the significand of a finite nonzero `x` as an integer in `[2^52, 2^53)` (subnormals normalised):
/// `|x| = sig * 2^(exponent(x) - 52)`
#[inline]
pub(crate) fn significand(x: f64) -> u64 {
	debug_assert!(x != 0.0 && x.is_finite());
	let bits = x.to_bits();
	let biased = (bits >> 52) & 0x7FF;
	let mant = bits & ((1u64 << 52) - 1);
	if biased != 0 {
		mant | (1u64 << 52)
	} else {
		mant << (mant.leading_zeros() - 11)
	}
}

/// `ceil(log2 v)` for `v >= 1`
#[inline]
pub(crate) fn ceil_log2(v: u64) -> i32 {
	debug_assert!(v >= 1);
	64 - (v - 1).leading_zeros() as i32
}

/// the kind of sum that `alpha` scales in [`combine`]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sum {
	/// a native sum of products, non-finite operands included: a complex one is scaled by the full
	/// product with alpha, as cuBLAS and faer scale theirs, so that an infinite part meets alpha's
	/// zero part and gives NaN as it does there
	Native,
	/// an emulated sum of finite operands, whose parts are non-finite only where their scaling
	/// overflowed (infinite, or NaN where two separately scaled products of a part overflowed
	/// against each other): such a part meets only alpha's nonzero parts (a zero part of alpha
	/// contributes nothing, as in the exact product), so that the other part stays as it is;
	/// finite parts take the operations of [`Sum::Native`]
	Emulated,
}

/// `alpha * c (+ old)` in `f64`, rounded once to `T`, for a sum `c` of the kind `sum`
///
/// normative: `emu::combined` in cuda/common.cuh performs the same IEEE operations
#[inline]
pub(crate) fn combine<T: crate::Scalar>(c: (f64, f64), alpha: T, old: Option<T>, sum: Sum) -> T {
	let (ar, ai) = (alpha.re(), alpha.im());
	let (re, im) = if T::IS_COMPLEX {
		let times: fn(f64, f64) -> f64 = match sum {
			Sum::Native => |a, x| a * x,
			Sum::Emulated => overflowed_part,
		};
		(times(ar, c.0) - times(ai, c.1), times(ar, c.1) + times(ai, c.0))
	} else {
		(scaled_part(ar, c.0), 0.0)
	};
	match old {
		Some(o) => T::from_parts(o.re() + re, o.im() + im),
		None => T::from_parts(re, im),
	}
}

/// `a x`, or 0 where `a` is 0 and `x` is not finite: a part of an emulated product that
/// overflowed meets only the nonzero parts of alpha (`a x` on every finite `x`)
#[inline]
fn overflowed_part(a: f64, x: f64) -> f64 {
	if a == 0.0 && !x.is_finite() { 0.0 } else { a * x }
}

/// `a x`, or 0 where `a` is 0: a zero `alpha` of a real product contributes nothing, even against
/// an infinite product
#[inline]
fn scaled_part(a: f64, x: f64) -> f64 {
	if a == 0.0 { 0.0 } else { a * x }
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn exponent_and_significand() {
		for &x in &[1.0, 1.5, -3.0, 1e-300, f64::MAX, f64::MIN_POSITIVE, 5e-324, 3e-320, -0.1] {
			let e = exponent(x);
			let s = significand(x);
			assert!((1u64 << 52..1u64 << 53).contains(&s), "{x}");
			assert_eq!(scale_pow2(s as f64, e - 52), x.abs(), "{x}");
			assert!(scale_pow2(1.0, e) <= x.abs() && x.abs() < scale_pow2(2.0, e), "{x}");
		}
	}

	#[test]
	fn scale_pow2_is_exact_and_spans_range() {
		assert_eq!(scale_pow2(1.0, 1023), f64::MAX / (2.0 - f64::EPSILON));
		assert_eq!(scale_pow2(5e-324, 1074), 1.0);
		assert_eq!(scale_pow2(1.0, -1074), 5e-324);
		assert_eq!(scale_pow2(3.0, 2000 - 2000), 3.0);
		assert_eq!(scale_pow2(f64::MAX, -2046), f64::MAX * pow2(-1022) * pow2(-1022) * pow2(-2));
	}

	/// an emulated part that overflowed meets only alpha's nonzero parts, a native one the full
	/// product; on finite parts (signed zeros included) both kinds give the same bits
	#[test]
	fn combine_by_kind_of_sum() {
		use faer::c64;
		let inf = f64::INFINITY;
		let one = c64::new(1.0, 0.0);
		let parts = |x: c64| (x.re, x.im);
		assert_eq!(parts(combine((inf, 0.0), one, None, Sum::Emulated)), (inf, 0.0));
		assert_eq!(parts(combine((0.0, -inf), one, None, Sum::Emulated)), (0.0, -inf));
		assert_eq!(parts(combine((inf, inf), c64::new(0.0, -2.0), None, Sum::Emulated)), (inf, -inf));
		let old = Some(c64::new(1.0, -3.0));
		assert_eq!(parts(combine((-inf, 5.0), c64::new(-2.0, 0.0), old, Sum::Emulated)), (inf, -13.0));
		let nan = combine((f64::NAN, -inf), one, None, Sum::Emulated);
		assert!(nan.re.is_nan() && nan.im == -inf);
		let native = combine((inf, 0.0), one, None, Sum::Native);
		assert!(native.re == inf && native.im.is_nan());
		let values = [0.0, -0.0, 1.5, -2.25, 1e300, -3e-310];
		let pairs = || values.iter().flat_map(|&x| values.iter().map(move |&y| (x, y)));
		for (x, y) in pairs() {
			for (ar, ai) in pairs() {
				for old in [None, Some(c64::new(-0.0, 0.0)), Some(c64::new(x, -y))] {
					let alpha = c64::new(ar, ai);
					let (e, n) = (combine((x, y), alpha, old, Sum::Emulated), combine((x, y), alpha, old, Sum::Native));
					assert_eq!(
						(e.re.to_bits(), e.im.to_bits()),
						(n.re.to_bits(), n.im.to_bits()),
						"{x} {y} {alpha:?} {old:?}"
					);
				}
			}
		}
	}

	#[test]
	fn ceil_log2_values() {
		assert_eq!(ceil_log2(1), 0);
		assert_eq!(ceil_log2(2), 1);
		assert_eq!(ceil_log2(3), 2);
		assert_eq!(ceil_log2(1 << 40), 40);
		assert_eq!(ceil_log2((1 << 40) + 1), 41);
	}
}
