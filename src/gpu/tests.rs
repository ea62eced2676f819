//! the GPU's intermediate planes against the CPU oracle's, byte for byte (needs a Hopper GPU:
//! ignored unless run with `--include-ignored`, and failing without one)

use crate::cpu::{Planes, digit_planes, residue_planes};
use crate::gpu::kernels::digits::Digits;
use crate::gpu::product::job::DeviceOperand;
use crate::gpu::runtime::{context::Gpu, context::gpu, launch::ptr, ptr::DevPtr, slot::Slot};
use crate::gpu::schemes::scheme2::split_residues;
use crate::gpu::transfer::matrix::DeviceMatrix;
use crate::operand::Operand;
use crate::scheme2::{Crt, fast_shift};
use crate::stats::row_stats;
use crate::testing::{random_matrix, xorshift};
use crate::{Scalar, scheme1};
use faer::{c32, c64};

mod integer;
mod memory;

/// one test per element type: `NAME` runs `CHECK::<TYPE>()` (ignored unless asked for: they need
/// a Hopper GPU)
macro_rules! hopper_tests {
	($check:ident: $($name:ident => $t:ty,)+) => {
		$(
			#[test]
			#[ignore = "needs a Hopper GPU"]
			fn $name() {
				$check::<$t>();
			}
		)+
	};
}

fn download(g: &Gpu, ptr: DevPtr<i8>, len: usize) -> Vec<i8> {
	let mut host = vec![0i8; len];
	g.stream.synchronize().unwrap();
	// SAFETY: `ptr` is a live scratch buffer of at least `len` bytes, the stream is idle
	unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut host, ptr.addr()) }.unwrap();
	host
}

/// the GPU planes at `ptr` (rows padded to a multiple of 16) agree with the CPU planes, padding
/// zero: byte for byte, or, when `moduli` names each plane's modulus, congruent (the split's
/// residues are int8 representatives, not always the symmetric ones)
fn assert_planes(g: &Gpu, ptr: DevPtr<i8>, cpu: &Planes, count: usize, moduli: Option<&[u32]>, what: &str) {
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
fn operands<T: Scalar>(g: &Gpu, a: &DeviceMatrix<T>, used: usize) -> [(DeviceOperand<T>, &'static str); 2] {
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
fn for_each_split_case<T: Scalar>(mut check: impl FnMut(&Gpu, &DeviceOperand<T>, &Operand, &str)) {
	for (m, k, used) in SPLIT_SHAPES {
		let host = random_matrix::<T>(m, k, 2.0, 9);
		let dev = DeviceMatrix::upload(&[0], host.as_ref(), crate::settings::DEFAULT_STAGING).expect("these tests need a Hopper GPU");
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
	use crate::gpu::kernels::stats::{download_stats, launch_stats};
	use crate::gpu::schemes::scheme2::launch_fast_shifts;
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
			unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut got, a.addr()) }.unwrap();
			let expected: Vec<i32> = cpu.iter().map(|r| fast_shift(r.norm, lambda)).collect();
			assert_eq!(got, [expected.clone(), expected].concat(), "{what}: fast shifts, p = {p}");
		}
		for (side, s) in download_stats(g, &regions).unwrap().into_iter().enumerate() {
			assert_eq!(s.rows, cpu, "{what}: operand {side} of a pair");
		}
	});
}

hopper_tests!(stats_match:
	row_statistics_match_the_oracle_f64 => f64,
	row_statistics_match_the_oracle_f32 => f32,
	row_statistics_match_the_oracle_c64 => c64,
	row_statistics_match_the_oracle_c32 => c32,
);

/// the inner balancing's exponent ranges equal the CPU operand's in both orientations (rows of A:
/// a warp's lanes take consecutive rows of one inner index; columns of B: consecutive inner
/// indices of one row), over several blocks of rows, on wide-range values with zeros, subnormals
/// and non-finite entries (which count as zero), and an inner index with nothing finite
fn ranges_match<T: Scalar>() {
	for (m, k, used) in [(37, 45, 37), (40, 300, 39), (272, 600, 272), (600, 70, 517)] {
		let mut host = random_matrix::<T>(m, k, 8.0, 11);
		let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
		for j in 0..k {
			for i in 0..m {
				let tiny = if T::MANTISSA_BITS > 24 { 1e-310 } else { 1e-40 };
				let x = host[(i, j)];
				host[(i, j)] = match (j == 5, next() % 16) {
					(true, r) => T::from_parts(if r % 2 == 0 { f64::NAN } else { 0.0 }, 0.0),
					(_, 0) => T::from_parts(0.0, 0.0),
					(_, 1) => T::from_parts(f64::NAN, 1.0),
					(_, 2) => T::from_parts(1.0, f64::INFINITY),
					(_, 3) => T::from_parts(tiny, 0.0),
					(_, 4) => T::from_parts(0.0, -tiny * 3.0),
					_ => x,
				};
			}
		}
		let dev = DeviceMatrix::upload(&[0], host.as_ref(), crate::settings::DEFAULT_STAGING).expect("these tests need a Hopper GPU");
		let g = gpu().unwrap();
		let host = host.subrows(0, used).to_owned();
		for (op, what) in operands(&g, &dev, used) {
			let what = format!("{} {m} x {k} ({used} rows used), {what}", T::NAME);
			let expected = cpu_operand(&host, &what).inner_ranges();
			assert_eq!(crate::gpu::kernels::balance::ranges::<T>(&g, &op).unwrap(), expected, "{what}");
			// (only the rows of A have an inner index with nothing finite: the matrix's column 5)
			assert_eq!(
				expected.contains(&crate::balance::Range::EMPTY),
				what.ends_with("rows of A"),
				"{what}"
			);
		}
	}
}

hopper_tests!(ranges_match:
	inner_ranges_match_the_oracle_f64 => f64,
	inner_ranges_match_the_oracle_f32 => f32,
	inner_ranges_match_the_oracle_c64 => c64,
	inner_ranges_match_the_oracle_c32 => c32,
);

fn planes_match<T: Scalar>() {
	for_each_split_case::<T>(|g, op, cpu_op, what| {
		for p in [1u32, 3, 8] {
			let shifts: Vec<i32> = (0..cpu_op.len).map(|i| scheme1::shift(cpu_op.amax(i), p)).collect();
			let d = g.stream.clone_htod(&shifts).unwrap();
			for (part, values, negate) in digit_parts(cpu_op, T::IS_COMPLEX) {
				let out = g.scratch(Slot::SplitA, 8 * op.rows * op.k.div_ceil(16) * 16).unwrap().cast();
				let planes = Digits { op, shifts: &d, p, part }.planes(g, out).unwrap();
				let cpu = digit_planes(values, &shifts, cpu_op.k, p as usize, negate);
				assert_planes(
					g,
					planes,
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
			let out = g.scratch(Slot::SplitB, 60 * op.rows * op.k.div_ceil(16) * 16).unwrap().cast();
			let planes = split_residues::<T>(g, out, op, ptr(g, &d), p).unwrap();
			let cpu = residue_planes(cpu_op, &shifts, &crt.moduli);
			let per = if T::IS_COMPLEX { 3 } else { 1 };
			let moduli: Vec<u32> = crt.moduli.iter().flat_map(|&m| [m; 3].into_iter().take(per)).collect();
			let what = format!("{} {what} residues p={p}", T::NAME);
			assert_planes(g, planes, &cpu, moduli.len(), Some(&moduli), &what);
		}
	});
}

/// the interleaved digit planes of fused scheme I (`split_digits_interleaved`) hold the oracle's
/// digits: digit `t` of element `(r, h)` at byte `r p kpad + (h / 32 p + t) 32 + h % 32`, zeros
/// from `k` to `kpad` (a multiple of 128)
fn interleaved_digits_match<T: Scalar>() {
	use crate::gpu::kernels::digits::pad128;
	for_each_split_case::<T>(|g, op, cpu_op, what| {
		let kpad = pad128(op.k);
		for p in 1..=scheme1::MAX_SLICES {
			let pu = p as usize;
			let shifts: Vec<i32> = (0..cpu_op.len).map(|i| scheme1::shift(cpu_op.amax(i), p)).collect();
			let d = g.stream.clone_htod(&shifts).unwrap();
			for (part, values, negate) in digit_parts(cpu_op, T::IS_COMPLEX) {
				let len = op.rows * pu * kpad;
				let out = g.scratch(Slot::SplitA, len).unwrap().cast();
				Digits { op, shifts: &d, p, part }.interleaved(g, out).unwrap();
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

hopper_tests!(interleaved_digits_match:
	interleaved_digits_match_the_oracle_f32 => f32,
	interleaved_digits_match_the_oracle_c64 => c64,
);

hopper_tests!(planes_match:
	digit_and_residue_planes_match_the_oracle_f64 => f64,
	digit_and_residue_planes_match_the_oracle_c64 => c64,
	digit_and_residue_planes_match_the_oracle_c32 => c32,
);

/// `len` pseudo-random bytes (xorshift, seeded)
fn random_bytes(len: usize, seed: u64) -> Vec<i8> {
	let mut next = xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
	(0..len).map(|_| (next() >> 24) as i8).collect()
}

/// the CRT kernel alone (`crt_*` in `cuda/reconstruct.cu`, launched by `launch_crt`) against the CPU
/// oracle, bit for bit, for every modulus count: random symmetric residues in every plane (the
/// integers they stand for reach far beyond P/4, so the quotient q takes large values too), row and
/// column shifts, non-finite flags (those entries keep their old value), alpha and accumulation,
/// on shapes with partial segments, a single row (every entry starts a column) and several segments per warp
fn crt_matches_the_oracle<T: Scalar>() {
	// over 80 lines: the inputs, the launch and the check of every entry stay in one loop nest, so
	// that a failure names its shape, modulus count and alpha
	use crate::fp::scale_pow2;
	use crate::gpu::kernels::crt::launch_crt;
	use crate::gpu::product::job::{Job, Output, ResiduePlanes};
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
			let base = ptr(&g, &dev);
			let planes = ResiduePlanes {
				re: base,
				im: T::IS_COMPLEX.then_some(base.add(pu * stride)),
				stride,
				triangle: None,
			};
			let (da, db) = (g.stream.clone_htod(&sa).unwrap(), g.stream.clone_htod(&sb).unwrap());
			let flags = (g.stream.clone_htod(&bad_rows).unwrap(), g.stream.clone_htod(&bad_cols).unwrap());
			let rows = DeviceOperand {
				ptr: DevPtr::NULL,
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
					ptr: DevPtr::NULL,
					ld: m,
					accumulate: false,
					remainder: None,
					triangle: None,
				},
				alpha: T::from_parts(1.0, 0.0),
				bad_rows: ptr(&g, &flags.0),
				bad_cols: ptr(&g, &flags.1),
			};
			for (alpha, accumulate) in [(T::from_parts(1.0, 0.0), false), (T::from_parts(0.75, -2.0), true)] {
				let dst = g.stream.clone_htod(bytemuck::cast_slice::<T, u8>(&old)).unwrap();
				job.alpha = alpha;
				job.out = Output {
					ptr: ptr(&g, &dst).cast(),
					ld: m,
					accumulate,
					remainder: None,
					triangle: None,
				};
				launch_crt(&job, &crt, planes, (ptr(&g, &da), ptr(&g, &db))).unwrap();
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
							crate::fp::combine(c, alpha, accumulate.then_some(old[at]), crate::fp::Sum::Emulated)
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

hopper_tests!(crt_matches_the_oracle:
	crt_matches_the_oracle_f64 => f64,
	crt_matches_the_oracle_f32 => f32,
	crt_matches_the_oracle_c64 => c64,
);

/// two matrices on GPU 0, the lock of its context, and the pipeline's views of them
type Uploaded<T> = (
	[DeviceMatrix<T>; 2],
	crate::gpu::runtime::context::GpuGuard,
	DeviceOperand<T>,
	DeviceOperand<T>,
);

/// `a` and `b` uploaded to GPU 0 (kept alive by the returned matrices, which a caller drops after
/// the context's lock), and the pipeline's view of them on its context: `A` column-major, `B`
/// K-major
fn uploaded<T: Scalar>(a: &faer::Mat<T>, b: &faer::Mat<T>) -> Uploaded<T> {
	let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
	let upload = |x: &faer::Mat<T>| DeviceMatrix::upload(&[0], x.as_ref(), crate::settings::DEFAULT_STAGING).unwrap();
	let (da, db) = (upload(a), upload(b));
	let g = gpu().unwrap();
	let oa = DeviceOperand::left(da.ptr(&g), (m, k), m);
	let ob = DeviceOperand::right(db.ptr(&g), (k, n), k);
	([da, db], g, oa, ob)
}

/// the input families the bound's tests run on: ordinary, wide, inner-scaled, with small
/// imaginary parts, cancelling
fn bound_families() -> [crate::testing::Pair; 5] {
	use crate::testing::{InnerPattern, Pair};
	[
		Pair::Phi(1.0),
		Pair::Phi(4.0),
		Pair::InnerScaled {
			pattern: InnerPattern::Blocks,
			range: 12,
		},
		Pair::SmallImaginary { log2_ratio: 6 },
		Pair::Cancellation,
	]
}

/// the error bound's per-row maxima on the GPU (window magnitudes, their cuBLASLt INT8 products, the
/// `bound_maxima` pass) equal the CPU's bit for bit, under both scalings, on shapes with ragged
/// blocks and on inputs where the window loses pairings: so both backends certify the same plans
fn bound_matches<T: Scalar>() {
	use crate::Scaling;
	use crate::gpu::kernels::stats::{download_stats, launch_stats};
	use crate::gpu::schemes::scheme2::coarse_maxima;
	use crate::testing::pair;
	let families = bound_families();
	for (family, (m, k, n)) in families
		.into_iter()
		.zip([(1, 1, 1), (130, 70, 65), (129, 300, 200), (7, 33, 5), (64, 96, 257)])
	{
		let (a, b) = pair::<T>(family, m, k, n, 4);
		let (_kept, g, oa, ob) = uploaded(&a, &b);
		let stats = download_stats(&g, &launch_stats::<T>(&g, &[&oa, &ob]).unwrap()).unwrap();
		let (ca, cb) = (Operand::lhs(a.as_ref()), Operand::rhs(b.as_ref()));
		let (sa, sb) = (row_stats(&ca), row_stats(&cb));
		for scaling in [Scaling::Fast, Scaling::Accurate] {
			let coarse = (scaling == Scaling::Accurate).then(|| coarse_maxima::<T>(&g, (&oa, &ob), (&stats[0], &stats[1])).unwrap());
			let got =
				crate::gpu::kernels::bound::bound::<T>(&g, (&oa, &ob), (&stats[0], &stats[1]), coarse.as_ref(), T::MANTISSA_BITS).unwrap();
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

hopper_tests!(bound_matches:
	bound_matches_the_oracle_f64 => f64,
	bound_matches_the_oracle_c64 => c64,
	bound_matches_the_oracle_f32 => f32,
	bound_matches_the_oracle_c32 => c32,
);

/// a Gram product's bound from `A` alone (its window, the lower triangle of the magnitude
/// products in column blocks, each entry's maxima mirrored to its column's row) equals the bound of
/// `A` and its adjoint bit for bit, and `A`'s statistics are its adjoint's: on shapes of several
/// row, column and product blocks, a zero row, a non-finite entry, wide ranges and cancelling
/// inputs. Under fast scaling it always applies; under accurate scaling it may decline
fn gram_bound_matches<T: Scalar>() {
	use crate::Scaling;
	use crate::gpu::kernels::bound::{bound, gram_bound};
	use crate::gpu::kernels::stats::{download_stats, launch_stats};
	use crate::gpu::schemes::scheme2::coarse_maxima;
	use crate::testing::pair;
	let families = bound_families();
	for (family, (n, k)) in families.into_iter().zip([(1, 1), (130, 70), (300, 33), (777, 64), (64, 300)]) {
		let (mut a, _) = pair::<T>(family, n, k, 1, 9);
		if n > 2 {
			(0..k).for_each(|t| a[(n / 2, t)] = T::from_parts(0.0, 0.0));
			a[(n - 1, k / 2)] = T::from_parts(f64::NAN, 1.0);
		}
		let adjoint = faer::Mat::from_fn(k, n, |t, i| T::from_parts(a[(i, t)].re(), -a[(i, t)].im()));
		let (_kept, g, oa, ob) = uploaded(&a, &adjoint);
		let stats = download_stats(&g, &launch_stats::<T>(&g, &[&oa, &ob]).unwrap()).unwrap();
		let what = format!("{family:?} {n}x{k}");
		assert_eq!(stats[0].rows, stats[1].rows, "{what}: statistics");
		let amax = |s: &crate::gpu::kernels::stats::OperandStats| s.amax.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
		assert_eq!(
			(amax(&stats[0]), &stats[0].nonfinite),
			(amax(&stats[1]), &stats[1].nonfinite),
			"{what}"
		);
		for scaling in [Scaling::Fast, Scaling::Accurate] {
			let coarse = (scaling == Scaling::Accurate).then(|| coarse_maxima::<T>(&g, (&oa, &ob), (&stats[0], &stats[1])).unwrap());
			let whole = bound::<T>(&g, (&oa, &ob), (&stats[0], &stats[1]), coarse.as_ref(), T::MANTISSA_BITS).unwrap();
			let gram = gram_bound::<T>(&g, &oa, &stats[0], coarse.as_ref(), T::MANTISSA_BITS).unwrap();
			let bits = |rows: &[crate::bound::RowMaxima]| -> Vec<u64> {
				rows.iter()
					.flat_map(|r| r.grid.iter().chain(&r.pairs).chain([&r.floor]).map(|x| x.to_bits()))
					.collect()
			};
			match gram {
				Some(gram) => assert_eq!(bits(&gram.rows), bits(&whole.rows), "{what} {scaling:?}"),
				None => assert_eq!(scaling, Scaling::Accurate, "{what}: fast scaling's Gram bound declined"),
			}
		}
	}
}

hopper_tests!(gram_bound_matches:
	gram_bound_matches_the_whole_f64 => f64,
	gram_bound_matches_the_whole_c64 => c64,
	gram_bound_matches_the_whole_f32 => f32,
	gram_bound_matches_the_whole_c32 => c32,
);

/// weighing separately scaled parts (their screen and their bounds, each with row statistics of
/// its own) leaves the complex operands' statistics on the device as they were: the fast shifts
/// and the non-finite rows of the plan that runs after read them there
fn parts_leave_the_operands_statistics<T: Scalar>() {
	use crate::Scaling;
	use crate::gpu::kernels::stats::StatsRegion;
	use crate::gpu::schemes::resident::operand_stats;
	let (m, k, n) = (40, 24, 30);
	let mut a = crate::testing::random_matrix::<T>(m, k, 1.0, 7);
	a[(3, 5)] = T::from_parts(f64::NAN, 0.0);
	let b = crate::testing::random_matrix::<T>(k, n, 1e-3, 8);
	let (_kept, g, oa, ob) = uploaded(&a, &b);
	let (sa, sb) = operand_stats::<T>(&g, (&oa, &ob), (None, None)).unwrap();
	let bytes = |s: &StatsRegion| download(&g, s.base.cast::<i8>(), StatsRegion::bytes(s.rows));
	let before = (bytes(&sa.device), bytes(&sb.device));
	for scaling in [Scaling::Fast, Scaling::Accurate] {
		crate::gpu::schemes::parts::screen::<T>(&g, (&oa, &ob), T::MANTISSA_BITS, scaling).unwrap();
		let parts = crate::gpu::schemes::parts::split::<T>(&g, (&oa, &ob)).unwrap();
		parts.bounds(&g, T::MANTISSA_BITS, scaling).unwrap();
		assert_eq!((bytes(&sa.device), bytes(&sb.device)), before, "{scaling:?}");
	}
}

hopper_tests!(parts_leave_the_operands_statistics:
	parts_leave_the_operands_statistics_c64 => c64,
	parts_leave_the_operands_statistics_c32 => c32,
);

/// the rates measured at first use on this (Hopper) GPU agree with its data sheet within the
/// shares a library GEMM reaches (so that a GPU not in the table gets a model of its own scale).
/// cuBLASLt's INT8 GEMM reaches 37-40% of an H200's data-sheet INT8 rate at n = 8192, so its
/// share starts lower
#[test]
#[ignore = "needs a Hopper GPU"]
fn measured_rates_agree_with_the_data_sheet() {
	let g = crate::gpu::runtime::context::gpu().expect("these tests need a Hopper GPU");
	let measured = crate::gpu::runtime::calibrate::measure(&g, "this GPU").unwrap();
	let sheet = crate::datasheets::GpuModel::named(&g.name)
		.expect("a Hopper GPU of the table")
		.sheet();
	let close = |what: &str, got: f64, (expected, least): (f64, f64)| {
		assert!(
			got > least * expected && got < 1.5 * expected,
			"{what}: measured {got:.3e}, data sheet {expected:.3e}"
		);
	};
	close("FP64", measured.fp64, (sheet.fp64, 0.4));
	close("FP32", measured.fp32, (sheet.fp32, 0.4));
	close("TF32", measured.tf32, (sheet.tf32, 0.4));
	close("INT8", measured.int8, (sheet.int8, 0.3));
	close("bandwidth", measured.bandwidth, (sheet.bandwidth, 0.4));
}
