//! one JSON line per intercepted call, where `EMUGEMM_HOOK_LOG` names a file

use crate::config::Config;
use crate::stderr::say;
use emugemm_c::ElementType;
use serde::Serialize;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};

/// what one call did
#[derive(Clone)]
pub(crate) struct Entry {
	pub routine: &'static str,
	/// the element type, where the call's types are one the interposer emulates
	pub kind: Option<ElementType>,
	/// `m`, `n`, `k` of the product (`n`, `n`, `k` for a rank-k update)
	pub shape: (i64, i64, i64),
	/// the ops of the product's operands (for a rank-k update, `trans` and the op that makes the
	/// adjoint of `op(A)` of `A`)
	pub ops: (i32, i32),
	/// the fill mode of a rank-k update
	pub uplo: Option<i32>,
	/// the number of products of a batch (every one `m x n x k`)
	pub batch: Option<i64>,
	/// "forwarded" (to the real cuBLAS, unchanged), "emugemm" (run by the C ABI: the report says
	/// whether its plan emulated or computed natively) or "failed"
	pub action: &'static str,
	/// the precision asked, where the call was emulated or tried
	pub precision: String,
	/// the report of an emulated call: scheme, parameter, certified bits, native rows (a batch's
	/// last product's)
	pub report: Option<emugemm_c::EmugemmReport>,
	/// why the call went native or failed
	pub reason: String,
	/// the tier of the decision that settled the call, where one did: "shape" for a call forwarded
	/// because the library computes it natively from its shape alone, the report's for an
	/// emulated call
	pub tier: Option<&'static str>,
	/// the number of a replay, from 1, of a call recorded into a CUDA graph
	pub replay: Option<u64>,
	/// the ordinal of the GPU of the call's stream, for a call the C ABI ran
	pub gpu: Option<usize>,
	pub micros: f64,
}

/// appends `entry` to the log, where there is one: one `write` of the whole line to a file opened
/// for appending, so that the lines of threads and of processes sharing the file never
/// interleave. The file is opened once, not through a symbolic link (a link there is refused, and
/// said so on standard error)
pub(crate) fn write(entry: &Entry) {
	static FILE: OnceLock<Option<File>> = OnceLock::new();
	let file = FILE.get_or_init(|| {
		let path = Config::get().log.as_ref()?;
		File::options()
			.create(true)
			.append(true)
			.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
			.open(path)
			.map_err(|e| {
				say(&format!(
					"EMUGEMM_HOOK_LOG={path:?}: {e} (a symbolic link is not followed); no log is written"
				))
			})
			.ok()
	});
	let Some(mut file) = file.as_ref() else { return };
	let mut line = json(entry).into_bytes();
	line.push(b'\n');
	// one call: an append of a line this short is not split by the kernel
	let _ = file.write(&line);
}

/// an emulated call's report, as the log writes it
/// `entry` written once `pending`, its call's report, is ready: by the log's thread, which waits
/// for the reports in the order of the calls, so that no intercepted call waits for its line. A
/// product that failed after its call returned is written as `failed`, with its error, and said on
/// standard error (its call's status was given before the failure)
pub(crate) fn write_when_ready(entry: Entry, pending: emugemm::PendingReport) {
	to_writer(entry, Some(pending));
}

/// `entry` (a call recorded into a CUDA graph, `captured`) written now, and a line of its own for
/// each replay of the graph that reaches the call: `emugemm` with the plan that replay chose (or
/// `failed`), its number, and the host's time from the graph reaching the call to the product
/// enqueued. The lines are written by the log's thread; the replay's lane only hands them over
pub(crate) fn write_each_replay(entry: Entry, pending: &emugemm::PendingReport) {
	let replayed = Entry {
		action: "emugemm",
		reason: String::new(),
		..entry.clone()
	};
	to_writer(entry, None);
	pending.on_each(move |n, result| {
		let entry = Entry {
			replay: Some(n),
			micros: result.as_ref().map_or(0.0, |r| r.times.total.as_secs_f64() * 1e6),
			..ready(replayed.clone(), result.clone())
		};
		to_writer(entry, None);
	});
}

/// `entry` handed to the log's thread (started on first use), which writes it once `pending`, where
/// there is one, is ready
fn to_writer(entry: Entry, pending: Option<emugemm::PendingReport>) {
	type Waiting = Mutex<Option<Sender<(Entry, Option<emugemm::PendingReport>)>>>;
	static WRITER: OnceLock<Waiting> = OnceLock::new();
	let writer = WRITER.get_or_init(|| {
		let (send, receive) = channel::<(Entry, Option<emugemm::PendingReport>)>();
		let spawned = std::thread::Builder::new().name("emugemm-hook-log".into()).spawn(move || {
			for (entry, pending) in receive {
				let entry = match pending {
					Some(pending) => ready(entry, pending.wait()),
					None => entry,
				};
				if entry.action == "failed" {
					say(&format!("{}: {}", entry.routine, entry.reason));
				}
				write(&entry);
			}
		});
		Mutex::new(spawned.ok().map(|_| send))
	});
	let sent = writer.lock().map(|w| w.as_ref().map(|w| w.send((entry, pending)).is_ok()));
	if !matches!(sent, Ok(Some(true))) {
		say("the log's thread cannot take a line: lines of emulated calls are not written");
	}
}

/// `entry` with what its call's report gives it: the report and the tier of its decision, or the
/// failure
fn ready(entry: Entry, report: Result<emugemm::Report, emugemm::Error>) -> Entry {
	match report {
		Ok(report) => {
			let tier = tier_name(report.tier());
			Entry {
				report: Some(emugemm_c::EmugemmReport::from(&report)),
				tier: Some(tier),
				..entry
			}
		},
		Err(e) => Entry {
			action: "failed",
			reason: format!("failed after the call returned: {e}"),
			..entry
		},
	}
}

/// the name of `tier` as the log writes it
fn tier_name(tier: emugemm::Tier) -> &'static str {
	match tier {
		emugemm::Tier::Shape => "shape",
		emugemm::Tier::Screen => "screen",
		emugemm::Tier::Bound => "bound",
		emugemm::Tier::Explicit => "explicit",
	}
}

#[derive(Serialize)]
struct Plan {
	scheme: &'static str,
	parameter: u32,
	/// `null` where nothing is certified
	certified_bits: Option<f64>,
	native_rows: i64,
	native_reason: String,
}

/// one log line
#[derive(Serialize)]
struct Line<'a> {
	routine: &'a str,
	#[serde(rename = "type")]
	kind: Option<String>,
	m: i64,
	n: i64,
	k: i64,
	transa: &'static str,
	transb: &'static str,
	/// "L" or "U" for a rank-k update, absent for a GEMM
	#[serde(skip_serializing_if = "Option::is_none")]
	uplo: Option<&'static str>,
	/// the number of products of a batch, absent for a single product
	#[serde(skip_serializing_if = "Option::is_none")]
	batch: Option<i64>,
	action: &'a str,
	precision: &'a str,
	#[serde(flatten)]
	plan: Option<Plan>,
	/// absent where no tier of the decision ran (switched off, too small, bad arguments)
	#[serde(skip_serializing_if = "Option::is_none")]
	tier: Option<&'a str>,
	/// the replay, from 1, of a call recorded into a CUDA graph; absent for any other line
	#[serde(skip_serializing_if = "Option::is_none")]
	replay: Option<u64>,
	/// the GPU the call ran on, by ordinal; absent for a call the C ABI did not run
	#[serde(skip_serializing_if = "Option::is_none")]
	gpu: Option<usize>,
	reason: &'a str,
	us: f64,
	pid: u32,
}

/// `entry` as one JSON object
fn json(e: &Entry) -> String {
	let op = |o: i32| match o {
		0 => "N",
		1 => "T",
		2 => "C",
		_ => "?",
	};
	let plan = e.report.as_ref().map(|r| Plan {
		scheme: match r.scheme {
			emugemm_c::EmugemmScheme::Native => "native",
			emugemm_c::EmugemmScheme::SchemeI => "scheme1",
			emugemm_c::EmugemmScheme::SchemeII => "scheme2",
		},
		parameter: r.parameter,
		certified_bits: r.certified_bits.is_finite().then_some(r.certified_bits),
		native_rows: r.native_rows,
		native_reason: String::from_utf8_lossy(&r.native_reason).trim_end_matches('\0').to_string(),
	});
	let line = Line {
		routine: e.routine,
		kind: e.kind.map(|k| format!("{k:?}")),
		m: e.shape.0,
		n: e.shape.1,
		k: e.shape.2,
		transa: op(e.ops.0),
		transb: op(e.ops.1),
		uplo: e.uplo.map(|u| match u {
			0 => "L",
			1 => "U",
			_ => "?",
		}),
		batch: e.batch,
		action: e.action,
		precision: &e.precision,
		plan,
		tier: e.tier,
		replay: e.replay,
		gpu: e.gpu,
		reason: &e.reason,
		us: (e.micros * 10.0).round() / 10.0,
		pid: std::process::id(),
	};
	serde_json::to_string(&line).expect("a log line is plain data")
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn a_line_is_one_json_object() {
		let entry = Entry {
			routine: "cublasDgemm_v2",
			kind: Some(ElementType::D),
			shape: (8, 9, 10),
			ops: (0, 2),
			uplo: None,
			batch: None,
			action: "forwarded",
			precision: "f64".into(),
			report: None,
			reason: "a \"quoted\"\nreason\\".into(),
			tier: None,
			replay: None,
			gpu: None,
			micros: 12.25,
		};
		let line = json(&entry);
		assert!(!line.contains('\n'));
		assert!(
			line.starts_with(r#"{"routine":"cublasDgemm_v2","type":"D","m":8,"n":9,"k":10,"transa":"N","transb":"C","action":"forwarded""#)
		);
		assert!(line.contains(r#""reason":"a \"quoted\"\nreason\\""#), "{line}");
		let parsed: serde_json::Value = serde_json::from_str(&line).expect("valid JSON");
		assert_eq!(parsed["reason"], "a \"quoted\"\nreason\\");
		assert_eq!(parsed["us"], 12.3);
	}

	#[test]
	fn a_rank_k_line_names_its_triangle() {
		let entry = Entry {
			routine: "cublasZherk_v2_64",
			kind: Some(ElementType::Z),
			shape: (300, 300, 280),
			ops: (2, 0),
			uplo: Some(1),
			batch: None,
			action: "forwarded",
			precision: "f64".into(),
			report: None,
			reason: "below EMUGEMM_HOOK_MIN".into(),
			tier: None,
			replay: None,
			gpu: None,
			micros: 1.0,
		};
		let line = json(&entry);
		assert!(
			line.starts_with(
				r#"{"routine":"cublasZherk_v2_64","type":"Z","m":300,"n":300,"k":280,"transa":"C","transb":"N","uplo":"U","action":"forwarded""#
			),
			"{line}"
		);
	}

	#[test]
	fn a_batch_line_counts_its_products() {
		let entry = Entry {
			routine: "cublasGemmStridedBatchedEx",
			kind: Some(ElementType::C),
			shape: (300, 290, 280),
			ops: (1, 2),
			uplo: None,
			batch: Some(3),
			action: "emugemm",
			precision: "f32".into(),
			report: Some(emugemm_c::EmugemmReport::default()),
			reason: String::new(),
			tier: Some("explicit"),
			replay: None,
			gpu: None,
			micros: 1.0,
		};
		let line = json(&entry);
		assert!(
			line.starts_with(
				r#"{"routine":"cublasGemmStridedBatchedEx","type":"C","m":300,"n":290,"k":280,"transa":"T","transb":"C","batch":3,"action":"emugemm","precision":"f32","scheme":"native""#
			),
			"{line}"
		);
	}

	#[test]
	fn a_replay_line_numbers_its_replay_and_names_its_gpu() {
		let entry = Entry {
			routine: "cublasZgemm_v2",
			kind: Some(ElementType::Z),
			shape: (512, 512, 512),
			ops: (0, 0),
			uplo: None,
			batch: None,
			action: "emugemm",
			precision: "f64".into(),
			report: Some(emugemm_c::EmugemmReport::default()),
			reason: String::new(),
			tier: Some("bound"),
			replay: Some(2),
			gpu: Some(1),
			micros: 1.0,
		};
		let line = json(&entry);
		assert!(line.contains(r#""tier":"bound","replay":2,"gpu":1,"reason":"""#), "{line}");
	}
}
