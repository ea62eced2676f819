//! the explicit context: its backend and settings. Its products go through one front door
//! ([`front`]), which checks them, times them and publishes their report, in front of the engines:
//! faer's native product ([`native`]), the emulation on the CPU ([`emulation`]) and the GPU's
//! ([`crate::gpu`])

use crate::settings::{DEFAULT_STAGING, Devices, Settings};
use crate::{Backend, Error, Report, Scaling};
use std::sync::{Mutex, OnceLock};

#[cfg(feature = "cuda")]
mod device;
mod emulation;
mod front;
mod native;

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
}
