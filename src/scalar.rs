//! the element types emugemm multiplies: `f64`, `f32`, `c64`, `c32`
//!
//! every element is handled internally as one or two `f64` parts (exact for all four types); the
//! result is rounded once to the output type at the very end

use faer::{c32, c64};

mod sealed {
	pub trait Sealed {}
	impl Sealed for f64 {}
	impl Sealed for f32 {}
	impl Sealed for faer::c64 {}
	impl Sealed for faer::c32 {}
}

/// an element type that emugemm can multiply: `f64`, `f32`, `c64` or `c32`
///
/// # example
/// ```
/// use emugemm::Scalar;
/// assert_eq!(<f32 as Scalar>::MANTISSA_BITS, 24);
/// assert!(<faer::c64 as Scalar>::IS_COMPLEX);
/// let z = faer::c64::from_parts(1.5, -2.0);
/// assert_eq!((z.re(), z.im()), (1.5, -2.0));
/// ```
pub trait Scalar: faer::traits::ComplexField + bytemuck::Pod + Send + Sync + core::fmt::Debug + sealed::Sealed {
	/// whether the type has an imaginary part
	const IS_COMPLEX: bool;
	/// significand bits of the real type (53 for `f64`/`c64`, 24 for `f32`/`c32`)
	const MANTISSA_BITS: u32;
	/// the type of its parts (`f64` for `f64` and `c64`, `f32` for `f32` and `c32`): the type of
	/// a Hermitian rank-k update's `alpha`
	type RealPart: Scalar;
	/// a short name for reports (`"f64"`, `"c32"`, ...)
	const NAME: &'static str;
	/// the real part, exactly, as `f64`
	fn re(self) -> f64;
	/// the imaginary part, exactly, as `f64` (zero for real types)
	fn im(self) -> f64;
	/// builds a value from `f64` parts, rounding each to nearest (ties to even) when the type is
	/// narrower; the imaginary part is ignored for real types
	fn from_parts(re: f64, im: f64) -> Self;
	/// true when every part is finite
	fn is_finite_value(self) -> bool {
		self.re().is_finite() && self.im().is_finite()
	}
}

impl Scalar for f64 {
	type RealPart = f64;
	const IS_COMPLEX: bool = false;
	const MANTISSA_BITS: u32 = 53;
	const NAME: &'static str = "f64";
	fn re(self) -> f64 {
		self
	}
	fn im(self) -> f64 {
		0.0
	}
	fn from_parts(re: f64, _im: f64) -> Self {
		re
	}
}

impl Scalar for f32 {
	type RealPart = f32;
	const IS_COMPLEX: bool = false;
	const MANTISSA_BITS: u32 = 24;
	const NAME: &'static str = "f32";
	fn re(self) -> f64 {
		self as f64
	}
	fn im(self) -> f64 {
		0.0
	}
	fn from_parts(re: f64, _im: f64) -> Self {
		re as f32
	}
}

impl Scalar for c64 {
	type RealPart = f64;
	const IS_COMPLEX: bool = true;
	const MANTISSA_BITS: u32 = 53;
	const NAME: &'static str = "c64";
	fn re(self) -> f64 {
		self.re
	}
	fn im(self) -> f64 {
		self.im
	}
	fn from_parts(re: f64, im: f64) -> Self {
		c64::new(re, im)
	}
}

impl Scalar for c32 {
	type RealPart = f32;
	const IS_COMPLEX: bool = true;
	const MANTISSA_BITS: u32 = 24;
	const NAME: &'static str = "c32";
	fn re(self) -> f64 {
		self.re as f64
	}
	fn im(self) -> f64 {
		self.im as f64
	}
	fn from_parts(re: f64, im: f64) -> Self {
		c32::new(re as f32, im as f32)
	}
}
