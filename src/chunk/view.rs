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
}

impl<'a> ChunkView<'a> {
    pub fn open(src: &'a [u8]) -> Result<ChunkView<'a>> {
        let header = Header::parse(src)?;
        if header.lazy() && header.special() == Special::None {
            // Lazy chunks only make sense with the frame they came from.
            return Err(Error::InvalidParam);
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
        let mut view = ChunkView { header, data, bstarts_end: hl, dict: None };
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
            let dsize = i32::from_le_bytes(data[bstarts_end..size_end].try_into().map_err(|_| Error::ReadBuffer)?);
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

    /// The start offset of block `j` as stored in bstarts.
    pub fn bstart(&self, j: usize) -> i32 {
        let p = self.header.header_len() + 4 * j;
        i32::from_le_bytes([self.data[p], self.data[p + 1], self.data[p + 2], self.data[p + 3]])
    }

    pub fn is_extended(&self) -> bool {
        self.header.header_len() == EXTENDED_HEADER_LENGTH
    }
}
