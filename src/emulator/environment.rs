//! the environment variables that configure the global context (see
//! [`crate::Emulator::global`]): each read once, a value that cannot be read said through `log` and
//! left at its default

use super::Emulator;
use crate::{Backend, Precision};

/// `EMUGEMM_HOST_ROUTING`: `on` or `off`, `None` when unset or unreadable
pub(super) fn host_routing() -> Option<bool> {
	read("EMUGEMM_HOST_ROUTING", |v| match v {
		"on" | "1" | "true" => Ok(true),
		"off" | "0" | "false" => Ok(false),
		_ => Err("neither on nor off".into()),
	})
}

/// the global context as the environment sets it
pub(super) fn global_from_env() -> Emulator {
	let backend = read("EMUGEMM_BACKEND", parse_backend).unwrap_or(Backend::Auto);
	let emu = Emulator::with_backend(backend).unwrap_or_else(|e| {
		log::warn!("emugemm: EMUGEMM_BACKEND: {e}; the global context runs on Backend::Auto");
		Emulator::new().expect("Backend::Auto always resolves")
	});
	let precision = read("EMUGEMM_PRECISION", |v| v.parse::<Precision>().map_err(|e| e.to_string()));
	let native_below = read("EMUGEMM_NATIVE_BELOW", |v| v.parse::<usize>().map_err(|e| e.to_string())).unwrap_or(0);
	emu.with_precision_override(precision).with_native_below(native_below)
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

/// the variable `name`, lower case and trimmed, read by `parse`: `None` when unset, or (with a
/// warning) when `parse` refuses it
fn read<V>(name: &str, parse: impl FnOnce(&str) -> Result<V, String>) -> Option<V> {
	let value = std::env::var(name).ok()?;
	let value = value.trim().to_ascii_lowercase();
	parse(&value)
		.map_err(|reason| log::warn!("emugemm: {name}={value} ignored: {reason}"))
		.ok()
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn backends_are_read_by_name() {
		assert_eq!(parse_backend("cpu"), Ok(Backend::CpuEmulation));
		assert_eq!(parse_backend("gpu"), Ok(Backend::Gpu));
		assert!(parse_backend("tpu").is_err());
	}
}
