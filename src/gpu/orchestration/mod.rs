//! a product from call to result: the in-core pipeline, products in tiles and over several
//! pipelines, and the entry points the front door calls

pub(crate) mod batch;
pub(crate) mod borrowed;
pub(crate) mod engine;
pub(crate) mod native_views;
pub(crate) mod pipeline;
pub(crate) mod queued;
pub(crate) mod recorded;
pub(crate) mod shared_launches;
pub(crate) mod tiled;
pub(crate) mod tiled_decision;
pub(crate) mod tiling;
