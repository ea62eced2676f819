//! views of device memory the crate does not own (feature `cuda`): a cudarc buffer or a raw
//! device pointer read as a column-major matrix (rows, columns, leading dimension), transposed or
//! conjugated where asked, and the stream a product on them runs on. Products on them:
//! [`crate::Emulator::gemm_on_stream`]

use crate::{Error, Scalar};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop, sys};
use std::marker::PhantomData;
use std::sync::Arc;

/// where a view's elements are: a cudarc buffer (its own stream is made to wait for the buffer's
/// pending writes before a product reads it), or a raw device address
#[derive(Clone, Copy)]
enum Source<'a, T> {
	Cudarc(&'a dyn DevicePtr<T>),
	Raw(u64),
}

/// a read-only column-major matrix in device memory the crate does not own, read as it is,
/// transposed ([`DeviceView::transpose`]), conjugated ([`DeviceView::conjugate`]) or both
/// ([`DeviceView::adjoint`]); the left or right operand of [`crate::Emulator::gemm_on_stream`]
///
/// Element `(i, j)` of the stored matrix is at `i + j * ld` elements from its start, as cuBLAS
/// reads a matrix with leading dimension `ld`.
///
/// # example
/// ```no_run
/// use cudarc::driver::CudaContext;
/// use emugemm::DeviceView;
/// let stream = CudaContext::new(0)?.default_stream();
/// let memory = stream.clone_htod(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// // a 2 x 3 matrix with leading dimension 2, read as its 3 x 2 transpose
/// let a = DeviceView::new(&memory, (2, 3), 2)?.transpose();
/// assert_eq!((a.nrows(), a.ncols()), (3, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T> {
	source: Source<'a, T>,
	layout: Layout,
	transposed: bool,
	conjugated: bool,
}

/// a column-major matrix in device memory the crate does not own, written in place: the
/// destination of [`crate::Emulator::gemm_on_stream`]
///
/// # example
/// ```no_run
/// use cudarc::driver::CudaContext;
/// use emugemm::DeviceViewMut;
/// let stream = CudaContext::new(0)?.default_stream();
/// let mut memory = stream.alloc_zeros::<f64>(10 * 4)?;
/// // the first 8 rows of a 10 x 4 matrix
/// let c = DeviceViewMut::new(&mut memory, (8, 4), 10)?;
/// assert_eq!((c.nrows(), c.ncols()), (8, 4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DeviceViewMut<'a, T> {
	source: MutSource<'a, T>,
	layout: Layout,
}

/// where a mutable view's elements are
enum MutSource<'a, T> {
	Cudarc(&'a mut dyn DevicePtrMut<T>),
	Raw(u64),
}

/// rows, columns and leading dimension of a stored column-major matrix
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
	rows: usize,
	cols: usize,
	ld: usize,
}

impl Layout {
	/// `(rows, cols)` with leading dimension `ld`, checked: `ld` at least `rows` (and 1), and
	/// the elements it reaches within `len` where the length is known
	fn checked<T>((rows, cols): (usize, usize), ld: usize, len: Option<usize>) -> Result<Layout, Error> {
		let invalid = |what: String| Error::InvalidLayout {
			reason: format!(
				"a {rows} x {cols} matrix of {} with leading dimension {ld}: {what}",
				std::any::type_name::<T>()
			),
		};
		if ld < rows.max(1) {
			return Err(invalid(format!("the leading dimension is below max(rows, 1) = {}", rows.max(1))));
		}
		let reach = if rows == 0 || cols == 0 {
			Some(0)
		} else {
			(cols - 1).checked_mul(ld).and_then(|x| x.checked_add(rows))
		};
		let reach = reach.ok_or_else(|| invalid("its extent overflows".into()))?;
		reach
			.checked_mul(size_of::<T>())
			.filter(|&bytes| bytes <= isize::MAX as usize)
			.ok_or_else(|| invalid("its extent overflows".into()))?;
		match len {
			Some(len) if len < reach => Err(invalid(format!("it reaches {reach} elements, the memory holds {len}"))),
			_ => Ok(Layout { rows, cols, ld }),
		}
	}
}

impl<'a, T: Scalar> DeviceView<'a, T> {
	/// the `rows x cols` column-major matrix with leading dimension `ld` at the start of
	/// `memory` (a cudarc `CudaSlice`, `CudaView` or `CudaViewMut`); [`Error::InvalidLayout`] where
	/// `ld < max(rows, 1)` or the matrix reaches past the memory's end
	///
	/// # example
	/// ```no_run
	/// use cudarc::driver::CudaContext;
	/// let stream = CudaContext::new(0)?.default_stream();
	/// let memory = stream.alloc_zeros::<f32>(6)?;
	/// assert!(emugemm::DeviceView::new(&memory, (2, 3), 2).is_ok());
	/// assert!(emugemm::DeviceView::new(&memory, (2, 4), 2).is_err()); // 8 elements of 6
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn new(memory: &'a (impl DevicePtr<T> + 'a), shape: (usize, usize), ld: usize) -> Result<Self, Error> {
		Ok(DeviceView {
			source: Source::Cudarc(memory),
			layout: Layout::checked::<T>(shape, ld, Some(memory.len()))?,
			transposed: false,
			conjugated: false,
		})
	}

	/// the `rows x cols` column-major matrix with leading dimension `ld` at the device address
	/// `ptr` (a `CUdeviceptr`, a `cudaMalloc`'d pointer); [`Error::InvalidLayout`] where
	/// `ld < max(rows, 1)`
	///
	/// # Safety
	/// `ptr` must hold the `ld * (cols - 1) + rows` elements of `T` the matrix reaches, in memory
	/// of the primary context of the GPU whose stream the product runs on (as memory that the
	/// CUDA runtime, PyTorch or CuPy allocate is), readable for `'a` and not written by any
	/// stream until the product that reads it is complete in stream order
	///
	/// # example
	/// ```no_run
	/// use cudarc::driver::{CudaContext, DevicePtr};
	/// let stream = CudaContext::new(0)?.default_stream();
	/// let memory = stream.alloc_zeros::<f64>(16)?;
	/// let (ptr, _sync) = memory.device_ptr(&stream);
	/// // SAFETY: `memory` holds the 16 elements and outlives the view
	/// let a = unsafe { emugemm::DeviceView::<f64>::from_raw(ptr, (4, 4), 4) }?;
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub unsafe fn from_raw(ptr: u64, shape: (usize, usize), ld: usize) -> Result<Self, Error> {
		Ok(DeviceView {
			source: Source::Raw(ptr),
			layout: Layout::checked::<T>(shape, ld, None)?,
			transposed: false,
			conjugated: false,
		})
	}

	/// the same memory read transposed (cuBLAS's `CUBLAS_OP_T`)
	///
	/// # example
	/// ```no_run
	/// # let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
	/// # let memory = stream.alloc_zeros::<f64>(6)?;
	/// let a = emugemm::DeviceView::new(&memory, (2, 3), 2)?;
	/// assert_eq!(a.transpose().nrows(), 3);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn transpose(self) -> Self {
		DeviceView {
			transposed: !self.transposed,
			..self
		}
	}

	/// the same memory read conjugated (for real `T`, the view itself)
	///
	/// # example
	/// ```no_run
	/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
	/// // cudarc has no complex element type: complex memory is a view of its real parts
	/// let memory = stream.alloc_zeros::<f64>(12)?;
	/// // SAFETY: 12 f64 are 6 complex values
	/// let complex = unsafe { memory.transmute::<faer::c64>(6) }.unwrap();
	/// let z = emugemm::DeviceView::new(&complex, (2, 3), 2)?.conjugate();
	/// assert_eq!((z.nrows(), z.ncols()), (2, 3));
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn conjugate(self) -> Self {
		DeviceView {
			conjugated: T::IS_COMPLEX && !self.conjugated,
			..self
		}
	}

	/// the same memory read transposed and conjugated (cuBLAS's `CUBLAS_OP_C`)
	///
	/// # example
	/// ```no_run
	/// # let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
	/// # let memory = stream.alloc_zeros::<f64>(12)?;
	/// # let complex = unsafe { memory.transmute::<faer::c64>(6) }.unwrap();
	/// let z = emugemm::DeviceView::new(&complex, (2, 3), 2)?.adjoint();
	/// assert_eq!((z.nrows(), z.ncols()), (3, 2));
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn adjoint(self) -> Self {
		self.transpose().conjugate()
	}

	/// rows of the matrix as the view reads it
	///
	/// # example
	/// ```no_run
	/// # let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
	/// # let memory = stream.alloc_zeros::<f64>(6)?;
	/// assert_eq!(emugemm::DeviceView::new(&memory, (2, 3), 2)?.nrows(), 2);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn nrows(&self) -> usize {
		if self.transposed { self.layout.cols } else { self.layout.rows }
	}

	/// columns of the matrix as the view reads it
	///
	/// # example
	/// ```no_run
	/// # let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
	/// # let memory = stream.alloc_zeros::<f64>(6)?;
	/// assert_eq!(emugemm::DeviceView::new(&memory, (2, 3), 2)?.ncols(), 3);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn ncols(&self) -> usize {
		if self.transposed { self.layout.rows } else { self.layout.cols }
	}

	/// the view's address, for a product on the cudarc stream `caller` where it runs on one: a
	/// cudarc buffer makes `caller` wait for its pending writes, and the guard records the read
	/// when it drops (on a raw stream the caller orders its own work: the buffer's stream is
	/// asked only for the address)
	pub(crate) fn resolve(&self, caller: Option<&'a CudaStream>) -> (Borrowed<T>, Option<SyncOnDrop<'a>>) {
		let (addr, guard) = match (self.source, caller) {
			(Source::Cudarc(memory), Some(stream)) => {
				let (addr, guard) = memory.device_ptr(stream);
				(addr, Some(guard))
			},
			(Source::Cudarc(memory), None) => (memory.device_ptr(memory.stream()).0, None),
			(Source::Raw(addr), _) => (addr, None),
		};
		let borrowed = Borrowed {
			addr,
			layout: self.layout,
			transposed: self.transposed,
			conjugated: self.conjugated,
			_t: PhantomData,
		};
		(borrowed, guard)
	}
}

impl<'a, T: Scalar> DeviceViewMut<'a, T> {
	/// the `rows x cols` column-major matrix with leading dimension `ld` at the start of
	/// `memory` (a cudarc `CudaSlice` or `CudaViewMut`); [`Error::InvalidLayout`] where
	/// `ld < max(rows, 1)` or the matrix reaches past the memory's end
	///
	/// # example
	/// ```no_run
	/// use cudarc::driver::CudaContext;
	/// let stream = CudaContext::new(0)?.default_stream();
	/// let mut memory = stream.alloc_zeros::<f64>(6)?;
	/// assert!(emugemm::DeviceViewMut::new(&mut memory, (3, 2), 3).is_ok());
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn new(memory: &'a mut (impl DevicePtrMut<T> + 'a), shape: (usize, usize), ld: usize) -> Result<Self, Error> {
		let layout = Layout::checked::<T>(shape, ld, Some(memory.len()))?;
		Ok(DeviceViewMut {
			source: MutSource::Cudarc(memory),
			layout,
		})
	}

	/// the `rows x cols` column-major matrix with leading dimension `ld` at the device address
	/// `ptr`; [`Error::InvalidLayout`] where `ld < max(rows, 1)`
	///
	/// # Safety
	/// As [`DeviceView::from_raw`], and the memory must be writable, and neither read nor
	/// written by any other stream until the product that writes it is complete in stream order
	///
	/// # example
	/// ```no_run
	/// use cudarc::driver::{CudaContext, DevicePtrMut};
	/// let stream = CudaContext::new(0)?.default_stream();
	/// let mut memory = stream.alloc_zeros::<f64>(16)?;
	/// let (ptr, _sync) = memory.device_ptr_mut(&stream);
	/// // SAFETY: `memory` holds the 16 elements and outlives the view
	/// let c = unsafe { emugemm::DeviceViewMut::<f64>::from_raw(ptr, (4, 4), 4) }?;
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub unsafe fn from_raw(ptr: u64, shape: (usize, usize), ld: usize) -> Result<Self, Error> {
		Ok(DeviceViewMut {
			source: MutSource::Raw(ptr),
			layout: Layout::checked::<T>(shape, ld, None)?,
		})
	}

	/// rows
	///
	/// # example
	/// ```no_run
	/// # let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
	/// # let mut memory = stream.alloc_zeros::<f64>(6)?;
	/// assert_eq!(emugemm::DeviceViewMut::new(&mut memory, (3, 2), 3)?.nrows(), 3);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn nrows(&self) -> usize {
		self.layout.rows
	}

	/// columns
	///
	/// # example
	/// ```no_run
	/// # let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
	/// # let mut memory = stream.alloc_zeros::<f64>(6)?;
	/// assert_eq!(emugemm::DeviceViewMut::new(&mut memory, (3, 2), 3)?.ncols(), 2);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn ncols(&self) -> usize {
		self.layout.cols
	}

	/// the view's address, for a product on the cudarc stream `caller` where it runs on one (see
	/// [`DeviceView::resolve`])
	pub(crate) fn resolve<'s>(&'s mut self, caller: Option<&'s CudaStream>) -> (Borrowed<T>, Option<SyncOnDrop<'s>>) {
		let layout = self.layout;
		let (addr, guard) = match (&mut self.source, caller) {
			(MutSource::Cudarc(memory), Some(stream)) => {
				let (addr, guard) = memory.device_ptr_mut(stream);
				(addr, Some(guard))
			},
			(MutSource::Cudarc(memory), None) => {
				let own = memory.stream().clone();
				(memory.device_ptr_mut(&own).0, None)
			},
			(MutSource::Raw(addr), _) => (*addr, None),
		};
		let borrowed = Borrowed {
			addr,
			layout,
			transposed: false,
			conjugated: false,
			_t: PhantomData,
		};
		(borrowed, guard)
	}
}

/// a view resolved to its address, as the engine reads it: `layout` stored at `addr`, read
/// transposed and/or conjugated
#[derive(Clone, Copy, Debug)]
pub(crate) struct Borrowed<T> {
	pub addr: u64,
	layout: Layout,
	pub transposed: bool,
	pub conjugated: bool,
	_t: PhantomData<fn() -> T>,
}

impl<T> Borrowed<T> {
	/// the compact column-major `rows x cols` matrix at `addr`, read as stored (the engine's own
	/// workspace)
	pub fn compact(addr: u64, (rows, cols): (usize, usize)) -> Self {
		Borrowed {
			addr,
			layout: Layout {
				rows,
				cols,
				ld: rows.max(1),
			},
			transposed: false,
			conjugated: false,
			_t: PhantomData,
		}
	}

	/// the column-major `rows x cols` matrix at `addr` with leading dimension `ld`, read as stored
	/// (an output of the engine's)
	pub fn strided(addr: u64, (rows, cols): (usize, usize), ld: usize) -> Self {
		Borrowed {
			layout: Layout { rows, cols, ld },
			..Borrowed::compact(addr, (rows, cols))
		}
	}

	/// the column-major `rows x cols` matrix at `addr` with leading dimension `ld`, read
	/// transposed (an operand of the engine's read where it lies)
	pub fn transposed(addr: u64, dims: (usize, usize), ld: usize) -> Self {
		Borrowed {
			transposed: true,
			..Borrowed::strided(addr, dims, ld)
		}
	}

	/// rows and columns of the stored matrix
	pub fn stored(&self) -> (usize, usize) {
		(self.layout.rows, self.layout.cols)
	}

	/// the stored matrix's leading dimension
	pub fn ld(&self) -> usize {
		self.layout.ld
	}

	/// whether the view reads its matrix as it is stored
	pub fn plain(&self) -> bool {
		!self.transposed && !self.conjugated
	}

	/// rows and columns as the view reads them
	pub fn dims(&self) -> (usize, usize) {
		let (rows, cols) = self.stored();
		if self.transposed { (cols, rows) } else { (rows, cols) }
	}
}

/// the CUDA stream a product on device views runs on, and its GPU: a cudarc stream, or a raw
/// `CUstream` (`cudaStream_t`) of the GPU's primary context, as PyTorch's, CuPy's and the CUDA
/// runtime's streams are
///
/// # example
/// ```no_run
/// use cudarc::driver::CudaContext;
/// let stream = CudaContext::new(0)?.new_stream()?;
/// let on: emugemm::Stream<'_> = (&stream).into();
/// // SAFETY: the legacy default stream of the current context
/// let default = unsafe { emugemm::Stream::from_raw(std::ptr::null_mut()) };
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct Stream<'a> {
	raw: sys::CUstream,
	cudarc: Option<&'a CudaStream>,
}

// SAFETY: a CUstream is a handle the driver lets any thread use
unsafe impl Send for Stream<'_> {}
// SAFETY: as above
unsafe impl Sync for Stream<'_> {}

impl<'a> From<&'a CudaStream> for Stream<'a> {
	fn from(stream: &'a CudaStream) -> Self {
		Stream {
			raw: stream.cu_stream(),
			cudarc: Some(stream),
		}
	}
}

impl<'a> From<&'a Arc<CudaStream>> for Stream<'a> {
	fn from(stream: &'a Arc<CudaStream>) -> Self {
		Stream::from(&**stream)
	}
}

impl Stream<'static> {
	/// the stream `raw` (null, `CU_STREAM_LEGACY` or `CU_STREAM_PER_THREAD`: that default stream
	/// of the calling thread's current context)
	///
	/// # Safety
	/// `raw` must be a live stream, or one of the default streams above, for as long as the value
	/// is used
	///
	/// # example
	/// ```no_run
	/// // SAFETY: the per-thread default stream
	/// let s = unsafe { emugemm::Stream::from_raw(2 as cudarc::driver::sys::CUstream) };
	/// ```
	pub unsafe fn from_raw(raw: sys::CUstream) -> Self {
		Stream { raw, cudarc: None }
	}
}

impl<'a> Stream<'a> {
	/// the raw handle
	pub(crate) fn raw(&self) -> sys::CUstream {
		self.raw
	}

	/// the cudarc stream, where it is one
	pub(crate) fn cudarc(&self) -> Option<&'a CudaStream> {
		self.cudarc
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn layouts_hold_their_rows_and_columns() {
		let ok = |shape, ld, len| Layout::checked::<f64>(shape, ld, len).is_ok();
		assert!(ok((4, 3), 4, Some(12)));
		assert!(ok((4, 3), 6, Some(16)), "the last column needs only its rows");
		assert!(!ok((4, 3), 6, Some(15)));
		assert!(!ok((4, 3), 3, None), "a leading dimension below the rows");
		assert!(!ok((0, 3), 0, None), "a leading dimension of at least 1");
		assert!(ok((0, 3), 1, Some(0)) && ok((3, 0), 3, Some(0)), "empty matrices reach nothing");
		assert!(!ok((2, usize::MAX), 2, None), "an extent that overflows");
		assert!(!ok((1, 1 << 60), 1, None), "an extent whose bytes overflow");
	}

	#[test]
	fn ops_compose_as_cublas_reads_them() {
		// SAFETY: a view never resolved or read
		let v = unsafe { DeviceView::<faer::c64>::from_raw(0x1000, (2, 3), 2) }.unwrap();
		let (b, _) = v.adjoint().resolve(None);
		assert_eq!((b.dims(), b.transposed, b.conjugated), ((3, 2), true, true));
		let (b, _) = v.adjoint().transpose().resolve(None);
		assert_eq!((b.dims(), b.transposed, b.conjugated, b.plain()), ((2, 3), false, true, false));
		let (b, _) = v.adjoint().adjoint().resolve(None);
		assert!(b.plain());
		// SAFETY: as above
		let r = unsafe { DeviceView::<f64>::from_raw(0x1000, (2, 3), 2) }.unwrap();
		assert!(
			r.conjugate().resolve(None).0.plain(),
			"a real view read conjugated is the view itself"
		);
	}
}
