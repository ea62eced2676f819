//! Ozaki scheme II: Chinese remaindering over `p` pairwise coprime moduli `<= 256`
//!
//! rows of `A` and columns of `B` are scaled by powers of two and truncated to integers `a'`, `b'`
//! such that `Σ_h |a'_ih|·|b'_hj| ≤ 2^Λ ≤ P/4` is *guaranteed* (`P = Π_l m_l`); the exact integer
//! product `C' = A'·B'` is then recovered from its residues modulo each `m_l`, each obtained from
//! one exact INT8 product of symmetric residues. two scalings are offered:
//!
//! - fast (Cauchy–Schwarz): `σ_i = ⌊(Λ - log2⌈‖a_i‖²⌉) / 2⌋` from an upward-quantised squared
//!   norm; scale-invariant, no extra product
//! - accurate: one extra INT8 product of 6-bit upward roundings of `|A|` and `|B|` bounds `|A|·|B|`
//!   entrywise (gains about `log2(K)/2` bits on dense data)
//!
//! every function here is pure and is mirrored operation for operation by the GPU kernels

use crate::fp::{ceil_log2, exponent, scale_pow2, significand};
use crate::wide::Wide;

/// the moduli, in the order they are used: the first `p` of them form a plan of `p` moduli
pub const MODULI: [u32; 20] = [
	256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193, 191, 181, 179, 173,
];

/// the largest modulus count
pub const MAX_MODULI: u32 = MODULI.len() as u32;

/// the symmetric residue of `v` modulo `m`: in `[-(m-1)/2, (m-1)/2]` for odd `m`, `[-128, 127]`
/// for `m = 256`
#[inline]
pub(crate) fn sym_mod(v: i64, m: u32) -> i8 {
	let m = m as i64;
	let r = v.rem_euclid(m);
	(if r > (m - 1) / 2 { r - m } else { r }) as i8
}

/// the integer `trunc(x * 2^sigma)` in the form the residue computation uses:
/// `(negative, s, e)` with `|trunc(x 2^sigma)| = s * 2^e`, `s < 2^53`, `e >= 0`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScaledInteger {
	negative: bool,
	significand: u64,
	exponent: u32,
}

impl ScaledInteger {
	/// `trunc(x * 2^sigma)`
	#[inline]
	pub fn new(x: f64, sigma: i32) -> Self {
		let v = scale_pow2(x, sigma).trunc();
		if v == 0.0 {
			return ScaledInteger {
				negative: false,
				significand: 0,
				exponent: 0,
			};
		}
		let (sig, e) = (significand(v), exponent(v) - 52);
		let (significand, exponent) = if e >= 0 { (sig, e as u32) } else { (sig >> -e, 0) };
		ScaledInteger {
			negative: v < 0.0,
			significand,
			exponent,
		}
	}

	/// the symmetric residue modulo `m`
	#[inline]
	pub fn residue(self, m: u32) -> i8 {
		let m64 = m as u64;
		debug_assert!(self.exponent < 64);
		let r = (self.significand % m64) * ((1u64 << self.exponent) % m64) % m64;
		sym_mod(if self.negative { -(r as i64) } else { r as i64 }, m)
	}
}

/// the fast-scaling statistic of a row: `(E, T)` where `E` is the exponent of the largest
/// magnitude and `T` an integer with `‖a‖² < T·2^(2E - 32)`
///
/// each entry contributes `⌈(M_16 + 1)²·2^(2 - 2(E - e))⌉` with `M_16` its top 16 significand bits
/// (`e` its exponent); integer sums make `T` independent of the summation order. `None` for a zero row
pub(crate) fn norm_bound(values: impl Iterator<Item = f64> + Clone) -> Option<(i32, u64)> {
	let e_max = values.clone().filter(|x| *x != 0.0).map(exponent).max()?;
	let t = values.filter(|x| *x != 0.0).map(|x| norm_term(x, e_max)).sum();
	Some((e_max, t))
}

#[inline]
fn norm_term(x: f64, e_max: i32) -> u64 {
	let m = (significand(x) >> 37) + 1;
	let v = (m * m) << 2;
	let shift = 2 * (e_max - exponent(x)) as u32;
	if shift >= 64 { 1 } else { v.div_ceil(1u64 << shift) }
}

/// the fast (Cauchy–Schwarz) shift: the largest `σ` with `2^(2σ)·T·2^(2E - 32) ≤ 2^Λ`
#[inline]
pub(crate) fn fast_shift(bound: Option<(i32, u64)>, lambda: i32) -> i32 {
	match bound {
		None => 0,
		Some((e_max, t)) => (lambda + 32 - 2 * e_max - ceil_log2(t)).div_euclid(2),
	}
}

/// the coarse shift of the accurate scaling: `|x| * 2^s0 < 64` for every entry of a real row
/// (`< 32` per part for complex rows, so that `|re| + |im|` rounds up to at most 64)
#[inline]
pub(crate) fn coarse_shift(amax: f64, complex: bool) -> i32 {
	if amax == 0.0 { 0 } else { 5 - complex as i32 - exponent(amax) }
}

/// the coarse magnitude of one part: `ceil(|x| * 2^s0)`, at least 1 when `x != 0`
#[inline]
pub(crate) fn coarse_magnitude(x: f64, s0: i32) -> i8 {
	if x == 0.0 {
		return 0;
	}
	(scale_pow2(x.abs(), s0).ceil() as i8).max(1)
}

/// the accurate shift from the coarse shift and the largest coarse product in the row:
/// `s_0 + ⌊(Λ - ⌈log2 R⌉) / 2⌋` (`R` that largest product)
#[inline]
pub(crate) fn accurate_shift(s0: i32, row_max: i64, lambda: i32) -> i32 {
	if row_max <= 0 {
		s0
	} else {
		s0 + (lambda - ceil_log2(row_max as u64)).div_euclid(2)
	}
}

/// what the accurate scaling reads of a product: the coarse shifts `s_0` of the rows of `A` and
/// of the columns of `B` ([`coarse_shift`]), and the largest entry of each row and column of the
/// coarse bound product (every backend computes it exactly in integers)
pub(crate) struct CoarseMaxima {
	pub s0: (Vec<i32>, Vec<i32>),
	pub max: (Vec<i64>, Vec<i64>),
}

impl CoarseMaxima {
	/// the accurate shifts ([`accurate_shift`]) of the rows of `A` and the columns of `B` for
	/// `Λ = lambda`
	pub fn shifts(&self, lambda: i32) -> (Vec<i32>, Vec<i32>) {
		let side = |s0: &[i32], max: &[i64]| s0.iter().zip(max).map(|(&s, &r)| accurate_shift(s, r, lambda)).collect();
		(side(&self.s0.0, &self.max.0), side(&self.s0.1, &self.max.1))
	}
}

/// the constants of the CRT reconstruction for `p` moduli
///
/// with `w_l = (P/m_l)·((P/m_l)⁻¹ mod m_l)`, the product is `C' = S - q·P` where `S = Σ_l w_l·c_l`
/// and `q = rint(S/P)`. each `w_l` is split as `hi_l + lo_l` with `hi_l` on the grid `2^g` and
/// `|hi_l| / 2^g < 2^(45 - ⌈log2 p⌉)`, so that `Σ_l hi_l·c_l` is exact in `f64`; `P` is split the
/// same way
#[derive(Clone, Debug, PartialEq)]
pub struct Crt {
	/// the moduli
	pub moduli: Vec<u32>,
	/// `Λ`: the plan guarantees `|C'| ≤ Σ |a'|·|b'| ≤ 2^Λ ≤ P/4`
	pub lambda: i32,
	/// the high parts of `w_l`
	pub hi: Vec<f64>,
	/// the low parts of `w_l` (rounded)
	pub lo: Vec<f64>,
	/// `P` on the grid of `hi`
	pub p_hi: f64,
	/// `P - P_hi` (rounded)
	pub p_lo: f64,
	/// `1/P` (rounded)
	pub inv_p: f64,
}

impl Crt {
	/// the constants for the first `p` moduli of [`MODULI`], `2 <= p <= 20`, computed once per
	/// process (wide-integer arithmetic: microseconds a product need not spend)
	///
	/// ```
	/// use emugemm::scheme2::Crt;
	/// assert_eq!(*Crt::of(15), Crt::new(15));
	/// ```
	pub fn of(p: u32) -> &'static Crt {
		static ALL: std::sync::OnceLock<Vec<Crt>> = std::sync::OnceLock::new();
		assert!((2..=MAX_MODULI).contains(&p), "scheme II needs 2..=20 moduli, got {p}");
		&ALL.get_or_init(|| (2..=MAX_MODULI).map(Crt::new).collect())[p as usize - 2]
	}

	/// the constants for the first `p` moduli of [`MODULI`], `2 <= p <= 20`
	///
	/// ```
	/// use emugemm::scheme2::{Crt, MODULI};
	/// let crt = Crt::new(4);
	/// assert_eq!(crt.moduli, MODULI[..4]);
	/// // P = 256 * 255 * 253 * 251 lies on the grid of `hi`: its split is exact
	/// assert_eq!((crt.p_hi, crt.p_lo), (256.0 * 255.0 * 253.0 * 251.0, 0.0));
	/// ```
	pub fn new(p: u32) -> Self {
		assert!((2..=MAX_MODULI).contains(&p), "scheme II needs 2..=20 moduli, got {p}");
		let moduli = MODULI[..p as usize].to_vec();
		let big_p = modulus_product(p);
		let bits = big_p.bits() as i32;
		let grid = bits - (45 - ceil_log2(p as u64));
		let (mut hi, mut lo) = (Vec::new(), Vec::new());
		for &m in &moduli {
			let (q, rest) = big_p.div_rem_small(m);
			debug_assert_eq!(rest, 0);
			let inv = mod_inverse(q.div_rem_small(m).1, m);
			// `q inv <= q (m - 1) < P`: already reduced modulo P
			let w = q.mul_small(inv);
			let (h, l) = split_on_grid(w, grid);
			hi.push(h);
			lo.push(l);
		}
		let (p_hi, p_lo) = split_on_grid(big_p, grid);
		Crt {
			moduli,
			lambda: lambda(p),
			hi,
			lo,
			p_hi,
			p_lo,
			inv_p: 1.0 / big_p.to_f64(),
		}
	}

	/// the number of moduli
	pub fn len(&self) -> usize {
		self.moduli.len()
	}

	/// always false: a plan has at least two moduli
	pub fn is_empty(&self) -> bool {
		self.moduli.is_empty()
	}

	/// the integer `C'` (as an `f64`, error about `2^-77·P` plus its own rounding) whose residues are
	/// `residues[l]` modulo `moduli[l]`, assuming `|C'| ≤ P/4`
	///
	/// the operation order is normative: the GPU kernel performs the same sequence
	#[inline]
	pub(crate) fn reconstruct(&self, residues: &[i8]) -> f64 {
		self.reconstruct_pair(residues).0
	}

	/// the value of [`Crt::reconstruct`] and its remainder: the CRT's value before its last
	/// rounding is exactly their sum (`t + r` with `t` exact, split without error)
	///
	/// normative: `CrtSum::pair` in cuda/reconstruct.cu performs the same IEEE operations
	pub(crate) fn reconstruct_pair(&self, residues: &[i8]) -> (f64, f64) {
		debug_assert_eq!(residues.len(), self.len());
		let mut s_hi = 0.0f64;
		let mut s_lo = 0.0f64;
		for ((&h, &l), &c) in self.hi.iter().zip(&self.lo).zip(residues) {
			let c = c as f64;
			s_hi += h * c; // exact: every partial sum lies on the grid below 2^53 grid steps
			s_lo = l.mul_add(c, s_lo); // one rounding per term
		}
		let q = (s_hi * self.inv_p).round_ties_even();
		let t = (-q).mul_add(self.p_hi, s_hi); // exact: the result lies on the grid
		let r = s_lo - q * self.p_lo;
		two_sum(t, r)
	}
}

/// `(s, e)` with `s = fl(a + b)` and `s + e = a + b` exactly (Knuth's TwoSum)
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
	let s = a + b;
	let bb = s - a;
	(s, (a - (s - bb)) + (b - bb))
}

fn mod_inverse(a: u32, m: u32) -> u32 {
	(1..m).find(|x| (a as u64 * *x as u64) % m as u64 == 1).expect("moduli are coprime")
}

/// `(hi, lo)`: `hi` = `v` truncated to a multiple of `2^grid` (exact in `f64`), `lo` = the rest rounded
fn split_on_grid(v: Wide, grid: i32) -> (f64, f64) {
	let lo = v.low_bits(grid.max(0) as u32);
	(v.sub(lo).to_f64(), lo.to_f64())
}

/// `P` of the first `p` moduli
fn modulus_product(p: u32) -> Wide {
	MODULI[..p as usize].iter().fold(Wide::ONE, |acc, &m| acc.mul_small(m))
}

/// `Λ` of `p` moduli: `⌊log2 P⌋ - 2`, so that `2^Λ ≤ P/4`
pub(crate) fn lambda(p: u32) -> i32 {
	modulus_product(p).bits() as i32 - 3
}

#[cfg(test)]
mod tests {
	use super::*;
	use num_bigint::{BigInt, BigUint};
	use num_traits::ToPrimitive;

	/// the nearest `f64` of a big integer, as num-bigint rounds it (correctly: round to odd, then
	/// to nearest even), independent of `Wide::to_f64`
	fn to_f64(v: &BigInt) -> f64 {
		v.to_f64().unwrap()
	}

	/// the CRT constants of `p` moduli computed with arbitrary-precision integers, step for step as
	/// [`Crt::new`] describes them, reduction modulo `P` included
	fn big_crt(p: u32) -> Crt {
		let moduli = MODULI[..p as usize].to_vec();
		let big_p: BigUint = moduli.iter().map(|&m| BigUint::from(m)).product();
		let grid = big_p.bits() as i32 - (45 - ceil_log2(p as u64));
		let split = |v: &BigUint| {
			let g = grid.max(0) as u64;
			let hi = (v >> g) << g;
			let lo = v - &hi;
			(hi.to_f64().unwrap(), lo.to_f64().unwrap())
		};
		let (mut hi, mut lo) = (Vec::new(), Vec::new());
		for &m in &moduli {
			let q = &big_p / m;
			let inv = mod_inverse((&q % m).to_u32().unwrap(), m);
			let (h, l) = split(&((q * inv) % &big_p));
			hi.push(h);
			lo.push(l);
		}
		let (p_hi, p_lo) = split(&big_p);
		Crt {
			moduli,
			lambda: big_p.bits() as i32 - 3,
			hi,
			lo,
			p_hi,
			p_lo,
			inv_p: 1.0 / big_p.to_f64().unwrap(),
		}
	}

	/// the fixed-width constants equal the big-integer ones bit for bit, for every number of
	/// moduli: the GPU and CPU reconstructions read them, and their bits are normative
	#[test]
	fn crt_constants_match_big_integers() {
		let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
		for p in 2..=MAX_MODULI {
			let (got, want) = (Crt::new(p), big_crt(p));
			assert_eq!(got.moduli, want.moduli, "p={p}");
			assert_eq!(got.lambda, want.lambda, "p={p}");
			assert_eq!(lambda(p), want.lambda, "p={p}");
			assert_eq!(bits(&got.hi), bits(&want.hi), "p={p}");
			assert_eq!(bits(&got.lo), bits(&want.lo), "p={p}");
			let scalars = |c: &Crt| [c.p_hi, c.p_lo, c.inv_p].map(f64::to_bits);
			assert_eq!(scalars(&got), scalars(&want), "p={p}");
		}
	}

	fn to_integer(x: f64, sigma: i32) -> i128 {
		scale_pow2(x, sigma).trunc() as i128
	}

	/// the split kernels take the moduli as compile-time constants from `EMU_MODULI` in
	/// cuda/common.cuh: the same list, in the same order
	#[test]
	fn kernel_moduli_list_matches() {
		let header = include_str!("../cuda/common.cuh");
		let start = header.find("#define EMU_MODULI(X)").expect("EMU_MODULI in cuda/common.cuh");
		let body = &header[start..header[start..].find("\n\n").map_or(header.len(), |e| start + e)];
		let listed: Vec<(usize, u32)> = body
			.split("X(")
			.skip(1)
			.map(|item| {
				let (l, m) = item.split_once(')').expect("X(l, m)").0.split_once(',').expect("X(l, m)");
				(l.trim().parse().unwrap(), m.trim().parse().unwrap())
			})
			.collect();
		let expected: Vec<(usize, u32)> = MODULI.iter().copied().enumerate().collect();
		assert_eq!(listed, expected);
	}

	#[test]
	fn residues_of_scaled_integers() {
		for &(x, sigma) in &[
			(1.5, 70),
			(-3.25, 60),
			(1e-300, 1050),
			(-7e300, -940),
			(0.75, 0),
			(123.456, 20),
			(-1.0, 77),
		] {
			let v = to_integer(x, sigma);
			let s = ScaledInteger::new(x, sigma);
			for &m in &MODULI {
				assert_eq!(
					s.residue(m),
					sym_mod(v.rem_euclid(m as i128) as i64, m),
					"x={x} sigma={sigma} m={m}"
				);
			}
		}
	}

	#[test]
	fn moduli_are_pairwise_coprime() {
		fn gcd(a: u32, b: u32) -> u32 {
			if b == 0 { a } else { gcd(b, a % b) }
		}
		for (i, &a) in MODULI.iter().enumerate() {
			for &b in &MODULI[i + 1..] {
				assert_eq!(gcd(a, b), 1, "{a} {b}");
			}
		}
	}

	#[test]
	fn sym_mod_ranges() {
		for &m in &MODULI {
			for v in -1000i64..1000 {
				let r = sym_mod(v, m) as i64;
				assert_eq!((v - r).rem_euclid(m as i64), 0);
				if m == 256 {
					assert!((-128..=127).contains(&r));
				} else {
					assert!(r.abs() <= (m as i64 - 1) / 2);
				}
			}
		}
	}

	/// reconstructs random integers with |C'| <= 2^lambda exactly (up to the documented error)
	#[test]
	fn crt_recovers_integers() {
		let mut next = crate::testing::xorshift(0x1234_5678_9ABC_DEF0);
		let mut worst = 0.0f64;
		for p in 2..=MAX_MODULI {
			let crt = Crt::new(p);
			let big_p: BigInt = crt.moduli.iter().map(|&m| BigInt::from(m)).product();
			for trial in 0..200 {
				let bits = (crt.lambda as u64 * (trial % 7 + 1) / 7) as usize;
				let mut v = BigInt::from(next()) * BigInt::from(next()) * BigInt::from(next());
				v >>= 192usize.saturating_sub(bits);
				if next() & 1 == 1 {
					v = -v;
				}
				assert!(v.bits() as i32 <= crt.lambda);
				let residues: Vec<i8> = crt
					.moduli
					.iter()
					.map(|&m| {
						let r = ((&v % m) + m) % m;
						sym_mod(r.to_i64().unwrap(), m)
					})
					.collect();
				let got = crt.reconstruct(&residues);
				let exact = to_f64(&v);
				let err = (got - exact).abs();
				// beyond the rounding of the result itself
				worst = worst.max((err - exact.abs() * f64::EPSILON / 2.0).max(0.0) / to_f64(&big_p));
				// the bound's CRT term (src/bound.rs): 2^(lambda - 69) = 2^-72 P, plus the rounding
				// of the result itself
				let tol = crt_bound(&crt) + exact.abs() * f64::EPSILON / 2.0;
				assert!(err <= tol, "p={p} v={v} got={got} exact={exact}");
			}
		}
		// the absolute error beyond the result's rounding, relative to P, on small and large values
		// alike (2^-76 P measured): the bound allows 2^-72 P, safe by a factor 8 to 16
		println!("largest CRT error: {:.2} log2 P", worst.log2());
		assert!(worst <= 2f64.powi(-75), "{}", worst.log2());
	}

	/// the absolute error the error bound allows the CRT (`2^(lambda - 69)`, src/bound.rs)
	fn crt_bound(crt: &Crt) -> f64 {
		2f64.powi(crt.lambda - 69)
	}

	#[test]
	fn small_plans_are_exact() {
		let crt = Crt::new(6);
		for v in [-(1i64 << 40) + 3, -1, 0, 1, 12345, (1i64 << 44) - 7] {
			let residues: Vec<i8> = crt.moduli.iter().map(|&m| sym_mod(v, m)).collect();
			assert_eq!(crt.reconstruct(&residues), v as f64);
		}
	}

	#[test]
	fn fast_shift_keeps_the_guarantee() {
		let rows: [&[f64]; 4] = [
			&[1.0, -2.0, 3.5],
			&[1e-300, 5e-324, -2e-310],
			&[1e300; 64],
			&[1.999_999_999_999_999_8; 1000],
		];
		for p in [2, 8, 15, 20] {
			let lambda = Crt::new(p).lambda;
			for row in rows {
				let sigma = fast_shift(norm_bound(row.iter().copied()), lambda);
				let norm2: f64 = row.iter().map(|&x| to_integer(x, sigma) as f64).map(|v| v * v).sum();
				assert!(norm2.log2() <= lambda as f64 + 1e-9, "p={p} {row:?}");
				// and it is not wasteful: the norm bound's quantisation (ceil log2 T) costs at most one
				// bit of 2 sigma, so one more sigma reaches 2^lambda (up to T's 2^-14 rounding)
				let norm2_up: f64 = row.iter().map(|&x| scale_pow2(x, sigma + 1)).map(|v| v * v).sum();
				assert!(norm2_up.log2() > lambda as f64 - 0.001, "p={p} {row:?}");
			}
		}
	}

	#[test]
	fn coarse_magnitudes_bound_and_fit() {
		for &x in &[1.0f64, 1.999, -1.5, 1e-300, 7e300, 5e-324] {
			let s0 = coarse_shift(x.abs(), false);
			let c = coarse_magnitude(x, s0);
			assert!((1..=64).contains(&c));
			assert!(c as f64 >= scale_pow2(x.abs(), s0));
			let s0 = coarse_shift(x.abs(), true);
			assert!(coarse_magnitude(x, s0) <= 32);
		}
		assert_eq!(coarse_magnitude(5e-324, 0), 1);
		assert_eq!(coarse_magnitude(0.0, 3), 0);
	}
}
