//! the C ABI's contract on a GPU: a call that breaks it is refused with the status it gets
//! without a GPU, before anything is read or written, and the GPU's context serves the next call
//! as before; a call on a stream being captured into a CUDA graph, or on a stream of a context
//! that is not its GPU's primary one, is `NotAvailable`, writes nothing, and leaves the capture
//! and the caller's context as they were
//!
//! these tests need an NVIDIA GPU: they are ignored otherwise (run them with
//! `--include-ignored`; without a GPU they then fail, never pass)

mod common;

use common::gpu::{addr, stream};
use common::refusals::{Places, assert_all_refused};
use common::{C, DEVICE, F64, HOST, LOWER, N, T, last_error};
use cudarc::driver::{CudaContext, CudaStream, sys};
use emugemm_c::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Arc;

/// the order of the products here
const SIZE: usize = 48;

/// small integers, so that every product here is exact in `f64`
fn integers(len: usize, seed: usize) -> Vec<f64> {
	(0..len).map(|i| ((i * 7 + seed * 13) % 9) as f64 - 4.0).collect()
}

/// `C = A B` of `SIZE x SIZE` matrices, in column-major order
fn product(a: &[f64], b: &[f64]) -> Vec<f64> {
	let mut c = vec![0.0; SIZE * SIZE];
	for j in 0..SIZE {
		for i in 0..SIZE {
			c[i + j * SIZE] = (0..SIZE).map(|h| a[i + h * SIZE] * b[h + j * SIZE]).sum();
		}
	}
	c
}

/// asserts that `got` is `expected` to FP64 accuracy (the products here are of small integers)
fn assert_close(got: &[f64], expected: &[f64], what: &str) {
	assert_eq!(got.len(), expected.len(), "{what}");
	let worst = got.iter().zip(expected).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
	assert!(worst <= 1e-9, "{what}: off by {worst}");
}

/// `C = alpha A B + beta C` of `SIZE x SIZE` doubles at these addresses by `emugemm_dgemm` on
/// `stream`, `alpha` and `beta` where `mode` says
///
/// # Safety
/// as the entry point's
unsafe fn dgemm((a, b, c): (u64, u64, u64), (alpha, beta): (*const f64, *const f64), mode: i32, stream: *mut c_void) -> EmugemmStatus {
	let size = SIZE as i64;
	let (a, b, c) = (a as *const f64, b as *const f64, c as *mut f64);
	// SAFETY: the caller's promise
	unsafe { emugemm_dgemm(N, N, size, size, size, alpha, a, size, b, size, beta, c, size, mode, stream, F64) }
}

/// `status` is `NotAvailable`, with a message that holds `part`
fn not_available(status: EmugemmStatus, part: &str) {
	assert_eq!(status, EmugemmStatus::NotAvailable, "{part}: {}", last_error());
	assert!(last_error().contains(part), "{part}: {}", last_error());
}

/// `status` is `InvalidValue`, with a message that holds `part`
fn invalid(status: EmugemmStatus, part: &str) {
	assert_eq!(status, EmugemmStatus::InvalidValue, "{part}: {}", last_error());
	assert!(last_error().contains(part), "{part}: {}", last_error());
}

/// `A`, `B` and a `C` of a pattern on `stream`, each of `SIZE x SIZE` doubles
fn operands(stream: &Arc<CudaStream>) -> [cudarc::driver::CudaSlice<f64>; 3] {
	[1, 2, 3].map(|seed| stream.clone_htod(&integers(SIZE * SIZE, seed)).unwrap())
}

/// every call the contract refuses is refused on a GPU as without one (tests/arguments.rs), on
/// real device memory and a real stream, with nothing read or written
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bad_arguments_are_refused_as_without_a_gpu() {
	let stream = stream();
	let buffers = operands(&stream);
	let at = buffers.each_ref().map(|b| addr(b, &stream));
	assert_all_refused(&Places {
		a: at[0],
		b: at[1],
		c: at[2],
		stream: stream.cu_stream().cast(),
	});
	for (buffer, seed) in buffers.iter().zip(1..) {
		assert_eq!(
			stream.clone_dtoh(buffer).unwrap(),
			integers(SIZE * SIZE, seed),
			"nothing is written"
		);
	}
}

/// a product that would read a null or misaligned `A` or `B` (`alpha != 0`, from the host or the
/// device) is `InvalidValue`, writes nothing, and the next product on the same stream runs and is
/// right; with `alpha = 0` neither is read
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn null_operands_are_refused_and_the_context_goes_on() {
	let stream = stream();
	let buffers = operands(&stream);
	let [a, b, c] = buffers.each_ref().map(|buffer| addr(buffer, &stream));
	let on = stream.cu_stream().cast::<c_void>();
	let scalars = stream.clone_htod(&[1.0f64, 0.0]).unwrap();
	let (one, zero) = (1.0f64, 0.0f64);
	let host = (&one as *const f64, &zero as *const f64);
	let device = (addr(&scalars, &stream) as *const f64, (addr(&scalars, &stream) + 8) as *const f64);
	// SAFETY: every call is refused before it reads A or B; C and the scalars are as the mode says
	unsafe {
		invalid(dgemm((0, b, c), host, HOST, on), "A is null");
		invalid(dgemm((a, 0, c), host, HOST, on), "B is null");
		invalid(dgemm((a + 4, b, c), host, HOST, on), "not aligned to the 8 bytes");
		invalid(dgemm((0, b, c), device, DEVICE, on), "A is null");
		let alpha = 1.0f32;
		let status = emugemm_ssyrk(LOWER, T, 4, 4, &alpha, null(), 4, &alpha, c as *mut f32, 4, HOST, on, F64);
		invalid(status, "A is null");
		let (zalpha, zbeta) = (EmugemmComplex64 { re: 0.0, im: 1.0 }, EmugemmComplex64::default());
		let (za, zc) = (a as *const EmugemmComplex64, c as *mut EmugemmComplex64);
		let status = emugemm_zgemm_strided_batched(
			C,
			N,
			4,
			4,
			4,
			&zalpha,
			za,
			4,
			16,
			null(),
			4,
			16,
			&zbeta,
			zc,
			4,
			16,
			2,
			HOST,
			on,
			F64,
		);
		invalid(status, "B is null");
	}
	assert_eq!(
		stream.clone_dtoh(&buffers[2]).unwrap(),
		integers(SIZE * SIZE, 3),
		"nothing is written"
	);
	// SAFETY: the matrices lie in their buffers, the scalars where the mode says
	unsafe {
		assert_eq!(dgemm((a, b, c), device, DEVICE, on), EmugemmStatus::Success, "{}", last_error());
	}
	let expected = product(&integers(SIZE * SIZE, 1), &integers(SIZE * SIZE, 2));
	assert_close(&stream.clone_dtoh(&buffers[2]).unwrap(), &expected, "the next product");
	// SAFETY: alpha = 0 reads neither A nor B; C lies in its buffer
	unsafe {
		let three = 3.0f64;
		let status = dgemm((0, 0, c), (&zero, &three), HOST, on);
		assert_eq!(status, EmugemmStatus::Success, "{}", last_error());
	}
	let tripled: Vec<f64> = expected.iter().map(|x| 3.0 * x).collect();
	assert_close(&stream.clone_dtoh(&buffers[2]).unwrap(), &tripled, "C = beta C");
}

/// `result` succeeds, or the driver call `what` failed
fn driver(result: sys::CUresult, what: &str) {
	assert_eq!(result, sys::CUresult::CUDA_SUCCESS, "{what}");
}

/// a product on a stream being captured into a CUDA graph would wait on the host, which capture
/// forbids: it is `NotAvailable` at once, and the capture goes on, ends and runs as though the
/// call had not been made
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_capturing_stream_is_not_available_and_its_capture_goes_on() {
	let stream = stream();
	let buffers = operands(&stream);
	let [a, b, c] = buffers.each_ref().map(|buffer| addr(buffer, &stream));
	let mark = stream.alloc_zeros::<u32>(SIZE).unwrap();
	let marked = addr(&mark, &stream);
	let scalars = stream.clone_htod(&[1.0f64, 0.0]).unwrap();
	let device = (addr(&scalars, &stream) as *const f64, (addr(&scalars, &stream) + 8) as *const f64);
	stream.synchronize().unwrap();
	let raw = stream.cu_stream();
	let (one, zero) = (1.0f64, 0.0f64);
	let (mut graph, mut exec) = (null_mut(), null_mut());
	// SAFETY: a live stream, buffers that outlive the graph's launch; the capture is relaxed, so
	// that the other tests' threads may call the driver meanwhile
	unsafe {
		driver(
			sys::cuStreamBeginCapture_v2(raw, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED),
			"cuStreamBeginCapture",
		);
		driver(sys::cuMemsetD32Async(marked, 0x5eed, SIZE, raw), "a node captured before the call");
		not_available(dgemm((a, b, c), (&one, &zero), HOST, raw.cast()), "captured");
		not_available(dgemm((a, b, c), device, DEVICE, raw.cast()), "captured");
		driver(sys::cuStreamEndCapture(raw, &mut graph), "the capture ends");
		driver(sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0), "the graph instantiates");
		driver(sys::cuGraphLaunch(exec, raw), "the graph runs");
	}
	stream.synchronize().unwrap();
	assert!(
		stream.clone_dtoh(&mark).unwrap().iter().all(|&x| x == 0x5eed),
		"the captured node ran"
	);
	assert_eq!(
		stream.clone_dtoh(&buffers[2]).unwrap(),
		integers(SIZE * SIZE, 3),
		"nothing is written"
	);
	// SAFETY: the graph and its executable are this test's, no longer running
	unsafe {
		driver(sys::cuGraphExecDestroy(exec), "cuGraphExecDestroy");
		driver(sys::cuGraphDestroy(graph), "cuGraphDestroy");
	}
}

/// the calling thread's current context
fn current() -> sys::CUcontext {
	let mut ctx = null_mut();
	// SAFETY: `ctx` is written by the driver
	driver(unsafe { sys::cuCtxGetCurrent(&mut ctx) }, "cuCtxGetCurrent");
	ctx
}

/// a product on a stream of a context made by `cuCtxCreate`, not GPU 0's primary context (nor on
/// the legacy default stream of such a context, current on the thread): `NotAvailable`, nothing
/// written, that context still current
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_stream_of_another_context_is_not_available() {
	// the driver initialised, and the library's context for GPU 0 made by a first product
	let _primary = CudaContext::new(0).expect("a GPU");
	let pattern = [1, 2, 3].map(|seed| integers(SIZE * SIZE, seed));
	let bytes = SIZE * SIZE * size_of::<f64>();
	let (mut ctx, mut stream, mut at) = (null_mut(), null_mut(), [0u64; 3]);
	// SAFETY: a context, a stream and buffers of this test's, used on this thread alone and freed
	// at its end; every copy is within its buffer
	unsafe {
		let (mut params, mut device): (sys::CUctxCreateParams, sys::CUdevice) = (std::mem::zeroed(), 0);
		driver(sys::cuDeviceGet(&mut device, 0), "cuDeviceGet");
		driver(sys::cuCtxCreate_v4(&mut ctx, &mut params, 0, device), "cuCtxCreate");
		driver(sys::cuStreamCreate(&mut stream, 0), "cuStreamCreate");
		for (buffer, values) in at.iter_mut().zip(&pattern) {
			driver(sys::cuMemAlloc_v2(buffer, bytes), "cuMemAlloc");
			driver(sys::cuMemcpyHtoD_v2(*buffer, values.as_ptr().cast(), bytes), "cuMemcpyHtoD");
		}
		let (one, zero) = (1.0f64, 0.0f64);
		let operands = (at[0], at[1], at[2]);
		not_available(dgemm(operands, (&one, &zero), HOST, stream.cast()), "primary context");
		assert_eq!(current(), ctx, "the caller's context is current after the call");
		not_available(dgemm(operands, (&one, &zero), HOST, null_mut()), "primary context");
		assert_eq!(current(), ctx, "the caller's context is current after the call");
		let mut c = vec![0.0f64; SIZE * SIZE];
		driver(sys::cuCtxSynchronize(), "cuCtxSynchronize");
		driver(sys::cuMemcpyDtoH_v2(c.as_mut_ptr().cast(), at[2], bytes), "cuMemcpyDtoH");
		assert_eq!(c, pattern[2], "nothing is written");
		for buffer in at {
			driver(sys::cuMemFree_v2(buffer), "cuMemFree");
		}
		driver(sys::cuStreamDestroy_v2(stream), "cuStreamDestroy");
		driver(sys::cuCtxDestroy_v2(ctx), "cuCtxDestroy");
	}
}
