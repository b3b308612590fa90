//! The automatic block size and the split decision, chosen exactly as
//! c-blosc2's default tuner does so that both libraries lay chunks out alike.

use super::header::{flags, MIN_BUFFERSIZE};
use crate::codecs::Codec;
use crate::params::SplitMode;

const L1: i32 = 32 * 1024;
/// Most streams a block is split into.
const MAX_STREAMS: i32 = 16;

/// Codecs meant for high compression ratios get larger blocks.
fn high_ratio(compcode: u8) -> bool {
    matches!(Codec::from_compcode(compcode), Some(Codec::Lz4hc | Codec::Zlib | Codec::Zstd))
}

/// Whether blocks are split into `typesize` streams.
pub fn split(
    mode: SplitMode,
    compcode: u8,
    clevel: u8,
    filter_flags: u8,
    typesize: i32,
    blocksize: i32,
) -> bool {
    match mode {
        SplitMode::Always => return true,
        SplitMode::Never => return false,
        SplitMode::Auto | SplitMode::ForwardCompat => {}
    }
    let fast_codec = match Codec::from_compcode(compcode) {
        Some(Codec::BloscLz | Codec::Lz4) => true,
        Some(Codec::Zstd) => clevel <= 5,
        _ => false,
    };
    fast_codec
        && filter_flags & flags::DOSHUFFLE != 0
        && typesize <= MAX_STREAMS
        && blocksize / typesize >= MIN_BUFFERSIZE
}

/// The block size for a source of `nbytes` (`forced` is the user's block size, 0 for automatic).
/// The result is never larger than `nbytes` and, when larger than the typesize,
/// is a multiple of it.
pub fn compute(
    compcode: u8,
    clevel: u8,
    typesize: i32,
    nbytes: i32,
    forced: i32,
    mode: SplitMode,
    filter_flags: u8,
) -> i32 {
    if nbytes < typesize {
        return 1;
    }
    let mut blocksize = nbytes;
    let splitting = split(mode, compcode, clevel, filter_flags, typesize, nbytes);
    if forced > 0 {
        blocksize = forced;
    } else {
        if nbytes >= L1 {
            blocksize = L1;
            let hcr = high_ratio(compcode);
            if hcr {
                blocksize *= 2;
            }
            blocksize = match clevel {
                0 => blocksize / 4,
                1 => blocksize / 2,
                2 => blocksize,
                3 => blocksize * 2,
                4 | 5 => blocksize * 4,
                6..=8 => blocksize * 8,
                9 => blocksize * if hcr { 16 } else { 8 },
                _ => blocksize,
            };
        }
        if clevel > 0 && splitting {
            let per_stream = match clevel {
                1..=3 => 32 * 1024,
                4..=6 => 64 * 1024,
                7 => 128 * 1024,
                8 => 256 * 1024,
                _ => 512 * 1024,
            };
            blocksize = (per_stream * typesize.min(4096)).clamp(32 * 1024, 4 * 1024 * 1024);
        }
    }
    if blocksize > nbytes {
        blocksize = nbytes;
    }
    if blocksize > typesize {
        blocksize = blocksize / typesize * typesize;
    }
    blocksize
}

/// The block size compression parameters give a chunk of `n` bytes (at least 1).
pub fn of(p: &crate::params::CParams, n: usize) -> usize {
    let filter_flags = super::header::flags_from_filters(&p.filters);
    let nbytes = n.min(i32::MAX as usize) as i32;
    compute(p.compcode, p.clevel, p.typesize, nbytes, p.blocksize, p.splitmode, filter_flags).max(1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    const SH: u8 = flags::DOSHUFFLE;

    #[test]
    fn automatic_sizes_follow_the_level_and_codec() {
        let m = SplitMode::ForwardCompat;
        // BloscLZ, shuffle, typesize 4, level 5: split, 64 KiB per stream.
        assert_eq!(compute(0, 5, 4, 4_000_000, 0, m, SH), 256 * 1024);
        // Without shuffle no split: L1 * 4.
        assert_eq!(compute(0, 5, 4, 4_000_000, 0, m, 0), 128 * 1024);
        // zstd level 9 (no split above 5): L1 * 2 * 16.
        assert_eq!(compute(5, 9, 8, 8_000_000, 0, m, SH), 1024 * 1024);
        // Small buffers: the whole buffer, rounded to the typesize.
        assert_eq!(compute(1, 5, 4, 1001, 0, m, SH), 1000);
        assert_eq!(compute(1, 5, 8, 5, 0, m, SH), 1);
        // Forced sizes are clamped and rounded.
        assert_eq!(compute(1, 5, 4, 1000, 1001, m, SH), 1000);
        assert_eq!(compute(1, 5, 4, 100_000, 1001, m, SH), 1000);
    }

    #[test]
    fn split_rules() {
        assert!(split(SplitMode::Always, 4, 5, 0, 300, 10));
        assert!(!split(SplitMode::Never, 0, 5, SH, 4, 1 << 20));
        assert!(split(SplitMode::ForwardCompat, 0, 5, SH, 4, 1 << 20));
        assert!(!split(SplitMode::ForwardCompat, 5, 6, SH, 4, 1 << 20));
        assert!(!split(SplitMode::ForwardCompat, 1, 5, SH, 17, 1 << 20));
        assert!(!split(SplitMode::Auto, 1, 5, SH, 4, 100));
    }
}
