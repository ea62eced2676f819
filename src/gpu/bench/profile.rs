//! kernel-alone timings: the memory-bound kernels of the pipeline (statistics, scheme II split,
//! CRT) beside the device's own copy bandwidth, and every
//! variant of the INT8 wgmma chassis beside cuBLASLt INT8 (feature `cuda`)

use crate::gpu::kernels::bound;
use crate::gpu::kernels::crt;
use crate::gpu::kernels::residues;
use crate::gpu::kernels::stats;
use crate::gpu::kernels::wgmma_config::{VARIANTS, choose};
use crate::gpu::product::job::{DeviceOperand, Job, Output, ResiduePlanes, pad16};
use crate::gpu::runtime::blas::Int8Gemm;
use crate::gpu::runtime::context::{Gpu, gpu};
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::launch;
use crate::gpu::runtime::launch::{alloc, ptr};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::schemes::scheme2;
use crate::scheme2::Crt;
use crate::shape::Shape;
use crate::{DeviceMatrix, Emulator, Error, Scalar};
use std::time::Duration;

/// one kernel's median device time and the bytes it reads and writes
#[derive(Clone, Debug)]
pub struct KernelTime {
	/// what ran, e.g. `split_residues_f64 p=15, k contiguous`
	pub kernel: String,
	/// median device time
	pub time: Duration,
	/// bytes read plus bytes written by one run
	pub bytes: u64,
}

impl KernelTime {
	/// achieved bandwidth, GB/s
	pub fn bandwidth(&self) -> f64 {
		self.bytes as f64 / self.time.as_secs_f64() / 1e9
	}
}

/// times, with device events (medians of `runs`), on the square device matrix `a`: a
/// device-to-device copy of `a` (the reference bandwidth), the statistics kernel and the scheme II
/// split for `moduli` moduli (with the shifts of fast scaling, as the pipeline splits) with `a` as
/// the left operand (rows contiguous) and as the right operand (k contiguous), and the CRT of
/// `moduli` residue planes into an `n x n` output
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, profile};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let a = emu.upload(faer::Mat::<f64>::from_fn(4096, 4096, |i, j| (i + 2 * j) as f64).as_ref())?;
/// for k in profile::memory_kernels(&emu, &a, 15, 20)? {
///     println!("{}: {:?}, {:.0} GB/s", k.kernel, k.time, k.bandwidth());
/// }
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn memory_kernels<T: Scalar>(emu: &Emulator, a: &DeviceMatrix<T>, moduli: u32, runs: usize) -> Result<Vec<KernelTime>, Error> {
	let (g, [lhs, rhs]) = square_operands(emu, a)?;
	let n = lhs.rows;
	let size = (n * n * size_of::<T>()) as u64;
	let per = if T::IS_COMPLEX { 3 } else { 1 };
	let planes = (per * moduli as usize * n * pad16(n)) as u64;
	let mut timings = Timings::new(&g, runs);
	let src = lhs.ptr;
	let copy = g.scratch(Slot::Bench(3), size as usize)?;
	timings.record("copy (cuMemcpyDtoDAsync)".into(), 2 * size, &mut || {
		// SAFETY: both ranges are `size` bytes of live device memory
		unsafe { cudarc::driver::result::memcpy_dtod_async(copy.addr(), src.addr(), size as usize, g.stream.cu_stream()) }.map_err(driver)
	})?;
	let sides = [("rows contiguous", lhs), ("k contiguous", rhs)];
	let crt = Crt::new(moduli);
	let residues = g.scratch(Slot::Bench(4), planes as usize)?.cast::<i8>();
	for (what, op) in &sides {
		// the shifts the pipeline takes (fast scaling, computed on the device from the statistics):
		// realistic magnitudes for the split
		let region = stats::launch_stats::<T>(&g, &[op])?[0];
		let (shifts, _) = scheme2::launch_fast_shifts(&g, (region, region), crt.lambda)?;
		timings.record(format!("row_stats_{} (two passes), {what}", T::NAME), 2 * size, &mut || {
			stats::launch_stats::<T>(&g, &[op]).map(|_| ())
		})?;
		timings.record(format!("split_residues_{} p={moduli}, {what}", T::NAME), size + planes, &mut || {
			scheme2::split_residues::<T>(&g, residues, op, shifts, moduli).map(|_| ())
		})?;
	}
	// as a product takes them: A's rows (contiguous) and B's columns (K contiguous) in one launch
	timings.record(
		format!("row_stats_{} (two passes), both orientations in one launch", T::NAME),
		4 * size,
		&mut || stats::launch_stats::<T>(&g, &[&sides[0].1, &sides[1].1]).map(|_| ()),
	)?;
	let dst = g.scratch(Slot::Bench(5), size as usize)?.cast::<T>();
	let no_flags = alloc::<i32>(&g, n)?;
	let job = Job {
		gpu: &g,
		a: sides[0].1,
		b: sides[1].1,
		out: Output {
			ptr: dst,
			ld: n,
			accumulate: false,
			remainder: None,
			triangle: None,
		},
		alpha: T::from_parts(1.0, 0.0),
		bad_rows: ptr(&g, &no_flags),
		bad_cols: ptr(&g, &no_flags),
	};
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	let shifts = g.stream.clone_htod(&vec![0i32; n]).map_err(driver)?;
	let stride = ResiduePlanes::stride(n, n);
	let residue_planes = ResiduePlanes {
		re: residues,
		im: T::IS_COMPLEX.then_some(residues.add(moduli as usize * stride)),
		stride,
		triangle: None,
	};
	let bytes = (parts * moduli as usize * n * n) as u64 + size;
	timings.record(format!("crt_{} p={moduli}", T::NAME), bytes, &mut || {
		crt::launch_crt(&job, &crt, residue_planes, (ptr(&g, &shifts), ptr(&g, &shifts)))
	})?;
	Ok(timings.rows)
}

/// the error bound's stages alone, with device events (medians of `runs`), on the square device
/// matrix `a` as both operands (`A` rows contiguous, `B` K contiguous, fast scaling): the inner
/// balancing's exponent ranges (their downloads and the shifts included), the statistics, the window magnitudes of each operand (`split_window`), their exact INT8 products
/// (cuBLASLt), the per-row maxima (`bound_maxima`), and the whole bound as a product computes it
/// (its host work and transfers included, the statistics not), then as a rank-k update computes
/// the bound of its Gram product `A Aᴴ` from `A` alone
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, profile};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let a = emu.upload(faer::Mat::<f64>::from_fn(4096, 4096, |i, j| (i + 2 * j) as f64).as_ref())?;
/// for k in profile::bound_kernels(&emu, &a, 20)? {
///     println!("{}: {:?}", k.kernel, k.time);
/// }
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn bound_kernels<T: Scalar>(emu: &Emulator, a: &DeviceMatrix<T>, runs: usize) -> Result<Vec<KernelTime>, Error> {
	let (g, [lhs, rhs]) = square_operands(emu, a)?;
	let n = lhs.rows;
	let size = (n * n * size_of::<T>()) as u64;
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	let mut timings = Timings::new(&g, runs);
	timings.record(
		format!("balance: inner exponent ranges of both operands ({})", T::NAME),
		2 * size,
		&mut || crate::gpu::kernels::balance::inner_balance::<T>(&g, (&lhs, &rhs)).map(|_| ()),
	)?;
	let regions = stats::launch_stats::<T>(&g, &[&lhs, &rhs])?;
	let stats = stats::download_stats(&g, &regions)?;
	timings.record(format!("bound: statistics of both operands ({})", T::NAME), 4 * size, &mut || {
		stats::launch_stats::<T>(&g, &[&lhs, &rhs]).map(|_| ())
	})?;
	let bits = bound::window_bits::<T>(n);
	let window_bytes = size + (parts * n * pad16(n)) as u64;
	let (mut qa, mut qb) = (DevPtr::NULL, DevPtr::NULL);
	timings.record(format!("bound: split_window_{}, A", T::NAME), window_bytes, &mut || {
		qa = bound::window::<T>(&g, Slot::WindowA, &lhs, &stats[0], bits)?;
		Ok(())
	})?;
	timings.record(format!("bound: split_window_{}, B", T::NAME), window_bytes, &mut || {
		qb = bound::window::<T>(&g, Slot::WindowB, &rhs, &stats[1], bits)?;
		Ok(())
	})?;
	let mut l = (DevPtr::NULL, DevPtr::NULL);
	timings.record(
		format!("bound: magnitude products ({} INT8 GEMMs)", parts * parts),
		(4 * parts * n * n) as u64,
		&mut || {
			l = bound::magnitude_products::<T>(&g, (qa, qb), Shape::new(n, n, pad16(n)), false)?;
			Ok(())
		},
	)?;
	let zero_sides = alloc::<u8>(&g, 56 * n)?;
	timings.record("bound: bound_maxima".into(), (4 * parts * n * n) as u64, &mut || {
		let sides = (ptr(&g, &zero_sides).cast(), ptr(&g, &zero_sides).cast());
		bound::launch_maxima(&g, l, (n, n), sides, (bits, -1075)).map(|_| ())
	})?;
	timings.record(format!("bound: whole, as a {} product computes it", T::NAME), 0, &mut || {
		bound::bound::<T>(&g, (&lhs, &rhs), (&stats[0], &stats[1]), None, T::MANTISSA_BITS).map(|_| ())
	})?;
	timings.record(
		format!("bound: whole, of the Gram product A Aᴴ ({}), from A alone", T::NAME),
		0,
		&mut || bound::gram_bound::<T>(&g, &lhs, &stats[0], None, T::MANTISSA_BITS).map(|_| ()),
	)?;
	Ok(timings.rows)
}

/// the page-locked transfer rates of host products' staging, in bytes per second: host to device
/// and device to host, each from 16 DMAs of one staging buffer of `emu` (in the same process as
/// the products it is compared with)
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, profile};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let (h2d, d2h) = profile::transfer_rates(&emu)?;
/// println!("{:.1} GB/s in, {:.1} GB/s out", h2d / 1e9, d2h / 1e9);
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn transfer_rates(emu: &Emulator) -> Result<(f64, f64), Error> {
	let _ = emu.zeros_on_device::<f64>(0, 0)?; // the emulator must be on the GPU
	let (g, chunk, copies) = (gpu()?, emu.staging_buffers(), 16);
	let device = g.scratch(crate::gpu::runtime::slot::Slot::Probe, chunk)?;
	let rate = |to_device: bool| -> Result<f64, Error> {
		let mut buffers = g.staging.borrow_mut();
		let t = g.timed(|| crate::gpu::runtime::staging::enqueue_copies(&mut buffers, &g.stream, device, (chunk, copies), to_device))?;
		Ok((copies * chunk) as f64 / t.as_secs_f64())
	};
	Ok((rate(true)?, rate(false)?))
}

/// the GPU, and the square device matrix `a` as the left operand of a product (rows contiguous)
/// and as the right one (K contiguous)
fn square_operands<T: Scalar>(
	emu: &Emulator,
	a: &DeviceMatrix<T>,
) -> Result<(crate::gpu::runtime::context::GpuGuard, [DeviceOperand<T>; 2]), Error> {
	let _ = emu.zeros_on_device::<T>(0, 0)?; // the emulator must be on the GPU
	let n = a.nrows();
	if a.ncols() != n {
		return Err(Error::ShapeMismatch {
			lhs: (n, a.ncols()),
			rhs: (n, a.ncols()),
			dst: None,
		});
	}
	let g = gpu()?;
	let lhs = DeviceOperand::left(a.ptr(&g), (n, n), n);
	let rhs = DeviceOperand::right(a.ptr(&g), (n, n), n);
	Ok((g, [lhs, rhs]))
}

/// kernel timings: medians of device-event timings, one row per kernel
struct Timings<'g> {
	g: &'g Gpu,
	runs: usize,
	rows: Vec<KernelTime>,
}

impl<'g> Timings<'g> {
	fn new(g: &'g Gpu, runs: usize) -> Self {
		Timings { g, runs, rows: Vec::new() }
	}

	/// the median of `runs` timings of `f` (after one warm-up), as `kernel` moving `bytes`
	fn record(&mut self, kernel: String, bytes: u64, f: &mut dyn FnMut() -> Result<(), Error>) -> Result<(), Error> {
		self.g.timed(&mut *f)?;
		let mut t = (0..self.runs.max(1))
			.map(|_| self.g.timed(&mut *f))
			.collect::<Result<Vec<_>, _>>()?;
		t.sort();
		self.rows.push(KernelTime {
			kernel,
			time: t[t.len() / 2],
			bytes,
		});
		Ok(())
	}
}

/// one row of [`chassis`]: a kernel's median device time on an n x n x n product
#[derive(Clone, Debug)]
pub struct ChassisTime {
	/// what ran: `i8 cuBLASLt INT8`, `i8 chassis <variant>` (the plain INT8 GEMM of a chassis
	/// variant, e.g. `i8 chassis bn256_s4_c2`), `f64 chassis <variant> SchemeII p=<moduli>`
	/// (the fused real scheme II product of the variant on `moduli` residue planes) or
	/// `c64 3M <route> SchemeII p=<moduli>` (the complex products by a route, see
	/// [`chassis`])
	pub label: String,
	/// whether the variant table picks this variant for the row's product (for the 3M rows:
	/// whether the pipeline takes this route)
	pub picked: bool,
	/// median device time
	pub time: Duration,
	/// INT8 operations of one run: 2 n^3 per product (one per modulus for scheme II)
	pub ops: f64,
}

impl ChassisTime {
	/// INT8 TOPS
	pub fn tops(&self) -> f64 {
		self.ops / self.time.as_secs_f64() / 1e12
	}
}

/// `len` pseudo-random bytes (xorshift, 64 KiB chunks generated in parallel, each seeded from
/// `seed` and its index)
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
	use rayon::prelude::*;
	(0..len.div_ceil(1 << 16))
		.into_par_iter()
		.flat_map_iter(|chunk| {
			let mut state = (seed.wrapping_mul(0x1_0000_0001) + chunk as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
			(0..(1usize << 16).min(len - (chunk << 16))).map(move |_| {
				state ^= state << 13;
				state ^= state >> 7;
				state ^= state << 17;
				(state >> 24) as u8
			})
		})
		.collect()
}

/// `len` random bytes, uploaded to `dst` and copied to the `copies - 1` ranges after it
fn random_planes(g: &Gpu, dst: DevPtr<u8>, len: usize, copies: usize, seed: u64) -> Result<(), Error> {
	let bytes = random_bytes(len, seed);
	// SAFETY: `dst` holds `copies * len` bytes of live device memory
	unsafe { cudarc::driver::result::memcpy_htod_async(dst.addr(), &bytes, g.stream.cu_stream()) }.map_err(driver)?;
	for c in 1..copies {
		let to = dst.add(c * len);
		// SAFETY: both ranges lie in the `copies * len` bytes at `dst`
		unsafe { cudarc::driver::result::memcpy_dtod_async(to.addr(), dst.addr(), len, g.stream.cu_stream()) }.map_err(driver)?;
	}
	Ok(())
}

/// times, with device events (medians of `runs` after one warm-up), on random n x n x n int8
/// operands: cuBLASLt INT8 (INT32 out), every variant of the chassis as the plain INT8 GEMM
/// (INT32 out), every variant's fused real scheme II product of `moduli` moduli (int8 residues
/// out), and the complex products of `moduli` moduli by each 3M route; only the rows whose label `select` accepts (the cuBLASLt row, the reference, whenever
/// another row is selected). The labels are those of [`ChassisTime::label`].
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, profile};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// for row in profile::chassis(&emu, 8192, 15, 30, &|_| true)? {
///     println!("{}: {:?}, {:.0} TOPS", row.label, row.time, row.tops());
/// }
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn chassis(emu: &Emulator, n: usize, moduli: u32, runs: usize, select: &dyn Fn(&str) -> bool) -> Result<Vec<ChassisTime>, Error> {
	let _ = emu.zeros_on_device::<f64>(0, 0)?; // the emulator must be on the GPU
	let p = moduli as usize;
	let plain = |v: &str| format!("i8 chassis {v}");
	let fused = |v: &str| format!("f64 chassis {v} SchemeII p={moduli}");
	let names: Vec<String> = VARIANTS.iter().map(|v| v.name()).collect();
	let routes_selected = ["one launch", "three launches", "unfused"]
		.iter()
		.any(|r| select(&format!("c64 3M {r} SchemeII p={moduli}")));
	if !routes_selected && !names.iter().any(|v| select(&plain(v)) || select(&fused(v))) {
		return Ok(Vec::new());
	}
	let g = gpu()?;
	let k = pad16(n);
	let (a, b) = (g.scratch(Slot::Bench(7), p * n * k)?, g.scratch(Slot::Bench(8), p * n * k)?);
	let c = g.scratch(Slot::Bench(9), (4 * n * n).max(p * n * n))?;
	random_planes(&g, a, n * k, p, 1)?;
	random_planes(&g, b, n * k, p, 2)?;
	let median = |f: &mut dyn FnMut() -> Result<(), Error>| -> Result<Duration, Error> {
		g.timed(&mut *f)?;
		let mut t = (0..runs.max(1)).map(|_| g.timed(&mut *f)).collect::<Result<Vec<_>, _>>()?;
		t.sort();
		Ok(t[t.len() / 2])
	};
	let ops = 2.0 * (n as f64).powi(3);
	let lt = Int8Gemm {
		m: n,
		n,
		k,
		a: a.cast(),
		lda: k,
		b: b.cast(),
		ldb: k,
		c: c.cast(),
		ldc: n,
		accumulate: false,
	};
	let shape = Shape::new(n, n, k);
	let mut rows = vec![ChassisTime {
		label: "i8 cuBLASLt INT8".into(),
		picked: false,
		time: median(&mut || lt.run(&g.handles))?,
		ops,
	}];
	let crt_moduli = crate::scheme2::Crt::new(moduli).moduli;
	for (v, name) in VARIANTS.into_iter().zip(&names) {
		if select(&plain(name)) {
			rows.push(ChassisTime {
				label: plain(name),
				picked: choose(shape, 1, g.sm_count, false) == v,
				time: median(&mut || crate::gpu::kernels::chassis::igemm(&g, v, (a.cast(), b.cast(), c.cast()), shape))?,
				ops,
			});
		}
		if select(&fused(name)) {
			let time = median(&mut || {
				let out = ResiduePlanes {
					re: c.cast(),
					im: None,
					stride: n * n,
					triangle: None,
				};
				let overrides = residues::Overrides {
					variant: Some(v),
					route: None,
				};
				residues::fused_residues(&g, (a.cast(), b.cast()), shape, &crt_moduli, out, overrides)
			})?;
			rows.push(ChassisTime {
				label: fused(name),
				picked: residues::residues_variant(&g, shape, p, None) == v,
				time,
				ops: p as f64 * ops,
			});
		}
	}
	rows.extend(complex_routes(&g, n, &crt_moduli, &median, select)?);
	Ok(rows)
}

/// a median device time of a closure (warm-up, then runs)
type Median<'a> = dyn Fn(&mut dyn FnMut() -> Result<(), Error>) -> Result<Duration, Error> + 'a;

/// the rows of [`chassis`] for the complex scheme II products (3M) of `moduli` on random complex
/// residue planes (re, im, re + im per modulus), by each route: `c64 3M one launch`, `c64 3M
/// three launches` (fused, [`residues::Route3m`]) and `c64 3M unfused` (cuBLASLt INT32 products and
/// reduce_3m), each `SchemeII p=<moduli>`, the table's variant
fn complex_routes(
	g: &Gpu,
	n: usize,
	moduli: &[u32],
	median: &Median<'_>,
	select: &dyn Fn(&str) -> bool,
) -> Result<Vec<ChassisTime>, Error> {
	use residues::Route3m;
	let p = moduli.len();
	let label = |route: &str| format!("c64 3M {route} SchemeII p={p}");
	let routes = [
		("one launch", Some(Route3m::OneLaunch)),
		("three launches", Some(Route3m::ThreeLaunches)),
		("unfused", None),
	];
	if !routes.iter().any(|(r, _)| select(&label(r))) {
		return Ok(Vec::new());
	}
	let k = pad16(n);
	let (a, b) = (
		g.scratch(Slot::Bench(10), 3 * p * n * k)?.cast::<i8>(),
		g.scratch(Slot::Bench(11), 3 * p * n * k)?.cast::<i8>(),
	);
	let shape = Shape::new(n, n, k);
	random_planes(g, a.cast(), n * k, 3 * p, 3)?;
	random_planes(g, b.cast(), n * k, 3 * p, 4)?;
	let stride = ResiduePlanes::stride(n, n);
	let out = ResiduePlanes {
		re: g.scratch(Slot::Bench(12), p * stride)?.cast(),
		im: Some(g.scratch(Slot::Bench(13), p * stride)?.cast()),
		stride,
		triangle: None,
	};
	let mut rows = Vec::new();
	for (name, route) in routes {
		if !select(&label(name)) {
			continue;
		}
		let time = median(&mut || match route {
			Some(route) => {
				let overrides = residues::Overrides {
					variant: None,
					route: Some(route),
				};
				residues::fused_residues(g, (a, b), shape, moduli, out, overrides)
			},
			None => residues::unfused_residues(g, (a, b), shape, moduli, out),
		})?;
		rows.push(ChassisTime {
			label: label(name),
			picked: route.is_some_and(|r| r == Route3m::for_shape(n, n, k)),
			time,
			ops: 3.0 * p as f64 * 2.0 * (n as f64).powi(3),
		});
	}
	Ok(rows)
}

/// the fused scheme I kernel alone (`scheme1_fused_p<p>_f64`) on an `n x n x n` product of
/// random interleaved digit planes (one buffer as both operands; split excluded): the median
/// device time of `runs` runs after a warm-up; the INT8 rate is `p(p+1)/2 2 n^3 / time`
///
/// # example
/// ```no_run
/// use emugemm::{Backend, Emulator, profile};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let k = profile::fused_scheme1_kernel(&emu, 4096, 4, 20)?;
/// println!("{}: {:?}, {:.0} INT8 TOPS", k.kernel, k.time, 10.0 * 2.0 * 4096f64.powi(3) / k.time.as_secs_f64() / 1e12);
/// # Ok::<(), emugemm::Error>(())
/// ```
pub fn fused_scheme1_kernel(emu: &Emulator, n: usize, p: u32, runs: usize) -> Result<KernelTime, Error> {
	use crate::gpu::kernels::digits::pad128;
	use crate::gpu::schemes::scheme1_fused::Fused;
	use crate::precision::pass_len;
	let _ = emu.zeros_on_device::<f64>(0, 0)?; // the emulator must be on the GPU
	if !(1..=crate::scheme1::MAX_SLICES).contains(&p) {
		return Err(Error::InvalidPrecision {
			precision: crate::Precision::SchemeI { slices: p },
			reason: "scheme I takes 1..=8 slices",
		});
	}
	let g = gpu()?;
	let kpad = pad128(n);
	let bytes = n * p as usize * kpad;
	let host = random_bytes(bytes, 0);
	let planes = g.stream.clone_htod(&host).map_err(driver)?;
	drop(host);
	let zeros = alloc::<i32>(&g, n)?;
	let pass_chunks = pass_len(p, false) / 32;
	let passes = (kpad / 32).div_ceil(pass_chunks);
	let carry = if passes > 1 {
		g.scratch(Slot::Bench(6), 8 * n * n)?.cast()
	} else {
		DevPtr::NULL
	};
	let launch = Fused {
		p,
		dims: Shape::new(n, n, kpad),
		planes: (launch::ptr(&g, &planes).cast(), launch::ptr(&g, &planes).cast()),
		pass_chunks,
		shifts: (launch::ptr(&g, &zeros), launch::ptr(&g, &zeros)),
		bad: (launch::ptr(&g, &zeros), launch::ptr(&g, &zeros)),
		carry,
		dst: g.scratch(Slot::Bench(5), 8 * n * n)?.cast::<f64>(),
		ldd: n,
		alpha: (1.0, 0.0),
		accumulate: false,
	};
	let run = || launch.run(&g);
	g.timed(run)?;
	let mut t = (0..runs.max(1)).map(|_| g.timed(run)).collect::<Result<Vec<_>, _>>()?;
	t.sort();
	Ok(KernelTime {
		kernel: format!("scheme1_fused_p{p}_f64 ({passes} K passes)"),
		time: t[t.len() / 2],
		bytes: (2 * bytes + 8 * n * n) as u64,
	})
}
