//! b2nd: the Blosc2 formats in safe Rust — chunks, frames (contiguous and
//! sparse), super-chunks and n-dimensional b2nd arrays — readable and
//! writable by c-blosc2 and python-blosc2.
//!
//! The types most programs need are at the top: [`Array`] and its
//! [`Context`] (the b2nd format), [`SuperChunk`] (a sequence of chunks in a
//! frame), [`Error`]. Chunk-level work (compressing one buffer, its
//! parameters) is in [`chunk`].
//!
//! ```
//! use b2nd::chunk::CParams;
//! use b2nd::{Array, Context};
//!
//! let data: Vec<u8> = (0..100u32).flat_map(|i| (i as f64).to_ne_bytes()).collect();
//! let ctx = Context::new(&[10, 10], &[5, 5], &[5, 5], CParams { typesize: 8, ..CParams::default() });
//! let a = Array::from_buffer(&ctx, &data)?;
//! assert_eq!(a.to_vec()?, data);
//! # Ok::<(), b2nd::Error>(())
//! ```
//!
//! This crate is safe Rust over the vendored C codecs; it exports no C
//! symbols. c-blosc2's C API is the `b2nd-capi` crate over it
//! (`crates/capi`), and the `b2nd` tool is `b2nd-cli` (`crates/cli`).
//!
//! # Features
//!
//! - `ndarray` (off by default): `ndarray` arrays in and out of b2nd arrays,
//!   [`Array::get_ndarray`], [`Array::to_ndarray`], [`Array::set_ndarray`],
//!   [`Array::from_ndarray`].
//!
//! Every codec and filter is always built in (BloscLZ, NDLZ, LZ4, LZ4HC,
//! Zlib, Zstd, the ZFP codecs): the C sources they need come with the crates
//! (`lz4-sys`, `zstd-sys`, `libdeflate-sys`; zlib-ng and zfp vendored in this
//! one), and a C compiler is all the build needs.
//!
//! Layers, data flowing down, each module importing only those below it:
//! [`array`](mod@array) → [`schunk`] → [`frame`] → [`chunk`] → [`filters`] →
//! [`plugins`] → [`params`] → [`codecs`], [`io`].

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod array;
pub mod chunk;
pub mod codecs;
pub mod error;
pub mod filters;
pub mod frame;
pub mod io;
pub mod ndmeta;
pub mod os;
pub mod params;
pub mod plugins;
pub mod schunk;
pub mod trace;

pub use array::{Array, Context};
pub use error::{Error, Result};
pub use schunk::SuperChunk;
