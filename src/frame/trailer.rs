//! The frame trailer (README_CFRAME_FORMAT.rst "Trailer"; docs/FRAME_BEHAVIOUR.md §4):
//! the variable-length metalayers, the trailer length and an (unused) fingerprint.

use super::msgpack::{read_metalayers, Cursor, Metalayer};
use crate::error::{Error, Result};

/// Bytes at the end of every frame: `ce <u32 trailer_len> d8 <type> <16 bytes>`.
pub const END_LEN: usize = 23;
/// Shortest trailer (no variable-length metalayers).
pub const MIN_LEN: usize = 25;
/// Most variable-length metalayers a frame holds.
pub const MAX_VLMETALAYERS: usize = 8 * 1024;

/// The parsed trailer: where it starts and the (still compressed) vlmetalayers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    pub offset: usize,
    pub len: usize,
    /// Contents are Blosc2 chunks, as stored.
    pub vlmetalayers: Vec<Metalayer>,
}

impl Trailer {
    /// Parse the trailer of `frame` (exactly `frame_len` bytes) whose header is `header_len` long.
    pub fn parse(frame: &[u8], header_len: usize) -> Result<Trailer> {
        let flen = frame.len();
        if flen < header_len + MIN_LEN {
            return Err(Error::ReadBuffer);
        }
        let mut c = Cursor::new(frame, flen - END_LEN);
        c.marker(0xce)?;
        let len = c.be_u32()? as usize;
        if len < MIN_LEN || len > flen - header_len || len > i32::MAX as usize {
            return Err(Error::InvalidHeader);
        }
        let offset = flen - len;
        let mut t = Cursor::new(frame, offset);
        let m = t.u8()?;
        if m != 0x94 {
            return Err(Error::InvalidHeader);
        }
        t.u8()?; // trailer version
        let vlmetalayers = if len > MIN_LEN + 2 {
            read_metalayers(frame, offset + 2, offset, flen, MAX_VLMETALAYERS)?
        } else {
            Vec::new()
        };
        Ok(Trailer { offset, len, vlmetalayers })
    }
}
