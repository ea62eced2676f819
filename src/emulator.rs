//! the explicit context: backend choice, the product itself, and the report of the last product

use crate::policy::{Choice, PolicyInput};
use crate::precision::validate;
use crate::stats::row_stats;
use crate::{Error, Plan, Precision, Scalar, Scaling};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

mod emulation;
mod report;

pub(crate) use emulation::combine;
pub(crate) use report::publish;
pub use report::{PhaseTimes, Report, Route, last_report};

/// where the products run
///
/// # example
/// ```
/// use emugemm::{Backend, Emulator};
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// assert_eq!(emu.backend(), Backend::CpuEmulation);
/// // `Auto` picks the GPU when one is usable, otherwise faer's native product
/// assert_ne!(Emulator::new().unwrap().backend(), Backend::Auto);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Backend {
	/// the GPU when a usable one is present, otherwise [`Backend::Native`] (said once through `log`)
	#[default]
	Auto,
	/// faer's native product (no emulation): the fastest correct answer on a CPU (accumulated in
	/// `f64` for `f32`/`c32` outputs at a precision above FP32 level, which an FP32 product does
	/// not keep)
	Native,
	/// the emulation on the CPU, bit for bit what the GPU computes: the oracle, and a way to get
	/// the GPU's exact bits without a GPU
	CpuEmulation,
	/// the emulation on an NVIDIA Hopper GPU (feature `cuda`)
	Gpu,
}

/// the emulation context: a backend, the scaling rule of scheme II, and the last report
///
/// # example
/// ```
/// use emugemm::{Accum, Backend, Emulator, Precision};
/// let a = emugemm::testing::random_matrix::<f64>(30, 20, 1.0, 7);
/// let b = emugemm::testing::random_matrix::<f64>(20, 10, 1.0, 8);
/// let mut c = faer::Mat::<f64>::zeros(30, 10);
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// // c = 2 a b
/// emu.matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 2.0, Precision::F64).unwrap();
/// let native = &a * &b * faer::Scale(2.0);
/// assert!((&c - &native).norm_max() <= 1e-13 * native.norm_max());
/// ```
pub struct Emulator {
	backend: Backend,
	settings: Settings,
	last: Mutex<Option<Report>>,
}

/// `EMUGEMM_HOST_ROUTING`: `on` or `off` (see [`Emulator::with_host_routing`]), `None` when unset
/// or unreadable
fn host_routing_from_env() -> Option<bool> {
	match std::env::var("EMUGEMM_HOST_ROUTING").ok()?.to_ascii_lowercase().as_str() {
		"on" | "1" | "true" => Some(true),
		"off" | "0" | "false" => Some(false),
		other => {
			log::warn!("emugemm: EMUGEMM_HOST_ROUTING={other} is neither on nor off; ignored");
			None
		},
	}
}

/// the default size of each page-locked staging buffer: 24 MiB, 192 MiB in all (two sets of four)
pub(crate) const DEFAULT_STAGING: usize = 24 << 20;

/// the GPUs a context's products run on, by ordinal, in order (at most [`Devices::MAX`]); an
/// ordinal may repeat, for one pipeline per repetition on that GPU
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Devices {
	ordinals: [u16; Devices::MAX],
	len: usize,
}

impl Devices {
	pub const MAX: usize = 8;

	/// GPU 0 alone
	pub const FIRST: Devices = Devices {
		ordinals: [0; Devices::MAX],
		len: 1,
	};

	/// `ordinals`, where there are 1 to [`Devices::MAX`] of them, each below 65536
	pub fn new(ordinals: &[usize]) -> Option<Devices> {
		if ordinals.is_empty() || ordinals.len() > Devices::MAX {
			return None;
		}
		let mut set = Devices {
			ordinals: [0; Devices::MAX],
			len: ordinals.len(),
		};
		for (slot, &o) in set.ordinals.iter_mut().zip(ordinals) {
			*slot = u16::try_from(o).ok()?;
		}
		Some(set)
	}

	pub fn ordinals(&self) -> impl Iterator<Item = usize> + '_ {
		self.ordinals[..self.len].iter().map(|&o| usize::from(o))
	}
}

/// a context's settings that the policy and the pipelines read
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
	pub scaling: Scaling,
	pub fused: bool,
	pub native_candidate: bool,
	/// the size of each page-locked staging buffer of host products on the GPU
	pub staging_bytes: usize,
	/// whether host products at target precisions may run on the host's cores where that is
	/// predicted faster than the GPU
	pub host_routing: bool,
	/// the device memory a host product on the GPU may take before it runs out of core, tiled
	/// (`None`: 90% of the GPU's memory)
	pub device_memory: Option<usize>,
	/// the GPUs host products run on
	pub devices: Devices,
}

impl Emulator {
	/// a context on [`Backend::Auto`]
	pub fn new() -> Result<Self, Error> {
		Self::with_backend(Backend::Auto)
	}

	/// a context on `backend`; [`Backend::Auto`] is resolved here, once
	pub fn with_backend(backend: Backend) -> Result<Self, Error> {
		let auto = backend == Backend::Auto;
		let backend = match backend {
			Backend::Auto => match crate::gpu::probe() {
				Ok(()) => Backend::Gpu,
				Err(reason) => {
					log::info!("emugemm: no usable GPU ({reason}); products are computed natively with faer");
					Backend::Native
				},
			},
			Backend::Gpu => {
				crate::gpu::probe().map_err(|reason| Error::BackendUnavailable { backend, reason })?;
				Backend::Gpu
			},
			other => other,
		};
		Ok(Emulator {
			backend,
			settings: Settings {
				scaling: Scaling::Fast,
				fused: true,
				native_candidate: true,
				staging_bytes: DEFAULT_STAGING,
				host_routing: auto && host_routing_from_env().unwrap_or(true),
				device_memory: None,
				devices: Devices::FIRST,
			},
			last: Mutex::new(None),
		})
	}

	/// the same context with another scheme II scaling rule
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Scaling};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_scaling(Scaling::Accurate);
	/// assert_eq!(emu.scaling(), Scaling::Accurate);
	/// ```
	pub fn with_scaling(mut self, scaling: Scaling) -> Self {
		self.settings.scaling = scaling;
		self
	}

	/// the same context with the fused GPU products on (the default) or off: off, the scheme II
	/// products go through cuBLASLt (INT32 out) and separate reduction kernels, and the scheme I
	/// products through cuBLASLt (one INT32 plane per diagonal and pass) and a separate
	/// shift-reduce kernel, the unfused pipeline, for comparisons; the results are the same bit
	/// for bit. On, complex scheme II products with K above 8,192 or more than 8192 x 8192 entries
	/// run their three products in three launches of the real kernel instead of one
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_fused_products(false);
	/// assert!(!emu.fused_products());
	/// ```
	pub fn with_fused_products(mut self, fused: bool) -> Self {
		self.settings.fused = fused;
		self
	}

	/// whether the GPU products are fused (see [`Emulator::with_fused_products`])
	pub fn fused_products(&self) -> bool {
		self.settings.fused
	}

	/// the same context with the native product competing with the emulated plans of a target
	/// precision by predicted time (on, the default), or computing only the products that no
	/// emulated plan certifies (off: for tests and comparisons of the emulation itself). On, small
	/// products, and `Tf32` products of `f32`/`c32` operands (a TF32 GEMM on the GPU), go native
	/// where the native product is predicted faster
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision, Scheme};
	/// let a = emugemm::testing::random_matrix::<f64>(32, 32, 1.0, 1);
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
	/// // 32 x 32 x 32: the native product is faster than any emulation
	/// assert_eq!(emu.plan(a.as_ref(), a.as_ref(), Precision::F64).unwrap().scheme, Scheme::Native);
	/// let emulating = emu.with_native_candidate(false);
	/// assert!(!emulating.native_candidate());
	/// assert_ne!(emulating.plan(a.as_ref(), a.as_ref(), Precision::F64).unwrap().scheme, Scheme::Native);
	/// ```
	pub fn with_native_candidate(mut self, native_candidate: bool) -> Self {
		self.settings.native_candidate = native_candidate;
		self
	}

	/// whether the native product competes with the emulated plans by time (see
	/// [`Emulator::with_native_candidate`])
	pub fn native_candidate(&self) -> bool {
		self.settings.native_candidate
	}

	/// the same context with staging buffers of `bytes` each (default 24 MiB): host matrices go to
	/// and from the GPU in chunks of this size, through two sets of four page-locked buffers (one
	/// for uploads, one for the output tiles that download while later tiles compute) that the
	/// host's copies and the DMAs take turns on, so that `8 bytes` of page-locked memory is all a product
	/// of any size needs (at least one element a chunk)
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_staging_buffers(8 << 20);
	/// assert_eq!(emu.staging_buffers(), 8 << 20);
	/// ```
	pub fn with_staging_buffers(mut self, bytes: usize) -> Self {
		self.settings.staging_bytes = bytes.max(1);
		self
	}

	/// the size of each staging buffer (see [`Emulator::with_staging_buffers`])
	pub fn staging_buffers(&self) -> usize {
		self.settings.staging_bytes
	}

	/// the same context with at most `bytes` of device memory for each host product on the GPU
	/// (default: 90% of the GPU's memory). A product whose operands, result and working planes
	/// need more runs out of core: tile by tile of the output, panels of `A` and `B` streamed
	/// through the device, with the plan and the scaling decided once for the whole product, so
	/// that its entries are those of the in-core product (see [`Report::tiles`]). Device
	/// matrices ([`crate::DeviceMatrix`]) always compute in core
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_device_memory(1 << 30);
	/// assert_eq!(emu.device_memory(), Some(1 << 30));
	/// ```
	pub fn with_device_memory(mut self, bytes: usize) -> Self {
		self.settings.device_memory = Some(bytes);
		self
	}

	/// a context on the GPUs `ordinals` of this host ([`Backend::Gpu`]): a product splits its
	/// output by rows over them, each GPU computing its rows with the same pipeline, the plan and
	/// the scaling decided once for the whole product, so that the result is the one GPU's bit for
	/// bit (but for rows the bound leaves native, which cuBLAS computes per tile). A host operand
	/// that every GPU needs (`B`) crosses PCIe once, a piece of it over each GPU's link, and the
	/// GPUs copy the pieces from each other (over NVLink where they are joined by it). Device
	/// matrices ([`Emulator::upload`]) are split by rows over the GPUs. An ordinal may repeat: it
	/// then runs one pipeline per repetition (which exercises the split on a machine with one GPU)
	///
	/// # example
	/// ```no_run
	/// use emugemm::{EmuMatMul, Emulator, Precision};
	/// let emu = Emulator::on_gpus(&[0, 1])?;
	/// let a = faer::Mat::<f64>::identity(4096, 4096);
	/// let c = a.emu_mul_with(&emu, &a, Precision::F64)?;
	/// assert_eq!(emu.gpus(), vec![0, 1]);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn on_gpus(ordinals: &[usize]) -> Result<Self, Error> {
		let devices = Devices::new(ordinals).ok_or_else(|| Error::BackendUnavailable {
			backend: Backend::Gpu,
			reason: format!("a context takes 1 to {} GPU ordinals, not {ordinals:?}", Devices::MAX),
		})?;
		for ordinal in devices.ordinals() {
			crate::gpu::probe_on(ordinal).map_err(|reason| Error::BackendUnavailable {
				backend: Backend::Gpu,
				reason: format!("GPU {ordinal}: {reason}"),
			})?;
		}
		crate::gpu::connect(ordinals)?;
		let mut emu = Self::with_backend(Backend::Gpu)?;
		emu.settings.devices = devices;
		Ok(emu)
	}

	/// the GPUs host products run on, by ordinal (see [`Emulator::on_gpus`]; `[0]` for other
	/// contexts)
	pub fn gpus(&self) -> Vec<usize> {
		self.settings.devices.ordinals().collect()
	}

	/// the device memory a host product on the GPU may take, where set (see
	/// [`Emulator::with_device_memory`])
	pub fn device_memory(&self) -> Option<usize> {
		self.settings.device_memory
	}

	/// the same context with the routing of host products on or off: on (the default of contexts
	/// made with [`Backend::Auto`], unless the environment variable `EMUGEMM_HOST_ROUTING` is
	/// `off`), a host product at a target precision runs on the host's cores, natively, where that
	/// is predicted faster than the GPU with its transfers (small products, and those whose
	/// transfers outweigh their work), and the report gives both predictions
	/// ([`Report::host_routing`]); off (the default of [`Backend::Gpu`], or
	/// `EMUGEMM_HOST_ROUTING=on` to turn it on for `Auto`), every product runs on the backend.
	/// Explicit plans always run on the backend
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_host_routing(true);
	/// assert!(emu.host_routing());
	/// ```
	pub fn with_host_routing(mut self, on: bool) -> Self {
		self.settings.host_routing = on;
		self
	}

	/// whether host products may run on the host's cores (see [`Emulator::with_host_routing`])
	pub fn host_routing(&self) -> bool {
		self.settings.host_routing
	}

	/// the settings the policy and the pipelines read
	pub(crate) fn settings(&self) -> Settings {
		self.settings
	}

	/// the backend this context runs on (never [`Backend::Auto`])
	pub fn backend(&self) -> Backend {
		self.backend
	}

	/// the scheme II scaling rule
	pub fn scaling(&self) -> Scaling {
		self.settings.scaling
	}

	/// the report of this context's last product
	pub fn last_report(&self) -> Option<Report> {
		self.last.lock().expect("report lock").clone()
	}

	/// the shared context of [`crate::EmuMatMul`]
	pub(crate) fn global() -> &'static Emulator {
		static GLOBAL: OnceLock<Emulator> = OnceLock::new();
		GLOBAL.get_or_init(|| Emulator::new().expect("Backend::Auto always resolves"))
	}

	/// the plan this context would run for `lhs * rhs` at `precision`
	///
	/// For a target precision this computes the error bound on the CPU, on every backend (one
	/// exact integer product of the operands' window magnitudes, `m n k` operations; the GPU
	/// computes the same bound, bit for bit, when it runs the product)
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision, Scheme};
	/// let a = emugemm::testing::random_matrix::<f32>(64, 64, 0.5, 1);
	/// // the emulation even where the native product is faster, as here
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(false);
	/// let plan = emu.plan(a.as_ref(), a.as_ref(), Precision::Tf32).unwrap();
	/// assert!(plan.predicted_bits >= 11.0); // the target of `Tf32`
	/// // an explicit plan is taken as given
	/// let four = emu.plan(a.as_ref(), a.as_ref(), Precision::SchemeI { slices: 4 }).unwrap();
	/// assert_eq!(four.scheme, Scheme::SchemeI { slices: 4 });
	/// ```
	pub fn plan<T: Scalar>(&self, lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, precision: Precision) -> Result<Plan, Error> {
		check_shapes(lhs, rhs, None)?;
		validate::<T>(precision)?;
		let shape = (lhs.nrows(), rhs.ncols(), lhs.ncols());
		if self.goes_native::<T>(shape, precision) {
			return Ok(Plan::native(shape.0));
		}
		Ok(self.prepare(lhs, rhs, precision).choice.plan)
	}

	/// the plans the policy weighs for `lhs * rhs` at a target `precision`, cheapest first (the
	/// first is the plan [`Emulator::plan`] gives): the emulated plans whose certified bits meet the
	/// target on all but at most an eighth of the rows of the product, and the native product
	/// where it competes by time ([`Emulator::with_native_candidate`]); the native product alone
	/// where it is predicted faster than any emulation plus the bound's cost. Empty for explicit
	/// plans ([`Precision::SchemeI`], [`Precision::SchemeII`]), where this context computes
	/// natively, and where no emulated plan certifies the target and the native product does not
	/// compete (it is then computed natively)
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision, Scheme};
	/// let a = emugemm::testing::random_matrix::<f64>(64, 64, 1.0, 1);
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(false);
	/// let plans = emu.candidates(a.as_ref(), a.as_ref(), Precision::F64).unwrap();
	/// assert_eq!(plans[0], emu.plan(a.as_ref(), a.as_ref(), Precision::F64).unwrap());
	/// assert!(plans.iter().all(|p| p.predicted_bits >= 52.0));
	/// ```
	pub fn candidates<T: Scalar>(&self, lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, precision: Precision) -> Result<Vec<Plan>, Error> {
		check_shapes(lhs, rhs, None)?;
		validate::<T>(precision)?;
		let shape = (lhs.nrows(), rhs.ncols(), lhs.ncols());
		if self.emulates(shape.2) && self.goes_native::<T>(shape, precision) && precision.target_bits(T::MANTISSA_BITS, shape.2).is_some() {
			return Ok(vec![Plan::native(shape.0)]);
		}
		let (a, b) = self.operands(lhs, rhs, precision);
		let (sa, sb) = (row_stats(&a), row_stats(&b));
		let coarse = self.coarse(&a, &b, precision);
		let Some(bound) = self.bound::<T>((&a, &b), (&sa, &sb), coarse.as_ref(), precision) else {
			return Ok(Vec::new());
		};
		let input = self.policy_input::<T>(Some(&bound), (a.len, b.len, a.k));
		let first = input.choose(precision);
		let ranked = match self.separate_parts::<T>(&input, &first, (&a, &b), precision) {
			Some((_, bounds)) => PolicyInput {
				parts: Some(&bounds),
				..input
			}
			.candidates(precision),
			None => input.candidates(precision),
		};
		Ok(ranked.into_iter().map(|c| c.plan).collect())
	}

	/// `dst = alpha * lhs * rhs` ([`Accum::Replace`]) or `dst += alpha * lhs * rhs` ([`Accum::Add`])
	/// at `precision`
	///
	/// the emulated product is written as `alpha * c` (complex: `(ar cr - ai ci, ar ci + ai cr)`),
	/// then `old + that` for [`Accum::Add`], each operation rounded in `f64`, then rounded once to
	/// `T`. entries whose row of `lhs` or column of `rhs` holds a NaN or an infinity are computed
	/// natively, so they carry the non-finite values a native product gives
	pub fn matmul<T: Scalar>(
		&self,
		dst: MatMut<'_, T>,
		accum: Accum,
		lhs: MatRef<'_, T>,
		rhs: MatRef<'_, T>,
		alpha: T,
		precision: Precision,
	) -> Result<(), Error> {
		check_shapes(lhs, rhs, Some((dst.nrows(), dst.ncols())))?;
		validate::<T>(precision)?;
		let start = Instant::now();
		let report = match self.backend {
			Backend::CpuEmulation => self.emulate(dst, accum, lhs, rhs, alpha, precision),
			#[cfg(feature = "cuda")]
			Backend::Gpu => match self.host_route::<T>((lhs.nrows(), rhs.ncols(), lhs.ncols()), accum, precision) {
				Some(routing) => {
					native_at(dst, accum, lhs, rhs, alpha, precision);
					let (m, n, k) = (lhs.nrows(), rhs.ncols(), lhs.ncols());
					Report {
						host_routing: Some(routing),
						..self.report::<T>(Choice::native(m), (m, n, k), 0, PhaseTimes::default())
					}
				},
				None => self.matmul_staged(dst, accum, lhs, rhs, alpha, precision)?,
			},
			_ => {
				native_at(dst, accum, lhs, rhs, alpha, precision);
				let (m, n, k) = (lhs.nrows(), rhs.ncols(), lhs.ncols());
				self.report::<T>(Choice::native(m), (m, n, k), 0, PhaseTimes::default())
			},
		};
		publish(
			self,
			Report {
				times: PhaseTimes {
					total: start.elapsed(),
					..report.times
				},
				..report
			},
		);
		Ok(())
	}
}

/// faer's native product
fn native<T: Scalar>(dst: MatMut<'_, T>, accum: Accum, lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, alpha: T) {
	matmul(dst, accum, lhs, rhs, alpha, Par::rayon(0));
}

/// the native product at `precision`: faer's, except for `f32`/`c32` outputs at a precision above
/// FP32 level ([`Precision::F64`], [`Precision::Bits`]), which are accumulated in `f64` (an FP32
/// product, whose errors grow with K, does not keep those promises) and combined like an emulated
/// product
fn native_at<T: Scalar>(mut dst: MatMut<'_, T>, accum: Accum, lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, alpha: T, precision: Precision) {
	if T::MANTISSA_BITS == 53 || matches!(precision, Precision::Tf32 | Precision::F32) {
		return native(dst, accum, lhs, rhs, alpha);
	}
	let product: Vec<(f64, f64)> = if T::IS_COMPLEX {
		let wide = |x: MatRef<'_, T>| Mat::from_fn(x.nrows(), x.ncols(), |i, j| faer::c64::new(x[(i, j)].re(), x[(i, j)].im()));
		let c = wide(lhs) * wide(rhs);
		(0..c.ncols())
			.flat_map(|j| (0..c.nrows()).map(move |i| (i, j)))
			.map(|(i, j)| (c[(i, j)].re, c[(i, j)].im))
			.collect()
	} else {
		let wide = |x: MatRef<'_, T>| Mat::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)].re());
		let c = wide(lhs) * wide(rhs);
		(0..c.ncols())
			.flat_map(|j| (0..c.nrows()).map(move |i| (i, j)))
			.map(|(i, j)| (c[(i, j)], 0.0))
			.collect()
	};
	let m = dst.nrows();
	for (idx, &c) in product.iter().enumerate() {
		let (i, j) = (idx % m, idx / m);
		let old = (accum == Accum::Add).then(|| dst[(i, j)]);
		dst[(i, j)] = combine(c, alpha, old);
	}
}

/// the entries in `rows` (all columns) and `cols` (all rows), both ascending, of a product whose
/// rows and columns there hold NaN or infinities: plain sums of products in `f64`, combined like
/// the emulated entries, so that they carry the non-finite values a native product gives (`alpha
/// = 1 + 0i` keeps an infinite part infinite and the other part as it is); the same operations in
/// the same order as `native_fixup` in cuda/reconstruct.cu
fn nonfinite_entries<T: Scalar>(
	mut dst: MatMut<'_, T>,
	accum: Accum,
	(lhs, rhs): (MatRef<'_, T>, MatRef<'_, T>),
	alpha: T,
	(rows, cols): (&[usize], &[usize]),
) {
	let mut entry = |i: usize, j: usize| {
		let (mut re, mut im) = (0.0f64, 0.0f64);
		for h in 0..lhs.ncols() {
			let (x, y) = (lhs[(i, h)], rhs[(h, j)]);
			re += x.re() * y.re() - if T::IS_COMPLEX { x.im() * y.im() } else { 0.0 };
			if T::IS_COMPLEX {
				im += x.re() * y.im() + x.im() * y.re();
			}
		}
		let old = (accum == Accum::Add).then(|| dst[(i, j)]);
		dst[(i, j)] = combine((re, im), alpha, old);
	};
	for &i in rows {
		(0..rhs.ncols()).for_each(|j| entry(i, j));
	}
	for &j in cols {
		(0..lhs.nrows())
			.filter(|i| rows.binary_search(i).is_err())
			.for_each(|i| entry(i, j));
	}
}

fn check_shapes<T>(lhs: MatRef<'_, T>, rhs: MatRef<'_, T>, dst: Option<(usize, usize)>) -> Result<(), Error> {
	let ok = lhs.ncols() == rhs.nrows() && dst.is_none_or(|d| d == (lhs.nrows(), rhs.ncols()));
	if ok {
		Ok(())
	} else {
		Err(Error::ShapeMismatch {
			lhs: (lhs.nrows(), lhs.ncols()),
			rhs: (rhs.nrows(), rhs.ncols()),
			dst,
		})
	}
}
