//! Compression and decompression parameters of the safe core (the Rust side
//! of `blosc2_cparams` / `blosc2_dparams`), and the filter ids they name.
//! Below the chunk layer and the plugins: what a plugin codec or filter is
//! told about a chunk is defined here, where both can use it.

use crate::codecs::Codec;
use std::sync::Arc;

/// Number of filter slots of the pipeline.
pub const MAX_FILTERS: usize = 6;

/// Filter ids of the pipeline.
pub mod filter {
    pub const NOFILTER: u8 = 0;
    pub const SHUFFLE: u8 = 1;
    pub const BITSHUFFLE: u8 = 2;
    pub const DELTA: u8 = 3;
    pub const TRUNC_PREC: u8 = 4;
    // The plugin filters c-blosc2 registers at start (`blosc2/filters-registry.h`).
    pub const NDCELL: u8 = 32;
    pub const NDMEAN: u8 = 33;
    pub const BYTEDELTA_BUGGY: u8 = 34;
    pub const BYTEDELTA: u8 = 35;
    pub const INT_TRUNC: u8 = 36;
}

/// The super-chunk a chunk is compressed for or decompressed from, as the
/// plugins that depend on it see it (c-blosc2 hands them `cparams->schunk`):
/// bytedelta with a meta of 0 takes the super-chunk's typesize, the
/// n-dimensional filters and codecs take their geometry from its `b2nd`
/// metalayer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchunkView {
    pub typesize: i32,
    /// The content of the super-chunk's `b2nd` metalayer, if it has one.
    pub b2nd: Option<Arc<[u8]>>,
}

/// How blocks are split into one stream per byte of the type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    Always = 1,
    Never = 2,
    Auto = 3,
    ForwardCompat = 4,
}

impl SplitMode {
    /// The mode for c-blosc2's `BLOSC_*_SPLIT` value (unknown values act as ForwardCompat).
    pub fn from_code(code: i32) -> SplitMode {
        match code {
            1 => SplitMode::Always,
            2 => SplitMode::Never,
            3 => SplitMode::Auto,
            _ => SplitMode::ForwardCompat,
        }
    }
}

/// Parameters for compressing chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CParams {
    /// Codec compcode: one of [`Codec`], or a registered codec id (>= 32).
    pub compcode: u8,
    pub compcode_meta: u8,
    /// 0 (plain copy) to 9.
    pub clevel: u8,
    pub use_dict: bool,
    /// Size of the items; more than 255 is treated as a byte stream.
    pub typesize: i32,
    pub nthreads: i16,
    /// 0 for automatic.
    pub blocksize: i32,
    pub splitmode: SplitMode,
    pub filters: [u8; MAX_FILTERS],
    pub filters_meta: [u8; MAX_FILTERS],
    /// Who compresses (0: nobody in particular), handed to user codecs and
    /// filters as is: the C API puts its `blosc2_schunk*` here, as c-blosc2
    /// hands `cparams->schunk` to their callbacks. Not part of the format.
    pub owner: usize,
    /// The super-chunk compressed for, if any (see [`SchunkView`]).
    pub schunk: Option<SchunkView>,
}

impl Default for CParams {
    /// c-blosc2's defaults: BloscLZ, clevel 5, typesize 8, shuffle, 1 thread.
    fn default() -> Self {
        CParams {
            compcode: Codec::BloscLz as u8,
            compcode_meta: 0,
            clevel: 5,
            use_dict: false,
            typesize: 8,
            nthreads: 1,
            blocksize: 0,
            splitmode: SplitMode::ForwardCompat,
            filters: [0, 0, 0, 0, 0, filter::SHUFFLE],
            filters_meta: [0; MAX_FILTERS],
            owner: 0,
            schunk: None,
        }
    }
}

impl CParams {
    /// Whether chunks compressed with these parameters may stand for chunks
    /// compressed with `other`'s, as c-blosc2 decides when it copies a
    /// super-chunk: same typesize, level, codec, dictionary use and filters.
    pub fn encodes_like(&self, other: &CParams) -> bool {
        self.typesize == other.typesize
            && self.clevel == other.clevel
            && self.compcode == other.compcode
            && self.use_dict == other.use_dict
            && self.filters == other.filters
            && self.filters_meta == other.filters_meta
    }

    /// Parameters for a codec, level, typesize and the classic shuffle choice
    /// (0 none, 1 byte shuffle, 2 bit shuffle), as `blosc2_compress` builds them.
    pub fn classic(codec: Codec, clevel: u8, shuffle: i32, typesize: i32, delta: bool) -> CParams {
        let mut filters = [0u8; MAX_FILTERS];
        if shuffle == 1 && typesize > 1 {
            filters[MAX_FILTERS - 1] = filter::SHUFFLE;
        }
        if shuffle == 2 {
            filters[MAX_FILTERS - 1] = filter::BITSHUFFLE;
        }
        if delta {
            filters[MAX_FILTERS - 2] = filter::DELTA;
        }
        CParams { compcode: codec as u8, clevel, typesize, filters, ..CParams::default() }
    }
}

/// Parameters for decompressing chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DParams {
    pub nthreads: i16,
    pub typesize: i32,
    /// Who decompresses (0: nobody in particular), handed to user codecs and
    /// filters (see [`CParams::owner`]).
    pub owner: usize,
    /// The super-chunk decompressed from, if any (see [`SchunkView`]).
    pub schunk: Option<SchunkView>,
}

impl Default for DParams {
    fn default() -> Self {
        DParams { nthreads: 1, typesize: 8, owner: 0, schunk: None }
    }
}
