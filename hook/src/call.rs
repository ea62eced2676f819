//! one intercepted GEMM, batch of GEMMs or rank-k update: emulated through the C ABI where the configuration,
//! the handle's stream and the arguments allow it, otherwise forwarded to the real cuBLAS; logged
//! either way

use crate::config::{Config, Kind};
use crate::log::{self, Entry};
use crate::real::{self, EXECUTION_FAILED, Handle, NOT_INITIALIZED, SUCCESS, Status};
use cudarc::driver::sys;
use emugemm_c::{
	EmugemmComplex32, EmugemmComplex64, EmugemmFillMode, EmugemmOperation, EmugemmPointerMode, EmugemmPrecision, EmugemmStatus,
};
use std::ffi::{CStr, c_void};
use std::time::Instant;

/// the arguments of one GEMM, as cuBLAS takes them (64-bit dimensions)
pub(crate) struct Args<T> {
	pub ops: (i32, i32),
	pub shape: (i64, i64, i64),
	pub alpha: *const T,
	pub a: (*const T, i64),
	pub b: (*const T, i64),
	pub beta: *const T,
	pub c: (*mut T, i64),
}

impl Args<c_void> {
	/// the arguments of a `cublasGemmEx` call whose data types are `T`
	pub(crate) fn typed<T>(&self) -> Args<T> {
		Args {
			ops: self.ops,
			shape: self.shape,
			alpha: self.alpha.cast(),
			a: (self.a.0.cast(), self.a.1),
			b: (self.b.0.cast(), self.b.1),
			beta: self.beta.cast(),
			c: (self.c.0.cast(), self.c.1),
		}
	}
}

/// where a batch's matrices lie, as cuBLAS takes them
pub(crate) enum Matrices<T> {
	/// device arrays of device pointers: `A[i]`, `B[i]`, `C[i]`
	Pointers(*const *const T, *const *const T, *const *mut T),
	/// `A`, `B`, `C` of the first product and the strides, in elements, to the next product's
	Strided((*const T, i64), (*const T, i64), (*mut T, i64)),
}

/// the arguments of one batch of GEMMs, pointer-array or strided, as cuBLAS takes them (64-bit
/// dimensions)
pub(crate) struct BatchedArgs<T> {
	pub ops: (i32, i32),
	pub shape: (i64, i64, i64),
	pub alpha: *const T,
	pub beta: *const T,
	/// `lda`, `ldb`, `ldc`
	pub lds: (i64, i64, i64),
	pub matrices: Matrices<T>,
	pub batch_count: i64,
}

impl BatchedArgs<c_void> {
	/// the arguments of a `cublasGemm*BatchedEx` call whose data types are `T`
	pub(crate) fn typed<T>(&self) -> BatchedArgs<T> {
		BatchedArgs {
			ops: self.ops,
			shape: self.shape,
			alpha: self.alpha.cast(),
			beta: self.beta.cast(),
			lds: self.lds,
			matrices: match self.matrices {
				Matrices::Pointers(a, b, c) => Matrices::Pointers(a.cast(), b.cast(), c.cast()),
				Matrices::Strided((a, sa), (b, sb), (c, sc)) => Matrices::Strided((a.cast(), sa), (b.cast(), sb), (c.cast(), sc)),
			},
			batch_count: self.batch_count,
		}
	}
}

/// the arguments of one rank-k update (SYRK of a real type, HERK of a complex one), as cuBLAS
/// takes them (64-bit dimensions)
pub(crate) struct RankKArgs<T: Element> {
	pub uplo: i32,
	pub trans: i32,
	/// `n`, `k`
	pub shape: (i64, i64),
	pub alpha: *const T::Real,
	pub a: (*const T, i64),
	pub beta: *const T::Real,
	pub c: (*mut T, i64),
}

/// an element type the interposer emulates, and the C ABI's routines of it
pub(crate) trait Element: Copy {
	const KIND: Kind;
	/// the type of a rank-k update's `alpha` and `beta`
	type Real: Copy;

	/// the product of `args` through the C ABI
	///
	/// # Safety
	/// the pointers are as cuBLAS requires them
	unsafe fn gemm(
		args: &Args<Self>,
		ops: (EmugemmOperation, EmugemmOperation),
		on: (EmugemmPointerMode, *mut c_void),
		precision: EmugemmPrecision,
	) -> EmugemmStatus;

	/// the rank-k update of `args` through the C ABI
	///
	/// # Safety
	/// the pointers are as cuBLAS requires them
	unsafe fn rank_k(
		args: &RankKArgs<Self>,
		options: (EmugemmFillMode, EmugemmOperation),
		on: (EmugemmPointerMode, *mut c_void),
		precision: EmugemmPrecision,
	) -> EmugemmStatus;

	/// the batch of `args` through the C ABI
	///
	/// # Safety
	/// the pointers are as cuBLAS requires them
	unsafe fn gemm_batched(
		args: &BatchedArgs<Self>,
		ops: (EmugemmOperation, EmugemmOperation),
		on: (EmugemmPointerMode, *mut c_void),
		precision: EmugemmPrecision,
	) -> EmugemmStatus;
}

/// implements [`Element`] for `$t` (whose real part is `$real`) through `$gemm`, `$rank_k`, and
/// `$batched` and `$strided` for the pointer-array and strided batches
macro_rules! element {
	($t:ty, $real:ty, $kind:ident, $gemm:ident, $rank_k:ident, $batched:ident, $strided:ident) => {
		impl Element for $t {
			const KIND: Kind = Kind::$kind;
			type Real = $real;

			unsafe fn gemm(
				args: &Args<Self>,
				(opa, opb): (EmugemmOperation, EmugemmOperation),
				(mode, stream): (EmugemmPointerMode, *mut c_void),
				precision: EmugemmPrecision,
			) -> EmugemmStatus {
				let (m, n, k) = args.shape;
				// SAFETY: the caller's promise, handed on
				unsafe {
					emugemm_c::$gemm(
						opa, opb, m, n, k, args.alpha, args.a.0, args.a.1, args.b.0, args.b.1, args.beta, args.c.0, args.c.1, mode, stream,
						precision,
					)
				}
			}

			unsafe fn rank_k(
				args: &RankKArgs<Self>,
				(uplo, trans): (EmugemmFillMode, EmugemmOperation),
				(mode, stream): (EmugemmPointerMode, *mut c_void),
				precision: EmugemmPrecision,
			) -> EmugemmStatus {
				let (n, k) = args.shape;
				// SAFETY: the caller's promise, handed on
				unsafe {
					emugemm_c::$rank_k(
						uplo, trans, n, k, args.alpha, args.a.0, args.a.1, args.beta, args.c.0, args.c.1, mode, stream, precision,
					)
				}
			}

			unsafe fn gemm_batched(
				args: &BatchedArgs<Self>,
				(opa, opb): (EmugemmOperation, EmugemmOperation),
				(mode, stream): (EmugemmPointerMode, *mut c_void),
				precision: EmugemmPrecision,
			) -> EmugemmStatus {
				let ((m, n, k), (lda, ldb, ldc), count) = (args.shape, args.lds, args.batch_count);
				let (alpha, beta) = (args.alpha, args.beta);
				// SAFETY: the caller's promise, handed on
				unsafe {
					match args.matrices {
						Matrices::Pointers(a, b, c) => emugemm_c::$batched(
							opa, opb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, count, mode, stream, precision,
						),
						Matrices::Strided((a, sa), (b, sb), (c, sc)) => emugemm_c::$strided(
							opa, opb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count, mode, stream, precision,
						),
					}
				}
			}
		}
	};
}

element!(
	f64,
	f64,
	D,
	emugemm_dgemm,
	emugemm_dsyrk,
	emugemm_dgemm_batched,
	emugemm_dgemm_strided_batched
);
element!(
	EmugemmComplex64,
	f64,
	Z,
	emugemm_zgemm,
	emugemm_zherk,
	emugemm_zgemm_batched,
	emugemm_zgemm_strided_batched
);
element!(
	f32,
	f32,
	S,
	emugemm_sgemm,
	emugemm_ssyrk,
	emugemm_sgemm_batched,
	emugemm_sgemm_strided_batched
);
element!(
	EmugemmComplex32,
	f32,
	C,
	emugemm_cgemm,
	emugemm_cherk,
	emugemm_cgemm_batched,
	emugemm_cgemm_strided_batched
);

/// one intercepted call of an element type the interposer emulates: what the log says of it,
/// and its computation through the C ABI
pub(crate) trait Call {
	const KIND: Kind;
	/// the C ABI's values of the call's enumerations (ops, fill mode)
	type Options;

	/// `m`, `n`, `k` of the product (a rank-k update's is `n x n x k`), as the log writes them
	/// and `EMUGEMM_HOOK_MIN` bounds them
	fn shape(&self) -> (i64, i64, i64);

	/// cuBLAS's ops of the product's operands, as the log writes them
	fn ops(&self) -> (i32, i32);

	/// cuBLAS's fill mode, for a rank-k update
	fn uplo(&self) -> Option<i32> {
		None
	}

	/// the number of products, for a batch
	fn batch(&self) -> Option<i64> {
		None
	}

	/// the C ABI's values of the call's enumerations, or why the call is forwarded
	fn options(&self) -> Result<Self::Options, &'static str>;

	/// the call through the C ABI
	///
	/// # Safety
	/// the pointers are as cuBLAS requires them
	unsafe fn emulate(&self, options: Self::Options, on: (EmugemmPointerMode, *mut c_void), precision: EmugemmPrecision) -> EmugemmStatus;
}

impl<T: Element> Call for Args<T> {
	const KIND: Kind = T::KIND;
	type Options = (EmugemmOperation, EmugemmOperation);

	fn shape(&self) -> (i64, i64, i64) {
		self.shape
	}

	fn ops(&self) -> (i32, i32) {
		self.ops
	}

	fn options(&self) -> Result<Self::Options, &'static str> {
		ops(self.ops)
	}

	unsafe fn emulate(&self, ops: Self::Options, on: (EmugemmPointerMode, *mut c_void), precision: EmugemmPrecision) -> EmugemmStatus {
		// SAFETY: the caller's promise, handed on
		unsafe { T::gemm(self, ops, on, precision) }
	}
}

impl<T: Element> Call for BatchedArgs<T> {
	const KIND: Kind = T::KIND;
	type Options = (EmugemmOperation, EmugemmOperation);

	fn shape(&self) -> (i64, i64, i64) {
		self.shape
	}

	fn ops(&self) -> (i32, i32) {
		self.ops
	}

	fn batch(&self) -> Option<i64> {
		Some(self.batch_count)
	}

	fn options(&self) -> Result<Self::Options, &'static str> {
		ops(self.ops)
	}

	unsafe fn emulate(&self, ops: Self::Options, on: (EmugemmPointerMode, *mut c_void), precision: EmugemmPrecision) -> EmugemmStatus {
		// SAFETY: the caller's promise, handed on
		unsafe { T::gemm_batched(self, ops, on, precision) }
	}
}

impl<T: Element> Call for RankKArgs<T> {
	const KIND: Kind = T::KIND;
	type Options = (EmugemmFillMode, EmugemmOperation);

	fn shape(&self) -> (i64, i64, i64) {
		(self.shape.0, self.shape.0, self.shape.1)
	}

	/// `op(A)`, then the op that makes `op(A)`'s adjoint of `A` (N, T or C)
	fn ops(&self) -> (i32, i32) {
		let adjoint = if T::KIND.complex() { 2 } else { 1 };
		(self.trans, if self.trans == 0 { adjoint } else { 0 })
	}

	fn uplo(&self) -> Option<i32> {
		Some(self.uplo)
	}

	fn options(&self) -> Result<Self::Options, &'static str> {
		let uplo = match self.uplo {
			0 => EmugemmFillMode::Lower,
			1 => EmugemmFillMode::Upper,
			_ => return Err("a fill mode a rank-k update does not take"),
		};
		// HERK reads A as stored or conjugate-transposed, SYRK as stored or transposed; a SYRK's
		// trans = C is left to cuBLAS, whose status for it is its own
		match (op(self.trans), T::KIND.complex()) {
			(Some(EmugemmOperation::N), _) => Ok((uplo, EmugemmOperation::N)),
			(Some(EmugemmOperation::C), true) => Ok((uplo, EmugemmOperation::C)),
			(Some(EmugemmOperation::T), false) => Ok((uplo, EmugemmOperation::T)),
			_ => Err("a trans this rank-k update is not emulated with"),
		}
	}

	unsafe fn emulate(&self, options: Self::Options, on: (EmugemmPointerMode, *mut c_void), precision: EmugemmPrecision) -> EmugemmStatus {
		// SAFETY: the caller's promise, handed on
		unsafe { T::rank_k(self, options, on, precision) }
	}
}

/// the C ABI's ops of a product's two `cublasOperation_t`, or why the call is forwarded
fn ops((a, b): (i32, i32)) -> Result<(EmugemmOperation, EmugemmOperation), &'static str> {
	match (op(a), op(b)) {
		(Some(opa), Some(opb)) => Ok((opa, opb)),
		_ => Err("an op the C ABI does not take"),
	}
}

/// the C ABI's op of cuBLAS's `cublasOperation_t`: N, T and C; a conjugate without transpose
/// (`CUBLAS_OP_CONJG`) has none
fn op(raw: i32) -> Option<EmugemmOperation> {
	match raw {
		0 => Some(EmugemmOperation::N),
		1 => Some(EmugemmOperation::T),
		2 => Some(EmugemmOperation::C),
		_ => None,
	}
}

/// whether work enqueued on `stream` now would be captured into a graph (or the driver cannot
/// say)
fn capturing(stream: *mut c_void) -> bool {
	let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
	// SAFETY: the handle's live stream, and a writable local
	let asked = unsafe { sys::cuStreamIsCapturing(stream as sys::CUstream, &mut status) };
	asked != sys::CUresult::CUDA_SUCCESS || status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// `routine` forwarded by `forward` because its data or compute types are none the interposer
/// emulates, and logged so
pub(crate) fn unemulated(
	routine: &'static str,
	(shape, ops, batch): ((i64, i64, i64), (i32, i32), Option<i64>),
	forward: impl FnOnce() -> Option<Status>,
) -> Status {
	let start = Instant::now();
	let status = forward().unwrap_or(NOT_INITIALIZED);
	log::write(&Entry {
		routine,
		kind: None,
		shape,
		ops,
		uplo: None,
		batch,
		action: "forwarded",
		precision: "off".into(),
		report: None,
		reason: "data or compute types it does not emulate".into(),
		micros: start.elapsed().as_secs_f64() * 1e6,
	});
	status
}

/// `routine` on `call`'s arguments: emulated, or forwarded by `forward` (the real function on
/// the call's own arguments; `None` where no libcublas defines it)
///
/// # Safety
/// the arguments are as cuBLAS requires them for `routine`
pub(crate) unsafe fn intercept<C: Call>(
	routine: &'static str,
	handle: Handle,
	call: C,
	forward: impl FnOnce() -> Option<Status>,
) -> Status {
	let start = Instant::now();
	let config = Config::get();
	let precision = config.precision(C::KIND);
	let entry = |action, reason: &str, report| Entry {
		routine,
		kind: Some(C::KIND),
		shape: call.shape(),
		ops: call.ops(),
		uplo: call.uplo(),
		batch: call.batch(),
		action,
		precision: precision.map_or("off".into(), |p| p.to_string()),
		report,
		reason: reason.to_string(),
		micros: start.elapsed().as_secs_f64() * 1e6,
	};
	let forwarded = |reason: &str| {
		let status = forward().unwrap_or(NOT_INITIALIZED);
		log::write(&entry("forwarded", reason, None));
		status
	};
	let Some(precision) = precision else {
		return forwarded("off for this type");
	};
	if call.batch().is_some() && !config.batched {
		return forwarded("batched calls off (EMUGEMM_HOOK_BATCHED)");
	}
	if call.uplo().is_some() && !config.rank_k {
		return forwarded("rank-k updates off (EMUGEMM_HOOK_RANK_K)");
	}
	let (m, n, k) = call.shape();
	if m.min(n).min(k) < config.min_size {
		return forwarded("below EMUGEMM_HOOK_MIN");
	}
	// cuBLAS's own status: success for an empty batch, its refusal of a negative count
	if call.batch().is_some_and(|count| count < 1) {
		return forwarded("no product in the batch");
	}
	let options = match call.options() {
		Ok(options) => options,
		Err(reason) => return forwarded(reason),
	};
	let Some((stream, mode)) = real::handle_state(handle) else {
		return forwarded("the handle's stream and pointer mode could not be read");
	};
	if capturing(stream) {
		return forwarded("stream capture");
	}
	let mode = if mode == 0 {
		EmugemmPointerMode::Host
	} else {
		EmugemmPointerMode::Device
	};
	// SAFETY: the caller's promise, handed on
	let status = unsafe { call.emulate(options, (mode, stream), precision.into()) };
	// SAFETY: the library's own NUL-terminated message
	let message = || {
		unsafe { CStr::from_ptr(emugemm_c::emugemm_last_error()) }
			.to_string_lossy()
			.into_owned()
	};
	match status {
		EmugemmStatus::Success => {
			let mut report = emugemm_c::EmugemmReport::default();
			// SAFETY: a writable report
			let _ = unsafe { emugemm_c::emugemm_last_report(&mut report) };
			log::write(&entry("emugemm", "", Some(report)));
			SUCCESS
		},
		// refused before anything was written: cuBLAS computes it
		EmugemmStatus::InvalidValue | EmugemmStatus::NotAvailable => forwarded(&message()),
		// possibly after `C` was scaled by beta: computing it again would scale it twice
		EmugemmStatus::OutOfMemory | EmugemmStatus::GpuError | EmugemmStatus::Internal => {
			let message = message();
			eprintln!("emugemm-cublas: {routine}: {message}");
			log::write(&entry("failed", &message, None));
			if status == EmugemmStatus::OutOfMemory {
				3
			} else {
				EXECUTION_FAILED
			}
		},
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	/// a rank-k update of `T` with these enumerations, on null pointers
	fn update<T: Element>(uplo: i32, trans: i32) -> RankKArgs<T> {
		RankKArgs {
			uplo,
			trans,
			shape: (300, 280),
			alpha: std::ptr::null(),
			a: (std::ptr::null(), 300),
			beta: std::ptr::null(),
			c: (std::ptr::null_mut(), 300),
		}
	}

	#[test]
	fn rank_k_updates_take_what_the_c_abi_takes() {
		use EmugemmFillMode::{Lower, Upper};
		use EmugemmOperation::{C, N, T};
		assert_eq!(update::<f64>(0, 0).options(), Ok((Lower, N)));
		assert_eq!(update::<f32>(1, 1).options(), Ok((Upper, T)));
		assert_eq!(update::<EmugemmComplex64>(1, 2).options(), Ok((Upper, C)));
		// forwarded: cuBLAS's HERK refuses trans = T; a SYRK's trans = C, the fill mode FULL,
		// CUBLAS_OP_CONJG
		assert!(update::<EmugemmComplex32>(0, 1).options().is_err());
		assert!(update::<f64>(1, 2).options().is_err());
		assert!(update::<f64>(2, 0).options().is_err());
		assert!(update::<f64>(0, 3).options().is_err());
	}

	#[test]
	fn a_batch_takes_the_ops_the_c_abi_takes_and_counts_its_products() {
		let batch = |ops| BatchedArgs::<c_void> {
			ops,
			shape: (300, 290, 280),
			alpha: std::ptr::null(),
			beta: std::ptr::null(),
			lds: (300, 280, 300),
			matrices: Matrices::Strided((std::ptr::null(), 0), (std::ptr::null(), 0), (std::ptr::null_mut(), 0)),
			batch_count: 3,
		};
		let typed = batch((1, 2)).typed::<EmugemmComplex32>();
		assert_eq!(typed.options(), Ok((EmugemmOperation::T, EmugemmOperation::C)));
		assert_eq!((typed.shape(), typed.ops(), typed.batch()), ((300, 290, 280), (1, 2), Some(3)));
		// CUBLAS_OP_CONJG: forwarded
		assert!(batch((3, 0)).typed::<f64>().options().is_err());
	}

	#[test]
	fn a_rank_k_update_is_logged_as_its_product() {
		assert_eq!(update::<f64>(0, 0).shape(), (300, 300, 280));
		assert_eq!(update::<f64>(0, 0).ops(), (0, 1));
		assert_eq!(update::<EmugemmComplex64>(1, 0).ops(), (0, 2));
		assert_eq!(update::<EmugemmComplex64>(1, 2).ops(), (2, 0));
		assert_eq!(update::<f32>(1, 1).uplo(), Some(1));
	}
}
