//! the GPU's intermediate planes against the CPU oracle's, byte for byte (needs a Hopper GPU:
//! ignored unless run with `--include-ignored`, and failing without one)

use super::device::{Gpu, gpu};
use super::matrix::DeviceMatrix;
use super::pipeline::{DeviceOperand, split_digits, split_residues};
use super::tma::TensorMap;
use crate::cpu::{Planes, digit_planes, residue_planes};
use crate::operand::Operand;
use crate::scheme2::{Crt, fast_shift};
use crate::stats::row_stats;
use crate::testing::random_matrix;
use crate::{Scalar, scheme1};
use cudarc::driver::DevicePtr;
use faer::c64;

fn download(g: &Gpu, ptr: u64, len: usize) -> Vec<i8> {
	let mut host = vec![0i8; len];
	g.stream.synchronize().unwrap();
	// SAFETY: `ptr` is a live scratch buffer of at least `len` bytes, the stream is idle
	unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut host, ptr) }.unwrap();
	host
}

/// the GPU planes at `ptr` (rows padded to a multiple of 16) equal the CPU planes, padding zero
fn assert_same_planes(g: &Gpu, ptr: u64, cpu: &Planes, count: usize, what: &str) {
	let kpad = cpu.k.div_ceil(16) * 16;
	let gpu_bytes = download(g, ptr, count * cpu.rows * kpad);
	for t in 0..count {
		for i in 0..cpu.rows {
			let row = &gpu_bytes[(t * cpu.rows + i) * kpad..][..kpad];
			assert_eq!(&row[..cpu.k], cpu.row(t, i), "{what}: plane {t}, row {i}");
			assert!(row[cpu.k..].iter().all(|&x| x == 0), "{what}: padding of plane {t}, row {i}");
		}
	}
}

/// both operand orientations: rows of A (rows contiguous) and columns of B (K contiguous)
fn operands<T: Scalar>(g: &Gpu, a: &DeviceMatrix<T>) -> [(DeviceOperand, &'static str); 2] {
	let (m, k) = (a.nrows(), a.ncols());
	[
		(
			DeviceOperand {
				ptr: a.ptr(g),
				rows: m,
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
				k: m,
				rs: m as i64,
				cs: 1,
			},
			"columns of B",
		),
	]
}

fn planes_match<T: Scalar>() {
	let host = random_matrix::<T>(37, 45, 2.0, 9);
	let dev = DeviceMatrix::upload(host.as_ref()).expect("these tests need a Hopper GPU");
	let g = gpu().unwrap();
	for (op, what) in operands(&g, &dev) {
		let cpu_op = if what == "rows of A" {
			Operand::lhs(host.as_ref())
		} else {
			Operand::rhs(host.as_ref())
		};
		for p in [1u32, 3, 8] {
			let shifts: Vec<i32> = (0..cpu_op.len).map(|i| scheme1::shift(cpu_op.amax(i), p)).collect();
			let d = g.stream.clone_htod(&shifts).unwrap();
			let parts: &[(i32, &[f64], bool)] = if T::IS_COMPLEX {
				&[(0, &cpu_op.re, false), (1, &cpu_op.im, false), (2, &cpu_op.im, true)]
			} else {
				&[(0, &cpu_op.re, false)]
			};
			for &(part, values, negate) in parts {
				let ptr = split_digits::<T>(&g, g.scratch(0, 8 * op.rows * op.k.div_ceil(16) * 16).unwrap(), &op, &d, p, part).unwrap();
				let cpu = digit_planes(values, &shifts, cpu_op.k, p as usize, negate);
				assert_same_planes(&g, ptr, &cpu, p as usize, &format!("{} {what} digits p={p} part {part}", T::NAME));
			}
		}
		let stats = row_stats(&cpu_op);
		for p in [2u32, 9, 20] {
			let crt = Crt::new(p);
			let shifts: Vec<i32> = stats.iter().map(|r| fast_shift(r.norm, crt.lambda)).collect();
			let (d, moduli) = (g.stream.clone_htod(&shifts).unwrap(), g.stream.clone_htod(&crt.moduli).unwrap());
			let ptr = split_residues::<T>(&g, g.scratch(1, 60 * op.rows * op.k.div_ceil(16) * 16).unwrap(), &op, &d, &moduli).unwrap();
			let cpu = residue_planes(&cpu_op, &shifts, &crt.moduli);
			let count = p as usize * if T::IS_COMPLEX { 3 } else { 1 };
			assert_same_planes(&g, ptr, &cpu, count, &format!("{} {what} residues p={p}", T::NAME));
		}
	}
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

/// the persistent INT8 wgmma chassis against exact products (ragged shapes: TMA fills the
/// out-of-range parts with zeros), and its speed against cuBLASLt
#[test]
#[ignore = "needs a Hopper GPU"]
fn igemm_chassis_is_exact() {
	use super::blas::Int8Gemm;
	use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
	use cudarc::driver::{LaunchConfig, PushKernelArg};
	let g = gpu().unwrap();
	let smem = super::tma::WGMMA_SMEM as i32;
	let f = g.function("igemm_v2");
	f.set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem).unwrap();
	let run = |(m, n, k): (usize, usize, usize), (pa, pb, pc): (u64, u64, u64)| {
		let (ma, mb) = (
			TensorMap::planes(pa, k, m, 1, 128).unwrap(),
			TensorMap::planes(pb, k, n, 1, 256).unwrap(),
		);
		let mut launch = g.stream.launch_builder(&f);
		let (mi, ni, ki) = (m as i32, n as i32, k as i32);
		launch.arg(&ma).arg(&mb).arg(&pc).arg(&mi).arg(&ni).arg(&ki);
		let cfg = LaunchConfig {
			grid_dim: ((m.div_ceil(128) * n.div_ceil(256)).min(g.sm_count) as u32, 1, 1),
			block_dim: (384, 1, 1),
			shared_mem_bytes: smem as u32,
		};
		unsafe { launch.launch(cfg) }.unwrap();
		g.stream.synchronize().unwrap();
	};
	let (m, n, k) = (200usize, 300usize, 272usize);
	let mut state = 0x9E37_79B9_7F4A_7C15u64;
	let mut byte = || {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		(state >> 24) as i8
	};
	let a: Vec<i8> = (0..m * k).map(|_| byte()).collect();
	let b: Vec<i8> = (0..n * k).map(|_| byte()).collect();
	let expected: Vec<i32> = (0..m * n)
		.map(|idx| (0..k).map(|h| a[(idx % m) * k + h] as i32 * b[(idx / m) * k + h] as i32).sum())
		.collect();
	let (da, db) = (g.stream.clone_htod(&a).unwrap(), g.stream.clone_htod(&b).unwrap());
	let dc = g.stream.alloc_zeros::<i32>(m * n).unwrap();
	run(
		(m, n, k),
		(da.device_ptr(&g.stream).0, db.device_ptr(&g.stream).0, dc.device_ptr(&g.stream).0),
	);
	let got = g.stream.clone_dtoh(&dc).unwrap();
	let wrong = got.iter().zip(&expected).filter(|(x, y)| x != y).count();
	println!(
		"igemm_v2: {wrong} of {} entries differ (first: got {} expected {})",
		m * n,
		got[0],
		expected[0]
	);
	assert_eq!(wrong, 0);
	let big = 8192usize;
	let (sa, sb, sc) = (
		g.scratch(20, big * big).unwrap(),
		g.scratch(21, big * big).unwrap(),
		g.scratch(22, 4 * big * big).unwrap(),
	);
	let time = |f: &dyn Fn()| {
		f();
		let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
		let (s, e) = (g.ctx.new_event(flags).unwrap(), g.ctx.new_event(flags).unwrap());
		let mut v: Vec<f32> = (0..10)
			.map(|_| {
				s.record(&g.stream).unwrap();
				f();
				e.record(&g.stream).unwrap();
				e.synchronize().unwrap();
				s.elapsed_ms(&e).unwrap()
			})
			.collect();
		v.sort_by(f32::total_cmp);
		v[5] as f64
	};
	let ours = time(&|| run((big, big, big), (sa, sb, sc)));
	let lt = time(&|| {
		Int8Gemm {
			m: big,
			n: big,
			k: big,
			a: sa,
			lda: big,
			b: sb,
			ldb: big,
			c: sc,
			accumulate: false,
		}
		.run(&g)
		.unwrap()
	});
	let tops = |ms: f64| 2.0 * (big as f64).powi(3) / ms / 1e9;
	println!(
		"n=8192: igemm_v2 {ours:.3} ms ({:.0} TOPS), cuBLASLt {lt:.3} ms ({:.0} TOPS)",
		tops(ours),
		tops(lt)
	);
}

/// the symmetric residue of the fused epilogue and the reductions (exact double arithmetic)
/// equals integer `%` for all 2^32 INT32 inputs and every modulus
#[test]
#[ignore = "needs a Hopper GPU"]
fn sym_mod_is_exact_for_every_int32() {
	use cudarc::driver::{LaunchConfig, PushKernelArg};
	let g = gpu().unwrap();
	let moduli = g.stream.clone_htod(&crate::scheme2::MODULI).unwrap();
	let count = g.stream.alloc_zeros::<u64>(1).unwrap();
	let f = g.function("sym_mod_exhaustive");
	let mut launch = g.stream.launch_builder(&f);
	let p = crate::scheme2::MODULI.len() as i32;
	launch.arg(&moduli).arg(&p).arg(&count);
	let cfg = LaunchConfig {
		grid_dim: (g.sm_count as u32 * 16, 1, 1),
		block_dim: (256, 1, 1),
		shared_mem_bytes: 0,
	};
	let start = std::time::Instant::now();
	// SAFETY: the arguments match the kernel's parameters
	unsafe { launch.launch(cfg) }.unwrap();
	let wrong = g.stream.clone_dtoh(&count).unwrap()[0];
	println!(
		"sym_mod over 2^32 inputs x {p} moduli: {wrong} mismatches in {:.1?}",
		start.elapsed()
	);
	assert_eq!(wrong, 0);
}
