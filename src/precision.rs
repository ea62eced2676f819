//! what the user asks for ([`Precision`]), what runs ([`Plan`]), and the policy between them
//!
//! # the policy
//!
//! | precision | target (scaled bits, see [`crate::testing`]) | plans considered |
//! |---|---|---|
//! | [`Precision::Tf32`] | 11 | scheme I `p = 1..=8`, scheme II `p = 2..=20` |
//! | [`Precision::F32`] | 23 | same |
//! | [`Precision::F64`] | 52 | same |
//! | [`Precision::Bits`]`(n)` | `n` | same |
//! | [`Precision::SchemeI`] / [`Precision::SchemeII`] | none: the plan is given | that plan |
//!
//! the target never exceeds `mantissa - 1` of the output type (an `f32` result cannot carry 52
//! bits). the targets sit at or above the bits a native GEMM of that precision reaches (native
//! FP64 reaches 45-53 scaled bits, FP32 19-24, TF32 10-11), so meeting the target keeps the
//! promise "bits >= native bits - 1".
//!
//! among the plans whose *predicted* bits meet the target, the cheapest by [`Scheme::cost`] wins; if
//! none does (very wide exponent ranges), the product is computed natively and the report says so.
//!
//! the cost is the plan's time *measured*, not assumed: a model of the GPU pipeline's phases for the
//! product's shape `(m, n, k)` — a fixed cost per call, the split at a cost per operand element and
//! digit or residue plane, the INT8 products at the rate measured for each scheme I slice count
//! (fused kernel, reconstruction in its epilogue) and for scheme II (fused kernel writing residue
//! planes), and scheme II's CRT per output entry and modulus — whose constants are fitted to the
//! phase times of benchmark runs on an NVIDIA H200 (`src/cost.rs` names the runs; docs/PERF.md,
//! "Issue 5, step 2: the measured crossover", has the fit, its errors and the crossover table).
//! Per INT8 product the fused scheme I kernel is as fast as scheme II's or faster, but scheme I
//! needs `p(p+1)/2` products where scheme II needs `p`, and its split is dearer per plane: scheme I
//! wins at low precision on large products (TF32 level from n = 8192 on, on the benchmark's
//! inputs), scheme II from about FP32 level up. Every backend ranks plans by the same model, so
//! that the CPU oracle picks the plan the GPU picks.
//!
//! # the accuracy model
//!
//! the error of an emulated product, measured against $(|A||B|)_{ij}$, comes from representing each
//! row $a_i$ (column $b_j$) by integers of quantum $2^{-\sigma_i}$. for an entry of typical size, the
//! relative representation error is $2^{-(\sigma_i + E_i - \delta_i)}$ where $E_i$ is the exponent of
//! the row's largest magnitude and $\delta_i$ the median distance of the row's exponents below it
//! (the *spread*, read from the inputs: wide-range inputs have large spreads). the predicted bits
//! of an operand are the minimum over its rows of $\sigma_i + E_i - \delta_i$; for the product,
//! $-\log_2(2^{-b_A} + 2^{-b_B}) - 2$ (a 2-bit margin for the worst pairing of rows and columns),
//! combined with the output rounding $2^{-\mathrm{mantissa}}$. for scheme I,
//! $\sigma_i + E_i = 8p - 2$ (or one less), and its round-to-nearest digits make unbiased errors
//! that cancel over K like a random walk: $\max(0, \frac12 \log_2 K - 2.5)$ bits are credited
//! (the 2.5 bits cover the largest of the $mn$ entries); scheme II truncates towards zero, whose
//! errors do not cancel on inputs of one sign, so it gets no such credit. for scheme II with fast scaling
//! $\sigma_i = \lfloor(\Lambda_p - \log_2 \lceil\|a_i\|^2\rceil)/2\rfloor$, which costs about
//! $\frac12 \log_2 K$ bits on dense rows.

use crate::fp::ceil_log2;
use crate::scheme1;
use crate::scheme2::{self, MAX_MODULI};
use crate::stats::RowStats;
use core::fmt;

/// the accuracy a product is asked for
///
/// # example
/// ```
/// use emugemm::Precision;
/// let p = Precision::Bits(40);
/// assert_eq!(p.target_bits(53), Some(40));
/// assert_eq!(Precision::F64.target_bits(24), Some(23));
/// assert_eq!(Precision::SchemeII { moduli: 15 }.target_bits(53), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
	/// at least the accuracy of a TF32 tensor-core GEMM on the same inputs (minus one bit)
	Tf32,
	/// at least the accuracy of a native FP32 GEMM on the same inputs (minus one bit)
	F32,
	/// at least the accuracy of a native FP64 GEMM on the same inputs (minus one bit)
	F64,
	/// at least this many scaled bits (see [`crate::testing::Accuracy`])
	Bits(u32),
	/// Ozaki scheme I with this many slices (1..=8), for experts and benchmarks
	SchemeI {
		/// the slice count `p`: `p(p+1)/2` INT8 products, `8p - 1` bits per operand
		slices: u32,
	},
	/// Ozaki scheme II with this many moduli (2..=20), for experts and benchmarks
	SchemeII {
		/// the moduli count `p`: `p` INT8 products
		moduli: u32,
	},
}

impl Precision {
	/// the scaled bits the policy aims at for an output of `mantissa` significand bits, or `None`
	/// for explicit plans
	pub fn target_bits(self, mantissa: u32) -> Option<u32> {
		let wanted = match self {
			Precision::Tf32 => 11,
			Precision::F32 => 23,
			Precision::F64 => 52,
			Precision::Bits(n) => n,
			Precision::SchemeI { .. } | Precision::SchemeII { .. } => return None,
		};
		Some(wanted.min(mantissa - 1))
	}
}

/// how scheme II chooses the power-of-two scaling of rows and columns
///
/// both guarantee that the integer product fits the CRT range on every input
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Scaling {
	/// Cauchy–Schwarz bound from the row and column norms; no extra product
	#[default]
	Fast,
	/// an entrywise bound of $|A||B|$ from one extra INT8 product; about $\frac12\log_2 K$ more
	/// bits on dense data
	Accurate,
}

/// the algorithm a plan runs
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
	/// the native product (faer on the CPU)
	Native,
	/// Ozaki scheme I with `slices` balanced int8 digits
	SchemeI {
		/// the slice count
		slices: u32,
	},
	/// Ozaki scheme II with `moduli` moduli
	SchemeII {
		/// the moduli count
		moduli: u32,
		/// the scaling rule
		scaling: Scaling,
	},
}

impl Scheme {
	/// the number of INT8 products (complex: 4M for scheme I, 3M for scheme II, plus the bound
	/// product of accurate scaling)
	pub fn int8_products(self, complex: bool) -> u32 {
		match self {
			Scheme::Native => 0,
			Scheme::SchemeI { slices: p } => p * (p + 1) / 2 * if complex { 4 } else { 1 },
			Scheme::SchemeII { moduli, scaling } => {
				moduli * if complex { 3 } else { 1 } + (scaling == Scaling::Accurate) as u32 * if complex { 2 } else { 1 }
			},
		}
	}

	/// the time the policy minimises: the predicted seconds of this scheme for an `m x k` by
	/// `k x n` product, `shape = (m, n, k)`, on the GPU whose measurements the cost model was fitted
	/// to (an NVIDIA H200; see the module docs). Every backend weighs plans by it, so that the CPU
	/// oracle and the GPU pick the same plan. Infinite for [`Scheme::Native`]
	///
	/// # example
	/// ```
	/// use emugemm::{Scaling, Scheme};
	/// let shape = (8192, 8192, 8192);
	/// let fast = |moduli| Scheme::SchemeII { moduli, scaling: Scaling::Fast };
	/// // measured on the H200: 4 slices 9.3 ms, 10 moduli 10.6 ms; 8 slices 30.2 ms, 18 moduli 18.0 ms
	/// assert!(Scheme::SchemeI { slices: 4 }.cost(shape, false) < fast(10).cost(shape, false));
	/// assert!(fast(18).cost(shape, false) < Scheme::SchemeI { slices: 8 }.cost(shape, false));
	/// assert_eq!(Scheme::Native.cost(shape, false), f64::INFINITY);
	/// ```
	pub fn cost(self, shape: (usize, usize, usize), complex: bool) -> f64 {
		crate::cost::H200.phases(self, shape, complex).iter().sum()
	}
}

impl fmt::Display for Scheme {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match self {
			Scheme::Native => write!(f, "native"),
			Scheme::SchemeI { slices } => write!(f, "scheme I, {slices} slices"),
			Scheme::SchemeII {
				moduli,
				scaling: Scaling::Fast,
			} => write!(f, "scheme II, {moduli} moduli"),
			Scheme::SchemeII {
				moduli,
				scaling: Scaling::Accurate,
			} => write!(f, "scheme II, {moduli} moduli, accurate scaling"),
		}
	}
}

/// what runs for one product: the scheme and what the model predicts of it
///
/// # example
/// ```
/// use emugemm::{Backend, Emulator, Precision, Scheme};
/// let a = emugemm::testing::random_matrix::<f64>(16, 8, 1.0, 1);
/// let b = emugemm::testing::random_matrix::<f64>(8, 4, 1.0, 2);
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// let plan = emu.plan(a.as_ref(), b.as_ref(), Precision::F64).unwrap();
/// assert!(matches!(plan.scheme, Scheme::SchemeII { .. }));
/// assert!(plan.predicted_bits >= 52.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
	/// the algorithm
	pub scheme: Scheme,
	/// the scaled bits the accuracy model predicts (`+inf` for a zero product; NaN for native
	/// plans, whose accuracy is not modelled)
	pub predicted_bits: f64,
	/// the number of passes over K that scheme I needs to stay within its exact INT32 bound
	pub k_passes: usize,
}

impl fmt::Display for Plan {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		if self.scheme == Scheme::Native {
			return write!(f, "{}", self.scheme);
		}
		write!(f, "{} (predicted {:.1} bits", self.scheme, self.predicted_bits)?;
		if self.k_passes > 1 {
			write!(f, ", {} K passes", self.k_passes)?;
		}
		write!(f, ")")
	}
}

impl Plan {
	/// the native product
	pub(crate) fn native() -> Plan {
		Plan {
			scheme: Scheme::Native,
			predicted_bits: f64::NAN,
			k_passes: 1,
		}
	}
}

/// the safety margin of the model, in bits (worst pairing of rows and columns)
const MODEL_MARGIN: f64 = 2.0;

/// the inputs of the policy: row statistics of `A`, column statistics of `B`, the shape
pub(crate) struct PolicyInput<'a> {
	pub lhs: &'a [RowStats],
	pub rhs: &'a [RowStats],
	pub k: usize,
	pub complex: bool,
	pub mantissa: u32,
}

impl PolicyInput<'_> {
	/// the predicted scaled bits of `scheme` on these inputs
	pub fn predicted_bits(&self, scheme: Scheme) -> f64 {
		let out = -(self.mantissa as f64);
		let (a, b) = match scheme {
			Scheme::Native => return f64::NAN,
			Scheme::SchemeI { slices } => {
				// round-to-nearest digits: unbiased errors that cancel like a random walk over K
				let cancellation = (0.5 * (self.k as f64).log2() - 2.5).max(0.0);
				let bits = |r: &RowStats| 8.0 * slices as f64 - 3.0 - r.spread.unwrap_or(0) as f64 + cancellation;
				(operand_bits(self.lhs, bits), operand_bits(self.rhs, bits))
			},
			Scheme::SchemeII { moduli, .. } => {
				let lambda = scheme2::lambda(moduli);
				let bits = |r: &RowStats| (scheme2::fast_shift(r.norm, lambda) + r.e_max) as f64 - r.spread.unwrap_or(0) as f64;
				(operand_bits(self.lhs, bits), operand_bits(self.rhs, bits))
			},
		};
		if a.is_infinite() || b.is_infinite() {
			return f64::INFINITY;
		}
		let emulation = -((-a).exp2() + (-b).exp2()).log2() - MODEL_MARGIN;
		-((-emulation).exp2() + out.exp2()).log2()
	}

	/// the plan for `precision`: the given plan for an explicit precision, otherwise the cheapest
	/// of [`PolicyInput::candidates`], or the native product when none meets the target; evaluated
	/// on the [`governing_rows`], which predict the same bits as all rows
	pub fn choose(&self, precision: Precision) -> Plan {
		self.governed(|input, shape| match precision {
			Precision::SchemeI { slices } => input.plan(Scheme::SchemeI { slices }),
			Precision::SchemeII { moduli } => input.plan(Scheme::SchemeII {
				moduli,
				scaling: Scaling::Fast,
			}),
			_ => input.ranked(precision, shape).first().copied().unwrap_or_else(Plan::native),
		})
	}

	/// the plans whose predicted bits meet the target of `precision` (none for explicit plans),
	/// cheapest first by [`Scheme::cost`] at this shape, evaluated on the [`governing_rows`]
	pub fn candidates(&self, precision: Precision) -> Vec<Plan> {
		self.governed(|input, shape| input.ranked(precision, shape))
	}

	/// `f` of these inputs reduced to their [`governing_rows`], and of the product's shape
	fn governed<R>(&self, f: impl FnOnce(&PolicyInput<'_>, (usize, usize, usize)) -> R) -> R {
		let (lhs, rhs) = (governing_rows(self.lhs), governing_rows(self.rhs));
		let reduced = PolicyInput {
			lhs: &lhs,
			rhs: &rhs,
			..*self
		};
		f(&reduced, (self.lhs.len(), self.rhs.len(), self.k))
	}

	/// [`PolicyInput::candidates`] on these rows, for a product of `shape`
	fn ranked(&self, precision: Precision, shape: (usize, usize, usize)) -> Vec<Plan> {
		let Some(target) = precision.target_bits(self.mantissa) else {
			return Vec::new();
		};
		let schemes = (1..=scheme1::MAX_SLICES)
			.map(|slices| Scheme::SchemeI { slices })
			.chain((2..=MAX_MODULI).map(|moduli| Scheme::SchemeII {
				moduli,
				scaling: Scaling::Fast,
			}));
		let mut plans: Vec<Plan> = schemes
			.map(|s| self.plan(s))
			.filter(|p| p.predicted_bits >= target as f64)
			.collect();
		plans.sort_by(|x, y| x.scheme.cost(shape, self.complex).total_cmp(&y.scheme.cost(shape, self.complex)));
		plans
	}

	/// `scheme` with its predicted bits and K passes on these inputs
	fn plan(&self, scheme: Scheme) -> Plan {
		Plan {
			scheme,
			predicted_bits: self.predicted_bits(scheme),
			k_passes: k_passes(scheme, self.k, self.complex),
		}
	}
}

/// the rows that decide the predicted bits: of the nonzero rows of each spread, one with the
/// largest `ceil(log2 T)` of its norm bound. A row's predicted bits fall as its spread grows and
/// as `ceil(log2 T)` grows, under both schemes (scheme II's `fast_shift + e_max` is
/// `floor((lambda + 32 - ceil(log2 T)) / 2)`, independent of `e_max`; scheme I's bits depend on
/// the spread alone), and the model takes the minimum over nonzero rows, skipping zero rows: so
/// these rows, at most one per spread, predict the same bits as all rows. One pass over the rows
/// and a table indexed by the spread (4096 rows: a few microseconds; all rows into the 27
/// candidates: 1.4 ms)
fn governing_rows(rows: &[RowStats]) -> Vec<RowStats> {
	// per spread: the largest ceil(log2 T) seen (-1: none) and the index of its row
	let (mut worst, mut at) = ([-1i32; 256], [0u32; 256]);
	let mut others = Vec::new();
	for (i, r) in rows.iter().enumerate() {
		match (r.spread, r.norm) {
			(Some(s), Some((_, t))) => {
				let c = ceil_log2(t);
				if c > worst[s as usize] {
					worst[s as usize] = c;
					at[s as usize] = i as u32;
				}
			},
			(None, _) => {},
			(Some(_), None) => others.push(*r),
		}
	}
	(0..256)
		.filter(|&s| worst[s] >= 0)
		.map(|s| rows[at[s] as usize])
		.chain(others)
		.collect()
}

fn operand_bits(rows: &[RowStats], bits: impl Fn(&RowStats) -> f64) -> f64 {
	rows.iter().filter(|r| r.spread.is_some()).map(bits).fold(f64::INFINITY, f64::min)
}

/// the K length of one scheme I pass: the largest multiple of 128 within the exact INT32 bound
/// (halved for complex products, whose 4M stacks real and imaginary parts along K); 128 = the K
/// blocks of the fused GPU kernel (4 chunks of 32), which then never straddle two passes
pub(crate) fn pass_len(slices: u32, complex: bool) -> usize {
	scheme1::k_max(slices) / if complex { 2 } else { 1 } / 128 * 128
}

/// scheme I passes over K
fn k_passes(scheme: Scheme, k: usize, complex: bool) -> usize {
	match scheme {
		Scheme::SchemeI { slices } => k.div_ceil(pass_len(slices, complex)).max(1),
		_ => 1,
	}
}

impl Plan {
	/// the K ranges of the plan's passes (one range for scheme II)
	pub(crate) fn pass_ranges(&self, k: usize, complex: bool) -> Vec<core::ops::Range<usize>> {
		let len = match self.scheme {
			Scheme::SchemeI { slices } => pass_len(slices, complex),
			_ => k.max(1),
		};
		(0..self.k_passes).map(|q| (q * len).min(k)..((q + 1) * len).min(k)).collect()
	}
}

/// checks an explicit plan's parameters, and that the output type can hold the bits asked for
pub(crate) fn validate<T: crate::Scalar>(precision: Precision) -> Result<(), crate::Error> {
	let bad = |reason: &'static str| Err(crate::Error::InvalidPrecision { precision, reason });
	match precision {
		Precision::Bits(n) if n >= T::MANTISSA_BITS => {
			bad("the output type cannot hold that many bits (at most its significand bits minus one)")
		},
		Precision::SchemeI { slices } if !(1..=scheme1::MAX_SLICES).contains(&slices) => bad("scheme I takes 1..=8 slices"),
		Precision::SchemeII { moduli } if !(2..=MAX_MODULI).contains(&moduli) => bad("scheme II takes 2..=20 moduli"),
		_ => Ok(()),
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	/// the policy on the governing rows ranks the plans, and predicts their bits, as it does on all
	/// rows, for automatic and explicit plans
	#[test]
	fn governing_rows_change_nothing() {
		let mut state = 12345u64;
		let mut next = |n: u64| {
			state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
			(state >> 33) % n
		};
		for case in 0..40 {
			let rows: Vec<RowStats> = (0..300)
				.map(|_| {
					let e_max = next(40) as i32 - 20;
					if next(50) == 0 {
						return RowStats {
							e_max: 0,
							spread: None,
							norm: None,
						};
					}
					RowStats {
						e_max,
						spread: Some(next(1 + case as u64 % 30) as u8),
						norm: Some((e_max, 1 + next(1 << (10 + case % 40)))),
					}
				})
				.collect();
			let input = PolicyInput {
				lhs: &rows[..150],
				rhs: &rows[150..],
				k: 1 + next(100_000) as usize,
				complex: case % 2 == 1,
				mantissa: if case % 3 == 0 { 24 } else { 53 },
			};
			let shape = (input.lhs.len(), input.rhs.len(), input.k);
			for precision in [Precision::Tf32, Precision::F32, Precision::F64, Precision::Bits(30)] {
				assert_eq!(
					input.candidates(precision),
					input.ranked(precision, shape),
					"case {case}, {precision:?}"
				);
			}
			for scheme in [
				Scheme::SchemeI { slices: 1 + case % 8 },
				Scheme::SchemeII {
					moduli: 2 + case % 19,
					scaling: Scaling::Fast,
				},
			] {
				let precision = match scheme {
					Scheme::SchemeI { slices } => Precision::SchemeI { slices },
					Scheme::SchemeII { moduli, .. } => Precision::SchemeII { moduli },
					Scheme::Native => unreachable!(),
				};
				assert_eq!(input.choose(precision), input.plan(scheme), "case {case}, {scheme:?}");
			}
		}
	}
}
