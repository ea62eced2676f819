//! the exported cuBLAS symbols: the S/D/C/Z GEMMs (`_v2` and `_64`), `cublasGemmEx` (and `_64`),
//! and the rank-k updates `cublas{S,D}syrk` and `cublas{C,Z}herk` (`_v2` and `_64`), each with
//! cuBLAS's own signature, emulated or forwarded by [`crate::call::intercept`]

use crate::call::{self, Args, Element, RankKArgs, intercept};
use crate::real::{self, Handle, Status};
use emugemm_c::{EmugemmComplex32, EmugemmComplex64};
use std::ffi::c_void;

/// defines the exported `$name`, cuBLAS's GEMM of `$t` with dimensions of type `$int`
macro_rules! gemm_symbol {
	($name:ident, $t:ty, $int:ty) => {
		#[doc = concat!("cuBLAS's `", stringify!($name), "`: emulated by emugemm or forwarded to the real library")]
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
		pub unsafe extern "C" fn $name(
			handle: Handle,
			transa: i32,
			transb: i32,
			m: $int,
			n: $int,
			k: $int,
			alpha: *const $t,
			a: *const $t,
			lda: $int,
			b: *const $t,
			ldb: $int,
			beta: *const $t,
			c: *mut $t,
			ldc: $int,
		) -> Status {
			type Real = unsafe extern "C" fn(
				Handle,
				i32,
				i32,
				$int,
				$int,
				$int,
				*const $t,
				*const $t,
				$int,
				*const $t,
				$int,
				*const $t,
				*mut $t,
				$int,
			) -> Status;
			let forward = || {
				// SAFETY: cuBLAS's signature of this symbol, called with the caller's own arguments
				unsafe {
					real::function::<Real>(concat_cstr!($name))
						.map(|f| f(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
				}
			};
			let args = Args {
				ops: (transa, transb),
				shape: (m as i64, n as i64, k as i64),
				alpha,
				a: (a, lda as i64),
				b: (b, ldb as i64),
				beta,
				c: (c, ldc as i64),
			};
			// SAFETY: the caller's promise, handed on
			unsafe { intercept(stringify!($name), handle, args, forward) }
		}
	};
}

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

gemm_symbol!(cublasSgemm_v2, f32, i32);
gemm_symbol!(cublasDgemm_v2, f64, i32);
gemm_symbol!(cublasCgemm_v2, EmugemmComplex32, i32);
gemm_symbol!(cublasZgemm_v2, EmugemmComplex64, i32);
gemm_symbol!(cublasSgemm_v2_64, f32, i64);
gemm_symbol!(cublasDgemm_v2_64, f64, i64);
gemm_symbol!(cublasCgemm_v2_64, EmugemmComplex32, i64);
gemm_symbol!(cublasZgemm_v2_64, EmugemmComplex64, i64);

/// defines the exported `$name`, cuBLAS's rank-k update of `$t` (SYRK of a real type, HERK of a
/// complex one; `alpha` and `beta` of type `$real`) with dimensions of type `$int`
macro_rules! rank_k_symbol {
	($name:ident, $t:ty, $real:ty, $int:ty) => {
		#[doc = concat!("cuBLAS's `", stringify!($name), "`: emulated by emugemm or forwarded to the real library")]
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
		pub unsafe extern "C" fn $name(
			handle: Handle,
			uplo: i32,
			trans: i32,
			n: $int,
			k: $int,
			alpha: *const $real,
			a: *const $t,
			lda: $int,
			beta: *const $real,
			c: *mut $t,
			ldc: $int,
		) -> Status {
			type Real =
				unsafe extern "C" fn(Handle, i32, i32, $int, $int, *const $real, *const $t, $int, *const $real, *mut $t, $int) -> Status;
			let forward = || {
				// SAFETY: cuBLAS's signature of this symbol, called with the caller's own arguments
				unsafe { real::function::<Real>(concat_cstr!($name)).map(|f| f(handle, uplo, trans, n, k, alpha, a, lda, beta, c, ldc)) }
			};
			let args = RankKArgs::<$t> {
				uplo,
				trans,
				shape: (n as i64, k as i64),
				alpha,
				a: (a, lda as i64),
				beta,
				c: (c, ldc as i64),
			};
			// SAFETY: the caller's promise, handed on
			unsafe { intercept(stringify!($name), handle, args, forward) }
		}
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

/// `cublasGemmEx`'s arguments after the handle, with dimensions of type `I`
type ExArgs<I> = (
	i32,
	i32,
	(I, I, I),
	*const c_void,
	(*const c_void, i32, I),
	(*const c_void, i32, I),
	*const c_void,
	(*mut c_void, i32, I),
	(i32, i32),
);

/// `cublasGemmEx` (and `_64`) emulated where the three types are one of R/C 32F/64F and the
/// compute type is that type's plain or pedantic one; otherwise `forward`
///
/// # Safety
/// as cuBLAS's `cublasGemmEx`
unsafe fn gemm_ex<I: Into<i64> + Copy>(
	routine: &'static str,
	handle: Handle,
	x: ExArgs<I>,
	forward: impl FnOnce() -> Option<Status>,
) -> Status {
	let (_, _, _, _, (_, at, _), (_, bt, _), _, (_, ct, _), (compute, _)) = x;
	/// the typed call of `T`
	///
	/// # Safety
	/// as `gemm_ex`, with `T` the element type of every pointer
	unsafe fn typed<T: Element, I: Into<i64> + Copy>(
		routine: &'static str,
		handle: Handle,
		x: ExArgs<I>,
		forward: impl FnOnce() -> Option<Status>,
	) -> Status {
		let (transa, transb, (m, n, k), alpha, (a, _, lda), (b, _, ldb), beta, (c, _, ldc), _) = x;
		let args = Args {
			ops: (transa, transb),
			shape: (m.into(), n.into(), k.into()),
			alpha: alpha.cast::<T>(),
			a: (a.cast::<T>(), lda.into()),
			b: (b.cast::<T>(), ldb.into()),
			beta: beta.cast::<T>(),
			c: (c.cast::<T>(), ldc.into()),
		};
		// SAFETY: the caller's promise, handed on
		unsafe { intercept(routine, handle, args, forward) }
	}
	let same = at == bt && bt == ct;
	// SAFETY: the caller's promise, handed on with the element type its data types name
	unsafe {
		match at {
			R_64F if same && COMPUTE_64F.contains(&compute) => typed::<f64, I>(routine, handle, x, forward),
			C_64F if same && COMPUTE_64F.contains(&compute) => typed::<EmugemmComplex64, I>(routine, handle, x, forward),
			R_32F if same && COMPUTE_32F.contains(&compute) => typed::<f32, I>(routine, handle, x, forward),
			C_32F if same && COMPUTE_32F.contains(&compute) => typed::<EmugemmComplex32, I>(routine, handle, x, forward),
			_ => {
				let (transa, transb, (m, n, k), ..) = x;
				call::unemulated(routine, ((m.into(), n.into(), k.into()), (transa, transb)), forward)
			},
		}
	}
}

/// defines the exported `$name`, cuBLAS's `cublasGemmEx` with dimensions of type `$int`
macro_rules! gemm_ex_symbol {
	($name:ident, $int:ty) => {
		#[doc = concat!("cuBLAS's `", stringify!($name), "`: emulated by emugemm for R/C 32F/64F, otherwise forwarded to the real library")]
		///
		/// # Safety
		/// as cuBLAS's own function
		///
		/// # example
		/// ```no_run
		#[doc = concat!("let _ = emugemm_cublas::", stringify!($name), ";")]
		/// ```
		#[unsafe(no_mangle)]
		#[allow(clippy::too_many_arguments)] // cuBLAS's own argument list
		pub unsafe extern "C" fn $name(
			handle: Handle,
			transa: i32,
			transb: i32,
			m: $int,
			n: $int,
			k: $int,
			alpha: *const c_void,
			a: *const c_void,
			a_type: i32,
			lda: $int,
			b: *const c_void,
			b_type: i32,
			ldb: $int,
			beta: *const c_void,
			c: *mut c_void,
			c_type: i32,
			ldc: $int,
			compute: i32,
			algo: i32,
		) -> Status {
			type Real = unsafe extern "C" fn(
				Handle,
				i32,
				i32,
				$int,
				$int,
				$int,
				*const c_void,
				*const c_void,
				i32,
				$int,
				*const c_void,
				i32,
				$int,
				*const c_void,
				*mut c_void,
				i32,
				$int,
				i32,
				i32,
			) -> Status;
			let forward = || {
				// SAFETY: cuBLAS's signature of this symbol, called with the caller's own arguments
				unsafe {
					real::function::<Real>(concat_cstr!($name)).map(|f| {
						f(
							handle, transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, compute, algo,
						)
					})
				}
			};
			let x = (
				transa,
				transb,
				(m, n, k),
				alpha,
				(a, a_type, lda),
				(b, b_type, ldb),
				beta,
				(c, c_type, ldc),
				(compute, algo),
			);
			// SAFETY: the caller's promise, handed on
			unsafe { gemm_ex(stringify!($name), handle, x, forward) }
		}
	};
}

gemm_ex_symbol!(cublasGemmEx, i32);
gemm_ex_symbol!(cublasGemmEx_64, i64);
