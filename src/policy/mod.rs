//! the policy: from a [`Precision`] and a product's error bound ([`crate::bound`]) to the [`Plan`]
//! that runs, and the rows of the product it leaves to the native product
//!
//! an explicit precision runs its plan as given; a target precision weighs every emulated plan and
//! the native product by the rows the bound certifies and by predicted seconds ([`crate::cost`]).
//! how it chooses, and why, is the policy section of [`crate::accuracy`]. every backend runs the
//! same policy on the same bound, so that the CPU oracle picks the plan the GPU picks

mod reach;
mod sequence;

pub(crate) use sequence::{Decided, Evidence, decide};

use crate::bound::{Bound, PartBounds, RowBound, bits};
use crate::cost::{CostModel, NativeArithmetic};
use crate::datasheets::GpuModel;
use crate::precision::{MAX_NATIVE_SHARE, k_passes};
use crate::report::NativeReason;
use crate::shape::Shape;
use crate::stats::RowStats;
use crate::{Plan, Precision, Scaling, Scheme, scheme1, scheme2};

/// the share of the native routine's predicted time under which the cheapest plan that could
/// certify a product, with its certificate, must be predicted for the product to reach the
/// operands ([`PolicyInput::native_from_shape`]): the model predicts a plan's time within -40% to
/// +23% on the H100's grid, and a product that reaches the operands and then goes native has paid
/// the certificate; on that grid 0.8 sends native every product that the bound then found slower
/// emulated, and one that it found 6% faster (c64 4096³)
const SHAPE_MARGIN: f64 = 0.8;

/// the rows of `A` and columns of `B` of the screen of separately scaled parts
/// ([`PolicyInput::separate_parts_pay`])
pub(crate) const SCREEN: usize = 256;

/// the policy's decision: the plan, and the rows of the product it computes natively
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Choice {
	pub plan: Plan,
	/// ascending
	pub native_rows: Vec<usize>,
	/// why the whole product is native, where it is
	pub reason: Option<NativeReason>,
}

impl Choice {
	/// the whole product of `m` rows computed natively, for `reason`
	pub fn native(m: usize, reason: NativeReason) -> Choice {
		Choice {
			plan: Plan::native(m),
			native_rows: (0..m).collect(),
			reason: Some(reason),
		}
	}
}

/// what the policy weighs for one product
#[derive(Clone, Copy)]
pub(crate) struct PolicyInput<'a> {
	/// the product's error bound (needed for target precisions only)
	pub bound: Option<&'a Bound>,
	/// complex products: the bounds of the four real products of the parts, where the policy
	/// weighs plans with separately scaled parts ([`PolicyInput::weighs_separate_parts`])
	pub parts: Option<&'a PartBounds>,
	pub shape: Shape,
	pub complex: bool,
	/// the output's significand bits
	pub mantissa: u32,
	/// the context's scheme II scaling
	pub scaling: Scaling,
	/// whether the native product competes with the emulated plans by predicted time; otherwise
	/// it runs only where no emulated plan is a candidate
	pub native_candidate: bool,
	/// the cost model of the GPU the plans are priced for
	pub model: &'static CostModel,
}

impl<'a> PolicyInput<'a> {
	/// the policy's view of an `(m, n, k)` product of `T` in a context with `scaling` and
	/// `native_candidate`, with error bound `bound`
	pub fn of<T: crate::Scalar>(shape: Shape, (scaling, native_candidate): (Scaling, bool), bound: Option<&'a Bound>) -> Self {
		PolicyInput {
			bound,
			parts: None,
			shape,
			complex: T::IS_COMPLEX,
			mantissa: T::MANTISSA_BITS,
			scaling,
			native_candidate,
			model: GpuModel::MEASURED.model(),
		}
	}

	/// the policy's view, before any bound, of an `(m, n, k)` product of `T` in a context of
	/// `settings`: its scaling, whether the native product competes, and its GPU's cost model
	pub fn in_context<T: crate::Scalar>(shape: Shape, settings: &crate::settings::Settings) -> PolicyInput<'static> {
		PolicyInput::of::<T>(shape, (settings.scaling, settings.native_candidate), None).on(settings.model)
	}

	/// the same input priced with the cost model of `gpu`
	pub fn on(self, gpu: GpuModel) -> Self {
		PolicyInput {
			model: gpu.model(),
			..self
		}
	}

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
					k_passes: k_passes(scheme, self.shape.k, self.complex),
					native_rows: 0,
					separate_parts: false,
				},
				native_rows: Vec::new(),
				reason: None,
			};
		}
		let first = self.ranked(precision, true).into_iter().next();
		if first.as_ref().is_none_or(|c| c.plan.scheme == Scheme::Native) {
			let Shape { m, n, k } = self.shape;
			log::info!("emugemm: no emulated plan certifies {precision} for a {m}x{n}x{k} product: it is computed natively");
		}
		first.unwrap_or_else(|| Choice::native(self.shape.m, NativeReason::NoPlanCertifies))
	}

	/// whether `count` products of this shape at a target `precision` go native from the shape
	/// alone, before any operand is read (the first of the decision's tiers:
	/// [`crate::Tier::Shape`]): the native routine competes and the cheapest plan that could
	/// certify the target on any dense operands of this `K` ([`reach`]), plus the certificate's own
	/// cost, is not predicted below [`SHAPE_MARGIN`] of its time; so also wherever no plan could. Small products, `Tf32` of
	/// `f32` against a TF32 GEMM, and products whose `K` needs more moduli than the native
	/// product's time pays for. A batch (`count` > 1) is weighed against one batched GEMM, each of
	/// its products emulated with its certificate
	pub fn native_from_shape(&self, precision: Precision, count: usize) -> bool {
		if !self.native_candidate || precision.target_bits(self.mantissa, self.shape.k).is_none() {
			return false;
		}
		let cheapest = reach::reachable(self, precision)
			.into_iter()
			.map(|s| self.model.seconds(s, self.shape, self.complex))
			.fold(f64::INFINITY, f64::min);
		let native = self.native_seconds(precision);
		let batch = native + (count.max(1) - 1) as f64 * (native - self.model.native.launch);
		SHAPE_MARGIN * batch <= count.max(1) as f64 * (cheapest + self.model.bound(self.shape, self.complex))
	}

	/// the native choice for a target `precision` where the screen ([`crate::screen`]) finds, from
	/// the row statistics of the operands the bound would read (`a` of the rows of `A`, `b` of the
	/// columns of `B`), that no plan certifies the product: the bound is then not computed. The
	/// sampled screen on their sampled rows decides first
	pub fn screened(&self, precision: Precision, (a, b): (&[RowStats], &[RowStats])) -> Option<Choice> {
		use crate::screen::{sample, sample_stride};
		let sampled = match (sample_stride(a.len()), sample_stride(b.len())) {
			(Some(sa), Some(sb)) => self.screened_sample(precision, (&sample(a, sa), &sample(b, sb))),
			_ => None,
		};
		sampled.or_else(|| {
			precision.target_bits(self.mantissa, self.shape.k)?;
			crate::screen::screen((a, b), self.shape, self.complex).map(|reason| Choice::native(self.shape.m, reason))
		})
	}

	/// the native choice for a target `precision` where the sampled screen
	/// ([`crate::screen::sampled`]) finds, from the statistics of the sampled rows `a` of `A` and
	/// columns `b` of `B` alone, that no plan certifies the product; [`PolicyInput::screened`]
	/// asks it first
	pub fn screened_sample(&self, precision: Precision, (a, b): (&[RowStats], &[RowStats])) -> Option<Choice> {
		precision.target_bits(self.mantissa, self.shape.k)?;
		crate::screen::sampled((a, b), self.shape, self.complex).map(|reason| Choice::native(self.shape.m, reason))
	}

	/// the choice for `precision` with plans of separately scaled parts (their bounds `parts`)
	/// weighed after `first`; where it is still the native product, `first` (and its reason)
	pub fn with_parts(&self, first: Choice, parts: &PartBounds, precision: Precision) -> Choice {
		let choice = PolicyInput {
			parts: Some(parts),
			..*self
		}
		.choose(precision);
		if choice.plan.scheme == Scheme::Native { first } else { choice }
	}

	/// the candidates for `precision`, cheapest first: the plans that meet its target on all but at
	/// most an eighth of the rows, and the native product (where it competes by time). None for
	/// explicit precisions or without any bound
	pub fn candidates(&self, precision: Precision) -> Vec<Choice> {
		self.ranked(precision, false)
	}

	/// [`PolicyInput::candidates`], or where `first_only` its first: the candidates are evaluated
	/// against the bound cheapest first by their plan's own predicted time (a lower bound of the
	/// choice's, which adds its native rows), until a choice is predicted faster than the next
	/// plan alone. Ties rank in one order (the shared bound's plans, the separate parts', the
	/// native product), so the first is the same either way
	fn ranked(&self, precision: Precision, first_only: bool) -> Vec<Choice> {
		let Some(target) = precision.target_bits(self.mantissa, self.shape.k) else {
			return Vec::new();
		};
		if self.bound.is_none() && self.parts.is_none() {
			return Vec::new();
		}
		let threshold = |output: f64| (-target).exp2() - if matches!(precision, Precision::Bits(_)) { output } else { 0.0 };
		// (no shared bound where the screen found that it certifies nothing)
		let shared = self.bound.iter().flat_map(|_| self.schemes().map(Candidate::Shared));
		let separate = self.parts.iter().flat_map(|_| self.schemes().map(Candidate::Separate));
		let native = self.native_candidate.then_some(Candidate::Native);
		// each candidate with its order and a lower bound of its predicted time, cheapest first
		let mut pending: Vec<(f64, usize, Candidate)> = shared
			.chain(separate)
			.chain(native)
			.enumerate()
			.map(|(order, candidate)| {
				let at_least = match candidate {
					Candidate::Shared(scheme) => self.model.seconds(scheme, self.shape, self.complex),
					Candidate::Separate(scheme) => 4.0 * self.model.seconds(scheme, self.shape, false),
					Candidate::Native => self.native_seconds(precision),
				};
				(at_least, order, candidate)
			})
			.collect();
		pending.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
		let mut ranked: Vec<(f64, usize, Choice)> = Vec::new();
		for (at_least, order, candidate) in pending {
			if first_only && ranked.iter().any(|x| x.0 < at_least) {
				break;
			}
			let choice = match candidate {
				Candidate::Shared(scheme) => self.bound.and_then(|bound| self.evaluate(scheme, (bound, false), threshold)),
				Candidate::Separate(scheme) => self.parts.and_then(|parts| self.evaluate(scheme, (parts, true), threshold)),
				Candidate::Native => Some(Choice::native(self.shape.m, NativeReason::NoPlanCertifies)),
			};
			if let Some(choice) = choice {
				ranked.push((self.choice_seconds(&choice, precision), order, choice));
			}
		}
		ranked.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
		ranked.into_iter().map(|(_, _, choice)| choice).collect()
	}

	/// the emulated plans a target precision weighs
	fn schemes(&self) -> impl Iterator<Item = Scheme> + '_ {
		(1..=scheme1::MAX_SLICES)
			.map(|slices| Scheme::SchemeI { slices })
			.chain((2..=scheme2::MAX_MODULI).map(|moduli| Scheme::SchemeII {
				moduli,
				scaling: self.scaling,
			}))
	}

	/// the predicted seconds of the native product at `precision`
	fn native_seconds(&self, precision: Precision) -> f64 {
		self.model
			.native(self.shape, self.complex, self.mantissa, native_arithmetic(precision, self.mantissa))
	}

	/// `scheme` (with separately scaled parts where `separate`, `bound` theirs) with the rows whose
	/// bound meets `threshold(output)`, or `None` when it leaves more than an eighth of them to
	/// the native product (or `bound` has no terms for it); `output` is the final rounding's error.
	/// The target of [`Precision::Bits`] covers the whole error, so its threshold is the target
	/// less `output`; the targets relative to a native product cover the error before the final
	/// rounding to the output type, which the native product shares
	fn evaluate(&self, scheme: Scheme, (bound, separate): (&impl RowBound, bool), threshold: impl Fn(f64) -> f64) -> Option<Choice> {
		let terms = bound.terms(scheme)?;
		let output = bound.output_error();
		let threshold = threshold(output);
		let m = self.shape.m;
		let (mut worst, mut native_rows) = (0.0f64, Vec::new());
		for i in 0..m {
			let e = bound.row_error(i, &terms);
			if e <= threshold {
				worst = worst.max(e);
			} else {
				native_rows.push(i);
				if native_rows.len() * MAX_NATIVE_SHARE > m {
					return None;
				}
			}
		}
		Some(Choice {
			plan: Plan {
				scheme,
				predicted_bits: if native_rows.len() == m { f64::NAN } else { bits(worst + output) },
				k_passes: k_passes(scheme, self.shape.k, self.complex && !separate),
				native_rows: native_rows.len(),
				separate_parts: separate,
			},
			native_rows,
			reason: None,
		})
	}

	/// the predicted seconds of an emulated choice: its plan (four real products for separately
	/// scaled parts), and its native rows (at the low rate of the native entries' kernel, on
	/// purpose: see [`crate::cost::NativeRates::wide`])
	fn seconds(&self, choice: &Choice) -> f64 {
		let rows = Shape {
			m: choice.native_rows.len(),
			..self.shape
		};
		let plan = if choice.plan.separate_parts {
			4.0 * self.model.seconds(choice.plan.scheme, self.shape, false)
		} else {
			self.model.seconds(choice.plan.scheme, self.shape, self.complex)
		};
		plan + self.model.native(rows, self.complex, self.mantissa, NativeArithmetic::Wide)
	}

	/// whether a complex target precision screens plans with separately scaled parts after
	/// `choice` (this input's, under the shared scale): where `choice` leaves rows to the native
	/// product, and the cheapest such plan plus the bounds it needs is predicted faster (with the
	/// native product reserved as the last resort, it is infinitely slow). The screen is the
	/// bound of `Re A Re B` on the leading [`SCREEN`] rows and columns
	pub fn weighs_separate_parts(&self, choice: &Choice, precision: Precision) -> bool {
		if !self.complex || choice.native_rows.is_empty() || precision.target_bits(self.mantissa, self.shape.k).is_none() {
			return false;
		}
		let cheapest = self
			.schemes()
			.map(|s| 4.0 * self.model.seconds(s, self.shape, false))
			.fold(f64::INFINITY, f64::min);
		cheapest + self.model.part_bounds(self.shape) < self.choice_seconds(choice, precision)
	}

	/// whether the screen's bound (`Re A Re B` on the leading rows and columns) leaves plans with
	/// separately scaled parts worth their bounds: the cheapest plan that certifies the screen
	/// (no plan certifies the whole product with less), four times over, plus the bounds, is
	/// predicted faster than `choice`. Screens out inputs whose spread no scaling of the parts
	/// removes (`phi` = 4 and beyond), at about 1/32 of one real bound's cost for n = 8192
	pub fn separate_parts_pay(&self, choice: &Choice, screen: &Bound, precision: Precision) -> bool {
		let screened = PolicyInput {
			bound: Some(screen),
			parts: None,
			shape: screen.shape,
			complex: false,
			native_candidate: false,
			..*self
		};
		let cheapest = screened
			.candidates(precision)
			.iter()
			.map(|c| 4.0 * self.model.seconds(c.plan.scheme, self.shape, false))
			.fold(f64::INFINITY, f64::min);
		cheapest + self.model.part_bounds(self.shape) < self.choice_seconds(choice, precision)
	}

	/// the predicted seconds of any choice at `precision`: infinite for the native product where
	/// it is the last resort only
	fn choice_seconds(&self, choice: &Choice, precision: Precision) -> f64 {
		match choice.plan.scheme {
			Scheme::Native if self.native_candidate => self.native_seconds(precision),
			Scheme::Native => f64::INFINITY,
			_ => self.seconds(choice),
		}
	}
}

/// a candidate of the policy before it is evaluated: an emulated plan under the shared bound or
/// under the separately scaled parts' bounds, or the native product
#[derive(Clone, Copy)]
enum Candidate {
	Shared(Scheme),
	Separate(Scheme),
	Native,
}

/// the arithmetic of the native product at `precision` for an output of `mantissa` bits: a TF32
/// GEMM for `f32`/`c32` at [`Precision::Tf32`], the type's own GEMM up to FP32 level, and the
/// native entries' kernel (`f64` sums) for `f32`/`c32` above it
pub(crate) fn native_arithmetic(precision: Precision, mantissa: u32) -> NativeArithmetic {
	match precision {
		_ if mantissa == 53 => NativeArithmetic::Own,
		Precision::Tf32 => NativeArithmetic::Tf32,
		Precision::F32 => NativeArithmetic::Own,
		_ => NativeArithmetic::Wide,
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::bound::RowMaxima;

	fn input(shape: impl Into<Shape>, complex: bool, mantissa: u32, native_candidate: bool) -> PolicyInput<'static> {
		PolicyInput {
			bound: None,
			parts: None,
			shape: shape.into(),
			complex,
			mantissa,
			scaling: Scaling::Fast,
			native_candidate,
			model: GpuModel::MEASURED.model(),
		}
	}

	/// `choose` evaluates only the plans that can still rank first, and picks what ranking every
	/// candidate picks: on bounds whose rows spread over 60 binades, so that plans certify all,
	/// some or too few of the rows, real and complex, with and without the native product
	#[test]
	fn choose_picks_the_first_candidate() {
		use rand::{Rng, SeedableRng};
		let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
		let mut compared = 0;
		for trial in 0..200 {
			let (m, k) = ([1, 7, 64, 500][trial % 4], [16, 1000, 8192][trial % 3]);
			let (centre, spread) = (rng.random_range(-30.0..30.0), rng.random_range(0.0..30.0));
			let mut binades = || 2f64.powf(centre + spread * rng.random_range(-1.0..1.0));
			let rows = (0..m)
				.map(|_| RowMaxima {
					grid: [binades(), binades(), binades()],
					pairs: [binades(), binades(), binades()],
					floor: if trial % 5 == 0 { binades() * 1e-20 } else { 0.0 },
				})
				.collect();
			let complex = trial % 2 == 1;
			let (mantissa, precision) = [
				(53, Precision::F64),
				(24, Precision::F32),
				(24, Precision::Tf32),
				(53, Precision::Bits(40)),
			][trial % 4];
			let bound = Bound {
				rows,
				shape: Shape::new(m, 300, k),
				complex,
				mantissa,
			};
			let input = PolicyInput {
				bound: Some(&bound),
				..input(bound.shape, complex, mantissa, trial % 3 != 0)
			};
			let all = input.candidates(precision);
			let first = input.choose(precision);
			match all.first() {
				// (as printed: a native plan predicts NaN bits)
				Some(c) => assert_eq!(format!("{c:?}"), format!("{first:?}"), "trial {trial}"),
				None => assert_eq!(first.plan.scheme, Scheme::Native, "trial {trial}"),
			}
			compared += usize::from(all.len() > 1);
		}
		assert!(compared > 50, "{compared} trials with plans to rank");
	}

	/// the plan the policy picks for an `n`-cubed `f64` product at `F64` on `gpu`, before any bound
	/// (the native product against the cheapest emulation plus the bound's cost)
	fn goes_native(gpu: &str, n: usize) -> bool {
		let model = GpuModel::named(gpu).unwrap_or_else(|| panic!("{gpu} in the table"));
		PolicyInput::of::<f64>(Shape::new(n, n, n), (Scaling::Fast, true), None)
			.on(model)
			.native_from_shape(Precision::F64, 1)
	}

	/// on a GPU whose FP64 is weak the emulation pays from small products; on a Hopper GPU only
	/// from larger ones
	#[test]
	fn weak_fp64_emulates_from_small_products() {
		assert!(
			!goes_native("NVIDIA GeForce RTX 4090", 1024),
			"an RTX 4090 emulates F64 at n = 1024"
		);
		assert!(
			goes_native("NVIDIA H100 80GB HBM3", 1024),
			"an H100 computes F64 at n = 1024 natively"
		);
		assert!(!goes_native("NVIDIA L40S", 1024));
		assert!(
			goes_native("NVIDIA L40S", 256),
			"the call's overhead outweighs a small product everywhere"
		);
		assert!(goes_native("NVIDIA H200", 2048));
		for gpu in ["NVIDIA A100-SXM4-80GB", "NVIDIA B200"] {
			assert!(goes_native(gpu, 256), "{gpu}: small products stay native");
		}
	}

	const N8192: Shape = Shape::new(8192, 8192, 8192);
	const N16384: Shape = Shape::new(16384, 16384, 16384);

	/// the bound is skipped where the native product beats any emulation plus the bound: small
	/// products, and `Tf32` of `f32` against a TF32 GEMM (2.7 ms against at least 0.8 ms of INT8
	/// products, a split and a 3 ms bound at n = 8192); it is computed where emulation can win
	#[test]
	fn skips_the_bound_where_native_wins_anyway() {
		for complex in [false, true] {
			for mantissa in [24, 53] {
				assert!(input((96, 96, 96), complex, mantissa, true).native_from_shape(Precision::F64, 1));
				assert!(!input((96, 96, 96), complex, mantissa, false).native_from_shape(Precision::F64, 1));
			}
			assert!(input(N8192, complex, 24, true).native_from_shape(Precision::Tf32, 1));
			assert!(!input(N8192, complex, 24, true).native_from_shape(Precision::F32, 1));
			assert!(!input(N8192, complex, 24, true).native_from_shape(Precision::F64, 1));
			assert!(!input(N16384, complex, 53, true).native_from_shape(Precision::F64, 1));
		}
		// on the H100, f64 8192³ at `F64` took 19.29 ms in DGEMM and 19.50 ms emulated with its
		// certificate; c64 8192³ 84.5 ms in ZGEMM and 60.6 ms emulated
		assert!(input(N8192, false, 53, true).native_from_shape(Precision::F64, 1));
		assert!(!input(N8192, true, 53, true).native_from_shape(Precision::F64, 1));
		// explicit plans never weigh the native product
		assert!(!input((96, 96, 96), false, 53, true).native_from_shape(Precision::SchemeII { moduli: 4 }, 1));
	}

	/// a product's type, `(m, n, k)`, cuBLAS's time and the certified emulation's, ms
	type Measured = (&'static str, (usize, usize, usize), f64, f64);

	/// products of the benchmark's grid on an NVIDIA H100 (2026-12-06), on a caller's stream,
	/// where cuBLAS and the certified emulation (its plan with its certificate) came within 3x of
	/// each other: `(type, (m, n, k), cuBLAS ms, emulated ms)`, at `F64` for f64 and c64 and at
	/// `F32` for f32 and c32
	const GRID: &[Measured] = &[
		("f64", (4096, 4096, 4096), 2.2998, 3.6351),
		("f64", (8192, 8192, 8192), 19.2885, 19.4966),
		("f64", (16384, 16384, 16384), 171.1229, 149.4915),
		("f64", (4096, 4096, 16384), 9.6444, 11.5553),
		("f64", (8192, 8192, 1024), 2.3029, 6.1652),
		("f64", (8192, 8192, 4096), 9.6631, 12.1534),
		("f64", (8192, 8192, 16384), 39.9363, 38.0586),
		("f64", (16384, 16384, 1024), 9.6957, 19.016),
		("f64", (16384, 16384, 4096), 40.3432, 47.3017),
		("f64", (2048, 2048, 16384), 2.4253, 4.7829),
		("f64", (512, 7680, 8192), 1.195, 3.4493),
		("f64", (7168, 7168, 1024), 1.7963, 4.6962),
		("f64", (6144, 6144, 1024), 1.3242, 3.7792),
		("f64", (1024, 7168, 8192), 2.0285, 4.3006),
		("f64", (8192, 7168, 1024), 2.039, 5.1574),
		("c64", (2048, 2048, 2048), 1.1896, 2.406),
		("c64", (4096, 4096, 4096), 10.0561, 9.5009),
		("c64", (8192, 8192, 8192), 84.467, 60.6395),
		("c64", (1024, 1024, 4096), 0.6599, 1.6307),
		("c64", (1024, 1024, 16384), 2.3626, 4.3698),
		("c64", (4096, 4096, 1024), 2.3838, 3.7101),
		("c64", (4096, 4096, 16384), 42.4042, 32.7201),
		("c64", (8192, 8192, 1024), 9.6517, 12.1565),
		("c64", (8192, 8192, 4096), 40.6185, 37.8547),
		("c64", (8192, 8192, 16384), 174.3858, 105.8107),
		("c64", (16384, 16384, 1024), 42.2212, 58.7021),
		("c64", (16384, 16384, 4096), 171.2831, 135.1296),
		("c64", (2048, 2048, 16384), 9.1764, 9.9925),
		("c64", (16384, 256, 16384), 9.5541, 24.5322),
		("c64", (256, 16384, 16384), 11.4492, 23.3601),
		("c64", (256, 7936, 8192), 2.4154, 6.274),
		("c64", (7680, 7680, 512), 4.4113, 8.7589),
		("c64", (6144, 6144, 512), 3.4212, 7.2336),
		("c64", (4096, 4096, 512), 1.2697, 2.9973),
		("c64", (512, 7680, 8192), 4.5682, 7.5211),
		("c64", (8192, 7680, 512), 5.7781, 9.4348),
		("c64", (7168, 7168, 1024), 7.3817, 10.1205),
		("c64", (6144, 6144, 1024), 5.6962, 7.7555),
		("c64", (2048, 2048, 1024), 0.6436, 1.6396),
		("c64", (1024, 7168, 8192), 9.0811, 9.8419),
		("c64", (8192, 7168, 1024), 9.4078, 11.5388),
		("f32", (4096, 4096, 4096), 2.6848, 3.1664),
		("f32", (8192, 8192, 8192), 21.0665, 14.1206),
		("f32", (16384, 16384, 16384), 166.8782, 100.0592),
		("f32", (1024, 1024, 16384), 0.7666, 1.9782),
		("f32", (4096, 4096, 1024), 0.7092, 1.9844),
		("f32", (4096, 4096, 16384), 10.8131, 7.8708),
		("f32", (8192, 8192, 1024), 2.7688, 4.4231),
		("f32", (8192, 8192, 4096), 10.8623, 7.909),
		("f32", (8192, 8192, 16384), 42.7034, 25.4083),
		("f32", (16384, 16384, 1024), 10.3095, 12.8021),
		("f32", (16384, 16384, 4096), 41.6228, 28.1406),
		("f32", (2048, 2048, 16384), 2.9286, 3.3618),
		("f32", (16384, 256, 16384), 2.6339, 7.7399),
		("f32", (256, 16384, 16384), 2.726, 7.4235),
		("f32", (7680, 7680, 512), 1.2531, 3.3003),
		("f32", (512, 7680, 8192), 1.3567, 2.8292),
		("f32", (8192, 7680, 512), 1.3394, 3.4468),
		("f32", (7168, 7168, 1024), 2.0681, 3.3867),
		("f32", (6144, 6144, 1024), 1.5525, 2.7348),
		("f32", (1024, 7168, 8192), 2.4859, 3.0931),
		("f32", (8192, 7168, 1024), 2.4071, 3.701),
		("c32", (2048, 2048, 2048), 1.3131, 1.9557),
		("c32", (4096, 4096, 4096), 10.1357, 6.6769),
		("c32", (8192, 8192, 8192), 79.968, 40.8278),
		("c32", (1024, 1024, 4096), 0.7637, 1.4767),
		("c32", (1024, 1024, 16384), 2.7443, 3.464),
		("c32", (4096, 4096, 1024), 2.5575, 3.3342),
		("c32", (4096, 4096, 16384), 40.9946, 20.9161),
		("c32", (8192, 8192, 256), 2.625, 6.0304),
		("c32", (8192, 8192, 1024), 10.0762, 8.7123),
		("c32", (8192, 8192, 4096), 41.7217, 23.3822),
		("c32", (8192, 8192, 16384), 166.2292, 80.4281),
		("c32", (16384, 16384, 256), 9.8884, 29.5933),
		("c32", (16384, 16384, 1024), 40.9741, 40.6306),
		("c32", (16384, 16384, 4096), 165.1578, 90.5376),
		("c32", (2048, 2048, 512), 0.398, 1.0609),
		("c32", (2048, 2048, 16384), 10.1171, 7.0956),
		("c32", (16384, 256, 16384), 10.0452, 16.7473),
		("c32", (256, 16384, 16384), 11.3819, 15.3162),
	];

	/// the shape tier on the measured grid: every product that cuBLAS computed faster than the
	/// certified emulation goes native from its shape (never slower than the call it replaces),
	/// and every one that the emulation computed at least 10% faster reaches the operands
	#[test]
	fn the_shape_tier_decides_the_grid_as_measured() {
		let mut wins = 0;
		for &(ty, shape, native, emulated) in GRID {
			let (complex, mantissa, precision) = match ty {
				"f64" => (false, 53, Precision::F64),
				"c64" => (true, 53, Precision::F64),
				"f32" => (false, 24, Precision::F32),
				_ => (true, 24, Precision::F32),
			};
			let p = PolicyInput {
				model: GpuModel::named("NVIDIA H100 80GB HBM3").unwrap().model(),
				..input(shape, complex, mantissa, true)
			};
			let decided = p.native_from_shape(precision, 1);
			if native < emulated {
				assert!(
					decided,
					"{ty} {shape:?}: cuBLAS {native} ms, emulated {emulated} ms, yet not native from the shape"
				);
			} else if emulated < 0.9 * native {
				assert!(
					!decided,
					"{ty} {shape:?}: emulated {emulated} ms, cuBLAS {native} ms, yet native from the shape"
				);
				wins += 1;
			}
		}
		assert!(wins >= 15, "{wins} wins kept");
	}

	/// a batch is weighed against one batched GEMM: a thousand small products, each of which pays
	/// the call's fixed costs when emulated, stay native where one product of their whole work
	/// would not; explicit plans and a context that does not compete the native product never go
	/// native from the shape
	#[test]
	fn batches_are_priced_against_one_batched_gemm() {
		for complex in [false, true] {
			let p = input((128, 128, 128), complex, 53, true);
			assert!(p.native_from_shape(Precision::F64, 1000));
			assert!(!input(N16384, complex, 53, true).native_from_shape(Precision::F64, 1));
			assert!(!input(N16384, complex, 53, true).native_from_shape(Precision::F64, 16));
			assert!(!p.native_from_shape(Precision::SchemeII { moduli: 14 }, 1000));
			assert!(!input((128, 128, 128), complex, 53, false).native_from_shape(Precision::F64, 1000));
		}
	}

	/// the native product's arithmetic per precision and output
	#[test]
	fn native_arithmetic_keeps_the_target() {
		assert_eq!(native_arithmetic(Precision::Tf32, 24), NativeArithmetic::Tf32);
		assert_eq!(native_arithmetic(Precision::Tf32, 53), NativeArithmetic::Own);
		assert_eq!(native_arithmetic(Precision::F32, 24), NativeArithmetic::Own);
		assert_eq!(native_arithmetic(Precision::F64, 24), NativeArithmetic::Wide);
		assert_eq!(native_arithmetic(Precision::Bits(23), 24), NativeArithmetic::Wide);
		assert_eq!(native_arithmetic(Precision::F64, 53), NativeArithmetic::Own);
	}

	/// plans with separately scaled parts: weighed for complex products whose shared-scale choice
	/// leaves rows native, and paid for only where the screen certifies some plan
	#[test]
	fn separate_parts_are_screened() {
		let screen = |maxima: RowMaxima| Bound {
			rows: vec![maxima; SCREEN],
			shape: Shape::new(SCREEN, SCREEN, 8192),
			complex: false,
			mantissa: 53,
		};
		// the window lost every row's pairing
		let hopeless = RowMaxima {
			grid: [f64::INFINITY; 3],
			pairs: [f64::INFINITY; 3],
			floor: 0.0,
		};
		let native = Choice::native(8192, NativeReason::NoPlanCertifies);
		for native_candidate in [false, true] {
			let p = input(N8192, true, 53, native_candidate);
			assert!(p.weighs_separate_parts(&native, Precision::F64));
			assert!(!input(N8192, false, 53, native_candidate).weighs_separate_parts(&native, Precision::F64));
			assert!(!p.separate_parts_pay(&native, &screen(hopeless), Precision::F64));
		}
		// an exact screen certifies every plan: worth it against a reserved native product
		let reserved = input(N8192, true, 53, false);
		assert!(reserved.separate_parts_pay(&native, &screen(RowMaxima::default()), Precision::F64));
	}

	/// the native product is among the candidates, ranked by time, where it competes: at n = 8192
	/// with every row certified (a zero bound) an emulated plan comes first and native later; off,
	/// native is not listed
	#[test]
	fn native_is_ranked_with_the_plans() {
		let bound = Bound {
			rows: vec![RowMaxima::default(); 8192],
			shape: N8192,
			complex: false,
			mantissa: 53,
		};
		for native_candidate in [true, false] {
			let p = PolicyInput {
				bound: Some(&bound),
				..input(N8192, false, 53, native_candidate)
			};
			let ranked = p.candidates(Precision::F64);
			let native = ranked.iter().position(|c| c.plan.scheme == Scheme::Native);
			assert_ne!(ranked[0].plan.scheme, Scheme::Native);
			assert_eq!(native.is_some(), native_candidate);
		}
	}
}
