//! calls that break cuBLAS's contract, each with words of the message that says why: every one is
//! refused with `InvalidValue` before anything is read or written, with a GPU or without one
//! (tests/arguments.rs runs them without, tests/gpu_contract.rs on a GPU's memory and stream)

use super::{C, F64, FULL, HOST, LOWER, N, T, precision};
use emugemm_c::*;
use std::ffi::c_void;

/// where the calls' matrices lie: addresses aligned to every element type, each holding at least
/// 64 complex doubles (never read: any aligned addresses do without a GPU), and the stream
pub struct Places {
	/// `A`, or a pointer array's `A[i]`
	pub a: u64,
	/// `B`
	pub b: u64,
	/// `C`
	pub c: u64,
	/// the stream (null: the legacy default stream)
	pub stream: *mut c_void,
}

impl Places {
	/// aligned addresses of no memory, and the legacy default stream: for calls without a GPU
	pub fn nowhere() -> Places {
		Places {
			a: 0x7f00_0000_0000,
			b: 0x7f00_0001_0000,
			c: 0x7f00_0002_0000,
			stream: std::ptr::null_mut(),
		}
	}
}

/// `alpha` and `beta` of the calls: host memory that outlives them
static ONE: f64 = 1.0;
static ZERO: f64 = 0.0;
static ONE_F32: f32 = 1.0;
static Z_ALPHA: EmugemmComplex64 = EmugemmComplex64 { re: 1.0, im: 0.5 };
static Z_BETA: EmugemmComplex64 = EmugemmComplex64 { re: 0.0, im: 0.0 };

/// a refused call and words of its message
type Case<T> = (&'static str, Call<T>);

/// a call of `routine` at `at`'s stream, host scalars, at FP64 accuracy
fn call<T: Element>(routine: Routine<T>, at: &Places) -> Call<T> {
	Call {
		routine,
		pointer_mode: HOST,
		stream: at.stream,
		precision: F64,
	}
}

/// `call` at `precision`
fn at_precision<T: Element>(call: Call<T>, kind: EmugemmPrecisionKind, parameter: u32) -> Call<T> {
	Call {
		precision: precision(kind, parameter),
		..call
	}
}

/// bad calls of a 4 x 4 x 4 `dgemm`: every enumeration, dimension, leading dimension, scalar,
/// pointer and precision the contract refuses (the operands' pointers among them: `alpha = 1` is
/// read from the host, so that a call that would read a null `A` is refused as the contract says,
/// whether or not a GPU is there)
fn gemms(at: &Places) -> Vec<Case<f64>> {
	use EmugemmPrecisionKind::{Bits, SchemeI, SchemeII};
	let gemm = Gemm {
		ops: (N, N),
		shape: (4, 4, 4),
		alpha: &ONE,
		a: (at.a as *const f64, 4),
		b: (at.b as *const f64, 4),
		beta: &ZERO,
		c: (at.c as *mut f64, 4),
	};
	let base = call(Routine::Gemm(gemm), at);
	let g = |g: Gemm<f64>| call(Routine::Gemm(g), at);
	let kind = |kind| Call {
		precision: EmugemmPrecision { kind, parameter: 0 },
		..base
	};
	vec![
		("transa = 3 (CUBLAS_OP_CONJG)", g(Gemm { ops: (3, N), ..gemm })),
		("transb = -1: not an operation", g(Gemm { ops: (N, -1), ..gemm })),
		(
			"transa = 2147483647: not an operation",
			g(Gemm {
				ops: (i32::MAX, N),
				..gemm
			}),
		),
		("pointer mode = 2: not 0 (host) or 1 (device)", Call { pointer_mode: 2, ..base }),
		("pointer mode = -1", Call { pointer_mode: -1, ..base }),
		("precision kind = 6: not one of", kind(6)),
		("precision kind = -2147483648", kind(i32::MIN)),
		("scheme II takes 2..=20 moduli", at_precision(base, SchemeII, 99)),
		("scheme I takes 1..=8 slices", at_precision(base, SchemeI, 0)),
		("at most 52 bits", at_precision(base, Bits, 53)),
		("m = -1 is negative", g(Gemm { shape: (-1, 4, 4), ..gemm })),
		(
			"k = -9223372036854775808 is negative",
			g(Gemm {
				shape: (4, 4, i64::MIN),
				..gemm
			}),
		),
		(
			"lda = 3: the leading dimension is below max(1, 4), the rows stored",
			g(Gemm { a: (gemm.a.0, 3), ..gemm }),
		),
		// B read transposed is stored n x k
		(
			"ldb = 4: the leading dimension is below max(1, 6)",
			g(Gemm {
				ops: (N, T),
				shape: (4, 6, 4),
				..gemm
			}),
		),
		("ldc = -4 is negative", g(Gemm { c: (gemm.c.0, -4), ..gemm })),
		// the leading dimensions are checked before an empty product returns
		(
			"lda = 0: the leading dimension is below max(1, 0)",
			g(Gemm {
				shape: (0, 4, 4),
				a: (gemm.a.0, 0),
				..gemm
			}),
		),
		(
			"alpha and beta must not be null",
			g(Gemm {
				alpha: std::ptr::null(),
				..gemm
			}),
		),
		(
			"alpha and beta must not be null",
			g(Gemm {
				beta: std::ptr::null(),
				..gemm
			}),
		),
		(
			"C is null",
			g(Gemm {
				c: (std::ptr::null_mut(), 4),
				..gemm
			}),
		),
		(
			"is not aligned to the 8 bytes of its element",
			g(Gemm {
				c: ((at.c + 4) as *mut f64, 4),
				..gemm
			}),
		),
		(
			"reaches past the address space",
			g(Gemm {
				c: ((u64::MAX - 7) as *mut f64, 4),
				..gemm
			}),
		),
		(
			"A is null",
			g(Gemm {
				a: (std::ptr::null(), 4),
				..gemm
			}),
		),
		(
			"is not aligned to the 8 bytes of its element",
			g(Gemm {
				b: ((at.b + 2) as *const f64, 4),
				..gemm
			}),
		),
	]
}

/// bad calls of a 4 x 4 HERK of complex doubles (`k = 4`)
fn herks(at: &Places) -> Vec<Case<EmugemmComplex64>> {
	let herk = RankK {
		uplo: LOWER,
		trans: N,
		shape: (4, 4),
		alpha: &ONE,
		a: (at.a as *const EmugemmComplex64, 4),
		beta: &ZERO,
		c: (at.c as *mut EmugemmComplex64, 4),
	};
	let h = |r: RankK<EmugemmComplex64>| call(Routine::RankK(r), at);
	vec![
		("uplo = FULL", h(RankK { uplo: FULL, ..herk })),
		("uplo = 7: not a fill mode", h(RankK { uplo: 7, ..herk })),
		("trans = T: a Hermitian rank-k update takes N or C", h(RankK { trans: T, ..herk })),
		("trans = 3 (CUBLAS_OP_CONJG)", h(RankK { trans: 3, ..herk })),
		// A read conjugate-transposed is stored k x n
		(
			"lda = 4: the leading dimension is below max(1, 6)",
			h(RankK {
				trans: C,
				shape: (4, 6),
				..herk
			}),
		),
		(
			"is not aligned to the 16 bytes of its element",
			h(RankK {
				c: ((at.c + 8) as *mut _, 4),
				..herk
			}),
		),
		("at most 52 bits", at_precision(h(herk), EmugemmPrecisionKind::Bits, 53)),
		(
			"A is null",
			h(RankK {
				a: (std::ptr::null(), 4),
				..herk
			}),
		),
	]
}

/// bad calls of a 4 x 4 SYRK of floats (`k = 4`, `A` read transposed)
fn syrks(at: &Places) -> Vec<Case<f32>> {
	let syrk = RankK {
		uplo: LOWER,
		trans: C,
		shape: (4, 4),
		alpha: &ONE_F32,
		a: (at.a as *const f32, 4),
		beta: &ONE_F32,
		c: (at.c as *mut f32, 4),
	};
	let s = |r: RankK<f32>| call(Routine::RankK(r), at);
	vec![
		("at most 23 bits for f32", at_precision(s(syrk), EmugemmPrecisionKind::Bits, 24)),
		(
			"ldc = 3: the leading dimension is below max(1, 4)",
			s(RankK { c: (syrk.c.0, 3), ..syrk }),
		),
		("uplo = -1: not a fill mode", s(RankK { uplo: -1, ..syrk })),
	]
}

/// bad calls of a pointer-array batch of two 4 x 4 x 4 `dgemm`s, `B` read transposed (the
/// arrays at `A`, `B` and `C`)
fn pointer_batches(at: &Places) -> Vec<Case<f64>> {
	let batch = Batch {
		ops: (N, T),
		shape: (4, 4, 4),
		alpha: &ONE,
		beta: &ZERO,
		lds: (4, 4, 4),
		matrices: Matrices::Pointers(at.a as *const *const f64, at.b as *const *const f64, at.c as *const *mut f64),
		count: 2,
	};
	let b = |b: Batch<f64>| call(Routine::Batch(b), at);
	let arrays = |a: u64, c: u64| Matrices::Pointers(a as *const *const f64, at.b as *const *const f64, c as *const *mut f64);
	vec![
		("batch_count = -1 is negative", b(Batch { count: -1, ..batch })),
		(
			"m = -1 is negative",
			b(Batch {
				shape: (-1, 4, 4),
				..batch
			}),
		),
		// B read transposed is stored n x k
		(
			"ldb = 4: the leading dimension is below max(1, 6)",
			b(Batch { shape: (4, 6, 4), ..batch }),
		),
		// the leading dimensions are checked before an empty batch returns, as cuBLAS checks them
		(
			"lda = 3: the leading dimension is below max(1, 4)",
			b(Batch {
				lds: (3, 4, 4),
				count: 0,
				..batch
			}),
		),
		(
			"the array of C is null",
			b(Batch {
				matrices: arrays(at.a, 0),
				..batch
			}),
		),
		(
			"the array of C at",
			b(Batch {
				matrices: arrays(at.a, at.c + 4),
				..batch
			}),
		),
		("reaches past the address space", b(Batch { count: i64::MAX, ..batch })),
		(
			"the array of A is null",
			b(Batch {
				matrices: arrays(0, at.c),
				..batch
			}),
		),
	]
}

/// bad calls of a strided batch of two 4 x 4 x 4 `zgemm`s, `A` read conjugate-transposed
fn strided_batches(at: &Places) -> Vec<Case<EmugemmComplex64>> {
	let (a, b, c) = (
		at.a as *const EmugemmComplex64,
		at.b as *const EmugemmComplex64,
		at.c as *mut EmugemmComplex64,
	);
	let batch = Batch {
		ops: (C, N),
		shape: (4, 4, 4),
		alpha: &Z_ALPHA,
		beta: &Z_BETA,
		lds: (4, 4, 4),
		matrices: Matrices::Strided((a, 16), (b, 16), (c, 16)),
		count: 2,
	};
	let z = |b: Batch<EmugemmComplex64>| call(Routine::Batch(b), at);
	vec![
		// A read conjugate-transposed is stored k x m
		(
			"lda = 4: the leading dimension is below max(1, 6)",
			z(Batch {
				shape: (4, 4, 6),
				lds: (4, 6, 4),
				..batch
			}),
		),
		("batch_count = -3 is negative", z(Batch { count: -3, ..batch })),
		// the second product's C lies below address 0
		(
			"C: product 1 lies outside the address space",
			z(Batch {
				matrices: Matrices::Strided((a, 16), (b, 16), (c, i64::MIN)),
				..batch
			}),
		),
		(
			"A: product 1 lies outside the address space",
			z(Batch {
				matrices: Matrices::Strided((a, i64::MIN), (b, 16), (c, 16)),
				..batch
			}),
		),
	]
}

/// asserts that each of `cases` is refused with `InvalidValue` and a message with its words
///
/// # Safety
/// each call is refused before it reads anything: it may point anywhere
unsafe fn assert_refused<T: Element>(what: &str, cases: Vec<Case<T>>) {
	for (words, call) in cases {
		// SAFETY: the caller's promise
		match unsafe { execute(&call) } {
			Outcome::Refused(EmugemmStatus::InvalidValue, message) => assert!(message.contains(words), "{what}: {words}: {message}"),
			other => panic!("{what}: {words}: {other:?}"),
		}
	}
}

/// asserts that every bad call of this module, of its matrices at `at`, is refused with
/// `InvalidValue` and a message that says why, before anything is read or written
pub fn assert_all_refused(at: &Places) {
	// SAFETY: every call breaks the contract before anything is read
	unsafe {
		assert_refused("dgemm", gemms(at));
		assert_refused("zherk", herks(at));
		assert_refused("ssyrk", syrks(at));
		assert_refused("dgemm_batched", pointer_batches(at));
		assert_refused("zgemm_strided_batched", strided_batches(at));
	}
}
