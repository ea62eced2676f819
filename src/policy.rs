//! the policy: from a [`Precision`] and a product's error bound to the [`Plan`] that runs
//!
//! an explicit precision ([`Precision::SchemeI`], [`Precision::SchemeII`]) runs its plan as given,
//! without a bound. a target precision weighs every emulated plan (scheme I with 1..=8 slices,
//! scheme II with 2..=20 moduli under the context's scaling): each row of the product whose
//! bound ([`crate::bound::Bound::row_error`]) meets the target is emulated, the others are
//! computed natively. a plan that leaves at most an eighth of the rows to the native product is
//! a candidate; candidates are ranked by their predicted seconds ([`Scheme::cost`] plus the native
//! rows at [`NATIVE_ROW_RATE`]), and where there is none the whole product is native. every
//! backend runs the same policy on the same bound, so the CPU oracle picks the plan the GPU picks

use crate::bound::{Bound, bits};
use crate::precision::k_passes;
use crate::{Plan, Precision, Scaling, Scheme, scheme1, scheme2};

/// the floating-point operations per second assumed of the native recomputation of uncertified
/// rows (a plain sum of products per entry on the GPU): low on purpose, so that the policy prefers
/// plans that certify more rows
const NATIVE_ROW_RATE: f64 = 1e12;

/// the largest share of the rows a candidate may leave to the native product
const MAX_NATIVE_SHARE: usize = 8;

/// the policy's decision: the plan, and the rows of the product it computes natively
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Choice {
	pub plan: Plan,
	/// ascending
	pub native_rows: Vec<usize>,
}

impl Choice {
	/// the whole product of `m` rows computed natively
	pub fn native(m: usize) -> Choice {
		Choice {
			plan: Plan::native(m),
			native_rows: (0..m).collect(),
		}
	}
}

/// what the policy weighs for one product
pub(crate) struct PolicyInput<'a> {
	/// the product's error bound (needed for target precisions only)
	pub bound: Option<&'a Bound>,
	/// `(m, n, k)`
	pub shape: (usize, usize, usize),
	pub complex: bool,
	/// the output's significand bits
	pub mantissa: u32,
	/// the context's scheme II scaling
	pub scaling: Scaling,
}

impl PolicyInput<'_> {
	/// the plan for `precision`: the given plan for an explicit precision, otherwise the cheapest
	/// of [`PolicyInput::candidates`], or the native product where there is none
	pub fn choose(&self, precision: Precision) -> Choice {
		let explicit = match precision {
			Precision::SchemeI { slices } => Some(Scheme::SchemeI { slices }),
			Precision::SchemeII { moduli } => Some(Scheme::SchemeII {
				moduli,
				scaling: self.scaling,
			}),
			_ => None,
		};
		if let Some(scheme) = explicit {
			return Choice {
				plan: Plan {
					scheme,
					predicted_bits: f64::NAN,
					k_passes: k_passes(scheme, self.shape.2, self.complex),
					native_rows: 0,
				},
				native_rows: Vec::new(),
			};
		}
		self.candidates(precision)
			.into_iter()
			.next()
			.unwrap_or_else(|| Choice::native(self.shape.0))
	}

	/// the plans that meet the target of `precision` on all but at most an eighth of the rows,
	/// cheapest first (none for explicit precisions or without a bound)
	pub fn candidates(&self, precision: Precision) -> Vec<Choice> {
		let (Some(bound), Some(target)) = (self.bound, precision.target_bits(self.mantissa, self.shape.2)) else {
			return Vec::new();
		};
		let schemes = (1..=scheme1::MAX_SLICES)
			.map(|slices| Scheme::SchemeI { slices })
			.chain((2..=scheme2::MAX_MODULI).map(|moduli| Scheme::SchemeII {
				moduli,
				scaling: self.scaling,
			}));
		let mut ranked: Vec<(f64, Choice)> = schemes
			.filter_map(|scheme| self.evaluate(bound, scheme, precision, target))
			.map(|choice| (self.seconds(&choice), choice))
			.collect();
		ranked.sort_by(|x, y| x.0.total_cmp(&y.0));
		ranked.into_iter().map(|(_, choice)| choice).collect()
	}

	/// `scheme` with the rows its bound certifies for `precision` at `target` bits, or `None` when
	/// it leaves more than an eighth of them to the native product. The target of [`Precision::Bits`]
	/// covers the whole error; the targets relative to a native product cover the error before the
	/// final rounding to the output type, which the native product shares
	fn evaluate(&self, bound: &Bound, scheme: Scheme, precision: Precision, target: f64) -> Option<Choice> {
		let m = self.shape.0;
		let output = bound.output_error();
		let threshold = (-target).exp2() - if matches!(precision, Precision::Bits(_)) { output } else { 0.0 };
		let terms = bound.terms(scheme)?;
		let (mut worst, mut native_rows) = (0.0f64, Vec::new());
		for i in 0..m {
			let e = bound.row_error(i, &terms);
			if e <= threshold {
				worst = worst.max(e);
			} else {
				native_rows.push(i);
			}
		}
		if native_rows.len() * MAX_NATIVE_SHARE > m {
			return None;
		}
		Some(Choice {
			plan: Plan {
				scheme,
				predicted_bits: if native_rows.len() == m { f64::NAN } else { bits(worst + output) },
				k_passes: k_passes(scheme, self.shape.2, self.complex),
				native_rows: native_rows.len(),
			},
			native_rows,
		})
	}

	/// the predicted seconds of a choice: its plan, and its native rows
	fn seconds(&self, choice: &Choice) -> f64 {
		let (_, n, k) = self.shape;
		let flops = if self.complex { 8.0 } else { 2.0 } * (choice.native_rows.len() * n * k) as f64;
		choice.plan.scheme.cost(self.shape, self.complex) + flops / NATIVE_ROW_RATE
	}
}
