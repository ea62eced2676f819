//! the GPU side of [`Emulator`]: device-resident operands and products

use super::device::{Device, Gpu, gpu, gpu_at, pipelines};
use super::footprint;
use super::job::{Columns, DeviceOperand, How, Outcome, Output};
use super::matrix::DeviceMatrix;
use super::panels::Operand;
use super::pipeline::product;
use super::slot::Slot;
use super::staging::{self, Drain};
use super::tiled::{self, Sink};
use crate::emulator::{Settings, publish};
use crate::{Accum, Backend, Emulator, Error, PhaseTimes, Precision, Report, Scalar};
use faer::{MatMut, MatRef};
use std::time::{Duration, Instant};

impl Emulator {
	fn require_gpu(&self) -> Result<(), Error> {
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
		Ok(gpu()?.name.clone())
	}

	/// a copy of `a` in GPU memory, for repeated products (feature `cuda`, [`Backend::Gpu`])
	///
	/// # example
	/// ```no_run
	/// use emugemm::{Backend, Emulator};
	/// let emu = Emulator::with_backend(Backend::Gpu)?;
	/// let a = faer::Mat::<f64>::identity(4, 4);
	/// assert_eq!(emu.upload(a.as_ref())?.download()?, a);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn upload<T: Scalar>(&self, a: MatRef<'_, T>) -> Result<DeviceMatrix<T>, Error> {
		self.require_gpu()?;
		DeviceMatrix::upload(&self.gpus(), a, self.staging_buffers())
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

	/// `dst = alpha lhs rhs` ([`Accum::Replace`]) or `dst += alpha lhs rhs` ([`Accum::Add`]) with
	/// every operand in GPU memory (feature `cuda`, [`Backend::Gpu`])
	///
	/// # example
	/// ```no_run
	/// use emugemm::{Accum, Backend, Emulator, Precision};
	/// let emu = Emulator::with_backend(Backend::Gpu)?;
	/// let a = emu.upload(emugemm::testing::random_matrix::<f64>(64, 64, 1.0, 1).as_ref())?;
	/// let mut c = emu.zeros_on_device::<f64>(64, 64)?;
	/// emu.matmul_device(&mut c, Accum::Replace, &a, &a, 1.0, Precision::F64)?;
	/// println!("{}", emu.last_report().unwrap());
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn matmul_device<T: Scalar>(
		&self,
		dst: &mut DeviceMatrix<T>,
		accum: Accum,
		lhs: &DeviceMatrix<T>,
		rhs: &DeviceMatrix<T>,
		alpha: T,
		precision: Precision,
	) -> Result<(), Error> {
		self.require_gpu()?;
		let shapes_ok = lhs.ncols() == rhs.nrows() && (dst.nrows(), dst.ncols()) == (lhs.nrows(), rhs.ncols());
		if !shapes_ok {
			return Err(Error::ShapeMismatch {
				lhs: (lhs.nrows(), lhs.ncols()),
				rhs: (rhs.nrows(), rhs.ncols()),
				dst: Some((dst.nrows(), dst.ncols())),
			});
		}
		crate::precision::validate::<T>(precision)?;
		let start = Instant::now();
		let devices = pipelines(self.gpus());
		for (what, matrix) in [("destination", &*dst), ("left operand", lhs), ("right operand", rhs)] {
			if matrix.devices() != devices {
				return Err(Error::Placement {
					reason: format!(
						"the {what} lies on GPUs {:?}, this context runs on {:?}: use matrices this context uploaded",
						matrix.devices().iter().map(|d| d.0).collect::<Vec<_>>(),
						self.gpus()
					),
				});
			}
		}
		let (m, k, n) = (lhs.nrows(), lhs.ncols(), rhs.ncols());
		dst.forget();
		let budget = self.device_budget(&devices)?;
		let resident = |share: usize| size_of::<T>() * (share * k + k * n + share * n);
		if devices.len() == 1 && footprint::footprint::<T>((m, n, k)) + resident(m) <= budget {
			let mut outcome = in_place(dst, (lhs, rhs), (accum, alpha), How::plain(precision, self.settings()))?;
			outcome.times.total = start.elapsed();
			let times = outcome.times;
			publish(self, outcome.report::<T>((m, n, k), times));
			return Ok(());
		}
		// over several GPUs (`B` whole on each), or larger than the memory left: in tiles
		let share = m.div_ceil(devices.len());
		let gathered = if devices.len() > 1 { k * n * size_of::<T>() } else { 0 };
		let tile = budget
			.checked_sub(resident(share) + gathered)
			.and_then(|left| footprint::tile::<T>((share, n, k), left))
			.ok_or_else(|| too_large::<T>((m, n, k), budget))?;
		let operands = (Operand::Device(lhs), Operand::Device(rhs));
		let (outcome, tiles) = tiled::tiled(
			&devices,
			operands,
			Sink::Device(dst),
			accum,
			alpha,
			(precision, self.settings()),
			tile,
		)?;
		let times = PhaseTimes {
			total: start.elapsed(),
			..outcome.times
		};
		publish(
			self,
			Report {
				tiles: Some(tiles),
				..outcome.report::<T>((m, n, k), times)
			},
		);
		Ok(())
	}

	/// the device memory a product may take on each of the pipelines `devices`: the context's
	/// setting, otherwise 90% of the GPU's memory, shared between the pipelines on one GPU
	fn device_budget(&self, devices: &[Device]) -> Result<usize, Error> {
		if let Some(bytes) = self.settings().device_memory {
			return Ok(bytes);
		}
		devices
			.iter()
			.map(|&(ordinal, _)| {
				let total = gpu_at((ordinal, 0))?.ctx.total_mem().map_err(super::device::driver)?;
				Ok(total / 10 * 9 / devices.iter().filter(|d| d.0 == ordinal).count())
			})
			.collect::<Result<Vec<usize>, Error>>()
			.map(|budgets| budgets.into_iter().min().unwrap_or_default())
	}

	/// a host product on the GPU (see [`Emulator::staged`])
	pub(crate) fn matmul_staged<T: Scalar>(
		&self,
		dst: MatMut<'_, T>,
		accum: Accum,
		lhs: MatRef<'_, T>,
		rhs: MatRef<'_, T>,
		alpha: T,
		precision: Precision,
	) -> Result<Report, Error> {
		let settings = self.settings();
		let shape = (lhs.nrows(), rhs.ncols(), lhs.ncols());
		let devices = pipelines(self.gpus());
		let budget = self.device_budget(&devices)?;
		let empty = shape.0 == 0 || shape.1 == 0;
		// over several GPUs, or larger than one: in tiles
		if !empty && (devices.len() > 1 || footprint::footprint::<T>(shape) > budget) {
			let (m, n, k) = shape;
			let tile = footprint::tile::<T>((m.div_ceil(devices.len()), n, k), budget).ok_or_else(|| too_large::<T>(shape, budget))?;
			let start = Instant::now();
			let operands = (Operand::Host(lhs), Operand::Host(rhs));
			let (outcome, tiles) = tiled::tiled(&devices, operands, Sink::Host(dst), accum, alpha, (precision, settings), tile)?;
			let times = PhaseTimes {
				total: start.elapsed(),
				..outcome.times
			};
			return Ok(Report {
				tiles: Some(tiles),
				..outcome.report::<T>(shape, times)
			});
		}
		self.staged(dst, accum, (lhs, rhs), |g, operands, dst| {
			in_core(g, operands, dst, alpha, (precision, settings))
		})
	}

	/// a host product on the GPU by `compute`: the operands (and for [`Accum::Add`] the
	/// destination) staged in chunks into device buffers kept between calls (scratch slots
	/// 40-42); `compute` stages the result back into `dst` and returns the host time it took
	pub(crate) fn staged<T: Scalar>(
		&self,
		dst: MatMut<'_, T>,
		accum: Accum,
		(lhs, rhs): (MatRef<'_, T>, MatRef<'_, T>),
		compute: impl FnOnce(&Gpu, (DeviceOperand, DeviceOperand, Output), MatMut<'_, T>) -> Result<(Outcome, Duration), Error>,
	) -> Result<Report, Error> {
		let start = Instant::now();
		let settings = self.settings();
		let chunk = settings.staging_bytes;
		let g = gpu()?;
		let (m, k, n) = (lhs.nrows(), lhs.ncols(), rhs.ncols());
		let bytes = |rows: usize, cols: usize| (rows * cols * size_of::<T>()).max(1);
		let (da, db, dc) = (
			g.scratch(Slot::StagedA, bytes(m, k))?,
			g.scratch(Slot::StagedB, bytes(k, n))?,
			g.scratch(Slot::StagedC, bytes(m, n))?,
		);
		let mut upload = staging::upload(&g, lhs, da, chunk)?;
		upload += staging::upload(&g, rhs, db, chunk)?;
		if accum == Accum::Add {
			upload += staging::upload(&g, dst.as_ref(), dc, chunk)?;
		} else if k == 0 {
			// the native product of an empty inner dimension scales the destination by beta = 0
			// SAFETY: the slot holds m n elements
			unsafe { cudarc::driver::result::memset_d8_async(dc, 0, bytes(m, n), g.stream.cu_stream()) }.map_err(super::device::driver)?;
		}
		let a = DeviceOperand {
			ptr: da,
			rows: m,
			k,
			rs: 1,
			cs: m.max(1) as i64,
		};
		let b = DeviceOperand {
			ptr: db,
			rows: n,
			k,
			rs: k.max(1) as i64,
			cs: 1,
		};
		let out = Output {
			ptr: dc,
			ld: m.max(1),
			accumulate: accum == Accum::Add,
			remainder: 0,
		};
		let (outcome, download) = compute(&g, (a, b, out), dst)?;
		let times = PhaseTimes {
			upload,
			download,
			total: start.elapsed(),
			..outcome.times
		};
		Ok(outcome.report::<T>((m, n, k), times))
	}
}

/// the error of a product that does not fit even in tiles of the smallest size
fn too_large<T: Scalar>((m, n, k): (usize, usize, usize), budget: usize) -> Error {
	Error::OutOfMemory {
		what: format!(
			"a {m}x{n}x{k} product of {} in tiles of at least 64 x 64 within {budget} bytes of device memory",
			T::NAME
		),
	}
}

/// `dst = alpha A B (+ dst)` for operands staged whole at `a` and `b`, the output at `out`: in
/// [`tiled::column_tiles`], each downloaded into `dst` while the next computes (where the route computes
/// the output whole, downloaded whole). Returns the outcome and the host time of the download
fn in_core<T: Scalar>(
	gpu: &Gpu,
	(a, b, out): (DeviceOperand, DeviceOperand, Output),
	dst: MatMut<'_, T>,
	alpha: T,
	(precision, settings): (Precision, Settings),
) -> Result<(Outcome, std::time::Duration), Error> {
	let (m, n) = (a.rows, b.rows);
	let chunk = settings.staging_bytes;
	let count = tiled::column_tiles::<T>(m, n);
	if count == 1 {
		let outcome = product(gpu, a, b, out, alpha, How::plain(precision, settings), (None, None))?;
		return Ok((outcome, staging::download(gpu, out.ptr, dst, chunk)?));
	}
	let size = size_of::<T>();
	std::thread::scope(|scope| {
		let drain = Drain::start(scope, gpu, chunk)?;
		let mut rest = Some(dst);
		let mut send = |cols: std::ops::Range<usize>| -> Result<(), Error> {
			let (block, right) = rest.take().expect("columns handed on once, in order").split_at_col_mut(cols.len());
			rest = Some(right);
			drain.send(gpu, block, out.ptr + (cols.start * m * size) as u64)
		};
		let mut columns = Columns::new(count, &mut send);
		let how = How {
			columns: Some(&mut columns),
			..How::plain(precision, settings)
		};
		let outcome = product(gpu, a, b, out, alpha, how, (None, None))?;
		Ok((outcome, drain.finish(gpu)?))
	})
}

/// `dst = alpha lhs rhs (+ dst)` for device matrices on GPU 0 alone, whole, with what they keep
fn in_place<T: Scalar>(
	dst: &DeviceMatrix<T>,
	(lhs, rhs): (&DeviceMatrix<T>, &DeviceMatrix<T>),
	(accum, alpha): (Accum, T),
	how: How<'_>,
) -> Result<Outcome, Error> {
	let g = gpu()?;
	let (m, k, n) = (lhs.nrows(), lhs.ncols(), rhs.ncols());
	let a = DeviceOperand {
		ptr: lhs.ptr(&g),
		rows: m,
		k,
		rs: 1,
		cs: m.max(1) as i64,
	};
	let b = DeviceOperand {
		ptr: rhs.ptr(&g),
		rows: n,
		k,
		rs: k.max(1) as i64,
		cs: 1,
	};
	let out = Output {
		ptr: dst.ptr(&g),
		ld: m.max(1),
		accumulate: accum == Accum::Add,
		remainder: 0,
	};
	let (mut ka, mut kb) = (
		lhs.kept[0].lock().unwrap_or_else(|e| e.into_inner()),
		rhs.kept[1].lock().unwrap_or_else(|e| e.into_inner()),
	);
	let keep = (lhs.reuses().then_some(&mut *ka), rhs.reuses().then_some(&mut *kb));
	let outcome = product(&g, a, b, out, alpha, how, keep)?;
	g.stream.synchronize().map_err(super::device::driver)?;
	Ok(outcome)
}
