//! the GPU runtime: the per-GPU context (streams, loaded modules, scratch slots, cuBLAS handles,
//! page-locked staging), kernel launches, device pointers, errors and the fault points

#[macro_use]
pub(crate) mod launch;
pub(crate) mod blas;
pub(crate) mod calibrate;
pub(crate) mod capture;
pub(crate) mod context;
pub(crate) mod current;
pub(crate) mod errors;
#[cfg_attr(not(feature = "faults"), allow(dead_code))]
pub(crate) mod fault_points;
pub(crate) mod fence;
pub(crate) mod modules;
pub(crate) mod pinned;
pub(crate) mod ptr;
pub(crate) mod slot;
pub(crate) mod staging;
