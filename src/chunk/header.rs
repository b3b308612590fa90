//! The chunk header (README_CHUNK_FORMAT.rst, "Header"): 16 bytes in Blosc1
//! chunks, 32 in Blosc2 chunks (flagged by setting both shuffle bits).

use crate::error::{Error, Result};
pub use crate::params::{filter, MAX_FILTERS};

/// Length of a Blosc1 header.
pub const MIN_HEADER_LENGTH: usize = 16;
/// Length of a Blosc2 (extended) header.
pub const EXTENDED_HEADER_LENGTH: usize = 32;
/// Largest block a chunk may declare.
pub const MAX_BLOCKSIZE: i32 = 536_866_816;
/// Largest typesize a compression call accepts.
pub const MAX_TYPESIZE: i32 = MAX_BLOCKSIZE;
/// Largest source buffer a chunk can hold.
pub const MAX_BUFFERSIZE: i32 = i32::MAX - EXTENDED_HEADER_LENGTH as i32;
/// Smaller sources are always stored as a plain copy.
pub const MIN_BUFFERSIZE: i32 = 32;

/// Format version written for regular chunks.
pub const VERSION_FORMAT_STABLE: u8 = 5;
/// Format version written for variable-length-block chunks.
pub const VERSION_FORMAT_VL_BLOCKS: u8 = 6;
/// Version of Blosc2 alpha chunks (whose 6th filter slot is undefined).
pub const VERSION_FORMAT_ALPHA: u8 = 3;

/// `flags` bits.
pub mod flags {
    pub const DOSHUFFLE: u8 = 0x1;
    pub const MEMCPYED: u8 = 0x2;
    pub const DOBITSHUFFLE: u8 = 0x4;
    pub const DODELTA: u8 = 0x8;
    pub const DONT_SPLIT: u8 = 0x10;
}

/// `blosc2_flags` bits.
pub mod blosc2_flags {
    pub const USEDICT: u8 = 0x1;
    pub const BIGENDIAN: u8 = 0x2;
    pub const LAZY: u8 = 0x8;
    pub const INSTR_CODEC: u8 = 0x80;
}

/// `blosc2_flags2` bit: the chunk has variable-length blocks.
pub const VL_BLOCKS: u8 = 0x1;

/// Special-value kinds, stored in bits 4..6 of `blosc2_flags`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    None = 0,
    Zero = 1,
    Nan = 2,
    Value = 3,
    Uninit = 4,
}

/// A parsed chunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub version: u8,
    pub versionlz: u8,
    pub flags: u8,
    pub typesize: u8,
    pub nbytes: i32,
    pub blocksize: i32,
    pub cbytes: i32,
    pub filters: [u8; MAX_FILTERS],
    pub udcompcode: u8,
    pub compcode_meta: u8,
    pub filters_meta: [u8; MAX_FILTERS],
    pub blosc2_flags2: u8,
    pub blosc2_flags: u8,
}

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Header {
    /// Read the three sizes of a chunk (nbytes, cbytes, blocksize) from its
    /// first 16 bytes, with no other validation.
    pub fn sizes(src: &[u8]) -> Result<(i32, i32, i32)> {
        if src.len() < MIN_HEADER_LENGTH {
            return Err(Error::ReadBuffer);
        }
        Ok((le_i32(src, 4), le_i32(src, 12), le_i32(src, 8)))
    }

    /// Parse and validate only the 16-byte Blosc1 part of a header (what the
    /// `*_cbuffer_*` query functions read).
    pub fn parse_min(src: &[u8]) -> Result<Header> {
        let mut h = Self::read_min(src)?;
        if h.cbytes < MIN_HEADER_LENGTH as i32
            || h.blocksize <= 0
            || h.blocksize > MAX_BLOCKSIZE
            || h.typesize == 0
        {
            return Err(Error::InvalidHeader);
        }
        if h.nbytes > 0 && h.blocksize > h.nbytes {
            h.blocksize = h.nbytes;
        }
        Ok(h)
    }

    /// The fields of the first 16 bytes, unchecked.
    fn read_min(src: &[u8]) -> Result<Header> {
        if src.len() < MIN_HEADER_LENGTH {
            return Err(Error::ReadBuffer);
        }
        Ok(Header {
            version: src[0],
            versionlz: src[1],
            flags: src[2],
            typesize: src[3],
            nbytes: le_i32(src, 4),
            blocksize: le_i32(src, 8),
            cbytes: le_i32(src, 12),
            ..Header::default()
        })
    }

    /// Parse and validate the header at the start of `src`.
    pub fn parse(src: &[u8]) -> Result<Header> {
        let mut h = Self::read_min(src)?;
        if h.cbytes < MIN_HEADER_LENGTH as i32 || h.nbytes < 0 {
            return Err(Error::InvalidHeader);
        }
        if h.blocksize <= 0 || h.blocksize > MAX_BLOCKSIZE || h.typesize == 0 {
            return Err(Error::InvalidHeader);
        }
        if h.is_extended() {
            if h.cbytes < EXTENDED_HEADER_LENGTH as i32 {
                return Err(Error::InvalidHeader);
            }
            if src.len() < EXTENDED_HEADER_LENGTH {
                return Err(Error::ReadBuffer);
            }
            h.filters.copy_from_slice(&src[16..22]);
            h.udcompcode = src[22];
            h.compcode_meta = src[23];
            h.filters_meta.copy_from_slice(&src[24..30]);
            h.blosc2_flags2 = src[30];
            h.blosc2_flags = src[31];
            h.validate_special()?;
            if h.version == VERSION_FORMAT_ALPHA {
                h.filters[5] = 0;
                h.filters_meta[5] = 0;
            }
        } else {
            h.filters = filters_from_flags(h.flags);
        }
        if h.version > VERSION_FORMAT_VL_BLOCKS && h.blosc2_flags2 & !VL_BLOCKS != 0 {
            return Err(Error::VersionSupport);
        }
        if h.vlblocks() && h.memcpyed() {
            return Err(Error::InvalidHeader);
        }
        if !h.vlblocks() && h.nbytes > 0 && h.blocksize > h.nbytes {
            h.blocksize = h.nbytes;
        }
        Ok(h)
    }

    fn validate_special(&self) -> Result<()> {
        let special = (self.blosc2_flags >> 4) & 0x7;
        if special == 0 {
            return Ok(());
        }
        if self.vlblocks() || special > Special::Uninit as u8 {
            return Err(Error::InvalidHeader);
        }
        if special == Special::Value as u8 {
            let ts = self.cbytes - EXTENDED_HEADER_LENGTH as i32;
            if ts <= 0 || ts > MAX_TYPESIZE || ts > self.nbytes.max(1) || self.nbytes % ts != 0 {
                return Err(Error::InvalidHeader);
            }
        } else if special != Special::Zero as u8 && self.nbytes % i32::from(self.typesize) != 0 {
            return Err(Error::InvalidHeader);
        }
        Ok(())
    }

    /// Serialize into the first 16 or 32 bytes of `dst`.
    pub fn write(&self, dst: &mut [u8]) {
        dst[0] = self.version;
        dst[1] = self.versionlz;
        dst[2] = self.flags;
        dst[3] = self.typesize;
        dst[4..8].copy_from_slice(&self.nbytes.to_le_bytes());
        dst[8..12].copy_from_slice(&self.blocksize.to_le_bytes());
        dst[12..16].copy_from_slice(&self.cbytes.to_le_bytes());
        if self.is_extended() {
            dst[16..22].copy_from_slice(&self.filters);
            dst[22] = self.udcompcode;
            dst[23] = self.compcode_meta;
            dst[24..30].copy_from_slice(&self.filters_meta);
            dst[30] = self.blosc2_flags2;
            dst[31] = self.blosc2_flags;
        }
    }

    pub fn is_extended(&self) -> bool {
        self.flags & (flags::DOSHUFFLE | flags::DOBITSHUFFLE) == (flags::DOSHUFFLE | flags::DOBITSHUFFLE)
    }
    pub fn header_len(&self) -> usize {
        if self.is_extended() {
            EXTENDED_HEADER_LENGTH
        } else {
            MIN_HEADER_LENGTH
        }
    }
    pub fn memcpyed(&self) -> bool {
        self.flags & flags::MEMCPYED != 0
    }
    pub fn dont_split(&self) -> bool {
        self.flags & flags::DONT_SPLIT != 0
    }
    pub fn vlblocks(&self) -> bool {
        self.is_extended() && self.blosc2_flags2 & VL_BLOCKS != 0
    }
    pub fn lazy(&self) -> bool {
        self.is_extended() && self.blosc2_flags & blosc2_flags::LAZY != 0
    }
    pub fn use_dict(&self) -> bool {
        self.is_extended() && self.blosc2_flags & blosc2_flags::USEDICT != 0
    }
    /// The codec format code (3 high bits of `flags`).
    pub fn compformat(&self) -> u8 {
        self.flags >> 5
    }
    /// The compcode: the format code, or the user-defined codec slot.
    pub fn compcode(&self) -> u8 {
        let f = self.compformat();
        if f == crate::codecs::FORMAT_UDCODEC && self.is_extended() {
            self.udcompcode
        } else {
            match f {
                3 => 4,
                4 => 5,
                x => x,
            }
        }
    }
    pub fn special(&self) -> Special {
        if !self.is_extended() {
            return Special::None;
        }
        match (self.blosc2_flags >> 4) & 0x7 {
            1 => Special::Zero,
            2 => Special::Nan,
            3 => Special::Value,
            4 => Special::Uninit,
            _ => Special::None,
        }
    }
    /// Number of blocks (for VL-block chunks, the header's blocksize field).
    pub fn nblocks(&self) -> usize {
        if self.vlblocks() {
            return self.blocksize as usize;
        }
        let (n, b) = (self.nbytes as usize, self.blocksize as usize);
        n / b + usize::from(n % b != 0)
    }
    /// Size of the last block when shorter than the others (0 otherwise).
    pub fn leftover(&self) -> usize {
        if self.vlblocks() {
            return 0;
        }
        self.nbytes as usize % self.blocksize as usize
    }
}

/// The filter pipeline a Blosc1 header's flags imply.
pub fn filters_from_flags(f: u8) -> [u8; MAX_FILTERS] {
    let mut filters = [0u8; MAX_FILTERS];
    if f & flags::DOSHUFFLE != 0 {
        filters[MAX_FILTERS - 1] = filter::SHUFFLE;
    }
    if f & flags::DOBITSHUFFLE != 0 {
        filters[MAX_FILTERS - 1] = filter::BITSHUFFLE;
    }
    if f & flags::DODELTA != 0 {
        filters[MAX_FILTERS - 2] = filter::DELTA;
    }
    filters
}

/// The Blosc1 flag bits a filter pipeline sets.
pub fn flags_from_filters(filters: &[u8; MAX_FILTERS]) -> u8 {
    filters.iter().fold(0, |acc, &f| {
        acc | match f {
            filter::SHUFFLE => flags::DOSHUFFLE,
            filter::BITSHUFFLE => flags::DOBITSHUFFLE,
            filter::DELTA => flags::DODELTA,
            _ => 0,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            version: 5,
            versionlz: 1,
            flags: 0x07 | 0x20,
            typesize: 4,
            nbytes: 1000,
            blocksize: 400,
            cbytes: 500,
            filters: [0, 0, 0, 0, 0, 1],
            ..Header::default()
        }
    }

    #[test]
    fn write_then_parse_round_trips() {
        let h = sample();
        let mut b = [0u8; 32];
        h.write(&mut b);
        assert_eq!(Header::parse(&b).unwrap(), h);
        assert_eq!(h.nblocks(), 3);
        assert_eq!(h.leftover(), 200);
        assert_eq!(h.compcode(), 1);
    }

    #[test]
    fn rejects_bad_headers() {
        let mut b = [0u8; 32];
        sample().write(&mut b);
        assert_eq!(Header::parse(&b[..15]), Err(Error::ReadBuffer));
        assert_eq!(Header::parse(&b[..20]), Err(Error::ReadBuffer));
        let mut bad = b;
        bad[8..12].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(Header::parse(&bad), Err(Error::InvalidHeader));
        let mut bad = b;
        bad[3] = 0;
        assert_eq!(Header::parse(&bad), Err(Error::InvalidHeader));
        let mut bad = b;
        bad[12..16].copy_from_slice(&20i32.to_le_bytes());
        assert_eq!(Header::parse(&bad), Err(Error::InvalidHeader));
        let mut bad = b;
        bad[31] = 0x70; // special id 7
        assert_eq!(Header::parse(&bad), Err(Error::InvalidHeader));
    }

    #[test]
    fn blosc1_flags_imply_filters() {
        assert_eq!(filters_from_flags(0x1 | 0x8), [0, 0, 0, 0, 3, 1]);
        assert_eq!(flags_from_filters(&[0, 0, 0, 0, 3, 2]), 0x4 | 0x8);
    }
}
