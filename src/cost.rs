//! the policy's cost model: the predicted time of a plan, from constants measured on a GPU
//!
//! a plan's time is modelled phase by phase, as the GPU pipeline runs it (the default routes: fused
//! products for scheme II, complex scheme II with K > 8,192 priced as the unfused route, whose
//! products the three launches of the real kernel that run there beat by 4% on an H200; scheme I
//! on the route predicted faster, below), with
//! `E = (m + n)·k` operand elements, `C = m·n` output entries, `c = 2` for complex products (two
//! parts to read, split and write) and `1` otherwise, and `N` = [`Scheme::int8_products`] INT8
//! products of `2·m·n·k` operations each:
//!
//! ```text
//! t = t_0 + c·E·(s_0 + s_1·p) + 2·m·n·k·N / R + c·C·r
//! ```
//!
//! - `t_0`: the fixed cost of a call (the statistics' round trip to the host, the policy, launches)
//! - split: `s_0` per operand element (statistics, scaling, conversion) and `s_1` per element and
//!   digit plane (scheme I: interleaved digit planes) or residue plane (scheme II)
//! - products: `R` is the INT8 rate of the scheme's fused kernel: per slice count for scheme I
//!   (its tiles and stages differ with `p`), one rate for scheme II, times a factor for the 3M
//!   kernel of complex scheme II
//! - `r`: scheme I reconstructs in its kernel's epilogue, `r = ε × (K passes)`; scheme II writes
//!   `p` residue planes of the output and rebuilds it in a CRT pass, `r = r_0 + r_1·p`
//!
//! scheme I also has the unfused pipeline on Hopper ([`UnfusedScheme1`]): the same split, its
//! `N` products by cuBLASLt at the rate `R_u` into `p` INT32 planes per K pass, and a shift-reduce
//! pass that reads them, `r = u_0 + u_1·p·(K passes)`. Where the fused kernel's epilogue weighs
//! most (few slices, moderate sizes) that pipeline is faster, and a plan is priced, and run, on the
//! route predicted faster ([`CostModel::scheme1_unfused`]).
//!
//! the element type matters only as real or complex: `f32` and `f64` runs of the same plan differ
//! by 1-7% in the measurements, in the same direction for both schemes.
//!
//! the constants ([`H200`]) are least-squares fits (relative errors) of the phase times that
//! `examples/bench.rs` measured on an NVIDIA H200 (square products n = 4096, 8192, 16384; the
//! `emugemm` rows with their split/products/reconstruct shares, and the kernel-alone rows of the
//! fused scheme I kernel). On those runs the model predicts the end-to-end times within -11% to
//! +7% at n = 4096, -6% to +6% at 8192 and -15% to +5% at 16384, and the fused scheme I kernel
//! alone within 16%. The tests below hold the measured rows and check the model against them.
//!
//! the native products are priced at cuBLAS 13.1's rates on the same H200 at n = 8192 (DGEMM 19.8
//! ms, ZGEMM 90.0 ms, SGEMM 21.7 ms, CGEMM 84.2 ms, TF32 SGEMM 2.67 ms), and the error bound of a
//! target precision at its measured share on an H100 at n = 8192 (3 ms for `f64`, 7 ms for `c64`;
//! the four real bounds of separately scaled complex parts with the parts' copies, 26.5 ms).
//! The policy weighs native against emulated plans with them

use crate::precision::{Scheme, pass_len};
use crate::shape::Shape;

/// the measured constants of the model on one device (seconds, INT8 operations per second)
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CostModel {
	/// `t_0`, seconds per call
	pub overhead: f64,
	/// scheme I split: `(s_0, s_1)`, seconds per operand element and per element and digit plane
	pub split_scheme1: (f64, f64),
	/// scheme II split: `(s_0, s_1)`, seconds per operand element and per element and residue plane
	pub split_scheme2: (f64, f64),
	/// the fused scheme I kernel's INT8 rate for `p = 1..=8` slices, operations per second
	pub rate_scheme1: [f64; 8],
	/// the fused scheme I epilogue (shift-reduce, scaling, store), seconds per output entry and K
	/// pass
	pub epilogue_scheme1: f64,
	/// the fused scheme II kernel's INT8 rate (residues of the output in its epilogue), operations
	/// per second
	pub rate_scheme2: f64,
	/// the 3M rate of complex scheme II relative to `rate_scheme2`
	pub rate_3m: f64,
	/// seconds per output entry and INT8 product that the products' own memory traffic costs
	/// besides their arithmetic: none where the kernels reduce in their epilogue (the fused
	/// kernels), the INT32 planes written and read back on the portable path
	pub product_traffic: f64,
	/// scheme II CRT: `(r_0, r_1)`, seconds per output entry and per entry and modulus
	pub crt: (f64, f64),
	/// the error bound of a target precision: seconds per call, and the rate of its window
	/// product in operations per second (`2·m·n·k` per real product, twice that for complex)
	pub bound: (f64, f64),
	/// the four bounds of a complex product's separately scaled parts with the parts' copies,
	/// relative to four real bounds
	pub part_bounds: f64,
	/// the native products' rates, real floating-point operations per second (`2·m·n·k` real,
	/// `8·m·n·k` complex), and a launch's seconds
	pub native: NativeRates,
	/// scheme I on the unfused pipeline, where the GPU also has the fused kernel (Hopper); `None`
	/// where the scheme I terms above already price the unfused pipeline (the portable path)
	pub unfused_scheme1: Option<UnfusedScheme1>,
}

/// scheme I on the unfused pipeline of a GPU that also runs the fused kernel: the split as the
/// fused route's, then cuBLASLt's INT8 products and a separate shift-reduce
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct UnfusedScheme1 {
	/// cuBLASLt's INT8 rate in the pipeline's products (INT32 planes written and accumulated
	/// included), operations per second
	pub rate: f64,
	/// shift-reduce: `(u_0, u_1)`, seconds per output entry and per entry and INT32 plane read
	pub reduce: (f64, f64),
}

/// the unfused pipeline runs a scheme I product only where the model predicts it at least this
/// much faster than the fused kernel: cuBLASLt's INT8 rate varies with the size more than the
/// fused kernel's (on the H200 1,475 TOPS at n = 8192, 1,209 at 16384, where the fitted rate
/// overestimates the unfused products by 9%), so a closer prediction is within the model's error
const UNFUSED_MARGIN: f64 = 0.95;

/// the rates of the native products on one device
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NativeRates {
	/// DGEMM (`f64`), ZGEMM (`c64`)
	pub fp64: (f64, f64),
	/// SGEMM (`f32`), CGEMM (`c32`)
	pub fp32: (f64, f64),
	/// SGEMM and CGEMM with TF32 tensor-core math
	pub tf32: f64,
	/// the native entries' kernel (plain `f64` sums of products, for `f32`/`c32` outputs at
	/// precisions above FP32 level); the rows a plan leaves to the native product are priced at
	/// this low rate too, although cuBLAS computes them on the rows alone but for those outputs,
	/// so that the policy prefers plans that certify more rows
	pub wide: f64,
	/// seconds per native call
	pub launch: f64,
}

/// the arithmetic of a native product, as the cost model prices it
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NativeArithmetic {
	/// the type's own GEMM
	Own,
	/// FP32 GEMM with TF32 tensor-core math
	Tf32,
	/// the native entries' kernel
	Wide,
}

/// NVIDIA H200 (141 GB HBM3e, 700 W, CUDA 13.0), 2026-11-22: fitted to the phase times of the
/// benchmark's runs at n = 4096, 8192, 16384 on that GPU (the rows of the tests below). Split and
/// overhead: the split shares of the 43 fused real rows; scheme I rates and epilogue: the 24
/// kernel-alone rows (`fused scheme I kernel p=1..8`) and the products shares of
/// the 18 fused scheme I rows; scheme II rate: the products shares of the 25 fused real scheme II
/// rows; 3M factor: the products shares of the complex rows of the default route (fused at 4096
/// and 8192, unfused at 16384); CRT: the reconstruct shares of the real scheme II rows
pub(crate) const H200: CostModel = CostModel {
	overhead: 0.30e-3,
	split_scheme1: (9.8e-12, 0.98e-12),
	split_scheme2: (9.9e-12, 0.42e-12),
	rate_scheme1: [1440e12, 1660e12, 1620e12, 1920e12, 1380e12, 1680e12, 1500e12, 1500e12],
	epilogue_scheme1: 23.6e-12,
	rate_scheme2: 1380e12,
	rate_3m: 0.92,
	product_traffic: 0.0,
	crt: (2.6e-12, 0.55e-12),
	bound: (0.2e-3, 400e12),
	part_bounds: 2.2,
	native: NativeRates {
		fp64: (55.5e12, 48.8e12),
		fp32: (50.7e12, 52.2e12),
		tf32: 411e12,
		wide: 1e12,
		launch: 10e-6,
	},
	unfused_scheme1: Some(UnfusedScheme1 {
		rate: 1330e12,
		reduce: (5.0e-12, 1.7e-12),
	}),
};

/// the Hopper GPUs' model (sm_90a: H100, H200), refitted to the grid of `examples/bench.rs`
/// (`grid`) on an NVIDIA H100 80GB HBM3 (CUDA 13.0, cuBLAS 13.1), 2026-12-06: products on a
/// caller's stream of all four types over square, k-swept (k = 64 to 16384), skinny and
/// blocked-factorization shapes. Scheme II's overhead, split, rate, 3M factor and CRT: a least
/// squares fit (relative errors) of the 115 rows that ran a certified scheme II plan alone, within
/// -40% to +23% of each (the largest errors at complex products with k <= 256, which the native
/// product wins by far); the bound: the certificate's time (the plan with its bound less the plan
/// alone) of those rows, whose fixed part the H100 pays at 0.45 ms (statistics, balancing, the
/// round trip to the host); the native rates: cuBLAS's GEMM per type, fitted over the grid (it
/// runs below them at k = 64). Scheme I keeps the H200's measured terms: no grid row certified a
/// scheme I plan
pub(crate) const HOPPER: CostModel = CostModel {
	overhead: 0.10e-3,
	split_scheme2: (1.13e-12, 1.13e-12),
	rate_scheme2: 1960e12,
	rate_3m: 0.737,
	crt: (0.0, 2.09e-12),
	bound: (0.45e-3, 300e12),
	native: NativeRates {
		fp64: (54.5e12, 52.4e12),
		fp32: (48.1e12, 51.3e12),
		tf32: 411e12,
		wide: 1e12,
		launch: 20e-6,
	},
	..H200
};

impl CostModel {
	/// the predicted seconds of the native product of `shape` in `arithmetic`, for an output of
	/// `mantissa` significand bits
	pub(crate) fn native(&self, Shape { m, n, k }: Shape, complex: bool, mantissa: u32, arithmetic: NativeArithmetic) -> f64 {
		let r = &self.native;
		let pick = |(real, complex_rate): (f64, f64)| if complex { complex_rate } else { real };
		let rate = match arithmetic {
			NativeArithmetic::Own if mantissa == 53 => pick(r.fp64),
			NativeArithmetic::Own => pick(r.fp32),
			NativeArithmetic::Tf32 => r.tf32,
			NativeArithmetic::Wide => r.wide,
		};
		r.launch + if complex { 8.0 } else { 2.0 } * m as f64 * n as f64 * k as f64 / rate
	}

	/// the predicted seconds of a target precision's error bound for `shape`
	pub(crate) fn bound(&self, Shape { m, n, k }: Shape, complex: bool) -> f64 {
		let (t0, rate) = self.bound;
		t0 + if complex { 4.0 } else { 2.0 } * m as f64 * n as f64 * k as f64 / rate
	}

	/// the predicted seconds of the bounds of a complex product's separately scaled parts
	pub(crate) fn part_bounds(&self, shape: Shape) -> f64 {
		4.0 * self.part_bounds * self.bound(shape, false)
	}

	/// the predicted seconds of `scheme`'s phases (split, products, reconstruction) for an
	/// `m x k` by `k x n` product, scheme I on the route it takes ([`CostModel::scheme1_unfused`]);
	/// infinite for the native product (which the policy never weighs against the emulation by
	/// time) and for slice counts outside `1..=8`
	pub(crate) fn phases(&self, scheme: Scheme, shape: Shape, complex: bool) -> [f64; 3] {
		match scheme {
			Scheme::SchemeI { slices } if self.scheme1_unfused(slices, shape, complex) => {
				self.scheme1_phases(slices, shape, complex, false)
			},
			_ => self.fused_phases(scheme, shape, complex),
		}
	}

	/// whether a scheme I product of `slices` slices and `shape` runs on the unfused pipeline
	/// where the fused kernel could take it: where this model prices both routes (Hopper) and
	/// predicts the unfused one [`UNFUSED_MARGIN`] of the fused one's time or less
	pub(crate) fn scheme1_unfused(&self, slices: u32, shape: Shape, complex: bool) -> bool {
		let total = |fused| self.scheme1_phases(slices, shape, complex, fused).iter().sum::<f64>();
		let fused = total(true);
		self.unfused_scheme1.is_some() && fused.is_finite() && total(false) <= UNFUSED_MARGIN * fused
	}

	/// scheme I's phases on the fused kernel (`fused`; on the portable path, the only route) or on
	/// the unfused pipeline (infinite where the model has none)
	fn scheme1_phases(&self, slices: u32, shape: Shape, complex: bool, fused: bool) -> [f64; 3] {
		let scheme = Scheme::SchemeI { slices };
		match self.unfused_scheme1 {
			Some(unfused) if !fused => {
				let [split, ..] = self.fused_phases(scheme, shape, complex);
				let Shape { m, n, k } = shape;
				let entries = if complex { 2.0 } else { 1.0 } * m as f64 * n as f64;
				let work = 2.0 * m as f64 * n as f64 * k as f64 * scheme.int8_products(complex) as f64;
				let planes = (slices as usize * k.div_ceil(pass_len(slices, complex)).max(1)) as f64;
				[split, work / unfused.rate, entries * (unfused.reduce.0 + unfused.reduce.1 * planes)]
			},
			None if !fused => [f64::INFINITY; 3],
			_ => self.fused_phases(scheme, shape, complex),
		}
	}

	/// the phases of `scheme` on the fused kernels (the portable path's own on other GPUs)
	fn fused_phases(&self, scheme: Scheme, Shape { m, n, k }: Shape, complex: bool) -> [f64; 3] {
		let c = if complex { 2.0 } else { 1.0 };
		let (elements, entries) = (c * (m + n) as f64 * k as f64, c * m as f64 * n as f64);
		let products = scheme.int8_products(complex) as f64;
		let work = 2.0 * m as f64 * n as f64 * k as f64 * products;
		let traffic = entries * products * self.product_traffic;
		let split = |(s0, s1): (f64, f64), planes: u32| self.overhead + elements * (s0 + s1 * planes as f64);
		match scheme {
			Scheme::Native => [f64::INFINITY; 3],
			Scheme::SchemeI { slices } => {
				let Some(&rate) = self.rate_scheme1.get((slices as usize).wrapping_sub(1)) else {
					return [f64::INFINITY; 3];
				};
				let passes = k.div_ceil(pass_len(slices, complex)).max(1) as f64;
				[
					split(self.split_scheme1, slices),
					work / rate + traffic + entries * self.epilogue_scheme1 * passes,
					0.0,
				]
			},
			Scheme::SchemeII { moduli, .. } => {
				let rate = self.rate_scheme2 * if complex { self.rate_3m } else { 1.0 };
				[
					split(self.split_scheme2, moduli),
					work / rate + traffic,
					entries * (self.crt.0 + self.crt.1 * moduli as f64),
				]
			},
		}
	}

	/// the predicted seconds of `scheme` for `shape`: the sum of its [`CostModel::phases`] (what
	/// [`Scheme::cost`] gives with this crate's own model)
	pub(crate) fn seconds(&self, scheme: Scheme, shape: Shape, complex: bool) -> f64 {
		self.phases(scheme, shape, complex).iter().sum()
	}
}

// the policy's weight of a scheme lives with the model that predicts it
impl Scheme {
	/// the time the policy minimises: the predicted seconds of this scheme for an `m x k` by
	/// `k x n` product, `shape = (m, n, k)`, on a Hopper GPU (the model refitted on an NVIDIA
	/// H100; see `src/cost.rs`). Every backend weighs plans by it, so that the CPU oracle and the
	/// GPU pick the same plan. Infinite for [`Scheme::Native`]
	///
	/// # example
	/// ```
	/// use emugemm::{Scaling, Scheme};
	/// let shape = (8192, 8192, 8192);
	/// let fast = |moduli| Scheme::SchemeII { moduli, scaling: Scaling::Fast };
	/// // measured on the H100: 2 slices 4.9 ms, 8 slices 30 ms (H200); 14 moduli 12.4 ms
	/// assert!(Scheme::SchemeI { slices: 2 }.cost(shape, false) < fast(10).cost(shape, false));
	/// assert!(fast(18).cost(shape, false) < Scheme::SchemeI { slices: 8 }.cost(shape, false));
	/// assert_eq!(Scheme::Native.cost(shape, false), f64::INFINITY);
	/// ```
	pub fn cost(self, shape: (usize, usize, usize), complex: bool) -> f64 {
		HOPPER.seconds(self, shape.into(), complex)
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::Scaling;

	const fn one(slices: u32) -> Scheme {
		Scheme::SchemeI { slices }
	}

	const fn two(moduli: u32) -> Scheme {
		Scheme::SchemeII {
			moduli,
			scaling: Scaling::Fast,
		}
	}

	/// the end-to-end medians (ms) of the default route, `n x n x n`, measured by
	/// `examples/bench.rs` on an NVIDIA H200 (2026-11-22): the `emugemm` rows
	/// (`SchemeII { moduli: 10 }` is the `F32` row, which runs it), and for c64 at 16384 the
	/// `emugemm unfused` row: the model prices complex products with K > 8,192 as the unfused
	/// route (see the module's docs)
	const MEASURED: &[(&str, usize, Scheme, f64)] = &[
		("f64", 4096, two(8), 1.646),
		("f64", 4096, two(10), 1.829),
		("f64", 4096, two(12), 2.111),
		("f64", 4096, two(14), 2.350),
		("f64", 4096, two(15), 2.437),
		("f64", 4096, two(16), 2.575),
		("f64", 4096, two(18), 2.784),
		("f64", 4096, two(20), 2.997),
		("f64", 4096, one(2), 1.499),
		("f64", 4096, one(4), 1.891),
		("f64", 4096, one(8), 4.350),
		("c64", 4096, two(15), 6.447),
		("c64", 4096, two(18), 7.549),
		("f32", 4096, one(2), 1.399),
		("f32", 4096, one(3), 1.729),
		("f32", 4096, one(4), 1.800),
		("f32", 4096, two(10), 1.775),
		("f64", 8192, two(8), 8.776),
		("f64", 8192, two(10), 10.615),
		("f64", 8192, two(12), 12.565),
		("f64", 8192, two(14), 14.459),
		("f64", 8192, two(15), 15.242),
		("f64", 8192, two(16), 16.199),
		("f64", 8192, two(18), 17.957),
		("f64", 8192, two(20), 19.603),
		("f64", 8192, one(2), 5.436),
		("f64", 8192, one(4), 9.251),
		("f64", 8192, one(8), 30.185),
		("c64", 8192, two(15), 45.713),
		("c64", 8192, two(18), 56.578),
		("f32", 8192, one(2), 5.493),
		("f32", 8192, one(3), 7.725),
		("f32", 8192, one(4), 9.156),
		("f32", 8192, two(10), 10.116),
		("f64", 16384, two(10), 81.632),
		("f64", 16384, two(15), 123.507),
		("f64", 16384, two(16), 133.808),
		("f64", 16384, two(18), 146.888),
		("f64", 16384, one(2), 28.230),
		("f64", 16384, one(4), 66.437),
		("f64", 16384, one(8), 253.015),
		("c64", 16384, two(15), 367.960),
		("f32", 16384, one(2), 27.434),
		("f32", 16384, one(3), 44.516),
		("f32", 16384, one(4), 63.870),
		("f32", 16384, two(10), 81.194),
	];

	/// the fused scheme I kernel alone (`fused scheme I kernel p=1..8`, f64 out, ms at n = 4096,
	/// 8192, 16384), the same runs
	const KERNEL_ALONE: [[f64; 3]; 8] = [
		[0.556, 2.379, 11.927],
		[0.672, 3.580, 21.573],
		[0.919, 5.646, 39.101],
		[0.997, 7.447, 59.050],
		[1.680, 13.360, 121.464],
		[1.848, 15.881, 132.451],
		[2.608, 22.960, 193.401],
		[3.550, 27.810, 249.474],
	];

	/// the predicted ms of `scheme` on the fused kernels, the route of the rows of [`MEASURED`]
	fn predicted_ms(ty: &str, n: usize, scheme: Scheme) -> f64 {
		1e3 * H200.fused_phases(scheme, Shape::new(n, n, n), ty == "c64").iter().sum::<f64>()
	}

	/// scheme I on both routes in one process, `n x n x n`, ms: `(GPU, type, n, slices, fused,
	/// unfused)`. The H200's rows are those the unfused constants are fitted to (2026-11-22); the
	/// H100's (2026-11-25; p = 4 at n = 8192 from the portable-path table of docs/PERFORMANCE.md,
	/// f32 p = 2 at 8192 from a run of its own) come from a build whose split and products run
	/// 5-15% faster on both routes than the H200's build, so they check which route is faster,
	/// not the predicted times
	const BOTH_ROUTES: &[(&str, &str, usize, u32, f64, f64)] = &[
		("H200", "f64", 4096, 2, 1.598, 1.290),
		("H200", "f64", 4096, 4, 1.959, 2.053),
		("H200", "f32", 4096, 2, 1.533, 1.439),
		("H200", "f32", 4096, 4, 1.892, 2.127),
		("H200", "f64", 8192, 2, 5.629, 4.945),
		("H200", "f64", 8192, 4, 9.341, 11.447),
		("H200", "f32", 8192, 2, 5.610, 4.675),
		("H200", "f32", 8192, 4, 9.077, 11.187),
		("H200", "f64", 16384, 2, 28.516, 30.927),
		("H200", "f64", 16384, 4, 65.466, 83.832),
		("H200", "f32", 16384, 2, 27.956, 30.617),
		("H200", "f32", 16384, 4, 64.714, 83.238),
		("H100", "f64", 4096, 2, 1.249, 1.080),
		("H100", "f64", 4096, 4, 1.656, 2.030),
		("H100", "f32", 4096, 2, 1.210, 1.005),
		("H100", "f32", 4096, 4, 1.831, 1.950),
		("H100", "f64", 8192, 2, 5.388, 4.909),
		("H100", "f64", 8192, 4, 8.860, 11.830),
		("H100", "f32", 8192, 2, 4.960, 4.450),
		("H100", "f32", 8192, 4, 8.500, 11.440),
	];

	/// the unfused scheme I rows of the H200 within 25% of the model (at n = 4096 the split of
	/// those rows takes 20-40% longer than the model on both routes)
	#[test]
	fn predicts_the_unfused_scheme1_rows() {
		for &(gpu, ty, n, slices, _, ms) in BOTH_ROUTES.iter().filter(|r| r.0 == "H200") {
			let shape = Shape::new(n, n, n);
			let phases = H200.scheme1_phases(slices, shape, false, false);
			let predicted = 1e3 * phases.iter().sum::<f64>();
			assert!(
				(predicted / ms - 1.0).abs() < 0.25,
				"{gpu} {ty} n={n} p={slices}: measured {ms} ms unfused, predicted {predicted:.3} ms"
			);
			assert!(phases[2] > 0.0, "the unfused pipeline's shift-reduce is a pass of its own");
		}
	}

	/// wherever the two routes of a measured scheme I plan differ by more than 5%, the model
	/// runs the plan on the faster one
	#[test]
	fn routes_scheme1_as_measured() {
		let mut compared = 0;
		for &(gpu, ty, n, slices, fused, unfused) in BOTH_ROUTES {
			if (fused / unfused - 1.0).abs() <= 0.05 {
				continue;
			}
			let chosen = H200.scheme1_unfused(slices, Shape::new(n, n, n), false);
			assert_eq!(
				chosen,
				unfused < fused,
				"{gpu} {ty} n={n} p={slices}: fused {fused} ms, unfused {unfused} ms"
			);
			compared += 1;
		}
		assert!(compared >= 18, "{compared} compared");
	}

	/// the portable path's model has one scheme I route, the unfused pipeline its terms describe
	#[test]
	fn one_scheme1_route_without_the_fused_kernel() {
		let portable = CostModel {
			unfused_scheme1: None,
			..H200
		};
		let shape = Shape::new(8192, 8192, 8192);
		assert!(!portable.scheme1_unfused(2, shape, false));
		assert_eq!(portable.phases(one(2), shape, false), portable.fused_phases(one(2), shape, false));
		assert!(H200.scheme1_unfused(2, shape, false) && H200.phases(one(2), shape, false) != H200.fused_phases(one(2), shape, false));
		assert!(!H200.scheme1_unfused(4, shape, false), "p = 4 stays fused");
		assert_eq!(H200.seconds(one(9), shape, false), f64::INFINITY);
	}

	/// wherever two measured plans of one type and size differ by more than the run-to-run spread
	/// (2-6% between runs on the H200; 5% here), the model orders them the same way: the policy,
	/// which takes the cheapest plan by the model, then takes the faster one
	#[test]
	fn orders_the_measured_plans_as_measured() {
		let mut compared = 0;
		for &(ty, n, x, tx) in MEASURED {
			for &(ty2, n2, y, ty_ms) in MEASURED {
				if (ty, n) != (ty2, n2) || tx >= 0.95 * ty_ms {
					continue;
				}
				let (px, py) = (predicted_ms(ty, n, x), predicted_ms(ty, n, y));
				assert!(
					px < py,
					"{ty} n={n}: {x} measured {tx} ms < {y} {ty_ms} ms, predicted {px:.3} >= {py:.3} ms"
				);
				compared += 1;
			}
		}
		assert!(compared > 140, "{compared} ordered pairs");
	}

	/// each measured end-to-end time within 20% of the model (at n = 16384 the longest products
	/// run 8-15% below the fitted rates, both schemes alike)
	#[test]
	fn predicts_the_measured_times() {
		for &(ty, n, scheme, ms) in MEASURED {
			let predicted = predicted_ms(ty, n, scheme);
			assert!(
				(predicted / ms - 1.0).abs() < 0.2,
				"{ty} n={n} {scheme}: measured {ms} ms, predicted {predicted:.3} ms"
			);
		}
	}

	/// the model's products phase of scheme I against the fused kernel alone, within 20%
	#[test]
	fn predicts_the_fused_scheme1_kernel() {
		for (slices, times) in (1..).zip(KERNEL_ALONE) {
			for (n, ms) in [4096, 8192, 16384].into_iter().zip(times) {
				let predicted = 1e3 * H200.fused_phases(one(slices), Shape::new(n, n, n), false)[1];
				assert!(
					(predicted / ms - 1.0).abs() < 0.2,
					"p={slices} n={n}: measured {ms} ms, predicted {predicted:.3} ms"
				);
			}
		}
	}
}
