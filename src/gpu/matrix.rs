//! matrices resident on the GPU, for repeated products without host transfers

use super::device::{Gpu, driver, gpu};
use super::pipeline::Kept;
use super::staging;
use crate::{Error, Scalar};
use cudarc::driver::{CudaSlice, DevicePtr};
use faer::{Mat, MatRef};
use std::marker::PhantomData;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// a column-major matrix in GPU memory (leading dimension = rows)
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
///     emu.matmul_device(&mut dc, Accum::Add, &da, &da, 1.0, Precision::F64)?;
/// }
/// let c = dc.download()?;
/// # Ok::<(), emugemm::Error>(())
/// ```
pub struct DeviceMatrix<T: Scalar> {
	pub(crate) data: CudaSlice<u8>,
	nrows: usize,
	ncols: usize,
	/// whether products keep this matrix's statistics and split planes for the next product
	reuse: AtomicBool,
	/// what is kept, as the left operand and as the right operand
	pub(crate) kept: [Mutex<Kept>; 2],
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
	///     emu.matmul_device(&mut c, Accum::Add, &a, &a, 1.0, Precision::SchemeII { moduli: 16 })?; // splits `a` once per side
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
		for k in &self.kept {
			*k.lock().unwrap_or_else(|e| e.into_inner()) = Kept::default();
		}
	}

	/// a zeroed `nrows x ncols` matrix on the GPU, transferred through staging buffers of
	/// `staging_bytes`
	pub(crate) fn zeros(nrows: usize, ncols: usize, staging_bytes: usize) -> Result<Self, Error> {
		let g = gpu()?;
		let bytes = nrows
			.checked_mul(ncols)
			.and_then(|x| x.checked_mul(size_of::<T>()))
			.ok_or(Error::OutOfMemory {
				what: "matrix size overflows".into(),
			})?;
		let what = || format!("a {nrows}x{ncols} {} matrix ({bytes} bytes) on the GPU", T::NAME);
		let data = g.freeing_scratch(what, || g.stream.alloc_zeros::<u8>(bytes.max(1)))?;
		Ok(DeviceMatrix {
			data,
			nrows,
			ncols,
			reuse: AtomicBool::new(false),
			kept: Default::default(),
			staging_bytes,
			_t: PhantomData,
		})
	}

	/// a copy of `a` on the GPU (any strides), staged in chunks through buffers of
	/// `staging_bytes`
	pub(crate) fn upload(a: MatRef<'_, T>, staging_bytes: usize) -> Result<Self, Error> {
		let m = Self::zeros(a.nrows(), a.ncols(), staging_bytes)?;
		let g = gpu()?;
		staging::upload(&g, a, m.ptr(&g), staging_bytes)?;
		g.stream.synchronize().map_err(driver)?;
		Ok(m)
	}

	/// a copy of the matrix on the host, staged in chunks
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
		let mut host = Mat::zeros(self.nrows, self.ncols);
		let g = gpu()?;
		staging::download(&g, self.ptr(&g), host.as_mut(), self.staging_bytes)?;
		Ok(host)
	}

	/// the device address of the first element
	pub(crate) fn ptr(&self, gpu: &Gpu) -> u64 {
		self.data.device_ptr(&gpu.stream).0
	}
}
