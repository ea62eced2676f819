//! the GPU's part of the front door (feature `cuda`): operands uploaded to GPU memory and
//! matrices made there, for products of device matrices ([`Emulator::matmul_device`])

use super::Emulator;
use crate::Backend;
use crate::view::View;
use crate::{DeviceMatrix, Error, Scalar};
use faer::MatRef;
use faer::traits::Conjugate;

impl Emulator {
	pub(super) fn require_gpu(&self) -> Result<(), Error> {
		if self.backend() == Backend::Gpu {
			Ok(())
		} else {
			Err(Error::BackendUnavailable {
				backend: Backend::Gpu,
				reason: format!("this emulator runs on {:?}", self.backend()),
			})
		}
	}

	/// the name of the GPU this emulator runs on
	///
	/// # example
	/// ```no_run
	/// let emu = emugemm::Emulator::with_backend(emugemm::Backend::Gpu)?;
	/// println!("{}", emu.gpu_name()?);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn gpu_name(&self) -> Result<String, Error> {
		self.require_gpu()?;
		crate::gpu::name()
	}

	/// a copy of `a` in GPU memory, for repeated products (feature `cuda`, [`Backend::Gpu`]); a
	/// conjugated view (`z.conjugate()`, `z.adjoint()`) is uploaded conjugated
	///
	/// # example
	/// ```no_run
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::Gpu)?;
	/// let a = faer::Mat::<f64>::identity(4, 4);
	/// assert_eq!(emu.upload(a.as_ref())?.download()?, a);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn upload<T: Scalar, L: Conjugate<Canonical = T>>(&self, a: MatRef<'_, L>) -> Result<DeviceMatrix<T>, Error> {
		self.require_gpu()?;
		DeviceMatrix::upload(&self.gpus(), View::of(a), self.staging_buffers())
	}

	/// a zeroed `nrows x ncols` matrix in GPU memory (feature `cuda`, [`Backend::Gpu`]); an
	/// [`Error::OutOfMemory`] when it does not fit even once the scratch memory that earlier
	/// products kept is freed (as every device matrix's allocation does when memory runs out)
	///
	/// # example
	/// ```no_run
	/// use emugemm::{Backend, Emulator, Error};
	/// let emu = Emulator::with_backend(Backend::Gpu)?;
	/// assert!(matches!(emu.zeros_on_device::<f64>(1 << 20, 1 << 20), Err(Error::OutOfMemory { .. })));
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn zeros_on_device<T: Scalar>(&self, nrows: usize, ncols: usize) -> Result<DeviceMatrix<T>, Error> {
		self.require_gpu()?;
		DeviceMatrix::zeros(&self.gpus(), (nrows, ncols), self.staging_buffers())
	}
}
