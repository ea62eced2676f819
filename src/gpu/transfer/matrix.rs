//! matrices resident on the GPU, for repeated products without host transfers

use crate::gpu::runtime::context::{Device, Gpu, gpu_at, pipelines};
use crate::gpu::runtime::current::keeping_current;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::schemes::resident::Resident;
use crate::view::View;
use crate::{Error, Scalar};
use cudarc::driver::{CudaSlice, DevicePtr};
use faer::{Mat, MatMut};
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// a column-major matrix in GPU memory (leading dimension = rows); on a context over several GPUs
/// ([`crate::Emulator::on_gpus`]) split by rows over them, one block of rows each
///
/// made by [`crate::Emulator::upload`] or [`crate::Emulator::zeros_on_device`], multiplied by
/// [`crate::Emulator::matmul_device`], brought back by [`DeviceMatrix::download`]
///
/// # example
/// ```no_run
/// use emugemm::{Accum, Backend, Emulator, Precision};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let a = emugemm::testing::random_matrix::<f64>(256, 256, 1.0, 1);
/// let da = emu.upload(a.as_ref())?;
/// let mut dc = emu.zeros_on_device::<f64>(256, 256)?;
/// for _ in 0..10 {
///     emu.matmul_device(&mut dc, Accum::Add, (&da, &da), 1.0, Precision::F64)?;
/// }
/// let c = dc.download()?;
/// # Ok::<(), emugemm::Error>(())
/// ```
pub struct DeviceMatrix<T: Scalar> {
	/// the blocks of rows, one per pipeline of the context that made it, in its order
	pub(crate) parts: Vec<Part>,
	nrows: usize,
	ncols: usize,
	/// whether products keep this matrix's statistics and split planes for the next product
	reuse: AtomicBool,
	/// what is kept, as the left operand and as the right operand
	pub(crate) resident: [Mutex<Resident>; 2],
	/// the staging buffers' size of its transfers (the emulator's that made it)
	staging_bytes: usize,
	_t: PhantomData<T>,
}

impl<T: Scalar> DeviceMatrix<T> {
	/// rows
	pub fn nrows(&self) -> usize {
		self.nrows
	}

	/// columns
	pub fn ncols(&self) -> usize {
		self.ncols
	}

	/// `(rows, columns)`
	pub(crate) fn shape(&self) -> (usize, usize) {
		(self.nrows, self.ncols)
	}

	/// keep (`true`) or stop keeping (`false`, the default) this matrix's statistics and split
	/// planes between products: a matrix used again with the same explicit plan (or a precision
	/// that resolves to the same plan) is then not split again. costs the planes' memory: up to
	/// `p` bytes per element for `p` slices or moduli (3p for complex operands), per side
	///
	/// # example
	/// ```no_run
	/// use emugemm::{Accum, Backend, Emulator, Precision};
	/// let emu = Emulator::with_backend(Backend::Gpu)?;
	/// let a = emu.upload(emugemm::testing::random_matrix::<f64>(512, 512, 1.0, 1).as_ref())?;
	/// a.reuse_splits(true);
	/// let mut c = emu.zeros_on_device::<f64>(512, 512)?;
	/// for _ in 0..3 {
	///     emu.matmul_device(&mut c, Accum::Add, (&a, &a), 1.0, Precision::SchemeII { moduli: 16 })?; // splits `a` once per side
	/// }
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn reuse_splits(&self, on: bool) {
		self.reuse.store(on, Ordering::Relaxed);
		if !on {
			self.forget();
		}
	}

	/// whether products keep this matrix's splits
	pub(crate) fn reuses(&self) -> bool {
		self.reuse.load(Ordering::Relaxed)
	}

	/// drops what was kept (the contents changed, or reuse was switched off)
	pub(crate) fn forget(&self) {
		for k in &self.resident {
			*k.lock().unwrap_or_else(|e| e.into_inner()) = Resident::default();
		}
	}

	/// a zeroed `nrows x ncols` matrix split by rows over the pipelines of `ordinals`,
	/// transferred through staging buffers of `staging_bytes`
	pub(crate) fn zeros(ordinals: &[usize], (nrows, ncols): (usize, usize), staging_bytes: usize) -> Result<Self, Error> {
		let bytes = nrows
			.checked_mul(ncols)
			.and_then(|x| x.checked_mul(size_of::<T>()))
			.ok_or(Error::OutOfMemory {
				what: "matrix size overflows".into(),
			})?;
		let devices = pipelines(ordinals.iter().copied());
		// the allocations bind each GPU's context to this thread: the caller's comes back after
		let parts = keeping_current(None, || {
			devices
				.iter()
				.zip(crate::gpu::product::footprint::split(nrows, devices.len()))
				.map(|(&device, rows)| {
					let g = gpu_at(device)?;
					let bytes = rows.len() * ncols * size_of::<T>();
					let what = || {
						format!(
							"a {}x{ncols} block of a {nrows}x{ncols} {} matrix ({bytes} bytes) on GPU {}",
							rows.len(),
							T::NAME,
							device.0
						)
					};
					let data = g.freeing_scratch(what, || g.stream.alloc_zeros::<u8>(bytes.max(1)))?;
					Ok(Part { device, rows, data })
				})
				.collect::<Result<Vec<_>, Error>>()
		})?;
		debug_assert!(parts.iter().map(|p| p.rows.len() * ncols * size_of::<T>()).sum::<usize>() == bytes);
		Ok(DeviceMatrix {
			parts,
			nrows,
			ncols,
			reuse: AtomicBool::new(false),
			resident: Default::default(),
			staging_bytes,
			_t: PhantomData,
		})
	}

	/// a copy of `a` (any strides, conjugated where it is read conjugated) split by rows over the
	/// pipelines of `ordinals`, each block staged in chunks through buffers of `staging_bytes`,
	/// the blocks at once
	pub(crate) fn upload<'a>(ordinals: &[usize], a: impl Into<View<'a, T>>, staging_bytes: usize) -> Result<Self, Error> {
		let a = a.into();
		let m = Self::zeros(ordinals, (a.nrows(), a.ncols()), staging_bytes)?;
		m.each_part(|g, p| {
			let part = &m.parts[p];
			let block = a.subrows(part.rows.start, part.rows.len());
			g.upload(block, part.ptr(g).cast(), staging_bytes)?;
			g.stream.synchronize().map_err(driver)
		})?;
		Ok(m)
	}

	/// a copy of the matrix on the host, staged in chunks (the blocks of a matrix split over
	/// several GPUs at once)
	///
	/// # example
	/// ```no_run
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::Gpu)?;
	/// let a = faer::Mat::<f64>::identity(4, 4);
	/// assert_eq!(emu.upload(a.as_ref())?.download()?, a);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn download(&self) -> Result<Mat<T>, Error> {
		crate::fresh::mat(self.nrows, self.ncols, |mut rest| {
			let mut blocks: Vec<Mutex<Option<MatMut<'_, T>>>> = Vec::new();
			for part in &self.parts {
				let (block, below) = rest.split_at_row_mut(part.rows.len());
				blocks.push(Mutex::new(Some(block)));
				rest = below;
			}
			self.each_part(|g, p| {
				let part = &self.parts[p];
				let block = blocks[p].lock().unwrap_or_else(|e| e.into_inner()).take().expect("each part once");
				g.download(part.ptr(g).cast(), block, self.staging_bytes).map(|_| ())
			})
		})
	}

	/// `work` on every part (by index), each on its pipeline, at once
	fn each_part(&self, work: impl Fn(&Gpu, usize) -> Result<(), Error> + Sync) -> Result<(), Error> {
		std::thread::scope(|scope| {
			let threads: Vec<_> = self
				.parts
				.iter()
				.enumerate()
				.map(|(p, part)| {
					let work = &work;
					scope.spawn(move || work(&*gpu_at(part.device)?, p))
				})
				.collect();
			threads
				.into_iter()
				.try_for_each(|t| t.join().map_err(|_| Error::gpu("a GPU's thread panicked"))?)
		})
	}

	/// the pipelines the matrix is split over, in order
	pub(crate) fn devices(&self) -> Vec<Device> {
		self.parts.iter().map(|p| p.device).collect()
	}

	/// the device address of the first element of a matrix on one pipeline (panics on a matrix
	/// split over several: callers check [`DeviceMatrix::devices`])
	pub(crate) fn ptr(&self, gpu: &Gpu) -> DevPtr<T> {
		assert_eq!(self.parts.len(), 1, "a matrix on one GPU");
		self.parts[0].ptr(gpu).cast()
	}
}

/// one block of rows of a [`DeviceMatrix`], on one pipeline
pub(crate) struct Part {
	pub device: Device,
	/// the rows of the matrix it holds
	pub rows: Range<usize>,
	data: CudaSlice<u8>,
}

impl Part {
	/// the device address of the block's first element, for work on `gpu` (its pipeline),
	/// untyped: the matrix's element type is its owner's
	pub fn ptr(&self, gpu: &Gpu) -> DevPtr<u8> {
		DevPtr::new(self.data.device_ptr(&gpu.stream).0)
	}
}
