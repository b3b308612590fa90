//! A validated view of one chunk: its header, block starts and dictionary,
//! with every offset checked against the chunk's bytes before use.

use super::header::{Header, Special, EXTENDED_HEADER_LENGTH};
use crate::error::{Error, Result};

/// Largest dictionary a chunk may hold.
pub const MAX_DICT_SIZE: usize = 32 * 1024;

/// A chunk whose header and sections have been checked.
pub struct ChunkView<'a> {
    pub header: Header,
    /// The chunk bytes, `cbytes` long.
    pub data: &'a [u8],
    /// End of the bstarts section (start of dictionary or streams).
    pub bstarts_end: usize,
    pub dict: Option<&'a [u8]>,
    /// For lazy chunks: where the chunk is in its frame, and each block's size there.
    pub lazy: Option<LazyTrailer<'a>>,
}

/// The trailer of a lazy chunk (README_CHUNK_FORMAT.rst, "Trailer").
#[derive(Clone, Copy)]
pub struct LazyTrailer<'a> {
    /// Number of the chunk in its super-chunk.
    pub nchunk: i32,
    /// Offset of the chunk in its frame.
    pub offset: i64,
    /// `int32` compressed size of every block.
    csizes: &'a [u8],
}

impl LazyTrailer<'_> {
    /// Compressed size of block `j` as the trailer states it.
    pub fn block_csize(&self, j: usize) -> Option<i32> {
        let b = self.csizes.get(4 * j..4 * j + 4)?;
        Some(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Where the blocks of lazy chunks are read from (the frame on disk).
pub trait LazySource: Sync {
    /// Fill `buf` with the bytes at `offset` from the start of chunk `nchunk`,
    /// which begins at byte `chunk_offset` of the frame.
    fn read(&self, nchunk: i32, chunk_offset: i64, offset: i64, buf: &mut [u8]) -> Result<()>;
}

impl<'a> ChunkView<'a> {
    pub fn open(src: &'a [u8]) -> Result<ChunkView<'a>> {
        let header = Header::parse(src)?;
        if header.lazy() && header.special() == Special::None {
            return Self::open_lazy(src, header);
        }
        let cbytes = header.cbytes as usize;
        if cbytes > src.len() {
            return Err(Error::InvalidHeader);
        }
        let data = &src[..cbytes];
        let hl = header.header_len();
        if header.is_extended() && (header.blosc2_flags >> 4) & 0x7 > Special::Uninit as u8 {
            return Err(Error::Data);
        }
        if header.memcpyed() && cbytes != header.nbytes as usize + hl {
            return Err(Error::Data);
        }
        let mut view = ChunkView { header, data, bstarts_end: hl, dict: None, lazy: None };
        if header.special() != Special::None || header.memcpyed() || header.nbytes == 0 && cbytes == hl {
            return Ok(view);
        }
        let nblocks = header.nblocks();
        let bstarts_end = nblocks
            .checked_mul(4)
            .and_then(|b| b.checked_add(hl))
            .filter(|&e| e <= i32::MAX as usize)
            .ok_or(Error::InvalidHeader)?;
        if bstarts_end > cbytes {
            return Err(Error::ReadBuffer);
        }
        view.bstarts_end = bstarts_end;
        if header.use_dict() {
            let size_end = bstarts_end + 4;
            if size_end > cbytes {
                return Err(Error::ReadBuffer);
            }
            let dsize =
                i32::from_le_bytes(data[bstarts_end..size_end].try_into().map_err(|_| Error::ReadBuffer)?);
            if dsize <= 0 || dsize as usize > MAX_DICT_SIZE {
                return Err(Error::CodecDict);
            }
            let end = size_end + dsize as usize;
            if end > cbytes {
                return Err(Error::ReadBuffer);
            }
            view.dict = Some(&data[size_end..end]);
        }
        Ok(view)
    }

    /// A lazy chunk: header, bstarts (for chunks that have them) and trailer;
    /// the blocks and any dictionary stay in the frame.
    fn open_lazy(src: &'a [u8], header: Header) -> Result<ChunkView<'a>> {
        let nblocks = header.nblocks();
        let hl = header.header_len();
        let trailer_at =
            nblocks.checked_mul(4).and_then(|n| n.checked_add(hl)).ok_or(Error::InvalidHeader)?;
        let end = nblocks
            .checked_mul(4)
            .and_then(|n| n.checked_add(trailer_at + 12))
            .ok_or(Error::InvalidHeader)?;
        if end > src.len() {
            return Err(Error::ReadBuffer);
        }
        let i32_at = |p: usize| i32::from_le_bytes([src[p], src[p + 1], src[p + 2], src[p + 3]]);
        let mut offset = [0u8; 8];
        offset.copy_from_slice(&src[trailer_at + 4..trailer_at + 12]);
        let lazy = LazyTrailer {
            nchunk: i32_at(trailer_at),
            offset: i64::from_le_bytes(offset),
            csizes: &src[trailer_at + 12..end],
        };
        if lazy.offset < 0 {
            return Err(Error::InvalidHeader);
        }
        let bstarts_end = if header.memcpyed() { hl } else { trailer_at };
        Ok(ChunkView { header, data: &src[..end], bstarts_end, dict: None, lazy: Some(lazy) })
    }

    /// The start offset of block `j` as stored in bstarts.
    pub fn bstart(&self, j: usize) -> i32 {
        let p = self.header.header_len() + 4 * j;
        i32::from_le_bytes([self.data[p], self.data[p + 1], self.data[p + 2], self.data[p + 3]])
    }

    pub fn is_extended(&self) -> bool {
        self.header.header_len() == EXTENDED_HEADER_LENGTH
    }
}
