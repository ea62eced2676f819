//! matrices on the device and their way there and back: device matrices, panels of host
//! operands, and the exchange between the pipelines of one product

pub(crate) mod exchange;
pub(crate) mod matrix;
pub(crate) mod panels;
