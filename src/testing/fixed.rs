//! a long fixed-point accumulator: exact sums of products of `f64` values, rounded once at the end
//! (to `f64` and to a double-double pair), without any big-integer crate

/// splits a finite `f64` into `(negative, m, e)` with `x = ±m * 2^e` and `m < 2^53`
///
/// subnormals are included (`e = -1074`); `±0` gives `m = 0`.
pub(crate) fn decompose(x: f64) -> (bool, u64, i32) {
	debug_assert!(x.is_finite(), "decompose: non-finite input {x}");
	let bits = x.to_bits();
	let negative = bits >> 63 == 1;
	let biased = ((bits >> 52) & 0x7ff) as i32;
	let fraction = bits & ((1u64 << 52) - 1);
	if biased == 0 {
		(negative, fraction, -1074)
	} else {
		(negative, fraction | (1u64 << 52), biased - 1075)
	}
}

/// rounds `(w + delta) * 2^e` to the nearest `f64` (ties to even), where `0 <= delta < 1` and
/// `delta > 0` exactly when `sticky`; `w > 0` unless `!sticky`, and `sticky` requires that `w`
/// holds at least 54 significant bits
fn round_to_f64(w: u128, e: i32, sticky: bool) -> f64 {
	if w == 0 {
		debug_assert!(!sticky);
		return 0.0;
	}
	let nbits = 128 - w.leading_zeros() as i32;
	let lead = e + nbits - 1;
	if lead > 1023 {
		return f64::INFINITY;
	}
	// exponent of the unit in the last place at this magnitude
	let mut q = i32::max(lead - 52, -1074);
	let shift = q - e;
	let mut mant = if shift <= 0 {
		debug_assert!(!sticky);
		(w << -shift) as u64
	} else if shift >= 128 {
		// the value is below half an ulp of the smallest subnormal
		0
	} else {
		let kept = (w >> shift) as u64;
		let rem = w & ((1u128 << shift) - 1);
		let half = 1u128 << (shift - 1);
		let up = rem > half || (rem == half && (sticky || kept & 1 == 1));
		kept + up as u64
	};
	if mant == 1u64 << 53 {
		mant >>= 1;
		q += 1;
	}
	if mant >= 1u64 << 52 {
		let biased = q + 52 + 1023;
		if biased >= 2047 {
			return f64::INFINITY;
		}
		f64::from_bits(((biased as u64) << 52) | (mant & ((1u64 << 52) - 1)))
	} else {
		debug_assert!(q == -1074);
		f64::from_bits(mant)
	}
}

/// an exact sum of products of `f64` values: limb `t` carries 32 payload bits at weight
/// `2^(32 t + base)`; limbs are signed so that terms can be added without carrying, and carries are
/// propagated once, when the value is read
#[derive(Clone, Debug)]
pub(crate) struct FixedSum {
	base: i32,
	limbs: Vec<i64>,
}

const LIMB_BITS: i32 = 32;
const LIMB_MASK: u128 = (1u128 << LIMB_BITS) - 1;

impl FixedSum {
	/// an accumulator for at most `2^31 - 1` terms, each a product of two `f64` whose exponents
	/// (as given by [`decompose`]) add up to at least `min_exp` and at most `max_exp`
	pub(crate) fn new(min_exp: i32, max_exp: i32, terms: usize) -> Self {
		assert!(terms < (1usize << 31), "too many terms for the exact accumulator");
		let min_exp = min_exp.min(max_exp);
		let base = min_exp.div_euclid(LIMB_BITS) * LIMB_BITS;
		// a product is below 2^(max_exp + 106), a sum of terms below 2^(max_exp + 137), so every
		// value added (products, and the rounded sum in `round_double_double`) has its lowest bit
		// at most at 2^(max_exp + 137) and is written to 5 limbs from there; one more for the sign
		let len = ((max_exp + 137 - base) / LIMB_BITS) as usize + 6;
		FixedSum { base, limbs: vec![0; len] }
	}

	/// an accumulator sized for the products `a * b` yielded by `terms`
	#[cfg(test)]
	pub(crate) fn for_products(terms: impl Iterator<Item = (f64, f64)>) -> Self {
		let (mut lo, mut hi, mut count) = (i32::MAX, i32::MIN, 0usize);
		for (a, b) in terms {
			let ((_, ma, ea), (_, mb, eb)) = (decompose(a), decompose(b));
			if ma != 0 && mb != 0 {
				lo = lo.min(ea + eb);
				hi = hi.max(ea + eb);
			}
			count += 1;
		}
		if hi < lo {
			(lo, hi) = (0, 0);
		}
		FixedSum::new(lo, hi, count)
	}

	/// adds `±m * 2^e` (`m < 2^106`, `e` at least the `base` when `m != 0`)
	#[inline(always)]
	pub(crate) fn add_scaled(&mut self, negative: bool, m: u128, e: i32) {
		if m == 0 {
			return;
		}
		let offset = e - self.base;
		debug_assert!(offset >= 0 && m >> 106 == 0);
		let t = (offset / LIMB_BITS) as usize;
		let shift = (offset % LIMB_BITS) as u32;
		// the shifted value has up to 137 bits: 128 in `low`, the rest in `high`
		let low = m << shift;
		let high = if shift == 0 { 0 } else { (m >> (128 - shift)) as i64 };
		let sign = if negative { -1 } else { 1 };
		let limbs = &mut self.limbs[t..t + 5];
		for (c, limb) in limbs[..4].iter_mut().enumerate() {
			*limb += sign * ((low >> (LIMB_BITS as u32 * c as u32)) & LIMB_MASK) as i64;
		}
		limbs[4] += sign * high;
	}

	/// adds the exact product `a * b` of two finite values
	#[inline(always)]
	pub(crate) fn add_product(&mut self, a: f64, b: f64) {
		let ((na, ma, ea), (nb, mb, eb)) = (decompose(a), decompose(b));
		self.add_scaled(na != nb, ma as u128 * mb as u128, ea + eb);
	}

	/// propagates the carries: afterwards every limb but the last is in `[0, 2^32)`
	fn normalize(&mut self) {
		let n = self.limbs.len();
		for t in 0..n - 1 {
			let carry = self.limbs[t] >> LIMB_BITS;
			self.limbs[t] -= carry << LIMB_BITS;
			self.limbs[t + 1] += carry;
		}
	}

	/// the value, rounded to nearest (ties to even); overflows to `±inf`
	pub(crate) fn round(&mut self) -> f64 {
		self.normalize();
		if *self.limbs.last().unwrap() < 0 {
			let mut negated = FixedSum {
				base: self.base,
				limbs: self.limbs.iter().map(|&l| -l).collect(),
			};
			negated.normalize();
			-round_magnitude(&negated.limbs, self.base)
		} else {
			round_magnitude(&self.limbs, self.base)
		}
	}

	/// the value `x` as a double-double pair `(hi, lo)`: `hi = round(x)`, `lo = round(x - hi)`
	/// (`lo = 0` when `hi` overflows)
	pub(crate) fn round_double_double(&mut self) -> (f64, f64) {
		let hi = self.round();
		if !hi.is_finite() || hi == 0.0 {
			return (hi, 0.0);
		}
		let (negative, m, e) = decompose(hi);
		let tz = m.trailing_zeros() as i32;
		// x is a multiple of 2^base, so the odd part of hi is too
		self.add_scaled(!negative, (m >> tz) as u128, e + tz);
		(hi, self.round())
	}

	/// the exact value as `(limbs, base)` after carry propagation (for tests)
	#[cfg(test)]
	pub(crate) fn normalized(&mut self) -> (&[i64], i32) {
		self.normalize();
		(&self.limbs, self.base)
	}
}

/// rounds a non-negative normalized limb vector
fn round_magnitude(limbs: &[i64], base: i32) -> f64 {
	let Some(top) = limbs.iter().rposition(|&l| l != 0) else {
		return 0.0;
	};
	let low = top.saturating_sub(2);
	let w = (low..=top).rev().fold(0u128, |acc, t| (acc << LIMB_BITS) | limbs[t] as u128);
	let sticky = limbs[..low].iter().any(|&l| l != 0);
	round_to_f64(w, base + LIMB_BITS * low as i32, sticky)
}

#[cfg(test)]
mod tests {
	use super::*;
	use num_bigint::BigInt;
	use rand::{Rng, RngCore, SeedableRng};
	use rand_chacha::ChaCha8Rng;

	fn p2(e: i32) -> f64 {
		crate::testing::generate::ldexp(1.0, e)
	}

	fn recompose(negative: bool, m: u64, e: i32) -> f64 {
		let v = round_to_f64(m as u128, e, false);
		if negative { -v } else { v }
	}

	fn sum(terms: &[(f64, f64)]) -> FixedSum {
		let mut s = FixedSum::for_products(terms.iter().copied());
		for &(a, b) in terms {
			s.add_product(a, b);
		}
		s
	}

	#[test]
	fn decompose_round_trip() {
		let mut rng = ChaCha8Rng::seed_from_u64(1);
		let mut values = vec![0.0, -0.0, f64::MAX, -f64::MAX, f64::MIN_POSITIVE, p2(-1074), -p2(-1074), 1.0, -1.5];
		values.push(f64::from_bits((1u64 << 52) - 1)); // largest subnormal
		for _ in 0..10_000 {
			let x = f64::from_bits(rng.next_u64());
			if x.is_finite() {
				values.push(x);
			}
			values.push(f64::from_bits(rng.next_u64() & ((1u64 << 52) - 1))); // subnormal
		}
		for x in values {
			let (negative, m, e) = decompose(x);
			assert!(m < 1u64 << 53 && (-1074..=971).contains(&e));
			assert_eq!(recompose(negative, m, e).to_bits(), x.to_bits(), "{x:e}");
		}
	}

	#[test]
	fn cancellation_and_subnormal_results() {
		assert_eq!(sum(&[(1e300, 1.0), (-1e300, 1.0), (1.0, 1.0)]).round(), 1.0);
		assert_eq!(sum(&[(1e300, 1e-300), (-1e300, 1e-300)]).round(), 0.0);
		assert_eq!(sum(&[(p2(600), p2(600)), (1.0, -1.0), (-p2(600), p2(600))]).round(), -1.0);
		// exact subnormal results, and their rounding (ties to even)
		assert_eq!(sum(&[(p2(-600), p2(-474))]).round(), p2(-1074));
		assert_eq!(sum(&[(p2(-600), 3.0 * p2(-476))]).round(), p2(-1074)); // 0.75 ulp
		assert_eq!(sum(&[(p2(-600), p2(-475))]).round(), 0.0); // 0.5 ulp, tie to even
		assert_eq!(sum(&[(p2(-600), p2(-475)), (p2(-700), p2(-700))]).round(), p2(-1074)); // just above the tie
		assert_eq!(sum(&[(p2(-600), 3.0 * p2(-475))]).round(), p2(-1073)); // 1.5 ulp, tie to even
		assert_eq!(sum(&[(p2(-600), -5.0 * p2(-475))]).round(), -p2(-1073)); // 2.5 ulp, tie to even
		assert_eq!(
			sum(&[(f64::MIN_POSITIVE, 0.5), (p2(-1074), -1.0)]).round(),
			f64::from_bits((1u64 << 51) - 1)
		);
		assert_eq!(sum(&[(p2(-1074), p2(-1074))]).round(), 0.0);
		assert_eq!(sum(&[]).round(), 0.0);
	}

	#[test]
	fn rounding_at_halfway_points() {
		let ulp = f64::EPSILON;
		let tiny = p2(-200);
		assert_eq!(sum(&[(1.0, 1.0), (p2(-53), 1.0)]).round(), 1.0);
		assert_eq!(sum(&[(1.0, 1.0), (p2(-53), 1.0), (tiny, 1.0)]).round(), 1.0 + ulp);
		assert_eq!(sum(&[(1.0, 1.0), (p2(-53), 1.0), (-tiny, 1.0)]).round(), 1.0);
		assert_eq!(sum(&[(1.0 + ulp, 1.0), (p2(-53), 1.0)]).round(), 1.0 + 2.0 * ulp);
		assert_eq!(sum(&[(-1.0, 1.0), (-p2(-53), 1.0), (-tiny, 1.0)]).round(), -1.0 - ulp);
		assert_eq!(sum(&[(1.0, 1.0), (1.0, tiny)]).round_double_double(), (1.0, tiny));
		assert_eq!(
			sum(&[(1.0, 1.0), (p2(-53), 1.0), (tiny, 1.0)]).round_double_double(),
			(1.0 + ulp, tiny - p2(-53))
		);
		// overflow: max + half an ulp is the tie to 2^1024
		let half_ulp_max = p2(970);
		assert_eq!(sum(&[(f64::MAX, 1.0), (half_ulp_max, 0.999)]).round(), f64::MAX);
		assert_eq!(sum(&[(f64::MAX, 1.0), (half_ulp_max, 1.0)]).round(), f64::INFINITY);
		assert_eq!(
			sum(&[(f64::MAX, -1.0), (f64::MAX, -1.0)]).round_double_double(),
			(f64::NEG_INFINITY, 0.0)
		);
		assert_eq!(sum(&[(f64::MAX, 1.0), (f64::MAX, 1.0), (f64::MAX, -1.0)]).round(), f64::MAX);
	}

	fn term(rng: &mut ChaCha8Rng) -> f64 {
		let x = match rng.random_range(0..4) {
			0 => f64::from_bits(rng.next_u64() & ((1u64 << 52) - 1)),
			1 => ((rng.next_u64() >> 11) as f64 - p2(52)) * p2(rng.random_range(-1100..1000)),
			_ => (rng.next_u64() >> 11) as f64 * p2(rng.random_range(-80..-20)),
		};
		if x.is_finite() { x } else { 1.0 }
	}

	fn big(x: f64, shift_base: i32) -> BigInt {
		let (negative, m, e) = decompose(x);
		let v = BigInt::from(m) << (e - shift_base) as usize;
		if negative { -v } else { v }
	}

	fn big_product(a: f64, b: f64, shift_base: i32) -> BigInt {
		let ((na, ma, ea), (nb, mb, eb)) = (decompose(a), decompose(b));
		let v = (BigInt::from(ma) * BigInt::from(mb)) << (ea + eb - shift_base) as usize;
		if na != nb { -v } else { v }
	}

	/// checks that `hi` is a correctly rounded value of `exact * 2^shift_base`
	fn check_rounded(exact: &BigInt, hi: f64, shift_base: i32) {
		let below = big(hi.next_down(), shift_base);
		let above = big(hi.next_up(), shift_base);
		let d = (exact - big(hi, shift_base)).magnitude().clone();
		let (d_below, d_above) = ((exact - below).magnitude().clone(), (exact - above).magnitude().clone());
		assert!(d <= d_below && d <= d_above, "{hi:e} is not nearest");
		if d == d_below || d == d_above {
			assert_eq!(decompose(hi).1 & 1, 0, "{hi:e}: a tie not rounded to even");
		}
	}

	#[test]
	fn matches_big_integers() {
		let mut rng = ChaCha8Rng::seed_from_u64(7);
		for case in 0..300 {
			let n = [1, 2, 3, 17, 200][case % 5];
			let mut terms: Vec<_> = (0..n).map(|_| (term(&mut rng), term(&mut rng))).collect();
			if case % 3 == 0 {
				// cancel the first term: the result is far below the largest term
				terms.push((-terms[0].0, terms[0].1));
			}
			let mut s = sum(&terms);
			let (limbs, base) = s.normalized();
			let got = limbs.iter().rev().fold(BigInt::from(0), |acc, &l| (acc << 32) + l);
			let shift_base = base.min(-1074) - 64;
			let exact: BigInt = terms.iter().map(|&(a, b)| big_product(a, b, base)).sum();
			assert_eq!(got, exact, "case {case}");
			let exact = exact << (base - shift_base) as usize;
			let (hi, lo) = s.round_double_double();
			if hi.is_finite() && hi.abs() < f64::MAX {
				check_rounded(&exact, hi, shift_base);
				check_rounded(&(&exact - big(hi, shift_base)), lo, shift_base);
			}
		}
	}
}
