//! the global context as the environment configures it: the variables are set before its first
//! use, in a test binary of its own (the global context is one per process)

use emugemm::testing::random_matrix;
use emugemm::{Backend, EmuMatMul, Emulator, Error, Precision, Scheme};

/// sets the variables (`None` removes one)
fn set(vars: &[(&str, Option<&str>)]) {
	for (name, value) in vars {
		// SAFETY: the only test of this binary; nothing else reads the environment meanwhile
		unsafe {
			match value {
				Some(v) => std::env::set_var(name, v),
				None => std::env::remove_var(name),
			}
		}
	}
}

fn names(result: Result<Emulator, Error>) -> Option<&'static str> {
	match result {
		Err(Error::Environment { variable, .. }) => Some(variable),
		_ => None,
	}
}

#[test]
fn the_environment_configures_the_global_context() {
	// every variable is checked as it is read, and the error names it
	let refused = [
		("EMUGEMM_BACKEND", "cpuemulation"),
		("EMUGEMM_PRECISION", "scheme2=0"),
		("EMUGEMM_PRECISION", "scheme1=9"),
		("EMUGEMM_PRECISION", "bits=60"),
		("EMUGEMM_PRECISION", "f65"),
		("EMUGEMM_NATIVE_BELOW", "-3"),
		("EMUGEMM_HOST_ROUTING", "sideways"),
		("EMUGEMM_QUEUED_VIEWS", "soon"),
		("EMUGEMM_GRAPHS", "maybe"),
	];
	for (name, value) in refused {
		set(&[(name, Some(value))]);
		assert_eq!(names(Emulator::from_env()), Some(name), "{name}={value}");
		set(&[(name, None)]);
	}

	// a global context made from an environment it cannot use refuses every product with that
	// error, and emu_mul panics with it: nothing runs on a silently different configuration
	set(&[("EMUGEMM_BACKEND", Some("cpu")), ("EMUGEMM_PRECISION", Some("scheme2=0"))]);
	let a = random_matrix::<f64>(40, 40, 1.0, 1);
	match a.try_emu_mul(&a, Precision::F64) {
		Err(Error::Environment { variable, value, .. }) => assert_eq!((variable, value.as_str()), ("EMUGEMM_PRECISION", "scheme2=0")),
		other => panic!("{other:?}"),
	}
	let panic = std::panic::catch_unwind(|| a.emu_mul(&a, Precision::F64)).unwrap_err();
	let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
	assert!(message.contains("EMUGEMM_PRECISION"), "{message}");

	// a readable environment configures the context
	set(&[
		("EMUGEMM_PRECISION", Some("scheme2=11")),
		("EMUGEMM_NATIVE_BELOW", Some("16")),
		("EMUGEMM_HOST_ROUTING", Some("off")),
		("EMUGEMM_GRAPHS", Some("on")),
	]);
	Emulator::set_global(Emulator::from_env().unwrap());
	let global = Emulator::global();
	assert!(global.graph_recording() && !global.queued_views());
	assert_eq!(global.backend(), Backend::CpuEmulation);
	assert_eq!(global.precision_override(), Some(Precision::SchemeII { moduli: 11 }));
	assert_eq!(global.native_below(), 16);

	// every product at the override, whatever the call asks for
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
