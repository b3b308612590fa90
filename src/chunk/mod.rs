//! The chunk format (README_CHUNK_FORMAT.rst): compress, decompress,
//! getitem, special-value chunks and variable-length-block chunks.

pub mod blocks;
pub mod blocksize;
pub mod compress;
pub mod decompress;
pub mod header;
pub mod hooks;
mod pipeline;
mod pool;
pub mod special;
pub mod view;
pub mod vlblocks;

pub use blocks::{BlockSink, BlockSource};
pub use compress::Compressor;
pub use decompress::Decompressor;
pub use header::{Header, Special};
pub use hooks::{Postfilter, PostfilterBlock, Prefilter, PrefilterBlock};
pub use crate::params::{CParams, DParams, SchunkView, SplitMode};
pub use pool::{jobs_threads, run_jobs, set_executor, set_min_bytes_per_thread, Executor, MIN_BYTES_PER_THREAD};
pub use view::{LazySource, LazyTrailer};
