//! a 192-bit unsigned integer, wide enough for the product of scheme II's moduli: the CRT
//! constants are computed with it, without a big-integer library

use crate::fp::scale_pow2;

/// the nearest `f64` (ties to even) of the 64-bit `top` followed by more bits, `sticky` when any
/// of them is set
fn round_u64_with_sticky(top: u64, sticky: bool) -> f64 {
	let lz = top.leading_zeros();
	if 64 - lz <= 53 {
		return top as f64;
	}
	let drop = 64 - lz - 53;
	let kept = top >> drop;
	let rem = top & ((1u64 << drop) - 1);
	let half = 1u64 << (drop - 1);
	let up = rem > half || (rem == half && (sticky || kept & 1 == 1));
	scale_pow2((kept + up as u64) as f64, drop as i32)
}

/// a nonnegative integer below 2¹⁹², three 64-bit limbs, least significant first: wide enough
/// for the product `P` of all twenty moduli (156 bits), with only the operations the CRT
/// constants take
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wide(pub [u64; 3]);

impl Wide {
	pub const ONE: Wide = Wide([1, 0, 0]);

	/// `self * m`; overflow is a bug in the moduli list, not an input error, hence the panic
	pub fn mul_small(self, m: u32) -> Wide {
		let mut out = [0u64; 3];
		let mut carry = 0u128;
		for (o, &l) in out.iter_mut().zip(&self.0) {
			let t = l as u128 * m as u128 + carry;
			*o = t as u64;
			carry = t >> 64;
		}
		assert_eq!(carry, 0, "the product of the moduli exceeds 192 bits");
		Wide(out)
	}

	/// `(self / m, self % m)`
	pub fn div_rem_small(self, m: u32) -> (Wide, u32) {
		let mut out = [0u64; 3];
		let mut rest = 0u128;
		for (o, &l) in out.iter_mut().zip(&self.0).rev() {
			let t = (rest << 64) | l as u128;
			*o = (t / m as u128) as u64;
			rest = t % m as u128;
		}
		(Wide(out), rest as u32)
	}

	/// `self - other`, for `other <= self`
	pub fn sub(self, other: Wide) -> Wide {
		let mut out = [0u64; 3];
		let mut borrow = false;
		for ((o, &a), &b) in out.iter_mut().zip(&self.0).zip(&other.0) {
			let (d, b1) = a.overflowing_sub(b);
			let (d, b2) = d.overflowing_sub(borrow as u64);
			*o = d;
			borrow = b1 || b2;
		}
		assert!(!borrow, "a wide subtraction went below zero");
		Wide(out)
	}

	/// the number of significant bits (0 for zero)
	pub fn bits(self) -> u32 {
		(0..3)
			.rev()
			.find(|&i| self.0[i] != 0)
			.map_or(0, |i| 64 * i as u32 + 64 - self.0[i].leading_zeros())
	}

	/// `self mod 2^n`
	pub fn low_bits(self, n: u32) -> Wide {
		let mut out = self.0;
		for (i, o) in out.iter_mut().enumerate() {
			let below = n.saturating_sub(64 * i as u32);
			if below < 64 {
				*o &= (1u64 << below) - 1;
			}
		}
		Wide(out)
	}

	/// the low 64 bits of `self >> n`, `n < 192`
	fn shr_low(self, n: u32) -> u64 {
		let (limb, bit) = ((n / 64) as usize, n % 64);
		let low = self.0[limb] >> bit;
		let high = match self.0.get(limb + 1) {
			Some(&next) if bit > 0 => next << (64 - bit),
			_ => 0,
		};
		low | high
	}

	/// the nearest `f64` (ties to even): the top 64 bits rounded to 53 with the rest as sticky bit
	pub fn to_f64(self) -> f64 {
		let shift = self.bits().saturating_sub(64);
		let top = self.shr_low(shift);
		let rest_nonzero = self.low_bits(shift) != Wide([0; 3]);
		scale_pow2(round_u64_with_sticky(top, rest_nonzero), shift as i32)
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use num_bigint::BigUint;
	use num_traits::ToPrimitive;

	/// the wide integer's conversion rounds to nearest, ties to even, like num-bigint's, on values
	/// built to sit at and around halfway points, in every limb
	#[test]
	fn wide_to_f64_rounds_to_nearest_even() {
		let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
		for _ in 0..20_000 {
			let mut limbs = [next(), next(), next()];
			// fewer significant bits, and runs of zeros or ones below the 53 kept bits
			let top = (next() % 193) as u32;
			for (i, l) in limbs.iter_mut().enumerate() {
				let below = top.saturating_sub(64 * i as u32);
				if below < 64 {
					*l &= (1u64 << below) - 1;
				}
			}
			match next() % 4 {
				0 => limbs[0] = 0,
				1 => limbs[0] = 1 << 63,
				2 => limbs[0] = u64::MAX,
				_ => {},
			}
			let wide = Wide(limbs);
			let big = limbs.iter().rev().fold(BigUint::from(0u32), |acc, &l| (acc << 64) + l);
			assert_eq!(wide.bits() as u64, big.bits(), "{limbs:x?}");
			assert_eq!(wide.to_f64().to_bits(), big.to_f64().unwrap().to_bits(), "{limbs:x?}");
			let g = (next() % 200) as u32;
			let low = BigUint::from(1u32) << g;
			let (q, r) = wide.div_rem_small(253);
			assert_eq!(q.mul_small(253).0, wide.sub(Wide([r as u64, 0, 0])).0, "{limbs:x?}");
			let low_bits = wide.low_bits(g);
			let want = &big % &low;
			let got = low_bits.0.iter().rev().fold(BigUint::from(0u32), |acc, &l| (acc << 64) + l);
			assert_eq!(got, want, "{limbs:x?} mod 2^{g}");
		}
	}
}
