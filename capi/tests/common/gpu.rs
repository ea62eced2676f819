//! what the tests on a GPU share: a stream, deterministic fills, device addresses, the thread's
//! report, and each element type's entry points with the values and precisions it is tested at

use super::Entries;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};
use emugemm::{DeviceView, Emulator, Precision, Scheme};
use emugemm_c::*;
use num_complex::Complex;
use std::sync::Arc;

/// a new stream on GPU 0's primary context; panics where there is no GPU
pub fn stream() -> Arc<CudaStream> {
	CudaContext::new(0)
		.unwrap_or_else(|e| panic!("these tests need a GPU: {e}"))
		.new_stream()
		.expect("a stream")
}

/// the calling thread's last report, which must exist
pub fn last_report() -> EmugemmReport {
	let mut report = EmugemmReport::default();
	// SAFETY: a writable report
	assert_eq!(unsafe { emugemm_last_report(&mut report) }, EmugemmStatus::Success);
	report
}

/// a deterministic fill, wide enough in range that the plan is not trivial
pub fn values(len: usize, seed: u64) -> Vec<f64> {
	let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
	(0..len)
		.map(|_| {
			x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
			((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * f64::powi(2.0, ((x >> 3) % 9) as i32 - 4)
		})
		.collect()
}

/// the device address of `s`
pub fn addr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
	s.device_ptr(stream).0
}

/// the operation `raw` (one of 0, 1, 2)
pub fn operation(raw: i32) -> EmugemmOperation {
	[EmugemmOperation::N, EmugemmOperation::T, EmugemmOperation::C][raw as usize]
}

/// `v` read as the operation `op` reads it
pub fn as_op<T: emugemm::Scalar>(v: DeviceView<'_, T>, op: i32) -> DeviceView<'_, T> {
	match operation(op) {
		EmugemmOperation::N => v,
		EmugemmOperation::T => v.transpose(),
		EmugemmOperation::C => v.adjoint(),
	}
}

/// the rows and columns stored for `op` to read a `rows x cols` matrix
pub fn stored(op: i32, (rows, cols): (usize, usize)) -> (usize, usize) {
	if op == super::N { (rows, cols) } else { (cols, rows) }
}

/// `alpha` and `beta` where `mode` says: at `host`, or the two elements of `P` at the start of
/// `device`
pub fn scalar_pointers<P, C, D>(mode: i32, host: (&P, &P), device: &CudaSlice<D>, stream: &CudaStream) -> (*const C, *const C) {
	if mode == super::HOST {
		((host.0 as *const P).cast(), (host.1 as *const P).cast())
	} else {
		let at = addr(device, stream);
		(at as *const C, (at + size_of::<P>() as u64) as *const C)
	}
}

/// an element type of the C ABI on a GPU: the Rust scalar, its real part as the buffers hold it
/// (the entry points' real scalar), and the precisions it is tested at (a target, and an explicit
/// scheme)
pub trait Element: emugemm::Scalar + Entries<R: DeviceRepr + ValidAsZeroBits + Copy + Unpin + std::fmt::Debug + 'static> {
	/// the real parts of one element
	const PARTS: usize;
	/// a precision target
	const TARGET: Precision;
	/// an explicit scheme, which emulates
	const EXPLICIT: Precision;
	/// `x` as a real part
	fn real(x: f64) -> Self::R;
	/// the bits of a real part
	fn bits(x: Self::R) -> u64;
	/// the element of these parts (the imaginary one dropped for a real type)
	fn of(re: f64, im: f64) -> Self;
}

/// implements [`Element`] for `$t` of `$real` parts, `$parts` of them, tested at `$target` and
/// `$explicit`
macro_rules! element {
	($($t:ty: $real:ty, $parts:expr, $target:expr, $explicit:expr;)+) => {
		$(
			impl Element for $t {
				const PARTS: usize = $parts;
				const TARGET: Precision = $target;
				const EXPLICIT: Precision = $explicit;
				fn real(x: f64) -> $real {
					x as $real
				}
				fn bits(x: $real) -> u64 {
					x.to_bits().into()
				}
				fn of(re: f64, im: f64) -> Self {
					<$t as emugemm::Scalar>::from_parts(re, im)
				}
			}
		)+
	};
}

element! {
	f64: f64, 1, Precision::F64, Precision::SchemeII { moduli: 14 };
	f32: f32, 1, Precision::F32, Precision::SchemeII { moduli: 8 };
	Complex<f64>: f64, 2, Precision::F64, Precision::SchemeII { moduli: 14 };
	Complex<f32>: f32, 2, Precision::F32, Precision::SchemeI { slices: 4 };
}

/// the C ABI's result `got` and `report` against the Rust API's `expected` and `emu`'s last
/// report: the same bits, the same certified bits, and an emulation where `precision` is an
/// explicit scheme
pub fn same_as_rust<T: Element>(
	what: &str,
	(got, report): (&[T::R], EmugemmReport),
	expected: &[T::R],
	(emu, precision): (&Emulator, Precision),
) {
	let rust = emu.last_report().unwrap();
	assert_eq!(
		report.certified_bits.to_bits(),
		rust.plan.predicted_bits.to_bits(),
		"{what}: the C report is the Rust one's"
	);
	if precision == T::EXPLICIT {
		assert_ne!(rust.plan.scheme, Scheme::Native, "{what}: the emulation ran");
		assert_ne!(report.scheme, EmugemmScheme::Native, "{what}: the C report says so");
	}
	assert!(same_bits::<T>(got, expected), "{what}: C ABI against the Rust API");
}

/// `x` and `y` hold the same bits
pub fn same_bits<T: Element>(x: &[T::R], y: &[T::R]) -> bool {
	x.len() == y.len() && x.iter().zip(y).all(|(&p, &q)| T::bits(p) == T::bits(q))
}
