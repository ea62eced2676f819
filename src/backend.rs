//! where a context's products run

/// where the products run
///
/// # example
/// ```
/// use emugemm::{Backend, Emulator};
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// assert_eq!(emu.backend(), Backend::CpuEmulation);
/// // `Auto` picks the GPU when one is usable, otherwise faer's native product
/// assert_ne!(Emulator::new().unwrap().backend(), Backend::Auto);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Backend {
	/// the GPU when a usable one is present, otherwise [`Backend::Native`] (said once through `log`)
	#[default]
	Auto,
	/// faer's native product (no emulation): the fastest correct answer on a CPU (accumulated in
	/// `f64` for `f32`/`c32` outputs at a precision above FP32 level, which an FP32 product does
	/// not keep)
	Native,
	/// the emulation on the CPU, bit for bit what the GPU computes: the oracle, and a way to get
	/// the GPU's exact bits without a GPU
	CpuEmulation,
	/// the emulation on an NVIDIA Hopper GPU (feature `cuda`)
	Gpu,
}
