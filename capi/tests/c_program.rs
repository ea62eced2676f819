//! the C program of tests/c/abi.c (compiled by build.rs against the checked-in header) on a GPU:
//! a double and a complex product through the C ABI against a long double reference, the
//! `beta = 0` rule, bad calls' statuses and messages (integers outside their enumerations among
//! them), cuBLAS's quick return
//!
//! this test needs an NVIDIA GPU: it is ignored otherwise (run it with `--include-ignored`;
//! without a GPU it then fails, never passes)

// the C ABI's symbols, linked from this crate
use emugemm_c as _;

unsafe extern "C" {
	fn emugemm_c_abi_check() -> i32;
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_c_program_passes() {
	// SAFETY: the C program takes no arguments and opens the driver itself
	let failed = unsafe { emugemm_c_abi_check() };
	assert_eq!(failed, 0, "check {failed} of tests/c/abi.c failed");
}
