//! where a context's products run

/// where the products run
///
/// # example
/// ```
/// use emugemm::{Backend, Emulator};
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// assert_eq!(emu.backend(), Backend::CpuEmulation);
/// // the oracle emulates every product a plan certifies, small ones too
/// assert!(!emu.native_candidate());
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
	/// the GPU's exact bits without a GPU. The oracle emulates every product a plan certifies; the
	/// native candidate is priced with a GPU cost model only when asked for
	/// ([`Emulator::with_native_candidate(true)`](crate::Emulator::with_native_candidate), which
	/// makes it pick the plans a default context on a Hopper GPU picks)
	CpuEmulation,
	/// the emulation on an NVIDIA GPU of compute capability 8.0 or higher (feature `cuda`): the
	/// fused kernels on Hopper, the portable path elsewhere
	Gpu,
}
