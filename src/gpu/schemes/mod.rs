//! the schemes' steps on the GPU: split, products and reconstruction of scheme I (fused and unfused)
//! and scheme II, complex products by parts, and what a device matrix keeps between products

pub(crate) mod parts;
pub(crate) mod resident;
pub(crate) mod scheme1_fused;
pub(crate) mod scheme1_unfused;
pub(crate) mod scheme2;
