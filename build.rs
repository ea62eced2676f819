//! build script: compiles the GPU kernels (feature `cuda`) and embeds them
//!
//! with the `cuda` feature, every `cuda/*.cu` becomes an `sm_90a` cubin in `$OUT_DIR` (one nvcc call per
//! file: several files in one call make ptxas serialise wgmma), packed by `fatbinary` into a
//! compressed fatbin (the driver unpacks it when it loads the module: the cubins' `-lineinfo`
//! sections are most of their bytes and compress well). `$OUT_DIR/kernels.rs` lists them as
//! `modules(Arch::Sm90a)` (the architectures are `src/arch.rs`'s, which this script includes): every
//! fatbin, embedded with `include_bytes!`, with the kernel entry points its cubin's ELF symbol table names (the compressed image cannot be read without the driver), read by
//! `src/kernels.rs`. a kernel whose ptxas report shows a register spill or a wgmma serialisation
//! warning fails the build, and so does a kernel name that two files define.
//!
//! the files of [`PORTABLE`], which use no wgmma, TMA or clusters, are also compiled to PTX for
//! `compute_80` (each in a compressed fatbin of its own, listed as `modules(Arch::Portable)`, entry points
//! read from the PTX's `.entry` directives): the driver compiles them for any GPU of compute
//! capability 8.0 or higher, the portable path's kernels.
//!
//! the feature `bench` adds what only the benchmark and the tests launch: the files of
//! [`BENCH_ONLY`], and in every file the code under `#ifdef EMUGEMM_BENCH` (nvcc gets
//! `-DEMUGEMM_BENCH` then).
//!
//! nvcc is searched in this order: `$NVCC`; `$CUDA_HOME/bin/nvcc`, `$CUDA_PATH/bin/nvcc`; `nvcc` on
//! `PATH`; the pip wheel of the active python (`<purelib>/nvidia/cu13/bin/nvcc`);
//! `$EMUGEMM_CUDA_WHEELS/nvidia/cu13/bin/nvcc` (where `scripts/install-nvcc.sh` installs the pinned
//! wheels); `fatbinary` is the one beside it. without nvcc the crate builds without kernels (cfg
//! `emugemm_no_kernels`, a warning), unless `EMUGEMM_REQUIRE_KERNELS=1`, which makes it an error.
//! `EMUGEMM_PTXAS_REPORT=1` prints each kernel's registers, shared memory and stack as cargo
//! warnings. a kernel file whose inputs (nvcc, flags, environment, its `.cu` and every `.cuh`) are
//! those of an earlier successful build in the same `$OUT_DIR` is not compiled again.

#[path = "src/arch.rs"]
#[allow(dead_code)]
mod arch;

use arch::Arch;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// the nvcc flags of every kernel (with the feature `bench`, [`BENCH_DEFINE`] after them)
const NVCC_FLAGS: &[&str] = &[
	"-cubin",
	"-gencode=arch=compute_90a,code=sm_90a",
	"-O3",
	"-std=c++17",
	"--fmad=false",
	"-lineinfo",
	"-Xptxas",
	"-v",
	"-I",
	"cuda",
];

/// the `fatbinary` flags that pack a cubin: every image compressed, in the mode that gives the
/// smallest images (which the CUDA 13.0 driver also unpacks faster than the `balance` mode's)
const FATBIN_FLAGS: &[&str] = &["--64", "--compress-all", "--compress-mode=size"];

/// the nvcc flag of a build with the feature `bench`
const BENCH_DEFINE: &str = "-DEMUGEMM_BENCH";

/// the kernel files (stems) that only the benchmark and the tests launch: built with the feature
/// `bench` alone
const BENCH_ONLY: &[&str] = &["selftest"];

/// the kernel files (stems) of the portable path, also built as `compute_80` PTX: the generic
/// kernels (statistics, balancing, split, bound, reduction, reconstruction and CRT, rows, parts)
const PORTABLE: &[&str] = &[
	"balance",
	"bound",
	"layout",
	"parts",
	"reconstruct",
	"reduce",
	"rows",
	"split",
	"stats",
];

/// the nvcc flags of the portable path's PTX (no line info: it would ship as text)
const PORTABLE_NVCC_FLAGS: &[&str] = &["-ptx", "-arch=compute_80", "-O3", "-std=c++17", "--fmad=false", "-I", "cuda"];

/// the extension of the code nvcc writes for `arch`
fn code_extension(arch: Arch) -> &'static str {
	match arch {
		Arch::Sm90a => "cubin",
		Arch::Portable => "ptx",
	}
}

/// `fatbinary`'s image argument for the code of `arch` at `file`
fn fatbin_image(arch: Arch, file: &Path) -> String {
	match arch {
		Arch::Sm90a => format!("--image3=kind=elf,sm={FATBIN_SM},file={}", file.display()),
		Arch::Portable => format!("--image3=kind=ptx,sm=80,file={}", file.display()),
	}
}

/// the architecture in `fatbinary`'s terms
const FATBIN_SM: &str = "90a";

/// the nvcc release the GPU machine's driver (CUDA 13.0) is known to accept
const NVCC_RELEASE: &str = "release 13.0,";

/// ptxas warnings that mean wgmma instructions were serialised (a silent loss of speed)
const SERIALISATION_WARNINGS: &[&str] = &["(C7509)", "(C7510)", "(C7515)", "(C7517)", "(C7519)"];

/// how many nvcc processes run at once, at most
const MAX_JOBS: usize = 2;

/// every environment variable that changes what this script does
const ENV_VARS: &[&str] = &[
	"NVCC",
	"CUDA_HOME",
	"CUDA_PATH",
	"PATH",
	"EMUGEMM_REQUIRE_KERNELS",
	"EMUGEMM_CUDA_WHEELS",
	"EMUGEMM_PTXAS_REPORT",
	"NVCC_CCBIN",
	"NVCC_PREPEND_FLAGS",
	"NVCC_APPEND_FLAGS",
];

fn main() {
	println!("cargo::rustc-check-cfg=cfg(emugemm_no_kernels)");
	for var in ENV_VARS {
		println!("cargo::rerun-if-env-changed={var}");
	}
	let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
	let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

	let kernels = if env::var_os("CARGO_FEATURE_CUDA").is_some() {
		build_kernels(&manifest_dir, &out_dir)
	} else {
		Vec::new()
	};
	if !kernels.iter().any(|kernel| kernel.target == Arch::Sm90a) {
		println!("cargo::rustc-cfg=emugemm_no_kernels");
	}
	let table = kernel_table(&kernels);
	fs::write(out_dir.join("kernels.rs"), table).expect("cannot write $OUT_DIR/kernels.rs");
}

/// one compiled kernel file: `cuda/<stem>.cu`, its code for `target` (a cubin or PTX) and the
/// compressed fatbin of that
struct Kernel {
	stem: String,
	target: Arch,
	code: PathBuf,
	fatbin: PathBuf,
}

/// a kernel file as embedded: its compressed fatbin and the kernel entry points its code defines
struct Embedded {
	stem: String,
	target: Arch,
	fatbin: PathBuf,
	entries: Vec<String>,
}

/// whether the feature `bench` is on
fn bench() -> bool {
	env::var_os("CARGO_FEATURE_BENCH").is_some()
}

/// the nvcc flags of this build for `target`, before `-o <code> cuda/<stem>.cu`
fn nvcc_flags(target: Arch) -> Vec<&'static str> {
	let mut flags = match target {
		Arch::Sm90a => NVCC_FLAGS.to_vec(),
		Arch::Portable => PORTABLE_NVCC_FLAGS.to_vec(),
	};
	if bench() {
		flags.push(BENCH_DEFINE);
	}
	flags
}

/// compiles every `cuda/*.cu` (but [`BENCH_ONLY`] without the feature `bench`) to a compressed
/// fatbin in `out_dir`; empty when nvcc is missing (and allowed to be)
fn build_kernels(manifest_dir: &Path, out_dir: &Path) -> Vec<Embedded> {
	let cuda_dir = manifest_dir.join("cuda");
	println!("cargo::rerun-if-changed=cuda");
	let mut stems = kernel_sources(&cuda_dir);
	if !bench() {
		stems.retain(|stem| !BENCH_ONLY.contains(&stem.as_str()));
	}
	let nvcc = match find_nvcc() {
		Ok(nvcc) => nvcc,
		Err(searched) => {
			no_nvcc(&searched);
			return Vec::new();
		},
	};
	check_version(&nvcc);
	let portable = stems.iter().filter(|stem| PORTABLE.contains(&stem.as_str()));
	let jobs: Vec<(String, Arch)> = (stems.iter().map(|stem| (stem.clone(), Arch::Sm90a)))
		.chain(portable.map(|stem| (stem.clone(), Arch::Portable)))
		.collect();
	let results = compile_all(&nvcc, manifest_dir, out_dir, &jobs);
	// report every file before giving up: a rejected kernel has already failed the build (`cargo::error`)
	let rejected = results.iter().filter(|result| !report(result)).count();
	if rejected > 0 {
		return Vec::new();
	}
	let embedded: Result<Vec<_>, _> = results.into_iter().map(|result| embed(result.kernel)).collect();
	match embedded.and_then(unique_entries) {
		Ok(embedded) => embedded,
		Err(problem) => {
			println!("cargo::error={problem}");
			Vec::new()
		},
	}
}

/// `kernel` as embedded: its fatbin, with the entry points its code names
fn embed(kernel: Kernel) -> Result<Embedded, String> {
	let code = fs::read(&kernel.code).map_err(|e| format!("cannot read {}: {e}", kernel.code.display()))?;
	let entries = match kernel.target {
		Arch::Sm90a => entry_points(&code).ok_or_else(|| format!("{} is not an ELF64 cubin", kernel.code.display()))?,
		Arch::Portable => ptx_entries(&String::from_utf8_lossy(&code)),
	};
	Ok(Embedded {
		stem: kernel.stem,
		target: kernel.target,
		fatbin: kernel.fatbin,
		entries,
	})
}

/// the kernel entry points of a PTX module: the names its `.entry` directives declare
fn ptx_entries(ptx: &str) -> Vec<String> {
	ptx.lines()
		.filter_map(|line| line.trim().split(".entry ").nth(1))
		.filter_map(|rest| rest.split(['(', ' ']).next())
		.map(str::to_owned)
		.collect()
}

/// `embedded`, unless two files of one target define a kernel of the same name (the kernel's
/// module would be ambiguous)
fn unique_entries(embedded: Vec<Embedded>) -> Result<Vec<Embedded>, String> {
	let mut seen = std::collections::HashMap::new();
	for file in &embedded {
		for entry in &file.entries {
			if let Some(other) = seen.insert((file.target, entry), &file.stem) {
				return Err(format!(
					"kernel {entry} is defined by both cuda/{other}.cu and cuda/{}.cu",
					file.stem
				));
			}
		}
	}
	Ok(embedded)
}

/// the kernel entry points of a cubin (an ELF64, little-endian): its global function symbols
/// (`extern "C" __global__`; the device functions it keeps out of line are weak or local), in the
/// order of its symbol table; `None` where the file is no such ELF
fn entry_points(elf: &[u8]) -> Option<Vec<String>> {
	let bytes = |at: usize, len: usize| elf.get(at..at.checked_add(len)?);
	let u16_at = |at| Some(u16::from_le_bytes(bytes(at, 2)?.try_into().ok()?));
	let u32_at = |at| Some(u32::from_le_bytes(bytes(at, 4)?.try_into().ok()?));
	let usize_at = |at| usize::try_from(u64::from_le_bytes(bytes(at, 8)?.try_into().ok()?)).ok();
	// the magic, ELFCLASS64, ELFDATA2LSB
	if bytes(0, 6)? != b"\x7fELF\x02\x01" {
		return None;
	}
	// the section headers (Elf64_Shdr): e_shoff, e_shentsize, e_shnum
	let (headers, header_size, count) = (usize_at(0x28)?, usize::from(u16_at(0x3a)?), usize::from(u16_at(0x3c)?));
	let header = |index: usize| headers.checked_add(index.checked_mul(header_size)?);
	const SHT_SYMTAB: u32 = 2;
	const SYMBOL_SIZE: usize = 24;
	let mut entries = Vec::new();
	for index in 0..count {
		let section = header(index)?;
		if u32_at(section + 4)? != SHT_SYMTAB {
			continue;
		}
		// sh_offset, sh_size; the string table is the section sh_link names
		let (symbols, size) = (usize_at(section + 24)?, usize_at(section + 32)?);
		let strings = usize_at(header(u32_at(section + 40)? as usize)? + 24)?;
		for symbol in (symbols..symbols.checked_add(size)?).step_by(SYMBOL_SIZE) {
			// Elf64_Sym: st_name, st_info (binding STB_GLOBAL = 1, type STT_FUNC = 2), st_shndx
			// (SHN_UNDEF = 0 where not defined here)
			let info = *elf.get(symbol + 4)?;
			if info >> 4 == 1 && info & 0xf == 2 && u16_at(symbol + 6)? != 0 {
				let name = elf.get(strings.checked_add(u32_at(symbol)? as usize)?..)?;
				let name = &name[..name.iter().position(|&b| b == 0)?];
				entries.push(String::from_utf8(name.to_vec()).ok()?);
			}
		}
	}
	Some(entries)
}

/// the sorted stems of `cuda/*.cu`; asks cargo to rerun when any `.cu` or `.cuh` changes
fn kernel_sources(cuda_dir: &Path) -> Vec<String> {
	let Ok(entries) = fs::read_dir(cuda_dir) else {
		return Vec::new();
	};
	let mut stems = Vec::new();
	for path in entries.filter_map(|entry| Some(entry.ok()?.path())) {
		let ext = path.extension().and_then(|ext| ext.to_str());
		if matches!(ext, Some("cu" | "cuh")) {
			println!("cargo::rerun-if-changed={}", path.display());
		}
		if ext == Some("cu") {
			let stem = path.file_stem().and_then(|stem| stem.to_str());
			stems.push(stem.expect("kernel file names must be UTF-8").to_owned());
		}
	}
	stems.sort();
	stems
}

/// one place nvcc was looked for: where the path came from, and the path (`None`: nothing to try)
struct Candidate {
	origin: String,
	path: Option<PathBuf>,
}

/// the first existing nvcc of the search order, or every place searched
fn find_nvcc() -> Result<PathBuf, Vec<Candidate>> {
	let candidates = nvcc_candidates();
	if let Some(nvcc) = candidates[0].path.as_ref().filter(|path| !path.is_file()) {
		println!("cargo::warning=NVCC={} is not a file: ignored", nvcc.display());
	}
	match candidates.iter().find_map(|c| c.path.as_ref().filter(|path| path.is_file())) {
		Some(nvcc) => Ok(nvcc.clone()),
		None => Err(candidates),
	}
}

/// the places nvcc is searched, in order (see the module docs)
fn nvcc_candidates() -> Vec<Candidate> {
	let exe = format!("nvcc{}", env::consts::EXE_SUFFIX);
	let wheel = |root: PathBuf| root.join("nvidia").join("cu13").join("bin").join(&exe);
	let var = |name: &str| env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);

	let nvcc = var("NVCC").map(|nvcc| {
		if nvcc.components().count() > 1 {
			nvcc
		} else {
			on_path(&nvcc).unwrap_or(nvcc)
		}
	});
	let mut candidates = vec![Candidate {
		origin: "$NVCC".into(),
		path: nvcc,
	}];
	for root in ["CUDA_HOME", "CUDA_PATH"] {
		let path = var(root).map(|root| root.join("bin").join(&exe));
		candidates.push(Candidate {
			origin: format!("${root}/bin/{exe}"),
			path,
		});
	}
	candidates.push(Candidate {
		origin: format!("{exe} on PATH"),
		path: on_path(Path::new(&exe)),
	});
	candidates.push(Candidate {
		origin: "the pip wheel of python3 (<purelib>/nvidia/cu13/bin)".into(),
		path: python_purelib().map(wheel),
	});
	candidates.push(Candidate {
		origin: "$EMUGEMM_CUDA_WHEELS/nvidia/cu13/bin".into(),
		path: var("EMUGEMM_CUDA_WHEELS").map(wheel),
	});
	candidates
}

/// the first file named `name` in a directory of `PATH`
fn on_path(name: &Path) -> Option<PathBuf> {
	env::split_paths(&env::var_os("PATH")?)
		.map(|dir| dir.join(name))
		.find(|path| path.is_file())
}

/// the active python's `purelib` directory, where `pip install` puts the nvidia wheels
fn python_purelib() -> Option<PathBuf> {
	let script = "import sysconfig;print(sysconfig.get_paths()['purelib'])";
	let output = Command::new("python3").args(["-c", script]).output().ok()?;
	let dir = String::from_utf8(output.stdout).ok()?;
	(output.status.success() && !dir.trim().is_empty()).then(|| PathBuf::from(dir.trim()))
}

/// no nvcc: a warning, or with `EMUGEMM_REQUIRE_KERNELS=1` an error listing where it was searched
fn no_nvcc(searched: &[Candidate]) {
	if env::var("EMUGEMM_REQUIRE_KERNELS").as_deref() != Ok("1") {
		println!("cargo::warning=nvcc not found: building without GPU kernels (GPU calls will return Error::NoKernels)");
		return;
	}
	println!("cargo::error=nvcc not found, and EMUGEMM_REQUIRE_KERNELS=1 requires the GPU kernels (searched, in order:)");
	for Candidate { origin, path } in searched {
		let path = match path {
			Some(path) => format!("{} (no such file)", path.display()),
			None if origin.starts_with('$') => "(not set)".into(),
			None => "(not found)".into(),
		};
		println!("cargo::error=  {origin}: {path}");
	}
	println!("cargo::error=install the pinned compiler with `scripts/install-nvcc.sh` and set NVCC to the path it prints");
}

/// warns when nvcc is not the pinned 13.0 release (newer ones emit cubins the 13.0 driver may refuse)
fn check_version(nvcc: &Path) {
	let output = Command::new(nvcc).arg("--version").output();
	let version = match &output {
		Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
		Err(err) => format!("cannot run: {err}"),
	};
	if !version.contains(NVCC_RELEASE) {
		let release = version.lines().find(|line| line.contains("release")).unwrap_or(version.trim());
		println!(
			"cargo::warning={}: `{release}`, not CUDA 13.0: its cubins may not load on the GPU machine's CUDA 13.0 driver \
			 (scripts/install-nvcc.sh installs the pinned 13.0.88)",
			nvcc.display()
		);
	}
}

/// the result of one nvcc call and the `fatbinary` call after it
struct Compiled {
	kernel: Kernel,
	/// whether both succeeded
	success: bool,
	/// their stdout and stderr (the ptxas report is in there)
	log: String,
}

/// compiles every `cuda/<stem>.cu` for its target, at most [`MAX_JOBS`] at a time; results in the
/// order of `jobs`
fn compile_all(nvcc: &Path, manifest_dir: &Path, out_dir: &Path, jobs: &[(String, Arch)]) -> Vec<Compiled> {
	let cargo_jobs = env::var("NUM_JOBS").ok().and_then(|jobs| jobs.parse().ok()).unwrap_or(MAX_JOBS);
	let workers = MAX_JOBS.min(cargo_jobs).min(jobs.len()).max(1);
	let next = AtomicUsize::new(0);
	let worker = || {
		let mut done = Vec::new();
		loop {
			let index = next.fetch_add(1, Ordering::Relaxed);
			let Some((stem, target)) = jobs.get(index) else { return done };
			done.push((index, compile(nvcc, manifest_dir, out_dir, stem, *target)));
		}
	};
	let mut results: Vec<(usize, Compiled)> = thread::scope(|scope| {
		let running: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
		running
			.into_iter()
			.flat_map(|worker| worker.join().expect("nvcc worker panicked"))
			.collect()
	});
	results.sort_by_key(|(index, _)| *index);
	results.into_iter().map(|(_, compiled)| compiled).collect()
}

/// `nvcc <flags> -o $OUT_DIR/<stem>.<arch>.<cubin or ptx> cuda/<stem>.cu`, run in the crate's
/// root, then `fatbinary` packs the code into `$OUT_DIR/<stem>.<arch>.fatbin`; skipped when
/// `$OUT_DIR` holds both and the log of a successful call with the same inputs (see
/// [`inputs_key`]): then the log is read back, so that the report is the same
fn compile(nvcc: &Path, manifest_dir: &Path, out_dir: &Path, stem: &str, target: Arch) -> Compiled {
	let arch = target.nvcc_arch();
	let kernel = Kernel {
		stem: stem.into(),
		target,
		code: out_dir.join(format!("{stem}.{arch}.{}", code_extension(target))),
		fatbin: out_dir.join(format!("{stem}.{arch}.fatbin")),
	};
	let named = |extension: &str| match target {
		Arch::Sm90a => out_dir.join(format!("{stem}.{extension}")),
		Arch::Portable => out_dir.join(format!("{stem}.{arch}.{extension}")),
	};
	let (key_file, log_file) = (named("key"), named("log"));
	let key = inputs_key(nvcc, manifest_dir, stem, target);
	if kernel.code.exists()
		&& kernel.fatbin.exists()
		&& fs::read_to_string(&key_file).is_ok_and(|old| old == key)
		&& let Ok(log) = fs::read_to_string(&log_file)
	{
		return Compiled {
			kernel,
			success: true,
			log,
		};
	}
	let _ = fs::remove_file(&key_file);
	let mut compiled = run_nvcc(nvcc, manifest_dir, kernel);
	if compiled.success {
		pack(nvcc, &mut compiled);
	}
	if compiled.success && fs::write(&log_file, &compiled.log).is_ok() {
		let _ = fs::write(&key_file, key);
	}
	compiled
}

/// what a kernel's cubin and fatbin depend on, hashed: nvcc (and the `fatbinary` beside it), their
/// flags and environment, `cuda/<stem>.cu` and every `cuda/*.cuh` (any of which it may include)
fn inputs_key(nvcc: &Path, manifest_dir: &Path, stem: &str, target: Arch) -> String {
	let mut hasher = std::hash::DefaultHasher::new();
	(nvcc, nvcc_flags(target), FATBIN_FLAGS).hash(&mut hasher);
	ENV_VARS.iter().map(env::var_os).for_each(|value| value.hash(&mut hasher));
	let cuda_dir = manifest_dir.join("cuda");
	let mut headers: Vec<PathBuf> = fs::read_dir(&cuda_dir)
		.into_iter()
		.flatten()
		.filter_map(|entry| Some(entry.ok()?.path()))
		.filter(|path| path.extension().is_some_and(|ext| ext == "cuh"))
		.collect();
	headers.sort();
	for path in std::iter::once(cuda_dir.join(format!("{stem}.cu"))).chain(headers) {
		(&path, fs::read(&path).ok()).hash(&mut hasher);
	}
	format!("{:016x}\n", hasher.finish())
}

/// runs nvcc on `cuda/<stem>.cu`, writing the kernel's code
fn run_nvcc(nvcc: &Path, manifest_dir: &Path, kernel: Kernel) -> Compiled {
	let output = Command::new(nvcc)
		.current_dir(manifest_dir)
		.args(nvcc_flags(kernel.target))
		.arg("-o")
		.arg(&kernel.code)
		.arg(format!("cuda/{}.cu", kernel.stem))
		.output();
	let (success, log) = run_output(nvcc, output);
	Compiled { kernel, success, log }
}

/// packs the code of `compiled` into its compressed fatbin with the `fatbinary` beside `nvcc`;
/// a failure fails `compiled`, its output added to the log
fn pack(nvcc: &Path, compiled: &mut Compiled) {
	let fatbinary = nvcc.with_file_name(format!("fatbinary{}", env::consts::EXE_SUFFIX));
	let kernel = &compiled.kernel;
	let output = Command::new(&fatbinary)
		.args(FATBIN_FLAGS)
		.arg(fatbin_image(kernel.target, &kernel.code))
		.arg(format!("--create={}", kernel.fatbin.display()))
		.output();
	let (success, log) = run_output(&fatbinary, output);
	compiled.success = success;
	compiled.log.push_str(&log);
}

/// whether a tool's run succeeded, and its stdout and stderr (or why it could not run)
fn run_output(tool: &Path, output: std::io::Result<std::process::Output>) -> (bool, String) {
	match output {
		Ok(output) => {
			let log = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
			(output.status.success(), log)
		},
		Err(err) => (false, format!("cannot run {}: {err}", tool.display())),
	}
}

/// what ptxas said about one function
#[derive(Default)]
struct FunctionReport {
	name: String,
	/// "Used N registers, ..., N bytes smem, ..."
	usage: String,
	/// "N bytes stack frame, N bytes spill stores, N bytes spill loads"
	frame: String,
	spilled_bytes: u64,
}

/// reads ptxas's `-v` report: one entry per function, in the order ptxas names them
fn parse_ptxas(log: &str) -> Vec<FunctionReport> {
	let mut functions: Vec<FunctionReport> = Vec::new();
	for line in log.lines().map(str::trim) {
		let info = line
			.strip_prefix("ptxas info")
			.map(|rest| rest.trim_start().trim_start_matches(':').trim());
		let named = info.and_then(|info| {
			let entry = info.strip_prefix("Compiling entry function '");
			entry
				.and_then(|name| name.split('\'').next())
				.or_else(|| info.strip_prefix("Function properties for "))
		});
		if let Some(name) = named {
			if functions.last().is_none_or(|last| last.name != name) {
				functions.push(FunctionReport {
					name: name.into(),
					..FunctionReport::default()
				});
			}
		} else if let Some(function) = functions.last_mut() {
			if let Some(usage) = info.filter(|info| info.starts_with("Used ")) {
				function.usage = usage.into();
			} else if line.contains("bytes spill stores") {
				function.frame = line.into();
				function.spilled_bytes = spill_bytes(line);
			}
		}
	}
	functions
}

/// the bytes of spill stores plus spill loads of a ptxas "stack frame" line
fn spill_bytes(line: &str) -> u64 {
	line.split(',')
		.filter(|part| part.contains("spill"))
		.filter_map(|part| part.split_whitespace().next()?.parse::<u64>().ok())
		.sum()
}

/// reports one nvcc call to cargo; `false` when the kernel is rejected (nvcc failed, a register spill,
/// serialised wgmma): then nvcc's whole output goes out as warnings and the reasons as errors
fn report(compiled: &Compiled) -> bool {
	let file = format!("cuda/{}.cu ({})", compiled.kernel.stem, compiled.kernel.target.nvcc_arch());
	let functions = parse_ptxas(&compiled.log);
	let mut problems = Vec::new();
	if !compiled.success {
		problems.push("nvcc or fatbinary failed".to_owned());
	}
	for function in functions.iter().filter(|function| function.spilled_bytes > 0) {
		problems.push(format!("register spill in {}: {}", function.name, function.frame));
	}
	let serialised = |line: &&str| SERIALISATION_WARNINGS.iter().any(|code| line.contains(code));
	problems.extend(compiled.log.lines().map(str::trim).filter(serialised).map(str::to_owned));

	if !problems.is_empty() {
		for line in compiled.log.lines().filter(|line| !line.trim().is_empty()) {
			println!("cargo::warning={file}| {line}");
		}
		for problem in &problems {
			println!("cargo::error={file} rejected: {problem}");
		}
		return false;
	}
	for line in compiled.log.lines().filter(|line| line.contains("warning")) {
		println!("cargo::warning={file}: {}", line.trim());
	}
	if env::var("EMUGEMM_PTXAS_REPORT").as_deref() == Ok("1") {
		for FunctionReport { name, usage, frame, .. } in &functions {
			println!("cargo::warning={file}: {name}: {usage}; {frame}");
		}
	}
	true
}

/// the source of `$OUT_DIR/kernels.rs`: per architecture a static table of every compressed
/// fatbin (64-byte aligned) of its code with its kernels, by stem, and `modules(arch)`, which
/// returns it
fn kernel_table(kernels: &[Embedded]) -> String {
	let mut src = String::from("// generated by build.rs: the fatbins of every `cuda/<stem>.cu`, by architecture and stem\n\n");
	if !kernels.is_empty() {
		src.push_str("/// a module image, aligned for the driver's loader\n#[repr(C, align(64))]\nstruct Aligned<B>(B);\n\n");
	}
	let table = |arch: Arch| format!("{arch:?}_MODULES").to_uppercase();
	for arch in Arch::ALL {
		writeln!(src, "/// the `{}` modules, sorted by stem; empty without kernels", arch.nvcc_arch()).unwrap();
		writeln!(src, "static {}: &[Module] = &[", table(arch)).unwrap();
		for Embedded { stem, fatbin, entries, .. } in kernels.iter().filter(|kernel| kernel.target == arch) {
			let fatbin = fatbin.to_str().expect("OUT_DIR must be UTF-8");
			writeln!(
				src,
				"\tModule {{\n\t\tstem: {stem:?},\n\t\timage: &Aligned(*include_bytes!({fatbin:?})).0,"
			)
			.unwrap();
			writeln!(src, "\t\tkernels: &{entries:?},\n\t}},").unwrap();
		}
		src.push_str("];\n\n");
	}
	src.push_str("/// the embedded modules of `arch`'s code\npub(crate) fn modules(arch: Arch) -> &'static [Module] {\n\tmatch arch {\n");
	for arch in Arch::ALL {
		writeln!(src, "\t\tArch::{arch:?} => {},", table(arch)).unwrap();
	}
	src.push_str("\t}\n}\n");
	src
}
