//! A cuBLAS-compatible interposer: a program started with
//! `LD_PRELOAD=libemugemm_cublas.so` has its `cublas{S,D,C,Z}gemm_v2`, their batches
//! `cublas{S,D,C,Z}gemmBatched` and `cublas{S,D,C,Z}gemmStridedBatched`, `cublasGemmEx`,
//! `cublasGemmBatchedEx` and `cublasGemmStridedBatchedEx` (for the real and complex 32F and 64F
//! types), the rank-k updates `cublas{S,D}syrk_v2` and `cublas{C,Z}herk_v2` (each of them and its
//! `_64`) emulated by emugemm, and every other cuBLAS call, and every call the configuration or
//! the policy sends native, forwarded unchanged to the real library.
//!
//! Each call keeps cuBLAS's semantics: the handle's stream and pointer mode, `beta = 0` does not
//! read `C`, `alpha = 0` reads neither `A` nor `B`, `op` and leading dimensions, a rank-k update's
//! triangle (`uplo`; the other one untouched) and real HERK diagonal, one handle per thread or
//! several, the stream's GPU (and no other). Its arguments are checked by the C ABI, in one place
//! for both doors: a call with bad arguments, one with scalars in device memory or a batch on a
//! stream being captured into a graph, one with no usable GPU backend or whose workspace does not
//! fit, reads and writes nothing there and is forwarded, so that cuBLAS computes it or answers it
//! with its own status. With `EMUGEMM_GRAPHS=on`, a single product or rank-k update with host
//! scalars on a capturing stream is recorded into the graph instead: each replay decides its plan
//! on its own data, and is logged. Forwarded calls go
//! to the libcublas their caller was linked with (several may be loaded, of any major versions).
//! A batch's products are each computed as the single GEMM of its matrices would be. What cuBLAS
//! promises and an emulated call does not: it returns once its plan is chosen, so the host waits
//! for the operands' statistics (and for `alpha` and `beta` in device memory, and a pointer-array
//! batch's arrays, which it reads), not only for the launch.
//!
//! Configuration, read once, from the environment (see [`Config`]; a value it cannot use is named
//! once on standard error):
//! - `EMUGEMM_HOOK_D`, `EMUGEMM_HOOK_Z`, `EMUGEMM_HOOK_S`, `EMUGEMM_HOOK_C`: the precision of each
//!   type's calls, GEMMs and rank-k updates (`f64`, `f32`, `tf32`, `bits=N`, `scheme1=P`,
//!   `scheme2=M`) or `off`; by default `f64` for D and Z, `f32` for S and C;
//! - `EMUGEMM_HOOK_MIN`: calls with `m`, `n` or `k` below it are forwarded (default 256; a rank-k
//!   update's `m` is its `n`; a batch's are those of each of its products);
//! - `EMUGEMM_HOOK_BATCHED`, `EMUGEMM_HOOK_RANK_K`: batches and rank-k updates emulated (`on`,
//!   `1`, `true`, `yes`) or forwarded (the default);
//! - `EMUGEMM_HOOK_MEMORY`: the most device memory one call's workspace may take;
//! - `EMUGEMM_HOOK_LOG`: a file that gets one JSON line per intercepted call (routine, shape, ops,
//!   a rank-k update's `uplo`, a batch's `batch` count, what ran, its plan (a batch's last
//!   product's) and certified bits, why native or forwarded, microseconds).
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
mod libraries;
mod log;
mod real;
mod stderr;

pub use config::Config;
pub use entry::*;
