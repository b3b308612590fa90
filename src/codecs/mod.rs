//! The codec table, by compcode: BloscLZ (ours), LZ4/LZ4HC, zlib and Zstandard
//! (through their `-sys` crates).
//!
//! Chunk-format side (README_CHUNK_FORMAT.rst, "flags and compressor
//! enumeration"): the three high bits of the header flags hold the codec's
//! *format* code, which is what a decoder dispatches on; LZ4 and LZ4HC share
//! one format.

pub mod blosclz;
mod lz4;
pub mod ndlz;
pub mod zfp;
mod zlib;
mod zstd;

use crate::error::{Error, Result};

/// Version of the BloscLZ format family we implement (as c-blosc2 3.3 reports it).
pub const BLOSCLZ_VERSION: &str = "2.5.3";

/// A codec shipped with Blosc, by its compcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Codec {
    BloscLz = 0,
    Lz4 = 1,
    Lz4hc = 2,
    Zlib = 4,
    Zstd = 5,
}

/// Every codec, in compcode order (the order `blosc2_list_compressors` uses).
pub const ALL: [Codec; 5] = [Codec::BloscLz, Codec::Lz4, Codec::Lz4hc, Codec::Zlib, Codec::Zstd];

/// The codecs the tests go through: every one, or under Miri BloscLZ alone
/// (the others are C libraries, which Miri cannot call).
#[cfg(test)]
pub(crate) const TESTED: &[Codec] = if cfg!(miri) { &[Codec::BloscLz] } else { &ALL };

/// Format code stored in the chunk flags for codecs defined in the user-defined slot.
pub const FORMAT_UDCODEC: u8 = 6;

impl Codec {
    /// The codec for a compcode, if Blosc ships it.
    pub fn from_compcode(code: u8) -> Option<Codec> {
        ALL.iter().copied().find(|c| *c as u8 == code)
    }

    /// The codec for its name ("blosclz", "lz4", "lz4hc", "zlib", "zstd").
    pub fn from_name(name: &str) -> Option<Codec> {
        ALL.iter().copied().find(|c| c.name() == name)
    }

    pub fn compcode(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::BloscLz => "blosclz",
            Codec::Lz4 => "lz4",
            Codec::Lz4hc => "lz4hc",
            Codec::Zlib => "zlib",
            Codec::Zstd => "zstd",
        }
    }

    /// The format code written in the chunk flags (LZ4HC writes LZ4's).
    pub fn format(self) -> u8 {
        match self {
            Codec::BloscLz => 0,
            Codec::Lz4 | Codec::Lz4hc => 1,
            Codec::Zlib => 3,
            Codec::Zstd => 4,
        }
    }

    /// Whether this codec can compress with a dictionary.
    pub fn supports_dict(self) -> bool {
        matches!(self, Codec::Lz4 | Codec::Lz4hc | Codec::Zstd)
    }
}

/// A compression library, by the format code stored in chunk flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    BloscLz,
    Lz4,
    Zlib,
    Zstd,
}

impl Library {
    pub fn from_format(format: u8) -> Option<Library> {
        match format {
            0 => Some(Library::BloscLz),
            1 => Some(Library::Lz4),
            3 => Some(Library::Zlib),
            4 => Some(Library::Zstd),
            _ => None,
        }
    }

    pub fn of(codec: Codec) -> Library {
        Library::from_format(codec.format()).unwrap_or(Library::BloscLz)
    }

    /// The library name c-blosc2 reports ("BloscLZ", "LZ4", "Zlib", "Zstd").
    pub fn name(self) -> &'static str {
        match self {
            Library::BloscLz => "BloscLZ",
            Library::Lz4 => "LZ4",
            Library::Zlib => "Zlib",
            Library::Zstd => "Zstd",
        }
    }

    /// The version string of the library as linked.
    pub fn version(self) -> String {
        match self {
            Library::BloscLz => BLOSCLZ_VERSION.to_string(),
            Library::Lz4 => lz4::version(),
            Library::Zlib => zlib::version(),
            Library::Zstd => zstd::version(),
        }
    }
}

/// A dictionary for one chunk, prepared for the codec that uses it.
pub enum Dict<'a> {
    Lz4(&'a [u8]),
    Zstd(&'a zstd::CDict),
}

/// A dictionary ready for decoding the blocks of one chunk.
pub enum DDict<'a> {
    Lz4(&'a [u8]),
    Zstd(&'a zstd::DDict),
}

pub use zstd::{train_dict as zstd_train_dict, CDict as ZstdCDict, DDict as ZstdDDict};

/// Per-thread codec state, reused from block to block (no allocation per block).
#[derive(Default)]
pub struct CodecState {
    zstd: zstd::State,
    lz4: lz4::State,
    zlib: zlib::State,
}

impl CodecState {
    pub fn new() -> Self {
        Self::default()
    }

    /// Create ahead of use what compressing with `codec` at `clevel` (with a
    /// dictionary or not) will need: contexts and streams, no output.
    pub fn prepare_compress(&mut self, codec: Codec, clevel: u8, dict: bool) {
        match codec {
            Codec::BloscLz => {}
            Codec::Lz4 | Codec::Lz4hc => self.lz4.prepare(codec == Codec::Lz4hc, dict),
            Codec::Zlib => self.zlib.prepare_deflate(i32::from(clevel)),
            Codec::Zstd => self.zstd.prepare_compress(),
        }
    }

    /// Create ahead of use what decoding streams of format code `format` will need.
    pub fn prepare_decompress(&mut self, format: u8) {
        match Library::from_format(format) {
            Some(Library::Zlib) => self.zlib.prepare_inflate(),
            Some(Library::Zstd) => self.zstd.prepare_decompress(),
            _ => {}
        }
    }
}

/// Compress one stream. Returns the compressed length, or 0 when the codec
/// could not fit its output in `dst` (the caller then stores the stream raw).
pub fn compress(
    codec: Codec,
    clevel: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&Dict>,
    state: &mut CodecState,
) -> Result<usize> {
    if src.len() > i32::MAX as usize || dst.len() > i32::MAX as usize {
        return Err(Error::TwoGbLimit);
    }
    let n = match (codec, dict) {
        (Codec::BloscLz, _) => blosclz::compress(clevel, src, dst),
        (Codec::Lz4, d) => {
            let accel = 10 - i32::from(clevel.min(9));
            let d = match d {
                Some(Dict::Lz4(b)) => Some(*b),
                _ => None,
            };
            state.lz4.compress_fast(src, dst, accel, d)?
        }
        (Codec::Lz4hc, d) => {
            let d = match d {
                Some(Dict::Lz4(b)) => Some(*b),
                _ => None,
            };
            state.lz4.compress_hc(src, dst, i32::from(clevel), d)?
        }
        (Codec::Zlib, _) => state.zlib.compress(src, dst, i32::from(clevel)),
        (Codec::Zstd, d) => {
            let d = match d {
                Some(Dict::Zstd(c)) => Some(*c),
                _ => None,
            };
            state.zstd.compress(src, dst, zstd::level_for(clevel), d)
        }
    };
    if n > dst.len() {
        return Err(Error::WriteBuffer);
    }
    Ok(n)
}

/// Decompress one stream of the library with format code `format` into all
/// of `dst`. Fails unless exactly `dst.len()` bytes come out.
pub fn decompress(
    format: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&DDict>,
    state: &mut CodecState,
) -> Result<()> {
    let lib = Library::from_format(format).ok_or(Error::CodecSupport)?;
    let out = match lib {
        Library::BloscLz => blosclz::decompress(src, dst),
        Library::Lz4 => {
            let d = match dict {
                Some(DDict::Lz4(b)) => Some(*b),
                _ => None,
            };
            lz4::decompress(src, dst, d)
        }
        Library::Zlib => state.zlib.decompress(src, dst),
        Library::Zstd => {
            let d = match dict {
                Some(DDict::Zstd(dd)) => Some(*dd),
                _ => None,
            };
            state.zstd.decompress(src, dst, d)
        }
    };
    match out {
        Some(n) if n == dst.len() => Ok(()),
        _ => Err(Error::Data),
    }
}

/// Decode at least the first `want` bytes of one stream whose decoded size
/// is `dst.len()` (`want <= dst.len()`): what a read of part of a block
/// needs.  BloscLZ, LZ4 (without a dictionary) and zlib stop once they have
/// them; Zstandard (whose blocks decode whole anyway) and LZ4 with a
/// dictionary decode the stream in full.  Bytes of `dst` past `want` are
/// unspecified.
pub fn decompress_prefix(
    format: u8,
    src: &[u8],
    dst: &mut [u8],
    want: usize,
    dict: Option<&DDict>,
    state: &mut CodecState,
) -> Result<()> {
    if want >= dst.len() {
        return decompress(format, src, dst, dict, state);
    }
    let lib = Library::from_format(format).ok_or(Error::CodecSupport)?;
    let out = match (lib, dict) {
        (Library::BloscLz, _) => blosclz::decompress_prefix(src, dst, want),
        (Library::Lz4, None) => lz4::decompress_prefix(src, dst, want),
        (Library::Zlib, _) => state.zlib.decompress_prefix(src, &mut dst[..want]),
        _ => return decompress(format, src, dst, dict, state),
    };
    match out {
        Some(n) if n >= want => Ok(()),
        _ => Err(Error::Data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<u8> {
        (0..n as u32).flat_map(|i| (i / 7).to_le_bytes()).take(n).collect()
    }

    #[test]
    fn every_codec_round_trips_at_every_level() {
        let src = sample(if cfg!(miri) { 10_000 } else { 100_000 });
        let mut state = CodecState::new();
        for &codec in TESTED {
            for clevel in 1..=9 {
                let mut dst = vec![0u8; src.len()];
                let n = compress(codec, clevel, &src, &mut dst, None, &mut state).unwrap();
                assert!(n > 0 && n < src.len() / 4, "{codec:?} {clevel}: {n}");
                let mut back = vec![0u8; src.len()];
                decompress(codec.format(), &dst[..n], &mut back, None, &mut state).unwrap();
                assert_eq!(back, src, "{codec:?} {clevel}");
            }
        }
    }

    #[test]
    fn output_too_small_gives_zero_and_garbage_gives_errors() {
        let src: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let mut state = CodecState::new();
        for &codec in TESTED {
            let mut dst = vec![0u8; 100];
            let n = compress(codec, 5, &src, &mut dst, None, &mut state).unwrap();
            assert_eq!(n, 0, "{codec:?}");
            let mut out = vec![0u8; 5000];
            let garbage: Vec<u8> = (0..300u32).map(|i| (i * 77 % 251) as u8).collect();
            assert!(decompress(codec.format(), &garbage, &mut out, None, &mut state).is_err());
        }
    }

    #[test]
    fn names_codes_and_formats() {
        for codec in ALL {
            assert_eq!(Codec::from_name(codec.name()), Some(codec));
            assert_eq!(Codec::from_compcode(codec.compcode()), Some(codec));
        }
        assert_eq!(Codec::from_compcode(3), None);
        assert_eq!(Codec::Lz4hc.format(), Codec::Lz4.format());
        if cfg!(miri) {
            return; // (the versions come from the C libraries)
        }
        assert!(Library::Zstd.version().starts_with("1."));
        assert!(Library::Lz4.version().starts_with("1."));
    }
}
