//! running the driver (tests/standin/driver.c) under the interposer, and reading what it printed,
//! what the stand-ins recorded and what the interposer logged

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// the folder of the stand-ins, the callers and the driver (build.rs), unless the variable of the
/// same name gives a copy of it
const STANDIN_DIR: &str = env!("EMUGEMM_STANDIN_DIR");
/// where the tests' files go, a folder of its own per test, unless `EMUGEMM_STANDIN_SCRATCH` says
const SCRATCH: &str = env!("CARGO_TARGET_TMPDIR");

/// the folder named by the variable `name` where it is set, otherwise `built`
fn folder(name: &str, built: &str) -> PathBuf {
	std::env::var_os(name).map_or_else(|| PathBuf::from(built), PathBuf::from)
}
/// the interposer's file name
const INTERPOSER: &str = "libemugemm_cublas.so";
/// the longest a driver may run: a scenario takes well under a second
const TIMEOUT: Duration = Duration::from_secs(20);
/// the one symbol of the stand-in the interposer does not export
pub const NOT_INTERCEPTED: &str = "cublasDtrsm_v2";

/// what makes every valid call above the threshold ask the emulated side: batched calls and rank-k
/// updates on (otherwise forwarded before it is asked)
pub const EMULATING: &[(&str, &str)] = &[("EMUGEMM_HOOK_BATCHED", "on"), ("EMUGEMM_HOOK_RANK_K", "on")];

/// the interposer cargo built with this test: in the test executable's folder (`deps`) or the one
/// above it
pub fn interposer() -> PathBuf {
	let exe = std::env::current_exe().expect("the test's own path");
	let deps = exe.parent().expect("the test's folder");
	[Some(deps.to_path_buf()), deps.parent().map(Path::to_path_buf)]
		.into_iter()
		.flatten()
		.map(|folder| folder.join(INTERPOSER))
		.find(|path| path.is_file())
		.unwrap_or_else(|| {
			panic!(
				"{INTERPOSER} is neither in {} nor in the folder above: build the hook crate's cdylib \
				 (cargo test -p emugemm-cublas-hook builds it with the tests)",
				deps.display()
			)
		})
}

/// a fresh, empty folder for the test `name`
pub fn scratch(name: &str) -> PathBuf {
	let dir = folder("EMUGEMM_STANDIN_SCRATCH", SCRATCH).join("standin").join(name);
	let _ = std::fs::remove_dir_all(&dir);
	std::fs::create_dir_all(&dir).expect("a scratch folder");
	dir
}

/// a driver started under the interposer
pub struct Pending {
	tag: String,
	child: Child,
	stdout: PathBuf,
	stderr: PathBuf,
	log: PathBuf,
}

/// starts the driver with `args` in `dir` under the interposer (unless `env` sets `LD_PRELOAD`),
/// with no GPU visible, the log `dir/<tag>.jsonl` (unless `env` names another) and `env`; no other
/// `EMUGEMM_` variable is passed
pub fn spawn(dir: &Path, tag: &str, args: &[&str], env: &[(&str, &str)]) -> Pending {
	let (stdout, stderr) = (dir.join(format!("{tag}.out")), dir.join(format!("{tag}.err")));
	let log = env
		.iter()
		.find(|(key, _)| *key == "EMUGEMM_HOOK_LOG")
		.map_or_else(|| dir.join(format!("{tag}.jsonl")), |(_, path)| PathBuf::from(path));
	let mut command = driver(args, env);
	command
		.env("EMUGEMM_HOOK_LOG", &log)
		.envs(env.iter().copied())
		.stdout(std::fs::File::create(&stdout).expect("the driver's output file"))
		.stderr(std::fs::File::create(&stderr).expect("the driver's error file"));
	let child = command.spawn().unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
	Pending {
		tag: format!("{tag}: driver {}", args.join(" ")),
		child,
		stdout,
		stderr,
		log,
	}
}

/// the driver with `args` under the interposer (unless `env` sets `LD_PRELOAD`), with no GPU
/// visible and `env`, no other `EMUGEMM_` variable passed, its output not yet directed
pub fn driver(args: &[&str], env: &[(&str, &str)]) -> Command {
	let mut command = Command::new(folder("EMUGEMM_STANDIN_DIR", STANDIN_DIR).join("driver"));
	command.args(args);
	for (key, _) in std::env::vars_os() {
		if key.to_string_lossy().starts_with("EMUGEMM_") {
			command.env_remove(key);
		}
	}
	if !env.iter().any(|(key, _)| *key == "LD_PRELOAD") {
		command.env("LD_PRELOAD", interposer());
	}
	command
		.env("CUDA_VISIBLE_DEVICES", "")
		// a panic's message, not its backtrace, at the end of standard error
		.env("RUST_BACKTRACE", "0")
		.envs(env.iter().copied());
	command
}

/// [`spawn`], waited for
pub fn run(dir: &Path, tag: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
	spawn(dir, tag, args, env).wait()
}

impl Pending {
	/// waits for the driver (killed after [`TIMEOUT`]) and reads what it wrote
	pub fn wait(mut self) -> Run {
		let start = Instant::now();
		let status = loop {
			if let Some(status) = self.child.try_wait().expect("the driver's status") {
				break Some(status);
			}
			if start.elapsed() > TIMEOUT {
				let _ = self.child.kill();
				let _ = self.child.wait();
				break None;
			}
			std::thread::sleep(Duration::from_millis(5));
		};
		let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
		let (stdout, stderr) = (read(&self.stdout), read(&self.stderr));
		let mut run = Run {
			tag: self.tag,
			status,
			stdout,
			stderr,
			log: self.log,
			pid: 0,
			calls: vec![],
			records: vec![],
		};
		run.parse();
		run
	}
}

/// one record of a stand-in: "vN name handle=0x.. arg=value ... | status=S stream=0x.. mode=M", or
/// "... | status=1 foreign handle"
#[derive(Clone, Debug)]
pub struct Record {
	pub version: u32,
	pub function: String,
	/// the call as recorded, without the version: "name handle=0x.. arg=value ..."
	pub body: String,
	pub status: i32,
	pub stream: Option<String>,
	pub foreign: bool,
	pub line: String,
}

impl Record {
	fn parse(line: &str) -> Record {
		fn bad<T>(line: &str) -> T {
			panic!("a record the stand-in cannot have written: {line:?}")
		}
		let (head, tail) = line.split_once(" | ").unwrap_or_else(|| bad(line));
		let (version, body) = head.split_once(' ').unwrap_or_else(|| bad(line));
		let version = version.strip_prefix('v').and_then(|v| v.parse().ok()).unwrap_or_else(|| bad(line));
		let field = |key: &str| tail.split(' ').find_map(|word| word.strip_prefix(key)).map(str::to_string);
		Record {
			version,
			function: body.split(' ').next().unwrap_or_default().to_string(),
			body: body.to_string(),
			status: field("status=").and_then(|s| s.parse().ok()).unwrap_or_else(|| bad(line)),
			stream: field("stream="),
			foreign: tail.contains("foreign handle"),
			line: line.to_string(),
		}
	}
}

/// one call the driver made: what it sent, what came back, and what the stand-ins recorded after it
#[derive(Clone, Debug)]
pub struct Call {
	pub label: String,
	/// the caller library's (and so its stand-in's) cuBLAS version
	pub version: u32,
	pub symbol: String,
	/// "name handle=0x.. arg=value ...", as a record of it reads
	pub sent: String,
	pub args: BTreeMap<String, String>,
	pub returned: Option<i32>,
	pub records: Vec<Record>,
}

impl Call {
	/// the integer argument `name`
	pub fn arg(&self, name: &str) -> i64 {
		let value = self
			.args
			.get(name)
			.unwrap_or_else(|| panic!("{} has no argument {name}", self.symbol));
		value
			.parse()
			.unwrap_or_else(|_| panic!("{}'s {name} = {value} is not an integer", self.symbol))
	}

	/// whether the interposer exports the symbol
	pub fn intercepted(&self) -> bool {
		self.symbol != NOT_INTERCEPTED
	}

	/// whether the symbol is a rank-k update (SYRK, HERK)
	pub fn rank_k(&self) -> bool {
		self.symbol.contains("syrk") || self.symbol.contains("herk")
	}

	/// `m`, `n`, `k` of the product, as the log writes them (`n`, `n`, `k` for a rank-k update)
	pub fn shape(&self) -> (i64, i64, i64) {
		if self.rank_k() {
			(self.arg("n"), self.arg("n"), self.arg("k"))
		} else {
			(self.arg("m"), self.arg("n"), self.arg("k"))
		}
	}

	/// the element type the log names: the letter of a typed routine, the data type of an Ex one
	/// (`None` for a type the interposer does not emulate)
	pub fn element(&self) -> Option<&'static str> {
		let name = self.symbol.strip_prefix("cublas").expect("a cuBLAS symbol");
		if name.starts_with("Gemm") {
			return match (self.arg("Atype"), self.arg("computeType")) {
				(0, 68 | 69) => Some("S"),
				(1, 70 | 71) => Some("D"),
				(4, 68 | 69) => Some("C"),
				(5, 70 | 71) => Some("Z"),
				_ => None,
			};
		}
		["S", "D", "C", "Z"].into_iter().find(|letter| name.starts_with(letter))
	}

	/// the records of the called function itself (of any stand-in), not of the handle functions
	pub fn own_records(&self) -> Vec<&Record> {
		self.records.iter().filter(|r| r.function == self.symbol).collect()
	}
}

/// what one run of the driver left
pub struct Run {
	pub tag: String,
	/// `None` where it was killed for running too long
	pub status: Option<ExitStatus>,
	pub stdout: String,
	pub stderr: String,
	pub log: PathBuf,
	pub pid: u32,
	pub calls: Vec<Call>,
	/// every record, those of the handles' set-up among them
	pub records: Vec<Record>,
}

/// why a logged call was forwarded
#[derive(Clone, Copy, Debug)]
pub enum Reason {
	Is(&'static str),
	StartsWith(&'static str),
	/// any reason, not empty
	Any,
}

impl Reason {
	fn admits(self, reason: &str) -> bool {
		match self {
			Reason::Is(expected) => reason == expected,
			Reason::StartsWith(prefix) => reason.starts_with(prefix),
			Reason::Any => !reason.is_empty(),
		}
	}
}

/// what the log must say of every intercepted call at or above the threshold with valid arguments:
/// the emulated side refused it (no GPU is visible)
pub const REFUSED: Reason = Reason::StartsWith("not available");
/// ... and below it
pub const BELOW: Reason = Reason::Is("below EMUGEMM_HOOK_MIN");

impl Run {
	fn parse(&mut self) {
		for line in self.stdout.lines() {
			let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
			match kind {
				"pid" => self.pid = rest.parse().expect("the driver's pid"),
				"label" => self.calls.push(Call {
					label: rest.to_string(),
					version: 0,
					symbol: String::new(),
					sent: String::new(),
					args: BTreeMap::new(),
					returned: None,
					records: vec![],
				}),
				"sent" => {
					let call = self.calls.last_mut().expect("a label before each call");
					let (version, sent) = rest.split_once(' ').expect("sent vN call");
					call.version = version.trim_start_matches('v').parse().expect("the caller's version");
					call.sent = sent.to_string();
					let mut words = sent.split(' ');
					call.symbol = words.next().unwrap_or_default().to_string();
					call.args = words
						.filter_map(|w| w.split_once('='))
						.map(|(k, v)| (k.to_string(), v.to_string()))
						.collect();
				},
				"returned" => self.calls.last_mut().expect("a call").returned = rest.parse().ok(),
				"record" => {
					let record = Record::parse(rest);
					if let Some(call) = self.calls.last_mut() {
						call.records.push(record.clone());
					}
					self.records.push(record);
				},
				_ => {},
			}
		}
	}

	/// the last lines of the driver's output and error (without a backtrace's frames: a panic
	/// that cannot unwind prints them whatever `RUST_BACKTRACE` says), for a failure's message
	pub fn context(&self) -> String {
		let tail = |lines: Vec<&str>, n: usize| lines[lines.len().saturating_sub(n)..].join("\n");
		let frame = |line: &&str| {
			let line = line.trim_start();
			line.starts_with("at ") || line.split_once(':').is_some_and(|(n, _)| n.parse::<u32>().is_ok())
		};
		format!(
			"[{}] exit: {}\n--- stdout (last lines) ---\n{}\n--- stderr (last lines) ---\n{}",
			self.tag,
			self.status.map_or("killed after the timeout".into(), |s| s.to_string()),
			tail(self.stdout.lines().collect(), 8),
			tail(self.stderr.lines().filter(|l| !frame(l)).collect(), 12)
		)
	}

	/// the driver exited 0 after its scenario's last call
	pub fn assert_finished(&self) {
		let done = self.status.is_some_and(|s| s.success()) && self.stdout.lines().any(|l| l == "done");
		assert!(done, "the driver did not finish its scenario\n{}", self.context());
	}

	/// every call reached the stand-in of its handle's library once, with its arguments as sent,
	/// and returned the stand-in's status; no stand-in saw a handle not its own
	pub fn assert_reached(&self) {
		let mut failures = String::new();
		for call in &self.calls {
			let own = call.own_records();
			match (own.as_slice(), call.returned) {
				([record], Some(returned)) if record.version == call.version && record.body == call.sent => {
					if record.status != returned {
						let _ = writeln!(failures, "{}: returned {returned}, the stand-in {}", call.sent, record.status);
					}
				},
				(records, returned) => {
					let lines: Vec<&str> = records.iter().map(|r| r.line.as_str()).collect();
					let _ = writeln!(
						failures,
						"sent v{} {}\n  returned {returned:?}; the stand-ins recorded {} call(s) of it: {lines:#?}",
						call.version,
						call.sent,
						records.len()
					);
				},
			}
		}
		for record in self.records.iter().filter(|r| r.foreign) {
			let _ = writeln!(failures, "foreign handle: {}", record.line);
		}
		assert!(
			failures.is_empty(),
			"calls that did not reach their stand-in as sent:\n{failures}\n{}",
			self.context()
		);
	}

	/// the log's lines, each parsed
	pub fn log_lines(&self) -> Vec<Value> {
		read_log(&self.log)
	}

	/// one log line per intercepted call, in order, of the call's routine, type, shape and ops,
	/// forwarded for `reason(call)`, with this process's pid
	pub fn assert_logged(&self, reason: impl Fn(&Call) -> Reason) {
		let lines = self.log_lines();
		let calls: Vec<&Call> = self.calls.iter().filter(|c| c.intercepted()).collect();
		let mut failures = String::new();
		if lines.len() != calls.len() {
			let _ = writeln!(failures, "{} log lines for {} intercepted calls", lines.len(), calls.len());
		}
		for (call, line) in calls.iter().zip(&lines) {
			if let Err(why) = logged(call, line, reason(call), self.pid) {
				let _ = writeln!(failures, "{}: {why}\n  line: {line}", call.sent);
			}
		}
		let trsm = lines.iter().filter(|l| l["routine"] == NOT_INTERCEPTED).count();
		if trsm > 0 {
			let _ = writeln!(failures, "{trsm} lines of {NOT_INTERCEPTED}, which the interposer does not export");
		}
		assert!(
			failures.is_empty(),
			"the log ({}):\n{failures}\n{}",
			self.log.display(),
			self.context()
		);
	}

	/// the lines of standard error that the interposer wrote and that mention `what`
	pub fn said(&self, what: &str) -> Vec<&str> {
		self.stderr
			.lines()
			.filter(|l| l.starts_with("emugemm-cublas:") && l.contains(what))
			.collect()
	}
}

/// the lines of the log at `path` (none where there is no file), each parsed; a line that is not
/// one JSON object fails
pub fn read_log(path: &Path) -> Vec<Value> {
	let text = std::fs::read_to_string(path).unwrap_or_default();
	text.lines()
		.enumerate()
		.map(|(i, line)| match serde_json::from_str::<Value>(line) {
			Ok(value) if value.is_object() => value,
			_ => panic!("line {} of {} is not one JSON object: {line:?}", i + 1, path.display()),
		})
		.collect()
}

/// whether `line` logs `call` as forwarded for `reason` by the process `pid`
fn logged(call: &Call, line: &Value, reason: Reason, pid: u32) -> Result<(), String> {
	let (m, n, k) = call.shape();
	let element = call.element().map_or(Value::Null, Value::from);
	let expect = |key: &str, value: Value| {
		(line[key] == value)
			.then_some(())
			.ok_or_else(|| format!("{key} is {}, not {value}", line[key]))
	};
	expect("routine", Value::from(call.symbol.as_str()))?;
	expect("type", element)?;
	expect("m", m.into())?;
	expect("n", n.into())?;
	expect("k", k.into())?;
	let op = if call.rank_k() { call.arg("trans") } else { call.arg("transa") };
	match ["N", "T", "C"].get(op as usize) {
		Some(letter) if op >= 0 => expect("transa", Value::from(*letter))?,
		_ => line["transa"].as_str().map(|_| ()).ok_or("transa is not a string")?,
	}
	line["transb"].as_str().ok_or("transb is not a string")?;
	expect("action", "forwarded".into())?;
	line["precision"].as_str().ok_or("precision is not a string")?;
	line["us"].as_f64().filter(|us| *us >= 0.0).ok_or("us is not a time")?;
	expect("pid", pid.into())?;
	let said = line["reason"].as_str().ok_or("reason is not a string")?;
	reason
		.admits(said)
		.then_some(())
		.ok_or_else(|| format!("reason {said:?}, expected {reason:?}"))
}

/// a reason by the call's size: [`BELOW`] under 256, [`REFUSED`] at or above it
pub fn by_size(call: &Call) -> Reason {
	let (m, n, k) = call.shape();
	if m.min(n).min(k) < 256 { BELOW } else { REFUSED }
}
