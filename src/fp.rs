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

/// `alpha * c (+ old)` in `f64`, rounded once to `T`
#[inline]
pub(crate) fn combine<T: crate::Scalar>(c: (f64, f64), alpha: T, old: Option<T>) -> T {
	let (ar, ai) = (alpha.re(), alpha.im());
	// complex: the full product, as cuBLAS and faer scale theirs, so that an infinite part meets
	// alpha's zero part and gives NaN as it does there
	let (re, im) = if T::IS_COMPLEX {
		(ar * c.0 - ai * c.1, ar * c.1 + ai * c.0)
	} else {
		(scaled_part(ar, c.0), 0.0)
	};
	match old {
		Some(o) => T::from_parts(o.re() + re, o.im() + im),
		None => T::from_parts(re, im),
	}
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

	#[test]
	fn ceil_log2_values() {
		assert_eq!(ceil_log2(1), 0);
		assert_eq!(ceil_log2(2), 1);
		assert_eq!(ceil_log2(3), 2);
		assert_eq!(ceil_log2(1 << 40), 40);
		assert_eq!(ceil_log2((1 << 40) + 1), 41);
	}
}
