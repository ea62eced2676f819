//! kernel-alone timings of the memory-bound kernels of the pipeline (statistics, scheme II split,
//! CRT) beside the device's own copy bandwidth: the bandwidth table of `docs/PERF.md` (feature
//! `cuda`)

use super::device::{driver, gpu};
use super::pipeline::{self, DeviceOperand, Job, Output, alloc, pad16};
use crate::scheme2::{Crt, fast_shift};
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
	let size = (n * n * size_of::<T>()) as u64;
	let per = if T::IS_COMPLEX { 3 } else { 1 };
	let planes = (per * moduli as usize * n * pad16(n)) as u64;
	let median = |f: &mut dyn FnMut() -> Result<(), Error>| -> Result<Duration, Error> {
		g.timed(&mut *f)?;
		let mut t = (0..runs.max(1)).map(|_| g.timed(&mut *f)).collect::<Result<Vec<_>, _>>()?;
		t.sort();
		Ok(t[t.len() / 2])
	};
	let mut out = Vec::new();
	let mut record = |kernel: String, bytes: u64, f: &mut dyn FnMut() -> Result<(), Error>| -> Result<(), Error> {
		out.push(KernelTime {
			kernel,
			time: median(f)?,
			bytes,
		});
		Ok(())
	};
	let src = a.ptr(&g);
	let copy = g.scratch(19, size as usize)?;
	record("copy (cuMemcpyDtoDAsync)".into(), 2 * size, &mut || {
		// SAFETY: both ranges are `size` bytes of live device memory
		unsafe { cudarc::driver::result::memcpy_dtod_async(copy, src, size as usize, g.stream.cu_stream()) }.map_err(driver)
	})?;
	let sides = [
		(
			"rows contiguous",
			DeviceOperand {
				ptr: src,
				rows: n,
				k: n,
				rs: 1,
				cs: n as i64,
			},
		),
		(
			"k contiguous",
			DeviceOperand {
				ptr: src,
				rows: n,
				k: n,
				rs: n as i64,
				cs: 1,
			},
		),
	];
	let crt = Crt::new(moduli);
	let residues = g.scratch(20, planes as usize)?;
	for (what, op) in &sides {
		// the shifts the pipeline takes (fast scaling): realistic magnitudes for the split
		let rows = pipeline::stats::<T>(&g, op)?.rows;
		let shifts: Vec<i32> = rows.iter().map(|r| fast_shift(r.norm, crt.lambda)).collect();
		let shifts = g.stream.clone_htod(&shifts).map_err(driver)?;
		record(format!("row_stats_{} (two passes), {what}", T::NAME), 2 * size, &mut || {
			pipeline::launch_stats::<T>(&g, op).map(|_| ())
		})?;
		record(format!("split_residues_{} p={moduli}, {what}", T::NAME), size + planes, &mut || {
			pipeline::split_residues::<T>(&g, residues, op, &shifts, moduli).map(|_| ())
		})?;
	}
	let dst = g.scratch(21, size as usize)?;
	let job = Job {
		gpu: &g,
		a: sides[0].1,
		b: sides[1].1,
		out: Output {
			ptr: dst,
			ld: n,
			accumulate: false,
		},
		alpha: T::from_parts(1.0, 0.0),
		bad_rows: alloc::<i32>(&g, n)?,
		bad_cols: alloc::<i32>(&g, n)?,
	};
	let parts = if T::IS_COMPLEX { 2 } else { 1 };
	let shifts = g.stream.clone_htod(&vec![0i32; n]).map_err(driver)?;
	let res_im = T::IS_COMPLEX.then_some(residues + (moduli as usize * n * n) as u64);
	let bytes = (parts * moduli as usize * n * n) as u64 + size;
	record(format!("crt_{} p={moduli}", T::NAME), bytes, &mut || {
		pipeline::launch_crt(&job, &crt, residues, res_im, (&shifts, &shifts))
	})?;
	Ok(out)
}

/// the fused scheme I kernel alone (`scheme1_fused_p<p>_f64`, issue 5) on an `n x n x n` product of
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
	use super::scheme1_fused::{Launch, pad128};
	use crate::precision::pass_len;
	use rayon::prelude::*;
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
	let host: Vec<u8> = (0..bytes.div_ceil(1 << 16))
		.into_par_iter()
		.flat_map_iter(|chunk| {
			let mut state = (chunk as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
			(0..(1usize << 16).min(bytes - (chunk << 16))).map(move |_| {
				state ^= state << 13;
				state ^= state >> 7;
				state ^= state << 17;
				(state >> 24) as u8
			})
		})
		.collect();
	let planes = g.stream.clone_htod(&host).map_err(driver)?;
	drop(host);
	let zeros = alloc::<i32>(&g, n)?;
	let pass_chunks = pass_len(p, false) / 32;
	let passes = (kpad / 32).div_ceil(pass_chunks);
	let carry = if passes > 1 { g.scratch(22, 8 * n * n)? } else { 0 };
	let launch = Launch {
		p,
		dims: (n, n, kpad),
		planes: (pipeline::ptr(&g, &planes), pipeline::ptr(&g, &planes)),
		pass_chunks,
		shifts: (pipeline::ptr(&g, &zeros), pipeline::ptr(&g, &zeros)),
		bad: (pipeline::ptr(&g, &zeros), pipeline::ptr(&g, &zeros)),
		carry,
		dst: g.scratch(21, 8 * n * n)?,
		ldd: n,
		alpha: (1.0, 0.0),
		accumulate: false,
	};
	let run = || launch.run::<f64>(&g);
	g.timed(run)?;
	let mut t = (0..runs.max(1)).map(|_| g.timed(run)).collect::<Result<Vec<_>, _>>()?;
	t.sort();
	Ok(KernelTime {
		kernel: format!("scheme1_fused_p{p}_f64 ({passes} K passes)"),
		time: t[t.len() / 2],
		bytes: (2 * bytes + 8 * n * n) as u64,
	})
}
