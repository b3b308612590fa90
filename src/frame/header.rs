//! The frame header (README_CFRAME_FORMAT.rst "Header"; docs/FRAME_BEHAVIOUR.md §2):
//! 87 bytes of fixed fields, read at fixed positions, then the metalayers.

use super::msgpack::{read_metalayers, Cursor, Metalayer};
use crate::error::{Error, Result};

/// Magic bytes of a frame header.
pub const MAGIC: &[u8; 8] = b"b2frame\0";
/// Length of the fixed part of the header.
pub const FIXED_LEN: usize = 87;
/// Most (fixed-length) metalayers a frame holds.
pub const MAX_METALAYERS: usize = 16;
/// Highest frame format version this library reads.
pub const MAX_VERSION: u8 = 3;

/// The parsed header of a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHeader {
    pub header_len: usize,
    pub frame_len: u64,
    pub general_flags: u8,
    /// 0: contiguous, 1: sparse (directory).
    pub frame_type: u8,
    pub codec_flags: u8,
    pub other_flags: u8,
    pub nbytes: i64,
    pub cbytes: i64,
    pub typesize: i32,
    pub blocksize: i32,
    /// -1 before the first chunk, 0 for variable-size chunks.
    pub chunksize: i32,
    pub tcomp: i16,
    pub tdecomp: i16,
    pub has_vlmetalayers: bool,
    pub filters: [u8; 6],
    pub udcodec: u8,
    pub compcode_meta: u8,
    pub filters_meta: [u8; 6],
    pub other_flags2: u8,
    pub metalayers: Vec<Metalayer>,
}

impl FrameHeader {
    /// Parse the header at the start of `bytes` (the whole frame, or at least its header).
    pub fn parse(bytes: &[u8], check_magic: bool) -> Result<FrameHeader> {
        if bytes.len() < FIXED_LEN {
            return Err(Error::ReadBuffer);
        }
        if check_magic && &bytes[2..10] != MAGIC {
            return Err(Error::FrameType);
        }
        let mut c = Cursor::new(bytes, 11);
        let header_len = c.be_i32()?;
        c.pos = 16;
        let frame_len = c.be_i64()? as u64;
        if header_len < FIXED_LEN as i32 || header_len as u64 > frame_len {
            return Err(Error::InvalidHeader);
        }
        let flags = &bytes[25..29];
        let mut h = FrameHeader {
            header_len: header_len as usize,
            frame_len,
            general_flags: flags[0],
            frame_type: flags[1],
            codec_flags: flags[2],
            other_flags: flags[3],
            nbytes: 0,
            cbytes: 0,
            typesize: 0,
            blocksize: 0,
            chunksize: 0,
            tcomp: 0,
            tdecomp: 0,
            has_vlmetalayers: bytes[68] == 0xc3,
            filters: [0; 6],
            udcodec: bytes[77],
            compcode_meta: bytes[78],
            filters_meta: [0; 6],
            other_flags2: bytes[85],
            metalayers: Vec::new(),
        };
        if h.version() > MAX_VERSION {
            return Err(Error::VersionSupport);
        }
        c.pos = 30;
        h.nbytes = c.be_i64()?;
        c.pos = 39;
        h.cbytes = c.be_i64()?;
        c.pos = 48;
        h.typesize = c.be_i32()?;
        c.pos = 53;
        h.blocksize = c.be_i32()?;
        c.pos = 58;
        h.chunksize = c.be_i32()?;
        let i16_at = |p: usize| i16::from_be_bytes([bytes[p], bytes[p + 1]]);
        h.tcomp = i16_at(63);
        h.tdecomp = i16_at(66);
        if bytes[70] > 6 {
            return Err(Error::InvalidHeader);
        }
        h.filters.copy_from_slice(&bytes[71..77]);
        h.filters_meta.copy_from_slice(&bytes[79..85]);
        if h.typesize <= 0 || h.nbytes < 0 || h.cbytes < 0 {
            return Err(Error::InvalidHeader);
        }
        if bytes.len() < h.header_len {
            return Err(Error::ReadBuffer);
        }
        if h.header_len > FIXED_LEN {
            h.metalayers = read_metalayers(bytes, FIXED_LEN, 0, h.header_len, MAX_METALAYERS)?;
        }
        Ok(h)
    }

    /// Frame format version (low nibble of the general flags).
    pub fn version(&self) -> u8 {
        self.general_flags & 0x0f
    }

    /// Whether chunks may have different sizes.
    pub fn variable_chunks(&self) -> bool {
        self.general_flags & 0x40 != 0
    }

    /// Whether the chunks use variable-length blocks.
    pub fn vl_blocks(&self) -> bool {
        self.general_flags & 0x80 != 0
    }

    /// The compcode of the frame's chunks.
    pub fn compcode(&self) -> u8 {
        match self.codec_flags & 0x0f {
            6 => self.udcodec,
            c => c,
        }
    }

    pub fn clevel(&self) -> u8 {
        self.codec_flags >> 4
    }

    /// The split mode (c-blosc2's BLOSC_*_SPLIT value).
    pub fn splitmode(&self) -> i32 {
        i32::from(self.other_flags & 0x3) + 1
    }

    pub fn use_dict(&self) -> bool {
        self.other_flags2 & 0x1 != 0
    }
}
