//! # emugemm
//!
//! FP64/FP32 matrix multiplication (real and complex) emulated with exact INT8 products, the
//! Ozaki schemes, for the faer and nalgebra ecosystem, with an accuracy promise that an error
//! bound certifies for every product.
//!
//! - **how fast**: on one NVIDIA H200, device-resident `f64` at n = 8192, `SchemeII { moduli: 15
//!   }` (54 bits) runs at 1.39x cuBLAS's DGEMM, and `Precision::F64` (certified, which pays for its
//!   error bound) at 1.01-1.09x; complex `SchemeII { moduli: 15 }` at 2.0x ZGEMM and `F64` at
//!   1.47-1.60x. Small products and wide-range inputs are computed natively. The numbers, their
//!   hardware and how to reproduce them: `docs/PERFORMANCE.md` in the repository.
//! - **how accurate**: [`Precision::F64`] returns at least a native DGEMM's accuracy, minus one
//!   bit, on any input, measured in scaled bits (`-log2 max |C - C_exact| / (|A| |B|)`, per part for
//!   complex products); [`Precision::Bits`] a number of bits. Rows that no plan certifies are
//!   computed natively and the [`Report`] says so: a product is never returned less accurate than
//!   promised. See [`Precision`] and the [`accuracy`] page.
//! - **where**: the emulation runs on NVIDIA GPUs of compute capability 8.0 or higher (feature
//!   `cuda`; the fused kernels on Hopper, sm_90a, a portable path elsewhere) and, bit for bit the
//!   same, on the CPU ([`Backend::CpuEmulation`], the test oracle).
//!
//! an INT8 tensor core multiplies small integers exactly and very fast. the Ozaki schemes turn a
//! floating-point product into a few such integer products:
//!
//! - **scheme I** ([`Precision::SchemeI`]) cuts every row of `A` and column of `B` into `p`
//!   balanced int8 digits of a common power-of-two scale and sums the `p(p+1)/2` digit products
//!   that matter, with a shift-reduce; cheap at TF32 to FP32 accuracy
//! - **scheme II** ([`Precision::SchemeII`]) scales rows and columns to integers whose product is
//!   guaranteed to fit a range `P/4`, takes one exact int8 product per modulus of symmetric
//!   residues, and rebuilds the integer product by the Chinese remainder theorem; the FP64 path
//! - complex products run as 4M (scheme I, parts stacked along K) or 3M (scheme II, exact in
//!   modular arithmetic)
//!
//! a [`Precision`] says what accuracy is wanted; for each candidate [`Plan`] an error bound computed
//! from the inputs certifies, row by row of the product, the scaled bits the plan delivers (per
//! part for complex products), and the cheapest plan that meets the target runs; rows no plan can
//! certify are computed natively, and the report says so (see [`Precision`] and [`Plan`]).
//!
//! ```
//! use emugemm::{EmuMatMul, Precision};
//! let a = emugemm::testing::random_matrix::<f64>(50, 40, 1.0, 1);
//! let b = emugemm::testing::random_matrix::<f64>(40, 30, 1.0, 2);
//! let c = a.emu_mul(&b, Precision::F64);              // like &a * &b
//! let report = emugemm::last_report().unwrap();       // backend, plan, phase times
//! println!("{report}");
//! assert_eq!((c.nrows(), c.ncols()), (50, 30));
//! ```
//!
//! every faer form `*` takes works, conjugated views included (read conjugated, not copied), and
//! [`matmul`] mirrors faer's `matmul`; nalgebra matrices, vectors and views work the same way
//! (feature `nalgebra`, with `emu_gemm` for `gemm`)
//!
//! # backends
//!
//! [`Backend::Auto`] (what [`EmuMatMul`] uses) runs on an NVIDIA GPU (compute capability 8.0 or
//! higher) when one is usable (feature `cuda`, with the kernels built by nvcc) and otherwise computes the product with
//! faer's native matmul, the fastest correct answer on a CPU. [`Backend::CpuEmulation`] runs the
//! emulation itself on the CPU, bit for bit what the GPU computes: it is the oracle of the tests
//! and a way to get the GPU's exact bits without one.
//!
//! on the GPU, `Emulator::upload` keeps operands on the device for repeated products
//! (`Emulator::matmul_device`); host matrices are staged through page-locked buffers, and
//! products larger than the GPU's memory run in tiles. [`Emulator::on_gpus`] splits a product's
//! rows over several GPUs of one host.
//!
//! ```
//! use emugemm::{Accum, Backend, Emulator, Precision};
//! let a = emugemm::testing::random_matrix::<faer::c64>(20, 20, 1.0, 3);
//! let mut c = faer::Mat::<faer::c64>::zeros(20, 20);
//! let emu = Emulator::with_backend(Backend::CpuEmulation)?;
//! emu.matmul(c.as_mut(), Accum::Replace, (a.as_ref(), a.as_ref()), faer::c64::new(1.0, 0.0), (faer::Par::Seq, Precision::SchemeII { moduli: 16 }))?;
//! println!("{}", emu.last_report().unwrap());
//! # Ok::<(), emugemm::Error>(())
//! ```
//!
//! # features
//!
//! - `faer` (default): [`EmuMatMul`] for `faer::Mat` and `faer::MatRef`
//! - `nalgebra`: [`EmuMatMul`] for every nalgebra matrix and view (zero-copy)
//! - `testing` (default): the module [`testing`] (test matrices, an exact reference product,
//!   accuracy metrics), which the examples here use; without it the crate does not depend on `rand`
//! - `cuda`: the GPU backend on NVIDIA GPUs of compute capability 8.0 or higher (Hopper, sm_90a,
//!   runs the fused kernels). `build.rs` compiles the kernels with nvcc
//!   (from `NVCC`, `CUDA_HOME`/`CUDA_PATH` or `PATH`); without nvcc the crate still builds, and
//!   the GPU backend then reports [`Error::NoKernels`]

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc = include_str!("../docs/ACCURACY.md")]
pub mod accuracy {}
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
mod arch;
mod backend;
mod balance;
mod bound;
mod cost;
mod cpu;
mod datasheets;
#[cfg(feature = "cuda")]
mod device_view;
mod emulator;
mod error;
mod fp;
#[cfg(any(feature = "faer", feature = "nalgebra", feature = "cuda"))]
mod fresh;
#[cfg(feature = "cuda")]
mod gpu;
// the same entry points, refusing: one name for the backend whether it is built or not
#[cfg(not(feature = "cuda"))]
#[path = "no_gpu.rs"]
mod gpu;
mod interop;
#[cfg(feature = "cuda")]
mod kernels;
mod native;
mod operand;
mod parallel;
mod pending;
mod policy;
mod precision;
mod report;
mod request;
mod routing;
mod scalar;
pub mod scheme1;
pub mod scheme2;
mod screen;
mod settings;
mod shape;
mod stats;
// the library's own unit tests use it with or without the feature (its dependencies are also
// dev-dependencies)
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
mod view;
mod wide;

pub use backend::Backend;
#[cfg(feature = "cuda")]
pub use device_view::{DeviceView, DeviceViewMut, Stream};
pub use emulator::Emulator;
pub use error::Error;
pub use faer::Accum;
#[cfg(feature = "cuda")]
pub use gpu::DeviceMatrix;
#[cfg(feature = "faults")]
#[cfg_attr(docsrs, doc(cfg(feature = "faults")))]
pub use gpu::faults;
#[cfg(feature = "bench")]
pub use gpu::{baseline, profile};
pub use interop::EmuMatMul;
#[cfg(feature = "nalgebra")]
pub use interop::{EmuTrMul, emu_gemm};
#[cfg(feature = "faer")]
pub use interop::{matmul, rank_k_update};
pub use pending::PendingReport;
pub use precision::{Plan, Precision, Scaling, Scheme};
pub use report::{NativeReason, PhaseTimes, Report, Route, Tier, last_pending_report, last_report};
pub use routing::HostRouting;
pub use scalar::Scalar;
