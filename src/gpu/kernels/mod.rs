//! one thin typed launcher per kernel family (cuda/*.cu), with the chassis' tuning table

pub(crate) mod balance;
pub(crate) mod bound;
pub(crate) mod chassis;
pub(crate) mod crt;
pub(crate) mod digits;
pub(crate) mod layout;
pub(crate) mod native;
pub(crate) mod residues;
pub(crate) mod rows;
pub(crate) mod stats;
pub(crate) mod tma;
pub(crate) mod wgmma_config;
