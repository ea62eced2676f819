//! the variants of the persistent wgmma chassis (`cuda/sm90_chassis.cu`) and the table that picks one for
//! a product
//!
//! A variant is a tile width `bn` (tiles of 128 x `bn` outputs: two consumer warpgroups of 64 rows,
//! `bn / 2` INT32 accumulators per thread), a ring depth (`stages` K blocks of 128 bytes, as many
//! as fit the 227 KB of shared memory with room to spare) and a cluster size along M (1, or 2 CTAs
//! that compute vertically adjacent tiles and share the B tile by TMA multicast).
//!
//! # The choice
//!
//! A persistent grid walks the product's *units* (a tile, or a pair of vertically adjacent tiles
//! for a cluster of 2) in waves of `slots` units at once (`sm_count` CTAs, or `sm_count / 2`
//! clusters): `waves = ceil(units / slots)`, the last wave possibly part-filled. Every tile of a
//! product has the same K and the same phases, so its time is about `waves x wave_cost`, where
//! `wave_cost` is the time of one wave of the variant (the time of one of its tiles: the CTAs of a
//! cluster compute theirs side by side) relative to a 128 x 256 tile of a single CTA. [`choose`]
//! takes, of the rules of [`TABLE`] that apply (a cluster of 2 needs at least 2 tile rows, and
//! K of at least the rule's `min_k`), the variant with the least estimate (the first on ties).
//! What the table's costs weigh:
//!
//! - `bn = 128` does half the work of a tile in a bit more than half the time: per K block it
//!   loads 32 KB for 128 x 128 outputs against 48 KB for 128 x 256 (4/3 the bytes per product),
//!   reads 96 bytes of shared memory per tensor-core clock against 80, and pays the same
//!   per-tile overhead (ring hand-over, epilogue) for half the work. It wins where `bn = 256`
//!   leaves the last wave badly filled, e.g. few tiles (small products) or just over a whole
//!   number of waves.
//! - a cluster of 2 halves the L2 reads of B (per K block and pair: 2 x 16 KB of A and 32 KB of B
//!   instead of 2 x 48 KB, 2/3 of the bytes) for the cost of the cross-CTA barriers; it loses a
//!   tile's work per unit row where the count of tile rows is odd (the second tile of the last
//!   pair lies past m), which the unit count accounts for.
//!
//! The costs below are measured with `profile::chassis` on an H100, for kernels that store
//! straight from the fragment and for the one whose epilogue stages its int8 output in shared
//! memory: with direct stores the multicast pairs of 128 x 256 tiles are the fastest per product,
//! so the table picks them for large products; the staged kernel's single CTA is faster than the
//! pair (its staged stores hold the tensor cores up for less time, and the pair's barriers cost the
//! same), so large real products take single CTAs; single CTAs also where the M tiles form one row,
//! and 128 x 128 tiles where they fill the last wave enough better.

use crate::shape::Shape;

/// one instance of the chassis template (`Config<BN, STAGES, CLUSTER>` in `cuda/sm90_chassis.cu`)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Variant {
	/// the tile width (N): 128 or 256
	pub bn: usize,
	/// the ring's depth
	pub stages: usize,
	/// CTAs per cluster along M: 1, or 2 sharing the B tile
	pub cluster: usize,
}

/// the tile height (M) of every variant: two consumer warpgroups of 64 rows
pub(crate) const BM: usize = 128;
/// the K block (bytes of a row per stage) of every variant: one 128-byte swizzle atom
const BK: usize = 128;

/// the entry point whose epilogue stages its output in shared memory (`ResidueOut::STAGED` in
/// `cuda/sm90_chassis.cu`): the fused real scheme II product
pub(crate) const STAGED_ENTRY: &str = "scheme2_residues";
/// the shared memory of that staging: two consumer warpgroups, 128 columns each, a column every
/// 68 bytes (`Config::STAGING_*` in `cuda/sm90_chassis.cu`)
const STAGING_BYTES: usize = 2 * 128 * 68;

impl Variant {
	/// the name of the variant, e.g. `bn256_s4_c2`: the suffix of its kernels' names
	pub fn name(self) -> String {
		format!("bn{}_s{}_c{}", self.bn, self.stages, self.cluster)
	}

	/// the variant's kernel of entry point `entry` (`igemm`, `scheme2_residues`,
	/// `scheme2_residues_3m`), e.g. `scheme2_residues_bn256_s4_c2`
	pub fn kernel(self, entry: &str) -> String {
		format!("{entry}_{}", self.name())
	}

	/// the dynamic shared memory of its kernel `entry` (`Config::SMEM`): the ring, 1024 bytes of
	/// alignment slack, a full and an empty mbarrier per stage; for `scheme2_residues`, whose
	/// epilogue stages its int8 output (`Config::STAGED_SMEM`), two warpgroups' staging of 128
	/// columns every 68 bytes on top
	pub fn smem(self, entry: &str) -> u32 {
		let staging = if entry == STAGED_ENTRY { STAGING_BYTES } else { 0 };
		(self.stages * (BM + self.bn) * BK + 1024 + 16 * self.stages + staging) as u32
	}

	/// the rows of B one CTA loads per stage (the TMA box of the B map): all `bn`, or its half
	/// of them in a cluster of 2
	pub fn b_box_rows(self) -> u32 {
		(self.bn / self.cluster) as u32
	}

	/// the units (tiles, or pairs of vertically adjacent tiles) of `planes` m x n products
	pub fn units(self, m: usize, n: usize, planes: usize) -> usize {
		planes * m.div_ceil(BM).div_ceil(self.cluster) * n.div_ceil(self.bn)
	}
}

/// every variant compiled (`EMU_CHASSIS` in `cuda/sm90_chassis.cu` instantiates the same list)
pub(crate) const VARIANTS: [Variant; 4] = [
	Variant {
		bn: 256,
		stages: 4,
		cluster: 1,
	},
	Variant {
		bn: 256,
		stages: 4,
		cluster: 2,
	},
	Variant {
		bn: 128,
		stages: 6,
		cluster: 1,
	},
	Variant {
		bn: 128,
		stages: 6,
		cluster: 2,
	},
];

/// a row of the table: a variant, the time of one of its waves (one unit per CTA or cluster)
/// relative to a 128 x 256 tile of one CTA, for kernels that store straight from the fragment
/// (`wave_cost`: the plain INT8 GEMM, the fused 3M product) and for the kernel whose epilogue
/// stages its int8 output in shared memory (`staged_wave_cost`: the fused real product, also the
/// three launches of a large complex one), and the least K it applies from
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rule {
	pub variant: Variant,
	pub wave_cost: f64,
	pub staged_wave_cost: f64,
	pub min_k: usize,
}

/// the variants in order of preference on ties, with their unit costs (see the module's docs):
/// the time per wave of the fused real scheme II product (15 moduli, `profile::chassis`, NVIDIA
/// H100) relative to `bn256_s4_c1`: with direct stores at n = 8192, staged at n = 8192 and 16384
pub(crate) const TABLE: [Rule; 4] = [
	// multicast pair of 128 x 256 tiles, from K = 8192 on (at K = 4096 the pair takes 1.05-1.14x
	// the single CTA's time on the H200, 0.97-1.03x on the H100): direct, a wave in 94% of the
	// single CTA's (96% on the H200); staged, in 101-102% (n = 8192) and 107% (16384)
	Rule {
		variant: VARIANTS[1],
		wave_cost: 0.94,
		staged_wave_cost: 1.04,
		min_k: 8192,
	},
	Rule {
		variant: VARIANTS[0],
		wave_cost: 1.0,
		staged_wave_cost: 1.0,
		min_k: 0,
	},
	// multicast pair of 128 x 128 tiles: half the work of the 128 x 256 pair in 64% of a wave
	// (direct); staged, in 65% (n = 8192) to 75% (16384)
	Rule {
		variant: VARIANTS[3],
		wave_cost: 0.64,
		staged_wave_cost: 0.7,
		min_k: 8192,
	},
	// half the work of a 128 x 256 tile in 89% of its time (58% on the H200: the H100's smaller
	// L2 holds fewer of its operand panels); staged, in 83% (n = 8192) to 116% (16384)
	Rule {
		variant: VARIANTS[2],
		wave_cost: 0.89,
		staged_wave_cost: 1.0,
		min_k: 0,
	},
];

/// the estimated time of `planes` m x n x k products on `sm_count` SMs by `rule`'s variant (its
/// `staged` kernel or not), in units of one 128 x 256 tile's time; `None` where the rule does not
/// apply (K below its least, or a cluster of 2 on a single row of tiles: its second CTAs would only
/// idle)
fn estimate(rule: &Rule, Shape { m, n, k }: Shape, planes: usize, sm_count: usize, staged: bool) -> Option<f64> {
	let v = rule.variant;
	let slots = (sm_count / v.cluster).max(1);
	let cost = if staged { rule.staged_wave_cost } else { rule.wave_cost };
	(m.div_ceil(BM) >= v.cluster && k >= rule.min_k).then(|| v.units(m, n, planes).div_ceil(slots) as f64 * cost)
}

/// the variant of [`TABLE`] with the least estimated time for `planes` products of m x n outputs
/// over K = k (scheme II: one plane per modulus) on `sm_count` SMs, by the kernel whose epilogue
/// stages its output (`staged`: `scheme2_residues_*`) or by one that stores straight; the first on
/// ties
pub(crate) fn choose(dims: Shape, planes: usize, sm_count: usize, staged: bool) -> Variant {
	let mut best: Option<(f64, Variant)> = None;
	for rule in &TABLE {
		if let Some(t) = estimate(rule, dims, planes, sm_count, staged)
			&& best.is_none_or(|(least, _)| t < least)
		{
			best = Some((t, rule.variant));
		}
	}
	best.map_or(VARIANTS[0], |(_, v)| v)
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn every_variant_fits_and_is_in_the_table() {
		for v in VARIANTS {
			assert!(
				v.smem(STAGED_ENTRY) as usize <= crate::gpu::runtime::launch::SMEM_LIMIT,
				"{}: {} bytes of shared memory",
				v.name(),
				v.smem(STAGED_ENTRY)
			);
			assert!(TABLE.iter().any(|r| r.variant == v), "{} has no rule", v.name());
		}
		assert_eq!(VARIANTS[1].kernel("scheme2_residues"), "scheme2_residues_bn256_s4_c2");
		assert_eq!(VARIANTS[0].smem("igemm"), 4 * (128 + 256) * 128 + 1024 + 64);
		assert_eq!(VARIANTS[0].smem(STAGED_ENTRY), 4 * (128 + 256) * 128 + 1024 + 64 + 2 * 128 * 68);
	}

	#[test]
	fn units_count_pairs_of_tile_rows() {
		let pair = VARIANTS[1];
		assert_eq!(pair.units(300, 300, 1), 2 * 2);
		assert_eq!(pair.units(256, 256, 15), 15);
		assert_eq!(VARIANTS[2].units(300, 300, 1), 3 * 3);
	}

	#[test]
	fn the_table_picks_wide_tiles_for_large_products_and_narrow_ones_for_small() {
		for staged in [false, true] {
			// K = 4096: no pair
			assert_eq!(choose(Shape::new(8192, 8192, 4096), 15, 132, staged), VARIANTS[0]);
			// 1024 x 1024: 16 pairs of 128 x 256 tiles fill a quarter of the pairs' slots, 32 of
			// 128 x 128 half
			assert_eq!(choose(Shape::new(1024, 1024, 8192), 1, 132, staged).bn, 128);
			// one row of tiles: no cluster (the pair's second tile would lie past m)
			assert_eq!(choose(Shape::new(128, 8192, 8192), 1, 132, staged).cluster, 1);
		}
		// large products: the multicast pair where the kernel stores straight, the single CTA
		// where it stages its output
		assert_eq!(choose(Shape::new(8192, 8192, 8192), 1, 132, false), VARIANTS[1]);
		assert_eq!(choose(Shape::new(8192, 8192, 8192), 15, 132, false), VARIANTS[1]);
		assert_eq!(choose(Shape::new(8192, 8192, 8192), 15, 132, true), VARIANTS[0]);
		assert_eq!(choose(Shape::new(16384, 16384, 16384), 15, 132, true), VARIANTS[0]);
	}
}
