//! kernel launches and the device buffers they read: every kernel launches through [`Launch`]
//! (grid, block, dynamic shared memory, cluster), the macros give it typed arguments; grid-stride
//! configurations, small uploads

use crate::Error;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fault_points::{Fault, point};
use crate::gpu::runtime::ptr::DevPtr;
use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, ValidAsZeroBits};
use std::ffi::c_void;

/// the dynamic shared memory a block may opt in to on sm_90 (`SMEM_LIMIT` in `cuda/wgmma.cuh`)
pub(crate) const SMEM_LIMIT: usize = 232_448;

/// a kernel's parameters, in order: each passed as the address of a value that outlives the
/// launch
pub(crate) trait Params {
	fn addresses(&self) -> Vec<*mut c_void>;
}

/// [`Params`] for tuples of plain values up to 20 long
macro_rules! params {
	($($t:ident $i:tt),+) => {
		impl<$($t: DeviceRepr),+> Params for ($($t,)+) {
			fn addresses(&self) -> Vec<*mut c_void> {
				vec![$(&self.$i as *const $t as *mut c_void),+]
			}
		}
	};
}
params!(A 0);
params!(A 0, B 1);
params!(A 0, B 1, C 2);
params!(A 0, B 1, C 2, D 3);
params!(A 0, B 1, C 2, D 3, E 4);
params!(A 0, B 1, C 2, D 3, E 4, F 5);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R 17);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R 17, S 18);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R 17, S 18, T 19);

/// a kernel launch on a pipeline's stream: `grid` blocks of `block` threads, `smem` bytes of
/// dynamic shared memory each (the kernel is allowed them once, [`Gpu::allow_smem`]), in clusters
/// of `cluster` blocks along x (1: none)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Launch {
	pub grid: (u32, u32, u32),
	pub block: (u32, u32, u32),
	pub smem: u32,
	pub cluster: u32,
}

impl From<LaunchConfig> for Launch {
	fn from(cfg: LaunchConfig) -> Self {
		Launch {
			grid: cfg.grid_dim,
			block: cfg.block_dim,
			smem: cfg.shared_mem_bytes,
			cluster: 1,
		}
	}
}

impl Launch {
	/// the driver's configuration of the launch on `gpu`'s stream; `attr` holds the cluster
	/// attribute it points to
	fn config(&self, gpu: &Gpu, attr: &mut sys::CUlaunchAttribute) -> sys::CUlaunchConfig {
		attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
			x: self.cluster,
			y: 1,
			z: 1,
		};
		sys::CUlaunchConfig {
			gridDimX: self.grid.0,
			gridDimY: self.grid.1,
			gridDimZ: self.grid.2,
			blockDimX: self.block.0,
			blockDimY: self.block.1,
			blockDimZ: self.block.2,
			sharedMemBytes: self.smem,
			hStream: gpu.stream.cu_stream(),
			attrs: attr,
			numAttrs: (self.cluster > 1) as u32,
		}
	}

	/// how many clusters of this launch's shape kernel `name` runs at once on the device (SMs of
	/// a cluster share a GPC), asked of the driver once per kernel and shape
	pub fn clusters_fit(&self, gpu: &Gpu, name: &str) -> Result<u32, Error> {
		let key = (self.block.0 * self.block.1 * self.block.2, self.smem as usize, self.cluster);
		gpu.occupancy(name, key, |f| {
			let probe = Launch {
				grid: (self.cluster, 1, 1),
				..*self
			};
			// SAFETY: a plain C struct (an id and a union of plain values), valid all zero
			let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
			let cfg = probe.config(gpu, &mut attr);
			let mut fit = 0;
			// SAFETY: `cfg` points to `attr`, alive here
			check(
				unsafe { sys::cuOccupancyMaxActiveClusters(&mut fit, f.cu_function(), &cfg) },
				"cuOccupancyMaxActiveClusters",
			)?;
			Ok(fit.max(0) as u32)
		})
	}

	/// launches kernel `name` with `params` on `gpu`'s stream
	///
	/// # Safety
	/// `params` must match the kernel's parameter list
	pub unsafe fn run(&self, gpu: &Gpu, name: &str, params: &impl Params) -> Result<(), Error> {
		let f = gpu.function(name)?;
		point(Fault::Launch, || format!("launch of {name}"))?;
		if self.smem > 0 {
			gpu.allow_smem(name, self.smem as usize)?;
		}
		// SAFETY: a plain C struct (an id and a union of plain values), valid all zero
		let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
		let cfg = self.config(gpu, &mut attr);
		let mut addresses = params.addresses();
		gpu.ctx.bind_to_thread().map_err(driver)?;
		// SAFETY: `cfg` points to `attr`, alive here; the caller vouches for `params`, whose
		// values outlive the call
		let status = unsafe { sys::cuLaunchKernelEx(&cfg, f.cu_function(), addresses.as_mut_ptr(), std::ptr::null_mut()) };
		check(status, &format!("launch of {name}"))
	}
}

/// a driver status as a result
fn check(status: CUresult, what: &str) -> Result<(), Error> {
	match status {
		CUresult::CUDA_SUCCESS => Ok(()),
		other => Err(match driver(cudarc::driver::DriverError(other)) {
			Error::Gpu { reason } => Error::gpu(format!("{what}: {reason}")),
			out_of_memory => out_of_memory,
		}),
	}
}

/// a zeroed device buffer of `len` elements owned by the caller (kept planes and statistics,
/// accurate scaling's bounds), freeing the scratch kept in unused slots when memory runs out
pub(crate) fn alloc<T: DeviceRepr + ValidAsZeroBits>(gpu: &Gpu, len: usize) -> Result<CudaSlice<T>, Error> {
	let what = || format!("{} bytes of GPU memory", len * size_of::<T>());
	gpu.freeing_scratch(what, || gpu.stream.alloc_zeros::<T>(len.max(1)))
}

/// the device address of `s`, for work on `gpu`'s stream
pub(crate) fn ptr<T>(gpu: &Gpu, s: &CudaSlice<T>) -> DevPtr<T> {
	DevPtr::new(s.device_ptr(&gpu.stream).0)
}

/// a grid-stride launch over `len` elements: blocks of 256 threads, at most 16 per SM
pub(crate) fn elementwise(gpu: &Gpu, len: usize) -> LaunchConfig {
	LaunchConfig {
		grid_dim: (len.div_ceil(256).clamp(1, gpu.sm_count * 16) as u32, 1, 1),
		block_dim: (256, 1, 1),
		shared_mem_bytes: 0,
	}
}

/// launches `name` with the arguments (each passed by reference to a local that lives to the launch)
macro_rules! launch {
	($gpu:expr, $name:expr, $cfg:expr, $($arg:expr),* $(,)?) => {{
		let params = ($($arg,)*);
		// SAFETY: the kernels' parameter lists match these arguments (see cuda/*.cu)
		unsafe { $crate::gpu::runtime::launch::Launch::from($cfg).run($gpu, &$name, &params) }
	}};
}

/// `v` in a device buffer of its own
pub(crate) fn to_device<T: DeviceRepr>(gpu: &Gpu, v: &[T]) -> Result<CudaSlice<T>, Error> {
	point(Fault::Transfer, || format!("upload of {} bytes", size_of_val(v)))?;
	gpu.stream.clone_htod(v).map_err(driver)
}

/// the device buffer `s` on the host, once the work enqueued before has written it
pub(crate) fn to_host<T: DeviceRepr>(gpu: &Gpu, s: &CudaSlice<T>) -> Result<Vec<T>, Error> {
	point(Fault::Transfer, || format!("download of {} bytes", s.len() * size_of::<T>()))?;
	gpu.stream.clone_dtoh(s).map_err(driver)
}
