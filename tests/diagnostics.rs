//! what a user sees besides the product: `emu_mul`'s panics point to the caller's line, and the
//! log says what each product did (debug) and each fallback to the native product (info). In a
//! test binary of its own: it installs the process's logger and panic hook

use emugemm::testing::random_matrix;
use emugemm::{Backend, EmuMatMul, Emulator, Precision};
use std::sync::Mutex;

/// the records logged, by level
static RECORDS: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
	fn enabled(&self, _: &log::Metadata<'_>) -> bool {
		true
	}

	fn log(&self, record: &log::Record<'_>) {
		RECORDS.lock().unwrap().push((record.level(), record.args().to_string()));
	}

	fn flush(&self) {}
}

fn logged(level: log::Level, needle: &str) -> bool {
	RECORDS.lock().unwrap().iter().any(|(l, m)| *l == level && m.contains(needle))
}

#[test]
fn panics_and_logs_reach_the_user() {
	log::set_logger(&Capture).unwrap();
	log::set_max_level(log::LevelFilter::Debug);

	// the panic of a shape mismatch points here, not into the crate
	let location = std::sync::Arc::new(Mutex::new(None));
	let seen = location.clone();
	std::panic::set_hook(Box::new(move |info| {
		*seen.lock().unwrap() = info.location().map(|l| (l.file().to_string(), l.line()));
	}));
	let (a, b) = (faer::Mat::<f64>::zeros(3, 4), faer::Mat::<f64>::zeros(5, 2));
	let line = line!() + 1;
	let caught = std::panic::catch_unwind(|| a.emu_mul(&b, Precision::F64));
	let _ = std::panic::take_hook();
	assert!(caught.is_err());
	assert_eq!(*location.lock().unwrap(), Some((file!().to_string(), line)));

	// one product: its shape, plan and times at debug level
	let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(false);
	let x = random_matrix::<f64>(24, 24, 1.0, 1);
	x.emu_mul_with(&emu, &x, Precision::F64).unwrap();
	assert!(
		logged(log::Level::Debug, "24x24x24 f64 on CpuEmulation"),
		"{:?}",
		RECORDS.lock().unwrap()
	);

	// a fallback: entries with NaN operands computed natively, said at info level
	let mut y = x.clone();
	y[(3, 3)] = f64::NAN;
	y.emu_mul_with(&emu, &x, Precision::F64).unwrap();
	assert!(logged(log::Level::Info, "entries with NaN or infinite operands computed natively"));
	// no emulated plan certifies 60 bits of f64 on a wide-range input: the whole product native
	let wide = faer::Mat::<f64>::from_fn(24, 24, |i, j| if (i + j) % 2 == 0 { 1e300 } else { 1e-300 });
	wide.emu_mul_with(&emu, &wide, Precision::Bits(52)).unwrap();
	assert!(
		logged(log::Level::Info, "no emulated plan certifies"),
		"{:?}",
		RECORDS.lock().unwrap()
	);
}
