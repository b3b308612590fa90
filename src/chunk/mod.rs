//! The chunk format (README_CHUNK_FORMAT.rst): compress, decompress,
//! getitem, special-value chunks and variable-length-block chunks.
//!
//! One buffer into one chunk and back, as `blosc2_compress_ctx` and
//! `blosc2_decompress_ctx` do:
//!
//! ```
//! use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
//! use b2nd::codecs::Codec;
//!
//! let data: Vec<u8> = (0..100_000u32).flat_map(|i| (i / 3).to_ne_bytes()).collect();
//! // zstd at level 5, byte shuffle, items of 4 bytes
//! let mut c = Compressor::new(CParams::classic(Codec::Zstd, 5, 1, 4, false))?;
//! let chunk = c.compress_to_vec(&data)?;
//! assert!(chunk.len() < data.len() / 10);
//! let mut back = vec![0u8; data.len()];
//! Decompressor::new(DParams::default()).decompress(&chunk, &mut back)?;
//! assert_eq!(back, data);
//! # Ok::<(), b2nd::Error>(())
//! ```

pub mod blocks;
pub mod blocksize;
pub mod compress;
pub mod decompress;
pub mod header;
pub mod hooks;
mod pipeline;
mod pool;
pub mod special;
pub mod tune;
pub mod view;
pub mod vlblocks;

pub use crate::params::{CParams, DParams, PerfMode, Repeat, Schedule, SchunkView, SplitMode, Tuning};
pub use blocks::{BlockSink, BlockSource};
pub use compress::Compressor;
pub use decompress::Decompressor;
pub use header::{Header, Special};
pub use hooks::{Postfilter, PostfilterBlock, Prefilter, PrefilterBlock};
pub use pool::{
    jobs_threads, run_jobs, set_executor, set_min_bytes_per_thread, Executor, MIN_BYTES_PER_THREAD,
};
pub use view::{LazySource, LazyTrailer};
