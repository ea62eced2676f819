//! cuBLAS's contract for a call's arguments, checked in one place before anything is read: every
//! enumeration in range, no negative dimension or count, leading dimensions of at least the
//! stored rows (and 1), the precision one the element type takes, and, where the call is not
//! cuBLAS's quick return, the pointers it reads or writes not null, aligned to their element and
//! within the address space

use crate::request::{Batch, Call, Gemm, Matrices, RankK, Routine};
use crate::{Element, EmugemmOperation, EmugemmPointerMode};
use emugemm::Precision;
use faer::linalg::matmul::triangular::BlockStructure;

/// why a call's arguments break cuBLAS's contract
pub(crate) type Invalid = String;

/// a call's arguments, checked and typed
pub(crate) struct Checked {
	/// `op(A)` and `op(B)`; a rank-k update's `op(A)` and the op that reads its adjoint
	pub ops: (EmugemmOperation, EmugemmOperation),
	/// a rank-k update's triangle
	pub triangle: Option<BlockStructure>,
	/// `m`, `n`, `k` (a rank-k update's `n`, `n`, `k`)
	pub shape: (usize, usize, usize),
	/// `lda`, `ldb`, `ldc` (a rank-k update's `lda`, `lda`, `ldc`)
	pub lds: (usize, usize, usize),
	/// the products: 1, or a batch's count
	pub count: usize,
	pub mode: EmugemmPointerMode,
	pub precision: Precision,
}

impl Checked {
	/// cuBLAS's quick return: no entry to compute, nothing read or written
	pub(crate) fn empty(&self) -> bool {
		self.shape.0 == 0 || self.shape.1 == 0 || self.count == 0
	}

	/// the rows and columns stored for `op(A)` (`m x k`) and `op(B)` (`k x n`)
	pub(crate) fn stored(&self) -> ((usize, usize), (usize, usize)) {
		let (m, n, k) = self.shape;
		(stored(self.ops.0, (m, k)), stored(self.ops.1, (k, n)))
	}
}

impl<T: Element> Call<T> {
	/// `Ok` where the call's arguments keep cuBLAS's contract and its precision is one the element
	/// type takes (what [`crate::execute`] checks first), or why not; nothing is read
	///
	/// # example
	/// ```
	/// use emugemm_c::{Call, EmugemmPrecision, Gemm, Routine};
	/// let (alpha, beta) = (1.0f64, 0.0f64);
	/// let gemm = Gemm { ops: (0, 0), shape: (-1, 4, 4), alpha: &alpha, a: (std::ptr::null(), 4), b: (std::ptr::null(), 4), beta: &beta, c: (std::ptr::null_mut(), 4) };
	/// let call = Call { routine: Routine::Gemm(gemm), pointer_mode: 0, stream: std::ptr::null_mut(), precision: EmugemmPrecision { kind: 0, parameter: 0 } };
	/// assert_eq!(call.validate(), Err("m = -1 is negative".to_string()));
	/// ```
	pub fn validate(&self) -> Result<(), String> {
		self.check().map(|_| ())
	}

	/// the arguments checked as cuBLAS checks them (and the precision), or why not
	pub(crate) fn check(&self) -> Result<Checked, Invalid> {
		let mode = match self.pointer_mode {
			0 => EmugemmPointerMode::Host,
			1 => EmugemmPointerMode::Device,
			other => return Err(format!("pointer mode = {other}: not 0 (host) or 1 (device)")),
		};
		let precision = Precision::try_from(self.precision)?;
		precision.check::<T::Scalar>().map_err(|e| e.to_string())?;
		let (ops, triangle, count) = match &self.routine {
			Routine::Gemm(Gemm { ops, .. }) => ((op("transa", ops.0)?, op("transb", ops.1)?), None, 1),
			Routine::Batch(Batch { ops, count, .. }) => (
				(op("transa", ops.0)?, op("transb", ops.1)?),
				None,
				dimension("batch_count", *count)?,
			),
			Routine::RankK(r) => (rank_k_ops::<T>(r)?, Some(triangle(r.uplo)?), 1),
		};
		let shape = match &self.routine {
			// a rank-k update's `C` is `n x n`: it has no `m`
			Routine::RankK(r) => {
				let (n, k) = (dimension("n", r.shape.0)?, dimension("k", r.shape.1)?);
				(n, n, k)
			},
			routine => {
				let (m, n, k) = routine.shape();
				(dimension("m", m)?, dimension("n", n)?, dimension("k", k)?)
			},
		};
		let k = shape.2;
		let lds = match &self.routine {
			Routine::Gemm(g) => (g.a.1, g.b.1, g.c.1),
			Routine::Batch(b) => b.lds,
			Routine::RankK(r) => (r.a.1, r.a.1, r.c.1),
		};
		let lds = (dimension("lda", lds.0)?, dimension("ldb", lds.1)?, dimension("ldc", lds.2)?);
		let checked = Checked {
			ops,
			triangle,
			shape,
			lds,
			count,
			mode,
			precision,
		};
		let ((a_rows, _), (b_rows, _)) = checked.stored();
		let is_rank_k = triangle.is_some();
		for (name, ld, rows) in [("lda", lds.0, a_rows), ("ldb", lds.1, b_rows), ("ldc", lds.2, shape.0)] {
			// a rank-k update has no `B`: its `ldb` is its `lda`, checked once
			if !(is_rank_k && name == "ldb") && ld < rows.max(1) {
				return Err(format!(
					"{name} = {ld}: the leading dimension is below max(1, {rows}), the rows stored"
				));
			}
		}
		if !checked.empty() {
			self.scalars_present()?;
			self.destination_present(&checked)?;
			// `alpha` in host memory is read now: `A` and `B` are checked where it is not 0 (in
			// device memory, once it is read there)
			// SAFETY: a host pointer to one element, not null (checked above)
			if mode == EmugemmPointerMode::Host && k > 0 && !unsafe { self.alpha_is_zero() } {
				self.operands_present(&checked)?;
			}
		}
		Ok(checked)
	}

	/// whether `alpha`, in host memory, is 0
	///
	/// # Safety
	/// `alpha` points to one readable element of its type
	unsafe fn alpha_is_zero(&self) -> bool {
		use emugemm::Scalar;
		// SAFETY: the caller's promise
		unsafe {
			match &self.routine {
				Routine::Gemm(Gemm { alpha, .. }) | Routine::Batch(Batch { alpha, .. }) => {
					alpha.cast::<T::Scalar>().read_unaligned() == T::Scalar::from_parts(0.0, 0.0)
				},
				Routine::RankK(r) => r.alpha.read_unaligned() == T::Real::from_parts(0.0, 0.0),
			}
		}
	}

	/// `alpha` and `beta` are not null
	fn scalars_present(&self) -> Result<(), Invalid> {
		let null = match &self.routine {
			Routine::Gemm(g) => g.alpha.is_null() || g.beta.is_null(),
			Routine::Batch(b) => b.alpha.is_null() || b.beta.is_null(),
			Routine::RankK(r) => r.alpha.is_null() || r.beta.is_null(),
		};
		if null {
			Err("alpha and beta must not be null".into())
		} else {
			Ok(())
		}
	}

	/// `C` (a pointer-array batch's array of them) lies where it can be written
	fn destination_present(&self, checked: &Checked) -> Result<(), Invalid> {
		let (m, n, _) = checked.shape;
		match &self.routine {
			Routine::Gemm(g) => matrix::<T>("C", g.c.0 as u64, (m, n), checked.lds.2),
			Routine::RankK(r) => matrix::<T>("C", r.c.0 as u64, (m, n), checked.lds.2),
			Routine::Batch(b) => match b.matrices {
				Matrices::Pointers(_, _, c) => array("the array of C", c as u64, checked.count),
				Matrices::Strided(_, _, (c, stride)) => strided::<T>("C", (c as u64, stride), checked.count, ((m, n), checked.lds.2)),
			},
		}
	}
}

impl<T: Element> Call<T> {
	/// `A` and `B` (a pointer-array batch's arrays of them, a rank-k update's `A`) lie where they
	/// can be read; checked once `alpha` is known, as `alpha = 0` reads neither
	pub(crate) fn operands_present(&self, checked: &Checked) -> Result<(), Invalid> {
		let ((a_shape, b_shape), (lda, ldb, _)) = (checked.stored(), checked.lds);
		match &self.routine {
			Routine::Gemm(g) => {
				matrix::<T>("A", g.a.0 as u64, a_shape, lda)?;
				matrix::<T>("B", g.b.0 as u64, b_shape, ldb)
			},
			Routine::RankK(r) => matrix::<T>("A", r.a.0 as u64, a_shape, lda),
			Routine::Batch(b) => match b.matrices {
				Matrices::Pointers(a, b, _) => {
					array("the array of A", a as u64, checked.count)?;
					array("the array of B", b as u64, checked.count)
				},
				Matrices::Strided((a, sa), (b, sb), _) => {
					strided::<T>("A", (a as u64, sa), checked.count, (a_shape, lda))?;
					strided::<T>("B", (b as u64, sb), checked.count, (b_shape, ldb))
				},
			},
		}
	}
}

/// the argument `name`, a dimension, leading dimension or count, where it is not negative
pub(crate) fn dimension(name: &str, value: i64) -> Result<usize, Invalid> {
	usize::try_from(value).map_err(|_| format!("{name} = {value} is negative"))
}

/// cuBLAS's `cublasOperation_t` `raw`, the argument `name`: N, T or C
fn op(name: &str, raw: i32) -> Result<EmugemmOperation, Invalid> {
	match raw {
		0 => Ok(EmugemmOperation::N),
		1 => Ok(EmugemmOperation::T),
		2 => Ok(EmugemmOperation::C),
		3 => Err(format!("{name} = 3 (CUBLAS_OP_CONJG): a conjugate without transpose is not taken")),
		other => Err(format!("{name} = {other}: not an operation (0 N, 1 T, 2 C)")),
	}
}

/// the ops of a rank-k update: HERK reads `A` as stored or conjugate-transposed, SYRK as stored or
/// transposed (C reads as T there); then the op that reads the update's second factor
fn rank_k_ops<T: Element>(r: &RankK<T>) -> Result<(EmugemmOperation, EmugemmOperation), Invalid> {
	let complex = T::TYPE.complex();
	let adjoint = if complex { EmugemmOperation::C } else { EmugemmOperation::T };
	match (op("trans", r.trans)?, complex) {
		(EmugemmOperation::N, _) => Ok((EmugemmOperation::N, adjoint)),
		(EmugemmOperation::T, true) => Err("trans = T: a Hermitian rank-k update takes N or C".into()),
		(_, _) => Ok((adjoint, EmugemmOperation::N)),
	}
}

/// the triangle cuBLAS's `cublasFillMode_t` `uplo` names
fn triangle(uplo: i32) -> Result<BlockStructure, Invalid> {
	match uplo {
		0 => Ok(BlockStructure::TriangularLower),
		1 => Ok(BlockStructure::TriangularUpper),
		2 => Err("uplo = FULL: a rank-k update writes one triangle, lower or upper".into()),
		other => Err(format!("uplo = {other}: not a fill mode (0 lower, 1 upper)")),
	}
}

/// the rows and columns of the matrix stored for `op` to read it as a `rows x cols` one
pub(crate) fn stored(op: EmugemmOperation, (rows, cols): (usize, usize)) -> (usize, usize) {
	if op == EmugemmOperation::N { (rows, cols) } else { (cols, rows) }
}

/// the bytes from a matrix's first element to the end of its last: `(cols - 1) ld + rows`
/// elements of `T`
fn extent<T>((rows, cols): (usize, usize), ld: usize) -> Option<u64> {
	if rows == 0 || cols == 0 {
		return Some(0);
	}
	let elements = (cols - 1).checked_mul(ld)?.checked_add(rows)?;
	u64::try_from(elements.checked_mul(size_of::<T>())?).ok()
}

/// a matrix of `T` at `address`, `shape` stored with leading dimension `ld`: not null, aligned to
/// the element, and within the address space
pub(crate) fn matrix<T>(name: &str, address: u64, shape: (usize, usize), ld: usize) -> Result<(), Invalid> {
	if address == 0 {
		return Err(format!("{name} is null"));
	}
	if !address.is_multiple_of(size_of::<T>() as u64) {
		return Err(format!(
			"{name} at {address:#x} is not aligned to the {} bytes of its element",
			size_of::<T>()
		));
	}
	extent::<T>(shape, ld)
		.and_then(|bytes| address.checked_add(bytes))
		.map(|_| ())
		.ok_or_else(|| {
			format!(
				"{name}: a {} x {} matrix at {address:#x} with leading dimension {ld} reaches past the address space",
				shape.0, shape.1
			)
		})
}

/// a device array of `count` device pointers at `address`
pub(crate) fn array(name: &str, address: u64, count: usize) -> Result<(), Invalid> {
	matrix::<u64>(name, address, (count, 1), count.max(1))
}

/// the address of product `i`'s matrix, `stride` elements of `T` from `base`'s
pub(crate) fn at<T>(name: &str, (base, stride): (u64, i64), i: usize) -> Result<u64, Invalid> {
	let offset = i128::try_from(i)
		.ok()
		.and_then(|i| i128::from(stride).checked_mul(i)?.checked_mul(size_of::<T>() as i128));
	offset
		.and_then(|offset| u64::try_from(i128::from(base) + offset).ok())
		.ok_or_else(|| format!("{name}: product {i} lies outside the address space (stride {stride})"))
}

/// every product's matrix of a strided batch, from `base` by `stride`: each as [`matrix`] checks
/// it (the first and the last bound the others)
pub(crate) fn strided<T>(
	name: &str,
	(base, stride): (u64, i64),
	count: usize,
	(shape, ld): ((usize, usize), usize),
) -> Result<(), Invalid> {
	for i in [0, count.saturating_sub(1)] {
		matrix::<T>(name, at::<T>(name, (base, stride), i)?, shape, ld)?;
	}
	Ok(())
}
