//! the exported cuBLAS symbols: the S/D/C/Z GEMMs (`_v2` and `_64`), their pointer-array and
//! strided batches (`cublas?gemmBatched`, `cublas?gemmStridedBatched`, and `_64`), `cublasGemmEx`,
//! `cublasGemmBatchedEx` and `cublasGemmStridedBatchedEx` (and `_64`), and the rank-k updates
//! `cublas{S,D}syrk` and `cublas{C,Z}herk` (`_v2` and `_64`), each with cuBLAS's own signature,
//! emulated or forwarded by [`crate::call::intercept`]. Each builds the C ABI's [`Call`]'s routine
//! from its arguments as given: the C ABI checks them, in one place for both doors

use crate::call::{self, Summary, intercept};
use crate::real::{self, Handle, INTERNAL_ERROR, Status};
use emugemm_c::{Batch, Element, EmugemmComplex32, EmugemmComplex64, Gemm, Matrices, RankK, Routine};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// the NUL-terminated name of a symbol
macro_rules! concat_cstr {
	($name:ident) => {
		const {
			match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
				Ok(name) => name,
				Err(_) => panic!("a symbol name without NUL"),
			}
		}
	};
}

/// defines the exported `$name` with cuBLAS's arguments `$arg: $ty` after the handle; `$body`
/// computes its status with the handle bound to `$handle` and, bound to `$forward`, the real
/// function of a given libcublas called with the caller's own arguments (`None` where it defines
/// no such symbol). No panic leaves it: one is answered `CUBLAS_STATUS_INTERNAL_ERROR`
macro_rules! export {
	($name:ident, $what:literal, ($($arg:ident: $ty:ty),+ $(,)?), |$handle:ident, $forward:ident| $body:block) => {
		#[doc = concat!("cuBLAS's `", stringify!($name), "`: ", $what)]
		///
		/// # Safety
		/// as cuBLAS's own function
		///
		/// # example
		/// ```no_run
		/// // LD_PRELOAD=libemugemm_cublas.so makes every caller of this symbol call this function
		#[doc = concat!("let _ = emugemm_cublas::", stringify!($name), ";")]
		/// ```
		#[unsafe(no_mangle)]
		#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
		pub unsafe extern "C" fn $name($handle: Handle, $($arg: $ty),+) -> Status {
			type Real = unsafe extern "C" fn(Handle, $($ty),+) -> Status;
			let $forward = |library| {
				// SAFETY: cuBLAS's signature of this symbol, called with the caller's own arguments
				unsafe { real::function::<Real>(library, concat_cstr!($name)).map(|f| f($handle, $($arg),+)) }
			};
			catch_unwind(AssertUnwindSafe(|| $body)).unwrap_or(INTERNAL_ERROR)
		}
	};
}

/// defines the exported `$name`, cuBLAS's GEMM of `$t` with dimensions of type `$int`
macro_rules! gemm_symbol {
	($name:ident, $t:ty, $int:ty) => {
		export!($name, "emulated by emugemm or forwarded to the real library", (
			transa: i32, transb: i32, m: $int, n: $int, k: $int, alpha: *const $t, a: *const $t, lda: $int, b: *const $t, ldb: $int,
			beta: *const $t, c: *mut $t, ldc: $int,
		), |handle, forward| {
			let shape = (m as i64, n as i64, k as i64);
			let gemm = Gemm { ops: (transa, transb), shape, alpha, a: (a, lda as i64), b: (b, ldb as i64), beta, c: (c, ldc as i64) };
			// SAFETY: the caller's promise, handed on
			unsafe { intercept(stringify!($name), handle, Routine::<$t>::Gemm(gemm), forward) }
		});
	};
}

gemm_symbol!(cublasSgemm_v2, f32, i32);
gemm_symbol!(cublasDgemm_v2, f64, i32);
gemm_symbol!(cublasCgemm_v2, EmugemmComplex32, i32);
gemm_symbol!(cublasZgemm_v2, EmugemmComplex64, i32);
gemm_symbol!(cublasSgemm_v2_64, f32, i64);
gemm_symbol!(cublasDgemm_v2_64, f64, i64);
gemm_symbol!(cublasCgemm_v2_64, EmugemmComplex32, i64);
gemm_symbol!(cublasZgemm_v2_64, EmugemmComplex64, i64);

/// defines the exported `$name`, cuBLAS's pointer-array batch of GEMMs of `$t` with dimensions of
/// type `$int`
macro_rules! batched_symbol {
	($name:ident, $t:ty, $int:ty) => {
		export!($name, "emulated by emugemm or forwarded to the real library", (
			transa: i32, transb: i32, m: $int, n: $int, k: $int, alpha: *const $t, a: *const *const $t, lda: $int,
			b: *const *const $t, ldb: $int, beta: *const $t, c: *const *mut $t, ldc: $int, batch_count: $int,
		), |handle, forward| {
			let (shape, lds) = ((m as i64, n as i64, k as i64), (lda as i64, ldb as i64, ldc as i64));
			let matrices = Matrices::Pointers(a, b, c);
			let batch = Batch { ops: (transa, transb), shape, alpha, beta, lds, matrices, count: batch_count as i64 };
			// SAFETY: the caller's promise, handed on
			unsafe { intercept(stringify!($name), handle, Routine::<$t>::Batch(batch), forward) }
		});
	};
}

batched_symbol!(cublasSgemmBatched, f32, i32);
batched_symbol!(cublasDgemmBatched, f64, i32);
batched_symbol!(cublasCgemmBatched, EmugemmComplex32, i32);
batched_symbol!(cublasZgemmBatched, EmugemmComplex64, i32);
batched_symbol!(cublasSgemmBatched_64, f32, i64);
batched_symbol!(cublasDgemmBatched_64, f64, i64);
batched_symbol!(cublasCgemmBatched_64, EmugemmComplex32, i64);
batched_symbol!(cublasZgemmBatched_64, EmugemmComplex64, i64);

/// defines the exported `$name`, cuBLAS's strided batch of GEMMs of `$t` with dimensions of type
/// `$int` (strides `long long`)
macro_rules! strided_symbol {
	($name:ident, $t:ty, $int:ty) => {
		export!($name, "emulated by emugemm or forwarded to the real library", (
			transa: i32, transb: i32, m: $int, n: $int, k: $int, alpha: *const $t, a: *const $t, lda: $int, stride_a: i64,
			b: *const $t, ldb: $int, stride_b: i64, beta: *const $t, c: *mut $t, ldc: $int, stride_c: i64, batch_count: $int,
		), |handle, forward| {
			let (shape, lds) = ((m as i64, n as i64, k as i64), (lda as i64, ldb as i64, ldc as i64));
			let matrices = Matrices::Strided((a, stride_a), (b, stride_b), (c, stride_c));
			let batch = Batch { ops: (transa, transb), shape, alpha, beta, lds, matrices, count: batch_count as i64 };
			// SAFETY: the caller's promise, handed on
			unsafe { intercept(stringify!($name), handle, Routine::<$t>::Batch(batch), forward) }
		});
	};
}

strided_symbol!(cublasSgemmStridedBatched, f32, i32);
strided_symbol!(cublasDgemmStridedBatched, f64, i32);
strided_symbol!(cublasCgemmStridedBatched, EmugemmComplex32, i32);
strided_symbol!(cublasZgemmStridedBatched, EmugemmComplex64, i32);
strided_symbol!(cublasSgemmStridedBatched_64, f32, i64);
strided_symbol!(cublasDgemmStridedBatched_64, f64, i64);
strided_symbol!(cublasCgemmStridedBatched_64, EmugemmComplex32, i64);
strided_symbol!(cublasZgemmStridedBatched_64, EmugemmComplex64, i64);

/// defines the exported `$name`, cuBLAS's rank-k update of `$t` (SYRK of a real type, HERK of a
/// complex one; `alpha` and `beta` of type `$real`) with dimensions of type `$int`
macro_rules! rank_k_symbol {
	($name:ident, $t:ty, $real:ty, $int:ty) => {
		export!($name, "emulated by emugemm or forwarded to the real library", (
			uplo: i32, trans: i32, n: $int, k: $int, alpha: *const $real, a: *const $t, lda: $int, beta: *const $real, c: *mut $t,
			ldc: $int,
		), |handle, forward| {
			let shape = (n as i64, k as i64);
			let update = RankK::<$t> { uplo, trans, shape, alpha, a: (a, lda as i64), beta, c: (c, ldc as i64) };
			// SAFETY: the caller's promise, handed on
			unsafe { intercept(stringify!($name), handle, Routine::RankK(update), forward) }
		});
	};
}

rank_k_symbol!(cublasSsyrk_v2, f32, f32, i32);
rank_k_symbol!(cublasDsyrk_v2, f64, f64, i32);
rank_k_symbol!(cublasCherk_v2, EmugemmComplex32, f32, i32);
rank_k_symbol!(cublasZherk_v2, EmugemmComplex64, f64, i32);
rank_k_symbol!(cublasSsyrk_v2_64, f32, f32, i64);
rank_k_symbol!(cublasDsyrk_v2_64, f64, f64, i64);
rank_k_symbol!(cublasCherk_v2_64, EmugemmComplex32, f32, i64);
rank_k_symbol!(cublasZherk_v2_64, EmugemmComplex64, f64, i64);

/// `cudaDataType` values: real and complex, 32F and 64F
const R_32F: i32 = 0;
const R_64F: i32 = 1;
const C_32F: i32 = 4;
const C_64F: i32 = 5;
/// `cublasComputeType_t` values: 32F and 64F, plain and pedantic
const COMPUTE_32F: [i32; 2] = [68, 69];
const COMPUTE_64F: [i32; 2] = [70, 71];

/// a `cublasGemm*Ex` call's routine, its pointers untyped (`c_void`) until its data types name
/// an element type
trait Untyped: Copy {
	/// the routine with pointers to `T`
	fn typed<T: Element>(self) -> Routine<T>;

	/// the summary of the call, of no type the interposer emulates
	fn summary(self, name: &'static str) -> Summary {
		Summary {
			kind: None,
			..Summary::of(name, &self.typed::<f64>())
		}
	}
}

impl Untyped for Gemm<c_void> {
	fn typed<T: Element>(self) -> Routine<T> {
		Routine::Gemm(Gemm {
			ops: self.ops,
			shape: self.shape,
			alpha: self.alpha.cast(),
			a: (self.a.0.cast(), self.a.1),
			b: (self.b.0.cast(), self.b.1),
			beta: self.beta.cast(),
			c: (self.c.0.cast(), self.c.1),
		})
	}
}

impl Untyped for Batch<c_void> {
	fn typed<T: Element>(self) -> Routine<T> {
		let matrices = match self.matrices {
			Matrices::Pointers(a, b, c) => Matrices::Pointers(a.cast(), b.cast(), c.cast()),
			Matrices::Strided((a, sa), (b, sb), (c, sc)) => Matrices::Strided((a.cast(), sa), (b.cast(), sb), (c.cast(), sc)),
		};
		Routine::Batch(Batch {
			ops: self.ops,
			shape: self.shape,
			alpha: self.alpha.cast(),
			beta: self.beta.cast(),
			lds: self.lds,
			matrices,
			count: self.count,
		})
	}
}

/// a `cublasGemm*Ex` call emulated where the three data types `(a, b, c)` are one of R/C 32F/64F
/// and `compute` is that type's plain or pedantic compute type; otherwise `forward`
///
/// # Safety
/// as cuBLAS's function `name`
unsafe fn gemm_ex<U: Untyped>(
	name: &'static str,
	handle: Handle,
	(routine, (a, b, c), compute): (U, (i32, i32, i32), i32),
	forward: impl FnOnce(Option<crate::libraries::Library>) -> Option<Status>,
) -> Status {
	let same = a == b && b == c;
	// SAFETY: the caller's promise, handed on with the element type its data types name
	unsafe {
		match a {
			R_64F if same && COMPUTE_64F.contains(&compute) => intercept(name, handle, routine.typed::<f64>(), forward),
			C_64F if same && COMPUTE_64F.contains(&compute) => intercept(name, handle, routine.typed::<EmugemmComplex64>(), forward),
			R_32F if same && COMPUTE_32F.contains(&compute) => intercept(name, handle, routine.typed::<f32>(), forward),
			C_32F if same && COMPUTE_32F.contains(&compute) => intercept(name, handle, routine.typed::<EmugemmComplex32>(), forward),
			_ => call::unemulated(routine.summary(name), forward),
		}
	}
}

/// defines the exported `$name`, cuBLAS's `cublasGemmEx` with dimensions of type `$int`
macro_rules! gemm_ex_symbol {
	($name:ident, $int:ty) => {
		export!($name, "emulated by emugemm for R/C 32F/64F, otherwise forwarded to the real library", (
			transa: i32, transb: i32, m: $int, n: $int, k: $int, alpha: *const c_void, a: *const c_void, a_type: i32, lda: $int,
			b: *const c_void, b_type: i32, ldb: $int, beta: *const c_void, c: *mut c_void, c_type: i32, ldc: $int, compute: i32,
			algo: i32,
		), |handle, forward| {
			let shape = (m as i64, n as i64, k as i64);
			let gemm = Gemm { ops: (transa, transb), shape, alpha, a: (a, lda as i64), b: (b, ldb as i64), beta, c: (c, ldc as i64) };
			// SAFETY: the caller's promise, handed on
			unsafe { gemm_ex(stringify!($name), handle, (gemm, (a_type, b_type, c_type), compute), forward) }
		});
	};
}

gemm_ex_symbol!(cublasGemmEx, i32);
gemm_ex_symbol!(cublasGemmEx_64, i64);

/// defines the exported `$name`, cuBLAS's `cublasGemmBatchedEx` with dimensions of type `$int`
macro_rules! batched_ex_symbol {
	($name:ident, $int:ty) => {
		export!($name, "emulated by emugemm for R/C 32F/64F, otherwise forwarded to the real library", (
			transa: i32, transb: i32, m: $int, n: $int, k: $int, alpha: *const c_void, a: *const *const c_void, a_type: i32,
			lda: $int, b: *const *const c_void, b_type: i32, ldb: $int, beta: *const c_void, c: *const *mut c_void, c_type: i32,
			ldc: $int, batch_count: $int, compute: i32, algo: i32,
		), |handle, forward| {
			let (shape, lds) = ((m as i64, n as i64, k as i64), (lda as i64, ldb as i64, ldc as i64));
			let matrices = Matrices::Pointers(a, b, c);
			let batch = Batch { ops: (transa, transb), shape, alpha, beta, lds, matrices, count: batch_count as i64 };
			// SAFETY: the caller's promise, handed on
			unsafe { gemm_ex(stringify!($name), handle, (batch, (a_type, b_type, c_type), compute), forward) }
		});
	};
}

batched_ex_symbol!(cublasGemmBatchedEx, i32);
batched_ex_symbol!(cublasGemmBatchedEx_64, i64);

/// defines the exported `$name`, cuBLAS's `cublasGemmStridedBatchedEx` with dimensions of type
/// `$int` (strides `long long`)
macro_rules! strided_ex_symbol {
	($name:ident, $int:ty) => {
		export!($name, "emulated by emugemm for R/C 32F/64F, otherwise forwarded to the real library", (
			transa: i32, transb: i32, m: $int, n: $int, k: $int, alpha: *const c_void, a: *const c_void, a_type: i32, lda: $int,
			stride_a: i64, b: *const c_void, b_type: i32, ldb: $int, stride_b: i64, beta: *const c_void, c: *mut c_void,
			c_type: i32, ldc: $int, stride_c: i64, batch_count: $int, compute: i32, algo: i32,
		), |handle, forward| {
			let (shape, lds) = ((m as i64, n as i64, k as i64), (lda as i64, ldb as i64, ldc as i64));
			let matrices = Matrices::Strided((a, stride_a), (b, stride_b), (c, stride_c));
			let batch = Batch { ops: (transa, transb), shape, alpha, beta, lds, matrices, count: batch_count as i64 };
			// SAFETY: the caller's promise, handed on
			unsafe { gemm_ex(stringify!($name), handle, (batch, (a_type, b_type, c_type), compute), forward) }
		});
	};
}

strided_ex_symbol!(cublasGemmStridedBatchedEx, i32);
strided_ex_symbol!(cublasGemmStridedBatchedEx_64, i64);
