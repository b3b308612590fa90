//! Contiguous frames (README_CFRAME_FORMAT.rst; the exact behaviour of
//! c-blosc2 3.3 is in docs/FRAME_BEHAVIOUR.md): header, chunks, offsets
//! index, trailer. Frames held in memory are read by [`FrameView`] and
//! written by [`writer::write_cframe`].

mod bytes;
pub mod header;
pub mod journal;
pub mod live;
mod msgpack;
pub mod offsets;
pub mod trailer;
pub mod writer;

pub use header::FrameHeader;
pub use live::Frame;
pub use msgpack::Metalayer;
pub use offsets::Offsets;
pub use trailer::Trailer;

use crate::chunk::header::{Header, Special, EXTENDED_HEADER_LENGTH};
use crate::error::{Error, Result};
use std::borrow::Cow;

/// Special chunks stored as an offset: bit 63 set, kind in the top byte.
const SPECIAL_BIT: i64 = i64::MIN;

/// One chunk of a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkRef<'a> {
    /// A chunk stored in the frame.
    Stored(&'a [u8]),
    /// A chunk of zeros, NaNs or uninitialized values stored as a special offset.
    Special { kind: Special, nbytes: i32 },
}

/// A contiguous frame in memory, with its header, trailer and offsets checked.
pub struct FrameView<'a> {
    bytes: &'a [u8],
    pub header: FrameHeader,
    pub trailer: Trailer,
    offsets: Offsets,
}

impl<'a> FrameView<'a> {
    /// Parse a contiguous frame held in `bytes` (at least `frame_len` long).
    pub fn parse(bytes: &'a [u8]) -> Result<FrameView<'a>> {
        let header = FrameHeader::parse(bytes, true)?;
        if header.frame_type != 0 {
            return Err(Error::FrameType);
        }
        let flen = usize::try_from(header.frame_len).map_err(|_| Error::InvalidHeader)?;
        let bytes = bytes.get(..flen).ok_or(Error::ReadBuffer)?;
        let trailer = Trailer::parse(bytes, header.header_len)?;
        let mut f = FrameView { bytes, header, trailer, offsets: Offsets::new() };
        f.offsets = f.read_offsets()?;
        Ok(f)
    }

    fn nchunks_from_header(&self, index_nbytes: usize) -> Result<usize> {
        let h = &self.header;
        if h.nbytes == 0 {
            return Ok(0);
        }
        let n = match h.chunksize {
            c if c > 0 => (h.nbytes as u64).div_ceil(c as u64) as usize,
            0 if index_nbytes.is_multiple_of(8) => index_nbytes / 8,
            _ => return Err(Error::InvalidHeader),
        };
        if n > i32::MAX as usize / 8 {
            return Err(Error::InvalidHeader);
        }
        Ok(n)
    }

    /// Decode the offsets index that sits between the chunks and the trailer
    /// (piece by piece into runs: see [`offsets::decode_index`]).
    fn read_offsets(&self) -> Result<Offsets> {
        let h = &self.header;
        if h.nbytes == 0 {
            return Ok(Offsets::new());
        }
        let start = h.header_len.checked_add(h.cbytes as usize).ok_or(Error::InvalidHeader)?;
        if start > self.trailer.offset {
            return Err(Error::InvalidHeader);
        }
        let index = &self.bytes[start..self.trailer.offset];
        let (index_nbytes, _, _) = Header::sizes(index)?;
        if index_nbytes < 0 {
            return Err(Error::InvalidHeader);
        }
        let n = self.nchunks_from_header(index_nbytes as usize)?;
        let limit = (h.cbytes as usize).saturating_sub(EXTENDED_HEADER_LENGTH.min(16)) as i64;
        offsets::decode_index(index, n as u64, self.bytes.len() as u64, |o| {
            if o >= 0 && o > limit {
                return Err(Error::InvalidHeader);
            }
            Ok(o)
        })
    }

    /// The decoded offsets index (offsets into the chunks section, or special values).
    pub fn offsets(&self) -> &Offsets {
        &self.offsets
    }

    /// The chunks section as stored.
    pub fn chunks_section(&self) -> &'a [u8] {
        let start = self.header.header_len;
        let end = start.saturating_add(self.header.cbytes as usize).min(self.bytes.len());
        &self.bytes[start.min(end)..end]
    }

    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    /// The bytes of the whole frame.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The uncompressed size of chunk `i` when all chunks but the last have the same size.
    fn fixed_chunk_nbytes(&self, i: usize) -> Option<i32> {
        let cs = i64::from(self.header.chunksize);
        if cs <= 0 {
            return None;
        }
        let rest = self.header.nbytes - cs * i as i64;
        Some(rest.min(cs) as i32)
    }

    /// Chunk `i`, as stored or as a special value.
    pub fn chunk(&self, i: usize) -> Result<ChunkRef<'a>> {
        let off = self.offsets.get(i).ok_or(Error::InvalidIndex)?;
        if off < 0 {
            let kind = match ((off as u64) >> 56) as u8 & 0x7f {
                1 => Special::Zero,
                2 => Special::Nan,
                4 => Special::Uninit,
                _ => return Err(Error::FrameSpecial),
            };
            if off & !(0xffi64 << 56) != 0 || off & SPECIAL_BIT == 0 {
                return Err(Error::FrameSpecial);
            }
            let nbytes = self.fixed_chunk_nbytes(i).ok_or(Error::FrameSpecial)?;
            return Ok(ChunkRef::Special { kind, nbytes });
        }
        let start = self.header.header_len.checked_add(off as usize).ok_or(Error::InvalidHeader)?;
        let end = self.bytes.len().min(self.header.header_len.saturating_add(self.header.cbytes as usize));
        let avail = self.bytes.get(start..end).ok_or(Error::InvalidHeader)?;
        let (_, cbytes, _) = Header::sizes(avail)?;
        if cbytes < 16 || cbytes as usize > avail.len() {
            return Err(Error::InvalidHeader);
        }
        Ok(ChunkRef::Stored(&avail[..cbytes as usize]))
    }

    /// Chunk `i` as chunk bytes (special chunks are rebuilt as 32-byte chunks).
    pub fn chunk_bytes(&self, i: usize) -> Result<Cow<'a, [u8]>> {
        Ok(match self.chunk(i)? {
            ChunkRef::Stored(b) => Cow::Borrowed(b),
            ChunkRef::Special { kind, nbytes } => {
                let h = Header {
                    version: crate::chunk::header::VERSION_FORMAT_STABLE,
                    versionlz: 1,
                    flags: 0x05,
                    typesize: self.header.typesize.clamp(1, 255) as u8,
                    nbytes,
                    blocksize: if self.header.blocksize > 0 { self.header.blocksize } else { nbytes.max(1) },
                    cbytes: EXTENDED_HEADER_LENGTH as i32,
                    blosc2_flags: (kind as u8) << 4,
                    ..Header::default()
                };
                let mut b = vec![0u8; EXTENDED_HEADER_LENGTH];
                h.write(&mut b);
                Cow::Owned(b)
            }
        })
    }
}
