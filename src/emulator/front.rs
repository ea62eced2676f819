//! the front door of every product: the shapes and the precision checked, the product handed to
//! its engine, timed, and its report published once

use super::Emulator;
use super::native::native_at;
use crate::Backend;
use crate::parallel;
use crate::policy::Choice;
use crate::precision::validate;
use crate::report::remember_on_thread;
use crate::shape::{Shape, check_shapes};
use crate::stats::row_stats;
use crate::view::View;
use crate::{Error, NativeReason, PhaseTimes, Plan, Precision, Report, Scalar};
use faer::mat::{AsMatMut, AsMatRef};
use faer::traits::Conjugate;
use faer::{Accum, MatMut, MatRef, Par};
use std::time::Instant;

impl Emulator {
	/// the plan this context would run for `lhs * rhs` at `precision`
	///
	/// For a target precision this computes the error bound on the CPU, on every backend (one
	/// exact integer product of the operands' window magnitudes, `m n k` operations; the GPU
	/// computes the same bound, bit for bit, when it runs the product)
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision, Scheme};
	/// let a = emugemm::testing::random_matrix::<f32>(64, 64, 0.5, 1);
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
	/// let plan = emu.plan(a.as_ref(), a.as_ref(), Precision::Tf32).unwrap();
	/// assert!(plan.predicted_bits >= 11.0); // the target of `Tf32`
	/// // an explicit plan is taken as given
	/// let four = emu.plan(a.as_ref(), a.as_ref(), Precision::SchemeI { slices: 4 }).unwrap();
	/// assert_eq!(four.scheme, Scheme::SchemeI { slices: 4 });
	/// ```
	pub fn plan<T: Scalar, L: Conjugate<Canonical = T>, R: Conjugate<Canonical = T>>(
		&self,
		lhs: MatRef<'_, L>,
		rhs: MatRef<'_, R>,
		precision: Precision,
	) -> Result<Plan, Error> {
		let (lhs, rhs) = (View::of(lhs), View::of(rhs));
		let (precision, shape) = self.query((lhs, rhs), precision)?;
		if self.goes_native::<T>(shape, precision).is_some() {
			return Ok(Plan::native(shape.m));
		}
		Ok(self.prepare(lhs, rhs, precision).choice.plan)
	}

	/// the precision in force (the context's override applied) and the shape of a question about
	/// a product ([`Emulator::plan`], [`Emulator::candidates`]), checked as the
	/// product itself would be
	fn query<T: Scalar>(&self, (lhs, rhs): (View<'_, T>, View<'_, T>), precision: Precision) -> Result<(Precision, Shape), Error> {
		let precision = self.precision_for(precision);
		self.refused()?;
		check_shapes(lhs.shape(), rhs.shape(), None)?;
		validate(precision).map_err(|reason| Error::InvalidPrecision { precision, reason })?;
		Ok((precision, Shape::new(lhs.nrows(), rhs.ncols(), lhs.ncols())))
	}

	/// the plans the policy weighs for `lhs * rhs` at a target `precision`, cheapest first (the
	/// first is the plan [`Emulator::plan`] gives): the emulated plans whose certified bits meet the
	/// target on all but at most an eighth of the rows of the product, and the native product
	/// where it competes by time ([`Emulator::with_native_candidate`]); the native product alone
	/// where it is predicted faster than any emulation plus the bound's cost. Empty for explicit
	/// plans ([`Precision::SchemeI`], [`Precision::SchemeII`]), where this context computes
	/// natively, and where no emulated plan certifies the target and the native product does not
	/// compete (it is then computed natively)
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision, Scheme};
	/// let a = emugemm::testing::random_matrix::<f64>(64, 64, 1.0, 1);
	/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
	/// let plans = emu.candidates(a.as_ref(), a.as_ref(), Precision::F64).unwrap();
	/// assert_eq!(plans[0], emu.plan(a.as_ref(), a.as_ref(), Precision::F64).unwrap());
	/// assert!(plans.iter().all(|p| p.predicted_bits >= 52.0));
	/// ```
	pub fn candidates<T: Scalar, L: Conjugate<Canonical = T>, R: Conjugate<Canonical = T>>(
		&self,
		lhs: MatRef<'_, L>,
		rhs: MatRef<'_, R>,
		precision: Precision,
	) -> Result<Vec<Plan>, Error> {
		let (lhs, rhs) = (View::of(lhs), View::of(rhs));
		let (precision, shape) = self.query((lhs, rhs), precision)?;
		if !self.emulates(shape.k) {
			return Ok(Vec::new());
		}
		if self.goes_native::<T>(shape, precision).is_some() && precision.target_bits(T::MANTISSA_BITS, shape.k).is_some() {
			return Ok(vec![Plan::native(shape.m)]);
		}
		let (a, b) = self.operands(lhs, rhs, precision);
		let (sa, sb) = (row_stats(&a), row_stats(&b));
		let (decided, ..) = self.decide::<T>((&a, &b), (&sa, &sb), precision);
		let ranked = decided.candidates(self.policy_input::<T>(Shape::new(a.len, b.len, a.k)), precision);
		Ok(ranked.into_iter().map(|c| c.plan).collect())
	}

	/// `dst = alpha * lhs * rhs` ([`Accum::Replace`]) or `dst += alpha * lhs * rhs` ([`Accum::Add`])
	/// at `precision`, the CPU's part on `par`: what [`crate::matmul`] takes (faer's `matmul` with a
	/// precision: matrices, columns, rows, owned or views; the operands as one pair `(lhs, rhs)`,
	/// the threads and the precision as another, `(par, precision)`), on this context
	///
	/// the emulated product is written as `alpha * c` (complex: `(ar cr - ai ci, ar ci + ai cr)`),
	/// then `old + that` for [`Accum::Add`], each operation rounded in `f64`, then rounded once to
	/// `T`. entries whose row of `lhs` or column of `rhs` holds a NaN or an infinity are computed
	/// natively, so they carry the non-finite values a native product gives. Conjugated views
	/// (`a.conjugate()`, `a.adjoint()`) are read conjugated, without a copy; the result is the
	/// product of the conjugated matrices bit for bit
	///
	/// # example
	/// ```
	/// use emugemm::{Accum, Backend, Emulator, Precision};
	/// let z = emugemm::testing::random_matrix::<faer::c64>(40, 30, 1.0, 1);
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// // the Gram matrix zᴴ z, without a copy of zᴴ
	/// let mut g = faer::Mat::<faer::c64>::zeros(30, 30);
	/// emu.matmul(&mut g, Accum::Replace, (z.adjoint(), &z), faer::c64::new(1.0, 0.0), (faer::Par::Seq, Precision::F64))?;
	/// // y = zᴴ x, for a column x
	/// let x = faer::Col::<faer::c64>::from_fn(40, |i| faer::c64::new(i as f64, 1.0));
	/// let mut y = faer::Col::<faer::c64>::zeros(30);
	/// emu.matmul(&mut y, Accum::Replace, (z.adjoint(), &x), faer::c64::new(1.0, 0.0), (faer::Par::Seq, Precision::F64))?;
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn matmul<T: Scalar, L: Conjugate<Canonical = T>, R: Conjugate<Canonical = T>, M: faer::Shape, N: faer::Shape, K: faer::Shape>(
		&self,
		mut dst: impl AsMatMut<T = T, Rows = M, Cols = N>,
		accum: Accum,
		(lhs, rhs): (impl AsMatRef<T = L, Rows = M, Cols = K>, impl AsMatRef<T = R, Rows = K, Cols = N>),
		alpha: T,
		(par, precision): (Par, Precision),
	) -> Result<(), Error> {
		let views = (View::of(lhs.as_mat_ref().as_dyn()), View::of(rhs.as_mat_ref().as_dyn()));
		self.matmul_views(dst.as_mat_mut().as_dyn_mut(), accum, views, alpha, (precision, par))
	}

	/// [`Emulator::matmul`] of operand views, the CPU's work on `par`
	pub(crate) fn matmul_views<T: Scalar>(
		&self,
		dst: MatMut<'_, T>,
		accum: Accum,
		(lhs, rhs): (View<'_, T>, View<'_, T>),
		alpha: T,
		(precision, par): (Precision, Par),
	) -> Result<(), Error> {
		let precision = self.precision_for(precision);
		let shape = Shape::new(lhs.nrows(), rhs.ncols(), lhs.ncols());
		let dims = [lhs.shape(), rhs.shape(), dst.shape()];
		// the native product on the host's cores, with the host routing that sent it there
		let on_host = |dst: MatMut<'_, T>, host_routing: Option<crate::HostRouting>, reason| {
			native_at(dst, accum, (lhs, rhs), alpha, (precision, par));
			Ok(Report {
				host_routing,
				..self.report::<T>(Choice::native(shape.m, reason), shape, 0, PhaseTimes::default())
			})
		};
		self.run(dims, precision, || {
			parallel::within(par, || match self.backend {
				// an empty product is native on every backend, for one reason
				_ if shape.is_empty() => on_host(dst, None, NativeReason::NotEmulated),
				Backend::CpuEmulation => Ok(self.emulate(dst, accum, (lhs, rhs), alpha, (precision, par))),
				#[cfg(feature = "cuda")]
				Backend::Gpu if self.below_native_size(shape) => on_host(dst, None, NativeReason::BelowNativeSize),
				#[cfg(feature = "cuda")]
				Backend::Gpu => match self.host_route::<T>(shape, accum, precision) {
					Some(routing) => on_host(dst, Some(routing), NativeReason::HostRouting),
					None => crate::gpu::host_product(self.settings(), dst, accum, (lhs, rhs), alpha, precision),
				},
				_ => on_host(dst, None, NativeReason::NotEmulated),
			})
		})
	}

	/// `dst = alpha lhs rhs` ([`Accum::Replace`]) or `dst += alpha lhs rhs` ([`Accum::Add`]) with
	/// every operand in GPU memory (feature `cuda`, [`Backend::Gpu`]), the operands as one pair
	/// `(lhs, rhs)`, the entries as [`Emulator::matmul`] writes them
	///
	/// # example
	/// ```no_run
	/// use emugemm::{Accum, Backend, Emulator, Precision};
	/// let emu = Emulator::with_backend(Backend::Gpu)?;
	/// let a = emu.upload(emugemm::testing::random_matrix::<f64>(64, 64, 1.0, 1).as_ref())?;
	/// let mut c = emu.zeros_on_device::<f64>(64, 64)?;
	/// emu.matmul_device(&mut c, Accum::Replace, (&a, &a), 1.0, Precision::F64)?;
	/// println!("{}", emu.last_report().unwrap());
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	#[cfg(feature = "cuda")]
	pub fn matmul_device<T: Scalar>(
		&self,
		dst: &mut crate::DeviceMatrix<T>,
		accum: Accum,
		(lhs, rhs): (&crate::DeviceMatrix<T>, &crate::DeviceMatrix<T>),
		alpha: T,
		precision: Precision,
	) -> Result<(), Error> {
		self.require_gpu()?;
		let precision = self.precision_for(precision);
		let dims = [lhs.shape(), rhs.shape(), dst.shape()];
		self.run(dims, precision, || {
			crate::gpu::device_product(self.settings(), dst, accum, (lhs, rhs), alpha, precision)
		})
	}

	/// the error this context returns for every product, where it has one (the global context's
	/// where the environment cannot be used)
	fn refused(&self) -> Result<(), Error> {
		self.refusal.clone().map_or(Ok(()), Err)
	}

	/// the precision a call asking for `asked` runs at: the override's where the context has one
	/// (a warning, once per process, where it replaces a target precision by another)
	fn precision_for(&self, asked: Precision) -> Precision {
		let Some(given) = self.precision_override else {
			return asked;
		};
		if given != asked && asked.target_bits(53, 1).is_some() {
			static WARNED: std::sync::Once = std::sync::Once::new();
			WARNED.call_once(|| {
				log::warn!(
					"emugemm: the precision override {given} replaces the target precision {asked} the call asks for (EMUGEMM_PRECISION on the global context); an explicit plan keeps no accuracy promise"
				)
			});
		}
		given
	}

	/// the one way a product runs: `dims` (of `lhs`, `rhs` and `dst`) and `precision` checked,
	/// then `product`, timed whole, its report published as this context's and this thread's last
	fn run(
		&self,
		[lhs, rhs, dst]: [(usize, usize); 3],
		precision: Precision,
		product: impl FnOnce() -> Result<Report, Error>,
	) -> Result<(), Error> {
		self.refused()?;
		check_shapes(lhs, rhs, Some(dst))?;
		validate(precision).map_err(|reason| Error::InvalidPrecision { precision, reason })?;
		let start = Instant::now();
		let report = product()?;
		let report = Report {
			times: PhaseTimes {
				total: start.elapsed(),
				..report.times
			},
			..report
		};
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
		remember_on_thread(report.clone());
		*self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
		Ok(())
	}
}
