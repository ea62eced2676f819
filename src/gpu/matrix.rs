//! matrices resident on the GPU, for repeated products without host transfers

use super::device::{Gpu, driver, gpu};
use crate::{Error, Scalar};
use cudarc::driver::{CudaSlice, DevicePtr};
use faer::{Mat, MatRef};
use std::marker::PhantomData;

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

	/// a zeroed `nrows x ncols` matrix on the GPU
	pub(crate) fn zeros(nrows: usize, ncols: usize) -> Result<Self, Error> {
		let g = gpu()?;
		let bytes = nrows
			.checked_mul(ncols)
			.and_then(|x| x.checked_mul(size_of::<T>()))
			.ok_or(Error::OutOfMemory {
				what: "matrix size overflows".into(),
			})?;
		let data = g.stream.alloc_zeros::<u8>(bytes.max(1)).map_err(|e| match driver(e) {
			Error::OutOfMemory { .. } => Error::OutOfMemory {
				what: format!("a {nrows}x{ncols} {} matrix ({bytes} bytes) on the GPU", T::NAME),
			},
			other => other,
		})?;
		Ok(DeviceMatrix {
			data,
			nrows,
			ncols,
			_t: PhantomData,
		})
	}

	/// a copy of `a` on the GPU (any strides; staged through a contiguous host buffer)
	pub(crate) fn upload(a: MatRef<'_, T>) -> Result<Self, Error> {
		let mut m = Self::zeros(a.nrows(), a.ncols())?;
		let host: Vec<T> = (0..a.ncols()).flat_map(|j| (0..a.nrows()).map(move |i| a[(i, j)])).collect();
		if !host.is_empty() {
			let g = gpu()?;
			g.stream
				.memcpy_htod(bytemuck::cast_slice::<T, u8>(&host), &mut m.data)
				.map_err(driver)?;
		}
		Ok(m)
	}

	/// a copy of the matrix on the host
	pub fn download(&self) -> Result<Mat<T>, Error> {
		let mut host = vec![T::from_parts(0.0, 0.0); self.nrows * self.ncols];
		if !host.is_empty() {
			let g = gpu()?;
			g.stream
				.memcpy_dtoh(&self.data, bytemuck::cast_slice_mut::<T, u8>(&mut host))
				.map_err(driver)?;
			g.stream.synchronize().map_err(driver)?;
		}
		Ok(Mat::from_fn(self.nrows, self.ncols, |i, j| host[i + j * self.nrows]))
	}

	/// the device address of the first element
	pub(crate) fn ptr(&self, gpu: &Gpu) -> u64 {
		self.data.device_ptr(&gpu.stream).0
	}
}
