//! what the C ABI's test programs share: the calling thread's last error and report, the
//! enumerations as the entry points take them (integers), and the signatures of the entry points
//! by element type; [`gpu`] holds what only the tests on a GPU use, [`refusals`] the calls the
//! contract refuses
#![allow(dead_code)]

pub mod gpu;
pub mod refusals;

use emugemm_c::*;
use std::ffi::{CStr, c_void};

/// the calling thread's last error message
pub fn last_error() -> String {
	// SAFETY: the library's own NUL-terminated string
	unsafe { CStr::from_ptr(emugemm_last_error()) }.to_string_lossy().into_owned()
}

/// whether this machine has a CUDA driver that sees a GPU
pub fn gpu_present() -> bool {
	// SAFETY: only tries to load the driver
	let driver = unsafe { cudarc::driver::sys::is_culib_present() };
	driver && cudarc::driver::CudaContext::device_count().is_ok_and(|n| n > 0)
}

/// asserts that the calling thread has no report: a quick return makes none
pub fn assert_no_report() {
	let mut report = EmugemmReport::default();
	// SAFETY: a writable report
	assert_eq!(
		unsafe { emugemm_last_report(&mut report) },
		EmugemmStatus::InvalidValue,
		"a quick return makes no report"
	);
}

/// `CUBLAS_OP_N`, as the entry points take it
pub const N: i32 = EmugemmOperation::N as i32;
/// `CUBLAS_OP_T`, as the entry points take it
pub const T: i32 = EmugemmOperation::T as i32;
/// `CUBLAS_OP_C`, as the entry points take it
pub const C: i32 = EmugemmOperation::C as i32;
/// `CUBLAS_FILL_MODE_LOWER`, as the entry points take it
pub const LOWER: i32 = EmugemmFillMode::Lower as i32;
/// `CUBLAS_FILL_MODE_UPPER`, as the entry points take it
pub const UPPER: i32 = EmugemmFillMode::Upper as i32;
/// `CUBLAS_FILL_MODE_FULL`, which a rank-k update refuses
pub const FULL: i32 = EmugemmFillMode::Full as i32;
/// `alpha` and `beta` in host memory
pub const HOST: i32 = EmugemmPointerMode::Host as i32;
/// `alpha` and `beta` in device memory
pub const DEVICE: i32 = EmugemmPointerMode::Device as i32;

/// the precision of `kind` with `parameter`
pub const fn precision(kind: EmugemmPrecisionKind, parameter: u32) -> EmugemmPrecision {
	EmugemmPrecision {
		kind: kind as i32,
		parameter,
	}
}

/// at least as accurate as a native FP64 GEMM
pub const F64: EmugemmPrecision = precision(EmugemmPrecisionKind::F64, 0);

/// a C ABI product: cuBLAS's arguments with `C` elements, a stream and a precision
pub type Gemm<C> = unsafe extern "C" fn(
	i32,
	i32,
	i64,
	i64,
	i64,
	*const C,
	*const C,
	i64,
	*const C,
	i64,
	*const C,
	*mut C,
	i64,
	i32,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// a C ABI pointer-array batch: cuBLAS's arguments with `C` elements, a stream and a precision
pub type Batched<C> = unsafe extern "C" fn(
	i32,
	i32,
	i64,
	i64,
	i64,
	*const C,
	*const *const C,
	i64,
	*const *const C,
	i64,
	*const C,
	*const *mut C,
	i64,
	i64,
	i32,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// a C ABI strided batch: cuBLAS's arguments with `C` elements, a stream and a precision
pub type Strided<C> = unsafe extern "C" fn(
	i32,
	i32,
	i64,
	i64,
	i64,
	*const C,
	*const C,
	i64,
	i64,
	*const C,
	i64,
	i64,
	*const C,
	*mut C,
	i64,
	i64,
	i64,
	i32,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// a C ABI rank-k update: cuBLAS's arguments with `C` elements and real `R` scalars, a stream and
/// a precision
pub type RankK<C, R> = unsafe extern "C" fn(
	i32,
	i32,
	i64,
	i64,
	*const R,
	*const C,
	i64,
	*const R,
	*mut C,
	i64,
	i32,
	*mut c_void,
	EmugemmPrecision,
) -> EmugemmStatus;

/// the C ABI's entry points of one element type: its C element `C` and real scalar `R`, its
/// product, rank-k update (SYRK or HERK), pointer-array and strided batches
pub trait Entries {
	/// the element as C lays it out
	type C;
	/// the real scalar of a rank-k update's `alpha` and `beta`
	type R;
	/// `emugemm_?gemm`
	const GEMM: Gemm<Self::C>;
	/// `emugemm_?syrk` or `emugemm_?herk`
	const RANK_K: RankK<Self::C, Self::R>;
	/// `emugemm_?gemm_batched`
	const BATCHED: Batched<Self::C>;
	/// `emugemm_?gemm_strided_batched`
	const STRIDED: Strided<Self::C>;
}

/// implements [`Entries`] for `$t`: elements `$c`, real scalars `$r`, and its four entry points
macro_rules! entries {
	($($t:ty: $c:ty, $r:ty, ($gemm:ident, $rank_k:ident, $batched:ident, $strided:ident);)+) => {
		$(
			impl Entries for $t {
				type C = $c;
				type R = $r;
				const GEMM: Gemm<$c> = $gemm;
				const RANK_K: RankK<$c, $r> = $rank_k;
				const BATCHED: Batched<$c> = $batched;
				const STRIDED: Strided<$c> = $strided;
			}
		)+
	};
}

entries! {
	f32: f32, f32, (emugemm_sgemm, emugemm_ssyrk, emugemm_sgemm_batched, emugemm_sgemm_strided_batched);
	f64: f64, f64, (emugemm_dgemm, emugemm_dsyrk, emugemm_dgemm_batched, emugemm_dgemm_strided_batched);
	num_complex::Complex<f32>: EmugemmComplex32, f32, (emugemm_cgemm, emugemm_cherk, emugemm_cgemm_batched, emugemm_cgemm_strided_batched);
	num_complex::Complex<f64>: EmugemmComplex64, f64, (emugemm_zgemm, emugemm_zherk, emugemm_zgemm_batched, emugemm_zgemm_strided_batched);
}

/// tests on a GPU, ignored elsewhere: each `$name` runs `$check::<$t>()`
#[allow(unused_macros)] // only the GPU test files use it
macro_rules! on_gpu {
	($($name:ident: $check:ident::<$t:ty>;)+) => {
		$(
			#[test]
			#[ignore = "needs an NVIDIA GPU"]
			fn $name() {
				$check::<$t>();
			}
		)+
	};
}

#[allow(unused_imports)] // only the GPU test files use it
pub(crate) use on_gpu;
