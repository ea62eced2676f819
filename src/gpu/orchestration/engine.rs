//! the GPU engine behind the front door ([`crate::Emulator`]): products of host matrices (staged
//! through page-locked buffers, in core or in tiles) and of device matrices, each computed by the
//! pipeline ([`crate::gpu::orchestration::pipeline`]) on one GPU or in tiles ([`crate::gpu::orchestration::tiled`]) over several

use crate::gpu::orchestration::pipeline::product;
use crate::gpu::orchestration::tiled::{self, Destination};
use crate::gpu::product::footprint;
use crate::gpu::product::job::{Columns, DeviceOperand, Outcome, Output, Terms};
use crate::gpu::runtime::context::{Device, Gpu, facts, gpu, pipelines};
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::transfer::matrix::DeviceMatrix;
use crate::gpu::transfer::panels::Operand;
use crate::native::HostRequest;
use crate::request::Request;
use crate::settings::Settings;
use crate::shape::Shape;
use crate::{Accum, Error, PhaseTimes, Report, Route, Scalar};
use faer::MatMut;
use std::time::Duration;

/// `Ok` where the destination, the left and the right operand (in that order) lie on the
/// pipelines `devices`, those of the context that runs the product; [`Error::Placement`] naming
/// the first that does not
pub(crate) fn placed<T: Scalar>(matrices: [&DeviceMatrix<T>; 3], devices: &[Device]) -> Result<(), Error> {
	for (what, matrix) in ["destination", "left operand", "right operand"].into_iter().zip(matrices) {
		if matrix.devices() != devices {
			return Err(Error::Placement {
				reason: format!(
					"the {what} lies on GPUs {:?}, this context runs on {:?}: use matrices this context uploaded",
					matrix.devices().iter().map(|d| d.0).collect::<Vec<_>>(),
					devices.iter().map(|d| d.0).collect::<Vec<_>>()
				),
			});
		}
	}
	Ok(())
}

/// a request on device matrices
pub(crate) type DeviceRequest<'a, T> = Request<T, &'a DeviceMatrix<T>>;

/// `request` (`dst = alpha lhs rhs (+ dst)`) of device matrices, in core on one GPU where it
/// fits, otherwise in tiles (over several GPUs, or out of core); shapes and precision checked by
/// the caller
pub(crate) fn device_product<T: Scalar>(dst: &mut DeviceMatrix<T>, request: DeviceRequest<'_, T>) -> Result<Report, Error> {
	let devices = pipelines(request.settings.devices.ordinals());
	let settings = for_gpus(request.settings, &devices)?;
	let request = Request { settings, ..request };
	let (lhs, rhs) = (request.lhs, request.rhs);
	placed([&*dst, lhs, rhs], &devices)?;
	let shape = request.shape;
	let Shape { m, n, k } = shape;
	dst.forget();
	let budget = device_budget(&settings, &devices)?;
	let resident = |share: usize| size_of::<T>() * (share * k + k * n + share * n);
	if devices.len() == 1 && footprint::footprint::<T>(shape) + resident(m) <= budget {
		let outcome = in_place(dst, &request)?;
		let times = outcome.times;
		return Ok(named(outcome.report::<T>(shape, times), settings));
	}
	// over several GPUs (`B` whole on each), or larger than the memory left: in tiles
	let share = m.div_ceil(devices.len());
	let gathered = if devices.len() > 1 { k * n * size_of::<T>() } else { 0 };
	let tile = budget
		.checked_sub(resident(share) + gathered)
		.and_then(|left| footprint::tile::<T>(Shape { m: share, ..shape }, left))
		.ok_or_else(|| too_large::<T>(shape, budget))?;
	let operands = (Operand::Device(lhs), Operand::Device(rhs));
	tiled::tiled(&devices, request.on(operands, shape), Destination::Device(dst), tile)
}

/// the device memory a product may take on each of the pipelines `devices`: the context's
/// setting, otherwise 90% of the GPU's memory, shared between the pipelines on one GPU
pub(crate) fn device_budget(settings: &Settings, devices: &[Device]) -> Result<usize, Error> {
	if let Some(bytes) = settings.device_memory {
		return Ok(bytes);
	}
	devices
		.iter()
		.map(|&(ordinal, _)| {
			let total = facts(ordinal)?.total_mem;
			Ok(total / 10 * 9 / devices.iter().filter(|d| d.0 == ordinal).count())
		})
		.collect::<Result<Vec<usize>, Error>>()
		.map(|budgets| budgets.into_iter().min().unwrap_or_default())
}

/// `request` (`dst = alpha lhs rhs (+ dst)`) of host matrices on the GPU: staged whole (see
/// [`staged`]) where the product fits one GPU, otherwise in tiles (over several GPUs, or out of
/// core)
pub(crate) fn host_product<T: Scalar>(dst: MatMut<'_, T>, request: HostRequest<'_, T>) -> Result<Report, Error> {
	let shape = request.shape;
	let devices = pipelines(request.settings.devices.ordinals());
	let settings = for_gpus(request.settings, &devices)?;
	let request = Request { settings, ..request };
	let budget = device_budget(&settings, &devices)?;
	let empty = shape.m == 0 || shape.n == 0;
	// over several GPUs, or larger than one: in tiles
	if !empty && (devices.len() > 1 || footprint::footprint::<T>(shape) > budget) {
		let share = Shape {
			m: shape.m.div_ceil(devices.len()),
			..shape
		};
		let tile = footprint::tile::<T>(share, budget).ok_or_else(|| too_large::<T>(shape, budget))?;
		let operands = (Operand::Host(request.lhs), Operand::Host(request.rhs));
		let report = tiled::tiled(&devices, request.on(operands, shape), Destination::Host(dst), tile)?;
		return Ok(named(report, settings));
	}
	let report = staged(&request, dst, |g, operands, dst| in_core(g, operands, dst, &request))?;
	Ok(named(report, settings))
}

/// `settings` as the GPUs `devices` run them: the portable path (and so the unfused pipeline)
/// where it is asked for or where one of the GPUs has no fused kernels
pub(crate) fn for_gpus(settings: Settings, devices: &[Device]) -> Result<Settings, Error> {
	let mut fused = true;
	for &device in devices {
		fused &= facts(device.0)?.fused;
	}
	let portable = settings.portable || !fused;
	Ok(Settings {
		portable,
		fused: settings.fused && !portable,
		..settings
	})
}

/// `report` naming the portable path where it ran
pub(crate) fn named(report: Report, settings: Settings) -> Report {
	let route = match report.route {
		Route::Unfused if settings.portable => Route::Portable,
		route => route,
	};
	Report { route, ..report }
}

/// a host `request` on the GPU by `compute`: the operands (and, where the request adds, the
/// destination) staged in chunks into device buffers kept between calls (the scratch slots
/// [`Slot::StagedA`], [`Slot::StagedB`], [`Slot::StagedC`]); `compute` stages the result back
/// into `dst` and returns the host time it took
pub(crate) fn staged<T: Scalar>(
	request: &HostRequest<'_, T>,
	dst: MatMut<'_, T>,
	compute: impl FnOnce(&Gpu, (DeviceOperand<T>, DeviceOperand<T>, Output<T>), MatMut<'_, T>) -> Result<(Outcome, Duration), Error>,
) -> Result<Report, Error> {
	let Request { lhs, rhs, accum, .. } = *request;
	let chunk = request.settings.staging_bytes;
	let g = gpu()?;
	let _code = g.using(&request.settings);
	let (m, k, n) = (lhs.nrows(), lhs.ncols(), rhs.ncols());
	let bytes = |rows: usize, cols: usize| (rows * cols * size_of::<T>()).max(1);
	let (da, db, dc) = (
		g.scratch(Slot::StagedA, bytes(m, k))?.cast::<T>(),
		g.scratch(Slot::StagedB, bytes(k, n))?.cast::<T>(),
		g.scratch(Slot::StagedC, bytes(m, n))?.cast::<T>(),
	);
	let size = size_of::<T>();
	let staged = size * (m * k + k * n + if accum == Accum::Add { m * n } else { 0 });
	log::debug!("emugemm: staging {staged} bytes to the GPU and {} back", size * m * n);
	let mut upload = g.upload(lhs, da, chunk)?;
	upload += g.upload(rhs, db, chunk)?;
	if accum == Accum::Add {
		upload += g.upload(dst.as_ref(), dc, chunk)?;
	} else if k == 0 {
		// the native product of an empty inner dimension scales the destination by beta = 0
		// SAFETY: the slot holds m n elements
		unsafe { cudarc::driver::result::memset_d8_async(dc.addr(), 0, bytes(m, n), g.stream.cu_stream()) }.map_err(driver)?;
	}
	let a = DeviceOperand::left(da, (m, k), m.max(1));
	let b = DeviceOperand::right(db, (k, n), k.max(1));
	let out = Output {
		ptr: dc,
		ld: m.max(1),
		accumulate: accum == Accum::Add,
		remainder: None,
		// a host update's product computes every tile: its output downloads in column tiles, a
		// path whose triangle offsets no GPU test has covered yet
		triangle: None,
	};
	let (outcome, download) = compute(&g, (a, b, out), dst)?;
	let times = PhaseTimes {
		upload,
		download,
		..outcome.times
	};
	Ok(outcome.report::<T>(Shape::new(m, n, k), times))
}

/// the error of a product that does not fit even in tiles of the smallest size
fn too_large<T: Scalar>(Shape { m, n, k }: Shape, budget: usize) -> Error {
	Error::OutOfMemory {
		what: format!(
			"a {m}x{n}x{k} product of {} in tiles of at least 64 x 64 within {budget} bytes of device memory",
			T::NAME
		),
	}
}

/// `request` (`dst = alpha A B (+ dst)`) for operands staged whole at `a` and `b`, the output at
/// `out`: in [`tiled::column_tiles`], each downloaded into `dst` while the next computes (where the
/// route computes the output whole, downloaded whole). Returns the outcome and the host time of
/// the download
fn in_core<T: Scalar>(
	gpu: &Gpu,
	(a, b, out): (DeviceOperand<T>, DeviceOperand<T>, Output<T>),
	mut dst: MatMut<'_, T>,
	request: &HostRequest<'_, T>,
) -> Result<(Outcome, std::time::Duration), Error> {
	let Request {
		alpha,
		precision,
		settings,
		..
	} = *request;
	let (m, n) = (a.rows, b.rows);
	let chunk = settings.staging_bytes;
	let count = tiled::column_tiles::<T>(m, n);
	// the operands are on the device: the host's cores are idle until the result comes back
	crate::fresh::claim(dst.as_mut());
	if count == 1 {
		let outcome = product(gpu, (a, b), out, alpha, Terms::plain(precision, settings), (None, None))?;
		return Ok((outcome, gpu.download(out.ptr, dst, chunk)?));
	}
	std::thread::scope(|scope| {
		let drain = gpu.start_drain(scope, chunk)?;
		let mut rest = Some(dst);
		let mut send = |cols: std::ops::Range<usize>| -> Result<(), Error> {
			let (block, right) = rest.take().expect("columns handed on once, in order").split_at_col_mut(cols.len());
			rest = Some(right);
			drain.send(block, out.ptr.add(cols.start * m))
		};
		let mut columns = Columns::new(count, &mut send);
		let terms = Terms {
			columns: Some(&mut columns),
			..Terms::plain(precision, settings)
		};
		let outcome = product(gpu, (a, b), out, alpha, terms, (None, None))?;
		Ok((outcome, gpu.finish_drain(drain)?))
	})
}

/// `request` (`dst = alpha lhs rhs (+ dst)`) for device matrices on GPU 0 alone, whole, with
/// what they keep
fn in_place<T: Scalar>(dst: &DeviceMatrix<T>, request: &DeviceRequest<'_, T>) -> Result<Outcome, Error> {
	let Request {
		lhs, rhs, accum, alpha, ..
	} = *request;
	let terms = Terms::plain(request.precision, request.settings);
	let g = gpu()?;
	let _code = g.using(&terms.settings);
	let (m, k, n) = (lhs.nrows(), lhs.ncols(), rhs.ncols());
	let a = DeviceOperand::left(lhs.ptr(&g), (m, k), m.max(1));
	let b = DeviceOperand::right(rhs.ptr(&g), (k, n), k.max(1));
	let out = Output {
		ptr: dst.ptr(&g),
		ld: m.max(1),
		accumulate: accum == Accum::Add,
		remainder: None,
		triangle: None,
	};
	let (mut ka, mut kb) = (
		lhs.resident[0].lock().unwrap_or_else(|e| e.into_inner()),
		rhs.resident[1].lock().unwrap_or_else(|e| e.into_inner()),
	);
	let keep = (lhs.reuses().then_some(&mut *ka), rhs.reuses().then_some(&mut *kb));
	let outcome = product(&g, (a, b), out, alpha, terms, keep)?;
	g.stream.synchronize().map_err(driver)?;
	Ok(outcome)
}
