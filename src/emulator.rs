//! the explicit context: its backend and settings. Its products go through one front door
//! ([`front`]), which checks them, builds each call's one [`crate::request::Request`], times it and
//! publishes its report, in front of the engines: faer's native product ([`crate::native`]), the
//! CPU oracle ([`crate::cpu::oracle`]) and the GPU's ([`crate::gpu`])

use crate::datasheets::GpuModel;
use crate::pending::PendingReport;
use crate::settings::{DEFAULT_STAGING, Devices, Settings};
use crate::{Backend, Error, Precision, Report, Scaling};
use faer::Par;
use std::sync::{Arc, Mutex, RwLock};

mod batch;
#[cfg(feature = "cuda")]
mod device_batch;
#[cfg(feature = "cuda")]
mod device_matrices;
#[cfg(feature = "cuda")]
mod device_views;
mod environment;
mod front;
mod rank_k;

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
/// emu.matmul(c.as_mut(), Accum::Replace, (a.as_ref(), b.as_ref()), 2.0, (faer::Par::Seq, Precision::F64)).unwrap();
/// let native = &a * &b * faer::Scale(2.0);
/// assert!((&c - &native).norm_max() <= 1e-13 * native.norm_max());
/// ```
pub struct Emulator {
	backend: Backend,
	settings: Settings,
	/// the threads the CPU's part of a product may use
	par: Par,
	/// the precision of every product, whatever the call asks for
	precision_override: Option<Precision>,
	/// products with a dimension below this are computed natively
	native_below: usize,
	/// the error every product returns: the global context's where the environment cannot be used
	refusal: Option<Error>,
	last: Mutex<Option<PendingReport>>,
}

impl Emulator {
	/// a context on [`Backend::Auto`]
	pub fn new() -> Result<Self, Error> {
		Self::with_backend(Backend::Auto)
	}

	/// a context on `backend`; [`Backend::Auto`] is resolved here, once. The oracle
	/// ([`Backend::CpuEmulation`]) emulates every product a plan certifies; the other backends let
	/// the native product compete by predicted time (see [`Emulator::with_native_candidate`])
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
		let host_routing = auto && environment::host_routing()?.unwrap_or(true);
		Emulator::on(backend, host_routing, model_of(backend, 0)?).switched_by_environment()
	}

	/// a context on a resolved `backend` with the default settings: the native candidate on,
	/// but for the oracle ([`Backend::CpuEmulation`]), which emulates every product a plan
	/// certifies
	fn on(backend: Backend, host_routing: bool, model: GpuModel) -> Emulator {
		Emulator {
			backend,
			settings: Settings {
				scaling: Scaling::Fast,
				fused: true,
				priced_routes: true,
				native_candidate: backend != Backend::CpuEmulation,
				staging_bytes: DEFAULT_STAGING,
				host_routing,
				device_memory: None,
				devices: Devices::FIRST,
				portable: false,
				model,
				queued_views: false,
				graph_recording: false,
			},
			par: Par::rayon(0),
			precision_override: None,
			native_below: 0,
			refusal: None,
			last: Mutex::new(None),
		}
	}

	/// the context the environment sets (the global context's, see [`Emulator::global`]), or the
	/// error that names the first variable it cannot use
	///
	/// # example
	/// ```
	/// match emugemm::Emulator::from_env() {
	///     Ok(emu) => println!("{emu:?}"),
	///     Err(e) => eprintln!("{e}"), // e.g. environment variable EMUGEMM_PRECISION="scheme2=0": ...
	/// }
	/// ```
	pub fn from_env() -> Result<Emulator, Error> {
		environment::context_from_env()
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
	/// run their three products in three launches of the real kernel instead of one, and scheme I
	/// products still take the unfused pipeline where the cost model predicts it faster (few
	/// slices, moderate sizes; see [`Emulator::with_priced_routes`])
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

	/// the same context with each scheme I product on the route the cost model predicts faster
	/// (on, the default: the unfused pipeline where it is predicted at least 5% faster than the
	/// fused kernel, as for 1 or 2 slices up to n = 8192 on a Hopper GPU), or off on the fused
	/// kernel wherever fused products are on, to measure or test that kernel. The plan, and so the
	/// result bit for bit, is the same on either route; [`Report::route`](crate::Report::route)
	/// says which ran
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
	/// assert!(emu.priced_routes());
	/// assert!(!emu.with_priced_routes(false).priced_routes());
	/// ```
	pub fn with_priced_routes(mut self, priced: bool) -> Self {
		self.settings.priced_routes = priced;
		self
	}

	/// whether scheme I products take the route the cost model predicts faster (see
	/// [`Emulator::with_priced_routes`])
	///
	/// # example
	/// ```
	/// let emu = emugemm::Emulator::with_backend(emugemm::Backend::CpuEmulation).unwrap();
	/// assert!(emu.priced_routes());
	/// ```
	pub fn priced_routes(&self) -> bool {
		self.settings.priced_routes
	}

	/// the same context with the portable path on a Hopper GPU too (off, the default: Hopper GPUs
	/// run the fused sm_90a kernels): the generic kernels from their `compute_80` PTX, which the
	/// driver compiles for the GPU, and the INT8 products through cuBLASLt, the unfused pipeline;
	/// bit for bit the same results. GPUs of compute capability 8.x, 10.x and 12.x always take
	/// this path ([`Route::Portable`](crate::Route::Portable) in the report)
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_portable_path(true);
	/// assert!(emu.portable_path());
	/// ```
	pub fn with_portable_path(mut self, on: bool) -> Self {
		self.settings.portable = on;
		self
	}

	/// whether the portable path is asked for on Hopper GPUs too (see
	/// [`Emulator::with_portable_path`])
	pub fn portable_path(&self) -> bool {
		self.settings.portable
	}

	/// the same context with the native product competing with the emulated plans of a target
	/// precision by predicted time, or computing only the products that no emulated plan
	/// certifies. On is the default of [`Backend::Gpu`] and [`Backend::Auto`] contexts: small
	/// products, and `Tf32` products of `f32`/`c32` operands (a TF32 GEMM on the GPU), go native
	/// where the native product is predicted faster. Off is the default of the oracle
	/// ([`Backend::CpuEmulation`]): the oracle emulates every product a plan certifies; the
	/// native candidate is priced with a GPU cost model only when asked for (`true` here, so that
	/// the oracle picks the plan a GPU context with the native candidate picks)
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision, Scheme};
	/// let a = emugemm::testing::random_matrix::<f64>(32, 32, 1.0, 1);
	/// // the oracle emulates by default, even at 32 x 32 x 32
	/// let oracle = Emulator::with_backend(Backend::CpuEmulation).unwrap();
	/// assert!(!oracle.native_candidate());
	/// assert_ne!(oracle.plan(a.as_ref(), a.as_ref(), Precision::F64).unwrap().scheme, Scheme::Native);
	/// // asked for, the native product competes, priced with the GPU's cost model: a product
	/// // this small is faster natively than any emulation
	/// let priced = oracle.with_native_candidate(true);
	/// assert!(priced.native_candidate());
	/// assert_eq!(priced.plan(a.as_ref(), a.as_ref(), Precision::F64).unwrap().scheme, Scheme::Native);
	/// ```
	pub fn with_native_candidate(mut self, native_candidate: bool) -> Self {
		self.settings.native_candidate = native_candidate;
		self
	}

	/// whether the native product competes with the emulated plans by time (see
	/// [`Emulator::with_native_candidate`]; by default `false` on [`Backend::CpuEmulation`], `true`
	/// on the other backends)
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
	/// matrices (`DeviceMatrix`, feature `cuda`) always compute in core
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
	/// matrices (`Emulator::upload`, feature `cuda`) are split by rows over the GPUs. An ordinal may
	/// repeat: it then runs one pipeline per repetition (which exercises the split on a machine with
	/// one GPU)
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
		// no other GPU is touched: a process may own only these (an MPI rank, an exclusive GPU)
		let mut emu = Emulator::on(Backend::Gpu, false, model_of(Backend::Gpu, ordinals[0])?);
		emu.settings.devices = devices;
		emu.switched_by_environment()
	}

	/// the context with the switches the environment sets for every context (the C ABI's and the
	/// interposer's too): `EMUGEMM_QUEUED_VIEWS` and `EMUGEMM_GRAPHS`
	fn switched_by_environment(self) -> Result<Emulator, Error> {
		let queued = environment::queued_views()?.unwrap_or(false);
		let graphs = environment::graph_recording()?.unwrap_or(false);
		Ok(self.with_queued_views(queued).with_graph_recording(graphs))
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

	/// the same context with products on device views queued (`on`) or waited for (`off`, the
	/// default, or the environment variable `EMUGEMM_QUEUED_VIEWS=on` to turn it on, for every
	/// context and the C ABI's): queued, a product that passes the shape tier is handed to one of
	/// its GPU's lanes and the call returns at once, the caller's stream waiting on the GPU for
	/// the product (see [`Emulator::gemm_on_stream`]); waited for, the call returns once the plan
	/// is chosen and the product enqueued. The plans and bits are the same. Off by default until
	/// the queued path works on a GPU: on an H100 the first queued product hung with kernels
	/// loaded lazily, and had not returned after 45 s with them loaded eagerly (cause not found),
	/// so leave it off. The lanes are made only
	/// in a process started with `CUDA_MODULE_LOADING=EAGER` (a kernel loaded lazily may wait for
	/// the caller's stream, which waits for the lane); without it the products are waited for
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?.with_queued_views(true);
	/// assert!(emu.queued_views());
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn with_queued_views(mut self, on: bool) -> Self {
		self.settings.queued_views = on;
		self
	}

	/// whether products on device views are queued (see [`Emulator::with_queued_views`])
	pub fn queued_views(&self) -> bool {
		self.settings.queued_views
	}

	/// the same context with products on streams being captured into CUDA graphs recorded there
	/// (`on`: every replay decides its plan on its own data, see [`Emulator::gemm_on_stream`]) or
	/// refused with [`Error::Placement`] before anything is enqueued (`off`, the default, or the
	/// environment variable `EMUGEMM_GRAPHS=on` to turn it on, for every context and the C ABI's,
	/// whose refusal the interposer forwards to cuBLAS). Off by default until recording is
	/// measured on a GPU; its replay lanes are made like the queued products' lanes, which hung on
	/// an H100, so leave it off. A GPU's replay lanes are made at its first product on device views
	/// outside any capture, and only in a process started with `CUDA_MODULE_LOADING=EAGER`: a
	/// product captured without them is refused, and the capture goes on
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?.with_graph_recording(true);
	/// assert!(emu.graph_recording());
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn with_graph_recording(mut self, on: bool) -> Self {
		self.settings.graph_recording = on;
		self
	}

	/// whether products on capturing streams are recorded into the graph (see
	/// [`Emulator::with_graph_recording`])
	pub fn graph_recording(&self) -> bool {
		self.settings.graph_recording
	}

	/// whether host products may run on the host's cores (see [`Emulator::with_host_routing`])
	pub fn host_routing(&self) -> bool {
		self.settings.host_routing
	}

	/// the same context with the CPU's part of its products on `par` (default `Par::rayon(0)`, all
	/// the cores): the native product and the emulation on the CPU, and on the GPU backend the
	/// host's copies into and out of the staging buffers. The forms without a `Par` argument
	/// ([`EmuMatMul`](crate::EmuMatMul), `emu_gemm`) read it; [`Emulator::matmul`] takes its own
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?.with_par(faer::Par::Seq);
	/// assert_eq!(emu.par(), faer::Par::Seq);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn with_par(mut self, par: Par) -> Self {
		self.par = par;
		self
	}

	/// the threads the CPU's part of a product may use (see [`Emulator::with_par`])
	pub fn par(&self) -> Par {
		self.par
	}

	/// the settings the policy and the engines read (the policy's tests: the front door puts them
	/// in each call's request)
	#[cfg(test)]
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

	/// the report of this context's last product; a product on device views that returned before
	/// its plan was chosen is waited for (see [`PendingReport::wait`]), and one that failed since
	/// gives `None`
	pub fn last_report(&self) -> Option<Report> {
		// a report is whole or absent, so a lock a panicking thread left behind still holds one
		let last = self.last.lock().unwrap_or_else(|e| e.into_inner()).clone();
		last?.wait().ok()
	}

	/// the same context with every product at `precision`, whatever precision the call asks for
	/// (`None`, the default: as asked); the environment variable `EMUGEMM_PRECISION` sets it on
	/// the global context (see [`Emulator::global`])
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, EmuMatMul, Emulator, Precision, Scheme};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?.with_precision_override(Some(Precision::SchemeII { moduli: 12 }));
	/// let a = faer::Mat::<f64>::identity(8, 8);
	/// a.emu_mul_with(&emu, &a, Precision::F64)?;
	/// assert!(matches!(emu.last_report().unwrap().plan.scheme, Scheme::SchemeII { moduli: 12, .. }));
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn with_precision_override(mut self, precision: Option<Precision>) -> Self {
		self.precision_override = precision;
		self
	}

	/// the precision every product runs at, where set (see [`Emulator::with_precision_override`])
	pub fn precision_override(&self) -> Option<Precision> {
		self.precision_override
	}

	/// the same context with products whose `m`, `n` or `k` is below `size` computed natively,
	/// before any bound or plan (default 0: the policy alone decides, by predicted time); the
	/// environment variable `EMUGEMM_NATIVE_BELOW` sets it on the global context
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, EmuMatMul, Emulator, Precision, Scheme};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?.with_native_below(64);
	/// let a = faer::Mat::<f64>::identity(32, 32);
	/// a.emu_mul_with(&emu, &a, Precision::SchemeII { moduli: 12 })?;
	/// assert_eq!(emu.last_report().unwrap().plan.scheme, Scheme::Native);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn with_native_below(mut self, size: usize) -> Self {
		self.native_below = size;
		self
	}

	/// the size below which products are computed natively (see [`Emulator::with_native_below`])
	pub fn native_below(&self) -> usize {
		self.native_below
	}

	/// the global context, which [`crate::EmuMatMul`] and [`crate::matmul`] use: the one given to
	/// [`Emulator::set_global`], otherwise one made on first use from the environment:
	///
	/// | variable | values | default |
	/// | --- | --- | --- |
	/// | `EMUGEMM_BACKEND` | `auto`, `native`, `cpu` (the emulation on the CPU), `gpu` | `auto` |
	/// | `EMUGEMM_PRECISION` | a [`Precision`] as `f64`, `f32`, `tf32`, `bits=40`, `scheme1=4`, `scheme2=14`: every product at that precision | unset: as asked |
	/// | `EMUGEMM_NATIVE_BELOW` | a size: products whose `m`, `n` or `k` is below it are computed natively | `0` |
	/// | `EMUGEMM_HOST_ROUTING` | `on`, `off` (see [`Emulator::with_host_routing`]) | `on` |
	/// | `EMUGEMM_QUEUED_VIEWS` | `on`, `off` (see [`Emulator::with_queued_views`]; every context) | `off` |
	/// | `EMUGEMM_GRAPHS` | `on`, `off` (see [`Emulator::with_graph_recording`]; every context) | `off` |
	///
	/// A value that cannot be read, or a backend that cannot run here, makes every product of the
	/// global context return [`Error::Environment`], which names the variable (`emu_mul` panics with
	/// it); [`Emulator::from_env`] gives that error directly. Where `EMUGEMM_PRECISION` replaces a
	/// target precision that a call asks for, a warning goes to `log` once per process.
	///
	/// # example
	/// ```
	/// let global = emugemm::Emulator::global();
	/// println!("{global:?}");
	/// ```
	pub fn global() -> Arc<Emulator> {
		let global = GLOBAL.read().unwrap_or_else(|e| e.into_inner()).clone();
		global.unwrap_or_else(|| {
			let mut slot = GLOBAL.write().unwrap_or_else(|e| e.into_inner());
			slot.get_or_insert_with(|| {
				Arc::new(environment::context_from_env().unwrap_or_else(|e| Emulator {
					refusal: Some(e),
					..Emulator::on(Backend::Native, false, GpuModel::MEASURED)
				}))
			})
			.clone()
		})
	}

	/// makes `emu` the global context (see [`Emulator::global`]) from now on, for every thread
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, EmuMatMul, Emulator, Precision};
	/// Emulator::set_global(Emulator::with_backend(Backend::CpuEmulation)?);
	/// let a = emugemm::testing::random_matrix::<f64>(8, 8, 1.0, 1);
	/// let _ = a.emu_mul(&a, Precision::F64);
	/// // the oracle emulates what a plan certifies, small products too
	/// assert_eq!(emugemm::last_report().unwrap().backend, Backend::CpuEmulation);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn set_global(emu: Emulator) {
		*GLOBAL.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(emu));
	}
}

/// the cost model a context on `backend` prices plans with: GPU `ordinal`'s on the GPU backend (from
/// the table of GPUs, or measured at first use), the Hopper GPUs' otherwise (so that the CPU
/// oracle picks the plans a Hopper GPU picks)
fn model_of(backend: Backend, ordinal: usize) -> Result<GpuModel, Error> {
	match backend {
		#[cfg(feature = "cuda")]
		Backend::Gpu => crate::gpu::model(ordinal),
		_ => {
			let _ = ordinal;
			Ok(GpuModel::MEASURED)
		},
	}
}

/// the global context, made on first use
static GLOBAL: RwLock<Option<Arc<Emulator>>> = RwLock::new(None);

/// a context with the same backend and settings, and the same last report
impl Clone for Emulator {
	fn clone(&self) -> Self {
		Emulator {
			backend: self.backend,
			settings: self.settings,
			par: self.par,
			precision_override: self.precision_override,
			native_below: self.native_below,
			refusal: self.refusal.clone(),
			last: Mutex::new(self.last.lock().unwrap_or_else(|e| e.into_inner()).clone()),
		}
	}
}

/// the backend and the settings (not the last report: see [`Emulator::last_report`])
impl std::fmt::Debug for Emulator {
	fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
		f.debug_struct("Emulator")
			.field("backend", &self.backend)
			.field("scaling", &self.settings.scaling)
			.field("fused_products", &self.settings.fused)
			.field("priced_routes", &self.settings.priced_routes)
			.field("portable_path", &self.settings.portable)
			.field("native_candidate", &self.settings.native_candidate)
			.field("staging_buffers", &self.settings.staging_bytes)
			.field("host_routing", &self.settings.host_routing)
			.field("device_memory", &self.settings.device_memory)
			.field("gpus", &self.gpus())
			.field("cost_model", &self.settings.model.sheet().name)
			.field("par", &self.par)
			.field("precision_override", &self.precision_override)
			.field("native_below", &self.native_below)
			.finish()
	}
}
