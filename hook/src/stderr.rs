//! the interposer's messages on standard error

use std::io::Write;

/// writes `line` and a newline to standard error, ignoring a failure (a closed or full stderr
/// must not stop the program): the interposer's messages, each prefixed `emugemm-cublas: `
pub(crate) fn say(line: &str) {
	let _ = std::io::stderr().write_all(format!("emugemm-cublas: {line}\n").as_bytes());
}
