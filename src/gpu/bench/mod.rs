//! what only the benchmark uses (feature `bench`): phase profiles and the native baselines

pub mod baseline;
pub(crate) mod fp64_emulation;
pub mod profile;
