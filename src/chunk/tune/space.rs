//! The space the tuner searches: codec, filter pipeline, level, split mode
//! and block size, each point a [`Candidate`] that makes ordinary
//! compression parameters (nothing lossy, no plugin codec, no dictionary).

use crate::codecs::Codec;
use crate::params::{filter, CParams, SplitMode, MAX_FILTERS};

/// The codecs tuned, fastest first.
pub const CODECS: [Codec; 5] = [Codec::BloscLz, Codec::Lz4, Codec::Zstd, Codec::Zlib, Codec::Lz4hc];

/// The block sizes tried besides the automatic one (when the caller leaves
/// the block size to the library).
pub const BLOCKSIZES: [u32; 3] = [32 << 10, 128 << 10, 512 << 10];

/// A filter pipeline, lossless, for the items' size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pipeline {
    None,
    Shuffle,
    Bitshuffle,
    /// Byte shuffle, then each byte stream's differences (bytedelta, id 35).
    ShuffleBytedelta,
    /// The differences with the block's first items (delta, id 3), then shuffle.
    DeltaShuffle,
    DeltaBitshuffle,
    /// Differences of successive bytes (bytedelta of 1-byte items).
    Bytedelta,
    Delta,
}

impl Pipeline {
    /// The pipelines that make sense for items of `typesize` bytes.
    pub fn all(typesize: usize) -> &'static [Pipeline] {
        use Pipeline::*;
        if typesize > 1 {
            &[None, Shuffle, Bitshuffle, ShuffleBytedelta, DeltaShuffle, DeltaBitshuffle]
        } else {
            &[None, Bitshuffle, Bytedelta, Delta]
        }
    }

    /// The filters and their metas, in c-blosc2's layout (the last slots).
    pub fn filters(self, typesize: usize) -> ([u8; MAX_FILTERS], [u8; MAX_FILTERS]) {
        let (mut f, mut m) = ([filter::NOFILTER; MAX_FILTERS], [0u8; MAX_FILTERS]);
        let ts = typesize.min(255) as u8;
        let mut put = |list: &[(u8, u8)]| {
            let start = MAX_FILTERS - list.len();
            for (i, &(id, meta)) in list.iter().enumerate() {
                f[start + i] = id;
                m[start + i] = meta;
            }
        };
        match self {
            Pipeline::None => put(&[]),
            Pipeline::Shuffle => put(&[(filter::SHUFFLE, 0)]),
            Pipeline::Bitshuffle => put(&[(filter::BITSHUFFLE, 0)]),
            Pipeline::ShuffleBytedelta => put(&[(filter::SHUFFLE, 0), (filter::BYTEDELTA, ts)]),
            Pipeline::DeltaShuffle => put(&[(filter::DELTA, 0), (filter::SHUFFLE, 0)]),
            Pipeline::DeltaBitshuffle => put(&[(filter::DELTA, 0), (filter::BITSHUFFLE, 0)]),
            Pipeline::Bytedelta => put(&[(filter::BYTEDELTA, ts)]),
            Pipeline::Delta => put(&[(filter::DELTA, 0)]),
        }
        (f, m)
    }

    pub fn name(self) -> &'static str {
        match self {
            Pipeline::None => "none",
            Pipeline::Shuffle => "shuffle",
            Pipeline::Bitshuffle => "bitshuffle",
            Pipeline::ShuffleBytedelta => "shuffle+bytedelta",
            Pipeline::DeltaShuffle => "delta+shuffle",
            Pipeline::DeltaBitshuffle => "delta+bitshuffle",
            Pipeline::Bytedelta => "bytedelta",
            Pipeline::Delta => "delta",
        }
    }
}

/// How blocks are split, as the tuner chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Split {
    /// The library's rule for the codec and level (c-blosc2's `BLOSC_AUTO_SPLIT`).
    Auto,
    Always,
    Never,
}

impl Split {
    fn mode(self) -> SplitMode {
        match self {
            Split::Auto => SplitMode::Auto,
            Split::Always => SplitMode::Always,
            Split::Never => SplitMode::Never,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Split::Auto => "auto",
            Split::Always => "always",
            Split::Never => "never",
        }
    }
}

/// One point of the space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Candidate {
    pub codec: Codec,
    /// 1 to 9.
    pub clevel: u8,
    pub pipeline: Pipeline,
    pub split: Split,
    /// 0: the library's automatic block size for the codec and level.
    pub blocksize: u32,
}

impl Candidate {
    /// `base` compressing as this candidate says (its threads, typesize,
    /// super-chunk and owner kept; no dictionary; no tuner).
    pub fn params(&self, base: &CParams) -> CParams {
        let typesize = base.typesize.clamp(1, 255) as usize;
        let typesize = if base.typesize > 255 { 1 } else { typesize };
        let (filters, filters_meta) = self.pipeline.filters(typesize);
        CParams {
            compcode: self.codec as u8,
            compcode_meta: 0,
            clevel: self.clevel,
            use_dict: false,
            blocksize: self.blocksize as i32,
            splitmode: self.split.mode(),
            filters,
            filters_meta,
            tuner: None,
            ..base.clone()
        }
    }

    /// "zstd 5 shuffle+bytedelta split never block auto".
    pub fn describe(&self) -> String {
        format!(
            "{} {} {} split {} block {}",
            self.codec.name(),
            self.clevel,
            self.pipeline.name(),
            self.split.name(),
            size_name(self.blocksize)
        )
    }
}

/// `0` as "auto", else in KiB or MiB.
pub fn size_name(bytes: u32) -> String {
    match bytes {
        0 => "auto".to_string(),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b % 1024 == 0 => format!("{}K", b >> 10),
        b => b.to_string(),
    }
}

/// Every candidate of the full grid for items of `typesize` bytes: each
/// codec, pipeline and level 1 to 9, split always and never (only one way
/// for 1-byte items, where they are the same), and the automatic block size
/// plus [`BLOCKSIZES`] below `nbytes` when `tune_blocksize`, else the
/// automatic (or the caller's) one only.
pub fn grid(typesize: usize, nbytes: usize, tune_blocksize: bool) -> Vec<Candidate> {
    let splits: &[Split] = if typesize > 1 { &[Split::Always, Split::Never] } else { &[Split::Never] };
    let mut sizes = vec![0u32];
    if tune_blocksize {
        sizes.extend(BLOCKSIZES.iter().copied().filter(|&b| (b as usize) < nbytes));
    }
    let mut out = Vec::new();
    for codec in CODECS {
        for &pipeline in Pipeline::all(typesize) {
            for clevel in 1..=9 {
                for &split in splits {
                    for &blocksize in &sizes {
                        out.push(Candidate { codec, clevel, pipeline, split, blocksize });
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelines_fill_the_last_filter_slots_in_order() {
        let (f, m) = Pipeline::ShuffleBytedelta.filters(4);
        assert_eq!(f, [0, 0, 0, 0, filter::SHUFFLE, filter::BYTEDELTA]);
        assert_eq!(m, [0, 0, 0, 0, 0, 4]);
        let (f, _) = Pipeline::DeltaBitshuffle.filters(8);
        assert_eq!(f, [0, 0, 0, 0, filter::DELTA, filter::BITSHUFFLE]);
        assert_eq!(Pipeline::None.filters(8).0, [0; MAX_FILTERS]);
        // 1-byte items: no byte shuffle (it would do nothing)
        assert!(!Pipeline::all(1).contains(&Pipeline::Shuffle));
        assert_eq!(Pipeline::Bytedelta.filters(1), ([0, 0, 0, 0, 0, filter::BYTEDELTA], [0, 0, 0, 0, 0, 1]));
    }

    #[test]
    fn the_grid_covers_every_combination_once() {
        let g = grid(4, 4 << 20, true);
        assert_eq!(g.len(), 5 * 6 * 9 * 2 * 4);
        let set: std::collections::HashSet<_> = g.iter().collect();
        assert_eq!(set.len(), g.len());
        // block sizes not below the chunk are left out; 1-byte items split one way
        assert_eq!(grid(1, 100 << 10, true).len(), 5 * 4 * 9 * 2);
        assert_eq!(grid(8, 1 << 20, false).len(), 5 * 6 * 9 * 2);
    }

    #[test]
    fn a_candidate_keeps_what_is_not_tuned() {
        let base = CParams { typesize: 4, nthreads: 3, use_dict: true, ..CParams::default() };
        let c = Candidate {
            codec: Codec::Zstd,
            clevel: 7,
            pipeline: Pipeline::Shuffle,
            split: Split::Never,
            blocksize: 128 << 10,
        };
        let p = c.params(&base);
        assert_eq!((p.compcode, p.clevel, p.typesize, p.nthreads), (Codec::Zstd as u8, 7, 4, 3));
        assert_eq!((p.blocksize, p.splitmode, p.use_dict), (128 << 10, SplitMode::Never, false));
        assert_eq!(c.describe(), "zstd 7 shuffle split never block 128K");
    }
}
