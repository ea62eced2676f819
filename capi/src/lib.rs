//! The C ABI of emugemm: `emugemm_{s,d,c,z}gemm`, their pointer-array and strided batches
//! `emugemm_{s,d,c,z}gemm_batched` and `emugemm_{s,d,c,z}gemm_strided_batched`, and the rank-k
//! updates `emugemm_{s,d}syrk` and `emugemm_{c,z}herk` on device pointers with cuBLAS's argument
//! conventions (column-major, `op`, `uplo`, leading dimensions, `alpha` and `beta` behind host or
//! device pointers, a stream), plus the precision; status codes, the calling thread's last error message and its last report
//! (plan, certified bits, why native). The header is `include/emugemm.h`.
//!
//! Every product runs on the GPU of its stream (its primary context: the CUDA runtime's, PyTorch's,
//! CuPy's), in core, with the plans and bits of the Rust API's [`emugemm::Emulator::gemm_on_stream`]
//! (and [`emugemm::Emulator::gemm_batch_on_stream`], [`emugemm::Emulator::rank_k_on_stream`]) on
//! the process's GPU context. The host waits where the plan needs the operands' statistics, and
//! for `alpha` and `beta` behind device pointers and a batch's pointer arrays (read after the
//! stream's earlier work).
//!
//! # example
//! ```
//! use emugemm_c::*;
//! // a 0 x 0 product: cuBLAS's quick return, after every argument is checked (no GPU needed)
//! let (alpha, beta) = (1.0f64, 0.0f64);
//! let precision = EmugemmPrecision { kind: EmugemmPrecisionKind::F64, parameter: 0 };
//! let status = unsafe {
//!     emugemm_dgemm(
//!         EmugemmOperation::N, EmugemmOperation::N, 0, 0, 0, &alpha, std::ptr::null(), 1,
//!         std::ptr::null(), 1, &beta, std::ptr::null_mut(), 1, EmugemmPointerMode::Host,
//!         std::ptr::null_mut(), precision,
//!     )
//! };
//! assert_eq!(status, EmugemmStatus::Success);
//! ```

mod batched;
mod batched_entry;
mod call;
mod entry;
mod gemm;
mod rank_k;
mod rank_k_entry;
mod report;
mod status;

/// a complex `f32` as C and cuBLAS (`cuComplex`) lay it out: real part, then imaginary part
///
/// # example
/// ```
/// let z = emugemm_c::EmugemmComplex32 { re: 1.0, im: -2.0 };
/// assert_eq!(size_of_val(&z), 8);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EmugemmComplex32 {
	/// real part
	pub re: f32,
	/// imaginary part
	pub im: f32,
}

/// a complex `f64` as C and cuBLAS (`cuDoubleComplex`) lay it out: real part, then imaginary part
///
/// # example
/// ```
/// let z = emugemm_c::EmugemmComplex64 { re: 1.0, im: -2.0 };
/// assert_eq!(size_of_val(&z), 16);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EmugemmComplex64 {
	/// real part
	pub re: f64,
	/// imaginary part
	pub im: f64,
}

pub use batched_entry::{
	emugemm_cgemm_batched, emugemm_cgemm_strided_batched, emugemm_dgemm_batched, emugemm_dgemm_strided_batched, emugemm_sgemm_batched,
	emugemm_sgemm_strided_batched, emugemm_zgemm_batched, emugemm_zgemm_strided_batched,
};
pub use entry::{emugemm_cgemm, emugemm_dgemm, emugemm_sgemm, emugemm_zgemm};
pub use rank_k_entry::{emugemm_cherk, emugemm_dsyrk, emugemm_ssyrk, emugemm_zherk};
pub use report::{EmugemmReport, EmugemmScheme, emugemm_last_report};
pub use status::{EmugemmStatus, emugemm_last_error};

/// how a matrix argument is read: as stored, transposed, or conjugate-transposed (the values of
/// cuBLAS's `cublasOperation_t`)
///
/// # example
/// ```
/// assert_eq!(emugemm_c::EmugemmOperation::C as i32, 2); // CUBLAS_OP_C
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmugemmOperation {
	/// as stored (`CUBLAS_OP_N`)
	N = 0,
	/// transposed (`CUBLAS_OP_T`)
	T = 1,
	/// conjugate-transposed (`CUBLAS_OP_C`; for real types, transposed)
	C = 2,
}

/// the triangle of `C` a rank-k update reads and writes, its diagonal included (the values of
/// cuBLAS's `cublasFillMode_t`; a rank-k update refuses `Full`, as cuBLAS's does)
///
/// # example
/// ```
/// assert_eq!(emugemm_c::EmugemmFillMode::Upper as i32, 1); // CUBLAS_FILL_MODE_UPPER
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmugemmFillMode {
	/// the entries on and below the diagonal (`CUBLAS_FILL_MODE_LOWER`)
	Lower = 0,
	/// the entries on and above the diagonal (`CUBLAS_FILL_MODE_UPPER`)
	Upper = 1,
	/// every entry (`CUBLAS_FILL_MODE_FULL`)
	Full = 2,
}

/// where `alpha` and `beta` point: host memory, or device memory (the values of cuBLAS's
/// `cublasPointerMode_t`)
///
/// # example
/// ```
/// assert_eq!(emugemm_c::EmugemmPointerMode::Device as i32, 1); // CUBLAS_POINTER_MODE_DEVICE
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmugemmPointerMode {
	/// host memory, read during the call
	Host = 0,
	/// device memory, read after the stream's earlier work (the call waits for the stream)
	Device = 1,
}

/// the kinds of precision a product asks for (see [`EmugemmPrecision`])
///
/// # example
/// ```
/// assert_eq!(emugemm_c::EmugemmPrecisionKind::F64 as i32, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmugemmPrecisionKind {
	/// certified at least as accurate as a native FP64 GEMM (`emugemm::Precision::F64`)
	F64 = 0,
	/// certified at least as accurate as a native FP32 GEMM
	F32 = 1,
	/// certified at least as accurate as a TF32 tensor-core GEMM
	Tf32 = 2,
	/// certified to `parameter` scaled bits (at most 52)
	Bits = 3,
	/// Ozaki scheme I with `parameter` slices (1..=8), no accuracy promise
	SchemeI = 4,
	/// Ozaki scheme II with `parameter` moduli (2..=20), no accuracy promise
	SchemeII = 5,
}

/// the precision of a product: a kind and, for `Bits`, `SchemeI` and `SchemeII`, its number
///
/// # example
/// ```
/// use emugemm_c::{EmugemmPrecision, EmugemmPrecisionKind};
/// let fifteen_moduli = EmugemmPrecision { kind: EmugemmPrecisionKind::SchemeII, parameter: 15 };
/// # let _ = fifteen_moduli;
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmugemmPrecision {
	/// what is asked
	pub kind: EmugemmPrecisionKind,
	/// the bits, slices or moduli (ignored for the other kinds)
	pub parameter: u32,
}

impl From<emugemm::Precision> for EmugemmPrecision {
	fn from(p: emugemm::Precision) -> Self {
		use emugemm::Precision;
		let (kind, parameter) = match p {
			Precision::F64 => (EmugemmPrecisionKind::F64, 0),
			Precision::F32 => (EmugemmPrecisionKind::F32, 0),
			Precision::Tf32 => (EmugemmPrecisionKind::Tf32, 0),
			Precision::Bits(bits) => (EmugemmPrecisionKind::Bits, bits),
			Precision::SchemeI { slices } => (EmugemmPrecisionKind::SchemeI, slices),
			Precision::SchemeII { moduli } => (EmugemmPrecisionKind::SchemeII, moduli),
		};
		EmugemmPrecision { kind, parameter }
	}
}

impl From<EmugemmPrecision> for emugemm::Precision {
	fn from(p: EmugemmPrecision) -> Self {
		use emugemm::Precision;
		match p.kind {
			EmugemmPrecisionKind::F64 => Precision::F64,
			EmugemmPrecisionKind::F32 => Precision::F32,
			EmugemmPrecisionKind::Tf32 => Precision::Tf32,
			EmugemmPrecisionKind::Bits => Precision::Bits(p.parameter),
			EmugemmPrecisionKind::SchemeI => Precision::SchemeI { slices: p.parameter },
			EmugemmPrecisionKind::SchemeII => Precision::SchemeII { moduli: p.parameter },
		}
	}
}
