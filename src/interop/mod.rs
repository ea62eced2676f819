//! [`EmuMatMul`]: `a.emu_mul(&b, precision)` on faer and nalgebra matrices; `EmuTrMul`:
//! `a.emu_tr_mul(&b, precision)` and `a.emu_ad_mul(&b, precision)` on nalgebra matrices

#[cfg(feature = "faer")]
mod faer;
#[cfg(feature = "faer")]
mod matmul;
#[cfg(feature = "nalgebra")]
mod nalgebra;
#[cfg(feature = "faer")]
mod rank_k;

#[cfg(feature = "faer")]
pub use matmul::matmul;
#[cfg(feature = "nalgebra")]
pub use nalgebra::{EmuTrMul, emu_gemm};
#[cfg(feature = "faer")]
pub use rank_k::rank_k_update;

use crate::{Emulator, Error, Precision};

/// the emulated product of two matrices, a drop-in for `a * b`
///
/// implemented for every pair of faer matrices, columns and rows that faer's `*` multiplies
/// (owned, views, mutable views, conjugated and adjoint views, which are read conjugated, not
/// copied; feature `faer`, on by default), returning what `*` returns, and for every nalgebra
/// `Matrix`, vector and view (feature `nalgebra`), over `f64`, `f32`, `c64` and `c32`.
/// products run on the shared [`Emulator`] of [`crate::Backend::Auto`]: the GPU when a usable one
/// is present, faer's native product otherwise; [`crate::last_report`] tells which
///
/// # example
/// ```
/// use emugemm::{EmuMatMul, Precision};
/// let a = faer::mat![[1.0, 2.0], [3.0, 4.0f64]];
/// let b = faer::mat![[5.0], [6.0f64]];
/// let c = a.emu_mul(&b, Precision::F64);
/// assert_eq!(c, faer::mat![[17.0], [39.0]]);
/// ```
pub trait EmuMatMul<Rhs: ?Sized = Self> {
	/// the product's type
	type Output;

	/// `self * rhs` at `precision` on the context `emu` (its backend and scaling), or the error
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, EmuMatMul, Emulator, Precision};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// let a = faer::Mat::<f32>::identity(3, 3);
	/// let c = a.emu_mul_with(&emu, &a, Precision::Tf32)?;
	/// assert_eq!(c, a);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	fn emu_mul_with(&self, emu: &Emulator, rhs: &Rhs, precision: Precision) -> Result<Self::Output, Error>;

	/// `self * rhs` at `precision`, or the error (shape mismatch, invalid precision)
	fn try_emu_mul(&self, rhs: &Rhs, precision: Precision) -> Result<Self::Output, Error> {
		self.emu_mul_with(&Emulator::global(), rhs, precision)
	}

	/// `self * rhs` at `precision`
	///
	/// # panics
	/// where `self * rhs` panics: when the inner dimensions differ; and on an invalid explicit
	/// precision (`SchemeI { slices: 0 }`, ...)
	#[track_caller]
	fn emu_mul(&self, rhs: &Rhs, precision: Precision) -> Self::Output {
		or_panic(self.try_emu_mul(rhs, precision))
	}
}

/// the product, or a panic with the error's message at the line that called the panicking
/// method (`#[track_caller]` through both; a `match`, as a closure's panic would point here)
#[track_caller]
pub(crate) fn or_panic<P>(result: Result<P, Error>) -> P {
	match result {
		Ok(product) => product,
		Err(e) => panic!("{e}"),
	}
}
