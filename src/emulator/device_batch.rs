//! the front door of batches of products on device memory the crate does not own (feature
//! `cuda`): pointer-array and strided batches as slices of device views, on a caller's stream

use super::Emulator;
use crate::shape::check_shapes;
use crate::{DeviceView, DeviceViewMut, Error, Precision, Report, Scalar, Stream};

impl Emulator {
	/// `c[i] = alpha op(a[i]) op(b[i]) + beta c[i]` for every product of a batch, at
	/// `precision`, with [`Emulator::gemm_on_stream`]'s semantics, on the GPU of `stream`: a
	/// cuBLAS pointer-array batch (`cublasGemmBatchedEx`) is one view per matrix, a strided batch
	/// (`cublasGemmStridedBatchedEx`) views at the stride's offsets. Products may differ in shape.
	/// Each product is planned and certified on its own terms, with the plan and report
	/// [`Emulator::gemm_on_stream`] gives it alone; an emulated product is bit for bit what that
	/// call writes. A product computed natively in a cuBLAS batched GEMM (below) has that GEMM's
	/// bits, which cuBLAS does not promise equal to its single GEMM's: they can differ from the
	/// single call's in the last bits (both within the native product's error). The reports come
	/// back in the batch's order ([`Emulator::last_report`] holds the last one's).
	///
	/// Every shape is checked before anything runs: a batch whose lengths differ
	/// ([`Error::BatchLengths`]) or with one product whose shapes do not fit is an error that
	/// enqueues nothing. The products that the policy computes natively before reading their
	/// operands (real types, operands read as stored: small products at a target precision such
	/// as [`Precision::F64`]) run as one cuBLAS batched GEMM per shape and layout; the others run
	/// each as its own call computes it, side by side on up to four pipelines of the GPU (each
	/// with its own stream and workspace, within the context's device memory), so that products
	/// too small to fill the GPU share it; they share no launch. A destination met twice makes
	/// the whole batch run one product after another, in its order; otherwise, as in cuBLAS, no
	/// product's destination may overlap another product's operands or destination. The host
	/// waits where each product's call waits
	///
	/// # example
	/// ```no_run
	/// use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut};
	/// use emugemm::{DeviceView, DeviceViewMut, Emulator, Precision};
	/// let stream = CudaContext::new(0)?.new_stream()?;
	/// // a strided batch of 100 products of 32 x 32 matrices, 1024 elements apart
	/// let a = stream.clone_htod(&vec![1.0f64; 100 * 1024])?;
	/// let mut c = stream.alloc_zeros::<f64>(100 * 1024)?;
	/// let ((pa, _ra), (pc, _rc)) = (a.device_ptr(&stream), c.device_ptr_mut(&stream));
	/// let at = |base: u64, i: usize| base + (i * 1024 * 8) as u64;
	/// // SAFETY: the buffers hold the 100 matrices and outlive the views
	/// let lhs: Vec<_> = (0..100).map(|i| unsafe { DeviceView::<f64>::from_raw(at(pa, i), (32, 32), 32) }).collect::<Result<_, _>>()?;
	/// let mut dst: Vec<_> = (0..100).map(|i| unsafe { DeviceViewMut::<f64>::from_raw(at(pc, i), (32, 32), 32) }).collect::<Result<_, _>>()?;
	/// let rhs: Vec<_> = lhs.iter().map(|v| v.transpose()).collect();
	/// let reports = Emulator::global().gemm_batch_on_stream(&mut dst, 1.0, (&lhs, &rhs), 0.0, (Precision::F64, (&stream).into()))?;
	/// assert_eq!(reports.len(), 100);
	/// # Ok::<(), Box<dyn std::error::Error>>(())
	/// ```
	pub fn gemm_batch_on_stream<T: Scalar>(
		&self,
		c: &mut [DeviceViewMut<'_, T>],
		alpha: T,
		(a, b): (&[DeviceView<'_, T>], &[DeviceView<'_, T>]),
		beta: T,
		(precision, stream): (Precision, Stream<'_>),
	) -> Result<Vec<Report>, Error> {
		let _context = self.device_door()?;
		if a.len() != c.len() || b.len() != c.len() {
			return Err(Error::BatchLengths {
				dst: c.len(),
				lhs: a.len(),
				rhs: b.len(),
			});
		}
		let precision = self.precision_for(precision);
		self.refused()?;
		crate::precision::validate(precision, T::MANTISSA_BITS).map_err(|reason| Error::InvalidPrecision { precision, reason })?;
		for ((c, a), b) in c.iter().zip(a).zip(b) {
			check_shapes((a.nrows(), a.ncols()), (b.nrows(), b.ncols()), Some((c.nrows(), c.ncols())))?;
		}
		let caller = stream.cudarc();
		let accum = super::device_views::accumulation(beta);
		// the guards of cudarc buffers record their use on `stream` when they drop, after the
		// products are enqueued
		let (mut products, mut guards) = (Vec::with_capacity(c.len()), Vec::new());
		for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
			let (lhs, lhs_use) = a.resolve(caller);
			let (rhs, rhs_use) = b.resolve(caller);
			let (dst, dst_use) = c.resolve(caller);
			guards.extend([lhs_use, rhs_use, dst_use].into_iter().flatten());
			products.push((dst, self.request(accum, (lhs, rhs), alpha, (precision, self.par))));
		}
		let start = std::time::Instant::now();
		let reports = crate::gpu::view_batch(&products, beta, stream)?;
		log::debug!("emugemm: a batch of {} products in {:?}", reports.len(), start.elapsed());
		if let Some(last) = reports.last() {
			self.publish(last.clone());
		}
		Ok(reports)
	}
}
