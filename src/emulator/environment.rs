//! the environment variables that configure the global context (see
//! [`crate::Emulator::global`]): each read once, and checked as it is read; a value that cannot be
//! read, or a backend that cannot run here, is an [`Error::Environment`] naming the variable

use super::Emulator;
use crate::precision::validate;
use crate::{Backend, Error, Precision};

/// `EMUGEMM_HOST_ROUTING`: `on` or `off`, `None` when unset
pub(super) fn host_routing() -> Result<Option<bool>, Error> {
	read("EMUGEMM_HOST_ROUTING", switch)
}

/// `EMUGEMM_QUEUED_VIEWS`: `on` or `off`, `None` when unset
pub(super) fn queued_views() -> Result<Option<bool>, Error> {
	read("EMUGEMM_QUEUED_VIEWS", switch)
}

/// `EMUGEMM_GRAPHS`: `on` or `off`, `None` when unset
pub(super) fn graph_recording() -> Result<Option<bool>, Error> {
	read("EMUGEMM_GRAPHS", switch)
}

/// `on` or `off` (`1`, `true`; `0`, `false`)
fn switch(value: &str) -> Result<bool, String> {
	match value {
		"on" | "1" | "true" => Ok(true),
		"off" | "0" | "false" => Ok(false),
		_ => Err("neither on nor off".into()),
	}
}

/// the global context as the environment sets it, or the error of its first variable that cannot
/// be read, or whose backend cannot run here
pub(super) fn context_from_env() -> Result<Emulator, Error> {
	let backend = read("EMUGEMM_BACKEND", parse_backend)?.unwrap_or(Backend::Auto);
	let precision = read("EMUGEMM_PRECISION", parse_precision)?;
	let native_below = read("EMUGEMM_NATIVE_BELOW", |v| v.parse::<usize>().map_err(|e| e.to_string()))?.unwrap_or(0);
	// read by every `Backend::Auto` context (the switches by every context); checked here, before
	// the backend, so that an error names its own variable
	host_routing()?;
	queued_views()?;
	graph_recording()?;
	let emu = Emulator::with_backend(backend).map_err(|e| {
		let value = std::env::var("EMUGEMM_BACKEND").unwrap_or_else(|_| "auto (unset)".into());
		environment("EMUGEMM_BACKEND", &value, e.to_string())
	})?;
	Ok(emu.with_precision_override(precision).with_native_below(native_below))
}

/// `auto`, `native`, `cpu` or `gpu`
fn parse_backend(value: &str) -> Result<Backend, String> {
	match value {
		"auto" => Ok(Backend::Auto),
		"native" => Ok(Backend::Native),
		"cpu" | "cpu-emulation" => Ok(Backend::CpuEmulation),
		"gpu" => Ok(Backend::Gpu),
		_ => Err("not one of auto, native, cpu, gpu".into()),
	}
}

/// a [`Precision`] the products can run at (`bits=n` up to 52, what `f64` outputs hold; a product
/// whose output type holds fewer, `f32` or `c32` above 23, is then an
/// [`Error::InvalidPrecision`])
fn parse_precision(value: &str) -> Result<Precision, String> {
	let precision = value.parse::<Precision>().map_err(|e| e.to_string())?;
	validate(precision, <f64 as crate::Scalar>::MANTISSA_BITS).map_err(str::to_owned)?;
	Ok(precision)
}

/// the variable `name`, lower case and trimmed, read by `parse`: `None` when unset, an
/// [`Error::Environment`] when `parse` refuses it
fn read<V>(name: &'static str, parse: impl FnOnce(&str) -> Result<V, String>) -> Result<Option<V>, Error> {
	let Ok(raw) = std::env::var(name) else {
		return Ok(None);
	};
	let value = raw.trim().to_ascii_lowercase();
	parse(&value).map(Some).map_err(|reason| environment(name, &raw, reason))
}

fn environment(variable: &'static str, value: &str, reason: String) -> Error {
	Error::Environment {
		variable,
		value: value.to_owned(),
		reason,
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn backends_are_read_by_name() {
		assert_eq!(parse_backend("cpu"), Ok(Backend::CpuEmulation));
		assert_eq!(parse_backend("gpu"), Ok(Backend::Gpu));
		assert!(parse_backend("tpu").is_err());
		assert!(parse_backend("cpuemulation").is_err());
	}

	#[test]
	fn precisions_are_checked_as_read() {
		assert_eq!(parse_precision("scheme2=14"), Ok(Precision::SchemeII { moduli: 14 }));
		assert_eq!(parse_precision("bits=40"), Ok(Precision::Bits(40)));
		for refused in ["scheme2=0", "scheme2=21", "scheme1=0", "scheme1=9", "bits=60", "f65", ""] {
			assert!(parse_precision(refused).is_err(), "{refused}");
		}
	}
}
