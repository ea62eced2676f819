//! launches of the persistent wgmma chassis (`cuda/igemm.cu`) in any of its variants
//! ([`Variant`]): the plain INT8 GEMM and the fused scheme II residue products; clusters of 2 CTAs
//! through `cuLaunchKernelEx` (cudarc's launch builder has no cluster dimension)

use super::device::{Gpu, driver};
use super::pipeline::ResiduePlanes;
use super::tma::TensorMap;
use super::wgmma_config::{BM, STAGED_ENTRY, Variant};
use crate::Error;
use cudarc::driver::sys::{self, CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CUresult};
use std::ffi::c_void;

/// threads per CTA: a producer warpgroup and two consumer warpgroups
const THREADS: u32 = 384;

/// a kernel parameter: the address of a value that outlives the launch
fn arg<T>(value: &T) -> *mut c_void {
	value as *const T as *mut c_void
}

/// the launch configuration of `f` on the stream of `gpu`, `grid` CTAs in clusters of `cluster`
/// along x (no cluster attribute for 1), `smem` bytes of dynamic shared memory; `attr` holds the
/// cluster attribute the configuration points to
fn config(gpu: &Gpu, grid: u32, cluster: u32, smem: u32, attr: &mut sys::CUlaunchAttribute) -> sys::CUlaunchConfig {
	attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: cluster, y: 1, z: 1 };
	sys::CUlaunchConfig {
		gridDimX: grid,
		gridDimY: 1,
		gridDimZ: 1,
		blockDimX: THREADS,
		blockDimY: 1,
		blockDimZ: 1,
		sharedMemBytes: smem,
		hStream: gpu.stream.cu_stream(),
		attrs: attr,
		numAttrs: (cluster > 1) as u32,
	}
}

fn check(status: CUresult, what: &str) -> Result<(), Error> {
	if status == CUresult::CUDA_SUCCESS {
		Ok(())
	} else {
		Err(Error::gpu(format!("{what}: {status:?}")))
	}
}

/// launches variant `v`'s kernel `entry` on a persistent grid over `units` tile units: as many
/// CTAs (clusters of `v.cluster`) as the device runs at once, at most one per unit
///
/// # Safety
/// `params` must match the kernel's parameter list, each pointing to a live value
unsafe fn launch(gpu: &Gpu, v: Variant, entry: &str, units: usize, params: &mut [*mut c_void]) -> Result<(), Error> {
	let f = gpu.function(&v.kernel(entry))?;
	let smem = v.smem(entry);
	f.set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)
		.map_err(driver)?;
	let cluster = v.cluster as u32;
	// SAFETY: a plain C struct (an id and a union of plain values), valid all zero
	let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
	let mut slots = gpu.sm_count / v.cluster;
	if cluster > 1 {
		// the clusters that fit at once (SMs of a cluster share a GPC)
		let (mut fit, probe) = (0, config(gpu, cluster, cluster, smem, &mut attr));
		// SAFETY: `probe` points to `attr`, alive here
		check(
			unsafe { sys::cuOccupancyMaxActiveClusters(&mut fit, f.cu_function(), &probe) },
			"cuOccupancyMaxActiveClusters",
		)?;
		slots = slots.min(fit.max(1) as usize);
	}
	let grid = (units.min(slots).max(1) * v.cluster) as u32;
	let cfg = config(gpu, grid, cluster, smem, &mut attr);
	gpu.ctx.bind_to_thread().map_err(driver)?;
	// SAFETY: `cfg` points to `attr`, alive here; the caller vouches for `params`
	let status = unsafe { sys::cuLaunchKernelEx(&cfg, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) };
	check(status, &format!("cuLaunchKernelEx {}", v.kernel(entry)))
}

/// the tensor maps of A (`m` rows) and B (`n` rows) of `planes` K-major int8 planes of `kpad`
/// bytes per row, `step` planes apart, in the boxes of variant `v`
fn maps(
	v: Variant,
	(a, b): (u64, u64),
	(m, n, kpad): (usize, usize, usize),
	(planes, step): (usize, usize),
) -> Result<(TensorMap, TensorMap), Error> {
	Ok((
		TensorMap::every(a, kpad, m, planes, step, BM as u32)?,
		TensorMap::every(b, kpad, n, planes, step, v.b_box_rows())?,
	))
}

/// `C = A B^T` by variant `v`'s `igemm`: A `m x k` and B `n x k` int8, K-major (`k` a multiple of
/// 16, `k 128^2 < 2^31`), C `m x n` INT32, column-major
pub(crate) fn igemm(gpu: &Gpu, v: Variant, (a, b, c): (u64, u64, u64), (m, n, k): (usize, usize, usize)) -> Result<(), Error> {
	let (map_a, map_b) = maps(v, (a, b), (m, n, k), (1, 1))?;
	let (mi, ni, ki) = (m as i32, n as i32, k as i32);
	let mut params = [arg(&map_a), arg(&map_b), arg(&c), arg(&mi), arg(&ni), arg(&ki)];
	// SAFETY: igemm_*(map_a, map_b, int* c, int m, int n, int k)
	unsafe { launch(gpu, v, "igemm", v.units(m, n, 1), &mut params) }
}

/// the fused scheme II products by variant `v` (`scheme2_residues_*`, or `scheme2_residues_3m_*`
/// when `out.im` is given): see [`super::pipeline::fused_residues`]; `moduli` the device address of
/// `p` moduli (u32)
pub(crate) fn residues(
	gpu: &Gpu,
	v: Variant,
	(ra, rb): (u64, u64),
	(m, n, kpad): (usize, usize, usize),
	(moduli, p): (u64, usize),
	out: ResiduePlanes,
) -> Result<(), Error> {
	let Some(im) = out.im else {
		let maps = maps(v, (ra, rb), (m, n, kpad), (p, 1))?;
		return real_residues(gpu, v, maps, (m, n, kpad), (moduli, p), (out.re, out.stride));
	};
	let (map_a, map_b) = maps(v, (ra, rb), (m, n, kpad), (3 * p, 1))?;
	let (mi, ni, ki, pi, stride) = (m as i32, n as i32, kpad as i32, p as i32, out.stride as i64);
	let re = out.re;
	let mut params = [
		arg(&map_a),
		arg(&map_b),
		arg(&re),
		arg(&im),
		arg(&stride),
		arg(&moduli),
		arg(&mi),
		arg(&ni),
		arg(&ki),
		arg(&pi),
	];
	// SAFETY: scheme2_residues_3m_*(map_a, map_b, re, im, long long stride, moduli, int m, int n, int k, int p)
	unsafe { launch(gpu, v, "scheme2_residues_3m", v.units(m, n, p), &mut params) }
}

/// one of the three products of the 3M route in three launches: for every modulus `l < p`,
/// `sym_mod(A_f B_f^T, moduli[l])` as int8 at `out + l stride`, where `A_f`, `B_f` are planes
/// `3 l + part` of complex residue planes (re, im, re + im per modulus): the real kernel on every
/// third plane
pub(crate) fn residues_part(
	gpu: &Gpu,
	v: Variant,
	(ra, rb): (u64, u64),
	(m, n, kpad): (usize, usize, usize),
	(moduli, p): (u64, usize),
	part: usize,
	out: (u64, usize),
) -> Result<(), Error> {
	let first = |base: u64, rows: usize| base + (part * rows * kpad) as u64;
	let maps = maps(v, (first(ra, m), first(rb, n)), (m, n, kpad), (p, 3))?;
	real_residues(gpu, v, maps, (m, n, kpad), (moduli, p), out)
}

/// variant `v`'s `scheme2_residues_*` on the planes of the maps (plane `l` for modulus `l`): the
/// residues of modulus `l` at `out + l stride`
fn real_residues(
	gpu: &Gpu,
	v: Variant,
	(map_a, map_b): (TensorMap, TensorMap),
	(m, n, kpad): (usize, usize, usize),
	(moduli, p): (u64, usize),
	(out, stride): (u64, usize),
) -> Result<(), Error> {
	let (mi, ni, ki, pi, stride) = (m as i32, n as i32, kpad as i32, p as i32, stride as i64);
	let mut params = [
		arg(&map_a),
		arg(&map_b),
		arg(&out),
		arg(&stride),
		arg(&moduli),
		arg(&mi),
		arg(&ni),
		arg(&ki),
		arg(&pi),
	];
	// SAFETY: scheme2_residues_*(map_a, map_b, out, long long stride, moduli, int m, int n, int k, int p)
	unsafe { launch(gpu, v, STAGED_ENTRY, v.units(m, n, p), &mut params) }
}
