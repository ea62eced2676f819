//! the front door of every product: the shapes and the precision checked, the product handed to
//! its engine, timed, and its report published once

use super::Emulator;
use crate::Backend;
use crate::cpu::oracle;
use crate::native::{HostRequest, native_at};
use crate::parallel;
use crate::pending::PendingReport;
use crate::policy::{Choice, PolicyInput};
use crate::precision::validate;
use crate::report::remember_on_thread;
use crate::request::{Request, Routine};
use crate::shape::{Shape, check_shapes};
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
		let request = self.query((View::of(lhs), View::of(rhs)), precision)?;
		if self.goes_native::<T>(request.shape, 1, request.precision).is_some() {
			return Ok(Plan::native(request.shape.m));
		}
		Ok(oracle::prepare(&request).choice.plan)
	}

	/// the request of a question about a product ([`Emulator::plan`], [`Emulator::candidates`]):
	/// the product `lhs rhs` replacing its destination, checked as the product itself would be
	fn query<'a, T: Scalar>(&self, operands: (View<'a, T>, View<'a, T>), precision: Precision) -> Result<HostRequest<'a, T>, Error> {
		let request = self.request(
			Accum::Replace,
			operands,
			T::from_parts(1.0, 0.0),
			(self.precision_for(precision), self.par),
		);
		self.refused()?;
		check_shapes(request.lhs.shape(), request.rhs.shape(), None)?;
		validate(request.precision, T::MANTISSA_BITS).map_err(|reason| Error::InvalidPrecision { precision, reason })?;
		Ok(request)
	}

	/// the one request of a call of the routine [`Routine::Gemm`] on `operands`: its shape, the
	/// precision in force (`precision`, after the context's override) and this context's
	/// settings
	pub(crate) fn request<T: Scalar, O: Operands>(
		&self,
		accum: Accum,
		(lhs, rhs): (O, O),
		alpha: T,
		(precision, par): (Precision, Par),
	) -> Request<T, O> {
		Request {
			routine: Routine::Gemm,
			shape: Shape::new(lhs.dims().0, rhs.dims().1, lhs.dims().1),
			lhs,
			rhs,
			accum,
			alpha,
			precision,
			par,
			settings: self.settings,
		}
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
		let request = self.query((View::of(lhs), View::of(rhs)), precision)?;
		let Request { shape, precision, .. } = request;
		if !self.emulates(shape.k) {
			return Ok(Vec::new());
		}
		if self.goes_native::<T>(shape, 1, precision).is_some() && precision.target_bits(T::MANTISSA_BITS, shape.k).is_some() {
			return Ok(vec![Plan::native(shape.m)]);
		}
		Ok(oracle::candidates(&request))
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
		let request = self.request(accum, (lhs, rhs), alpha, (self.precision_for(precision), par));
		self.views_product(dst, request)
	}

	/// the product `request` asks for of operand views, into `dst`, on its backend: the CPU oracle
	/// and the host's native product compute every entry for every routine; the GPU engine
	/// dispatches on the routine
	pub(crate) fn views_product<T: Scalar>(&self, dst: MatMut<'_, T>, request: HostRequest<'_, T>) -> Result<(), Error> {
		let Request {
			shape,
			precision,
			par,
			lhs,
			rhs,
			..
		} = request;
		let dims = [lhs.shape(), rhs.shape(), dst.shape()];
		// the native product on the host's cores, with the host routing that sent it there
		let on_host = |dst: MatMut<'_, T>, host_routing: Option<crate::HostRouting>, reason| {
			native_at(dst, &request);
			Ok(Report {
				host_routing,
				..oracle::report::<T>(Choice::native(shape.m, reason), shape, 0, PhaseTimes::default())
			})
		};
		self.run::<T>(dims, precision, || {
			parallel::within(par, || match self.backend {
				// an empty product is native on every backend, for one reason
				_ if shape.is_empty() => on_host(dst, None, NativeReason::NotEmulated),
				Backend::CpuEmulation => match self.goes_native::<T>(shape, 1, precision) {
					Some(reason) => on_host(dst, None, reason),
					None => Ok(oracle::emulate(dst, &request)),
				},
				#[cfg(feature = "cuda")]
				Backend::Gpu if self.below_native_size(shape) => on_host(dst, None, NativeReason::BelowNativeSize),
				#[cfg(feature = "cuda")]
				Backend::Gpu => match self.host_route::<T>(shape, request.accum, precision) {
					Some(routing) => on_host(dst, Some(routing), NativeReason::HostRouting),
					None => crate::gpu::host_product(dst, request),
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
		let request = self.request(accum, (lhs, rhs), alpha, (self.precision_for(precision), self.par));
		let dims = [lhs.shape(), rhs.shape(), dst.shape()];
		self.run::<T>(dims, request.precision, || crate::gpu::device_product(dst, request))
	}

	/// where a GPU context routes a host product of `shape` at a target `precision` to the host's
	/// cores: with host routing on ([`Emulator::with_host_routing`]) and the host predicted faster
	#[cfg(feature = "cuda")]
	fn host_route<T: Scalar>(&self, shape: Shape, accum: Accum, precision: Precision) -> Option<crate::HostRouting> {
		if !self.settings.host_routing || precision.target_bits(T::MANTISSA_BITS, shape.k).is_none() {
			return None;
		}
		let routing = crate::routing::route::<T>(
			shape,
			accum,
			precision,
			(crate::routing::host_rate::<T>(), self.settings.model.model()),
		);
		routing.on_host().then_some(routing)
	}

	/// why this context computes a product of `T` of `shape` `(m, n, k)` at `precision` natively
	/// from its shape alone (the first tier of the decision, [`crate::Tier::Shape`]), before
	/// reading any operand; `None` where the operands decide. For a batch of `count` products of
	/// that shape (1 for a single product), against one batched GEMM. A caller that forwards such
	/// products to its own native routine (a cuBLAS interposer) asks this first and pays nothing
	/// else; [`Emulator::matmul`] and the device doors ask it too. Where [`Precision`] is explicit,
	/// or the context does not compete the native product, never
	///
	/// # example
	/// ```
	/// use emugemm::{Backend, Emulator, Precision};
	/// // the CPU oracle, with the native product competing as on a GPU
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?.with_native_candidate(true);
	/// // a small product is native on every GPU the crate knows
	/// assert!(emu.native_from_shape::<f64>((64, 64, 64), 1, Precision::F64).is_some());
	/// // an explicit plan runs as given
	/// assert_eq!(emu.native_from_shape::<f64>((64, 64, 64), 1, Precision::SchemeII { moduli: 8 }), None);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn native_from_shape<T: Scalar>(
		&self,
		(m, n, k): (usize, usize, usize),
		count: usize,
		precision: Precision,
	) -> Option<NativeReason> {
		self.goes_native::<T>(Shape::new(m, n, k), count, self.precision_for(precision))
	}

	/// why `count` products of `shape` at `precision` are computed natively before any bound,
	/// where they are: this context does not emulate them or they are empty, they are below the
	/// native size, or the native routine is predicted no slower than any plan that could certify
	/// them with its certificate ([`PolicyInput::native_from_shape`])
	fn goes_native<T: Scalar>(&self, shape: Shape, count: usize, precision: Precision) -> Option<NativeReason> {
		if !self.emulates(shape.k) || shape.is_empty() {
			Some(NativeReason::NotEmulated)
		} else if self.below_native_size(shape) {
			Some(NativeReason::BelowNativeSize)
		} else {
			PolicyInput::in_context::<T>(shape, &self.settings)
				.native_from_shape(precision, count)
				.then_some(NativeReason::FasterNatively)
		}
	}

	/// whether a dimension of `shape` is below [`Emulator::with_native_below`]'s size
	fn below_native_size(&self, Shape { m, n, k }: Shape) -> bool {
		m.min(n).min(k) < self.native_below
	}

	/// whether this context emulates a product of inner dimension `k` (not on
	/// [`Backend::Native`], nor for K = 0)
	fn emulates(&self, k: usize) -> bool {
		matches!(self.backend, Backend::CpuEmulation | Backend::Gpu) && k > 0
	}

	/// the error this context returns for every product, where it has one (the global context's
	/// where the environment cannot be used)
	pub(super) fn refused(&self) -> Result<(), Error> {
		self.refusal.clone().map_or(Ok(()), Err)
	}

	/// the precision a call asking for `asked` runs at: the override's where the context has one
	/// (a warning, once per process, where it replaces a target precision by another)
	pub(super) fn precision_for(&self, asked: Precision) -> Precision {
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

	/// the one way a product runs: `dims` (of `lhs`, `rhs` and `dst`) and `precision` checked
	/// (for outputs of `T`), then `product`, timed whole, its report published as this context's
	/// and this thread's last
	pub(super) fn run<T: Scalar>(
		&self,
		dims: [(usize, usize); 3],
		precision: Precision,
		product: impl FnOnce() -> Result<Report, Error>,
	) -> Result<(), Error> {
		self.checked::<T>(dims, precision)?;
		let start = Instant::now();
		let report = crate::report::finished(product()?, start);
		self.remember(PendingReport::ready(report));
		Ok(())
	}

	/// [`Emulator::run`] for a product that may return before its report is ready: the handle
	/// is published as this context's and this thread's last, and returned
	#[cfg(feature = "cuda")]
	pub(super) fn run_queued<T: Scalar>(
		&self,
		dims: [(usize, usize); 3],
		precision: Precision,
		product: impl FnOnce() -> Result<PendingReport, Error>,
	) -> Result<PendingReport, Error> {
		self.checked::<T>(dims, precision)?;
		let pending = product()?;
		self.remember(pending.clone());
		Ok(pending)
	}

	/// `Ok` where this context runs products and the shapes `dims` (of `lhs`, `rhs` and `dst`) and
	/// `precision` (for outputs of `T`) are valid
	fn checked<T: Scalar>(&self, [lhs, rhs, dst]: [(usize, usize); 3], precision: Precision) -> Result<(), Error> {
		self.refused()?;
		check_shapes(lhs, rhs, Some(dst))?;
		validate(precision, T::MANTISSA_BITS).map_err(|reason| Error::InvalidPrecision { precision, reason })
	}

	/// `report` published as this context's and this thread's last, and logged
	#[cfg(feature = "cuda")]
	pub(super) fn publish(&self, report: Report) {
		crate::report::logged(&report);
		self.remember(PendingReport::ready(report));
	}

	/// `pending` as this context's and this thread's last report
	fn remember(&self, pending: PendingReport) {
		remember_on_thread(pending.clone());
		*self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(pending);
	}
}

/// an operand of a product as the front door receives it: a host view or a device matrix, its
/// dimensions read before the shapes are checked
pub(crate) trait Operands: Copy {
	/// rows and columns
	fn dims(&self) -> (usize, usize);
}

impl<T: Scalar> Operands for View<'_, T> {
	fn dims(&self) -> (usize, usize) {
		self.shape()
	}
}

#[cfg(feature = "cuda")]
impl<T: Scalar> Operands for &crate::DeviceMatrix<T> {
	fn dims(&self) -> (usize, usize) {
		self.shape()
	}
}

#[cfg(feature = "cuda")]
impl<T: Scalar> Operands for crate::device_view::Borrowed<T> {
	fn dims(&self) -> (usize, usize) {
		crate::device_view::Borrowed::dims(self)
	}
}
