//! the C ABI touches no GPU but its stream's: a process whose first call runs on GPU 1 makes no
//! context on GPU 0 (an MPI rank, or a process under `EXCLUSIVE_PROCESS` that owns GPU 1 alone).
//! Alone in its binary, so that its call is the process's first
//!
//! this test needs two NVIDIA GPUs: it is ignored otherwise (run it with `--include-ignored`); on
//! a machine with one GPU it says that it skipped

use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut, sys};
use emugemm_c::*;
use std::ffi::CStr;

/// whether GPU `ordinal`'s primary context is active (made by someone in this process)
fn active(ordinal: i32) -> bool {
	let (mut flags, mut on) = (0u32, 0i32);
	// SAFETY: plain driver calls on writable locals
	unsafe { sys::cuDevicePrimaryCtxGetState(ordinal, &mut flags, &mut on) }
		.result()
		.expect("the context's state");
	on != 0
}

#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn a_call_on_gpu_1_makes_no_context_on_gpu_0() {
	if CudaContext::device_count().expect("the driver") < 2 {
		println!("skipped: one GPU here, the test needs two");
		return;
	}
	let gpu = CudaContext::new(1).expect("GPU 1");
	assert!(!active(0), "GPU 0's context is active before any call");
	let stream = gpu.new_stream().unwrap();
	let n = 300;
	let values: Vec<f64> = (0..n * n).map(|i| (i % 13) as f64 - 6.0).collect();
	let (a, mut c) = (stream.clone_htod(&values).unwrap(), stream.alloc_zeros::<f64>(n * n).unwrap());
	let (alpha, beta, size) = (1.0f64, 0.0f64, n as i64);
	let precision = EmugemmPrecision {
		kind: EmugemmPrecisionKind::F64 as i32,
		parameter: 0,
	};
	let (pa, pc) = (a.device_ptr(&stream).0 as *const f64, c.device_ptr_mut(&stream).0 as *mut f64);
	// SAFETY: n x n matrices in buffers of GPU 1, on a stream of its primary context
	let status = unsafe {
		emugemm_dgemm(
			0,
			1,
			size,
			size,
			size,
			&alpha,
			pa,
			size,
			pa,
			size,
			&beta,
			pc,
			size,
			0,
			stream.cu_stream().cast(),
			precision,
		)
	};
	// SAFETY: the library's own NUL-terminated string
	assert_eq!(
		status,
		EmugemmStatus::Success,
		"{}",
		unsafe { CStr::from_ptr(emugemm_last_error()) }.to_string_lossy()
	);
	stream.synchronize().unwrap();
	assert!(!active(0), "the call on GPU 1 made a context on GPU 0");
}
