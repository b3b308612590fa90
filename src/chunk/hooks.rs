//! Prefilters and postfilters: user code that sees every block of a chunk,
//! before the filter pipeline when compressing (and may compute the block's
//! contents) or after decompression (and may transform the decoded block).

use crate::error::Result;

/// What a prefilter gets for one block.
pub struct PrefilterBlock<'a> {
    /// The block's bytes of the source buffer.
    pub input: &'a [u8],
    /// Where the block to compress goes (zeroed, `input.len()` bytes).
    pub output: &'a mut [u8],
    pub typesize: i32,
    /// Offset of the block in the chunk (bytes).
    pub offset: usize,
    pub nblock: usize,
    /// The chunk's number in its super-chunk, when known.
    pub nchunk: Option<i64>,
    /// Index of the worker running the call.
    pub tid: usize,
    /// Scratch space for the callee.
    pub tmp: &'a mut [u8],
}

/// A function applied to every block before compression.
pub trait Prefilter: Send + Sync {
    fn apply(&self, block: &mut PrefilterBlock) -> Result<()>;
    /// Whether the compressed result does not matter (the callee computes
    /// something else): the chunk is then stored as zeros.
    fn output_is_disposable(&self) -> bool {
        false
    }
}

/// What a postfilter gets for one block.
pub struct PostfilterBlock<'a> {
    /// The decoded block.
    pub input: &'a [u8],
    /// Where the block goes in the destination (`input.len()` bytes).
    pub output: &'a mut [u8],
    pub typesize: i32,
    /// Offset of the block in the chunk (bytes).
    pub offset: usize,
    pub nblock: usize,
    /// The chunk's number in its super-chunk, when known.
    pub nchunk: Option<i64>,
    pub tid: usize,
    pub tmp: &'a mut [u8],
}

/// A function applied to every decoded block.
pub trait Postfilter: Send + Sync {
    fn apply(&self, block: &mut PostfilterBlock) -> Result<()>;
}
