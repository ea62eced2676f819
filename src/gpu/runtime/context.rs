//! the GPU: context, stream, kernel functions, cuBLASLt handle and workspace, guarded so that a
//! machine without the driver gets an error, not a panic

use crate::Error;
use crate::Scalar;
use crate::arch::Arch;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fault_points::{Fault, point};
use crate::gpu::runtime::pinned::Pinned;
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::{SLOTS, Slot};
use crate::gpu::runtime::staging::{Drain, Staging};
use crate::view::View;
use cudarc::driver::sys::{CUfunction_attribute, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError};
use cudarc::nvrtc::Ptx;
use faer::MatMut;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::Scope;
use std::time::Duration;

/// one GPU with everything the pipeline needs; used by one product at a time (see [`gpu`])
pub(crate) struct Gpu {
	pub ctx: Arc<CudaContext>,
	pub stream: Arc<CudaStream>,
	/// the architecture whose code runs best on this GPU (its own, or the portable path's)
	pub arch: Arch,
	/// the code the product in progress launches (see [`Gpu::using`])
	code: Cell<Arch>,
	/// the embedded modules, each loaded on the first launch of one of its kernels: those of
	/// every architecture in the order of [`Arch::ALL`]
	modules: RefCell<Vec<Option<Arc<CudaModule>>>>,
	/// the module of every kernel, per architecture's code (indices into `modules`)
	entries: HashMap<(Arch, &'static str), usize>,
	functions: RefCell<HashMap<(Arch, String), CudaFunction>>,
	/// per kernel: the dynamic shared memory it is allowed, and its occupancies by (threads, bytes)
	launch_limits: RefCell<HashMap<(Arch, String), LaunchLimits>>,
	pub handles: crate::gpu::runtime::blas::Handles,
	/// grow-only scratch buffers of the pipeline, by slot
	scratch: RefCell<Vec<Option<CudaSlice<u8>>>>,
	/// the slots whose addresses the lock's current holder was given (bit `slot`); the others'
	/// buffers are only kept for later products, and may be freed when memory runs out
	scratch_in_use: Cell<u64>,
	/// grow-only page-locked host buffer for small downloads (the statistics)
	pinned: RefCell<Option<Pinned>>,
	/// the page-locked buffers that matrices go to and from the GPU through
	pub staging: RefCell<Staging>,
	/// a second set, for output tiles downloaded while later tiles compute (see
	/// [`Drain`])
	drain_staging: RefCell<Staging>,
	/// the device's name
	pub name: String,
	/// the cost model the policy prices this GPU's plans with, once known (see
	/// [`crate::gpu::runtime::calibrate::model`])
	pub model: Cell<Option<crate::datasheets::GpuModel>>,
	/// streaming multiprocessors: the grid of the persistent kernels
	pub sm_count: usize,
	/// the bytes of the scratch buffers kept, readable without the pipeline's lock
	/// ([`kept_scratch_of`])
	kept: &'static AtomicUsize,
}

/// the code a GPU's kernels come from while it lives (see [`Gpu::using`])
pub(crate) struct CodeInUse<'g>(&'g Gpu);

impl Drop for CodeInUse<'_> {
	fn drop(&mut self) {
		let gpu = self.0;
		gpu.code.set(gpu.arch);
	}
}

/// what [`Gpu::blocks_per_sm`] has set and found for one kernel
#[derive(Default)]
struct LaunchLimits {
	/// the dynamic shared memory the kernel is allowed
	smem: usize,
	/// blocks per SM, or clusters on the device, by (threads per block, dynamic shared memory per
	/// block, cluster size)
	fit: HashMap<(u32, usize, u32), u32>,
}

impl Gpu {
	fn new((ordinal, copy): Device) -> Result<Self, Error> {
		// SAFETY: only tries to dlopen libcuda; CudaContext::new panics without it
		if !unsafe { cudarc::driver::sys::is_culib_present() } {
			return Err(Error::gpu("no NVIDIA driver (libcuda) found"));
		}
		let start = std::time::Instant::now();
		let count = CudaContext::device_count().map_err(|e| Error::gpu(format!("cannot count devices: {e:?}")))?;
		if count as usize <= ordinal {
			return Err(Error::gpu("no CUDA device present"));
		}
		let ctx = CudaContext::new(ordinal).map_err(driver)?;
		let context = start.elapsed();
		let name = ctx.name().map_err(driver)?;
		let cc = ctx.compute_capability().map_err(driver)?;
		let Some(arch) = Arch::of_capability(cc) else {
			return Err(Error::gpu(format!(
				"{name} has compute capability {}.{}; the kernels need 8.0 or higher (Ampere and later)",
				cc.0, cc.1
			)));
		};
		if crate::kernels::modules(Arch::Sm90a).is_empty() {
			return Err(Error::NoKernels);
		}
		// one index over every architecture's modules, in the order of Arch::ALL
		let (mut entries, mut first) = (HashMap::new(), 0);
		for code in Arch::ALL {
			let modules = crate::kernels::modules(code);
			for (index, name) in crate::gpu::runtime::modules::entries(modules).map_err(Error::gpu)? {
				entries.insert((code, name), first + index);
			}
			first += modules.len();
		}
		let indexed = start.elapsed();
		let sm_count = ctx
			.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
			.map_err(driver)? as usize;
		// a stream of its own: the legacy default stream would order the pipeline's work against
		// every blocking stream of the context (a caller's, another pipeline's on this GPU)
		let stream = ctx.new_stream().map_err(driver)?;
		let handles = crate::gpu::runtime::blas::Handles::new(stream.clone())?;
		log::debug!(
			"emugemm: GPU {ordinal} ({name}) ready in {:.1?}: driver and context {context:.1?}, kernel index {:.1?}, cuBLAS handles and workspace {:.1?}",
			start.elapsed(),
			indexed - context,
			start.elapsed() - indexed,
		);
		Ok(Gpu {
			ctx,
			stream,
			arch,
			code: Cell::new(arch),
			modules: RefCell::new(vec![None; first]),
			entries,
			functions: RefCell::new(HashMap::new()),
			launch_limits: RefCell::new(HashMap::new()),
			handles,
			scratch: RefCell::new(Vec::new()),
			scratch_in_use: Cell::new(0),
			pinned: RefCell::new(None),
			staging: RefCell::default(),
			drain_staging: RefCell::default(),
			name,
			model: Cell::new(None),
			sm_count,
			kept: &KEPT[ordinal][copy],
		})
	}

	/// `src` into the device matrix at `dst` through this GPU's staging buffers (see
	/// [`Staging::upload`]); returns the host time it took
	pub fn upload<'a, T: Scalar>(&self, src: impl Into<View<'a, T>>, dst: DevPtr<T>, chunk_bytes: usize) -> Result<Duration, Error> {
		self.staging.borrow_mut().upload(&self.stream, src.into(), dst, chunk_bytes)
	}

	/// the device matrix at `src` into `dst` through this GPU's staging buffers (see
	/// [`Staging::download`]); returns the host time it took
	pub fn download<T: Scalar>(&self, src: DevPtr<T>, dst: MatMut<'_, T>, chunk_bytes: usize) -> Result<Duration, Error> {
		self.staging.borrow_mut().download(&self.stream, src, dst, chunk_bytes)
	}

	/// a [`Drain`] in `scope` of the tiles computed on this GPU's stream, through its second set
	/// of staging buffers (given back by [`Gpu::finish_drain`])
	pub fn start_drain<'scope, T: Scalar>(&self, scope: &'scope Scope<'scope, '_>, chunk_bytes: usize) -> Result<Drain<'scope, T>, Error> {
		let buffers = std::mem::take(&mut *self.drain_staging.borrow_mut());
		Drain::start(scope, &self.stream, buffers, chunk_bytes)
	}

	/// waits for every tile `drain` was sent, takes its staging buffers back, and returns its
	/// host time
	pub fn finish_drain<T: Scalar>(&self, drain: Drain<'_, T>) -> Result<Duration, Error> {
		let (host, buffers) = drain.finish()?;
		*self.drain_staging.borrow_mut() = buffers;
		Ok(host)
	}

	/// the device address of scratch buffer `slot` (< 64), at least `bytes` long (contents
	/// undefined; valid until the next request of the same slot or the release of the GPU's lock;
	/// grown by reallocation, never shrunk), untyped: callers cast it to what the slot holds. When
	/// memory runs out, the buffers kept in the slots not requested since the lock was taken are
	/// freed and the allocation is tried once more
	pub fn scratch(&self, slot: Slot, bytes: usize) -> Result<DevPtr<u8>, Error> {
		let slot = slot.index();
		self.scratch_in_use.set(self.scratch_in_use.get() | 1 << slot);
		let mut slots = self.scratch.borrow_mut();
		if slots.len() <= slot {
			slots.resize_with(slot + 1, || None);
		}
		if slots[slot].as_ref().is_none_or(|b| b.len() < bytes) {
			slots[slot] = None;
			drop(slots);
			// SAFETY: scratch memory is written by the pipeline before it is read
			let alloc = || unsafe { self.stream.alloc::<u8>(bytes.max(256)) };
			let buffer = self.freeing_scratch(|| format!("{bytes} bytes of GPU workspace"), alloc)?;
			slots = self.scratch.borrow_mut();
			slots[slot] = Some(buffer);
			self.count_kept(&slots);
		}
		Ok(DevPtr::new(
			slots[slot].as_ref().expect("allocated above").device_ptr(&self.stream).0,
		))
	}

	/// the result of `f`, a driver call that takes device memory (a scratch buffer, a device
	/// matrix, cuBLAS workspace, a kernel's first load); when the GPU is out of memory, the scratch
	/// kept in slots that the lock's holder has not requested (whose addresses nothing it enqueues
	/// can hold) is freed, the stream is synchronised (so that the memory pool gives what it holds
	/// back to the device, where the driver's own allocations can use it) and `f` runs once more.
	/// Still out of memory: an [`Error::OutOfMemory`] for `what()`
	pub fn freeing_scratch<R>(&self, what: impl Fn() -> String, f: impl Fn() -> Result<R, DriverError>) -> Result<R, Error> {
		point(Fault::Allocation, &what)?;
		let out_of_memory = |e: &DriverError| e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY;
		let result = match f() {
			Err(e) if out_of_memory(&e) => {
				self.free_kept_scratch();
				self.stream.synchronize().map_err(driver)?;
				f()
			},
			other => other,
		};
		result.map_err(|e| {
			if out_of_memory(&e) {
				Error::OutOfMemory { what: what() }
			} else {
				driver(e)
			}
		})
	}

	/// the bytes of the scratch buffers kept on this GPU between products
	pub fn kept_scratch_bytes(&self) -> usize {
		self.kept.load(Ordering::Relaxed)
	}

	/// frees the buffers of the scratch slots not in use by the lock's holder (the work enqueued
	/// before still completes: the frees are stream-ordered)
	pub fn free_kept_scratch(&self) {
		let in_use = self.scratch_in_use.get();
		for (slot, buffer) in self.scratch.borrow_mut().iter_mut().enumerate() {
			if in_use & 1 << slot == 0 {
				*buffer = None;
			}
		}
		self.count_kept(&self.scratch.borrow());
	}

	/// [`Gpu::kept_scratch_bytes`] counted again from the scratch `slots` after they changed
	fn count_kept(&self, slots: &[Option<CudaSlice<u8>>]) {
		self.kept.store(slots.iter().flatten().map(CudaSlice::len).sum(), Ordering::Relaxed);
	}

	/// frees every buffer kept between products (scratch, staging and page-locked buffers), once
	/// the work enqueued has completed, so that the next product allocates them again
	#[cfg(feature = "faults")]
	pub fn release_kept(&self) -> Result<(), Error> {
		self.stream.synchronize().map_err(driver)?;
		self.scratch.borrow_mut().clear();
		self.kept.store(0, Ordering::Relaxed);
		*self.pinned.borrow_mut() = None;
		*self.staging.borrow_mut() = Staging::default();
		*self.drain_staging.borrow_mut() = Staging::default();
		Ok(())
	}

	/// runs `f` on the first `bytes` of the small page-locked buffer (grown as needed); the
	/// stream is idle when `f` starts and must be idle again when it returns
	pub fn with_pinned<R>(&self, bytes: usize, f: impl FnOnce(&mut [u8]) -> Result<R, Error>) -> Result<R, Error> {
		let mut pinned = self.pinned.borrow_mut();
		if pinned.as_ref().is_none_or(|p| p.len() < bytes) {
			*pinned = None;
			let what = || format!("{bytes} bytes of page-locked host memory");
			*pinned = Some(Pinned::new(&self.ctx, bytes.max(4096), what)?);
		}
		let buffer = pinned.as_mut().expect("allocated above").as_mut_slice().map_err(driver)?;
		f(&mut buffer[..bytes])
	}

	/// the device time of the work `work` enqueues on the stream, by a pair of events
	pub fn timed(&self, work: impl FnOnce() -> Result<(), Error>) -> Result<std::time::Duration, Error> {
		let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
		let (start, end) = (
			self.ctx.new_event(flags).map_err(driver)?,
			self.ctx.new_event(flags).map_err(driver)?,
		);
		start.record(&self.stream).map_err(driver)?;
		work()?;
		end.record(&self.stream).map_err(driver)?;
		end.synchronize().map_err(driver)?;
		Ok(std::time::Duration::from_secs_f64(
			start.elapsed_ms(&end).map_err(driver)? as f64 / 1e3,
		))
	}

	/// allows kernel `name` at least `smem` bytes of dynamic shared memory: one driver call per
	/// kernel and size, so that a launch pays no host time for it afterwards
	pub fn allow_smem(&self, name: &str, smem: usize) -> Result<(), Error> {
		let key = (self.code.get(), name.to_string());
		if self.launch_limits.borrow().get(&key).is_some_and(|limit| limit.smem >= smem) {
			return Ok(());
		}
		let f = self.function(name)?;
		f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)
			.map_err(driver)?;
		self.launch_limits.borrow_mut().entry(key).or_default().smem = smem;
		Ok(())
	}

	/// how many of `name`'s blocks (or clusters) of the shape `key` (threads per block, dynamic
	/// shared memory, cluster size) fit on the device at once, by `count` once per kernel and
	/// shape; the kernel is allowed the shared memory first
	pub fn occupancy(
		&self,
		name: &str,
		key: (u32, usize, u32),
		count: impl FnOnce(&CudaFunction) -> Result<u32, Error>,
	) -> Result<u32, Error> {
		let kernel = (self.code.get(), name.to_string());
		if let Some(&fit) = self.launch_limits.borrow().get(&kernel).and_then(|limit| limit.fit.get(&key)) {
			return Ok(fit);
		}
		self.allow_smem(name, key.1)?;
		let fit = count(&self.function(name)?)?;
		self.launch_limits.borrow_mut().entry(kernel).or_default().fit.insert(key, fit);
		Ok(fit)
	}

	/// how many blocks of `threads` threads with `smem` bytes of dynamic shared memory each fit on
	/// one SM at once for the kernel `name`, which is allowed at least `smem` bytes from now on
	pub fn blocks_per_sm(&self, name: &str, threads: u32, smem: usize) -> Result<u32, Error> {
		self.occupancy(name, (threads, smem, 1), |f| {
			f.occupancy_max_active_blocks_per_multiprocessor(threads, smem, None)
				.map_err(driver)
		})
	}

	/// the code the kernels come from until the guard is dropped (then the GPU's own again): the
	/// portable path's where `settings` ask for it, otherwise the GPU's own
	pub fn using(&self, settings: &crate::settings::Settings) -> CodeInUse<'_> {
		self.code.set(if settings.portable { Arch::Portable } else { self.arch });
		CodeInUse(self)
	}

	/// the module that defines kernel `name` in the code in use, loaded on first use; an error for
	/// a name no embedded module of that code defines (a kernel of the feature `bench` without it,
	/// or a Hopper-only kernel on the portable path)
	fn module(&self, name: &str) -> Result<Arc<CudaModule>, Error> {
		let code = self.code.get();
		let index = *self
			.entries
			.get(&(code, name))
			.ok_or_else(|| Error::gpu(format!("kernel {name} is not in the embedded {code:?} modules")))?;
		if let Some(module) = &self.modules.borrow()[index] {
			return Ok(module.clone());
		}
		let crate::kernels::Module { stem, image, .. } = Arch::ALL
			.into_iter()
			.flat_map(crate::kernels::modules)
			.nth(index)
			.expect("the index covers the embedded modules");
		let start = std::time::Instant::now();
		// the driver unpacks the compressed fatbin here (tens of milliseconds for the largest; the
		// portable path's PTX is compiled for the GPU on its first load, then cached by the driver)
		let load = || self.ctx.load_module(Ptx::from_binary(image.to_vec()));
		let module = self.freeing_scratch(|| format!("the code of cuda/{stem}.cu"), load)?;
		log::debug!(
			"emugemm: cuda/{stem}.cu ({} code, {} bytes compressed) loaded in {:.1?}",
			code.nvcc_arch(),
			image.len(),
			start.elapsed()
		);
		self.modules.borrow_mut()[index] = Some(module.clone());
		Ok(module)
	}

	/// the kernel `name`, looked up once in the embedded modules (panics on a name no cubin
	/// defines: a programming error). The driver loads a kernel's code on this first lookup, which
	/// takes device memory: an [`Error::OutOfMemory`] when even freeing the kept scratch leaves
	/// too little
	pub fn function(&self, name: &str) -> Result<CudaFunction, Error> {
		let key = (self.code.get(), name.to_string());
		if let Some(f) = self.functions.borrow().get(&key) {
			return Ok(f.clone());
		}
		let module = self.module(name)?;
		let f = self.freeing_scratch(|| format!("the code of kernel {name}"), || module.load_function(name))?;
		self.functions.borrow_mut().insert(key, f.clone());
		Ok(f)
	}

	/// every kernel of `code` looked up, so that none is loaded later: a pipeline whose callers'
	/// streams may wait for it on the GPU loads nothing while they wait (the driver may
	/// synchronise the context to load a kernel, which would wait for those streams in turn)
	pub fn load_every_kernel(&self, code: Arch) -> Result<(), Error> {
		let start = std::time::Instant::now();
		let mut names: Vec<&'static str> = self.entries.keys().filter(|(c, _)| *c == code).map(|(_, name)| *name).collect();
		names.sort();
		self.code.set(code);
		let loaded = names.iter().try_for_each(|name| self.function(name).map(|_| ()));
		self.code.set(self.arch);
		log::debug!("emugemm: {} kernels of {code:?} loaded in {:.1?}", names.len(), start.elapsed());
		loaded
	}
}

// one bit of `Gpu::scratch_in_use` per scratch buffer
const _: () = assert!(SLOTS <= 64);

/// the most GPUs of one host the crate drives
pub(crate) const MAX_GPUS: usize = 16;

/// a pipeline on a GPU: its ordinal, and which of the pipelines on that GPU (a context whose list
/// of GPUs repeats an ordinal runs one pipeline per repetition there, each with its own streams,
/// scratch and staging buffers)
pub(crate) type Device = (usize, usize);

/// the pipelines of a list of ordinals, in order: each ordinal with the number of its earlier
/// repetitions
pub(crate) fn pipelines(ordinals: impl IntoIterator<Item = usize>) -> Vec<Device> {
	let mut seen = Vec::new();
	ordinals
		.into_iter()
		.map(|o| {
			let copy = seen.iter().filter(|&&x| x == o).count();
			seen.push(o);
			(o, copy)
		})
		.collect()
}

/// the process's first pipeline on GPU 0 (see [`gpu_at`])
pub(crate) fn gpu() -> Result<GpuGuard, Error> {
	gpu_at((0, 0))
}

/// the process's first pipeline on GPU `ordinal` (see [`gpu_at`])
pub(crate) fn gpu_on(ordinal: usize) -> Result<GpuGuard, Error> {
	gpu_at((ordinal, 0))
}

/// a pipeline held by this thread: its lock, and the mark that this thread holds it
pub(crate) struct GpuGuard {
	gpu: MutexGuard<'static, Gpu>,
	device: Device,
}

impl std::ops::Deref for GpuGuard {
	type Target = Gpu;

	fn deref(&self) -> &Gpu {
		&self.gpu
	}
}

impl Drop for GpuGuard {
	fn drop(&mut self) {
		HELD.with(|held| held.borrow_mut().retain(|&d| d != self.device));
	}
}

thread_local! {
	/// the pipelines this thread holds: asking for one of them again is an error, not a deadlock
	static HELD: RefCell<Vec<Device>> = const { RefCell::new(Vec::new()) };
}

/// the process's pipeline `device`, initialised on first use; products take its lock in turn. A
/// thread that asks again for a pipeline it holds gets an error (a defect of the caller), where
/// the lock would wait for ever
pub(crate) fn gpu_at((ordinal, copy): Device) -> Result<GpuGuard, Error> {
	if HELD.with(|held| held.borrow().contains(&(ordinal, copy))) {
		return Err(Error::gpu(format!(
			"GPU {ordinal} (pipeline {copy}) asked for again by the thread that holds it"
		)));
	}
	type Slot = OnceLock<Result<Mutex<Gpu>, Error>>;
	static GPUS: [[Slot; crate::settings::Devices::MAX]; MAX_GPUS] =
		[const { [const { OnceLock::new() }; crate::settings::Devices::MAX] }; MAX_GPUS];
	let slot = GPUS
		.get(ordinal)
		.and_then(|copies| copies.get(copy))
		.ok_or_else(|| Error::gpu(format!("GPU {ordinal}: this crate drives ordinals below {MAX_GPUS}")))?;
	let made = || {
		// made whatever capture the program has in progress: the calls that make a pipeline are
		// allowed on this thread while it lives
		// SAFETY: only tries to dlopen libcuda (`Gpu::new` says where it is missing)
		let _relaxed = unsafe { cudarc::driver::sys::is_culib_present() }.then(crate::gpu::runtime::capture::Relaxed::new);
		Gpu::new((ordinal, copy)).map(Mutex::new)
	};
	match slot.get_or_init(made) {
		Ok(gpu) => {
			let g = gpu.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
			// a new holder: no scratch address handed out yet; the driver calls the holder makes
			// directly (copies, events) need the context current on its thread
			g.scratch_in_use.set(0);
			g.ctx.bind_to_thread().map_err(driver)?;
			HELD.with(|held| held.borrow_mut().push((ordinal, copy)));
			Ok(GpuGuard {
				gpu: g,
				device: (ordinal, copy),
			})
		},
		Err(e) => Err(e.clone()),
	}
}

/// the bytes of scratch that pipeline `device` keeps between products, read without its lock
pub(crate) fn kept_scratch_of((ordinal, copy): Device) -> usize {
	KEPT.get(ordinal).and_then(|c| c.get(copy)).map_or(0, |k| k.load(Ordering::Relaxed))
}

/// the scratch each pipeline keeps (see [`Gpu::kept_scratch_bytes`])
static KEPT: [[AtomicUsize; crate::settings::Devices::MAX]; MAX_GPUS] =
	[const { [const { AtomicUsize::new(0) }; crate::settings::Devices::MAX] }; MAX_GPUS];

/// what a call asks of a GPU before it queues work there, read without any pipeline's lock (a
/// pipeline may hold its lock for a whole product): its primary context, whether it runs the fused
/// kernels, its memory
pub(crate) struct Facts {
	pub ctx: Arc<CudaContext>,
	pub fused: bool,
	pub total_mem: usize,
}

/// the [`Facts`] of GPU `ordinal`, taken from its first pipeline once
pub(crate) fn facts(ordinal: usize) -> Result<&'static Facts, Error> {
	static FACTS: [OnceLock<Facts>; MAX_GPUS] = [const { OnceLock::new() }; MAX_GPUS];
	let slot = FACTS
		.get(ordinal)
		.ok_or_else(|| Error::gpu(format!("GPU {ordinal}: this crate drives ordinals below {MAX_GPUS}")))?;
	if let Some(facts) = slot.get() {
		return Ok(facts);
	}
	let g = gpu_on(ordinal)?;
	let facts = Facts {
		ctx: g.ctx.clone(),
		fused: g.arch.fused(),
		total_mem: g.ctx.total_mem().map_err(driver)?,
	};
	Ok(slot.get_or_init(|| facts))
}

/// lets every GPU of `ordinals` read the memory of every other directly (over NVLink where they
/// are joined by it), so that copies between them do not pass through the host; pairs that cannot
/// are left as they are (their copies still work, through the host)
pub(crate) fn connect(ordinals: &[usize]) -> Result<(), Error> {
	use cudarc::driver::sys;
	let contexts = ordinals
		.iter()
		.map(|&o| Ok((o, gpu_on(o)?.ctx.clone())))
		.collect::<Result<Vec<_>, Error>>()?;
	for (d, ctx) in &contexts {
		for (e, peer) in contexts.iter().filter(|(e, _)| e != d) {
			let mut can = 0;
			// SAFETY: plain queries and a context setting on contexts that outlive the calls
			unsafe {
				sys::cuDeviceCanAccessPeer(&mut can, ctx.cu_device(), peer.cu_device())
					.result()
					.map_err(driver)?;
				if can == 0 {
					log::debug!("emugemm: GPU {d} cannot read GPU {e} directly; copies between them go through the host");
					continue;
				}
				ctx.bind_to_thread().map_err(driver)?;
				match sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) {
					CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {},
					other => return Err(driver(DriverError(other))),
				}
				// the pipeline's buffers come from the peer's stream-ordered pool, which peer access
				// does not open: its own setting does
				let mut pool = std::ptr::null_mut();
				sys::cuDeviceGetMemPool(&mut pool, peer.cu_device()).result().map_err(driver)?;
				let access = sys::CUmemAccessDesc {
					location: sys::CUmemLocation {
						type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
						id: ctx.cu_device(),
					},
					flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
				};
				sys::cuMemPoolSetAccess(pool, &access, 1).result().map_err(driver)?;
			}
		}
	}
	Ok(())
}
