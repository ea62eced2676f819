//! the emulated plans a target precision could certify at all for a given inner dimension, before
//! any operand is read: those whose error bound meets the target on the most favourable dense
//! operands, rows and columns of `K` parts of one magnitude. Any dense operands give a bound at
//! least as large (a part below its row's largest adds the same truncation error and less to
//! `(|A||B|)_ij`), so a plan outside this set certifies no dense product of that `K`; operands
//! with fewer nonzeros than `K` per row may still certify more, and a product of them that the
//! shape decides native forgoes that gain, never more

use super::PolicyInput;
use crate::bound::{Bound, BoundSide, RowMaxima, fast_offset, floor_exponent, magnitude, window_bits, window_shift};
use crate::operand::Operand;
use crate::scheme2::{CoarseMaxima, coarse_magnitude, coarse_shift};
use crate::shape::Shape;
use crate::stats::row_stats;
use crate::{Precision, Scaling, Scheme};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// the significands the favourable operands are tried with (exact in `f32`): the window keeps
/// more of a part whose significand is near 2, the norm bound less
const SIGNIFICANDS: [f64; 5] = [1.0, 1.25, 1.5, 1.75, 1.9921875];

/// the most answers kept; a program with more distinct inner dimensions recomputes them
const KEPT: usize = 4096;

/// what the reachable plans depend on: the target, `K`, real or complex, the output's
/// significand bits and the scaling
type Key = (Precision, usize, bool, u32, Scaling);

/// the emulated plans that certify `precision` for `input`'s inner dimension on some dense
/// operands (the favourable ones above), cheapest first by the model is the caller's concern;
/// empty where none can, and for explicit precisions. Computed once per key (microseconds,
/// linear in `K`), then looked up
pub(crate) fn reachable(input: &PolicyInput<'_>, precision: Precision) -> Vec<Scheme> {
	static KNOWN: OnceLock<Mutex<HashMap<Key, Vec<Scheme>>>> = OnceLock::new();
	let key = (precision, input.shape.k, input.complex, input.mantissa, input.scaling);
	let known = KNOWN.get_or_init(Default::default);
	if let Some(schemes) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
		return schemes.clone();
	}
	let schemes = compute(input, precision);
	let mut known = known.lock().unwrap_or_else(|e| e.into_inner());
	if known.len() >= KEPT {
		known.clear();
	}
	known.insert(key, schemes.clone());
	schemes
}

/// [`reachable`], computed: the union over [`SIGNIFICANDS`] of the plans that certify the one
/// entry of a `1 x K` by `K x 1` product of that constant (complex: both parts)
fn compute(input: &PolicyInput<'_>, precision: Precision) -> Vec<Scheme> {
	let k = input.shape.k;
	if k == 0 || precision.target_bits(input.mantissa, k).is_none() {
		return Vec::new();
	}
	let mut schemes: Vec<Scheme> = Vec::new();
	for value in SIGNIFICANDS {
		let bound = constant_bound(value, k, input.complex, (input.mantissa, input.scaling));
		let one = PolicyInput {
			bound: Some(&bound),
			parts: None,
			shape: bound.shape,
			native_candidate: false,
			..*input
		};
		for choice in one.candidates(precision) {
			if !schemes.contains(&choice.plan.scheme) {
				schemes.push(choice.plan.scheme);
			}
		}
	}
	schemes
}

/// the error bound of the product of a row and a column of `k` parts equal to `value` (both parts
/// of complex entries), for an output of `mantissa` bits under `scaling`, as every backend's bound
/// pass computes it
fn constant_bound(value: f64, k: usize, complex: bool, (mantissa, scaling): (u32, Scaling)) -> Bound {
	let operand = Operand {
		len: 1,
		k,
		re: vec![value; k],
		im: if complex { vec![value; k] } else { Vec::new() },
		nonfinite: Vec::new(),
	};
	let stats = row_stats(&operand)[0];
	let amax = operand.amax(0);
	let parts = if complex { 2 } else { 1 };
	let bits = window_bits(k * parts);
	let offset = match scaling {
		Scaling::Fast => fast_offset(&stats),
		Scaling::Accurate => {
			// the coarse product of the row and the column: `k` equal coarse magnitudes each
			let s0 = coarse_shift(amax, complex);
			let coarse = i64::from(coarse_magnitude(value, s0)) * parts as i64;
			let max = coarse * coarse * k as i64;
			let maxima = CoarseMaxima {
				s0: (vec![s0], vec![s0]),
				max: (vec![max], vec![max]),
			};
			maxima.offsets().0[0]
		},
	};
	let side = BoundSide::new(&stats, amax, offset, bits);
	// the window magnitudes' product: `k` equal terms, each part of a complex entry the sum of two
	let q = i32::from(magnitude(value, window_shift(stats.e_max, bits)));
	let l = q * q * k as i32 * parts as i32;
	let mut maxima = RowMaxima::default();
	for _ in 0..parts {
		maxima.add(&side, &side, l, bits, floor_exponent(mantissa));
	}
	Bound {
		rows: vec![maxima],
		shape: Shape::new(1, 1, k),
		complex,
		mantissa,
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::datasheets::GpuModel;
	use crate::testing::random_matrix;
	use faer::{Mat, c64};

	fn input(k: usize, complex: bool, mantissa: u32, scaling: Scaling) -> PolicyInput<'static> {
		PolicyInput {
			bound: None,
			parts: None,
			shape: Shape::new(1, 1, k),
			complex,
			mantissa,
			scaling,
			native_candidate: false,
			model: GpuModel::MEASURED.model(),
		}
	}

	/// the bound of the constant operands as the CPU's bound pass computes it, from the operands
	/// themselves
	#[test]
	fn the_constant_bound_is_the_bound_pass() {
		for (k, complex) in [(1, false), (700, false), (8192, true), (33, true)] {
			for value in SIGNIFICANDS {
				let t = |x: f64| if complex { c64::new(x, x) } else { c64::new(x, 0.0) };
				let a = Mat::<c64>::from_fn(1, k, |_, _| t(value));
				let b = Mat::<c64>::from_fn(k, 1, |_, _| t(value));
				let (oa, ob) = if complex {
					(Operand::lhs(a.as_ref()), Operand::rhs(b.as_ref()))
				} else {
					let (ar, br) = (Mat::<f64>::from_fn(1, k, |_, _| value), Mat::<f64>::from_fn(k, 1, |_, _| value));
					(Operand::lhs(ar.as_ref()), Operand::rhs(br.as_ref()))
				};
				let stats = (row_stats(&oa), row_stats(&ob));
				let pass = crate::cpu::bound::compute((&oa, &ob), (&stats.0, &stats.1), None, 53);
				let ours = constant_bound(value, k, complex, (53, Scaling::Fast));
				assert_eq!(format!("{:?}", pass.rows), format!("{:?}", ours.rows), "k = {k}, {value}");
			}
		}
	}

	/// no dense operands of the same `K` certify a plan outside the reachable set: random ones of
	/// several spreads, and constant ones of other significands, real and complex, both scalings
	#[test]
	fn random_dense_operands_certify_nothing_more() {
		for (k, complex, mantissa, precision) in [
			(64, false, 53, Precision::F64),
			(512, false, 53, Precision::F64),
			(4096, false, 53, Precision::F64),
			(512, true, 53, Precision::F64),
			(2048, false, 24, Precision::F32),
			(256, true, 24, Precision::F32),
			(1024, false, 53, Precision::Bits(40)),
		] {
			for scaling in [Scaling::Fast, Scaling::Accurate] {
				let p = input(k, complex, mantissa, scaling);
				let reach = reachable(&p, precision);
				for (seed, spread) in [(1, 0.0), (2, 1.0), (3, 4.0)] {
					let (a, b) = (
						random_matrix::<c64>(16, k, spread, seed),
						random_matrix::<c64>(k, 16, spread, seed + 10),
					);
					let strip = |x: &Mat<c64>| Mat::<f64>::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)].re);
					let (oa, ob) = if complex {
						(Operand::lhs(a.as_ref()), Operand::rhs(b.as_ref()))
					} else {
						(Operand::lhs(strip(&a).as_ref()), Operand::rhs(strip(&b).as_ref()))
					};
					let stats = (row_stats(&oa), row_stats(&ob));
					let coarse = (scaling == Scaling::Accurate).then(|| crate::cpu::coarse_maxima(&oa, &ob));
					let bound = crate::cpu::bound::compute((&oa, &ob), (&stats.0, &stats.1), coarse.as_ref(), mantissa);
					let full = PolicyInput {
						bound: Some(&bound),
						shape: bound.shape,
						..p
					};
					for choice in full.candidates(precision) {
						assert!(
							reach.contains(&choice.plan.scheme),
							"k = {k} complex {complex} {precision} {scaling:?} spread {spread}: {} certifies, outside {reach:?}",
							choice.plan.scheme
						);
					}
				}
			}
		}
	}

	/// the favourable operands reach the plans the policy picks on ordinary inputs, and a wide `K`
	/// needs more moduli than a narrow one
	#[test]
	fn reach_shrinks_as_k_grows() {
		let fewest = |k| {
			reachable(&input(k, false, 53, Scaling::Fast), Precision::F64)
				.iter()
				.filter_map(|s| match s {
					Scheme::SchemeII { moduli, .. } => Some(*moduli),
					_ => None,
				})
				.min()
		};
		let (narrow, wide) = (fewest(64).unwrap(), fewest(16384).unwrap());
		assert!(narrow < wide, "{narrow} moduli at K = 64, {wide} at 16384");
		assert!(reachable(&input(512, false, 53, Scaling::Fast), Precision::SchemeII { moduli: 9 }).is_empty());
	}
}
