//! one JSON line per intercepted call, where `EMUGEMM_HOOK_LOG` names a file

use crate::config::Config;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// what one call did
pub(crate) struct Entry {
	pub routine: &'static str,
	pub shape: (i64, i64, i64),
	pub ops: (i32, i32),
	/// "emulated", "native" or "failed"
	pub action: &'static str,
	/// the precision asked, where the call was emulated or tried
	pub precision: String,
	/// the report of an emulated call: scheme, parameter, certified bits, native rows
	pub report: Option<emugemm_c::EmugemmReport>,
	/// why the call went native or failed
	pub reason: String,
	pub micros: f64,
}

/// appends `entry` to the log, where there is one
pub(crate) fn write(entry: &Entry) {
	static FILE: OnceLock<Option<Mutex<File>>> = OnceLock::new();
	let file = FILE.get_or_init(|| {
		let path = Config::get().log.as_ref()?;
		File::options()
			.create(true)
			.append(true)
			.open(path)
			.map_err(|e| eprintln!("emugemm-cublas: EMUGEMM_HOOK_LOG={path:?}: {e}"))
			.ok()
			.map(Mutex::new)
	});
	let Some(file) = file else { return };
	let line = json(entry);
	let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
	let _ = writeln!(file, "{line}");
}

/// `entry` as one JSON object
fn json(e: &Entry) -> String {
	let op = |o: i32| match o {
		0 => "N",
		1 => "T",
		2 => "C",
		_ => "?",
	};
	let plan = match &e.report {
		Some(r) => {
			let scheme = match r.scheme {
				emugemm_c::EmugemmScheme::Native => "native",
				emugemm_c::EmugemmScheme::SchemeI => "scheme1",
				emugemm_c::EmugemmScheme::SchemeII => "scheme2",
			};
			let bits = if r.certified_bits.is_finite() {
				format!("{:.1}", r.certified_bits)
			} else {
				"null".into()
			};
			let why = String::from_utf8_lossy(&r.native_reason).trim_end_matches('\0').to_string();
			format!(
				r#","scheme":"{scheme}","parameter":{},"certified_bits":{bits},"native_rows":{},"native_reason":"{}""#,
				r.parameter,
				r.native_rows,
				escaped(&why)
			)
		},
		None => String::new(),
	};
	format!(
		r#"{{"routine":"{}","m":{},"n":{},"k":{},"transa":"{}","transb":"{}","action":"{}","precision":"{}"{plan},"reason":"{}","us":{:.1},"pid":{}}}"#,
		e.routine,
		e.shape.0,
		e.shape.1,
		e.shape.2,
		op(e.ops.0),
		op(e.ops.1),
		e.action,
		escaped(&e.precision),
		escaped(&e.reason),
		e.micros,
		std::process::id()
	)
}

/// `s` as the inside of a JSON string
fn escaped(s: &str) -> String {
	s.chars()
		.flat_map(|c| match c {
			'"' => vec!['\\', '"'],
			'\\' => vec!['\\', '\\'],
			c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
			c => vec![c],
		})
		.collect()
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn a_line_is_one_json_object() {
		let entry = Entry {
			routine: "cublasDgemm_v2",
			shape: (8, 9, 10),
			ops: (0, 2),
			action: "native",
			precision: "f64".into(),
			report: None,
			reason: "a \"quoted\"\nreason\\".into(),
			micros: 12.25,
		};
		let line = json(&entry);
		assert!(!line.contains('\n'));
		assert!(line.starts_with(r#"{"routine":"cublasDgemm_v2","m":8,"n":9,"k":10,"transa":"N","transb":"C","action":"native""#));
		assert!(line.contains(r#""reason":"a \"quoted\"\u000areason\\""#), "{line}");
	}
}
