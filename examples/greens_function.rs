//! The retarded Green's function `G(E) = ((E + i eta) I - H)^-1` of a tight-binding chain (256
//! sites, hopping t = 1, open ends, broadening eta = 1e-3) at a few energies, checked with emulated
//! complex (c64) products at `Precision::F64` beside faer's native ones:
//!
//! - `G M = I` for `M = (E + i eta) I - H`, whose imaginary part is a thousandth of its real part:
//!   the accuracy of each product in scaled bits (per part, against an exact reference) and the
//!   residual `||G M - I||_max`;
//! - the density of states from the Ward identity `G - G^H = -2 i eta G G^H`, that is
//!   `rho(E) = -Im tr G / (pi n) = eta tr(G G^H) / (pi n)`: `rho` from the product `G G^H` against
//!   `rho` read off the diagonal of `G`, and the identity's residual.
//!
//! Rows of a product (or whole products) that the error bound cannot certify at `F64` are computed
//! natively, and the plan printed beside each product says so: outside the band (E = 2.5) `G`
//! decays exponentially along the chain, its rows span far more than the bound can pair, and both
//! products there run natively.
//!
//! It fails (exit status 1) where an emulated product measures fewer bits than the native one
//! minus one, what `Precision::F64` promises. The emulation runs on the CPU (`Backend::CpuEmulation`,
//! the native candidate off); `emu_mul` runs the same products on the GPU when there is one.
//!
//! `cargo run --release --example greens_function`

use emugemm::testing::{ExactProduct, Sampling};
use emugemm::{Backend, EmuMatMul, Emulator, Precision};
use faer::linalg::solvers::DenseSolveCore;
use faer::{Mat, Scale, c64};
use std::f64::consts::PI;
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const N: usize = 256;
const HOPPING: f64 = 1.0;
const ETA: f64 = 1e-3;

/// what a product is checked for, from the product
type Check<'a> = &'a dyn Fn(&Mat<c64>) -> String;

/// `(E + i eta) I - H` for the chain `H = -t` on the first off-diagonals
fn resolvent_argument(energy: f64) -> Mat<c64> {
	Mat::from_fn(N, N, |i, j| match i.abs_diff(j) {
		0 => c64::new(energy, ETA),
		1 => c64::new(HOPPING, 0.0),
		_ => c64::new(0.0, 0.0),
	})
}

fn main() -> Result<()> {
	let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	let (mut emulated_time, mut native_time) = (Duration::ZERO, Duration::ZERO);
	let sample = Sampling::Sampled { entries: 4096, seed: 1 };
	println!("tight-binding chain, n = {N}, t = {HOPPING}, eta = {ETA:e}; products emulated at F64 on the CPU and native (faer)");
	for energy in [-1.5, -0.3, 0.7, 2.5] {
		let m = resolvent_argument(energy);
		let g = m.partial_piv_lu().inverse();
		let gh = g.adjoint().to_owned();
		let rho_diagonal = -(0..N).map(|i| g[(i, i)].im).sum::<f64>() / (PI * N as f64);
		println!("E = {energy:+.2}: rho = {rho_diagonal:.6} (-Im tr G / pi n)");

		// what each product is for: the residual of G M = I; the Ward identity and the DOS of G G^H
		let identity_residual = |c: &Mat<c64>| format!("||G M - I||_max {:.1e}", (c - Mat::<c64>::identity(N, N)).norm_max());
		let ward = |c: &Mat<c64>| {
			let residual = (&g - &gh + c * Scale(c64::new(0.0, 2.0 * ETA))).norm_max() / (&g - &gh).norm_max();
			let rho = ETA * (0..N).map(|i| c[(i, i)].re).sum::<f64>() / (PI * N as f64);
			format!(
				"rho {rho:.6} (rel {:.0e}), Ward {residual:.0e}",
				(rho - rho_diagonal).abs() / rho_diagonal
			)
		};
		let products: [(&str, &Mat<c64>, Check<'_>); 2] = [("G M  ", &m, &identity_residual), ("G G^H", &gh, &ward)];
		for (what, rhs, check) in products {
			let start = Instant::now();
			let emulated = g.emu_mul_with(&emu, rhs, Precision::F64)?;
			emulated_time += start.elapsed();
			let plan = emu.last_report().expect("a report").plan;
			let start = Instant::now();
			let native = &g * rhs;
			native_time += start.elapsed();

			let exact = ExactProduct::compute(g.as_ref(), rhs.as_ref(), sample);
			let (bits_emulated, bits_native) = (exact.accuracy(emulated.as_ref()).bits, exact.accuracy(native.as_ref()).bits);
			println!("  {what} emulated {bits_emulated:4.1} bits, {}  [{plan}]", check(&emulated));
			println!("  {what} native   {bits_native:4.1} bits, {}", check(&native));
			if bits_emulated < bits_native - 1.0 {
				return Err(
					format!("E = {energy}: {what} emulated {bits_emulated:.1} bits, below native {bits_native:.1} minus one").into(),
				);
			}
		}
	}
	println!("products: emulated {emulated_time:.3?} in all, native {native_time:.3?}");
	Ok(())
}
