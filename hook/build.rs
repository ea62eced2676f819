//! builds what the stand-in tests (tests/standin.rs) load the interposer over, in `$OUT_DIR/standin`:
//! a stand-in `libcublas.so.N` for N = 12, 13 and 14 (tests/standin/cublas.c), each in a folder of
//! its own; `libcallerN.so` (tests/standin/caller.c), linked against the stand-in N and finding it
//! through its run path, as a program's library finds its libcublas; and `driver`
//! (tests/standin/driver.c), which loads the callers with `dlopen` and is linked against no libcublas.
//! The folder reaches the tests as `EMUGEMM_STANDIN_DIR` (a variable of that name overrides it when
//! they run, for a copy of the folder). They need a C compiler only, no CUDA.

use std::env;
use std::path::{Path, PathBuf};

/// the cuBLAS major versions the stand-ins stand in for: two the interposer knows and one it cannot
const VERSIONS: [u32; 3] = [12, 13, 14];

/// the C sources, which include this header
const SOURCES: [&str; 3] = ["cublas.c", "caller.c", "driver.c"];
const HEADER: &str = "symbols.h";

fn main() {
	let sources = Path::new("tests/standin");
	for file in SOURCES.iter().chain([&HEADER]) {
		println!("cargo::rerun-if-changed={}", sources.join(file).display());
	}
	let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("standin");
	for version in VERSIONS {
		let folder = out.join(version.to_string());
		std::fs::create_dir_all(&folder).expect("the stand-in's folder");
		let library = format!("libcublas.so.{version}");
		compile(
			&sources.join("cublas.c"),
			&folder.join(&library),
			&[
				"-shared",
				&format!("-DVERSION={version}"),
				&format!("-Wl,-soname,{library}"),
				"-pthread",
			],
		);
		let linked = [
			"-shared".to_string(),
			format!("-L{}", folder.display()),
			format!("-l:{library}"),
			// relative to the caller's own folder, so that the folder can be moved whole (a GPU
			// machine runs the tests from a copy), and a run path the loader searches before
			// LD_LIBRARY_PATH (DT_RPATH, not DT_RUNPATH): on a machine whose LD_LIBRARY_PATH holds
			// the real libcublas.so.13, the caller still loads its stand-in
			format!("-Wl,-rpath,$ORIGIN/{version}"),
			"-Wl,--disable-new-dtags".to_string(),
		];
		let linked: Vec<&str> = linked.iter().map(String::as_str).collect();
		compile(&sources.join("caller.c"), &out.join(format!("libcaller{version}.so")), &linked);
	}
	compile(&sources.join("driver.c"), &out.join("driver"), &["-ldl", "-pthread"]);
	println!("cargo::rustc-env=EMUGEMM_STANDIN_DIR={}", out.display());
}

/// compiles and links `source` into `output` with the target's C compiler, warnings as errors,
/// `extra` after the source (where the linker reads libraries)
fn compile(source: &Path, output: &Path, extra: &[&str]) {
	let compiler = cc::Build::new().pic(true).get_compiler();
	let mut command = compiler.to_command();
	command
		.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
		.arg(output)
		.arg(source)
		.args(extra);
	let status = command
		.status()
		.unwrap_or_else(|e| panic!("running the C compiler ({command:?}): {e}"));
	assert!(status.success(), "{command:?} failed ({status})");
}
