//! the log file: whole lines from processes writing at once, and no symbolic link followed

use crate::forwarding::{THREAD_CALLS, threads_summary};
use crate::harness::{read_log, run, scratch, spawn};
use std::collections::BTreeMap;

#[test]
fn four_processes_append_whole_lines_to_one_log() {
	let dir = scratch("four_processes");
	let log = dir.join("shared.jsonl");
	let log = log.to_str().expect("a UTF-8 path");
	// every call below the threshold: this test is about the lines, not about what they say
	let env = [("EMUGEMM_HOOK_LOG", log), ("EMUGEMM_HOOK_MIN", "100000")];
	let pending: Vec<_> = (0..4).map(|i| spawn(&dir, &format!("threads{i}"), &["threads"], &env)).collect();
	let runs: Vec<_> = pending.into_iter().map(|p| p.wait()).collect();
	for run in &runs {
		run.assert_finished();
		threads_summary(run);
	}
	let text = std::fs::read_to_string(log).expect("the shared log");
	let broken: Vec<&str> = text
		.lines()
		.filter(|line| serde_json::from_str::<serde_json::Value>(line).map_or(true, |v| !v.is_object()))
		.collect();
	assert!(
		broken.is_empty(),
		"{} of {} lines are not one JSON object each (lines written in pieces interleave), the first: {:#?}",
		broken.len(),
		text.lines().count(),
		&broken[..broken.len().min(3)]
	);
	let mut per_process = BTreeMap::new();
	for line in read_log(std::path::Path::new(log)) {
		*per_process.entry(line["pid"].as_u64().unwrap_or(0)).or_insert(0) += 1;
	}
	let expected: BTreeMap<u64, usize> = runs.iter().map(|r| (u64::from(r.pid), THREAD_CALLS)).collect();
	assert_eq!(per_process, expected, "lines per process");
}

#[test]
fn a_log_path_that_is_a_symbolic_link_is_not_followed() {
	let dir = scratch("symlink");
	let target = dir.join("target.jsonl");
	std::fs::write(&target, "").expect("the link's target");
	let link = dir.join("link.jsonl");
	std::os::unix::fs::symlink(&target, &link).expect("a symbolic link");
	let env = [("EMUGEMM_HOOK_LOG", link.to_str().expect("a UTF-8 path"))];
	let run = run(&dir, "symlink", &["single", "cublasDgemm_v2", "5", "3"], &env);
	run.assert_reached();
	run.assert_finished();
	let written = std::fs::read_to_string(&target).expect("the link's target");
	assert!(written.is_empty(), "the log went through the link into its target:\n{written}");
	assert!(
		std::fs::symlink_metadata(&link).expect("the link").is_symlink(),
		"the link was replaced"
	);
	let said = run.said("EMUGEMM_HOOK_LOG");
	assert_eq!(said.len(), 1, "the interposer's lines about the log: {said:#?}\n{}", run.context());
}
