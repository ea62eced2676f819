//! the library's views of a call's checked matrices, and a batch's matrices' addresses

use crate::checked::{Checked, Invalid, at};
use crate::device::download;
use crate::request::Matrices;
use crate::{Element, EmugemmOperation};
use emugemm::{DeviceView, DeviceViewMut, Error};
use std::collections::TryReserveError;
use std::ffi::c_void;

/// `op(A)` and `op(B)` and `C` of one product
pub(crate) type Views<'a, T> = (
	DeviceView<'a, <T as Element>::Scalar>,
	DeviceView<'a, <T as Element>::Scalar>,
	DeviceViewMut<'a, <T as Element>::Scalar>,
);

/// `view` as `op` reads it
fn read<S: emugemm::Scalar>(view: DeviceView<'_, S>, op: EmugemmOperation) -> DeviceView<'_, S> {
	match op {
		EmugemmOperation::N => view,
		EmugemmOperation::T => view.transpose(),
		EmugemmOperation::C => view.adjoint(),
	}
}

/// `op(A)`, `op(B)` and `C` of one product at the device addresses `(a, b, c)`, `op(A)` read with
/// `inner` columns (0: neither `A` nor `B` is read, their addresses unused)
///
/// # Safety
/// the matrices lie at these addresses, as `checked` describes them, on the stream's GPU, for the
/// product's duration in stream order
pub(crate) unsafe fn product<'a, T: Element>(checked: &Checked, inner: usize, (a, b, c): (u64, u64, u64)) -> Result<Views<'a, T>, Error> {
	let ((m, n, _), (lda, ldb, ldc)) = (checked.shape, checked.lds);
	let (opa, opb) = checked.ops;
	let stored = |op, dims| crate::checked::stored(op, dims);
	// SAFETY: the caller's promise, handed on
	unsafe {
		Ok((
			read(DeviceView::from_raw(a, stored(opa, (m, inner)), lda)?, opa),
			read(DeviceView::from_raw(b, stored(opb, (inner, n)), ldb)?, opb),
			DeviceViewMut::from_raw(c, (m, n), ldc)?,
		))
	}
}

/// the host memory one product of a batch takes, at most, beside its matrices: its addresses,
/// views, request and report, here and in the library
const HOST_BYTES_PER_PRODUCT: usize = 1024;

/// `Ok` where the host arrays of a batch of `count` products take at most a quarter of the host's
/// physical memory: a reservation alone proves nothing where the system overcommits memory
/// (filling it would exhaust the host)
fn host_fits(count: usize) -> Result<(), String> {
	// SAFETY: plain queries of the system's configuration
	let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
	let physical = usize::try_from(pages)
		.unwrap_or(0)
		.saturating_mul(usize::try_from(page).unwrap_or(0));
	let needed = count.saturating_mul(HOST_BYTES_PER_PRODUCT);
	if physical == 0 || needed <= physical / 4 {
		return Ok(());
	}
	Err(format!(
		"a batch of {count} products needs about {needed} bytes of host memory for its arrays, above a quarter of the host's {physical}"
	))
}

/// an empty vector that holds `count` values, or the allocator's refusal (a batch's count is the
/// caller's, however large)
pub(crate) fn vec_for<V>(count: usize) -> Result<Vec<V>, TryReserveError> {
	let mut v = Vec::new();
	v.try_reserve_exact(count)?;
	Ok(v)
}

/// the addresses of `A[i]`, `B[i]` and `C[i]` of a batch's `count` products, `A[i]` and `B[i]`
/// only where `operands` (0 otherwise: not read); a pointer array is read from the device after
/// the work enqueued on `stream` so far (the host waits for the stream), and each address it
/// holds is checked as an argument would be
///
/// # Safety
/// a pointer array holds `count` device pointers, in device memory of the stream's GPU
pub(crate) unsafe fn batch_addresses<T: Element>(
	matrices: Matrices<T>,
	checked: &Checked,
	operands: bool,
	stream: *mut c_void,
) -> Result<Vec<(u64, u64, u64)>, Failure> {
	let count = checked.count;
	host_fits(count).map_err(Failure::Memory)?;
	let too_many = |e: TryReserveError| Failure::Memory(format!("the host arrays of a batch of {count} products: {e}"));
	match matrices {
		Matrices::Pointers(a, b, c) => {
			let mut host = [
				vec_for::<u64>(count).map_err(too_many)?,
				vec_for(count).map_err(too_many)?,
				vec_for(count).map_err(too_many)?,
			];
			for array in &mut host {
				array.resize(count, 0);
			}
			let [ha, hb, hc] = &mut host;
			let (ha, hb): (&mut [u64], &mut [u64]) = if operands { (ha, hb) } else { (&mut [], &mut []) };
			// SAFETY: each array holds `count` pointers (the caller's promise); an array not read
			// is copied as 0 bytes
			unsafe {
				download(
					"the batch's pointer arrays",
					[(a as u64, ha), (b as u64, hb), (c as u64, hc)],
					stream,
				)
			}
			.map_err(Failure::Read)?;
			let [ha, hb, hc] = host;
			let ((a_shape, b_shape), (lda, ldb, ldc), (m, n, _)) = (checked.stored(), checked.lds, checked.shape);
			let mut addresses = vec_for(count).map_err(too_many)?;
			for (i, c) in hc.into_iter().enumerate() {
				let name = |what: &str| format!("{what}[{i}]");
				crate::checked::matrix::<T>(&name("C"), c, (m, n), ldc).map_err(Failure::Invalid)?;
				let (a, b) = if operands { (ha[i], hb[i]) } else { (0, 0) };
				if operands {
					crate::checked::matrix::<T>(&name("A"), a, a_shape, lda).map_err(Failure::Invalid)?;
					crate::checked::matrix::<T>(&name("B"), b, b_shape, ldb).map_err(Failure::Invalid)?;
				}
				addresses.push((a, b, c));
			}
			Ok(addresses)
		},
		Matrices::Strided((a, sa), (b, sb), (c, sc)) => {
			let mut addresses = vec_for(count).map_err(too_many)?;
			for i in 0..count {
				let operand = |name, base: *const T, stride| if operands { at::<T>(name, (base as u64, stride), i) } else { Ok(0) };
				let address = (operand("A", a, sa), operand("B", b, sb), at::<T>("C", (c as u64, sc), i));
				match address {
					(Ok(a), Ok(b), Ok(c)) => addresses.push((a, b, c)),
					(Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Err(Failure::Invalid(e)),
				}
			}
			Ok(addresses)
		},
	}
}

/// why a batch's addresses could not be had
pub(crate) enum Failure {
	/// an address breaks the contract
	Invalid(Invalid),
	/// the host cannot hold the batch's arrays
	Memory(String),
	/// the pointer arrays could not be read
	Read(String),
}
