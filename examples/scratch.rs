use emugemm::*;
use faer::{Mat, c64};
fn main() {
	let (m, n, k) = (60, 50, 70);
	let a = Mat::<f64>::from_fn(m, k, |i, j| ((i * 7 + j * 13) % 17) as f64 / 7.0 - 1.0 + (i as f64).sin() * 1e-3);
	let b = Mat::<f64>::from_fn(k, n, |i, j| ((i * 3 + j * 5) % 11) as f64 / 3.0 - 1.5 + (j as f64).cos() * 1e-5);
	let native = &a * &b;
	let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
	for prec in [Precision::F64, Precision::F32, Precision::Tf32, Precision::SchemeI { slices: 8 }, Precision::SchemeII { moduli: 18 }, Precision::SchemeI { slices: 3 }] {
		for scaling in [Scaling::Fast, Scaling::Accurate] {
			let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_scaling(scaling);
			let mut c = Mat::<f64>::zeros(m, n);
			emu.matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, prec).unwrap();
			let err = (&c - &native).norm_max() / native.norm_max();
			println!("{prec:?} {scaling:?}: rel err {err:.3e} | {}", emu.last_report().unwrap());
		}
	}
	let ac = Mat::<c64>::from_fn(m, k, |i, j| c64::new(a[(i, j)], a[((i + 1) % m, j)]));
	let bc = Mat::<c64>::from_fn(k, n, |i, j| c64::new(b[(i, j)], -b[(i, (j + 3) % n)]));
	let native = &ac * &bc;
	for prec in [Precision::F64, Precision::F32, Precision::SchemeI { slices: 8 }] {
		let mut c = Mat::<c64>::zeros(m, n);
		emu.matmul(c.as_mut(), Accum::Replace, ac.as_ref(), bc.as_ref(), c64::new(1.0, 0.0), prec).unwrap();
		let err = (&c - &native).norm_max() / native.norm_max();
		println!("complex {prec:?}: rel err {err:.3e} | {}", emu.last_report().unwrap());
	}
}
