//! the panels of a tiled product on one pipeline: rows of `A` and columns of `B` over all of K,
//! uploaded from host matrices through rings of two device buffers (the panels of `B` that every
//! pipeline needs shared out between them, GPU to GPU), or read in place from device matrices

use crate::gpu::product::footprint::split;
use crate::gpu::product::job::DeviceOperand;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fault_points::{Fault, point};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::transfer::exchange::Exchange;
use crate::gpu::transfer::matrix::DeviceMatrix;
use crate::view::View;
use crate::{Error, Scalar};
use cudarc::driver::{CudaEvent, CudaStream};
use std::ops::Range as Span;
use std::sync::Arc;

/// the rows and columns of a block of a matrix
type Block = (Span<usize>, Span<usize>);

/// two device buffers that the panels of one operand take turns in, uploaded on a stream of their
/// own: a panel's transfer overlaps the compute stream's work on the panel before it. A panel that
/// every pipeline needs is shared out: each uploads a piece of its columns and copies the others'
/// pieces from their buffers, GPU to GPU
pub(crate) struct Ring {
	at: [DevPtr<u8>; 2],
	up: Arc<CudaStream>,
	chunk: usize,
	next: usize,
	/// per buffer: the panel it holds
	held: [Option<Block>; 2],
	/// per buffer: what its next upload waits for, the compute stream's reads of it and the
	/// other pipelines' copies out of it
	readers: [Vec<Arc<CudaEvent>>; 2],
	/// the buffer of the panel last handed out
	used: Option<usize>,
}

impl Ring {
	/// a ring in scratch slots `slots`, for panels of up to `bytes`
	pub(crate) fn new(gpu: &Gpu, slots: [Slot; 2], bytes: usize, chunk: usize) -> Result<Self, Error> {
		Ok(Ring {
			at: [gpu.scratch(slots[0], bytes)?, gpu.scratch(slots[1], bytes)?],
			up: gpu.ctx.new_stream().map_err(driver)?,
			chunk,
			next: 0,
			held: [None, None],
			readers: Default::default(),
			used: None,
		})
	}

	/// the panel `src` (named `key`) on the device, column-major, once the compute stream reaches
	/// it: where a buffer holds it already, that one. With `shared`, every pipeline of the exchange
	/// asks for the same panels in the same order, and each uploads its piece of the columns only
	pub(crate) fn panel<T: Scalar>(
		&mut self,
		gpu: &Gpu,
		(src, key): (View<'_, T>, Block),
		shared: Option<(&Exchange, usize)>,
		upload: &mut std::time::Duration,
	) -> Result<DevPtr<T>, Error> {
		if let Some(b) = (0..2).find(|&b| self.held[b].as_ref() == Some(&key)) {
			self.used = Some(b);
			return Ok(self.at[b].cast());
		}
		let (b, at) = (self.next, self.at[self.next]);
		self.next ^= 1;
		for reader in self.readers[b].drain(..) {
			self.up.wait(&reader).map_err(driver)?;
		}
		let (rows, size) = (src.nrows(), size_of::<T>());
		let offset = |cols: &Span<usize>| cols.start * rows * size;
		let count = shared.map_or(1, |(exchange, _)| exchange.count());
		let pieces = split(src.ncols(), count);
		let mine = &pieces[shared.map_or(0, |(_, me)| me)];
		let piece = src.subcols(mine.start, mine.len());
		*upload += gpu
			.staging
			.borrow_mut()
			.upload(&self.up, piece, at.byte_add(offset(mine)).cast(), self.chunk)?;
		let uploaded = Arc::new(event(gpu, &self.up)?);
		let ready = match shared {
			Some((exchange, me)) if count > 1 => {
				let all = exchange.exchange(me, (at, uploaded, gpu.ctx.clone()))?;
				for (cols, (theirs, uploaded, ctx)) in pieces.iter().zip(&all).filter(|(cols, _)| *cols != mine && !cols.is_empty()) {
					self.up.wait(uploaded).map_err(driver)?;
					// SAFETY: both buffers hold the panel's columns `cols` (the other pipeline's
					// uploaded, as the wait above orders); the other does not write its buffer
					// again before the event recorded after this copy
					unsafe {
						cudarc::driver::result::memcpy_peer_async(
							gpu.ctx.cu_ctx(),
							at.byte_add(offset(cols)).addr(),
							ctx.cu_ctx(),
							theirs.byte_add(offset(cols)).addr(),
							cols.len() * rows * size,
							self.up.cu_stream(),
						)
					}
					.map_err(driver)?;
				}
				let copied = Arc::new(event(gpu, &self.up)?);
				let all = exchange.exchange(me, copied.clone())?;
				self.readers[b].extend(all.into_iter().enumerate().filter(|&(e, _)| e != me).map(|(_, c)| c));
				copied
			},
			_ => uploaded,
		};
		gpu.stream.wait(&ready).map_err(driver)?;
		(self.held[b], self.used) = (Some(key), Some(b));
		Ok(at.cast())
	}

	/// marks the compute stream's work so far as a reader of the panel last handed out
	pub(crate) fn read(&mut self, gpu: &Gpu) -> Result<(), Error> {
		if let Some(b) = self.used {
			self.readers[b].push(Arc::new(event(gpu, &gpu.stream)?));
		}
		Ok(())
	}
}

/// an event recorded on `stream` now
pub(crate) fn event(gpu: &Gpu, stream: &CudaStream) -> Result<CudaEvent, Error> {
	let event = gpu.ctx.new_event(None).map_err(driver)?;
	event.record(stream).map_err(driver)?;
	Ok(event)
}

/// an operand of a tiled product
#[derive(Clone, Copy)]
pub(crate) enum Operand<'a, T: Scalar> {
	/// a host matrix: its panels uploaded as the tiles need them
	Host(View<'a, T>),
	/// a device matrix split by rows over the product's pipelines, in their order
	Device(&'a DeviceMatrix<T>),
}

/// one pipeline's panels of one operand
pub(crate) enum PanelSource<'a, T: Scalar> {
	/// uploaded from the host matrix
	Host(View<'a, T>, Ring),
	/// on the device: column-major at `ptr` with leading dimension `ld`, its first row (of `A`)
	/// or column (of `B`) that of the operand's `first`; complete once `ready` is, where given
	Device {
		ptr: DevPtr<T>,
		ld: usize,
		first: usize,
		ready: Option<CudaEvent>,
	},
}

/// a pipeline's panels of a tiled product: rows of `A` and columns of `B`, over all of K
pub(crate) struct Panels<'a, T: Scalar> {
	pub a: PanelSource<'a, T>,
	pub b: PanelSource<'a, T>,
	/// the host time of the uploads
	pub upload: std::time::Duration,
}

impl<T: Scalar> Panels<'_, T> {
	/// rows `rows` of `A` (column-major)
	pub(crate) fn a(&mut self, gpu: &Gpu, k: usize, rows: &Span<usize>) -> Result<DeviceOperand<T>, Error> {
		let (ptr, cs) = match &mut self.a {
			PanelSource::Host(lhs, ring) => {
				let panel = (lhs.subrows(rows.start, rows.len()), (rows.clone(), 0..k));
				(ring.panel(gpu, panel, None, &mut self.upload)?, rows.len())
			},
			PanelSource::Device { ptr, ld, first, .. } => (ptr.add(rows.start - *first), *ld),
		};
		Ok(DeviceOperand::left(ptr, (rows.len(), k), cs.max(1)))
	}

	/// columns `cols` of `B` (column-major: K-major rows of `B^T`); every pipeline of `exchange`
	/// asks for the same panels in the same order
	pub(crate) fn b(&mut self, gpu: &Gpu, k: usize, cols: &Span<usize>, exchange: (&Exchange, usize)) -> Result<DeviceOperand<T>, Error> {
		let (ptr, rs) = match &mut self.b {
			PanelSource::Host(rhs, ring) => {
				let panel = (rhs.subcols(cols.start, cols.len()), (0..k, cols.clone()));
				(ring.panel(gpu, panel, Some(exchange), &mut self.upload)?, k)
			},
			PanelSource::Device { ptr, ld, first, ready } => {
				if let Some(ready) = ready.take() {
					gpu.stream.wait(&ready).map_err(driver)?;
				}
				(ptr.add((cols.start - *first) * *ld), *ld)
			},
		};
		Ok(DeviceOperand::right(ptr, (k, cols.len()), rs.max(1)))
	}

	/// waits for the uploads enqueued so far
	pub fn synchronize(&self) -> Result<(), Error> {
		for side in [&self.a, &self.b] {
			if let PanelSource::Host(_, ring) = side {
				ring.up.synchronize().map_err(driver)?;
			}
		}
		Ok(())
	}

	/// the compute stream's work so far read the panels last handed out
	pub(crate) fn read(&mut self, gpu: &Gpu) -> Result<(), Error> {
		for side in [&mut self.a, &mut self.b] {
			if let PanelSource::Host(_, ring) = side {
				ring.read(gpu)?;
			}
		}
		Ok(())
	}
}

impl<'a, T: Scalar> Panels<'a, T> {
	/// pipeline `me`'s panels of `lhs` and `rhs` (inner dimension `k`) for tiles of the row spans
	/// `rows` and the column spans `cols`: host operands through rings of two buffers each,
	/// transferred in chunks of `chunk` bytes; device ones where they are, `B` whole on every
	/// pipeline (its parts copied together where it is split)
	pub fn new(
		gpu: &Gpu,
		(lhs, rhs): (Operand<'a, T>, Operand<'a, T>),
		(rows, cols, k): (&[Span<usize>], &[Span<usize>], usize),
		chunk: usize,
		(exchange, me): (&Exchange, usize),
	) -> Result<Self, Error> {
		let size = size_of::<T>();
		let widest = |spans: &[Span<usize>]| spans.iter().map(Span::len).max().unwrap_or(0);
		let a = match lhs {
			Operand::Host(lhs) => PanelSource::Host(
				lhs,
				Ring::new(gpu, [Slot::StagedA, Slot::SecondA], (widest(rows) * k * size).max(1), chunk)?,
			),
			Operand::Device(lhs) => {
				let part = &lhs.parts[me];
				PanelSource::Device {
					ptr: part.ptr(gpu).cast(),
					ld: part.rows.len(),
					first: part.rows.start,
					ready: None,
				}
			},
		};
		let b = match rhs {
			Operand::Host(rhs) => PanelSource::Host(
				rhs,
				Ring::new(gpu, [Slot::StagedB, Slot::SecondB], (widest(cols) * k * size).max(1), chunk)?,
			),
			Operand::Device(rhs) if rhs.parts.len() == 1 => PanelSource::Device {
				ptr: rhs.parts[0].ptr(gpu).cast(),
				ld: k,
				first: 0,
				ready: None,
			},
			Operand::Device(rhs) => {
				let (ptr, ready) = gather(gpu, rhs, (exchange, me))?;
				PanelSource::Device {
					ptr,
					ld: k,
					first: 0,
					ready: Some(ready),
				}
			},
		};
		Ok(Panels {
			a,
			b,
			upload: std::time::Duration::ZERO,
		})
	}
}

/// the whole of `rhs`, split by rows over the pipelines of `exchange`, on pipeline `me` (scratch
/// slot 47, column-major): every part copied there, GPU to GPU, once the work its pipeline had
/// enqueued before is complete, on a stream of its own (the compute stream's work on `A` goes on
/// meanwhile); the event after the copies
pub(crate) fn gather<T: Scalar>(
	gpu: &Gpu,
	rhs: &DeviceMatrix<T>,
	(exchange, me): (&Exchange, usize),
) -> Result<(DevPtr<T>, CudaEvent), Error> {
	use cudarc::driver::sys;
	let (k, n, size) = (rhs.nrows(), rhs.ncols(), size_of::<T>());
	let whole = gpu.scratch(Slot::GatheredB, (k * n * size).max(1))?;
	let copies = gpu.ctx.new_stream().map_err(driver)?;
	let part = &rhs.parts[me];
	let written = Arc::new(event(gpu, &gpu.stream)?);
	let parts = exchange.exchange(me, (part.ptr(gpu), part.rows.clone(), written, gpu.ctx.clone()))?;
	for (ptr, rows, written, ctx) in parts.iter().filter(|p| !p.1.is_empty() && n > 0) {
		copies.wait(written).map_err(driver)?;
		let copy = sys::CUDA_MEMCPY3D_PEER {
			srcXInBytes: 0,
			srcY: 0,
			srcZ: 0,
			srcLOD: 0,
			srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
			srcHost: std::ptr::null(),
			srcDevice: ptr.addr(),
			srcArray: std::ptr::null_mut(),
			srcContext: ctx.cu_ctx(),
			srcPitch: rows.len() * size,
			srcHeight: n,
			dstXInBytes: rows.start * size,
			dstY: 0,
			dstZ: 0,
			dstLOD: 0,
			dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
			dstHost: std::ptr::null_mut(),
			dstDevice: whole.addr(),
			dstArray: std::ptr::null_mut(),
			dstContext: gpu.ctx.cu_ctx(),
			dstPitch: k * size,
			dstHeight: n,
			WidthInBytes: rows.len() * size,
			Height: n,
			Depth: 1,
		};
		// SAFETY: the source part holds `rows` x n elements (leading dimension rows), the
		// destination k x n; the part is not written while the product holds the matrix
		point(Fault::Transfer, || "copy of a panel between GPUs".into())?;
		unsafe { sys::cuMemcpy3DPeerAsync(&copy, copies.cu_stream()) }
			.result()
			.map_err(driver)?;
	}
	Ok((whole.cast(), event(gpu, &copies)?))
}
