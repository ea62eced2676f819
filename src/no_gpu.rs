//! the GPU backend's entry points in a build without the `cuda` feature: no GPU can run, and
//! every request for one says why

/// why the GPU backend cannot run here
pub(crate) fn probe() -> Result<(), String> {
	Err("built without the `cuda` feature (enable it with `--features cuda`)".into())
}

/// why GPU `ordinal` cannot run the backend here
pub(crate) fn probe_on(_ordinal: usize) -> Result<(), String> {
	probe()
}

/// without the `cuda` feature there are no GPUs to connect
pub(crate) fn connect(_ordinals: &[usize]) -> Result<(), crate::Error> {
	Ok(())
}
