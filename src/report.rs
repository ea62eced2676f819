//! what a product reports: its backend, plan, route, shape, phase times and the rows left native;
//! the last report of each context and of each thread

use crate::{Backend, Plan};
use core::fmt;
use std::cell::RefCell;
use std::time::Duration;

/// wall-clock time of each phase of the last product
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
	/// host products on the GPU: the operands' (and for [`crate::Accum::Add`] the destination's) way to
	/// the device, host copies and DMAs
	pub upload: Duration,
	/// the error bound that certifies the plan (target precisions only; part of `split`)
	pub bound: Duration,
	/// statistics, the error bound, and the scaling and conversion of the operands to int8
	/// slices or residues
	pub split: Duration,
	/// the exact integer products (with the mod-m reduction for scheme II)
	pub products: Duration,
	/// shift-reduce or CRT reconstruction, inverse scaling
	pub reconstruct: Duration,
	/// host products on the GPU: the result's way back into the destination
	pub download: Duration,
	/// the whole call, output written
	pub total: Duration,
}

/// how a product's integer work ran
///
/// # example
/// ```
/// use emugemm::{Backend, EmuMatMul, Emulator, Precision, Route};
/// let a = emugemm::testing::random_matrix::<f64>(8, 8, 1.0, 1);
/// // the emulation even where the native product is faster, as here
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(false);
/// let mut c = faer::Mat::<f64>::zeros(8, 8);
/// emu.matmul(c.as_mut(), faer::Accum::Replace, a.as_ref(), a.as_ref(), 1.0, Precision::F64).unwrap();
/// assert_eq!(emu.last_report().unwrap().route, Route::Cpu);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
	/// the native product (faer, or cuBLAS on the GPU)
	Native,
	/// the CPU emulation
	Cpu,
	/// the GPU's fused kernels: products reduced (scheme II) or reconstructed (scheme I) in their
	/// epilogue, one launch (complex scheme II: the three products of 3M in one launch)
	Fused,
	/// complex scheme II on the GPU's fused kernels, its three products in three launches with
	/// int8 residues between them (large products)
	FusedThreeLaunches,
	/// the GPU's unfused pipeline: cuBLASLt INT8 products, then separate reduction kernels
	Unfused,
	/// the portable path, on any GPU of compute capability 8.0 or higher: the unfused pipeline
	/// with the generic kernels compiled from PTX for the GPU
	Portable,
}

/// what happened in one product
///
/// # example
/// ```
/// use emugemm::{Accum, Backend, Emulator, Precision};
/// let a = faer::Mat::<f64>::from_fn(8, 8, |i, j| (i + 2 * j) as f64);
/// let mut c = faer::Mat::<f64>::zeros(8, 8);
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// emu.matmul(c.as_mut(), Accum::Replace, a.as_ref(), a.as_ref(), 1.0, Precision::F64).unwrap();
/// let report = emu.last_report().unwrap();
/// println!("{report}");
/// assert_eq!(report.shape, (8, 8, 8));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
	/// the backend that ran
	pub backend: Backend,
	/// the plan that ran
	pub plan: Plan,
	/// how its integer work ran
	pub route: Route,
	/// `(m, n, k)`
	pub shape: (usize, usize, usize),
	/// the element type
	pub element: &'static str,
	/// output entries computed natively because their row or column held a NaN or an infinity
	pub nonfinite_entries: usize,
	/// the rows of the product computed natively, ascending: those the bound could not certify in
	/// the plan (all rows of a native plan); rows with non-finite entries are not listed
	pub native_rows: Vec<usize>,
	/// phase times
	pub times: PhaseTimes,
	/// a host product that a [`Backend::Auto`] context computed on the host's cores because that
	/// was predicted faster than the GPU with its transfers: both predictions
	/// ([`crate::Emulator::with_host_routing`])
	pub host_routing: Option<crate::HostRouting>,
	/// a product computed in tiles of the output, out of core ([`crate::Emulator::with_device_memory`]) or
	/// over several GPUs ([`crate::Emulator::on_gpus`]): the grid of tiles, `(row tiles, column tiles)`
	pub tiles: Option<(usize, usize)>,
}

impl fmt::Display for Report {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		let (m, n, k) = self.shape;
		let t = &self.times;
		write!(
			f,
			"{m}x{n}x{k} {} on {:?}: {} ({:?}) |",
			self.element, self.backend, self.plan, self.route
		)?;
		if !t.upload.is_zero() {
			write!(f, " upload {:.3?},", t.upload)?;
		}
		write!(
			f,
			" split {:.3?}, products {:.3?}, reconstruct {:.3?},",
			t.split, t.products, t.reconstruct
		)?;
		if !t.download.is_zero() {
			write!(f, " download {:.3?},", t.download)?;
		}
		write!(f, " total {:.3?}", t.total)?;
		if self.nonfinite_entries > 0 {
			write!(f, " | {} non-finite entries computed natively", self.nonfinite_entries)?;
		}
		if let Some((rows, cols)) = self.tiles {
			write!(f, " | in {rows} x {cols} tiles")?;
		}
		if let Some(r) = self.host_routing {
			write!(
				f,
				" | on the host: predicted {:.3} ms against {:.3} ms on the GPU with transfers",
				r.host_seconds * 1e3,
				r.gpu_seconds * 1e3
			)?;
		}
		Ok(())
	}
}

thread_local! {
	static LAST_REPORT: RefCell<Option<Report>> = const { RefCell::new(None) };
}

/// the report of the last product computed on this thread (by [`crate::EmuMatMul`] or any
/// [`crate::Emulator`])
///
/// # example
/// ```
/// use emugemm::{EmuMatMul, Precision};
/// let a = faer::Mat::<f64>::identity(4, 4);
/// let _ = a.emu_mul(&a, Precision::F64);
/// assert_eq!(emugemm::last_report().unwrap().shape, (4, 4, 4));
/// ```
pub fn last_report() -> Option<Report> {
	LAST_REPORT.with(|r| r.borrow().clone())
}

/// records `report` as this thread's last
pub(crate) fn remember_on_thread(report: Report) {
	LAST_REPORT.with(|r| *r.borrow_mut() = Some(report));
}
