//! accuracy measurement of matrix products against an exact reference, and test matrices
//!
//! this module is what emugemm's own tests and benchmarks use to check the emulated products, and
//! it is public so that users can check any GEMM (emulated or not) the same way:
//!
//! - [`random_matrix`] and [`adversarial_matrix`] generate deterministic test matrices: entries
//!   `(u - 0.5) * exp(phi * z)` with a tunable exponent spread `phi`, and variants with scaled
//!   rows/columns, zero rows/columns, a few huge entries, or subnormal entries; [`pair`] generates
//!   pairs `(A, B)` whose difficulty lies in how they meet ([`Pair`]: inner-dimension scaling, a
//!   dominant entry meeting a small one, bimodal rows, compensating scalings, cancellation,
//!   complex parts of different sizes, ...);
//! - [`ExactProduct::compute`] evaluates all or a sample ([`Sampling`]) of the entries of `A * B`
//!   exactly, with a long fixed-point accumulator, and keeps each as a double-double pair together
//!   with the scale `(|A| |B|)_ij` of each part;
//! - [`ExactProduct::accuracy`] compares a computed product with it and returns an [`Accuracy`]:
//!   the correct bits relative to `|A| |B|` (the quantity that GEMM error bounds control; per part
//!   for complex products) and the largest and median elementwise relative errors;
//!   [`ExactProduct::accuracy_where`] measures a subset of the entries.
//!
//! # example
//! ```
//! use emugemm::testing::{ExactProduct, Sampling, random_matrix};
//!
//! let a = random_matrix::<f64>(40, 30, 1.0, 1);
//! let b = random_matrix::<f64>(30, 20, 1.0, 2);
//! let c = &a * &b;
//!
//! let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Full);
//! let acc = exact.accuracy(c.as_ref());
//! println!("faer f64: {acc}");
//! assert!(acc.bits > 45.0);
//! assert_eq!(acc.entries, 40 * 20);
//! ```

mod exact;
mod fixed;
mod generate;
mod metrics;
mod pairs;
mod structure;

pub use exact::{ExactProduct, Sampling};
#[cfg(test)]
pub(crate) use generate::xorshift;
pub use generate::{Adversarial, adversarial_matrix, random_matrix, scale_cols, scale_rows};
pub use metrics::{Accuracy, same_bits};
pub use pairs::{InnerPattern, Pair, pair};
pub use structure::named;
