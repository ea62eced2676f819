//! device buffers for the tests of products on device views: a stream, matrices padded to a
//! leading dimension, and their bytes up and down
#![cfg(feature = "cuda")]

use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use emugemm::Scalar;
use faer::MatRef;
use std::sync::Arc;

/// a new stream on GPU 0
pub fn stream() -> Arc<CudaStream> {
	CudaContext::new(0)
		.unwrap_or_else(|e| panic!("these tests need a GPU: {e}"))
		.new_stream()
		.expect("a stream")
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
