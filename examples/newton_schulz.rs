//! Newton–Schulz iteration for the inverse of a dense, well-conditioned (condition number 10)
//! 384 x 384 f64 matrix, `X_{k+1} = X_k (2I - A X_k)`, with every product emulated with exact INT8
//! products at `Precision::F64`, beside the same iteration with faer's native product: the
//! residual `||I - A X_k||_F` of both at each iteration, their times, and for the last iterate of
//! each its residual and the accuracy in bits of its product `A X`, both against an exact product.
//! It fails (exit status 1) where the emulated iterate's exact residual, the floor it reached, lies
//! more than 4 times above the native one's.
//!
//! The products go through `emu_mul_with` on a `Backend::CpuEmulation` context with the native
//! candidate off, so that the emulation runs on any machine; `a.emu_mul(&x, Precision::F64)` (or
//! `try_emu_mul`) is the same call on the shared context, which runs on the GPU when there is one,
//! and natively with faer otherwise.
//!
//! `cargo run --release --example newton_schulz`

use emugemm::testing::{ExactProduct, Sampling, random_matrix};
use emugemm::{Backend, EmuMatMul, Emulator, Precision, Route};
use faer::{Col, Mat, Scale};
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const N: usize = 384;
/// how far above the native residual floor the emulated one may lie
const FLOOR_FACTOR: f64 = 4.0;
/// the residual below which a step that fails to halve it means the floor is reached (far above
/// it, the first steps of the iteration also shrink it slowly)
const NEAR_FLOOR: f64 = 1e-8;

/// one run of the iteration: `||I - A X_k||_F` for k = 0, 1, ..., the last `X_k` and `A X_k`, and
/// the time spent in products
struct Run {
	residuals: Vec<f64>,
	x: Mat<f64>,
	ax: Mat<f64>,
	time: Duration,
}

impl Run {
	fn floor(&self) -> f64 {
		self.residuals.iter().copied().fold(f64::INFINITY, f64::min)
	}
}

/// Newton–Schulz from `X_0 = A^T / s`, with `s` the power iteration's estimate of the largest
/// eigenvalue of `A^T A` (at most it, and above half of it), so that the eigenvalues of `A X_0` lie
/// in (0, 2), until the residual stalls at its floor; every product by `mul`
fn newton_schulz(a: &Mat<f64>, mut mul: impl FnMut(&Mat<f64>, &Mat<f64>) -> Result<Mat<f64>>) -> Result<Run> {
	let n = a.nrows();
	let mut v = Col::<f64>::ones(n);
	for _ in 0..10 {
		v = a.transpose() * (a * &v);
		v = &v * Scale(1.0 / v.norm_l2());
	}
	let mut x = a.transpose().to_owned() * Scale(1.0 / (a * &v).squared_norm_l2());
	let identity = Mat::<f64>::identity(n, n);
	let (mut residuals, mut time) = (Vec::new(), Duration::ZERO);
	loop {
		let start = Instant::now();
		let ax = mul(a, &x)?;
		time += start.elapsed();
		let e = &identity - &ax;
		let r = e.norm_l2();
		let stalled = residuals
			.last()
			.is_some_and(|&last: &f64| (r < NEAR_FLOOR && r > 0.5 * last) || r >= last);
		residuals.push(r);
		if stalled || residuals.len() > 60 {
			return Ok(Run { residuals, x, ax, time });
		}
		// X (2I - A X) = X + X E, with E = I - A X the residual just computed: the correction form,
		// whose product has no identity in it (a row of 2I - A X near convergence holds one entry
		// of 2 and the rest at the residual's size, a spread the emulation's bound cannot certify,
		// and would compute natively)
		let start = Instant::now();
		let correction = mul(&x, &e)?;
		time += start.elapsed();
		x += &correction;
	}
}

/// `||I - A X||_F` from the exact product `A X` (double-double entries), and that product
fn exact_residual(a: &Mat<f64>, x: &Mat<f64>) -> (f64, ExactProduct) {
	let exact = ExactProduct::compute(a.as_ref(), x.as_ref(), Sampling::Full);
	let squares = exact.positions().iter().enumerate().map(|(k, &(i, j))| {
		let ((hi, lo), _) = exact.exact_double_double(k);
		((if i == j { 1.0 } else { 0.0 } - hi) - lo).powi(2)
	});
	(squares.sum::<f64>().sqrt(), exact)
}

fn main() -> Result<()> {
	// A = U diag(s) V^T with random orthogonal U, V and singular values from 1 to 10: dense, like
	// its inverse. A near-identity A (I + small) would not do: the error bound certifies an entry
	// of a product from the terms that dominate it, and where a single term of a small entry
	// dominates (X_ij times the 1 of the identity) it cannot, and the policy computes natively
	let (u, v) = (
		random_matrix::<f64>(N, N, 0.0, 1).qr().compute_Q(),
		random_matrix::<f64>(N, N, 0.0, 2).qr().compute_Q(),
	);
	let s = Col::<f64>::from_fn(N, |i| 10f64.powf(i as f64 / (N - 1) as f64));
	let a = &u * s.as_diagonal() * v.transpose();
	let emu = Emulator::with_backend(Backend::CpuEmulation)?;

	let emulated_mul = |l: &Mat<f64>, r: &Mat<f64>| -> Result<Mat<f64>> {
		let c = l.emu_mul_with(&emu, r, Precision::F64)?;
		let report = emu.last_report().expect("a report");
		if report.route != Route::Cpu || !report.native_rows.is_empty() {
			return Err(format!("the product did not run as the CPU emulation: {report}").into());
		}
		Ok(c)
	};
	let emulated = newton_schulz(&a, emulated_mul)?;
	let plan = emu.last_report().expect("a report").plan;
	let native = newton_schulz(&a, |l, r| Ok(l * r))?;

	println!("Newton–Schulz inverse of a {N}x{N} f64 matrix; emulated products: {plan} (on the CPU)");
	println!("   k   ||I - A X_k||_F emulated   native");
	for k in 0..emulated.residuals.len().max(native.residuals.len()) {
		let cell = |run: &Run| run.residuals.get(k).map_or("-".to_string(), |r| format!("{r:.3e}"));
		println!("{k:>4}   {:>24}   {:>9}", cell(&emulated), cell(&native));
	}
	let products = |run: &Run| 2 * run.residuals.len() - 1;
	for (what, run) in [("emulated", &emulated), ("native  ", &native)] {
		println!(
			"{what}: floor {:.3e} (as computed), {} products in {:.3?} ({:.3?} each)",
			run.floor(),
			products(run),
			run.time,
			run.time / products(run) as u32
		);
	}

	// the last iterate of each run measured with an exact product: its true residual, free of the
	// rounding of the product that computed it above, and the bits of the run's last product A X
	let mut floors = Vec::new();
	for (what, run) in [("emulated", &emulated), ("native  ", &native)] {
		let (residual, exact) = exact_residual(&a, &run.x);
		println!(
			"{what}: exact ||I - A X||_F {residual:.3e}; the last A X: {}",
			exact.accuracy(run.ax.as_ref())
		);
		floors.push(residual);
	}
	let agreement = (&emulated.x - &native.x).norm_l2() / native.x.norm_l2();
	println!("the two inverses agree to {:.1} bits (relative Frobenius)", -agreement.log2());

	let (emulated_floor, native_floor) = (floors[0], floors[1]);
	if emulated_floor > FLOOR_FACTOR * native_floor {
		return Err(
			format!("the emulated floor {emulated_floor:.3e} lies more than {FLOOR_FACTOR}x above the native {native_floor:.3e}").into(),
		);
	}
	println!("ok: the emulated floor is within {FLOOR_FACTOR}x of the native one");
	Ok(())
}
