//! launches of the persistent wgmma chassis (`cuda/sm90_chassis.cu`) in any of its variants
//! ([`Variant`]): the plain INT8 GEMM and the fused scheme II residue products, on persistent
//! grids (clusters of 2 CTAs where the variant multicasts)

use crate::Error;
use crate::gpu::kernels::tma::TensorMap;
use crate::gpu::kernels::wgmma_config::{BM, STAGED_ENTRY, Variant};
use crate::gpu::product::job::{OutputTriangle, ResiduePlanes};
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{Launch, Params};
use crate::gpu::runtime::ptr::DevPtr;
use crate::shape::Shape;

/// threads per CTA: a producer warpgroup and two consumer warpgroups
const THREADS: u32 = 384;

/// launches variant `v`'s kernel `entry` with `params` on a persistent grid over `units` tile
/// units: as many CTAs (clusters of `v.cluster`) as the device runs at once, at most one per unit
///
/// # Safety
/// `params` must match the kernel's parameter list
unsafe fn launch(gpu: &Gpu, v: Variant, entry: &str, units: usize, params: &impl Params) -> Result<(), Error> {
	let name = v.kernel(entry);
	let mut launch = Launch {
		grid: (1, 1, 1),
		block: (THREADS, 1, 1),
		smem: v.smem(entry),
		cluster: v.cluster as u32,
	};
	let mut slots = gpu.sm_count / v.cluster;
	if v.cluster > 1 {
		slots = slots.min(launch.clusters_fit(gpu, &name)?.max(1) as usize);
	}
	launch.grid.0 = (units.min(slots).max(1) * v.cluster) as u32;
	// SAFETY: the caller vouches for `params`
	unsafe { launch.run(gpu, &name, params) }
}

/// the tensor maps of A (`m` rows) and B (`n` rows) of `planes` K-major int8 planes of `kpad`
/// bytes per row (`dims`' K), `step` planes apart, in the boxes of variant `v`
fn maps(
	v: Variant,
	(a, b): (DevPtr<i8>, DevPtr<i8>),
	Shape { m, n, k: kpad }: Shape,
	(planes, step): (usize, usize),
) -> Result<(TensorMap, TensorMap), Error> {
	Ok((
		TensorMap::every(a, kpad, m, planes, step, BM as u32)?,
		TensorMap::every(b, kpad, n, planes, step, v.b_box_rows())?,
	))
}

/// `C = A B^T` by variant `v`'s `igemm`: A `m x k` and B `n x k` int8, K-major (`k` a multiple of
/// 16, `k 128^2 < 2^31`), C `m x n` INT32, column-major
#[cfg(any(feature = "bench", test))]
pub(crate) fn igemm(gpu: &Gpu, v: Variant, (a, b, c): (DevPtr<i8>, DevPtr<i8>, DevPtr<i32>), dims: Shape) -> Result<(), Error> {
	let Shape { m, n, k } = dims;
	let (map_a, map_b) = maps(v, (a, b), dims, (1, 1))?;
	let (mi, ni, ki) = (m as i32, n as i32, k as i32);
	// SAFETY: igemm_*(map_a, map_b, int* c, int m, int n, int k)
	unsafe { launch(gpu, v, "igemm", v.units(m, n, 1), &(map_a, map_b, c, mi, ni, ki)) }
}

/// the fused scheme II products of residue planes `planes` (of A and of B, `dims` with K padded)
/// by variant `v`, for the `p` moduli at device address `moduli` (u32): see
/// `residues::fused_residues`
#[derive(Clone, Copy)]
pub(crate) struct Residues {
	pub v: Variant,
	pub planes: (DevPtr<i8>, DevPtr<i8>),
	pub dims: Shape,
	pub moduli: (DevPtr<u32>, usize),
}

impl Residues {
	/// all of them in one launch (`scheme2_residues_*`, or `scheme2_residues_3m_*` when `out.im`
	/// is given)
	pub fn run(&self, gpu: &Gpu, out: ResiduePlanes) -> Result<(), Error> {
		let Residues {
			v,
			planes,
			dims,
			moduli: (moduli, p),
		} = *self;
		let Some(im) = out.im else {
			let maps = maps(v, planes, dims, (p, 1))?;
			return self.real(gpu, maps, out);
		};
		let Shape { m, n, k: kpad } = dims;
		let (map_a, map_b) = maps(v, planes, dims, (3 * p, 1))?;
		let (mi, ni, ki, pi, stride) = (m as i32, n as i32, kpad as i32, p as i32, out.stride as i64);
		let (triangle, first_col) = OutputTriangle::params(out.triangle);
		let params = (map_a, map_b, out.re, im, stride, moduli, mi, ni, ki, pi, triangle, first_col);
		// SAFETY: scheme2_residues_3m_*(map_a, map_b, re, im, long long stride, moduli, int m, int n, int k, int p,
		// int triangle, int first_col)
		unsafe { launch(gpu, v, "scheme2_residues_3m", v.units(m, n, p), &params) }
	}

	/// one of the three products of the 3M route in three launches: for every modulus `l < p`,
	/// `sym_mod(A_f B_f^T, moduli[l])` as int8 at `out + l stride`, where `A_f`, `B_f` are planes
	/// `3 l + part` of complex residue planes (re, im, re + im per modulus): the real kernel on
	/// every third plane
	pub fn part(&self, gpu: &Gpu, part: usize, out: ResiduePlanes) -> Result<(), Error> {
		let Shape { m, n, k: kpad } = self.dims;
		let first = |base: DevPtr<i8>, rows: usize| base.add(part * rows * kpad);
		let maps = maps(
			self.v,
			(first(self.planes.0, m), first(self.planes.1, n)),
			self.dims,
			(self.moduli.1, 3),
		)?;
		self.real(gpu, maps, out)
	}

	/// variant `v`'s `scheme2_residues_*` on the planes of the maps (plane `l` for modulus `l`):
	/// the residues of modulus `l` at `out.re + l out.stride` (`out.im` unread)
	fn real(&self, gpu: &Gpu, (map_a, map_b): (TensorMap, TensorMap), out: ResiduePlanes) -> Result<(), Error> {
		let (Shape { m, n, k: kpad }, (moduli, p)) = (self.dims, self.moduli);
		let (mi, ni, ki, pi, stride) = (m as i32, n as i32, kpad as i32, p as i32, out.stride as i64);
		let (triangle, first_col) = OutputTriangle::params(out.triangle);
		let params = (map_a, map_b, out.re, stride, moduli, mi, ni, ki, pi, triangle, first_col);
		// SAFETY: scheme2_residues_*(map_a, map_b, out, long long stride, moduli, int m, int n, int k, int p,
		// int triangle, int first_col)
		unsafe { launch(gpu, self.v, STAGED_ENTRY, self.v.units(m, n, p), &params) }
	}
}
