//! the first tier of a call's decision, from its arguments alone: whether the library would
//! compute it natively from its shape, its type, its precision and its GPU, before reading any
//! operand, so that a caller with the native routine at hand (the cuBLAS interposer) runs that
//! instead and pays nothing else

use crate::Element;
use crate::device;
use crate::request::Call;

/// why the library computes `call` natively from its shape alone
/// ([`emugemm::Emulator::native_from_shape`] on the context of the stream's GPU; a batch against
/// one batched GEMM), where it does; `None` where its operands decide, and where the call is not
/// one the library can run ([`crate::execute`] then says why). Reads no operand and never waits
/// for the GPU; the first call on a GPU makes the library's context there
///
/// # example
/// ```
/// use emugemm_c::{Call, EmugemmPrecision, Gemm, Routine};
/// let (alpha, beta) = (1.0f64, 0.0f64);
/// let gemm = Gemm { ops: (0, 7), shape: (4, 4, 4), alpha: &alpha, a: (std::ptr::null(), 4), b: (std::ptr::null(), 4), beta: &beta, c: (std::ptr::null_mut(), 4) };
/// let call = Call { routine: Routine::Gemm(gemm), pointer_mode: 0, stream: std::ptr::null_mut(), precision: EmugemmPrecision { kind: 0, parameter: 0 } };
/// // transb = 7 is no operation: not a call the library runs, so not one it decides
/// assert_eq!(emugemm_c::native_from_shape(&call), None);
/// ```
pub fn native_from_shape<T: Element>(call: &Call<T>) -> Option<String> {
	let checked = call.check().ok()?;
	if checked.empty() {
		return None;
	}
	// the shape reads nothing, so a stream being captured is asked like any other
	let emu = device::for_stream(call.stream, true).ok()?;
	emu.native_from_shape::<T::Scalar>(checked.shape, checked.count, checked.precision)
		.map(|reason| reason.to_string())
}
