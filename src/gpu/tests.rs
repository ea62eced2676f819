//! the GPU's intermediate planes against the CPU oracle's, byte for byte (needs a Hopper GPU:
//! ignored unless run with `--include-ignored`, and failing without one)

use super::device::{Gpu, gpu};
use super::job::DeviceOperand;
use super::matrix::DeviceMatrix;
use super::residues;
use super::residues::Route3m;
use super::scheme_one::split_digits;
use super::scheme_two::split_residues;
use super::slot::Slot;
use super::wgmma_config::Variant;
use crate::cpu::{Planes, digit_planes, residue_planes};
use crate::operand::Operand;
use crate::scheme2::{Crt, fast_shift};
use crate::stats::row_stats;
use crate::testing::random_matrix;
use crate::{Accum, Backend, Emulator, Precision, Scalar, scheme1};
use cudarc::driver::DevicePtr;
use faer::{c32, c64};

fn download(g: &Gpu, ptr: u64, len: usize) -> Vec<i8> {
	let mut host = vec![0i8; len];
	g.stream.synchronize().unwrap();
	// SAFETY: `ptr` is a live scratch buffer of at least `len` bytes, the stream is idle
	unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut host, ptr) }.unwrap();
	host
}

/// the GPU planes at `ptr` (rows padded to a multiple of 16) agree with the CPU planes, padding
/// zero: byte for byte, or, when `moduli` names each plane's modulus, congruent (the split's
/// residues are int8 representatives, not always the symmetric ones)
fn assert_planes(g: &Gpu, ptr: u64, cpu: &Planes, count: usize, moduli: Option<&[u32]>, what: &str) {
	let kpad = cpu.k.div_ceil(16) * 16;
	let gpu_bytes = download(g, ptr, count * cpu.rows * kpad);
	for t in 0..count {
		for i in 0..cpu.rows {
			let row = &gpu_bytes[(t * cpu.rows + i) * kpad..][..kpad];
			match moduli {
				None => assert_eq!(&row[..cpu.k], cpu.row(t, i), "{what}: plane {t}, row {i}"),
				Some(m) => {
					let m = m[t] as i32;
					let congruent = row[..cpu.k]
						.iter()
						.zip(cpu.row(t, i))
						.all(|(&x, &y)| (x as i32 - y as i32) % m == 0);
					assert!(congruent, "{what}: plane {t} (modulus {m}), row {i}");
				},
			}
			assert!(row[cpu.k..].iter().all(|&x| x == 0), "{what}: padding of plane {t}, row {i}");
		}
	}
}

/// the CPU operand that [`operands`] names `what` (which ends with the name): `host` as the left
/// or the right factor
fn cpu_operand<T: Scalar>(host: &faer::Mat<T>, what: &str) -> Operand {
	if what.ends_with("rows of A") {
		Operand::lhs(host.as_ref())
	} else {
		Operand::rhs(host.as_ref())
	}
}

/// the parts a scheme I split kernel takes (`part`: 0 real, 1 imaginary, 2 negated imaginary)
/// with the CPU values and negation that give the same digits
fn digit_parts(op: &Operand, complex: bool) -> Vec<(i32, &[f64], bool)> {
	let mut parts = vec![(0, &op.re[..], false)];
	if complex {
		parts.extend([(1, &op.im[..], false), (2, &op.im[..], true)]);
	}
	parts
}

/// both operand orientations of the first `used` rows of `a`, which keep the stride of all of
/// them: rows of A (rows contiguous) and columns of B (K contiguous)
fn operands<T: Scalar>(g: &Gpu, a: &DeviceMatrix<T>, used: usize) -> [(DeviceOperand, &'static str); 2] {
	let (m, k) = (a.nrows(), a.ncols());
	[
		(
			DeviceOperand {
				ptr: a.ptr(g),
				rows: used,
				k,
				rs: 1,
				cs: m as i64,
			},
			"rows of A",
		),
		(
			DeviceOperand {
				ptr: a.ptr(g),
				rows: k,
				k: used,
				rs: m as i64,
				cs: 1,
			},
			"columns of B",
		),
	]
}

/// the split's shapes `(m, k, used rows)`: strides that are no multiple of 16 bytes (element by
/// element loads), then 16-byte multiples (vector loads) with ragged tiles, whole and with a
/// last row (rows of A) or K column (columns of B) that ends inside a 16-byte chunk, then a grid
/// of many row tiles by several K tiles in both orientations
const SPLIT_SHAPES: [(usize, usize, usize); 4] = [(37, 45, 37), (40, 300, 40), (40, 300, 39), (272, 600, 272)];

/// `check(gpu, device operand, its CPU twin, a name for messages)` for every shape of
/// [`SPLIT_SHAPES`] in both orientations ([`operands`])
fn for_each_split_case<T: Scalar>(mut check: impl FnMut(&Gpu, &DeviceOperand, &Operand, &str)) {
	for (m, k, used) in SPLIT_SHAPES {
		let host = random_matrix::<T>(m, k, 2.0, 9);
		let dev = DeviceMatrix::upload(&[0], host.as_ref(), crate::emulator::DEFAULT_STAGING).expect("these tests need a Hopper GPU");
		let g = gpu().unwrap();
		let host = host.subrows(0, used).to_owned();
		for (op, what) in operands(&g, &dev, used) {
			let what = format!("{m} x {k} ({used} rows used), {what}");
			check(&g, &op, &cpu_operand(&host, &what), &what);
		}
	}
}

/// the statistics kernel's rows (largest exponent, norm bound, L1 bound) equal the CPU's, in both
/// orientations (in the K-contiguous one a warp's lanes share a row and sum its terms together),
/// for one operand alone and for two in one launch; and the fast shifts the device computes from
/// them equal `fast_shift` of the CPU's
fn stats_match<T: Scalar>() {
	use super::scheme_two::launch_fast_shifts;
	use super::stats::{download_stats, launch_stats};
	for_each_split_case::<T>(|g, op, cpu_op, what| {
		let cpu = row_stats(cpu_op);
		let alone = download_stats(g, &launch_stats::<T>(g, &[op]).unwrap()).unwrap();
		assert_eq!(alone[0].rows, cpu, "{what}");
		let regions = launch_stats::<T>(g, &[op, op]).unwrap();
		for p in [2, 9, 20] {
			let lambda = Crt::new(p).lambda;
			let (a, _) = launch_fast_shifts(g, (regions[0], regions[1]), lambda).unwrap();
			let mut got = vec![0i32; 2 * cpu.len()];
			g.stream.synchronize().unwrap();
			// SAFETY: the kernel wrote one i32 per row of both regions from `a` on, and has finished
			unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut got, a) }.unwrap();
			let expected: Vec<i32> = cpu.iter().map(|r| fast_shift(r.norm, lambda)).collect();
			assert_eq!(got, [expected.clone(), expected].concat(), "{what}: fast shifts, p = {p}");
		}
		for (side, s) in download_stats(g, &regions).unwrap().into_iter().enumerate() {
			assert_eq!(s.rows, cpu, "{what}: operand {side} of a pair");
		}
	});
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn row_statistics_match_the_oracle_f64() {
	stats_match::<f64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn row_statistics_match_the_oracle_f32() {
	stats_match::<f32>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn row_statistics_match_the_oracle_c64() {
	stats_match::<c64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn row_statistics_match_the_oracle_c32() {
	stats_match::<c32>();
}

fn planes_match<T: Scalar>() {
	for_each_split_case::<T>(|g, op, cpu_op, what| {
		for p in [1u32, 3, 8] {
			let shifts: Vec<i32> = (0..cpu_op.len).map(|i| scheme1::shift(cpu_op.amax(i), p)).collect();
			let d = g.stream.clone_htod(&shifts).unwrap();
			for (part, values, negate) in digit_parts(cpu_op, T::IS_COMPLEX) {
				let ptr = split_digits::<T>(
					g,
					g.scratch(Slot::SplitA, 8 * op.rows * op.k.div_ceil(16) * 16).unwrap(),
					op,
					&d,
					p,
					part,
				)
				.unwrap();
				let cpu = digit_planes(values, &shifts, cpu_op.k, p as usize, negate);
				assert_planes(
					g,
					ptr,
					&cpu,
					p as usize,
					None,
					&format!("{} {what} digits p={p} part {part}", T::NAME),
				);
			}
		}
		let stats = row_stats(cpu_op);
		for p in [2u32, 9, 20] {
			let crt = Crt::new(p);
			let shifts: Vec<i32> = stats.iter().map(|r| fast_shift(r.norm, crt.lambda)).collect();
			let d = g.stream.clone_htod(&shifts).unwrap();
			let out = g.scratch(Slot::SplitB, 60 * op.rows * op.k.div_ceil(16) * 16).unwrap();
			let ptr = split_residues::<T>(g, out, op, d.device_ptr(&g.stream).0, p).unwrap();
			let cpu = residue_planes(cpu_op, &shifts, &crt.moduli);
			let per = if T::IS_COMPLEX { 3 } else { 1 };
			let moduli: Vec<u32> = crt.moduli.iter().flat_map(|&m| [m; 3].into_iter().take(per)).collect();
			let what = format!("{} {what} residues p={p}", T::NAME);
			assert_planes(g, ptr, &cpu, moduli.len(), Some(&moduli), &what);
		}
	});
}

/// the interleaved digit planes of fused scheme I (`split_digits_interleaved`) hold the oracle's
/// digits: digit `t` of element `(r, h)` at byte `r p kpad + (h / 32 p + t) 32 + h % 32`, zeros
/// from `k` to `kpad` (a multiple of 128)
fn interleaved_digits_match<T: Scalar>() {
	use super::scheme1_fused::{pad128, split_interleaved};
	for_each_split_case::<T>(|g, op, cpu_op, what| {
		let kpad = pad128(op.k);
		for p in 1..=scheme1::MAX_SLICES {
			let pu = p as usize;
			let shifts: Vec<i32> = (0..cpu_op.len).map(|i| scheme1::shift(cpu_op.amax(i), p)).collect();
			let d = g.stream.clone_htod(&shifts).unwrap();
			for (part, values, negate) in digit_parts(cpu_op, T::IS_COMPLEX) {
				let len = op.rows * pu * kpad;
				let out = g.scratch(Slot::SplitA, len).unwrap();
				split_interleaved::<T>(g, out, op, &d, p, part).unwrap();
				let got = download(g, out, len);
				let cpu = digit_planes(values, &shifts, cpu_op.k, pu, negate);
				for r in 0..op.rows {
					for h in 0..kpad {
						for t in 0..pu {
							let expected = if h < op.k { cpu.row(t, r)[h] } else { 0 };
							let at = r * pu * kpad + (h / 32 * pu + t) * 32 + h % 32;
							assert_eq!(got[at], expected, "{} {what} p={p} part {part}: digit {t} of ({r}, {h})", T::NAME);
						}
					}
				}
			}
		}
	});
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn interleaved_digits_match_the_oracle_f32() {
	interleaved_digits_match::<f32>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn interleaved_digits_match_the_oracle_c64() {
	interleaved_digits_match::<c64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn digit_and_residue_planes_match_the_oracle_f64() {
	planes_match::<f64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn digit_and_residue_planes_match_the_oracle_c64() {
	planes_match::<c64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn digit_and_residue_planes_match_the_oracle_c32() {
	planes_match::<c32>();
}

/// `len` pseudo-random bytes (xorshift, seeded)
fn random_bytes(len: usize, seed: u64) -> Vec<i8> {
	let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
	(0..len)
		.map(|_| {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			(state >> 24) as i8
		})
		.collect()
}

/// every variant of the persistent INT8 wgmma chassis against exact products on ragged shapes
/// (TMA fills the out-of-range parts with zeros): 200 x 300 (2 tile rows, B halves wholly past n
/// for the clusters), 300 x 300 (3 tile rows: the last cluster pair is half past m) and
/// 1900 x 2900 (more tiles than SMs: several units per CTA, the ring across tiles)
#[test]
#[ignore = "needs a Hopper GPU"]
fn igemm_chassis_is_exact() {
	use super::chassis::igemm;
	use super::wgmma_config::{VARIANTS, choose};
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
		let ops = (da.device_ptr(&g.stream).0, db.device_ptr(&g.stream).0);
		for v in VARIANTS {
			let dc = g.stream.alloc_zeros::<i32>(m * n).unwrap();
			igemm(&g, v, (ops.0, ops.1, dc.device_ptr(&g.stream).0), (m, n, k)).unwrap();
			let got = g.stream.clone_dtoh(&dc).unwrap();
			let wrong = got.iter().zip(&expected).filter(|(x, y)| x != y).count();
			let picked = if choose((m, n, k), 1, g.sm_count, false) == v {
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
	let launch = super::launch::Launch {
		grid: (g.sm_count as u32 * 16, 1, 1),
		block: (256, 1, 1),
		smem: 0,
		cluster: 1,
	};
	let start = std::time::Instant::now();
	// SAFETY: the arguments match the kernel's parameters (moduli, p, mismatches)
	let (moduli, count_at) = (super::launch::ptr(&g, &moduli), super::launch::ptr(&g, &count));
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
	let launch = super::launch::Launch {
		grid: (g.sm_count as u32 * 16, 1, 1),
		block: (256, 1, 1),
		smem: 0,
		cluster: 1,
	};
	let count_at = super::launch::ptr(&g, &count);
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
	let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
	(0..count * rows * k)
		.map(|idx| {
			if (idx / k).is_multiple_of(rows) {
				return -128;
			}
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			(state >> 24) as i8
		})
		.collect()
}

/// the residue products on the CPU (exact i64 dot products, `sym_mod`): Re planes, then Im planes
/// for complex (3M: `Re = T1 - T2`, `Im = T3 - T1 - T2`), each `m x n` column-major per modulus
fn residues_oracle(a: &[i8], b: &[i8], (m, n, k): (usize, usize, usize), moduli: &[u32], complex: bool) -> (Vec<i8>, Vec<i8>) {
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
fn fused_residues_match(variant: Option<Variant>, route: Option<Route3m>, complex: bool, (m, n, k): (usize, usize, usize), p: u32) {
	use super::job::ResiduePlanes;
	use super::residues::{Imposed, fused_residues, unfused_residues};
	let g = gpu().unwrap();
	let moduli = Crt::new(p).moduli;
	let per = if complex { 3 } else { 1 };
	let planes = per * p as usize;
	let (a, b) = (residue_bytes(planes, m, k, 1), residue_bytes(planes, n, k, 2));
	let (da, db) = (g.stream.clone_htod(&a).unwrap(), g.stream.clone_htod(&b).unwrap());
	let ops = (da.device_ptr(&g.stream).0, db.device_ptr(&g.stream).0);
	let len = p as usize * m * n;
	let outs: Vec<_> = (0..4).map(|_| g.stream.alloc_zeros::<i8>(len).unwrap()).collect();
	let out = |t: usize| outs[t].device_ptr(&g.stream).0;
	let planes = |re: usize, im: usize| ResiduePlanes {
		re: out(re),
		im: complex.then(|| out(im)),
		stride: m * n,
	};
	let (fused, unfused) = (planes(0, 1), planes(2, 3));
	let start = std::time::Instant::now();
	let route = route.unwrap_or(Route3m::for_shape(m, n, k));
	let v = variant.unwrap_or_else(|| residues::residues_variant(&g, (m, n, k), p as usize, complex.then_some(route)));
	let imposed = Imposed {
		variant: Some(v),
		route: Some(route),
	};
	fused_residues(&g, ops, (m, n, k), &moduli, fused, imposed).unwrap();
	g.stream.synchronize().unwrap();
	let t_fused = start.elapsed();
	let start = std::time::Instant::now();
	unfused_residues(&g, ops, (m, n, k), &moduli, unfused).unwrap();
	g.stream.synchronize().unwrap();
	let t_unfused = start.elapsed();
	let got: Vec<Vec<i8>> = outs.iter().map(|o| g.stream.clone_dtoh(o).unwrap()).collect();
	let (re, im) = residues_oracle(&a, &b, (m, n, k), &moduli, complex);
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
		fused_residues_match(None, Some(route), true, (200, 300, 272), 20);
	}
	fused_residues_match(None, None, false, (200, 300, 272), 20);
}

/// every chassis variant's fused products, real and 3M (both routes), byte for byte against the
/// unfused route and the CPU: 300 x 300 (3 tile rows: the last cluster pair half past m; B halves
/// wholly past n) and 1100 x 700 with 15 moduli (more units than SMs)
#[test]
#[ignore = "needs a Hopper GPU"]
fn every_chassis_variant_matches_the_unfused_route() {
	for v in super::wgmma_config::VARIANTS {
		fused_residues_match(Some(v), None, false, (300, 300, 272), 20);
		fused_residues_match(Some(v), None, false, (1100, 700, 160), 15);
		for route in [Route3m::OneLaunch, Route3m::ThreeLaunches] {
			fused_residues_match(Some(v), Some(route), true, (300, 300, 272), 20);
			fused_residues_match(Some(v), Some(route), true, (1100, 700, 160), 15);
		}
	}
}

/// K = 300,000, beyond the exact INT32 chunk (130,944): the fused kernels carry their
/// accumulators mod m (row 0 of every plane is -128: |T| = 4.9e9 there); by the table's variant
/// (3M by both routes), and by the multicast variants on 2 tile rows (a full cluster pair)
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_residues_carry_beyond_the_int32_chunk() {
	fused_residues_match(None, None, false, (64, 64, 300_000), 3);
	for route in [Route3m::OneLaunch, Route3m::ThreeLaunches] {
		fused_residues_match(None, Some(route), true, (64, 64, 300_000), 3);
	}
	for v in super::wgmma_config::VARIANTS.into_iter().filter(|v| v.cluster == 2) {
		fused_residues_match(Some(v), None, false, (192, 32, 300_000), 2);
		fused_residues_match(Some(v), Some(Route3m::OneLaunch), true, (192, 32, 300_000), 2);
	}
}

/// the fused epilogues' integer residue arithmetic (carry and symmetric residue by a reciprocal
/// multiplication) equals integer `%` for all 2^32 INT32 inputs and every modulus
#[test]
#[ignore = "needs a Hopper GPU"]
fn fused_modulus_arithmetic_is_exact_for_every_int32() {
	assert_eq!(exhaustive_mismatches("modulus_exhaustive"), 0);
}

/// the CRT kernel alone (`crt_*` in `cuda/reconstruct.cu`, launched by `launch_crt`) against the CPU
/// oracle, bit for bit, for every modulus count: random symmetric residues in every plane (the
/// integers they stand for reach far beyond P/4, so the quotient q takes large values too), row and
/// column shifts, non-finite flags (those entries keep their old value), alpha and accumulation,
/// on shapes with partial segments, a single row (every entry starts a column) and several segments per warp
fn crt_matches_the_oracle<T: Scalar>() {
	use super::crt::launch_crt;
	use super::job::{Job, Output, ResiduePlanes};
	use crate::fp::scale_pow2;
	use crate::scheme2::sym_mod;
	let g = gpu().unwrap();
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	for (m, n) in [(37, 45), (1, 700), (512, 3), (300, 200)] {
		for p in 2..=crate::scheme2::MAX_MODULI {
			let crt = Crt::new(p);
			let pu = p as usize;
			let seed = (m * 1000 + n) as u64 * 64 + p as u64;
			let stride = ResiduePlanes::stride(m, n);
			// plane l of part t at (t p + l) stride: symmetric residues modulo moduli[l]
			let bytes = random_bytes(parts * pu * stride, seed);
			let residues: Vec<i8> = bytes
				.iter()
				.enumerate()
				.map(|(at, &b)| sym_mod(b as i64, crt.moduli[at / stride % pu]))
				.collect();
			let ints =
				|len: usize, salt: u64, f: &dyn Fn(i8) -> i32| -> Vec<i32> { random_bytes(len, seed ^ salt).into_iter().map(f).collect() };
			let (sa, sb) = (ints(m, 1, &|b| b as i32 % 40), ints(n, 2, &|b| b as i32 % 40));
			let (bad_rows, bad_cols) = (ints(m, 3, &|b| (b % 11 == 0) as i32), ints(n, 4, &|b| (b % 13 == 0) as i32));
			let old: Vec<T> = random_bytes(2 * m * n, seed ^ 5)
				.chunks(2)
				.map(|c| T::from_parts(c[0] as f64, c[1] as f64))
				.collect();
			// the inputs once per shape and modulus count; the output afresh for each alpha
			let dev = g.stream.clone_htod(&residues).unwrap();
			let base = dev.device_ptr(&g.stream).0;
			let planes = ResiduePlanes {
				re: base,
				im: T::IS_COMPLEX.then_some(base + (pu * stride) as u64),
				stride,
			};
			let (da, db) = (g.stream.clone_htod(&sa).unwrap(), g.stream.clone_htod(&sb).unwrap());
			let flags = (g.stream.clone_htod(&bad_rows).unwrap(), g.stream.clone_htod(&bad_cols).unwrap());
			let rows = DeviceOperand {
				ptr: 0,
				rows: m,
				k: 1,
				rs: 1,
				cs: 1,
			};
			let mut job = Job {
				gpu: &g,
				a: rows,
				b: DeviceOperand { rows: n, ..rows },
				out: Output {
					ptr: 0,
					ld: m,
					accumulate: false,
					remainder: 0,
				},
				alpha: T::from_parts(1.0, 0.0),
				bad_rows: flags.0.device_ptr(&g.stream).0,
				bad_cols: flags.1.device_ptr(&g.stream).0,
			};
			for (alpha, accumulate) in [(T::from_parts(1.0, 0.0), false), (T::from_parts(0.75, -2.0), true)] {
				let dst = g.stream.clone_htod(bytemuck::cast_slice::<T, u8>(&old)).unwrap();
				job.alpha = alpha;
				job.out = Output {
					ptr: dst.device_ptr(&g.stream).0,
					ld: m,
					accumulate,
					remainder: 0,
				};
				launch_crt(&job, &crt, planes, (da.device_ptr(&g.stream).0, db.device_ptr(&g.stream).0)).unwrap();
				let mut got = vec![T::from_parts(0.0, 0.0); m * n];
				bytemuck::cast_slice_mut::<T, u8>(&mut got).copy_from_slice(&g.stream.clone_dtoh(&dst).unwrap());
				for j in 0..n {
					for i in 0..m {
						let at = i + j * m;
						let value = |t: usize| {
							let r: Vec<i8> = (0..pu).map(|l| residues[(t * pu + l) * stride + at]).collect();
							scale_pow2(crt.reconstruct(&r), -sa[i] - sb[j])
						};
						let expected = if bad_rows[i] != 0 || bad_cols[j] != 0 {
							old[at]
						} else {
							let c = (value(0), if T::IS_COMPLEX { value(1) } else { 0.0 });
							crate::emulator::combine(c, alpha, accumulate.then_some(old[at]))
						};
						let same = got[at].re().to_bits() == expected.re().to_bits() && got[at].im().to_bits() == expected.im().to_bits();
						assert!(
							same,
							"{} m={m} n={n} p={p} accumulate={accumulate}: entry ({i}, {j}) {:?}, oracle {:?}",
							T::NAME,
							got[at],
							expected
						);
					}
				}
			}
		}
	}
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn crt_matches_the_oracle_f64() {
	crt_matches_the_oracle::<f64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn crt_matches_the_oracle_f32() {
	crt_matches_the_oracle::<f32>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn crt_matches_the_oracle_c64() {
	crt_matches_the_oracle::<c64>();
}

/// a matrix that fits only once the scratch buffers kept from earlier products are freed is
/// still allocated: the allocation frees them and tries again
#[test]
#[ignore = "needs a Hopper GPU"]
fn a_matrix_allocation_frees_kept_scratch_when_memory_runs_out() {
	const MATRIX: usize = 1 << 30;
	{
		let g = gpu().unwrap();
		g.ctx.bind_to_thread().unwrap();
		let (free, _) = cudarc::driver::result::mem_get_info().unwrap();
		// scratch that leaves half the matrix free
		g.scratch(Slot::Bench(0), free - MATRIX / 2).unwrap();
	}
	const COLS: usize = MATRIX / 8 / 8192;
	let m =
		DeviceMatrix::<f64>::zeros(&[0], (8192, COLS), crate::emulator::DEFAULT_STAGING).expect("the kept scratch freed for the matrix");
	assert_eq!(m.download().unwrap()[(8191, COLS - 1)], 0.0);
	drop(m);
	// the pipeline's scratch is allocated again when asked for
	assert_ne!(gpu().unwrap().scratch(Slot::Bench(0), 1 << 20).unwrap(), 0);
}

/// frees every kept scratch buffer when dropped, so that a test that filled the GPU's memory and
/// failed leaves it free to the tests after it
struct FreesScratch;

impl Drop for FreesScratch {
	fn drop(&mut self) {
		if let Ok(g) = gpu() {
			g.free_kept_scratch();
			let _ = g.stream.synchronize();
		}
	}
}

/// a product whose scratch fits only once the buffers kept in other slots (by earlier work) are
/// freed still runs, bit for bit as the CPU oracle: the allocation frees the slots the product has
/// not asked for and tries again, and the slots it holds stay valid
#[test]
#[ignore = "needs a Hopper GPU"]
fn a_product_frees_scratch_kept_in_other_slots_when_memory_runs_out() {
	const N: usize = 2048;
	let emu = Emulator::with_backend(Backend::Gpu).unwrap().with_native_candidate(false);
	let (a, b) = (random_matrix::<f64>(N, N, 1.0, 1), random_matrix::<f64>(N, N, 1.0, 2));
	let (da, db) = (emu.upload(a.as_ref()).unwrap(), emu.upload(b.as_ref()).unwrap());
	let mut dc = emu.zeros_on_device::<f64>(N, N).unwrap();
	let free = || {
		gpu().unwrap().ctx.bind_to_thread().unwrap();
		cudarc::driver::result::mem_get_info().unwrap().0
	};
	let _cleanup = FreesScratch;
	{
		let g = gpu().unwrap();
		g.free_kept_scratch();
		g.stream.synchronize().unwrap();
		g.ctx.bind_to_thread().unwrap();
		// kept scratch in the benchmark's slots: chunks of at most 8 GiB (one allocation of all the
		// memory failed on an H200), halved when refused, down to 64 MiB. What stays free is then
		// less than 128 MiB, less than the product's scratch (per operand 18 residue planes of 4
		// MiB, and 18 product planes of 4 MiB)
		let (mut slot, mut bytes) = (0, 8usize << 30);
		while bytes >= 64 << 20 {
			let (available, _) = cudarc::driver::result::mem_get_info().unwrap();
			bytes = bytes.min(available.saturating_sub(8 << 20));
			if g.scratch(Slot::Bench(slot), bytes).is_ok() {
				slot += 1;
			} else {
				bytes /= 2;
			}
		}
	}
	emu.matmul_device(&mut dc, Accum::Replace, &da, &db, 1.0, Precision::F64)
		.expect("the scratch kept in the benchmark's slots freed for the product");
	assert!(free() > 1 << 30, "the product ran without needing the kept scratch freed");
	let mut c = faer::Mat::<f64>::zeros(N, N);
	let oracle = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(false);
	oracle
		.matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, Precision::F64)
		.unwrap();
	let g = dc.download().unwrap();
	let differ = (0..N)
		.flat_map(|j| (0..N).map(move |i| (i, j)))
		.filter(|&(i, j)| g[(i, j)].to_bits() != c[(i, j)].to_bits());
	assert_eq!(differ.count(), 0, "entries that differ from the CPU oracle");
}

/// the error bound's per-row maxima on the GPU (window magnitudes, their cuBLASLt INT8 products, the
/// `bound_maxima` pass) equal the CPU's bit for bit, under both scalings, on shapes with ragged
/// blocks and on inputs where the window loses pairings: so both backends certify the same plans
fn bound_matches<T: Scalar>() {
	use super::scheme_two::coarse_maxima;
	use super::stats::{download_stats, launch_stats};
	use crate::Scaling;
	use crate::testing::{InnerPattern, Pair, pair};
	let families = [
		Pair::Phi(1.0),
		Pair::Phi(4.0),
		Pair::InnerScaled {
			pattern: InnerPattern::Blocks,
			range: 12,
		},
		Pair::SmallImaginary { log2_ratio: 6 },
		Pair::Cancellation,
	];
	for (family, (m, k, n)) in families
		.into_iter()
		.zip([(1, 1, 1), (130, 70, 65), (129, 300, 200), (7, 33, 5), (64, 96, 257)])
	{
		let (a, b) = pair::<T>(family, m, k, n, 4);
		let (da, db) = (
			DeviceMatrix::upload(&[0], a.as_ref(), crate::emulator::DEFAULT_STAGING).unwrap(),
			DeviceMatrix::upload(&[0], b.as_ref(), crate::emulator::DEFAULT_STAGING).unwrap(),
		);
		let g = gpu().unwrap();
		let oa = DeviceOperand {
			ptr: da.ptr(&g),
			rows: m,
			k,
			rs: 1,
			cs: m as i64,
		};
		let ob = DeviceOperand {
			ptr: db.ptr(&g),
			rows: n,
			k,
			rs: k as i64,
			cs: 1,
		};
		let stats = download_stats(&g, &launch_stats::<T>(&g, &[&oa, &ob]).unwrap()).unwrap();
		let (ca, cb) = (Operand::lhs(a.as_ref()), Operand::rhs(b.as_ref()));
		let (sa, sb) = (row_stats(&ca), row_stats(&cb));
		for scaling in [Scaling::Fast, Scaling::Accurate] {
			let coarse = (scaling == Scaling::Accurate).then(|| coarse_maxima::<T>(&g, (&oa, &ob), (&stats[0], &stats[1])).unwrap());
			let got = super::bound::bound::<T>(&g, (&oa, &ob), (&stats[0], &stats[1]), coarse.as_ref(), T::MANTISSA_BITS).unwrap();
			let cpu_coarse = (scaling == Scaling::Accurate).then(|| crate::cpu::coarse_maxima(&ca, &cb));
			let want = crate::cpu::bound::compute((&ca, &cb), (&sa, &sb), cpu_coarse.as_ref(), T::MANTISSA_BITS);
			let bits = |rows: &[crate::bound::RowMaxima]| -> Vec<u64> {
				rows.iter()
					.flat_map(|r| r.grid.iter().chain(&r.pairs).chain([&r.floor]).map(|x| x.to_bits()))
					.collect()
			};
			assert_eq!(bits(&got.rows), bits(&want.rows), "{family:?} {m}x{k}x{n} {scaling:?}");
		}
	}
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bound_matches_the_oracle_f64() {
	bound_matches::<f64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bound_matches_the_oracle_c64() {
	bound_matches::<c64>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bound_matches_the_oracle_f32() {
	bound_matches::<f32>();
}

#[test]
#[ignore = "needs a Hopper GPU"]
fn bound_matches_the_oracle_c32() {
	bound_matches::<c32>();
}
