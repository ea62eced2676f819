//! what a product on the GPU is made of (operands, output, the job its phases read) and the
//! device memory it takes

#[macro_use]
pub(crate) mod job;
pub(crate) mod footprint;
