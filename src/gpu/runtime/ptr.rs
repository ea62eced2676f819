//! device addresses typed by what they point to: a [`DevPtr<T>`] is the 64-bit address the driver
//! and the kernels take, with the element type kept beside it for the reader and the compiler

use cudarc::driver::DeviceRepr;
use std::fmt;
use std::marker::PhantomData;

/// the device address of elements of type `T`: `i8` for int8 planes, `i32` for INT32 products,
/// shifts and flags, `f64` or the element type for matrices, `u8` for untyped scratch. The same 64
/// bits as the raw address (`repr(transparent)`), so a kernel takes it as the pointer its
/// parameter list names; `fn() -> T` in the marker keeps it `Send` and `Sync` whatever `T`
#[repr(transparent)]
pub(crate) struct DevPtr<T> {
	addr: u64,
	_t: PhantomData<fn() -> T>,
}

impl<T> DevPtr<T> {
	/// the null address: for what is never read (kernel parameters a launch leaves unused)
	pub const NULL: Self = DevPtr::new(0);

	/// the address `addr`
	pub const fn new(addr: u64) -> Self {
		DevPtr { addr, _t: PhantomData }
	}

	/// the raw address, for the driver's and the libraries' calls
	pub const fn addr(self) -> u64 {
		self.addr
	}

	/// the address `elements` elements of `T` further on
	pub const fn add(self, elements: usize) -> Self {
		self.byte_add(elements * size_of::<T>())
	}

	/// the address `bytes` bytes further on
	pub const fn byte_add(self, bytes: usize) -> Self {
		DevPtr::new(self.addr + bytes as u64)
	}

	/// the same address, as one of elements of `U`
	pub const fn cast<U>(self) -> DevPtr<U> {
		DevPtr::new(self.addr)
	}
}

// by hand: derived impls would ask `T` for them too, and an address is copied whatever it points to
impl<T> Clone for DevPtr<T> {
	fn clone(&self) -> Self {
		*self
	}
}

impl<T> Copy for DevPtr<T> {}

impl<T> PartialEq for DevPtr<T> {
	fn eq(&self, other: &Self) -> bool {
		self.addr == other.addr
	}
}

impl<T> Eq for DevPtr<T> {}

impl<T> fmt::Debug for DevPtr<T> {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		write!(f, "DevPtr<{}>({:#x})", std::any::type_name::<T>(), self.addr)
	}
}

// SAFETY: `repr(transparent)` over a `u64`: a kernel parameter of 8 bytes, the device pointer itself
unsafe impl<T> DeviceRepr for DevPtr<T> {}

// the kernels' ABI sees the raw address
const _: () = assert!(size_of::<DevPtr<f64>>() == size_of::<u64>() && align_of::<DevPtr<i8>>() == align_of::<u64>());

#[cfg(test)]
mod tests {
	use super::*;

	/// offsets count elements of the pointee, casts keep the address
	#[test]
	fn offsets_count_elements() {
		let p = DevPtr::<f64>::new(0x1000);
		assert_eq!(p.add(3).addr(), 0x1000 + 24);
		assert_eq!(p.byte_add(3).addr(), 0x1003);
		assert_eq!(p.cast::<i32>().add(3).addr(), 0x1000 + 12);
		assert_eq!(p.cast::<u8>().cast::<f64>(), p);
		assert_eq!(DevPtr::<i8>::NULL.addr(), 0);
	}
}
