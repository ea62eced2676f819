//! device buffers for the tests of products on device views: a stream, matrices padded to a
//! leading dimension, and their bytes up and down
#![cfg(feature = "cuda")]

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, sys};
use emugemm::{DeviceView, DeviceViewMut, Emulator, Error, PendingReport, Precision, Scalar};
use faer::{Mat, MatRef};
use std::sync::Arc;

/// a new stream on GPU 0
pub fn stream() -> Arc<CudaStream> {
	CudaContext::new(0)
		.unwrap_or_else(|e| panic!("these tests need a GPU: {e}"))
		.new_stream()
		.expect("a stream")
}

/// panics unless the CUDA driver loads kernels eagerly (the process started with
/// `CUDA_MODULE_LOADING=EAGER`): the lanes of queued products and graph replays exist only then,
/// and these tests would otherwise fail on the waited-for path. Call it after a context is made
pub fn require_eager_loading() {
	let mut mode = sys::CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING;
	// SAFETY: a writable local, the driver initialised
	unsafe { sys::cuModuleGetLoadingMode(&mut mode) }
		.result()
		.expect("the module loading mode");
	assert_eq!(
		mode,
		sys::CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING,
		"run these tests with CUDA_MODULE_LOADING=EAGER: under lazy loading the GPU has no lanes"
	);
}

/// `m` column-major with leading dimension `ld`, the rows past `m.nrows()` filled with `pad`
pub fn padded<T: Scalar>(m: MatRef<'_, T>, ld: usize, pad: T) -> Vec<T> {
	let mut v = vec![pad; ld * m.ncols()];
	for j in 0..m.ncols() {
		for i in 0..m.nrows() {
			v[i + j * ld] = m[(i, j)];
		}
	}
	v
}

/// `v` on the device, as bytes
pub fn upload<T: Scalar>(stream: &Arc<CudaStream>, v: &[T]) -> CudaSlice<u8> {
	stream.clone_htod(bytemuck::cast_slice::<T, u8>(v)).expect("an upload")
}

/// the elements of `T` of the device bytes `s`
pub fn download<T: Scalar>(stream: &Arc<CudaStream>, s: &CudaSlice<u8>) -> Vec<T> {
	let bytes = stream.clone_dtoh(s).expect("a download");
	bytes.chunks_exact(size_of::<T>()).map(bytemuck::pod_read_unaligned).collect()
}

/// `C = A B` at `precision` on `stream`, of the compact `n x n` matrices of `T` in the device bytes
/// `a`, `b` and `c`: the call's pending report
pub fn square_product<T: Scalar>(
	emu: &Emulator,
	stream: &Arc<CudaStream>,
	(a, b, c): (&CudaSlice<u8>, &CudaSlice<u8>, &mut CudaSlice<u8>),
	n: usize,
	precision: Precision,
) -> Result<PendingReport, Error> {
	// SAFETY: each buffer holds n * n elements of T
	let (a, b, mut c) = unsafe {
		(
			a.transmute::<T>(n * n).unwrap(),
			b.transmute::<T>(n * n).unwrap(),
			c.transmute_mut::<T>(n * n).unwrap(),
		)
	};
	let (av, bv) = (DeviceView::new(&a, (n, n), n).unwrap(), DeviceView::new(&b, (n, n), n).unwrap());
	let cv = DeviceViewMut::new(&mut c, (n, n), n).unwrap();
	let (one, zero) = (T::from_parts(1.0, 0.0), T::from_parts(0.0, 0.0));
	emu.gemm_on_stream(cv, one, (av, bv), zero, (precision, stream.into()))
}

/// the `n x n` column-major matrix of `T` in the device bytes `c`
pub fn square_download<T: Scalar>(stream: &Arc<CudaStream>, c: &CudaSlice<u8>, n: usize) -> Mat<T> {
	let v = download::<T>(stream, c);
	Mat::from_fn(n, n, |i, j| v[i + j * n])
}
