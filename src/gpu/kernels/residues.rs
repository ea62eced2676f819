//! the exact INT8 products of scheme II reduced mod each modulus: fused in one wgmma kernel for all
//! moduli (the route and the chassis variant picked per shape), or unfused through cuBLASLt and a
//! reduction kernel, byte for byte the same

use crate::gpu::kernels::chassis;
use crate::gpu::kernels::wgmma_config::{self, Variant};
use crate::gpu::product::job::ResiduePlanes;
use crate::gpu::runtime::blas::Int8Gemm;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::launch::{elementwise, ptr, to_device};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::shape::Shape;
use crate::{Error, Route};
use cudarc::driver::LaunchConfig;

/// INT32 accumulation of int8 residue products is exact over this many K (a multiple of 16): the
/// K chunk of [`unfused_residues`]
pub(crate) const RESIDUE_CHUNK: usize = 131_056;

/// the largest product (K, and m n entries) for which complex scheme II runs its three products in
/// one launch of the fused 3M kernel; beyond it, in three launches of the real kernel (see
/// [`Route3m`]). The one-launch kernel keeps three planes of K-long operand panels in flight, which
/// outgrow L2 as n grows (ncu at n = 8192: 74% DRAM throughput against 32% for the real kernel).
/// Measured on an NVIDIA H200, 15 moduli, the products alone: one
/// launch 5.04 / 39.8 / 446.0 ms, three launches 5.50 / 42.1 / 343.4 ms, unfused 5.79 / 44.9 /
/// 357.0 ms at n = 4096 / 8192 / 16384
pub(crate) const ONE_LAUNCH_3M_MAX_K: usize = 8192;
pub(crate) const ONE_LAUNCH_3M_MAX_ENTRIES: usize = 8192 * 8192;

/// how the fused route runs the three products of complex scheme II (3M)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route3m {
	/// one launch of `scheme2_residues_3m_*`: T1, T2, T3 of a tile one after the other in the same
	/// accumulators, only int8 residues kept between them (in registers)
	OneLaunch,
	/// three launches of the real kernel `scheme2_residues_*` (planes re, im, re + im), writing
	/// R1 = sym_mod(T1), R2 = sym_mod(T2), R3 = sym_mod(T3) as int8, then `combine_3m`:
	/// Re = sym_mod(R1 - R2), Im = sym_mod(R3 - R1 - R2), the same bytes (only int8 between the
	/// phases, through global memory: 5 bytes per entry and modulus)
	ThreeLaunches,
}

impl Route3m {
	/// the route the pipeline takes for an `m x n` product over K padded to `kpad`
	pub fn for_shape(m: usize, n: usize, kpad: usize) -> Self {
		if kpad <= ONE_LAUNCH_3M_MAX_K && m * n <= ONE_LAUNCH_3M_MAX_ENTRIES {
			Route3m::OneLaunch
		} else {
			Route3m::ThreeLaunches
		}
	}
}

/// the route a fused scheme II product of `m x n` over K padded to `kpad` reports: complex ones
/// in three launches where [`Route3m::for_shape`] says so
pub(crate) fn fused_route(complex: bool, Shape { m, n, k: kpad }: Shape) -> Route {
	match complex && Route3m::for_shape(m, n, kpad) == Route3m::ThreeLaunches {
		true => Route::FusedThreeLaunches,
		false => Route::Fused,
	}
}

/// the exact products of scheme II reduced mod each modulus, from the residue planes `ra` of A
/// (`rows = m`) and `rb` of B (`rows = n`), `rows x kpad` int8 each, K-major, 1 plane per modulus
/// (real) or 3 (complex: re, im, re + im): for modulus `moduli[l]`, the symmetric residues of the
/// real product (or of the complex product's real part) as `m x n` int8, column-major, at
/// `re + l stride`, and for complex operands (`im` given) of the imaginary part at `im + l stride`
/// (`out`, [`ResiduePlanes`]), by 3M:
/// `Re = T1 - T2`, `Im = T3 - T1 - T2` of `T1 = Ar Br^T`, `T2 = Ai Bi^T`, `T3 = (Ar + Ai)(Br + Bi)^T`.
///
/// One launch of a fused wgmma kernel for all moduli (`scheme2_residues_*`, or
/// `scheme2_residues_3m_*` with the three products of a modulus accumulated one after the other
/// in the same registers), in the chassis variant the table picks for the shape
/// ([`wgmma_config::choose`]): no INT32 leaves the SM. Any K: the kernels carry the accumulators
/// mod m every 130,944 K. Same inputs and outputs as [`unfused_residues`], byte for byte.
/// `dims`: `(m, n, kpad)`
pub(crate) fn fused_residues(
	gpu: &Gpu,
	(ra, rb): (DevPtr<i8>, DevPtr<i8>),
	dims: Shape,
	moduli: &[u32],
	out: ResiduePlanes,
	overrides: Overrides,
) -> Result<(), Error> {
	let Shape { m, n, k: kpad } = dims;
	// the kernels index K with int32 (K blocks of 128)
	if kpad > i32::MAX as usize - 128 {
		return unfused_residues(gpu, (ra, rb), dims, moduli, out);
	}
	let route = overrides.route.unwrap_or(Route3m::for_shape(m, n, kpad));
	let variant = overrides
		.variant
		.unwrap_or_else(|| residues_variant(gpu, dims, moduli.len(), out.im.map(|_| route)));
	let dev_moduli = to_device(gpu, moduli)?;
	let mods = (ptr(gpu, &dev_moduli), moduli.len());
	let products = chassis::Residues {
		v: variant,
		planes: (ra, rb),
		dims,
		moduli: mods,
	};
	let Some(im) = out.im.filter(|_| route == Route3m::ThreeLaunches) else {
		return products.run(gpu, out);
	};
	let r3 = gpu.scratch(Slot::Residues3m, moduli.len() * out.stride)?.cast::<i8>();
	for (part, dst) in [out.re, im, r3].into_iter().enumerate() {
		products.part(gpu, part, ResiduePlanes { re: dst, im: None, ..out })?;
	}
	let cfg = LaunchConfig {
		grid_dim: ((out.stride / 4).div_ceil(256).min(gpu.sm_count * 4) as u32, moduli.len() as u32, 1),
		block_dim: (256, 1, 1),
		shared_mem_bytes: 0,
	};
	launch!(gpu, "combine_3m", cfg, out.re, im, r3, out.stride as i64, mods.0)
}

/// what a caller imposes on [`fused_residues`] instead of its own choice, the chassis variant and
/// the 3M route of complex products (real ones ignore it): tests and benchmarks compare them
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Overrides {
	pub variant: Option<Variant>,
	pub route: Option<Route3m>,
}

/// the chassis variant [`wgmma_config::choose`] picks for the residue products of `planes`
/// moduli of an m x n output over `kpad`, for the kernel that runs them: the real product's,
/// whose epilogue stages its output (real operands, `route` `None`, and the three launches of a
/// complex product), or the 3M kernel's (one launch)
pub(crate) fn residues_variant(gpu: &Gpu, dims: Shape, planes: usize, route: Option<Route3m>) -> Variant {
	let staged = route != Some(Route3m::OneLaunch);
	wgmma_config::choose(dims, planes, gpu.sm_count, staged)
}

/// [`fused_residues`] the unfused way, for comparison: per modulus and K chunk of
/// `RESIDUE_CHUNK`, cuBLASLt INT8 products with INT32 out (1, or 3 for complex operands) and a
/// reduction kernel (`reduce_mod`, `reduce_3m`) into the int8 residue planes; same inputs and
/// outputs, byte for byte (`dims`: `(m, n, kpad)`)
pub(crate) fn unfused_residues(
	gpu: &Gpu,
	(ra, rb): (DevPtr<i8>, DevPtr<i8>),
	Shape { m, n, k: kpad }: Shape,
	moduli: &[u32],
	out: ResiduePlanes,
) -> Result<(), Error> {
	let mn = m * n;
	let per = if out.im.is_some() { 3 } else { 1 };
	let tmp = gpu.scratch(Slot::Int32, 4 * per * mn)?.cast::<i32>();
	for (l, &modulus) in moduli.iter().enumerate() {
		for (chunk, start) in (0..kpad).step_by(RESIDUE_CHUNK).enumerate() {
			let len = RESIDUE_CHUNK.min(kpad - start);
			for part in 0..per {
				let plane = per * l + part;
				let a = ra.add(plane * m * kpad + start);
				let b = rb.add(plane * n * kpad + start);
				let c = tmp.add(part * mn);
				Int8Gemm {
					m,
					n,
					k: len,
					a,
					lda: kpad,
					b,
					ldb: kpad,
					c,
					ldc: m,
					accumulate: false,
				}
				.run(&gpu.handles)?;
			}
			let acc = (chunk > 0) as i32;
			let re = out.re.add(l * out.stride);
			match out.im {
				None => launch!(gpu, "reduce_mod", elementwise(gpu, mn), tmp, mn as i64, modulus, re, acc)?,
				Some(res_im) => {
					let t = tmp;
					let im = res_im.add(l * out.stride);
					launch!(
						gpu,
						"reduce_3m",
						elementwise(gpu, mn),
						t,
						t.add(mn),
						t.add(2 * mn),
						mn as i64,
						modulus,
						re,
						im,
						acc
					)?
				},
			}
		}
	}
	Ok(())
}
