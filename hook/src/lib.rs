//! A cuBLAS-compatible interposer: a program started with
//! `LD_PRELOAD=libemugemm_cublas.so` has its `cublas{S,D,C,Z}gemm_v2`, their batches
//! `cublas{S,D,C,Z}gemmBatched` and `cublas{S,D,C,Z}gemmStridedBatched`, `cublasGemmEx`,
//! `cublasGemmBatchedEx` and `cublasGemmStridedBatchedEx` (for the real and complex 32F and 64F
//! types), the rank-k updates `cublas{S,D}syrk_v2` and `cublas{C,Z}herk_v2` (each of them and its
//! `_64`) emulated by emugemm, and every other cuBLAS call, and every call the configuration or
//! the policy sends native, forwarded unchanged to the real library.
//!
//! Each call keeps cuBLAS's semantics: the handle's stream and pointer mode, `beta = 0` does not
//! read `C`, `alpha = 0` reads neither `A` nor `B`, `op` (a conjugate without transpose is
//! forwarded, and so are a HERK's `trans = T` and a SYRK's `trans = C`) and leading dimensions, a
//! rank-k update's triangle (`uplo`; the other one untouched) and real HERK diagonal, one handle
//! per thread or several, the stream's GPU. A call made while its stream is being captured into a
//! graph is forwarded, and so is an empty batch. A batch's products are each computed as the
//! single GEMM of its matrices would be. What cuBLAS promises and an emulated call does not: it
//! returns once its plan is chosen, so the host waits for the operands' statistics (and for
//! `alpha` and `beta` in device memory, and a pointer-array batch's arrays, which it reads), not
//! only for the launch.
//!
//! Configuration, read once, from the environment:
//! - `EMUGEMM_HOOK_D`, `EMUGEMM_HOOK_Z`, `EMUGEMM_HOOK_S`, `EMUGEMM_HOOK_C`: the precision of each
//!   type's calls, GEMMs and rank-k updates (`f64`, `f32`, `tf32`, `bits=N`, `scheme1=P`,
//!   `scheme2=M`) or `off`; by default `f64` for D and Z, `f32` for S and C;
//! - `EMUGEMM_HOOK_MIN`: calls with `m`, `n` or `k` below it go native (default 256; a rank-k
//!   update's `m` is its `n`; a batch's are those of each of its products);
//! - `EMUGEMM_HOOK_LOG`: a file that gets one JSON line per intercepted call (routine, shape, ops,
//!   a rank-k update's `uplo`, a batch's `batch` count, what ran, its plan (a batch's last
//!   product's) and certified bits, why native, microseconds).
//!
//! # example
//! ```no_run
//! // in a shell: LD_PRELOAD=target/release/libemugemm_cublas.so EMUGEMM_HOOK_LOG=calls.jsonl python app.py
//! let config = emugemm_cublas::Config::from_env();
//! println!("{config:?}");
//! ```

mod call;
mod config;
mod entry;
mod log;
mod real;

pub use config::Config;
pub use entry::*;
