//! the GPU backend (feature `cuda`, NVIDIA Hopper, sm_90a)
//!
//! this release only probes for a usable GPU; the kernels arrive with the next release, so every
//! probe answers why the GPU cannot be used yet

/// `Ok` when a GPU backend can run here, otherwise why not
#[cfg(feature = "cuda")]
pub(crate) fn probe() -> Result<(), String> {
	// SAFETY: only tries to dlopen libcuda; creating a context without it would panic
	if !unsafe { cudarc::driver::sys::is_culib_present() } {
		return Err("no NVIDIA driver (libcuda) found".into());
	}
	Err("the GPU kernels are not part of this release yet (the `cuda` feature is a placeholder)".into())
}

/// `Ok` when a GPU backend can run here, otherwise why not
#[cfg(not(feature = "cuda"))]
pub(crate) fn probe() -> Result<(), String> {
	Err("built without the `cuda` feature (enable it with `--features cuda`)".into())
}
