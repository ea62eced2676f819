//! the integer stages against exact products and exhaustive checks: the wgmma chassis, the fused
//! residue products against the unfused route, the modular arithmetic of the kernels

use super::random_bytes;
use crate::gpu::kernels::residues::{self, Route3m};
use crate::gpu::kernels::wgmma_config::Variant;
use crate::gpu::runtime::context::gpu;
use crate::gpu::runtime::launch::ptr;
use crate::scheme2::Crt;
use crate::shape::Shape;

/// every variant of the persistent INT8 wgmma chassis against exact products on ragged shapes
/// (TMA fills the out-of-range parts with zeros): 200 x 300 (2 tile rows, B halves wholly past n
/// for the clusters), 300 x 300 (3 tile rows: the last cluster pair is half past m) and
/// 1900 x 2900 (more tiles than SMs: several units per CTA, the ring across tiles)
#[test]
#[ignore = "needs a Hopper GPU"]
fn igemm_chassis_is_exact() {
	use crate::gpu::kernels::chassis::igemm;
	use crate::gpu::kernels::wgmma_config::{VARIANTS, choose};
	use rayon::prelude::*;
	let g = gpu().unwrap();
	let mut wrong_total = 0;
	for (m, n, k) in [(200usize, 300usize, 272usize), (300, 300, 272), (1900, 2900, 400)] {
		let (a, b) = (random_bytes(m * k, 1), random_bytes(n * k, 2));
		let expected: Vec<i32> = (0..m * n)
			.into_par_iter()
			.map(|idx| (0..k).map(|h| a[(idx % m) * k + h] as i32 * b[(idx / m) * k + h] as i32).sum())
			.collect();
		let (da, db) = (g.stream.clone_htod(&a).unwrap(), g.stream.clone_htod(&b).unwrap());
		let ops = (ptr(&g, &da), ptr(&g, &db));
		for v in VARIANTS {
			let dc = g.stream.alloc_zeros::<i32>(m * n).unwrap();
			igemm(&g, v, (ops.0, ops.1, ptr(&g, &dc)), Shape::new(m, n, k)).unwrap();
			let got = g.stream.clone_dtoh(&dc).unwrap();
			let wrong = got.iter().zip(&expected).filter(|(x, y)| x != y).count();
			let picked = if choose(Shape::new(m, n, k), 1, g.sm_count, false) == v {
				" (the table's pick)"
			} else {
				""
			};
			println!("igemm_{} {m}x{n}x{k}{picked}: {wrong} of {} entries differ", v.name(), m * n);
			wrong_total += wrong;
		}
	}
	assert_eq!(wrong_total, 0, "every variant must be exact");
}

/// runs a self-test kernel `kernel(moduli, p, mismatches)` over all 20 moduli (16 blocks of 256
/// threads per SM) and returns the count it reports
fn exhaustive_mismatches(kernel: &str) -> u64 {
	let g = gpu().unwrap();
	let moduli = g.stream.clone_htod(&crate::scheme2::MODULI).unwrap();
	let count = g.stream.alloc_zeros::<u64>(1).unwrap();
	let p = crate::scheme2::MODULI.len() as i32;
	let launch = crate::gpu::runtime::launch::Launch {
		grid: (g.sm_count as u32 * 16, 1, 1),
		block: (256, 1, 1),
		smem: 0,
		cluster: 1,
	};
	let start = std::time::Instant::now();
	// SAFETY: the arguments match the kernel's parameters (moduli, p, mismatches)
	let (moduli, count_at) = (ptr(&g, &moduli), ptr(&g, &count));
	unsafe { launch.run(&g, kernel, &(moduli, p, count_at)) }.unwrap();
	let wrong = g.stream.clone_dtoh(&count).unwrap()[0];
	println!("{kernel}: 2^32 inputs x {p} moduli, {wrong} mismatches in {:.1?}", start.elapsed());
	wrong
}

/// the symmetric residue of the reductions (exact double arithmetic) equals integer `%` for all
/// 2^32 INT32 inputs and every modulus
/// (its kernel is a self-test, built with the feature `bench`)
#[cfg(feature = "bench")]
#[test]
#[ignore = "needs a Hopper GPU"]
fn sym_mod_is_exact_for_every_int32() {
	assert_eq!(exhaustive_mismatches("sym_mod_exhaustive"), 0);
}

/// the split's residue arithmetic (`residue_rep`, no division) gives int8 values congruent to
/// random scaled integers up to 2^91 and to the values next to every rounding boundary
/// (its kernel is a self-test, built with the feature `bench`)
#[cfg(feature = "bench")]
#[test]
#[ignore = "needs a Hopper GPU"]
fn split_residues_are_exact_up_to_2_pow_91() {
	let g = gpu().unwrap();
	let count = g.stream.alloc_zeros::<u64>(1).unwrap();
	let samples = 256i32;
	let threads = g.sm_count * 16 * 256;
	let launch = crate::gpu::runtime::launch::Launch {
		grid: (g.sm_count as u32 * 16, 1, 1),
		block: (256, 1, 1),
		smem: 0,
		cluster: 1,
	};
	let count_at = ptr(&g, &count);
	// SAFETY: the arguments match the kernel's parameters (samples, mismatches)
	unsafe { launch.run(&g, "residue_check", &(samples, count_at)) }.unwrap();
	let wrong = g.stream.clone_dtoh(&count).unwrap()[0];
	let checked = threads as u64 * samples as u64 * crate::scheme2::MODULI.len() as u64;
	println!("residue_rep: {wrong} mismatches in {checked} values");
	assert_eq!(wrong, 0);
}

/// `count` planes of `rows x k` random int8 residues; in every plane row 0 is all -128, so the
/// products of row 0 of A with row 0 of B reach |T| = K 2^14, beyond INT32 once K > 131,071
fn residue_bytes(count: usize, rows: usize, k: usize, seed: u64) -> Vec<i8> {
	let mut next = crate::testing::xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
	(0..count * rows * k)
		.map(|idx| {
			if (idx / k).is_multiple_of(rows) {
				-128
			} else {
				(next() >> 24) as i8
			}
		})
		.collect()
}

/// the residue products on the CPU (exact i64 dot products, `sym_mod`): Re planes, then Im planes
/// for complex (3M: `Re = T1 - T2`, `Im = T3 - T1 - T2`), each `m x n` column-major per modulus
fn residues_oracle(a: &[i8], b: &[i8], Shape { m, n, k }: Shape, moduli: &[u32], complex: bool) -> (Vec<i8>, Vec<i8>) {
	use crate::scheme2::sym_mod;
	use rayon::prelude::*;
	let per = if complex { 3 } else { 1 };
	let dot = |plane: usize, i: usize, j: usize| -> i64 {
		let (x, y) = (&a[(plane * m + i) * k..][..k], &b[(plane * n + j) * k..][..k]);
		x.iter().zip(y).map(|(&u, &v)| u as i64 * v as i64).sum()
	};
	let entries: Vec<(i8, i8)> = (0..moduli.len() * m * n)
		.into_par_iter()
		.map(|idx| {
			let (l, i, j) = (idx / (m * n), idx % m, (idx / m) % n);
			let t1 = dot(per * l, i, j);
			if !complex {
				return (sym_mod(t1, moduli[l]), 0);
			}
			let (t2, t3) = (dot(3 * l + 1, i, j), dot(3 * l + 2, i, j));
			(sym_mod(t1 - t2, moduli[l]), sym_mod(t3 - t1 - t2, moduli[l]))
		})
		.collect();
	entries.into_iter().unzip()
}

/// the fused residue products (one wgmma launch over all moduli; 3M for complex) by chassis
/// variant `variant` (the table's pick when `None`) against the unfused route (cuBLASLt INT32
/// products, reduce_mod / reduce_3m) and the CPU, byte for byte
fn fused_residues_match(variant: Option<Variant>, route: Option<Route3m>, complex: bool, shape: Shape, p: u32) {
	let Shape { m, n, k } = shape;
	use crate::gpu::kernels::residues::{Overrides, fused_residues, unfused_residues};
	use crate::gpu::product::job::ResiduePlanes;
	let g = gpu().unwrap();
	let moduli = Crt::new(p).moduli;
	let per = if complex { 3 } else { 1 };
	let planes = per * p as usize;
	let (a, b) = (residue_bytes(planes, m, k, 1), residue_bytes(planes, n, k, 2));
	let (da, db) = (g.stream.clone_htod(&a).unwrap(), g.stream.clone_htod(&b).unwrap());
	let ops = (ptr(&g, &da), ptr(&g, &db));
	let len = p as usize * m * n;
	let outs: Vec<_> = (0..4).map(|_| g.stream.alloc_zeros::<i8>(len).unwrap()).collect();
	let out = |t: usize| ptr(&g, &outs[t]);
	let planes = |re: usize, im: usize| ResiduePlanes {
		re: out(re),
		im: complex.then(|| out(im)),
		stride: m * n,
		triangle: None,
	};
	let (fused, unfused) = (planes(0, 1), planes(2, 3));
	let start = std::time::Instant::now();
	let route = route.unwrap_or(Route3m::for_shape(m, n, k));
	let v = variant.unwrap_or_else(|| residues::residues_variant(&g, shape, p as usize, complex.then_some(route)));
	let overrides = Overrides {
		variant: Some(v),
		route: Some(route),
	};
	fused_residues(&g, ops, shape, &moduli, fused, overrides).unwrap();
	g.stream.synchronize().unwrap();
	let t_fused = start.elapsed();
	let start = std::time::Instant::now();
	unfused_residues(&g, ops, shape, &moduli, unfused).unwrap();
	g.stream.synchronize().unwrap();
	let t_unfused = start.elapsed();
	let got: Vec<Vec<i8>> = outs.iter().map(|o| g.stream.clone_dtoh(o).unwrap()).collect();
	let (re, im) = residues_oracle(&a, &b, shape, &moduli, complex);
	let kernel = variant.map_or_else(|| "the table's variant".into(), Variant::name);
	let kind = if complex { format!("3M {route:?}") } else { "real".into() };
	let what = format!("{kind} {kernel} m={m} n={n} k={k} p={p}");
	let differ = |x: &[i8], y: &[i8]| x.iter().zip(y).filter(|(u, v)| u != v).count();
	println!(
		"{what}: fused {t_fused:.2?}, unfused {t_unfused:.2?} (first calls); entries differing from the CPU: fused re {}, unfused re {}{}",
		differ(&got[0], &re),
		differ(&got[2], &re),
		if complex {
			format!(", fused im {}, unfused im {}", differ(&got[1], &im), differ(&got[3], &im))
		} else {
			String::new()
		}
	);
	assert_eq!(got[0], re, "{what}: fused Re");
	assert_eq!(got[2], re, "{what}: unfused Re");
	if complex {
		assert_eq!(got[1], im, "{what}: fused Im");
		assert_eq!(got[3], im, "{what}: unfused Im");
	}
}

/// the fused 3M products on a ragged shape (TMA fills outside the planes with zeros), every
/// modulus, by both routes
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_3m_residues_match_the_unfused_route() {
	for route in [Route3m::OneLaunch, Route3m::ThreeLaunches] {
		fused_residues_match(None, Some(route), true, Shape::new(200, 300, 272), 20);
	}
	fused_residues_match(None, None, false, Shape::new(200, 300, 272), 20);
}

/// every chassis variant's fused products, real and 3M (both routes), byte for byte against the
/// unfused route and the CPU: 300 x 300 (3 tile rows: the last cluster pair half past m; B halves
/// wholly past n) and 1100 x 700 with 15 moduli (more units than SMs)
#[test]
#[ignore = "needs a Hopper GPU"]
fn every_chassis_variant_matches_the_unfused_route() {
	for v in crate::gpu::kernels::wgmma_config::VARIANTS {
		fused_residues_match(Some(v), None, false, Shape::new(300, 300, 272), 20);
		fused_residues_match(Some(v), None, false, Shape::new(1100, 700, 160), 15);
		for route in [Route3m::OneLaunch, Route3m::ThreeLaunches] {
			fused_residues_match(Some(v), Some(route), true, Shape::new(300, 300, 272), 20);
			fused_residues_match(Some(v), Some(route), true, Shape::new(1100, 700, 160), 15);
		}
	}
}

/// K = 300,000, beyond the exact INT32 chunk (130,944): the fused kernels carry their
/// accumulators mod m (row 0 of every plane is -128: |T| = 4.9e9 there); by the table's variant
/// (3M by both routes), and by the multicast variants on 2 tile rows (a full cluster pair)
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_residues_carry_beyond_the_int32_chunk() {
	fused_residues_match(None, None, false, Shape::new(64, 64, 300_000), 3);
	for route in [Route3m::OneLaunch, Route3m::ThreeLaunches] {
		fused_residues_match(None, Some(route), true, Shape::new(64, 64, 300_000), 3);
	}
	for v in crate::gpu::kernels::wgmma_config::VARIANTS.into_iter().filter(|v| v.cluster == 2) {
		fused_residues_match(Some(v), None, false, Shape::new(192, 32, 300_000), 2);
		fused_residues_match(Some(v), Some(Route3m::OneLaunch), true, Shape::new(192, 32, 300_000), 2);
	}
}

/// the fused residue products over a triangle of the output (a rank-k update's): every entry of
/// the triangle byte for byte the CPU's, and every entry at least 511 columns off its side (in
/// tiles that hold none of it) left as it was, for every chassis variant, real and 3M (both
/// routes), lower and upper, of a whole square output and of a column tile (columns from 300 on).
/// The 3M route in three launches combines its three products over every entry (`combine_3m`),
/// so the entries off the triangle are written there, from products that were skipped
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_residues_keep_to_the_triangle() {
	use crate::gpu::kernels::residues::{Overrides, fused_residues};
	use crate::gpu::product::job::{OutputTriangle, ResiduePlanes};
	use crate::request::Triangle;
	let g = gpu().unwrap();
	let p = 4u32;
	let moduli = Crt::new(p).moduli;
	let sentinel = 0x5a_i8;
	for (shape, first_col) in [(Shape::new(1100, 1100, 96), 0), (Shape::new(1100, 600, 96), 300)] {
		let Shape { m, n, k } = shape;
		for complex in [false, true] {
			let planes = if complex { 3 } else { 1 } * p as usize;
			let (a, b) = (residue_bytes(planes, m, k, 5), residue_bytes(planes, n, k, 6));
			let (da, db) = (g.stream.clone_htod(&a).unwrap(), g.stream.clone_htod(&b).unwrap());
			let (re, im) = residues_oracle(&a, &b, shape, &moduli, complex);
			let routes: &[Option<Route3m>] = if complex {
				&[Some(Route3m::OneLaunch), Some(Route3m::ThreeLaunches)]
			} else {
				&[None]
			};
			for (v, &route, triangle) in crate::gpu::kernels::wgmma_config::VARIANTS.into_iter().flat_map(|v| {
				routes
					.iter()
					.flat_map(move |r| [Triangle::Lower, Triangle::Upper].map(|t| (v, r, t)))
			}) {
				let len = p as usize * m * n;
				let outs = [0, 1].map(|_| g.stream.clone_htod(&vec![sentinel; len]).unwrap());
				let out = ResiduePlanes {
					re: ptr(&g, &outs[0]),
					im: complex.then(|| ptr(&g, &outs[1])),
					stride: m * n,
					triangle: Some(OutputTriangle { triangle, first_col }),
				};
				let overrides = Overrides { variant: Some(v), route };
				fused_residues(&g, (ptr(&g, &da), ptr(&g, &db)), shape, &moduli, out, overrides).unwrap();
				let what = format!("{} {route:?} {triangle:?} m={m} n={n} from column {first_col}", v.name());
				let parts = if complex { vec![(0, &re), (1, &im)] } else { vec![(0, &re)] };
				for (part, expected) in parts {
					let got = g.stream.clone_dtoh(&outs[part]).unwrap();
					let (mut inside, mut outside) = (0, 0);
					for (idx, (&x, &want)) in got.iter().zip(expected).enumerate() {
						let (i, j) = ((idx % (m * n)) % m, (idx % (m * n)) / m + first_col);
						let (in_triangle, far) = match triangle {
							Triangle::Lower => (i >= j, j >= i + 511),
							Triangle::Upper => (i <= j, i >= j + 511),
						};
						if in_triangle {
							assert_eq!(x, want, "{what}: part {part}, entry {idx} of the triangle");
							inside += 1;
						} else if far && route != Some(Route3m::ThreeLaunches) {
							assert_eq!(
								x, sentinel,
								"{what}: part {part}, entry {idx} in a tile off the triangle was written"
							);
							outside += 1;
						}
					}
					let skips = route != Some(Route3m::ThreeLaunches);
					assert!(
						inside > 0 && (outside > 0 || !skips),
						"{what}: {inside} entries inside, {outside} far outside"
					);
				}
			}
		}
	}
}

/// the fused epilogues' integer residue arithmetic (carry and symmetric residue by a reciprocal
/// multiplication) equals integer `%` for all 2^32 INT32 inputs and every modulus
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_modulus_arithmetic_is_exact_for_every_int32() {
	assert_eq!(exhaustive_mismatches("modulus_exhaustive"), 0);
}
