//! a batch of products of the C ABI, for every element type: cuBLAS's pointer-array and strided
//! batches, their arguments checked as cuBLAS checks them, `alpha` and `beta` read, the matrices'
//! addresses made (a pointer array's read from the device), the views made, and the batch run on
//! the process's GPU context

use crate::call::{Failure, Routine, count, download, emulator, scalars};
use crate::gemm::Dimensions;
use crate::{EmugemmOperation, EmugemmPointerMode, EmugemmPrecision};
use cudarc::driver::sys;
use emugemm::{Scalar, Stream};
use std::ffi::c_void;

/// where a batch's matrices lie
pub(crate) enum Matrices<T> {
	/// device arrays of `batch_count` device pointers each: `A[i]`, `B[i]`, `C[i]`
	Pointers(*const *const T, *const *const T, *const *mut T),
	/// `A`, `B`, `C` of the first product and the strides, in elements, to the next product's
	Strided((*const T, i64), (*const T, i64), (*mut T, i64)),
}

/// the arguments of one `emugemm_?gemm_batched` or `emugemm_?gemm_strided_batched` call, as
/// cuBLAS orders them
pub(crate) struct Batched<T> {
	pub ops: (EmugemmOperation, EmugemmOperation),
	/// `m`, `n`, `k`
	pub shape: (i64, i64, i64),
	/// `alpha`, `beta`, and where they point
	pub scalars: (*const T, *const T, EmugemmPointerMode),
	/// `lda`, `ldb`, `ldc`
	pub lds: (i64, i64, i64),
	pub matrices: Matrices<T>,
	pub batch_count: i64,
	pub stream: *mut c_void,
	pub precision: EmugemmPrecision,
}

impl<T: Scalar> Routine for Batched<T> {
	unsafe fn compute(self) -> Result<(), Failure> {
		// SAFETY: the caller's promise, handed on
		unsafe { products(self) }
	}
}

/// the device address of product `i`'s matrix, `stride` elements of `T` apart from `base`'s
fn strided<T>(name: &str, (base, stride): (u64, i64), i: usize) -> Result<u64, Failure> {
	let offset = i128::from(stride) * i128::try_from(i).unwrap_or(i128::MAX) * size_of::<T>() as i128;
	u64::try_from(i128::from(base) + offset)
		.map_err(|_| Failure::Invalid(format!("{name}: product {i} lies outside the address space (stride {stride})")))
}

impl<T> Matrices<T> {
	/// the addresses of `A[i]`, `B[i]` and `C[i]` of the `count` products, `A[i]` and `B[i]` only
	/// where `operands` (0 otherwise: not read); a pointer array is read from the device after the
	/// work enqueued on `stream` so far (the host waits for the stream)
	///
	/// # Safety
	/// a pointer array holds `count` device pointers, in device memory of the stream's GPU
	unsafe fn addresses(&self, count: usize, operands: bool, stream: sys::CUstream) -> Result<Vec<(u64, u64, u64)>, Failure> {
		match *self {
			Matrices::Pointers(a, b, c) => {
				let read = [
					(a as u64, "the array of A", operands),
					(b as u64, "the array of B", operands),
					(c as u64, "the array of C", true),
				];
				if let Some((_, name, _)) = read.iter().find(|(array, _, read)| *read && *array == 0) {
					return Err(Failure::Invalid(format!("{name} is null")));
				}
				let mut host = [vec![0u64; count], vec![0u64; count], vec![0u64; count]];
				let [ha, hb, hc] = &mut host;
				let (ha, hb): (&mut [u64], &mut [u64]) = if operands { (ha, hb) } else { (&mut [], &mut []) };
				// SAFETY: each array holds `count` pointers (the caller's promise); an array not
				// read is copied as 0 bytes
				unsafe {
					download(
						"the batch's pointer arrays",
						[(a as u64, ha), (b as u64, hb), (c as u64, hc)],
						stream,
					)?
				};
				let [ha, hb, hc] = host;
				Ok(ha.into_iter().zip(hb).zip(hc).map(|((a, b), c)| (a, b, c)).collect())
			},
			Matrices::Strided((a, sa), (b, sb), (c, sc)) => (0..count)
				.map(|i| {
					let operand = |name, at| if operands { strided::<T>(name, at, i) } else { Ok(0) };
					Ok((
						operand("A", (a as u64, sa))?,
						operand("B", (b as u64, sb))?,
						strided::<T>("C", (c as u64, sc), i)?,
					))
				})
				.collect(),
		}
	}
}

/// the products of `batch`
///
/// # Safety
/// as [`Routine::compute`]
unsafe fn products<T: Scalar>(batch: Batched<T>) -> Result<(), Failure> {
	let dims = Dimensions::new(batch.shape, batch.lds)?;
	let count = count("batch_count", batch.batch_count)?;
	// the leading dimensions checked as cuBLAS checks them, then its quick return: nothing read
	// or written, no report
	// SAFETY: only checked, never used
	unsafe { dims.views::<T>(batch.ops, dims.shape.2, (0, 0, 0))? };
	if dims.empty() || count == 0 {
		return Ok(());
	}
	let stream = batch.stream as sys::CUstream;
	// SAFETY: alpha and beta are readable where the pointer mode says (the caller's promise)
	let (alpha, beta) = unsafe { scalars(batch.scalars, stream)? };
	let inner = dims.inner(alpha);
	// SAFETY: the pointer arrays hold `count` pointers on the stream's GPU (the caller's promise)
	let addresses = unsafe { batch.matrices.addresses(count, inner > 0, stream)? };
	let emu = emulator()?;
	let (mut a, mut b, mut c) = (Vec::with_capacity(count), Vec::with_capacity(count), Vec::with_capacity(count));
	for at in addresses {
		// SAFETY: the matrices lie at these addresses with these leading dimensions, on the
		// stream's GPU, for the call's duration in stream order (the caller's promise)
		let (ai, bi, ci) = unsafe { dims.views::<T>(batch.ops, inner, at)? };
		a.push(ai);
		b.push(bi);
		c.push(ci);
	}
	// SAFETY: a live stream of the caller's, or a default one
	let on = unsafe { Stream::from_raw(stream) };
	emu.gemm_batch_on_stream(&mut c, alpha, (&a, &b), beta, (batch.precision.into(), on))?;
	Ok(())
}
