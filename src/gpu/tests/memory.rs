//! products and matrices when the GPU's memory runs out: the scratch kept from earlier products is
//! freed and the allocation tried again

use crate::gpu::runtime::context::gpu;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::transfer::matrix::DeviceMatrix;
use crate::testing::random_matrix;
use crate::{Accum, Backend, Emulator, Precision};

/// a matrix that fits only once the scratch buffers kept from earlier products are freed is
/// still allocated: the allocation frees them and tries again
#[test]
#[ignore = "needs a Hopper GPU"]
fn a_matrix_allocation_frees_kept_scratch_when_memory_runs_out() {
	const MATRIX: usize = 1 << 30;
	{
		let g = gpu().unwrap();
		g.ctx.bind_to_thread().unwrap();
		let (free, _) = cudarc::driver::result::mem_get_info().unwrap();
		// scratch that leaves half the matrix free
		g.scratch(Slot::Bench(0), free - MATRIX / 2).unwrap();
	}
	const COLS: usize = MATRIX / 8 / 8192;
	let m =
		DeviceMatrix::<f64>::zeros(&[0], (8192, COLS), crate::settings::DEFAULT_STAGING).expect("the kept scratch freed for the matrix");
	assert_eq!(m.download().unwrap()[(8191, COLS - 1)], 0.0);
	drop(m);
	// the pipeline's scratch is allocated again when asked for
	assert_ne!(
		gpu().unwrap().scratch(Slot::Bench(0), 1 << 20).unwrap(),
		crate::gpu::runtime::ptr::DevPtr::NULL
	);
}

/// frees every kept scratch buffer when dropped, so that a test that filled the GPU's memory and
/// failed leaves it free to the tests after it
struct FreesScratch;

impl Drop for FreesScratch {
	fn drop(&mut self) {
		if let Ok(g) = gpu() {
			g.free_kept_scratch();
			let _ = g.stream.synchronize();
		}
	}
}

/// a product whose scratch fits only once the buffers kept in other slots (by earlier work) are
/// freed still runs, bit for bit as the CPU oracle: the allocation frees the slots the product has
/// not asked for and tries again, and the slots it holds stay valid
#[test]
#[ignore = "needs a Hopper GPU"]
fn a_product_frees_scratch_kept_in_other_slots_when_memory_runs_out() {
	const N: usize = 2048;
	let emu = Emulator::with_backend(Backend::Gpu).unwrap().with_native_candidate(false);
	let (a, b) = (random_matrix::<f64>(N, N, 1.0, 1), random_matrix::<f64>(N, N, 1.0, 2));
	let (da, db) = (emu.upload(a.as_ref()).unwrap(), emu.upload(b.as_ref()).unwrap());
	let mut dc = emu.zeros_on_device::<f64>(N, N).unwrap();
	let free = || {
		gpu().unwrap().ctx.bind_to_thread().unwrap();
		cudarc::driver::result::mem_get_info().unwrap().0
	};
	let _cleanup = FreesScratch;
	{
		let g = gpu().unwrap();
		g.free_kept_scratch();
		g.stream.synchronize().unwrap();
		g.ctx.bind_to_thread().unwrap();
		// kept scratch in the benchmark's slots: chunks of at most 8 GiB (one allocation of all the
		// memory failed on an H200), halved when refused, down to 64 MiB. What stays free is then
		// less than 128 MiB, less than the product's scratch (per operand 18 residue planes of 4
		// MiB, and 18 product planes of 4 MiB)
		let (mut slot, mut bytes) = (0, 8usize << 30);
		while bytes >= 64 << 20 {
			let (available, _) = cudarc::driver::result::mem_get_info().unwrap();
			bytes = bytes.min(available.saturating_sub(8 << 20));
			if g.scratch(Slot::Bench(slot), bytes).is_ok() {
				slot += 1;
			} else {
				bytes /= 2;
			}
		}
	}
	emu.matmul_device(&mut dc, Accum::Replace, (&da, &db), 1.0, Precision::F64)
		.expect("the scratch kept in the benchmark's slots freed for the product");
	assert!(free() > 1 << 30, "the product ran without needing the kept scratch freed");
	let mut c = faer::Mat::<f64>::zeros(N, N);
	let oracle = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(false);
	oracle
		.matmul(
			c.as_mut(),
			Accum::Replace,
			(a.as_ref(), b.as_ref()),
			1.0,
			(faer::Par::rayon(0), Precision::F64),
		)
		.unwrap();
	let g = dc.download().unwrap();
	let differ = (0..N)
		.flat_map(|j| (0..N).map(move |i| (i, j)))
		.filter(|&(i, j)| g[(i, j)].to_bits() != c[(i, j)].to_bits());
	assert_eq!(differ.count(), 0, "entries that differ from the CPU oracle");
}
