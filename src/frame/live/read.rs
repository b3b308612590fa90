//! Reading a frame: its header, index entries, chunks (whole, lazy, or
//! into a caller's buffer) and bytes inside stored chunks.

use super::super::bytes::{Bytes, ChunkHead};
use super::super::header::FrameHeader;
use super::super::writer::Info;
use super::special::special_header;
use super::{decode_special, Entry, Frame, StreamOrigin};
use crate::chunk::header::{Header, Special, EXTENDED_HEADER_LENGTH};
use crate::chunk::view::LazySource;
use crate::error::{Error, Result};
use crate::io::Mode;
use std::borrow::Cow;

impl Frame {
    // ------------------------------------------------------------------ reading

    /// The frame's header as stored (fixed fields and metalayers).
    pub fn header(&self) -> Result<FrameHeader> {
        FrameHeader::parse(&self.bytes.read(0, self.layout.header_len)?, true)
    }

    /// The runs of equal index entries, as `[first, end)` chunk ranges (chunks
    /// of one run have the same size but perhaps the frame's last one).
    pub fn runs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.layout.offsets.spans().map(|(_, a, b)| (a, b))
    }

    pub fn nchunks(&self) -> usize {
        self.layout.offsets.len()
    }

    /// The header's cbytes (chunks section length, or Σ chunk files for sparse frames).
    pub fn cbytes(&self) -> i64 {
        self.layout.cbytes
    }

    pub fn frame_len(&self) -> u64 {
        self.layout.frame_len
    }

    pub fn header_len(&self) -> usize {
        self.layout.header_len
    }

    pub fn is_sparse(&self) -> bool {
        self.dir.is_some()
    }

    pub fn is_memory(&self) -> bool {
        !matches!(self.bytes, Bytes::Stream { .. })
    }

    /// Keep the frame's file open until the hold is dropped, where it would
    /// otherwise be opened for each read (see [`crate::io::Stream::hold`]).
    pub fn hold(&self) -> Option<crate::io::Hold> {
        match &self.bytes {
            Bytes::Stream { stream, .. } => stream.hold(),
            _ => None,
        }
    }

    /// Whether the path of this frame's stream now names another file, when
    /// the stream can tell (see [`crate::io::Stream::path_replaced`]).
    pub fn path_replaced(&self) -> Option<bool> {
        match &self.bytes {
            Bytes::Stream { stream, .. } if self.dir.is_none() => stream.path_replaced(),
            _ => None,
        }
    }

    /// For a frame read from a stream: where it comes from.
    pub fn stream_origin(&self) -> Option<StreamOrigin> {
        match &self.bytes {
            Bytes::Stream { stream, base, writable } if self.dir.is_none() => {
                Some(StreamOrigin { identity: stream.identity(), base: *base, writable: *writable })
            }
            _ => None,
        }
    }

    /// The offsets index as stored (offsets, chunk ids, or special values): a copy.
    pub fn offsets(&self) -> Vec<i64> {
        self.layout.offsets.to_vec()
    }

    /// The whole frame, for in-memory frames.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        self.bytes.slice()
    }

    /// The whole frame (read from its stream when on disk).
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        if self.dir.is_some() {
            return Err(Error::FrameType);
        }
        let len = usize::try_from(self.layout.frame_len).map_err(|_| Error::TwoGbLimit)?;
        Ok(self.bytes.read(0, len)?.into_owned())
    }

    /// How chunk `i` is stored.
    pub fn entry(&self, i: usize) -> Result<Entry> {
        let off = self.layout.offsets.get(i).ok_or(Error::InvalidIndex)?;
        Ok(match decode_special(off)? {
            Some(kind) => Entry::Special(kind),
            None => Entry::Stored(off),
        })
    }

    /// The uncompressed size of an offset-encoded chunk `i` (fixed-size frames only).
    pub(super) fn special_nbytes(&self, info: &Info, i: usize) -> Result<i32> {
        let cs = i64::from(info.chunksize);
        if cs <= 0 {
            return Err(Error::FrameSpecial);
        }
        let rest = info.nbytes - cs * i as i64;
        if rest <= 0 {
            return Err(Error::FrameSpecial);
        }
        Ok(rest.min(cs) as i32)
    }

    /// Where a stored chunk starts in the frame, and how many bytes it may span.
    pub(super) fn stored_span(&self, off: i64) -> Result<(u64, u64)> {
        let hl = self.layout.header_len as u64;
        let cb = self.layout.cbytes as u64;
        let off = off as u64;
        if off >= cb {
            return Err(Error::InvalidHeader);
        }
        Ok((hl + off, cb - off))
    }

    /// The first 32 bytes (or fewer, for a short chunk) of a stored chunk, and its sizes.
    pub(super) fn stored_head(&self, off: i64) -> Result<(ChunkHead, i32, i32)> {
        if let Some(d) = &self.dir {
            return d.read_head(off);
        }
        let (pos, avail) = self.stored_span(off)?;
        let n = avail.min(EXTENDED_HEADER_LENGTH as u64) as usize;
        let head = ChunkHead::read(n, |buf| self.bytes.read_into(pos, buf))?;
        let (nb, cb, _) = Header::sizes(&head)?;
        if cb < 16 || cb as u64 > avail {
            return Err(Error::InvalidHeader);
        }
        Ok((head, nb, cb))
    }

    /// Uncompressed size of chunk `i`.
    pub fn chunk_nbytes(&self, info: &Info, i: usize) -> Result<i32> {
        match self.entry(i)? {
            Entry::Special(_) => self.special_nbytes(info, i),
            Entry::Stored(off) => Ok(self.stored_head(off)?.1),
        }
    }

    /// The `blosc2_flags2` byte of chunk `i` (0 for special chunks).
    pub fn chunk_flags2(&self, i: usize) -> Result<u8> {
        match self.entry(i)? {
            Entry::Special(_) => Ok(0),
            Entry::Stored(off) => {
                let (head, _, _) = self.stored_head(off)?;
                Ok(if head.len() >= EXTENDED_HEADER_LENGTH { head[30] } else { 0 })
            }
        }
    }

    /// Chunk `i` as a complete chunk (special chunks are built as 32-byte chunks).
    pub fn chunk(&self, info: &Info, i: usize) -> Result<Cow<'_, [u8]>> {
        let mut buf = Vec::new();
        Ok(match self.chunk_into(info, i, &mut buf)? {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(buf),
        })
    }

    /// [`Frame::chunk`] with a caller's buffer: `Some(chunk)` when it is
    /// borrowed from an in-memory frame, `None` when it was read (or built)
    /// into `buf`, which then holds exactly the chunk. `buf` keeps its
    /// allocation from call to call (only what it grows by is written twice).
    pub fn chunk_into<'a>(&'a self, info: &Info, i: usize, buf: &mut Vec<u8>) -> Result<Option<&'a [u8]>> {
        match self.entry(i)? {
            Entry::Special(kind) => {
                let n = self.special_nbytes(info, i)?;
                buf.resize(EXTENDED_HEADER_LENGTH, 0);
                special_header(kind, n, info.cparams.typesize, info.cparams.blocksize).write(buf);
                Ok(None)
            }
            Entry::Stored(off) => {
                if let Some(d) = &self.dir {
                    d.read_chunk_into(off, buf)?;
                    let (_, cb, _) = Header::sizes(buf)?;
                    if cb as usize != buf.len() {
                        return Err(Error::InvalidHeader);
                    }
                    return Ok(None);
                }
                let (pos, avail) = self.stored_span(off)?;
                if let Some(s) = self.bytes.slice() {
                    let s = &s[pos as usize..(pos + avail) as usize];
                    let (_, cb, _) = Header::sizes(s)?;
                    if cb < 16 || cb as u64 > avail {
                        return Err(Error::InvalidHeader);
                    }
                    return Ok(Some(&s[..cb as usize]));
                }
                let (_, _, cb) = self.stored_head(off)?;
                buf.resize(cb as usize, 0);
                self.bytes.read_into(pos, buf)?;
                Ok(None)
            }
        }
    }

    /// Chunk `i` as a lazy chunk (docs/FRAME_BEHAVIOUR.md §9): header, block
    /// starts and a trailer saying where the blocks are; the blocks stay in the
    /// frame and are read through [`LazySource`]. In-memory frames and special
    /// chunks give the chunk itself.
    pub fn lazy_chunk(&self, info: &Info, i: usize) -> Result<Cow<'_, [u8]>> {
        let mut buf = Vec::new();
        Ok(match self.lazy_chunk_into(info, i, &mut buf)? {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(buf),
        })
    }

    /// [`Frame::lazy_chunk`] with a caller's buffer, as [`Frame::chunk_into`].
    pub fn lazy_chunk_into<'a>(
        &'a self,
        info: &Info,
        i: usize,
        buf: &mut Vec<u8>,
    ) -> Result<Option<&'a [u8]>> {
        let off = match self.entry(i)? {
            Entry::Stored(off) if !self.is_memory() => off,
            _ => return self.chunk_into(info, i, buf),
        };
        let (head, nbytes, cbytes) = self.stored_head(off)?;
        let h = Header::parse(&head)?;
        // Special chunks are whole already; chunks with variable-length blocks are
        // handed out whole too (their blocks are read through their own layout).
        if h.special() != Special::None
            || h.header_len() != EXTENDED_HEADER_LENGTH
            || nbytes == 0
            || h.vlblocks()
        {
            return self.chunk_into(info, i, buf);
        }
        let nblocks = h.nblocks();
        let bstarts_len = nblocks.checked_mul(4).ok_or(Error::InvalidHeader)?;
        // a memcpyed chunk holds its items: its blocks are no more than its bytes
        if h.memcpyed() && (i64::from(cbytes) < i64::from(nbytes) + EXTENDED_HEADER_LENGTH as i64) {
            return Err(Error::InvalidHeader);
        }
        if !h.memcpyed() && EXTENDED_HEADER_LENGTH + bstarts_len > cbytes as usize {
            return Err(Error::InvalidHeader);
        }
        const AT: usize = EXTENDED_HEADER_LENGTH;
        buf.clear();
        buf.extend_from_slice(&head[..AT]);
        buf[31] |= 0x08;
        buf.resize(AT + bstarts_len, 0);
        if !h.memcpyed() {
            self.read_in_chunk(off, AT as i64, &mut buf[AT..])?;
        }
        let (nchunk, offset) = if self.dir.is_some() {
            (off as i32, off)
        } else {
            (i as i32, off + self.layout.header_len as i64)
        };
        buf.extend_from_slice(&nchunk.to_le_bytes());
        buf.extend_from_slice(&offset.to_le_bytes());
        if h.memcpyed() {
            let bs = h.blocksize.max(1);
            for j in 0..nblocks {
                let last = j + 1 == nblocks && nbytes % bs != 0;
                buf.extend_from_slice(&(if last { nbytes % bs } else { bs }).to_le_bytes());
            }
            return Ok(None);
        }
        // Each block's stored size: from its start to the next larger start
        // (or the chunk's end). Blocks are usually stored in order, and then
        // that is the next start on; otherwise the starts are sorted aside.
        let start = |buf: &[u8], j: usize| {
            i32::from_le_bytes(buf[AT + 4 * j..AT + 4 * j + 4].try_into().expect("4 bytes"))
        };
        let mut in_order = true;
        for j in 0..nblocks {
            let s = start(buf, j);
            // a block starts inside the chunk, after the header and the starts
            if s < (AT + bstarts_len) as i32 || s > cbytes {
                return Err(Error::InvalidHeader);
            }
            in_order &= j == 0 || start(buf, j - 1) <= s;
        }
        let sizes = buf.len();
        buf.resize(sizes + 4 * nblocks, 0);
        let put = |buf: &mut Vec<u8>, j: usize, size: i32| {
            buf[sizes + 4 * j..sizes + 4 * j + 4].copy_from_slice(&size.to_le_bytes())
        };
        if in_order {
            // Backwards: the next larger start of block j is block j+1's
            // start if that is larger, else (the same start) block j+1's.
            let mut next = cbytes;
            for j in (0..nblocks).rev() {
                let s = start(buf, j);
                if j + 1 < nblocks && start(buf, j + 1) > s {
                    next = start(buf, j + 1);
                }
                put(buf, j, next - s);
            }
        } else {
            let mut sorted: Vec<i32> = (0..nblocks).map(|j| start(buf, j)).collect();
            sorted.sort_unstable();
            for j in 0..nblocks {
                let s = start(buf, j);
                let next = sorted.get(sorted.partition_point(|&t| t <= s)).copied().unwrap_or(cbytes);
                put(buf, j, next - s);
            }
        }
        Ok(None)
    }

    /// Read bytes of the stored chunk `off` (offset or id), `at` bytes from its start.
    pub(super) fn read_in_chunk(&self, off: i64, at: i64, buf: &mut [u8]) -> Result<()> {
        if let Some(d) = &self.dir {
            let s = d.backend.open(&d.chunk_path(off), Mode::Read)?;
            return s.read_exact_at(at as u64, buf);
        }
        let (pos, avail) = self.stored_span(off)?;
        if at < 0 || at as u64 + buf.len() as u64 > avail {
            return Err(Error::ReadBuffer);
        }
        self.bytes.read_into(pos + at as u64, buf)
    }
}

impl LazySource for Frame {
    fn read(&self, nchunk: i32, chunk_offset: i64, offset: i64, buf: &mut [u8]) -> Result<()> {
        if self.dir.is_some() {
            return self.read_in_chunk(i64::from(nchunk), offset, buf);
        }
        let off = chunk_offset - self.layout.header_len as i64;
        if off < 0 {
            return Err(Error::ReadBuffer);
        }
        self.read_in_chunk(off, offset, buf)
    }
}
