//! the element types of the C ABI, as C and cuBLAS lay them out, and the library's scalar of each

use crate::{EmugemmComplex32, EmugemmComplex64};
use num_complex::Complex;

/// the four element types, as the interposer's configuration and log name them (cuBLAS's S, D,
/// C, Z)
///
/// # example
/// ```
/// use emugemm_c::{Element, ElementType};
/// assert_eq!(<emugemm_c::EmugemmComplex64 as Element>::TYPE, ElementType::Z);
/// assert!(ElementType::Z.complex());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
	/// `float`
	S,
	/// `double`
	D,
	/// `cuComplex`
	C,
	/// `cuDoubleComplex`
	Z,
}

impl ElementType {
	/// whether the type is complex: its rank-k update is cuBLAS's HERK, a real type's its SYRK
	///
	/// # example
	/// ```
	/// assert!(!emugemm_c::ElementType::D.complex());
	/// ```
	pub fn complex(self) -> bool {
		matches!(self, ElementType::C | ElementType::Z)
	}
}

/// an element type of the C ABI: its C layout (`Self`), the library's scalar of the same layout,
/// and the real type of a rank-k update's `alpha` and `beta`
///
/// # example
/// ```
/// use emugemm_c::Element;
/// fn bytes<T: Element>() -> usize { size_of::<T>() }
/// assert_eq!(bytes::<emugemm_c::EmugemmComplex32>(), 8);
/// ```
pub trait Element: Copy + Send + Sync + 'static {
	/// the library's scalar, laid out as `Self`
	type Scalar: emugemm::Scalar<RealPart = Self::Real>;
	/// a rank-k update's `alpha` and `beta`
	type Real: emugemm::Scalar;
	/// which of the four
	const TYPE: ElementType;
}

/// implements [`Element`] for `$c`, laid out as the library's `$scalar`
macro_rules! element {
	($c:ty, $scalar:ty, $real:ty, $type:ident) => {
		impl Element for $c {
			type Scalar = $scalar;
			type Real = $real;
			const TYPE: ElementType = ElementType::$type;
		}
		const _: () = assert!(size_of::<$c>() == size_of::<$scalar>() && align_of::<$c>() == align_of::<$scalar>());
	};
}

element!(f32, f32, f32, S);
element!(f64, f64, f64, D);
element!(EmugemmComplex32, Complex<f32>, f32, C);
element!(EmugemmComplex64, Complex<f64>, f64, Z);
