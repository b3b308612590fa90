//! BloscLZ: the native LZ77 codec of Blosc.
//!
//! # Stream format
//!
//! A BloscLZ stream is a sequence of tokens, each starting with a control
//! byte `ctrl`.  The first control byte always announces literals; its top
//! three bits are a marker (the encoder sets bit 5) that decoders ignore.
//!
//! * `ctrl < 32`: a literal run: the next `ctrl + 1` bytes (1..=32) are
//!   copied verbatim.
//! * `ctrl >= 32`: a back-reference.  Let `L = ctrl >> 5` (1..=7) and
//!   `H = ctrl & 31`.  When `L == 7`, extension bytes follow, each added to
//!   the length, for as long as they are 255.  Then comes one byte `D`.
//!   The copy length is `L + 2` plus the extension bytes, and the distance
//!   back from the current output position is `H * 256 + D + 1`.  The pair
//!   `H == 31`, `D == 255` escapes to a far reference: two more bytes hold a
//!   big-endian `F`, and the distance is `F + 8192`.  Copies may overlap
//!   their own output (classic LZ77).
//!
//! The encoder always ends a stream with literals.  The format has not
//! changed since the first BloscLZ of 2009 (only the encoders' match finding
//! and tuning have), so this decoder reads the streams of every c-blosc and
//! c-blosc2 release.  It follows the reference decoder's checks to the
//! letter, including on broken input.
//!
//! # Encoder
//!
//! The encoder reproduces c-blosc2's output byte for byte for a given
//! `(clevel, input, dst.len())`: the same multiplicative hash of four input
//! bytes, the same hash table size per level, the same quirks (a match is
//! sent one byte shorter than found; back-references shorter than 6 bytes,
//! or 8 for far ones, go out as literals) and the same *entropy probe*: a
//! dry run over a window at the end of the input estimates the compression
//! ratio, and inputs below the level's threshold are refused, so that Blosc
//! stores them verbatim.  It also refuses exactly when the reference does
//! for sizes (see [`compress`]).  Input words are read little-endian; the
//! reference reads them in native order, so on big-endian hosts its output
//! differs from ours (both remain valid streams).
//!
//! # Twins
//!
//! Everything that touches bytes exists twice, as in lz4_flex: a safe
//! version (`compress.rs`, `probe.rs`, `decompress.rs`) and a pointer-based
//! twin (`compress_unsafe.rs`, `probe_unsafe.rs`, `decompress_unsafe.rs`)
//! with the same results, which is used by default because it is faster.
//! The tests run both; the constant `USE_UNSAFE_FAST_PATH` picks the one in
//! use.

mod compress;
mod compress_unsafe;
mod decompress;
mod decompress_unsafe;
mod probe;
mod probe_unsafe;
#[cfg(test)]
mod tests;

/// Selects the pointer-based twins for [`compress`] and [`decompress`].
/// The safe versions produce exactly the same results.
const USE_UNSAFE_FAST_PATH: bool = true;

/// Literal runs hold at most this many bytes.
const MAX_COPY: usize = 32;
/// Largest (biased) distance that fits in a short back-reference.
const MAX_DISTANCE: usize = 8191;
/// Matches at this (unbiased) distance or beyond are not considered.
const MAX_FAR_DISTANCE: usize = 65535 + MAX_DISTANCE - 1;
/// Shortest encoded length (in the encoder's biased units) worth a match.
const MIN_LEN: usize = 4;
/// The encoder reports `found - LEN_SHIFT` as the encoded length.
const LEN_SHIFT: usize = 4;
/// Largest hash table, in log2 of entries.
const MAX_HASH_LOG: u32 = 14;

/// Everything that depends on the compression level.
#[derive(Clone, Copy, Debug)]
struct Level {
    /// log2 of the number of hash table entries.
    hash_log: u32,
    /// The probe looks at the last `len / probe_divisor` input bytes.
    probe_divisor: usize,
    /// Inputs whose estimated ratio is below this are refused.
    min_ratio: f64,
    /// Also hash the position after a match end (level 9 only).
    second_hash: bool,
}

impl Level {
    /// Parameters for `clevel` in 1..=9; `None` otherwise (level 0 means
    /// "no compression" and is never handed to the codec by Blosc).
    fn new(clevel: u8) -> Option<Level> {
        let (hash_log, probe_divisor, min_ratio) = match clevel {
            1 => (MAX_HASH_LOG - 2, 8, 2.0),
            2 => (MAX_HASH_LOG - 1, 4, 1.5),
            3 => (MAX_HASH_LOG, 4, 1.2),
            4..=6 => (MAX_HASH_LOG, 2, 1.2),
            7 => (MAX_HASH_LOG, 1, 1.15),
            8 => (MAX_HASH_LOG, 1, 1.1),
            9 => (MAX_HASH_LOG, 1, 1.0),
            _ => return None,
        };
        Some(Level { hash_log, probe_divisor, min_ratio, second_hash: clevel == 9 })
    }
}

/// Slot, in a table of `N` (a power of two) entries, of four input bytes
/// read as a little-endian word: Knuth's multiplicative hash, top bits.
#[inline(always)]
fn slot<const N: usize>(word: u32) -> usize {
    (word.wrapping_mul(2_654_435_761) >> (32 - N.trailing_zeros())) as usize
}

/// Little-endian 32-bit word at `pos` (which must leave 4 readable bytes).
#[inline(always)]
fn read_u32(buf: &[u8], pos: usize) -> u32 {
    let bytes: [u8; 4] = buf[pos..pos + 4].try_into().unwrap();
    u32::from_le_bytes(bytes)
}

/// Which of the two implementations runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Twin {
    /// Bounds-checked, no `unsafe`.
    Safe,
    /// Pointer-based, same results.
    Fast,
}

/// The implementation behind the public functions.
const DEFAULT_TWIN: Twin = if USE_UNSAFE_FAST_PATH { Twin::Fast } else { Twin::Safe };

/// Compress `src` into `dst` at level `clevel` (0..=9). Returns the compressed length,
/// or 0 when the output would not fit in `dst` or the reference would refuse (incompressible etc).
///
/// Level 0 (and anything above 9) is always refused: Blosc stores such
/// blocks without calling the codec.  Inputs shorter than 16 bytes, outputs
/// shorter than 66 bytes and inputs longer than `i32::MAX` are refused too.
/// A stream of `n` bytes needs `dst.len() >= n + 1`, as in the reference.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    compress_twin(DEFAULT_TWIN, clevel, src, dst)
}

/// Decompress a BloscLZ stream into `dst`; returns the number of bytes written,
/// or None on any malformed input (never panics, never reads/writes out of bounds).
///
/// An empty `src` is malformed (the encoder never writes one).  Like the
/// reference decoder, a stream whose last token is a back-reference stops
/// before that copy and reports the bytes written so far.  Bytes of `dst`
/// past the returned length may have been overwritten.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    match DEFAULT_TWIN {
        Twin::Safe => decompress::decompress(src, dst),
        Twin::Fast => decompress_unsafe::decompress(src, dst),
    }
}

/// Decode the first `want` bytes (at least) of a BloscLZ stream whose
/// decoded size is `dst.len()`: [`decompress`] stopped once that many are
/// out.  `want >= dst.len()` decodes the whole stream, as [`decompress`].
pub fn decompress_prefix(src: &[u8], dst: &mut [u8], want: usize) -> Option<usize> {
    decompress_prefix_twin(DEFAULT_TWIN, src, dst, want)
}

fn decompress_prefix_twin(twin: Twin, src: &[u8], dst: &mut [u8], want: usize) -> Option<usize> {
    // A whole decode goes on to the end of the input, where trailing
    // garbage is an error; only a real prefix stops early.
    let stop = if want < dst.len() { want } else { usize::MAX };
    match twin {
        Twin::Safe => decompress::decompress_until(src, dst, stop),
        Twin::Fast => decompress_unsafe::decompress_until(src, dst, stop),
    }
}

/// [`compress`] by the given implementation.
fn compress_twin(twin: Twin, clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    let Some(level) = Level::new(clevel) else {
        return 0;
    };
    if src.len() > i32::MAX as usize {
        return 0;
    }
    // The reference takes the output size as an `int`.
    let dst_len = dst.len().min(i32::MAX as usize);
    let dst = &mut dst[..dst_len];
    match level.hash_log {
        12 => compress_with::<{ 1 << 12 }>(twin, &level, src, dst),
        13 => compress_with::<{ 1 << 13 }>(twin, &level, src, dst),
        _ => compress_with::<{ 1 << MAX_HASH_LOG }>(twin, &level, src, dst),
    }
}

/// [`compress_twin`] with a hash table of `N` entries.
fn compress_with<const N: usize>(twin: Twin, level: &Level, src: &[u8], dst: &mut [u8]) -> usize {
    // The probe starts with this zeroed table; the encoder re-zeroes it.
    let mut table = [0u32; N];
    let window = &src[src.len() - src.len() / level.probe_divisor..];
    let ratio = match twin {
        Twin::Safe => probe::estimate_ratio(window, &mut table),
        Twin::Fast => probe_unsafe::estimate_ratio(window, &mut table),
    };
    if ratio < level.min_ratio || src.len() < 16 || dst.len() < 66 {
        return 0;
    }
    table.fill(0);
    match twin {
        Twin::Safe => compress::compress(level, src, dst, &mut table),
        Twin::Fast if level.second_hash => compress_unsafe::compress::<N, true>(src, dst, &mut table),
        Twin::Fast => compress_unsafe::compress::<N, false>(src, dst, &mut table),
    }
    .unwrap_or(0)
}
