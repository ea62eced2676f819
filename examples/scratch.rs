use emugemm::*;
use faer::Mat;
fn main() {
	let n = 512;
	let a = Mat::<f64>::from_fn(n, n, |i, j| (((i * 7 + j * 13) % 17) as f64 / 7.0 - 1.0) * ((i + j) as f64 * 0.37).sin().exp());
	let b = Mat::<f64>::from_fn(n, n, |i, j| (((i * 3 + j * 5) % 11) as f64 / 3.0 - 1.5) * ((i * j) as f64 * 0.11).cos().exp());
	for prec in [Precision::F64, Precision::SchemeI { slices: 8 }, Precision::F32] {
		let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
		let mut c = Mat::<f64>::zeros(n, n);
		emu.matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, prec).unwrap();
		println!("{}", emu.last_report().unwrap());
	}
}
