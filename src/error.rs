//! the one error type of the crate

use crate::{Backend, Precision};
use core::fmt;

/// everything that can go wrong in a product, with what to do about it
///
/// # example
/// ```
/// use emugemm::{EmuMatMul, Error, Precision};
/// let a = faer::Mat::<f64>::zeros(3, 4);
/// let b = faer::Mat::<f64>::zeros(5, 2);
/// let err = a.try_emu_mul(&b, Precision::F64).unwrap_err();
/// assert!(matches!(err, Error::ShapeMismatch { .. }));
/// println!("{err}");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
	/// the operands (or the destination) do not fit together
	ShapeMismatch {
		/// rows and columns of the left operand
		lhs: (usize, usize),
		/// rows and columns of the right operand
		rhs: (usize, usize),
		/// rows and columns of the destination, when there is one
		dst: Option<(usize, usize)>,
	},
	/// a batch whose destinations and operands are not as many (see
	/// [`crate::Emulator::matmul_batch`])
	BatchLengths {
		/// destinations
		dst: usize,
		/// left operands
		lhs: usize,
		/// right operands
		rhs: usize,
	},
	/// an explicit plan with parameters out of range, or [`Precision::Bits`] above what the output
	/// type holds (52 bits for `f64` and `c64`, 23 for `f32` and `c32`)
	InvalidPrecision {
		/// what was asked for
		precision: Precision,
		/// why it cannot be served
		reason: &'static str,
	},
	/// the crate was built with the `cuda` feature but without nvcc, so no GPU kernel is embedded:
	/// install the CUDA 13.0 compiler (`scripts/install-nvcc.sh` prints the path of a pinned one;
	/// the README's section "GPU") and rebuild
	NoKernels,
	/// the GPU ran out of memory for this product: use smaller operands, or free device memory
	OutOfMemory {
		/// what could not be allocated
		what: String,
	},
	/// a CUDA driver or library call failed
	Gpu {
		/// the failing call and its status
		reason: String,
	},
	/// the report of a product recorded into a CUDA graph whose graph has not finished a replay
	/// yet: each replay decides its own plan, so there is no report before the first (see
	/// [`crate::PendingReport::replays`])
	NotReplayed,
	/// device matrices that lie on other GPUs than the context's: multiply matrices that the
	/// same context (or one over the same GPUs) uploaded
	Placement {
		/// which matrix, where it lies, and where the context runs
		reason: String,
	},
	/// a view of device memory ([`crate::DeviceView`], [`crate::DeviceViewMut`]) whose leading
	/// dimension or memory does not hold the rows and columns it claims
	InvalidLayout {
		/// the view's rows, columns and leading dimension, and what is wrong with them
		reason: String,
	},
	/// an environment variable that configures the global context (see
	/// [`crate::Emulator::global`]) holds a value that cannot be read, or names a backend that
	/// cannot run here: every product of the global context returns this error until it is fixed
	Environment {
		/// the variable
		variable: &'static str,
		/// its value, as set
		value: String,
		/// why it cannot be used
		reason: String,
	},
	/// the backend asked for cannot run here
	BackendUnavailable {
		/// the backend asked for
		backend: Backend,
		/// why, and what to do
		reason: String,
	},
}

impl fmt::Display for Error {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match self {
			Error::ShapeMismatch { lhs, rhs, dst: None } => write!(
				f,
				"shape mismatch: cannot multiply a {}x{} matrix by a {}x{} matrix (the left operand's columns must equal the right operand's rows)",
				lhs.0, lhs.1, rhs.0, rhs.1
			),
			Error::ShapeMismatch { lhs, rhs, dst: Some(dst) } => write!(
				f,
				"shape mismatch: a {}x{} times {}x{} product does not fit a {}x{} destination (expected {}x{} with {} == {})",
				lhs.0, lhs.1, rhs.0, rhs.1, dst.0, dst.1, lhs.0, rhs.1, lhs.1, rhs.0
			),
			Error::BatchLengths { dst, lhs, rhs } => write!(
				f,
				"a batch of {dst} destinations, {lhs} left and {rhs} right operands: it takes as many of each"
			),
			Error::InvalidPrecision { precision, reason } => write!(f, "invalid precision {precision:?}: {reason}"),
			Error::NoKernels => write!(
				f,
				"no GPU kernels: emugemm was built with the `cuda` feature but without nvcc; install the CUDA 13.0 compiler (set NVCC, CUDA_HOME or PATH; scripts/install-nvcc.sh in the repository installs one, see the README's section \"GPU\") and rebuild"
			),
			Error::OutOfMemory { what } => write!(f, "out of memory: {what}"),
			Error::Gpu { reason } => write!(f, "GPU error: {reason}"),
			Error::NotReplayed => write!(
				f,
				"the product was recorded into a CUDA graph that has not finished a replay yet: each replay decides its plan, and reports it"
			),
			Error::Placement { reason } => write!(f, "device matrices on the wrong GPUs: {reason}"),
			Error::InvalidLayout { reason } => write!(f, "invalid device view: {reason}"),
			Error::Environment { variable, value, reason } => write!(f, "environment variable {variable}={value:?}: {reason}"),
			Error::BackendUnavailable { backend, reason } => write!(f, "backend {backend:?} unavailable: {reason}"),
		}
	}
}

impl std::error::Error for Error {}

impl Error {
	/// a [`Error::Gpu`] with this reason
	#[cfg(feature = "cuda")]
	pub(crate) fn gpu(reason: impl Into<String>) -> Self {
		Error::Gpu { reason: reason.into() }
	}
}
