//! the global context as the environment configures it: the variables are set before its first
//! use, in a test binary of its own (the global context is one per process)

use emugemm::testing::random_matrix;
use emugemm::{Backend, EmuMatMul, Emulator, Precision, Scheme};

#[test]
fn the_environment_configures_the_global_context() {
	// SAFETY: the only test of this binary; nothing else reads the environment meanwhile
	unsafe {
		std::env::set_var("EMUGEMM_BACKEND", "cpu");
		std::env::set_var("EMUGEMM_PRECISION", "scheme2=11");
		std::env::set_var("EMUGEMM_NATIVE_BELOW", "16");
		std::env::set_var("EMUGEMM_HOST_ROUTING", "sideways");
	}
	let global = Emulator::global();
	assert_eq!(global.backend(), Backend::CpuEmulation);
	assert_eq!(global.precision_override(), Some(Precision::SchemeII { moduli: 11 }));
	assert_eq!(global.native_below(), 16);

	// every product at the override, whatever the call asks for
	let a = random_matrix::<f64>(40, 40, 1.0, 1);
	let _ = a.emu_mul(&a, Precision::F64);
	let report = emugemm::last_report().unwrap();
	assert!(matches!(report.plan.scheme, Scheme::SchemeII { moduli: 11, .. }), "{report}");
	// a dimension below 16: native, before any plan
	let thin = random_matrix::<f64>(40, 8, 1.0, 2);
	let _ = thin.emu_mul(&thin.transpose().to_owned(), Precision::F64);
	assert_eq!(emugemm::last_report().unwrap().plan.scheme, Scheme::Native);

	// set in code, it replaces the environment's
	Emulator::set_global(Emulator::with_backend(Backend::Native).unwrap());
	assert_eq!(Emulator::global().precision_override(), None);
	let _ = a.emu_mul(&a, Precision::F64);
	assert_eq!(emugemm::last_report().unwrap().backend, Backend::Native);
}
