//! The C ABI of emugemm: `emugemm_{s,d,c,z}gemm`, their pointer-array and strided batches
//! `emugemm_{s,d,c,z}gemm_batched` and `emugemm_{s,d,c,z}gemm_strided_batched`, and the rank-k
//! updates `emugemm_{s,d}syrk` and `emugemm_{c,z}herk` on device pointers with cuBLAS's argument
//! conventions (column-major, `op`, `uplo`, leading dimensions, `alpha` and `beta` behind host or
//! device pointers, a stream), plus the precision; status codes, the calling thread's last error message and its last report
//! (plan, certified bits, why native). The header is `include/emugemm.h`.
//!
//! Every product runs on the GPU of its stream (its primary context: the CUDA runtime's, PyTorch's,
//! CuPy's), in core, with the plans and bits of the Rust API's [`emugemm::Emulator::gemm_on_stream`]
//! (and [`emugemm::Emulator::gemm_batch_on_stream`], [`emugemm::Emulator::rank_k_on_stream`]) on a
//! context of that GPU alone, made at the first call there: no other GPU is touched. The host waits
//! where the plan needs the operands' statistics, and for `alpha` and `beta` behind device
//! pointers and a batch's pointer arrays (read after the stream's earlier work). The enumerations
//! (`transa`, `uplo`, the pointer mode, the precision's kind) are taken as integers: a value that
//! is none of the enumeration's is `InvalidValue`, never undefined behaviour.
//!
//! # example
//! ```
//! use emugemm_c::*;
//! // a 0 x 0 product: cuBLAS's quick return, after every argument is checked (no GPU needed)
//! let (alpha, beta) = (1.0f64, 0.0f64);
//! let precision = EmugemmPrecision { kind: EmugemmPrecisionKind::F64 as i32, parameter: 0 };
//! let (n, host) = (EmugemmOperation::N as i32, EmugemmPointerMode::Host as i32);
//! let status = unsafe {
//!     emugemm_dgemm(n, n, 0, 0, 0, &alpha, std::ptr::null(), 1, std::ptr::null(), 1, &beta, std::ptr::null_mut(), 1, host, std::ptr::null_mut(), precision)
//! };
//! assert_eq!(status, EmugemmStatus::Success);
//! // an operation that is none of cuBLAS's: refused, as cuBLAS refuses it
//! let status = unsafe {
//!     emugemm_dgemm(7, n, 4, 4, 4, &alpha, std::ptr::null(), 4, std::ptr::null(), 4, &beta, std::ptr::null_mut(), 4, host, std::ptr::null_mut(), precision)
//! };
//! assert_eq!(status, EmugemmStatus::InvalidValue);
//! ```
//!
//! Both doors, the C entry points and the cuBLAS interposer (which uses this crate as a Rust
//! library), build one [`Call`] of cuBLAS's arguments as given and run it with [`execute`]: the
//! arguments are checked in one place, and a call that cannot run ([`Outcome::Refused`]) has read
//! and written nothing.

mod batched_entry;
mod checked;
mod device;
mod element;
mod entry;
mod execute;
mod rank_k_entry;
mod report;
mod request;
mod status;
mod tier;
mod views;

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
pub use device::limit_device_memory;
pub use element::{Element, ElementType};
pub use entry::{emugemm_cgemm, emugemm_dgemm, emugemm_sgemm, emugemm_zgemm};
pub use execute::{Outcome, execute};
pub use rank_k_entry::{emugemm_cherk, emugemm_dsyrk, emugemm_ssyrk, emugemm_zherk};
pub use report::{EmugemmReport, EmugemmScheme, emugemm_last_report};
pub use request::{Batch, Call, Gemm, Matrices, RankK, Routine};
pub use status::{EmugemmStatus, emugemm_last_error};
pub use tier::native_from_shape;

/// how a matrix argument is read (`transa`, `transb`, `trans`: an integer of these values).
/// As stored, transposed, or conjugate-transposed: the values of cuBLAS's `cublasOperation_t`; any
/// other value is `InvalidValue`
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

/// the triangle of `C` a rank-k update reads and writes (`uplo`: an integer of these values).
/// Its diagonal included; the values of cuBLAS's `cublasFillMode_t`; a rank-k update refuses
/// `Full` and any other value, as cuBLAS's does
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

/// where `alpha` and `beta` point (`mode`: an integer of these values).
/// Host memory, or device memory: the values of cuBLAS's `cublasPointerMode_t`; any other value
/// is `InvalidValue`
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

/// the kinds of precision a product asks for (`emugemm_precision.kind`: an integer of these values).
/// Any other value of [`EmugemmPrecision::kind`] is `InvalidValue`
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
	/// certified to `parameter` scaled bits (at most 52 for double outputs, 23 for float ones)
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
/// let fifteen_moduli = EmugemmPrecision { kind: EmugemmPrecisionKind::SchemeII as i32, parameter: 15 };
/// assert_eq!(emugemm::Precision::try_from(fifteen_moduli), Ok(emugemm::Precision::SchemeII { moduli: 15 }));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmugemmPrecision {
	/// what is asked: a value of [`EmugemmPrecisionKind`]
	pub kind: i32,
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
		EmugemmPrecision {
			kind: kind as i32,
			parameter,
		}
	}
}

/// the library's precision of a C precision, where its kind is one of [`EmugemmPrecisionKind`]
/// (the parameter is checked where the product is: it depends on the element type)
impl TryFrom<EmugemmPrecision> for emugemm::Precision {
	type Error = String;

	fn try_from(p: EmugemmPrecision) -> Result<Self, String> {
		use emugemm::Precision;
		Ok(match p.kind {
			0 => Precision::F64,
			1 => Precision::F32,
			2 => Precision::Tf32,
			3 => Precision::Bits(p.parameter),
			4 => Precision::SchemeI { slices: p.parameter },
			5 => Precision::SchemeII { moduli: p.parameter },
			kind => return Err(format!("precision kind = {kind}: not one of emugemm_precision_kind (0 to 5)")),
		})
	}
}
