//! the products the pipeline delegates to NVIDIA's libraries: exact INT8 GEMMs (cuBLASLt, INT8 in,
//! INT32 out, "TN" on K-major planes) and the native GEMMs (cuBLAS `GemmEx`) used for native plans
//! and as the benchmark's baselines, cuBLAS's own FP64 emulation among them

use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fault_points::{Fault, point};
use crate::gpu::runtime::ptr::DevPtr;
use crate::shape::Shape;
use crate::{Error, Scalar};
use cudarc::cublas::sys as blas;
use cudarc::cublaslt::sys as lt;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use std::ffi::c_void;
use std::sync::Arc;

/// the size of the cuBLASLt workspace
const LT_WORKSPACE: usize = 32 << 20;

/// the library handles of one GPU, created once, with the stream they run on and cuBLASLt's
/// workspace
pub(crate) struct Handles {
	lt: lt::cublasLtHandle_t,
	pub blas: cudarc::cublas::CudaBlas,
	stream: Arc<CudaStream>,
	workspace: CudaSlice<u8>,
}

// SAFETY: the handles are used by one thread at a time (the GPU sits behind a mutex)
unsafe impl Send for Handles {}

impl Handles {
	pub fn new(stream: Arc<CudaStream>) -> Result<Self, Error> {
		// SAFETY: scratch memory for cuBLASLt, never read uninitialised by us
		let workspace = unsafe { stream.alloc::<u8>(LT_WORKSPACE) }.map_err(driver)?;
		let lt = cudarc::cublaslt::result::create_handle().map_err(|e| Error::gpu(format!("cuBLASLt: {e:?}")))?;
		let blas = cudarc::cublas::CudaBlas::new(stream.clone()).map_err(|e| Error::gpu(format!("cuBLAS: {e:?}")))?;
		Ok(Handles {
			lt,
			blas,
			stream,
			workspace,
		})
	}
}

impl Drop for Handles {
	fn drop(&mut self) {
		// SAFETY: created in `new`, destroyed once
		let _ = unsafe { cudarc::cublaslt::result::destroy_handle(self.lt) };
	}
}

fn lt_check(status: lt::cublasStatus_t, what: &str) -> Result<(), Error> {
	if status == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
		Ok(())
	} else {
		Err(Error::gpu(format!("cuBLASLt {what}: {status:?}")))
	}
}

/// one exact INT8 product: `C (m x n, INT32, leading dimension ldc) = [C +] A B^T`, with `A` given
/// as `m` K-major rows of `k` int8 (leading dimension `lda`) and `B` as `n` K-major rows (`ldb`)
pub(crate) struct Int8Gemm {
	pub m: usize,
	pub n: usize,
	pub k: usize,
	pub a: DevPtr<i8>,
	pub lda: usize,
	pub b: DevPtr<i8>,
	pub ldb: usize,
	pub c: DevPtr<i32>,
	pub ldc: usize,
	pub accumulate: bool,
}

impl Int8Gemm {
	pub fn run(&self, h: &Handles) -> Result<(), Error> {
		point(Fault::Launch, || "cuBLASLt's INT8 product".into())?;
		let (workspace, _sync) = h.workspace.device_ptr(&h.stream);
		let (alpha, beta) = (1i32, self.accumulate as i32);
		// SAFETY: descriptors are created, used on this stream and destroyed here; pointers come
		// from live device allocations of the sizes the layouts describe
		unsafe {
			let mut desc = std::ptr::null_mut();
			lt_check(
				lt::cublasLtMatmulDescCreate(
					&mut desc,
					lt::cublasComputeType_t::CUBLAS_COMPUTE_32I,
					lt::cudaDataType_t::CUDA_R_32I,
				),
				"desc",
			)?;
			let trans = blas::cublasOperation_t::CUBLAS_OP_T;
			let attr = lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA;
			lt_check(
				lt::cublasLtMatmulDescSetAttribute(
					desc,
					attr,
					(&trans as *const blas::cublasOperation_t).cast(),
					size_of::<blas::cublasOperation_t>(),
				),
				"transa",
			)?;
			let layout = |ty, rows: usize, cols: usize, ld: usize| {
				let mut l = std::ptr::null_mut();
				lt_check(
					lt::cublasLtMatrixLayoutCreate(&mut l, ty, rows as u64, cols as u64, ld as i64),
					"layout",
				)
				.map(|_| l)
			};
			let la = layout(lt::cudaDataType_t::CUDA_R_8I, self.k, self.m, self.lda)?;
			let lb = layout(lt::cudaDataType_t::CUDA_R_8I, self.k, self.n, self.ldb)?;
			let lc = layout(lt::cudaDataType_t::CUDA_R_32I, self.m, self.n, self.ldc)?;
			let status = lt::cublasLtMatmul(
				h.lt,
				desc,
				(&alpha as *const i32).cast(),
				self.a.addr() as *const c_void,
				la,
				self.b.addr() as *const c_void,
				lb,
				(&beta as *const i32).cast(),
				self.c.addr() as *const c_void,
				lc,
				self.c.addr() as *mut c_void,
				lc,
				std::ptr::null(),
				workspace as *mut c_void,
				LT_WORKSPACE,
				h.stream.cu_stream() as lt::cudaStream_t,
			);
			for l in [la, lb, lc] {
				lt::cublasLtMatrixLayoutDestroy(l);
			}
			lt::cublasLtMatmulDescDestroy(desc);
			lt_check(status, "matmul")
		}
	}
}

/// the arithmetic of a native GEMM
///
/// # example
/// ```
/// assert_ne!(emugemm::baseline::NativeMath::Exact, emugemm::baseline::NativeMath::Tf32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeMath {
	/// the type's own precision (DGEMM, ZGEMM, SGEMM, CGEMM)
	Exact,
	/// FP32 inputs rounded to TF32 on the tensor cores (f32/c32 only)
	Tf32,
	/// cuBLAS's own FP64 emulation (Ozaki scheme I on the INT8 tensor cores, `f64`/`c64` only,
	/// cuBLAS of CUDA 13.0 Update 2 or later): math mode `CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH`,
	/// strategy `CUBLAS_EMULATION_STRATEGY_EAGER`, compute type
	/// `CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT`, a workspace of the documented size (feature
	/// `bench`)
	#[cfg(feature = "bench")]
	Fp64Emulation(EmulationMantissa),
}

/// how cuBLAS's FP64 emulation ([`NativeMath::Fp64Emulation`]) chooses its mantissa bits; `b`
/// bits take `ceil((b + 1) / 8)` INT8 slices, and the cost grows with the square of the slices
///
/// # example
/// ```no_run
/// use emugemm::baseline::{self, EmulationMantissa, NativeMath};
/// use emugemm::{Backend, Emulator};
/// let emu = Emulator::with_backend(Backend::Gpu)?;
/// let a = emu.upload(faer::Mat::<f64>::identity(1024, 1024).as_ref())?;
/// let mut c = emu.zeros_on_device::<f64>(1024, 1024)?;
/// // seven slices, cuBLAS's FP64-like fixed setting
/// let math = NativeMath::Fp64Emulation(EmulationMantissa::Fixed(55));
/// let t = baseline::native_matmul(&emu, &mut c, &a, &a, math)?;
/// println!("cuBLAS emulated DGEMM: {t:?}");
/// # Ok::<(), emugemm::Error>(())
/// ```
#[cfg(feature = "bench")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmulationMantissa {
	/// exactly this many mantissa bits (`CUDA_EMULATION_MANTISSA_CONTROL_FIXED`); `8 s - 1` bits
	/// fill `s` slices; no accuracy promise
	Fixed(u32),
	/// cuBLAS's automatic dynamic precision (`CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC`): the bits
	/// that FP64 accuracy needs for these inputs, up to 79 (10 slices, cuBLAS's default), native
	/// DGEMM beyond
	Dynamic,
}

#[cfg(feature = "bench")]
impl EmulationMantissa {
	/// the most bits the emulation may use
	pub(crate) fn max_bits(self) -> u32 {
		match self {
			EmulationMantissa::Fixed(bits) => bits,
			EmulationMantissa::Dynamic => 79,
		}
	}
}

/// the cuBLAS data and compute types of `T`
fn types<T: Scalar>(math: NativeMath) -> (blas::cudaDataType, blas::cublasComputeType_t) {
	use blas::cublasComputeType_t::*;
	use blas::cudaDataType::*;
	let data = match (T::IS_COMPLEX, T::MANTISSA_BITS) {
		(false, 53) => CUDA_R_64F,
		(true, 53) => CUDA_C_64F,
		(false, _) => CUDA_R_32F,
		(true, _) => CUDA_C_32F,
	};
	let compute = match (T::MANTISSA_BITS, math) {
		#[cfg(feature = "bench")]
		(53, NativeMath::Fp64Emulation(_)) => CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT,
		(53, _) => CUBLAS_COMPUTE_64F,
		(_, NativeMath::Tf32) => CUBLAS_COMPUTE_32F_FAST_TF32,
		// FP64 emulation of f32/c32 is refused by `Fp64Emulation::enable`
		(_, _) => CUBLAS_COMPUTE_32F,
	};
	(data, compute)
}

/// a column-major matrix on the device: its address and its leading dimension
pub(crate) type ColumnMajor<T> = (DevPtr<T>, usize);

/// `C = alpha A B + beta C` natively, column-major operands (`A` m x k, `B` k x n)
pub(crate) fn native_gemm<T: Scalar>(
	handles: &Handles,
	shape: Shape,
	matrices: (ColumnMajor<T>, ColumnMajor<T>, ColumnMajor<T>),
	scalars: (T, T),
	math: NativeMath,
) -> Result<(), Error> {
	let plain = blas::cublasOperation_t::CUBLAS_OP_N;
	gemm_ex(handles, (shape, (plain, plain)), matrices, scalars, math)
}

/// `C = alpha op(A) op(B) + beta C` natively on the stream `caller` instead of the pipeline's, as
/// the caller's own cuBLAS call would compute it: `ops` are cuBLAS's, the matrices column-major as
/// stored (`op(A)` m x k, `op(B)` k x n). The handle is back on the pipeline's stream after
pub(crate) fn caller_gemm<T: Scalar>(
	handles: &Handles,
	caller: cudarc::driver::sys::CUstream,
	shape_ops: (Shape, (blas::cublasOperation_t, blas::cublasOperation_t)),
	matrices: (ColumnMajor<T>, ColumnMajor<T>, ColumnMajor<T>),
	scalars: (T, T),
	math: NativeMath,
) -> Result<(), Error> {
	let handle = *handles.blas.handle();
	let on = |stream: cudarc::driver::sys::CUstream| {
		// SAFETY: a live handle, used by this thread alone (the GPU's lock), and a live stream of
		// its context
		blas_check(unsafe { blas::cublasSetStream_v2(handle, stream.cast()) }, "SetStream")
	};
	on(caller)?;
	let computed = gemm_ex(handles, shape_ops, matrices, scalars, math);
	on(handles.stream.cu_stream())?;
	computed
}

/// cuBLAS's `GemmEx` of `shape` with `ops` on the handle's stream, in `math`
fn gemm_ex<T: Scalar>(
	handles: &Handles,
	(Shape { m, n, k }, (op_a, op_b)): (Shape, (blas::cublasOperation_t, blas::cublasOperation_t)),
	(a, b, c): (ColumnMajor<T>, ColumnMajor<T>, ColumnMajor<T>),
	(alpha, beta): (T, T),
	math: NativeMath,
) -> Result<(), Error> {
	point(Fault::Launch, || "cuBLAS's GemmEx".into())?;
	let (data, compute) = types::<T>(math);
	// cuBLAS reads a complex scalar as a `cuDoubleComplex`, 16-byte aligned (with aligned loads),
	// where `Complex<f64>` is aligned to 8: on an 8-aligned stack slot that read faults
	let (alpha, beta) = (Scalar16(alpha), Scalar16(beta));
	// SAFETY: pointers come from live device allocations of at least ld x cols elements
	let status = unsafe {
		blas::cublasGemmEx(
			*handles.blas.handle(),
			op_a,
			op_b,
			dim(m)?,
			dim(n)?,
			dim(k)?,
			(&alpha.0 as *const T).cast(),
			a.0.addr() as *const c_void,
			data,
			dim(a.1)?,
			b.0.addr() as *const c_void,
			data,
			dim(b.1)?,
			(&beta.0 as *const T).cast(),
			c.0.addr() as *mut c_void,
			data,
			dim(c.1)?,
			compute,
			blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
		)
	};
	blas_check(status, "GemmEx")
}

/// the leading dimensions of a batch's three matrices, `(lda, ldb, ldc)`
pub(crate) type LeadingDims = (usize, usize, usize);

/// where a batch's matrices are: device arrays of the addresses of its A, B and C matrices
/// (cuBLAS's pointer-array batch), or the first matrices' addresses and the element strides from
/// one product's to the next's (a strided batch)
#[derive(Clone, Copy, Debug)]
pub(crate) enum BatchAddresses {
	Arrays(DevPtr<u64>, DevPtr<u64>, DevPtr<u64>),
	Strided((u64, u64, u64), (i64, i64, i64)),
}

/// `C_i = alpha A_i B_i + beta C_i` natively for every product `i < count` of a batch of one
/// shape and one layout (column-major, leading dimensions `lds`) at `addresses`: one
/// `GemmBatchedEx` or `GemmStridedBatchedEx`, with the arithmetic of [`native_gemm`]
pub(crate) fn native_gemm_batched<T: Scalar>(
	handles: &Handles,
	(Shape { m, n, k }, lds): (Shape, LeadingDims),
	(addresses, count): (BatchAddresses, usize),
	(alpha, beta): (T, T),
	math: NativeMath,
) -> Result<(), Error> {
	point(Fault::Launch, || "cuBLAS's batched GemmEx".into())?;
	let (m, n, k, count) = (dim(m)?, dim(n)?, dim(k)?, dim(count)?);
	let (data, compute) = types::<T>(math);
	let (lda, ldb, ldc) = (dim(lds.0)?, dim(lds.1)?, dim(lds.2)?);
	// 16-byte aligned host scalars, as in `native_gemm`
	let (alpha, beta) = (Scalar16(alpha), Scalar16(beta));
	let (alpha, beta): (*const c_void, *const c_void) = ((&alpha.0 as *const T).cast(), (&beta.0 as *const T).cast());
	let (h, op) = (*handles.blas.handle(), blas::cublasOperation_t::CUBLAS_OP_N);
	let algo = blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT;
	// SAFETY: the addresses (in the arrays, or at the strides) are those of `count` live device
	// matrices of at least ld x cols elements each
	let status = unsafe {
		match addresses {
			BatchAddresses::Arrays(a, b, c) => blas::cublasGemmBatchedEx(
				h,
				op,
				op,
				m,
				n,
				k,
				alpha,
				a.addr() as *const *const c_void,
				data,
				lda,
				b.addr() as *const *const c_void,
				data,
				ldb,
				beta,
				c.addr() as *const *mut c_void,
				data,
				ldc,
				count,
				compute,
				algo,
			),
			BatchAddresses::Strided((a, b, c), (sa, sb, sc)) => blas::cublasGemmStridedBatchedEx(
				h,
				op,
				op,
				m,
				n,
				k,
				alpha,
				a as *const c_void,
				data,
				lda,
				sa,
				b as *const c_void,
				data,
				ldb,
				sb,
				beta,
				c as *mut c_void,
				data,
				ldc,
				sc,
				count,
				compute,
				algo,
			),
		}
	};
	blas_check(status, "batched GemmEx")
}

/// `x` as cuBLAS's `int` dimension
fn dim(x: usize) -> Result<i32, Error> {
	i32::try_from(x).map_err(|_| Error::gpu("dimension too large for cuBLAS"))
}

/// a scalar at a 16-byte aligned address, as cuBLAS reads host scalars
#[repr(C, align(16))]
struct Scalar16<T>(T);

/// a cuBLAS status as a result
pub(crate) fn blas_check(status: blas::cublasStatus_t, what: &str) -> Result<(), Error> {
	if status == blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
		Ok(())
	} else {
		Err(Error::gpu(format!("cuBLAS {what}: {status:?}")))
	}
}
