//! how the CUDA driver's errors become the crate's

use crate::Error;
use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

/// a driver error as an [`Error`], out-of-memory told apart
pub(crate) fn driver(e: DriverError) -> Error {
	if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
		Error::OutOfMemory {
			what: "device memory".into(),
		}
	} else {
		Error::gpu(format!("CUDA driver: {e:?}"))
	}
}
