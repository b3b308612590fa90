//! libb2nd: the Blosc2 formats in safe Rust, with c-blosc2 3.3's C API on top.
//!
//! Layers, data flowing down, each module importing only those below it:
//! [`capi`] (the only home of raw pointers) → [`b2nd`] → [`schunk`] →
//! [`frame`] → [`chunk`] → [`filters`] → [`plugins`] → [`params`] →
//! [`codecs`], [`io`].

pub mod b2nd;
pub mod capi;
pub mod chunk;
pub mod codecs;
pub mod error;
pub mod filters;
pub mod frame;
pub mod io;
pub mod ndmeta;
pub mod params;
pub mod plugins;
pub mod schunk;
pub mod trace;

pub use error::{Error, Result};
