//! The exports and types of `blosc2.h`: contexts, chunks, global settings,
//! plugins, I/O backends and super-chunks.

pub mod chunk;
pub mod context;
pub mod defaults;
mod dynload;
pub(crate) mod fields;
pub mod global;
pub(crate) mod handle;
mod hooks;
pub mod io;
pub mod misc;
pub(crate) mod params;
pub mod paths;
pub mod plugins;
pub mod schunk;
pub mod schunk_chunks;
pub mod schunk_meta;
pub mod types;
