//! the GPU's intermediate planes against the CPU oracle's, byte for byte (needs a Hopper GPU:
//! ignored unless run with `--include-ignored`, and failing without one)

use super::device::{Gpu, gpu};
use super::matrix::DeviceMatrix;
use super::pipeline::{DeviceOperand, split_digits, split_residues};
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

/// the INT8 wgmma chassis (v0) against exact products on the CPU and cuBLASLt, and its speed
#[test]
#[ignore = "needs a Hopper GPU"]
fn igemm_chassis_is_exact() {
	use super::blas::Int8Gemm;
	use cudarc::driver::{LaunchConfig, PushKernelArg};
	let g = gpu().unwrap();
	let (m, n, k) = (128usize, 256usize, 384usize);
	let mut state = 0x2545_F491_4F6C_DD1Du64;
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
	let ptr = |s: u64| s;
	let (pa, pb, pc) = (
		ptr(da.device_ptr(&g.stream).0),
		ptr(db.device_ptr(&g.stream).0),
		ptr(dc.device_ptr(&g.stream).0),
	);
	let run = |lbo: u32, sbo: u32, (m, n, k): (usize, usize, usize), (pa, pb, pc): (u64, u64, u64)| {
		let f = g.function("igemm_v0");
		let mut launch = g.stream.launch_builder(&f);
		let (mi, ni, ki, ld) = (m as i32, n as i32, k as i32, k as i64);
		launch
			.arg(&pa)
			.arg(&pb)
			.arg(&pc)
			.arg(&mi)
			.arg(&ni)
			.arg(&ki)
			.arg(&ld)
			.arg(&lbo)
			.arg(&sbo);
		let cfg = LaunchConfig {
			grid_dim: ((n / 128) as u32, (m / 64) as u32, 1),
			block_dim: (128, 1, 1),
			shared_mem_bytes: 0,
		};
		unsafe { launch.launch(cfg) }.unwrap();
		g.stream.synchronize().unwrap();
	};
	for (lbo, sbo) in [(128, 256), (256, 128)] {
		run(lbo, sbo, (m, n, k), (pa, pb, pc));
		let got = g.stream.clone_dtoh(&dc).unwrap();
		let wrong = got.iter().zip(&expected).filter(|(x, y)| x != y).count();
		println!("igemm_v0 with LBO {lbo}, SBO {sbo}: {wrong} of {} entries differ", m * n);
		if (lbo, sbo) == (128, 256) {
			assert_eq!(
				wrong, 0,
				"the no-swizzle K-major layout: LBO = K-adjacent core matrices, SBO = 8-row groups"
			);
		}
	}
	// speed at 8192^3 against cuBLASLt, device events
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
	let ours = time(&|| run(128, 256, (big, big, big), (sa, sb, sc)));
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
		"n=8192: igemm_v0 {ours:.3} ms ({:.0} TOPS), cuBLASLt {lt:.3} ms ({:.0} TOPS)",
		tops(ours),
		tops(lt)
	);
}

/// a TMA descriptor, passed by value as a `__grid_constant__` kernel parameter
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct TensorMap(cudarc::driver::sys::CUtensorMap);

// SAFETY: a plain 128-byte descriptor, copied into the kernel's parameter space
unsafe impl cudarc::driver::DeviceRepr for TensorMap {}

/// `rows` K-major int8 rows of `k` bytes at `ptr`, loaded in boxes of 128 bytes x `box_rows` rows
/// with 128-byte swizzle
fn tensor_map(ptr: u64, k: usize, rows: usize, box_rows: u32) -> TensorMap {
	use cudarc::driver::sys::*;
	let mut map = std::mem::MaybeUninit::<CUtensorMap>::zeroed();
	let (dims, strides, boxes, elements) = ([k as u64, rows as u64], [k as u64], [128u32, box_rows], [1u32, 1]);
	// SAFETY: all arrays have the lengths the rank (2) asks for; the map is written by the driver
	let r = unsafe {
		cuTensorMapEncodeTiled(
			map.as_mut_ptr(),
			CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
			2,
			ptr as *mut _,
			dims.as_ptr(),
			strides.as_ptr(),
			boxes.as_ptr(),
			elements.as_ptr(),
			CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
			CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
			CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
			CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
		)
	};
	assert_eq!(r, CUresult::CUDA_SUCCESS);
	// SAFETY: initialised by the successful call above
	TensorMap(unsafe { map.assume_init() })
}

/// the TMA / mbarrier / warp-specialised chassis (v1) against exact products, and its speed
#[test]
#[ignore = "needs a Hopper GPU"]
fn igemm_tma_chassis_is_exact() {
	use super::blas::Int8Gemm;
	use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
	use cudarc::driver::{LaunchConfig, PushKernelArg};
	let g = gpu().unwrap();
	let smem: i32 = 4 * (128 + 256) * 128 + 1024 + 64;
	let f = g.function("igemm_v1");
	f.set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem).unwrap();
	let run = |(m, n, k): (usize, usize, usize), (pa, pb, pc): (u64, u64, u64)| {
		let (ma, mb) = (tensor_map(pa, k, m, 128), tensor_map(pb, k, n, 256));
		let mut launch = g.stream.launch_builder(&f);
		let (mi, ni, ki) = (m as i32, n as i32, k as i32);
		launch.arg(&ma).arg(&mb).arg(&pc).arg(&mi).arg(&ni).arg(&ki);
		let cfg = LaunchConfig {
			grid_dim: ((n / 256) as u32, (m / 128) as u32, 1),
			block_dim: (384, 1, 1),
			shared_mem_bytes: smem as u32,
		};
		unsafe { launch.launch(cfg) }.unwrap();
		g.stream.synchronize().unwrap();
	};
	let (m, n, k) = (256usize, 512usize, 640usize);
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
		"igemm_v1: {wrong} of {} entries differ (first: got {} expected {})",
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
		"n=8192: igemm_v1 {ours:.3} ms ({:.0} TOPS), cuBLASLt {lt:.3} ms ({:.0} TOPS)",
		tops(ours),
		tops(lt)
	);
}
