//! prints a fingerprint of the bits of every GPU product in a fixed set (types, shapes, precisions,
//! fused and unfused routes, host and device operands, ordinary and inner-scaled inputs), one line
//! each, so that two builds can be compared bit for bit: `diff` their outputs
//!
//! `cargo run --release --features cuda --example fingerprint > a.txt`

use emugemm::testing::{InnerPattern, Pair, pair, random_matrix};
use emugemm::{Accum, Backend, Emulator, Precision, Scalar};
use faer::{Mat, c32, c64};
use std::hash::{Hash, Hasher};

/// a hash of the bits of every entry of `c`
fn bits<T: Scalar>(c: &Mat<T>) -> u64 {
	let mut h = std::hash::DefaultHasher::new();
	for j in 0..c.ncols() {
		for i in 0..c.nrows() {
			let (re, im) = (c[(i, j)].re(), c[(i, j)].im());
			(re.to_bits(), im.to_bits()).hash(&mut h);
		}
	}
	h.finish()
}

/// the fingerprints of `T`'s products of `(m, k, n)` on `emu`, from the host and from device
/// matrices, on random operands and on an inner-scaled pair
fn products<T: Scalar>(emu: &Emulator, what: &str, (m, k, n): (usize, usize, usize), precisions: &[Precision]) {
	let inputs = [
		("random", (random_matrix::<T>(m, k, 1.0, 1), random_matrix::<T>(k, n, 1.0, 2))),
		(
			"inner-scaled",
			pair::<T>(
				Pair::InnerScaled {
					pattern: InnerPattern::Alternating,
					range: 30,
				},
				m,
				k,
				n,
				3,
			),
		),
	];
	let alpha = T::from_parts(0.75, -0.5);
	for (input, (a, b)) in &inputs {
		let old = random_matrix::<T>(m, n, 1.0, 4);
		for &precision in precisions {
			let mut c = old.clone();
			match emu.matmul(
				c.as_mut(),
				Accum::Add,
				(a.as_ref(), b.as_ref()),
				alpha,
				(faer::Par::rayon(0), precision),
			) {
				// more bits than the type holds: not a product of this type
				Err(emugemm::Error::InvalidPrecision { .. }) => continue,
				result => result.unwrap(),
			}
			let host = emu.last_report().unwrap();
			let (da, db, mut dc) = (
				emu.upload(a.as_ref()).unwrap(),
				emu.upload(b.as_ref()).unwrap(),
				emu.upload(old.as_ref()).unwrap(),
			);
			emu.matmul_device(&mut dc, Accum::Add, (&da, &db), alpha, precision).unwrap();
			let device = emu.last_report().unwrap();
			println!(
				"{} {m}x{k}x{n} {input} {precision:?} {what}: host {:016x} ({}, {:?}), device {:016x} ({}, {:?})",
				T::NAME,
				bits(&c),
				host.plan,
				host.route,
				bits(&dc.download().unwrap()),
				device.plan,
				device.route,
			);
		}
	}
}

fn main() {
	let gpu = || {
		Emulator::with_backend(Backend::Gpu)
			.expect("a Hopper GPU and the cuda feature")
			.with_native_candidate(false)
	};
	// "fused": scheme I on the fused kernel for every plan, not only where it is priced faster
	let emus = [
		("fused", gpu().with_priced_routes(false)),
		("unfused", gpu().with_fused_products(false)),
	];
	let precisions = [
		Precision::F64,
		Precision::F32,
		Precision::Tf32,
		Precision::Bits(40),
		Precision::SchemeI { slices: 3 },
		Precision::SchemeI { slices: 7 },
		Precision::SchemeII { moduli: 8 },
		Precision::SchemeII { moduli: 18 },
	];
	for (what, emu) in &emus {
		for shape in [(1000, 700, 900), (2048, 512, 4096)] {
			products::<f64>(emu, what, shape, &precisions);
			products::<c64>(emu, what, shape, &precisions);
			products::<f32>(emu, what, shape, &precisions);
			products::<c32>(emu, what, shape, &precisions);
		}
	}
}
