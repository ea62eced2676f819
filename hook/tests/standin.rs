//! The interposer loaded over a stand-in libcublas, without a GPU: build.rs compiles a stand-in
//! `libcublas.so.N` (N = 12, 13, 14) that records every call and computes nothing, caller
//! libraries that reference the cuBLAS symbols as a program's own library does, and a driver that
//! loads them in local scopes (tests/standin/*.c). Each test runs the driver with
//! `LD_PRELOAD=libemugemm_cublas.so`, no GPU visible (`CUDA_VISIBLE_DEVICES=`) and a log, and checks
//! that every call reached the stand-in of its handle with its arguments and the stand-in's status
//! came back, what the log says of each call, and what the interposer says of its environment.
//!
//! They need a C compiler and nothing of CUDA: every intercepted call here is forwarded (below the
//! threshold, with arguments cuBLAS refuses, or refused by the emulated side for want of a GPU).

#[path = "standin/environment.rs"]
mod environment;
#[path = "standin/forwarding.rs"]
mod forwarding;
#[path = "standin/harness.rs"]
mod harness;
#[path = "standin/log.rs"]
mod log;
