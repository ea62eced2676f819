//! what a product reports: its backend, plan, route, shape, phase times and the rows left native;
//! the last report of each context and of each thread

use crate::pending::PendingReport;
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
/// // the oracle emulates even where the native product is faster, as here
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// let mut c = faer::Mat::<f64>::zeros(8, 8);
/// emu.matmul(c.as_mut(), faer::Accum::Replace, (a.as_ref(), a.as_ref()), 1.0, (faer::Par::Seq, Precision::F64)).unwrap();
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

/// why a product (or its rows) was computed natively
///
/// # example
/// ```
/// use emugemm::{Backend, Emulator, NativeReason, Precision};
/// let a = emugemm::testing::random_matrix::<f64>(8, 8, 1.0, 1);
/// // the oracle with the native product competing by time, as on a GPU
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(true);
/// let mut c = faer::Mat::<f64>::zeros(8, 8);
/// emu.matmul(c.as_mut(), faer::Accum::Replace, (a.as_ref(), a.as_ref()), 1.0, (faer::Par::Seq, Precision::F64)).unwrap();
/// // a product this small is faster natively than any emulation with its bound
/// assert_eq!(emu.last_report().unwrap().native_reason, Some(NativeReason::FasterNatively));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NativeReason {
	/// the screen found, from the operands' row statistics alone, that more than an eighth of the
	/// rows have an infinite error bound under every plan, and skipped the bound: `rows` rows whose
	/// magnitude window (the parts within six binades of a row's largest) misses that of some
	/// column of `B`, `certain` of them for certain (complex rows whose imaginary or real parts
	/// all lie below the window, under one scale for both parts), the rest with probability at
	/// least `1 - e^-16` where the entries' positions along K are unrelated; `median_window` is
	/// the median count of window parts of the rows of `A` and of the columns of `B`. Where
	/// `sampled` holds the sample's sizes, the screen read evenly spaced rows of `A` and columns
	/// of `B` only, before the statistics of the whole operands, and found more than a quarter of
	/// the sampled rows infinite (the counts are the sample's)
	Screen {
		/// rows of the product that no plan certifies
		rows: usize,
		/// of them, those that certainly none does
		certain: usize,
		/// the median number of parts in the window of a row of `A` and of a column of `B`
		median_window: (u32, u32),
		/// the rows of `A` and columns of `B` the screen read where it read a sample
		sampled: Option<(usize, usize)>,
	},
	/// the error bound certified no emulated plan on all but an eighth of the rows, or the native
	/// product was predicted faster than every plan it certified
	NoPlanCertifies,
	/// the native product was predicted no slower than any plan that could certify the target on
	/// dense operands of the product's `K`, with that plan's certificate: decided from the shape,
	/// no operand read (small products, `Tf32` of `f32` against a TF32 GEMM, an inner dimension
	/// that needs more moduli than the native product's time pays for)
	FasterNatively,
	/// a dimension is below the context's native size ([`crate::Emulator::with_native_below`])
	BelowNativeSize,
	/// a [`Backend::Auto`] context computed a host product on the host's cores, predicted faster
	/// than the GPU with its transfers ([`Report::host_routing`] has both predictions)
	HostRouting,
	/// the context does not emulate: [`Backend::Native`], or an empty product (a dimension of
	/// zero), on every backend
	NotEmulated,
}

impl fmt::Display for NativeReason {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match *self {
			NativeReason::Screen {
				rows,
				certain,
				median_window: (a, b),
				sampled,
			} => {
				write!(
					f,
					"the screen: {rows} rows no plan certifies ({certain} certainly, their imaginary or real parts below the bound's window; the others' window of a median {a} parts meets no part of some column's, of a median {b})"
				)?;
				match sampled {
					Some((rows, columns)) => write!(f, ", on a sample of {rows} rows and {columns} columns"),
					None => Ok(()),
				}
			},
			NativeReason::NoPlanCertifies => write!(f, "the bound certified no plan (or none faster than the native product)"),
			NativeReason::FasterNatively => write!(
				f,
				"predicted no slower natively than any plan that could certify the target, with its certificate"
			),
			NativeReason::BelowNativeSize => write!(f, "below the context's native size"),
			NativeReason::HostRouting => write!(f, "routed to the host's cores"),
			NativeReason::NotEmulated => write!(f, "the context does not emulate it"),
		}
	}
}

/// which tier of the decision settled a product's plan: each reads more than the one before it,
/// and runs only where the one before it left the plan open
///
/// # example
/// ```
/// use emugemm::{Backend, EmuMatMul, Emulator, Precision, Tier};
/// let a = emugemm::testing::random_matrix::<f64>(8, 8, 1.0, 1);
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap().with_native_candidate(true);
/// let mut c = faer::Mat::<f64>::zeros(8, 8);
/// emu.matmul(c.as_mut(), faer::Accum::Replace, (a.as_ref(), a.as_ref()), 1.0, (faer::Par::Seq, Precision::F64)).unwrap();
/// // so small a product is native from its shape alone: no operand was read to decide it
/// assert_eq!(emu.last_report().unwrap().tier(), Tier::Shape);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
	/// the shape, the type, the target and the GPU alone, no operand read: the native product
	/// (predicted no slower than any plan that could certify the target, with its certificate;
	/// below the native size; routed to the host; not emulated)
	Shape,
	/// the operands' row statistics: the screen found that no plan certifies the product
	Screen,
	/// the error bound: the plan it certifies, or the native product where it certifies none
	/// faster
	Bound,
	/// an explicit plan ([`crate::Precision::SchemeI`], [`crate::Precision::SchemeII`]), run as
	/// given
	Explicit,
}

impl fmt::Display for Tier {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		f.write_str(match self {
			Tier::Shape => "shape",
			Tier::Screen => "screen",
			Tier::Bound => "bound",
			Tier::Explicit => "explicit",
		})
	}
}

/// what happened in one product
///
/// # example
/// ```
/// use emugemm::{Accum, Backend, Emulator, Precision};
/// let a = faer::Mat::<f64>::from_fn(8, 8, |i, j| (i + 2 * j) as f64);
/// let mut c = faer::Mat::<f64>::zeros(8, 8);
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// emu.matmul(c.as_mut(), Accum::Replace, (a.as_ref(), a.as_ref()), 1.0, (faer::Par::Seq, Precision::F64)).unwrap();
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
	/// a product of a batch that shared its launches with others of its shape
	/// ([`crate::Emulator::gemm_batch_on_stream`]): how many products, this one among them, ran
	/// their residue products in one launch
	pub shared_launch: Option<usize>,
	/// why the product was computed natively, where it was (`None` where a plan ran, and for
	/// explicit plans)
	pub native_reason: Option<NativeReason>,
}

impl Report {
	/// the tier of the decision that settled this product's plan, from its plan and its reason
	/// for going native
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, EmuMatMul, Emulator, Precision, Tier};
	/// let a = faer::Mat::<f64>::identity(8, 8);
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
	/// let _ = a.emu_mul_with(&emu, &a, Precision::SchemeII { moduli: 8 });
	/// assert_eq!(emu.last_report().unwrap().tier(), Tier::Explicit);
	/// ```
	pub fn tier(&self) -> Tier {
		match self.native_reason {
			Some(NativeReason::Screen { .. }) => Tier::Screen,
			Some(NativeReason::NoPlanCertifies) => Tier::Bound,
			Some(_) => Tier::Shape,
			None if self.plan.predicted_bits.is_nan() => Tier::Explicit,
			None => Tier::Bound,
		}
	}
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
		if let Some(reason) = self.native_reason {
			write!(f, " | native: {reason} (decided by the {})", self.tier())?;
		}
		if let Some((rows, cols)) = self.tiles {
			write!(f, " | in {rows} x {cols} tiles")?;
		}
		if let Some(count) = self.shared_launch {
			write!(f, " | one launch for {count} products of a batch")?;
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
	static LAST_REPORT: RefCell<Option<PendingReport>> = const { RefCell::new(None) };
}

/// the report of the last product computed on this thread (by [`crate::EmuMatMul`] or any
/// [`crate::Emulator`]); a product on device views that returned before its plan was chosen is
/// waited for (see [`PendingReport::wait`]), and one that failed since gives `None`
///
/// # example
/// ```
/// use emugemm::{EmuMatMul, Precision};
/// let a = faer::Mat::<f64>::identity(4, 4);
/// let _ = a.emu_mul(&a, Precision::F64);
/// assert_eq!(emugemm::last_report().unwrap().shape, (4, 4, 4));
/// ```
pub fn last_report() -> Option<Report> {
	last_pending_report()?.wait().ok()
}

/// the report of the last product started on this thread, without waiting for it (see
/// [`PendingReport`])
///
/// # example
/// ```
/// use emugemm::{EmuMatMul, Precision};
/// let a = faer::Mat::<f64>::identity(4, 4);
/// let _ = a.emu_mul(&a, Precision::F64);
/// assert!(emugemm::last_pending_report().unwrap().try_get().is_some());
/// ```
pub fn last_pending_report() -> Option<PendingReport> {
	LAST_REPORT.with(|r| r.borrow().clone())
}

/// records `report` as this thread's last
pub(crate) fn remember_on_thread(report: PendingReport) {
	LAST_REPORT.with(|r| *r.borrow_mut() = Some(report));
}

/// `report` of a call that began at `start`, its total the host's time from then to now, logged
/// (see [`logged`])
pub(crate) fn finished(mut report: Report, start: std::time::Instant) -> Report {
	report.times.total = start.elapsed();
	logged(&report);
	report
}

/// `report` logged: whole at debug level, and the rows and entries it left to the native product
/// at info level
pub(crate) fn logged(report: &Report) {
	log::debug!("emugemm: {report}");
	let uncertified = if report.plan.scheme == crate::Scheme::Native {
		0
	} else {
		report.native_rows.len()
	};
	if uncertified > 0 || report.nonfinite_entries > 0 {
		log::info!(
			"emugemm: {uncertified} rows no plan certifies and {} entries with NaN or infinite operands computed natively",
			report.nonfinite_entries
		);
	}
}
