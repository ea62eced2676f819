//! every call reaches the libcublas its handle came from, unchanged, and returns its status

use crate::harness::{BELOW, Call, EMULATING, NOT_INTERCEPTED, REFUSED, Reason, by_size, interposer, run, scratch};
use std::collections::BTreeSet;
use std::process::Command;

/// the harness without the interposer: every scenario's calls reach their stand-in directly, so
/// that a failure of the tests below is the interposer's
#[test]
fn without_the_interposer_every_call_reaches_its_stand_in() {
	let dir = scratch("without_interposer");
	for scenario in ["forward-all", "two-versions", "version14", "bad-input", "status", "threads"] {
		let run = run(&dir, scenario, &[scenario], &[("LD_PRELOAD", "")]);
		run.assert_reached();
		run.assert_finished();
		assert!(!run.log.exists(), "{scenario}: a log without the interposer");
		if scenario == "threads" {
			threads_summary(&run);
		} else {
			assert!(!run.calls.is_empty(), "{scenario}: no call\n{}", run.context());
		}
	}
}

/// the stand-in defines every cuBLAS symbol the interposer exports (read with binutils' `nm`,
/// which the C compiler's linker comes with), so that a symbol the interposer starts to export is
/// tested here too
#[test]
fn the_stand_in_knows_every_symbol_the_interposer_exports() {
	let dir = scratch("symbols");
	let run = run(&dir, "symbols", &["symbols"], &[("LD_PRELOAD", "")]);
	run.assert_finished();
	let known: BTreeSet<&str> = run
		.stdout
		.lines()
		.filter_map(|l| l.strip_prefix("symbol "))
		.filter_map(|l| l.strip_suffix(" intercepted"))
		.collect();
	assert_eq!(known.len(), 38, "{}", run.context());
	let nm = Command::new("nm")
		.args(["-D", "--defined-only"])
		.arg(interposer())
		.output()
		.expect("nm (binutils)");
	assert!(nm.status.success(), "nm: {}", String::from_utf8_lossy(&nm.stderr));
	let listing = String::from_utf8_lossy(&nm.stdout);
	let exported: BTreeSet<&str> = listing
		.lines()
		.filter_map(|l| l.split_whitespace().nth(2))
		.filter(|name| name.starts_with("cublas"))
		.collect();
	assert_eq!(
		exported, known,
		"the interposer's cuBLAS symbols against the stand-in's (tests/standin/symbols.h)"
	);
}

/// the stream forward-all sets on its handle (driver.c)
const FORWARD_ALL_STREAM: &str = "0x5eed0000";

#[test]
fn every_symbol_reaches_the_stand_in_unchanged() {
	let dir = scratch("forward_all");
	let run = run(&dir, "forward-all", &["forward-all"], EMULATING);
	run.assert_reached();
	run.assert_finished();
	// 38 symbols below and above the threshold, a GemmEx of half precision, the TRSM
	assert_eq!(run.calls.len(), 38 * 2 + 2, "{}", run.context());
	let symbols: BTreeSet<&str> = run.calls.iter().map(|c| c.symbol.as_str()).collect();
	assert_eq!(symbols.len(), 39, "{symbols:?}");
	for call in &run.calls {
		let record = call.own_records()[0];
		assert_eq!(record.stream.as_deref(), Some(FORWARD_ALL_STREAM), "{}", record.line);
	}
	let trsm = run.calls.iter().find(|c| c.symbol == NOT_INTERCEPTED).expect("the TRSM call");
	assert_eq!(trsm.own_records()[0].version, 13, "{}", trsm.sent);
	run.assert_logged(|call| match call.label.as_str() {
		"small" => BELOW,
		"large" => REFUSED,
		// a type the interposer does not emulate (its line's type is null): forwarded, for a reason
		// of its own
		_ => Reason::Any,
	});
}

#[test]
fn two_libcublas_in_one_process_each_get_their_own_calls() {
	let dir = scratch("two_versions");
	let run = run(&dir, "two-versions", &["two-versions"], EMULATING);
	run.assert_reached();
	run.assert_finished();
	let versions: BTreeSet<u32> = run.calls.iter().map(|c| c.version).collect();
	assert_eq!(versions, [12, 13].into(), "{}", run.context());
	// 9 symbols, two sizes, two libraries
	assert_eq!(run.calls.len(), 9 * 2 * 2, "{}", run.context());
	run.assert_logged(by_size);
}

#[test]
fn a_major_version_the_interposer_does_not_know_is_forwarded_to() {
	let dir = scratch("version14");
	let run = run(&dir, "version14", &["version14"], EMULATING);
	run.assert_reached();
	run.assert_finished();
	assert!(run.calls.iter().all(|c| c.version == 14), "{}", run.context());
	assert_eq!(run.calls.len(), 9 * 2, "{}", run.context());
	run.assert_logged(by_size);
}

/// the calls of the threads scenario: 8 threads, 200 each
pub const THREAD_CALLS: usize = 8 * 200;

/// the driver's own comparison of the threads' calls with the records (driver.c, `threads`)
pub fn threads_summary(run: &crate::harness::Run) {
	let expected = format!("threads workers=8 calls={THREAD_CALLS} failed=0 records={THREAD_CALLS} matched={THREAD_CALLS} foreign=0");
	let summary = run.stdout.lines().find(|l| l.starts_with("threads "));
	let strays: Vec<&str> = run
		.stdout
		.lines()
		.filter(|l| l.starts_with("missing ") || l.starts_with("unexpected "))
		.collect();
	assert_eq!(
		summary,
		Some(expected.as_str()),
		"records against calls: {strays:#?}\n{}",
		run.context()
	);
}

#[test]
fn eight_threads_each_with_its_own_handle_and_stream() {
	let dir = scratch("threads");
	let run = run(&dir, "threads", &["threads"], EMULATING);
	run.assert_finished();
	threads_summary(&run);
	let lines = run.log_lines();
	assert_eq!(lines.len(), THREAD_CALLS, "{}", run.context());
	let mut failures = vec![];
	for line in &lines {
		let small = line["m"].as_i64().is_some_and(|m| m < 256);
		let reason = line["reason"].as_str().unwrap_or_default();
		let expected = if small {
			reason == "below EMUGEMM_HOOK_MIN"
		} else {
			reason.starts_with("not available")
		};
		if !expected || line["action"] != "forwarded" || line["pid"] != run.pid {
			failures.push(line.to_string());
		}
	}
	assert!(
		failures.is_empty(),
		"{} lines not as expected, the first: {:#?}",
		failures.len(),
		&failures[..failures.len().min(5)]
	);
}

#[test]
fn bad_arguments_are_left_to_cublas() {
	let dir = scratch("bad_input");
	let run = run(&dir, "bad-input", &["bad-input"], EMULATING);
	run.assert_reached();
	run.assert_finished();
	// the stand-in's CUBLAS_STATUS_INVALID_VALUE, whatever the interposer thinks of the call
	for call in &run.calls {
		assert_eq!(call.returned, Some(7), "{}", call.sent);
	}
	run.assert_logged(|call: &Call| match call.label.as_str() {
		// cuBLAS's quick return, not an error: the interposer may forward it for any reason
		"empty-batch" => Reason::Any,
		_ => Reason::StartsWith("invalid arguments"),
	});
}

#[test]
fn the_stand_ins_status_comes_back_unchanged() {
	let dir = scratch("status");
	let run = run(&dir, "status", &["status"], EMULATING);
	run.assert_reached();
	run.assert_finished();
	// six calls per status, in the order the driver sets them
	let statuses = [0, 7, 13, 14, 3, 8, 15, 16, 1];
	assert_eq!(run.calls.len(), statuses.len() * 6, "{}", run.context());
	for (i, call) in run.calls.iter().enumerate() {
		assert_eq!(call.returned, Some(statuses[i / 6]), "{}", call.sent);
	}
	run.assert_logged(by_size);
}
