//! compiles the C program of the C ABI's test (tests/c/abi.c) against the checked-in header, so
//! that a header a C compiler rejects fails the build
fn main() {
	println!("cargo::rerun-if-changed=tests/c/abi.c");
	println!("cargo::rerun-if-changed=include/emugemm.h");
	cc::Build::new()
		.file("tests/c/abi.c")
		.std("c11")
		.warnings_into_errors(true)
		.compile("emugemm_c_abi_test");
	println!("cargo::rustc-link-lib=dl");
}
