//! every C entry point (`emugemm_{s,d,c,z}gemm`, their pointer-array and strided batches,
//! `emugemm_{s,d}syrk`, `emugemm_{c,z}herk`) on arguments drawn at the edges of cuBLAS's
//! contract: enumerations in and out of range, dimensions, leading dimensions and counts from -1
//! to `i64::MAX` and `i64::MIN`, strides of any sign, null, misaligned, high and plausible
//! addresses, null scalars, any precision parameter. Each call's status is judged against the
//! status the contract gives (worked out here from the arguments, not by the library's checker):
//! `InvalidValue` for an argument out of range, `Success` for cuBLAS's quick return alone, and,
//! without a GPU, `NotAvailable` for a call that keeps the contract; never `Internal` (a panic
//! inside); a message for every status but `Success`, none for it.
//!
//! On a machine with a GPU the calls keep their statuses, but every matrix address is null or
//! misaligned, so that no call that keeps the rest of the contract reads device memory at a
//! drawn address; a call the contract would run is only asked not to be `Internal` there.

mod common;

use common::{Entries, gpu_present, last_error};
use emugemm_c::*;
use num_complex::Complex;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestRunner;
use std::fmt::Debug;
use std::ptr::{null, null_mut};

/// cases per entry point
const CASES: u32 = 10_000;

/// the integers drawn for an enumeration (`transa`, `uplo`, the pointer mode, the precision's
/// kind): each one's values and the edges around them
const ENUMERATIONS: [i32; 10] = [-1, 0, 1, 2, 3, 4, 5, 6, i32::MIN, i32::MAX];

/// the integers drawn for a dimension, leading dimension or count
const DIMENSIONS: [i64; 8] = [-1, 0, 1, 2, 17, 1 << 40, i64::MAX, i64::MIN];

/// the integers drawn for a stride, besides any `i64`
const STRIDES: [i64; 10] = [0, 1, -1, 17, -17, 289, 1 << 40, -(1 << 40), i64::MAX, i64::MIN];

/// the addresses drawn for a matrix or a pointer array: null, misaligned (1, 3, and 8 for a
/// complex double), near the end of the address space, and plausible ones
const ADDRESSES: [u64; 7] = [0, 1, 3, 8, 16, u64::MAX - 7, 0x7f00_0000_0000];

/// the addresses drawn on a machine with a GPU: none that a call could read
const UNREADABLE: [u64; 3] = [0, 1, 3];

/// the parts of the `alpha` and `beta` drawn: zeros of both signs, ones, NaN (a real type takes
/// the real part alone: `(0, 1)` and `(0, NaN)` are 0 there, not in a complex one); each part is
/// exact in `f32`
const SCALARS: [(f64, f64); 8] = [
	(0.0, 0.0),
	(-0.0, 0.0),
	(1.0, 0.0),
	(-1.5, 0.5),
	(0.0, 1.0),
	(f64::NAN, 0.0),
	(0.0, f64::NAN),
	(0.0, -0.0),
];

/// what this file knows of an element type, apart from the library: its bytes, the most bits a
/// `Bits` precision takes for it (its significand bits but one), whether it is complex, and its
/// scalars
trait Type: Entries {
	/// the bytes of an element, to which its addresses must be aligned
	const BYTES: u64;
	/// the most bits of a `Bits` precision
	const MAX_BITS: u32;
	/// a complex type (HERK, which refuses `trans = T`), or a real one (SYRK)
	const COMPLEX: bool;
	/// the element of these parts
	fn scalar(parts: (f64, f64)) -> Self::C;
	/// the real scalar of this real part
	fn real(re: f64) -> Self::R;
}

/// implements [`Type`]: `$t` of `$bytes` bytes, `$bits` bits at most, complex or not
macro_rules! types {
	($($t:ty: $bytes:expr, $bits:expr, $complex:expr, |$p:ident| $scalar:expr, |$re:ident| $real:expr;)+) => {
		$(
			impl Type for $t {
				const BYTES: u64 = $bytes;
				const MAX_BITS: u32 = $bits;
				const COMPLEX: bool = $complex;
				fn scalar($p: (f64, f64)) -> Self::C {
					$scalar
				}
				fn real($re: f64) -> Self::R {
					$real
				}
			}
		)+
	};
}

types! {
	f32: 4, 23, false, |p| p.0 as f32, |re| re as f32;
	f64: 8, 52, false, |p| p.0, |re| re;
	Complex<f32>: 8, 23, true, |p| EmugemmComplex32 { re: p.0 as f32, im: p.1 as f32 }, |re| re as f32;
	Complex<f64>: 16, 52, true, |p| EmugemmComplex64 { re: p.0, im: p.1 }, |re| re;
}

/// the arguments every entry point takes: the pointer mode, the precision, `alpha` and `beta`
/// (`None`: a null pointer; otherwise host memory, whatever the mode)
#[derive(Clone, Debug)]
struct Shared {
	mode: i32,
	precision: (i32, u32),
	alpha: Option<(f64, f64)>,
	beta: Option<(f64, f64)>,
}

/// a matrix argument: its address and leading dimension
type Matrix = (u64, i64);

/// a product's own arguments (also a pointer-array batch's: the arrays' addresses, and a strided
/// batch's: the first product's matrices)
#[derive(Clone, Debug)]
struct Product {
	ops: (i32, i32),
	shape: (i64, i64, i64),
	a: Matrix,
	b: Matrix,
	c: Matrix,
}

/// a batch's own arguments, besides its product's
#[derive(Clone, Debug)]
struct Batch {
	strides: (i64, i64, i64),
	count: i64,
}

/// a rank-k update's own arguments
#[derive(Clone, Debug)]
struct Update {
	uplo: i32,
	trans: i32,
	shape: (i64, i64),
	a: Matrix,
	c: Matrix,
}

/// an enumeration's integer: one of `valid` mostly, one of [`ENUMERATIONS`] otherwise (the
/// valid values are the more likely, so that the later checks are reached as often)
fn enumeration(valid: &'static [i32]) -> impl Strategy<Value = i32> + Clone {
	prop_oneof![9 => select(valid), 1 => select(&ENUMERATIONS[..])]
}

/// a dimension or count: a small positive one mostly, one of [`DIMENSIONS`] otherwise
fn dimension() -> impl Strategy<Value = i64> + Clone {
	prop_oneof![7 => select(&[1i64, 2, 3, 17][..]), 1 => select(&DIMENSIONS[..])]
}

/// a leading dimension: one of at least the small dimensions mostly, a short one or one of
/// [`DIMENSIONS`] otherwise
fn leading_dimension() -> impl Strategy<Value = i64> + Clone {
	prop_oneof![5 => select(&[17i64, 32, 64][..]), 1 => select(&[1i64, 2][..]), 1 => select(&DIMENSIONS[..])]
}

/// a stride: one of [`STRIDES`], or any
fn stride() -> impl Strategy<Value = i64> + Clone {
	prop_oneof![select(&STRIDES[..]), any::<i64>()]
}

/// an address of `pool`, its plausible ones (past the first three) twice as often
fn address(pool: &'static [u64]) -> BoxedStrategy<u64> {
	if pool.len() > 3 {
		prop_oneof![1 => select(pool), 2 => select(&pool[3..])].boxed()
	} else {
		select(pool).boxed()
	}
}

/// the addresses this machine may hand the library
fn addresses() -> &'static [u64] {
	if gpu_present() { &UNREADABLE } else { &ADDRESSES }
}

/// a matrix argument of `pool`'s addresses
fn matrix(pool: &'static [u64]) -> impl Strategy<Value = Matrix> {
	(address(pool), leading_dimension())
}

/// a scalar: null now and then, otherwise one of [`SCALARS`]
fn scalar() -> impl Strategy<Value = Option<(f64, f64)>> {
	prop_oneof![1 => Just(None), 6 => select(&SCALARS[..]).prop_map(Some)]
}

/// the shared arguments: any precision parameter, one every kind takes (2 to 8) most often
fn shared() -> impl Strategy<Value = Shared> {
	let edges = select(&[0u32, 1, 2, 8, 9, 20, 21, 23, 24, 52, 53, 99, u32::MAX][..]);
	let parameter = prop_oneof![5 => 2u32..=8, 2 => edges, 1 => any::<u32>()];
	let precision = (enumeration(&[0, 1, 2, 3, 4, 5]), parameter);
	(enumeration(&[0, 1]), precision, scalar(), scalar()).prop_map(|(mode, precision, alpha, beta)| Shared {
		mode,
		precision,
		alpha,
		beta,
	})
}

/// a product's arguments of `pool`'s addresses
fn product(pool: &'static [u64]) -> impl Strategy<Value = Product> {
	let op = enumeration(&[0, 1, 2]);
	let shape = (dimension(), dimension(), dimension());
	((op.clone(), op), shape, matrix(pool), matrix(pool), matrix(pool)).prop_map(|(ops, shape, a, b, c)| Product { ops, shape, a, b, c })
}

/// a batch's own arguments
fn batch() -> impl Strategy<Value = Batch> {
	((stride(), stride(), stride()), dimension()).prop_map(|(strides, count)| Batch { strides, count })
}

/// a rank-k update's arguments of `pool`'s addresses
fn update(pool: &'static [u64]) -> impl Strategy<Value = Update> {
	let shape = (dimension(), dimension());
	(enumeration(&[0, 1]), enumeration(&[0, 1, 2]), shape, matrix(pool), matrix(pool)).prop_map(|(uplo, trans, shape, a, c)| Update {
		uplo,
		trans,
		shape,
		a,
		c,
	})
}

/// what the contract says of a call: refused with `InvalidValue` (and why), cuBLAS's quick return
/// (`Success`), or run (on no GPU: `NotAvailable`)
#[derive(Debug, PartialEq)]
enum Verdict {
	Invalid(&'static str),
	Quick,
	Runs,
}

/// `Err(why)` where `bad`
fn unless(bad: bool, why: &'static str) -> Result<(), &'static str> {
	if bad { Err(why) } else { Ok(()) }
}

/// the pointer mode and the precision, as `T` takes them
fn shared_kept<T: Type>(s: &Shared) -> Result<(), &'static str> {
	unless(!(0..=1).contains(&s.mode), "a pointer mode out of range")?;
	let (kind, parameter) = s.precision;
	match kind {
		0..=2 => Ok(()),
		3 => unless(parameter > T::MAX_BITS, "more bits than the type holds"),
		4 => unless(!(1..=8).contains(&parameter), "scheme I takes 1 to 8 slices"),
		5 => unless(!(2..=20).contains(&parameter), "scheme II takes 2 to 20 moduli"),
		_ => Err("a precision kind out of range"),
	}
}

/// `transa`, `transb`, `trans`: N, T or C
fn operation(op: i32) -> Result<(), &'static str> {
	unless(!(0..=2).contains(&op), "an operation out of range")
}

/// a dimension, leading dimension or count that is not negative
fn not_negative(values: &[i64]) -> Result<(), &'static str> {
	unless(values.iter().any(|&v| v < 0), "a negative dimension, leading dimension or count")
}

/// the rows and columns stored for `op` to read a `rows x cols` matrix
fn stored(op: i32, (rows, cols): (i64, i64)) -> (i64, i64) {
	if op == 0 { (rows, cols) } else { (cols, rows) }
}

/// a leading dimension of at least the rows stored, and 1
fn leading(ld: i64, (rows, _): (i64, i64)) -> Result<(), &'static str> {
	unless(ld < rows.max(1), "a leading dimension below the rows")
}

/// a `rows x cols` matrix of `bytes`-byte elements at `address` with leading dimension `ld`: not
/// null, aligned, and its last element's end within the address space (an end of 2⁶⁴ is not: no
/// pointer holds it)
fn lies(address: u64, bytes: u64, (rows, cols): (i64, i64), ld: i64) -> bool {
	let within = || {
		let elements = ((cols - 1) as u128).saturating_mul(ld as u128).saturating_add(rows as u128);
		u128::from(address).saturating_add(elements.saturating_mul(u128::from(bytes))) <= u128::from(u64::MAX)
	};
	address != 0 && address.is_multiple_of(bytes) && (rows == 0 || cols == 0 || within())
}

/// every product's matrix of a strided batch, `count > 0` of them from `base` by `stride`
/// elements, at an address within the address space and lying there
fn lie_strided(base: u64, stride: i64, count: i64, bytes: u64, shape: (i64, i64), ld: i64) -> bool {
	[0, count - 1].into_iter().all(|i| {
		let offset = i128::from(stride)
			.checked_mul(i128::from(i))
			.and_then(|o| o.checked_mul(i128::from(bytes)));
		let at = offset.and_then(|o| u64::try_from(i128::from(base) + o).ok());
		at.is_some_and(|at| lies(at, bytes, shape, ld))
	})
}

/// a pointer array of `count > 0` device pointers at `address`
fn array_lies(address: u64, count: i64) -> bool {
	lies(address, 8, (count, 1), count)
}

/// whether `alpha`, as `T`'s element (a real type's real part, or a rank-k update's real
/// `alpha`), is 0; [`SCALARS`] are exact in every type, so that no part rounds to 0
fn zero<T: Type>((re, im): (f64, f64), real: bool) -> bool {
	re == 0.0 && (im == 0.0 || !T::COMPLEX || real)
}

/// the verdict on a call whose arguments are kept so far, not a quick return where `quick`, its
/// `C` lying where `destination`, its operands where `operands` (asked only where the call reads
/// them: `alpha`, from the host, not 0, and `k > 0`)
fn run_or_refuse<T: Type>(
	s: &Shared,
	quick: bool,
	k: i64,
	(destination, operands): (impl Fn() -> bool, impl Fn() -> bool),
	real_alpha: bool,
) -> Verdict {
	if quick {
		return Verdict::Quick;
	}
	let (Some(alpha), Some(_)) = (s.alpha, s.beta) else {
		return Verdict::Invalid("a null alpha or beta");
	};
	if !destination() {
		return Verdict::Invalid("C does not lie where it can be written");
	}
	if s.mode == 0 && k > 0 && !zero::<T>(alpha, real_alpha) && !operands() {
		return Verdict::Invalid("an operand does not lie where it can be read");
	}
	Verdict::Runs
}

/// the contract's verdict on a product (`batch`: a strided batch where `strided`, a pointer-array
/// one otherwise; a single product where `None`)
fn product_verdict<T: Type>(s: &Shared, p: &Product, batch: Option<(&Batch, bool)>) -> Verdict {
	let (m, n, k) = p.shape;
	let count = batch.map_or(1, |(b, _)| b.count);
	let kept = shared_kept::<T>(s)
		.and(operation(p.ops.0))
		.and(operation(p.ops.1))
		.and(not_negative(&[count, m, n, k, p.a.1, p.b.1, p.c.1]));
	let (a, b) = (stored(p.ops.0, (m, k)), stored(p.ops.1, (k, n)));
	if let Err(why) = kept.and(leading(p.a.1, a)).and(leading(p.b.1, b)).and(leading(p.c.1, (m, n))) {
		return Verdict::Invalid(why);
	}
	let quick = m == 0 || n == 0 || count == 0;
	let bytes = T::BYTES;
	let lie = |(address, ld): Matrix, stride: i64, shape| match batch {
		None => lies(address, bytes, shape, ld),
		Some((_, false)) => array_lies(address, count),
		Some((_, true)) => lie_strided(address, stride, count, bytes, shape, ld),
	};
	let strides = batch.map_or((0, 0, 0), |(b, _)| b.strides);
	let destination = || lie(p.c, strides.2, (m, n));
	let operands = || lie(p.a, strides.0, a) && lie(p.b, strides.1, b);
	run_or_refuse::<T>(s, quick, k, (destination, operands), false)
}

/// the contract's verdict on a rank-k update
fn update_verdict<T: Type>(s: &Shared, u: &Update) -> Verdict {
	let (n, k) = u.shape;
	let kept = shared_kept::<T>(s)
		.and(unless(!(0..=1).contains(&u.uplo), "a fill mode other than lower or upper"))
		.and(operation(u.trans))
		.and(unless(T::COMPLEX && u.trans == 1, "a Hermitian update read transposed"))
		.and(not_negative(&[n, k, u.a.1, u.c.1]));
	let a = stored(u.trans, (n, k));
	if let Err(why) = kept.and(leading(u.a.1, a)).and(leading(u.c.1, (n, n))) {
		return Verdict::Invalid(why);
	}
	let destination = || lies(u.c.0, T::BYTES, (n, n), u.c.1);
	let operands = || lies(u.a.0, T::BYTES, a, u.a.1);
	run_or_refuse::<T>(s, n == 0, k, (destination, operands), true)
}

/// `status` against `verdict`: never `Internal`; `InvalidValue` and `Success` as the contract
/// says, on any machine; without a GPU, `NotAvailable` for a call the contract runs; a message
/// for every status but `Success`, none for it
fn judge(verdict: Verdict, status: EmugemmStatus, gpu: bool) -> Result<(), TestCaseError> {
	let message = last_error();
	prop_assert_ne!(status, EmugemmStatus::Internal, "{}", message);
	prop_assert_eq!(status == EmugemmStatus::Success, message.is_empty(), "{:?}: {:?}", status, message);
	let expected = match verdict {
		Verdict::Invalid(why) => (EmugemmStatus::InvalidValue, why),
		Verdict::Quick => (EmugemmStatus::Success, "a quick return"),
		Verdict::Runs if gpu => return Ok(()),
		Verdict::Runs => (EmugemmStatus::NotAvailable, "a call the contract runs, without a GPU"),
	};
	prop_assert_eq!(status, expected.0, "{}: {}", expected.1, message);
	Ok(())
}

/// a host pointer to `value`, or null
fn pointer<V>(value: &Option<V>) -> *const V {
	value.as_ref().map_or(null(), |v| v as *const V)
}

/// the precision of the shared arguments
fn precision(s: &Shared) -> EmugemmPrecision {
	EmugemmPrecision {
		kind: s.precision.0,
		parameter: s.precision.1,
	}
}

/// runs `case` on `CASES` draws of `strategy`, with a GPU or not
fn check<S: Strategy<Value: Debug>>(strategy: S, case: impl Fn(&S::Value, bool) -> Result<(), TestCaseError>) {
	let gpu = gpu_present();
	let config = ProptestConfig {
		failure_persistence: None,
		..ProptestConfig::with_cases(CASES)
	};
	if let Err(e) = TestRunner::new(config).run(&strategy, |value| case(&value, gpu)) {
		panic!("{e}");
	}
}

/// `emugemm_?gemm` of `T`
fn gemm<T: Type>() {
	check((shared(), product(addresses())), |(s, p), gpu| {
		let (alpha, beta) = (s.alpha.map(T::scalar), s.beta.map(T::scalar));
		let ((m, n, k), (a, b, c)) = (p.shape, (p.a.0 as *const T::C, p.b.0 as *const T::C, p.c.0 as *mut T::C));
		// SAFETY: `alpha` and `beta` are host memory or null; without a GPU nothing else can be
		// read, and with one every matrix address is null or misaligned, refused before it is read
		let status = unsafe {
			T::GEMM(
				p.ops.0,
				p.ops.1,
				m,
				n,
				k,
				pointer(&alpha),
				a,
				p.a.1,
				b,
				p.b.1,
				pointer(&beta),
				c,
				p.c.1,
				s.mode,
				null_mut(),
				precision(s),
			)
		};
		judge(product_verdict::<T>(s, p, None), status, gpu)
	});
}

/// `emugemm_?gemm_batched` of `T`: the product's addresses are the arrays'
fn pointer_batch<T: Type>() {
	check((shared(), product(addresses()), batch()), |(s, p, batch), gpu| {
		let (alpha, beta) = (s.alpha.map(T::scalar), s.beta.map(T::scalar));
		let ((m, n, k), count) = (p.shape, batch.count);
		let (a, b, c) = (p.a.0 as *const *const T::C, p.b.0 as *const *const T::C, p.c.0 as *const *mut T::C);
		// SAFETY: as in `gemm`: a pointer array is device memory, refused before it is read
		let status = unsafe {
			T::BATCHED(
				p.ops.0,
				p.ops.1,
				m,
				n,
				k,
				pointer(&alpha),
				a,
				p.a.1,
				b,
				p.b.1,
				pointer(&beta),
				c,
				p.c.1,
				count,
				s.mode,
				null_mut(),
				precision(s),
			)
		};
		judge(product_verdict::<T>(s, p, Some((batch, false))), status, gpu)
	});
}

/// `emugemm_?gemm_strided_batched` of `T`
fn strided_batch<T: Type>() {
	check((shared(), product(addresses()), batch()), |(s, p, batch), gpu| {
		let (alpha, beta) = (s.alpha.map(T::scalar), s.beta.map(T::scalar));
		let ((m, n, k), (sa, sb, sc), count) = (p.shape, batch.strides, batch.count);
		let (a, b, c) = (p.a.0 as *const T::C, p.b.0 as *const T::C, p.c.0 as *mut T::C);
		let (alpha, beta) = (pointer(&alpha), pointer(&beta));
		// SAFETY: as in `gemm`
		let status = unsafe {
			T::STRIDED(
				p.ops.0,
				p.ops.1,
				m,
				n,
				k,
				alpha,
				a,
				p.a.1,
				sa,
				b,
				p.b.1,
				sb,
				beta,
				c,
				p.c.1,
				sc,
				count,
				s.mode,
				null_mut(),
				precision(s),
			)
		};
		judge(product_verdict::<T>(s, p, Some((batch, true))), status, gpu)
	});
}

/// `emugemm_?syrk` or `emugemm_?herk` of `T`
fn rank_k<T: Type>() {
	check((shared(), update(addresses())), |(s, u), gpu| {
		let (alpha, beta) = (s.alpha.map(|p| T::real(p.0)), s.beta.map(|p| T::real(p.0)));
		let ((n, k), (a, c)) = (u.shape, (u.a.0 as *const T::C, u.c.0 as *mut T::C));
		// SAFETY: as in `gemm`
		let status = unsafe {
			T::RANK_K(
				u.uplo,
				u.trans,
				n,
				k,
				pointer(&alpha),
				a,
				u.a.1,
				pointer(&beta),
				c,
				u.c.1,
				s.mode,
				null_mut(),
				precision(s),
			)
		};
		judge(update_verdict::<T>(s, u), status, gpu)
	});
}

/// one test per entry point: `$name` fuzzes `$routine::<$t>`
macro_rules! entry_points {
	($($name:ident: $routine:ident::<$t:ty>;)+) => {
		$(
			#[test]
			fn $name() {
				$routine::<$t>();
			}
		)+
	};
}

entry_points! {
	sgemm: gemm::<f32>;
	dgemm: gemm::<f64>;
	cgemm: gemm::<Complex<f32>>;
	zgemm: gemm::<Complex<f64>>;
	sgemm_batched: pointer_batch::<f32>;
	dgemm_batched: pointer_batch::<f64>;
	cgemm_batched: pointer_batch::<Complex<f32>>;
	zgemm_batched: pointer_batch::<Complex<f64>>;
	sgemm_strided_batched: strided_batch::<f32>;
	dgemm_strided_batched: strided_batch::<f64>;
	cgemm_strided_batched: strided_batch::<Complex<f32>>;
	zgemm_strided_batched: strided_batch::<Complex<f64>>;
	ssyrk: rank_k::<f32>;
	dsyrk: rank_k::<f64>;
	cherk: rank_k::<Complex<f32>>;
	zherk: rank_k::<Complex<f64>>;
}
