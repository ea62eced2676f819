//! a certified upper bound of every output entry's error, for every plan, from the operands
//!
//! [`Bound`] holds, per row of the product, the maxima of one pass over its entries ([`RowMaxima`])
//! from which [`Bound::row_error`] gives the bound of `|C_ij - (AB)_ij| / (|A||B|)_ij` under any
//! plan; [`PartBounds`] does the same for complex products computed as four real products of
//! separately scaled parts. the model (numerator, denominator, output rounding, one pass for every
//! plan) is the error-bound section of [`crate::accuracy`]. the pass is integer-exact up to its
//! IEEE operations, done in one fixed order here and in `cuda/bound.cu`, so every backend certifies
//! the same plans

use crate::fp::{ceil_log2, scale_pow2};
use crate::scheme1;
use crate::scheme2::{CoarseMaxima, Crt};
use crate::shape::Shape;
use crate::stats::RowStats;
use crate::{Scheme, precision::pass_len};

/// the shift families of the plans: scheme I, and scheme II with even and with odd `Λ`
pub(crate) const FAMILIES: usize = 3;

/// the largest number of bits the magnitude window keeps (int8 magnitudes are at most 127)
const WINDOW_BITS: i32 = 7;

/// the window's bits for `k_terms` products per entry: the most (at most 7) for which
/// `(2^b - 1)²·K'` stays within INT32, so that `L` is exact
///
/// (`k_terms` up to 133,144: 7 bits; up to 541,063: 6 bits; and so on)
pub(crate) fn window_bits(k_terms: usize) -> i32 {
	(1..=WINDOW_BITS)
		.rev()
		.find(|&b| ((1u64 << b) - 1).pow(2) * k_terms as u64 <= i32::MAX as u64)
		.unwrap_or(0)
}

/// the window shift of a row whose largest magnitude has exponent `e_max`: magnitudes below
/// `2^(e_max + 1)` become integers below `2^b`
#[inline]
pub(crate) fn window_shift(e_max: i32, bits: i32) -> i32 {
	bits - 1 - e_max
}

/// `⌊|x|·2^w⌋` (a finite `x` of a row with window shift `w`)
#[inline]
pub(crate) fn magnitude(x: f64, w: i32) -> i8 {
	scale_pow2(x.abs(), w).floor() as i8
}

/// `Λ` of the reference plans of the scheme II families 1 and 2: the smallest moduli counts
/// whose `Λ` is even and odd (the first plan's where no plan has that parity)
fn reference_lambdas() -> [i32; 2] {
	static REFS: std::sync::OnceLock<[i32; 2]> = std::sync::OnceLock::new();
	*REFS.get_or_init(|| {
		let lambdas: Vec<i32> = (2..=crate::scheme2::MAX_MODULI).map(|p| Crt::of(p).lambda).collect();
		[0, 1].map(|parity| *lambdas.iter().find(|l| l.rem_euclid(2) == parity).unwrap_or(&lambdas[0]))
	})
}

/// where a row's scheme II shift comes from: `σ(p) = ⌊(Λ_p + c) / 2⌋`
///
/// fast scaling: `c = 32 - 2E - ⌈log2 T⌉` ([`crate::scheme2::fast_shift`]);
/// accurate: `c = 2·s_0 - ⌈log2 R⌉` ([`crate::scheme2::accurate_shift`]). `None`
/// for a row whose entries of the product are all exactly zero (a zero row, or, under accurate
/// scaling, a row that meets no nonzero of the other operand)
pub(crate) type ShiftOffset = Option<i32>;

/// the fast-scaling offset of a row
pub(crate) fn fast_offset(stats: &RowStats) -> ShiftOffset {
	stats.norm.map(|(e, t)| 32 - 2 * e - ceil_log2(t))
}

/// the accurate-scaling offset of a row with coarse shift `s0` and largest coarse product `r`
pub(crate) fn accurate_offset(s0: i32, r: i64) -> ShiftOffset {
	(r > 0).then(|| 2 * s0 - ceil_log2(r as u64))
}

/// a struct that the host and the kernels share (`repr(C)`), copied to and from the device as
/// bytes: `bytemuck::Pod`, which the checks below it prove (every field is itself `Pod`, and the
/// fields' sizes add up to the struct's, so there is no padding)
macro_rules! device_layout {
	($(#[$doc:meta])* $vis:vis struct $name:ident { $($(#[$field_doc:meta])* $field_vis:vis $field:ident: $ty:ty,)* }) => {
		$(#[$doc])*
		#[repr(C)]
		#[derive(Clone, Copy, Debug, Default, PartialEq)]
		$vis struct $name {
			$($(#[$field_doc])* $field_vis $field: $ty,)*
		}

		const _: () = {
			fn fields_are_pod<T: bytemuck::Pod>() {}
			let _ = || ($(fields_are_pod::<$ty>(),)*);
			assert!(size_of::<$name>() == 0 $(+ size_of::<$ty>())*, "padding in a device layout");
		};

		// SAFETY: `repr(C)`, its fields plain old data (`Pod`) and no padding (both checked above)
		unsafe impl bytemuck::Zeroable for $name {}
		unsafe impl bytemuck::Pod for $name {}
	};
}

device_layout! {
	/// one row of `A` (or column of `B`) as the entry pass reads it: the layout of `BoundSide` in
	/// `cuda/bound.cu`. With `S` the row's L1 bound (`‖a_i‖₁ < S·2^(E_i - 15)`) and `u = w - σ` the
	/// distance of its window from its grid at each family's reference plan (scheme I: one slice,
	/// with the largest of the shift's corrections over the slice counts), the entry bound of row `i`
	/// and column `j` reads `ρ·S_j·2^(u_i + b - 16) = b.norm[f] * a.step[f]`
	pub(crate) struct BoundSide {
		/// per family: `ρ·S·2^(b - 16)` (`ρ` = 1/2 for scheme I, 1 for scheme II)
		pub norm: [f64; FAMILIES],
		/// per family: `2^u`
		pub step: [f64; FAMILIES],
		/// `E_i`, the exponent of the largest magnitude
		pub e_max: i32,
		/// 1 when every entry of the product in this row is exactly zero
		pub zero: i32,
	}
}

// six f64, two i32, as `BoundSide`
const _: () = assert!(size_of::<BoundSide>() == 56);

impl BoundSide {
	/// the side of a row with statistics `stats`, largest magnitude `amax` and scheme II offset
	/// `offset`, for a window of `bits`
	pub fn new(stats: &RowStats, amax: f64, offset: ShiftOffset, bits: i32) -> BoundSide {
		let Some(c) = offset.filter(|_| !stats.is_zero()) else {
			return BoundSide {
				zero: 1,
				..BoundSide::default()
			};
		};
		let (e, w) = (stats.e_max, window_shift(stats.e_max, bits));
		// scheme I: s(p) = 8p - 2 - E, one less where the rounded maximum would leave the digits,
		// which needs a significand of at least 127.5 / 64 (p = 1) or 4 * 127 / 255 (p -> inf)
		let corrected = scale_pow2(amax, -e) >= 1.99 && (1..=scheme1::MAX_SLICES).any(|p| scheme1::shift(amax, p) < 8 * p as i32 - 2 - e);
		let scheme2 = |parity: usize| w - (reference_lambdas()[parity] + c).div_euclid(2);
		let u = [bits - 7 + corrected as i32, scheme2(0), scheme2(1)];
		let norm = scale_pow2(stats.l1 as f64, bits - 16);
		BoundSide {
			norm: [0.5 * norm, norm, norm],
			step: u.map(|u| scale_pow2(1.0, u)),
			e_max: e,
			zero: 0,
		}
	}
}

/// the scheme II offsets of the rows of `A` and the columns of `B`: from their statistics under
/// fast scaling, from the coarse maxima under accurate scaling
pub(crate) fn offsets(stats: (&[RowStats], &[RowStats]), coarse: Option<&CoarseMaxima>) -> (Vec<ShiftOffset>, Vec<ShiftOffset>) {
	match coarse {
		Some(c) => c.offsets(),
		None => (stats.0.iter().map(fast_offset).collect(), stats.1.iter().map(fast_offset).collect()),
	}
}

/// the sides of one operand's rows, from their statistics, largest magnitudes and offsets
pub(crate) fn sides(stats: &[RowStats], amax: impl Fn(usize) -> f64 + Sync, offsets: &[ShiftOffset], bits: i32) -> Vec<BoundSide> {
	use rayon::prelude::*;
	(0..stats.len())
		.into_par_iter()
		.map(|i| BoundSide::new(&stats[i], amax(i), offsets[i], bits))
		.collect()
}

device_layout! {
	/// the maxima over the entries of one row of the product that [`Bound::row_error`] reads (the
	/// layout of the kernel's output: seven `f64` per row)
	pub(crate) struct RowMaxima {
		/// per family: `max_j (ρ·S_j·2^(u_i + b - 16) + ρ·S_i·2^(v_j + b - 16)) / L_ij`, the
		/// representation errors over the window's pairing
		pub grid: [f64; FAMILIES],
		/// per family: `max_j 2^(u_i + v_j) / L_ij`
		pub pairs: [f64; FAMILIES],
		/// `max_j 2^(f + 2b - 2 - E_i - F_j) / L_ij`, `f` the exponent of half the smallest subnormal
		pub floor: f64,
	}
}

impl RowMaxima {
	/// the maxima of both: of a row whose entries lie in two tiles (maxima are exact, so the
	/// order of the tiles does not matter)
	#[cfg(feature = "cuda")]
	pub fn merge(&mut self, other: &RowMaxima) {
		for f in 0..FAMILIES {
			self.grid[f] = self.grid[f].max(other.grid[f]);
			self.pairs[f] = self.pairs[f].max(other.pairs[f]);
		}
		self.floor = self.floor.max(other.floor);
	}

	/// the running maxima with one more entry, whose row is `a`, column `b` and magnitude product
	/// `l`, for a window of `bits` and outputs whose half smallest subnormal is `2^floor_exp`
	///
	/// normative: `cuda/bound.cu` performs the same IEEE operations in the same order
	#[inline]
	pub fn add(&mut self, a: &BoundSide, b: &BoundSide, l: i32, bits: i32, floor_exp: i32) {
		if a.zero != 0 || b.zero != 0 {
			return; // the entry is exactly zero in every plan
		}
		let inv = 1.0 / l as f64;
		for f in 0..FAMILIES {
			self.grid[f] = self.grid[f].max((b.norm[f] * a.step[f] + a.norm[f] * b.step[f]) * inv);
			self.pairs[f] = self.pairs[f].max(a.step[f] * b.step[f] * inv);
		}
		self.floor = self.floor.max(scale_pow2(inv, floor_exp + 2 * bits - 2 - a.e_max - b.e_max));
	}
}

/// the exponent of half the smallest subnormal of an output of `mantissa` bits
pub(crate) fn floor_exponent(mantissa: u32) -> i32 {
	if mantissa == 24 { -150 } else { -1075 }
}

/// the error bound of a product: per row of the product, the maxima of its entries
pub(crate) struct Bound {
	/// one per row of the product
	pub rows: Vec<RowMaxima>,
	pub shape: Shape,
	pub complex: bool,
	/// the output's significand bits
	pub mantissa: u32,
}

impl Bound {
	/// the terms per entry: `K` (real) or `2K` (per part, complex)
	fn k_terms(&self) -> f64 {
		self.shape.k as f64 * if self.complex { 2.0 } else { 1.0 }
	}
}

/// what the policy reads of an error bound: per plan the terms that do not depend on the row, per
/// row the bound under them, and the final rounding of every entry
pub(crate) trait RowBound {
	/// what a plan contributes, the same for every row
	type Terms;

	/// the terms of `scheme`'s bound that do not depend on the row (`None` for the native product)
	fn terms(&self, scheme: Scheme) -> Option<Self::Terms>;

	/// an upper bound of `|C_ij - (AB)_ij| / D_ij` over the entries of row `i` under the plan of
	/// `terms`, before the final rounding of each entry to the output type
	fn row_error(&self, i: usize, terms: &Self::Terms) -> f64;

	/// the final rounding of an entry to the output type, over `D_ij`
	fn output_error(&self) -> f64;
}

impl RowBound for Bound {
	type Terms = PlanTerms;

	fn terms(&self, scheme: Scheme) -> Option<PlanTerms> {
		let (family, h, kappa, extra) = match scheme {
			Scheme::Native => return None,
			Scheme::SchemeI { slices: p } => {
				let passes = self.shape.k.div_ceil(pass_len(p, self.complex)).max(1);
				let dropped = dropped_digit_products(p);
				(
					0,
					8 * (p as i32 - 1),
					self.k_terms() * (0.25 + dropped),
					(p as usize + passes + 1) as f64 * 2f64.powi(-52),
				)
			},
			Scheme::SchemeII { moduli, .. } => {
				let lambda = Crt::of(moduli).lambda;
				let parity = lambda.rem_euclid(2) as usize;
				let crt = 2f64.powi(lambda - 69);
				(1 + parity, (lambda - reference_lambdas()[parity]) / 2, self.k_terms() + crt, 0.0)
			},
		};
		Some(PlanTerms {
			family,
			grid: 2f64.powi(-h),
			pairs: 2f64.powi(-2 * h) * kappa,
			extra,
		})
	}

	/// an upper bound of `|C_ij - (AB)_ij| / D_ij` over the entries of row `i` under the plan
	/// of `terms`, before the final rounding of each entry to the output type (that is
	/// [`Bound::output_error`]); `+inf` where the window lost the row's pairing, 0 for a row that
	/// is exactly zero
	#[inline]
	fn row_error(&self, i: usize, terms: &PlanTerms) -> f64 {
		let r = &self.rows[i];
		let f = terms.family;
		if r.grid[f] == 0.0 && r.floor == 0.0 {
			return 0.0;
		}
		let emulation = terms.grid * r.grid[f] + terms.pairs * r.pairs[f] + r.floor;
		emulation * (1.0 + 2f64.powi(-40)) + terms.extra
	}

	/// the final rounding of an entry to the output type, over `D_ij`: at most `2^-mantissa` (plus
	/// `2^-53` for the `f64` stage of `f32` outputs), since `|C_ij| ≤ D_ij`. A native product rounds its outputs the same way
	fn output_error(&self) -> f64 {
		2f64.powi(-(self.mantissa as i32)) + if self.mantissa < 53 { 2f64.powi(-53) } else { 0.0 }
	}
}

/// the error bounds of a complex product computed as four real products of its parts, each part
/// of the operands scaled on its own ([`crate::Plan::separate_parts`]): `Re A Re B`, `Im A Im B`,
/// `Re A Im B`, `Im A Re B`, in this order
pub(crate) struct PartBounds(pub [Bound; 4]);

impl RowBound for PartBounds {
	type Terms = ([PlanTerms; 4], f64);

	/// the terms of `scheme` in each real product, and the rounding of the products before they
	/// are combined: scheme II hands each product on with the CRT's remainder, so that only the
	/// small terms of their sum round ([`crate::cpu::parts::combined`], a few `2^-106`, taken as
	/// `2^-100`); scheme I rounds each product to `f64` (`2^-53`)
	fn terms(&self, scheme: Scheme) -> Option<([PlanTerms; 4], f64)> {
		let [a, b, c, d] = &self.0;
		let rounding = if matches!(scheme, Scheme::SchemeII { .. }) {
			2f64.powi(-100)
		} else {
			2f64.powi(-53)
		};
		Some(([a.terms(scheme)?, b.terms(scheme)?, c.terms(scheme)?, d.terms(scheme)?], rounding))
	}

	/// an upper bound of `|C_ij - (AB)_ij| / D_ij` per part over the entries of row `i`, before
	/// the final rounding to the output type. `Re C = P_0 - P_1` with `D_Re = D_0 + D_1` (the
	/// imaginary part alike with `P_2 + P_3`), so its error is at most the larger relative error of
	/// the two products, plus their rounding before they are combined (`rounding` of `D_0 + D_1`,
	/// and below the normal range half a subnormal each, at most twice the larger floor term). The
	/// sum's last rounding is the output's ([`Bound::output_error`])
	fn row_error(&self, i: usize, (terms, rounding): &([PlanTerms; 4], f64)) -> f64 {
		let (mut error, mut floor) = (0.0f64, 0.0f64);
		for (bound, t) in self.0.iter().zip(terms) {
			error = error.max(bound.row_error(i, t));
			floor = floor.max(bound.rows[i].floor);
		}
		if error == 0.0 {
			return 0.0; // every product's row is exactly zero
		}
		(error + rounding + 2.0 * floor) * (1.0 + 2f64.powi(-40))
	}

	/// the final rounding of an entry to the output type, over `D_ij`
	fn output_error(&self) -> f64 {
		self.0[0].output_error()
	}
}

/// what a plan contributes to [`Bound::row_error`], the same for every row: the family of its
/// shifts, the factors of the row's maxima (`2^-h` and `2^(-2h)·κ`, `h` the shift's distance from
/// the family's reference plan) and its reconstruction's own rounding
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanTerms {
	family: usize,
	grid: f64,
	pairs: f64,
	extra: f64,
}

/// `c_p`: the largest sum of the digit products scheme I drops for one term, on the grid of the
/// integer product: `Σ_(s = p..=2p-2) (2p - 1 - s)·128²·256^(2p-2-s)`
fn dropped_digit_products(p: u32) -> f64 {
	(p..=2 * p.saturating_sub(1))
		.map(|s| (2 * p - 1 - s) as f64 * 16384.0 * 256f64.powi((2 * p - 2 - s) as i32))
		.sum()
}

/// the bits a bound of the scaled error stands for
pub(crate) fn bits(error: f64) -> f64 {
	if error == 0.0 { f64::INFINITY } else { -error.log2() }
}

// what the error bound reads of accurate scaling lives with the bound
impl CoarseMaxima {
	/// the offsets of the error bound ([`accurate_offset`]) of both sides
	pub fn offsets(&self) -> (Vec<ShiftOffset>, Vec<ShiftOffset>) {
		let side = |s0: &[i32], max: &[i64]| s0.iter().zip(max).map(|(&s, &r)| accurate_offset(s, r)).collect();
		(side(&self.s0.0, &self.max.0), side(&self.s0.1, &self.max.1))
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn window_keeps_products_exact() {
		assert_eq!(window_bits(1), 7);
		assert_eq!(window_bits(133_144), 7);
		assert_eq!(window_bits(133_145), 6);
		for k in [1usize, 1000, 133_144, 133_145, 541_063, 541_064, 3_000_000] {
			let b = window_bits(k);
			assert!(((1u64 << b) - 1).pow(2) * k as u64 <= i32::MAX as u64, "{k}");
			assert!(b == 7 || ((1u64 << (b + 1)) - 1).pow(2) * k as u64 > i32::MAX as u64, "{k}");
		}
	}

	#[test]
	fn magnitudes_are_below_the_value_and_fit_the_window() {
		for &x in &[1.0f64, -1.999_999_999_999_999_8, 0.75, 3e-310, -7e300, 5e-324, 1e-20] {
			let e = crate::fp::exponent(x);
			for bits in [1, 5, 7] {
				let w = window_shift(e, bits);
				let q = magnitude(x, w);
				assert!((q as i32) < (1 << bits), "{x} {bits}");
				assert!(
					q as f64 <= scale_pow2(x.abs(), w) && scale_pow2(x.abs(), w) < q as f64 + 1.0,
					"{x} {bits}"
				);
				assert!(q as i32 >= 1 << (bits - 1), "{x} {bits}: the maximum keeps its top bit");
			}
		}
	}

	#[test]
	fn dropped_digit_products_of_small_plans() {
		assert_eq!(dropped_digit_products(1), 0.0);
		// p = 2: one pair (1, 1) with t + u = 2, weight 256^0
		assert_eq!(dropped_digit_products(2), 16384.0);
		// p = 3: two pairs at s = 3 (weight 256), one at s = 4
		assert_eq!(dropped_digit_products(3), 2.0 * 16384.0 * 256.0 + 16384.0);
	}

	/// every plan's shifts lie an exact number of shift steps from its family's reference plan
	#[test]
	fn references_cover_both_parities() {
		let refs = reference_lambdas();
		for p in 2..=crate::scheme2::MAX_MODULI {
			let lambda = Crt::of(p).lambda;
			let parity = lambda.rem_euclid(2) as usize;
			assert!(refs[parity] <= lambda && (lambda - refs[parity]) % 2 == 0, "{p}");
		}
	}
}
