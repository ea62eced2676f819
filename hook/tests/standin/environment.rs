//! what the interposer makes of its environment: a value it cannot use, or a variable it does not
//! read, reported once per process on standard error; the spellings of on and off

use crate::harness::{REFUSED, Reason, Run, driver, run, scratch};

/// twenty calls below the threshold: a message per call, or per thread, would show
const CALLS: &[&str] = &["single", "cublasDgemm_v2", "20", "3"];

/// a run of [`CALLS`] with `env` and no other `EMUGEMM_` variable, whose calls all reached the
/// stand-in
fn with(test: &str, env: &[(&str, &str)]) -> Run {
	let dir = scratch(test);
	let run = run(&dir, test, CALLS, env);
	run.assert_reached();
	run.assert_finished();
	run
}

/// whether `line` goes on after naming `var` (says what is done instead), a few words at least
fn explains(line: &str, var: &str) -> bool {
	line.split_once(var).is_some_and(|(_, rest)| rest.split_whitespace().count() >= 3)
}

/// tests that `var=value` is reported on standard error in one line that names the variable, says
/// what is done instead, and names each of `named`
macro_rules! reported_once {
	($($test:ident: $var:literal = $value:literal, naming [$($named:literal),*];)+) => {$(
		#[test]
		fn $test() {
			let run = with(stringify!($test), &[($var, $value)]);
			let said = run.said($var);
			assert_eq!(said.len(), 1, "{}={}: the interposer's lines about it: {said:#?}\n{}", $var, $value, run.context());
			assert!(explains(said[0], $var), "{}={}: {:?} does not say what is done instead", $var, $value, said[0]);
			$(assert!(said[0].contains($named), "{}={}: {:?} does not name {:?}", $var, $value, said[0], $named);)*
		}
	)+};
}

reported_once! {
	an_unknown_number_of_moduli_is_reported_once: "EMUGEMM_HOOK_D" = "scheme2=99", naming ["scheme2=99"];
	an_unreachable_number_of_bits_is_reported_once: "EMUGEMM_HOOK_D" = "bits=60", naming ["bits=60"];
	a_batched_setting_neither_on_nor_off_is_reported_once: "EMUGEMM_HOOK_BATCHED" = "maybe", naming ["maybe"];
	a_threshold_that_is_no_number_is_reported_once: "EMUGEMM_HOOK_MIN" = "abc", naming ["abc"];
	a_misspelled_variable_is_reported_once: "EMUGEMM_HOOK_DD" = "f64", naming [];
}

#[test]
fn valid_settings_say_nothing() {
	let env = [
		("EMUGEMM_HOOK_D", "scheme2=14"),
		("EMUGEMM_HOOK_Z", "bits=50"),
		("EMUGEMM_HOOK_S", "f32"),
		("EMUGEMM_HOOK_C", "off"),
		("EMUGEMM_HOOK_MIN", "100"),
		("EMUGEMM_HOOK_BATCHED", "on"),
		("EMUGEMM_HOOK_RANK_K", "off"),
	];
	let run = with("valid_settings", &env);
	assert!(run.said("").is_empty(), "valid settings, yet:\n{}", run.context());
}

/// what the log says of a batch above the threshold with batched calls off
const OFF: Reason = Reason::Is("batched calls off (EMUGEMM_HOOK_BATCHED)");

/// tests that `EMUGEMM_HOOK_BATCHED=value` makes a strided batch above the threshold forwarded for
/// `reason`, without a word on standard error
macro_rules! batched {
	($($test:ident: $value:literal => $reason:expr;)+) => {$(
		#[test]
		fn $test() {
			let dir = scratch(stringify!($test));
			let args = ["single", "cublasDgemmStridedBatched", "2", "300"];
			let run = run(&dir, "batched", &args, &[("EMUGEMM_HOOK_BATCHED", $value)]);
			run.assert_reached();
			run.assert_finished();
			run.assert_logged(|_| $reason);
			assert!(run.said("EMUGEMM_HOOK_BATCHED").is_empty(), "EMUGEMM_HOOK_BATCHED={}:\n{}", $value, run.context());
		}
	)+};
}

batched! {
	batched_1_is_on: "1" => REFUSED;
	batched_true_is_on: "true" => REFUSED;
	batched_on_is_on: "on" => REFUSED;
	batched_yes_is_on: "yes" => REFUSED;
	batched_0_is_off: "0" => OFF;
	batched_false_is_off: "false" => OFF;
	batched_off_is_off: "off" => OFF;
	batched_no_is_off: "no" => OFF;
}

/// a standard error that fails every write (a full disk): the interposer's messages (an unusable
/// variable, a log it cannot open, calls it cannot serve) must not stop the program
#[test]
fn a_standard_error_that_cannot_be_written_stops_nothing() {
	let dir = scratch("full_stderr");
	let link = dir.join("link.jsonl");
	std::os::unix::fs::symlink(dir.join("target.jsonl"), &link).expect("a symbolic link");
	let link = link.to_string_lossy().into_owned();
	let env = [
		("EMUGEMM_HOOK_D", "scheme2=99"),
		("EMUGEMM_HOOK_DD", "on"),
		("EMUGEMM_HOOK_LOG", link.as_str()),
	];
	let full = std::fs::File::options().write(true).open("/dev/full").expect("/dev/full");
	let done = driver(&["forward-all"], &env).stderr(full).output().expect("the driver runs");
	let out = String::from_utf8_lossy(&done.stdout);
	assert!(
		done.status.success() && out.lines().any(|l| l == "done"),
		"{:?}\n{out}",
		done.status
	);
}
