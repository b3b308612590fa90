//! An open frame: contiguous in memory, contiguous in a file (possibly at an
//! offset inside a larger file) or sparse (a directory of chunk files with an
//! index frame). It keeps the offsets index in memory and reads chunks on
//! demand; every mutation writes what c-blosc2 3.3 writes
//! (docs/FRAME_BEHAVIOUR.md §5, §7) so that the bytes come out the same.
//!
//! The header fields that belong to the super-chunk (nbytes, chunksize,
//! metalayers, ...) are passed in as an [`Info`] by the caller.

use super::bytes::{Bytes, ChunkHead, Directory};
use super::journal::{Journal, Undo};
use super::offsets::{decode_index, Offsets};
use super::header::{FrameHeader, FIXED_LEN};
use super::trailer::{Trailer, END_LEN, MIN_LEN};
use super::writer::{header, index_chunk, trailer, Info};
use super::Metalayer;
use crate::chunk::header::{Header, Special, EXTENDED_HEADER_LENGTH, VL_BLOCKS};
use crate::chunk::view::LazySource;
use crate::chunk::{CParams, SplitMode};
use crate::error::{Error, Result};
use crate::io::{Backend, Mode, Stream};
use std::borrow::Cow;
use std::sync::Arc;

/// Name of the index frame inside a sparse frame's directory.
pub const SPARSE_INDEX: &str = "chunks.b2frame";
/// Bit 63: an offset that encodes a special chunk.
const SPECIAL_BIT: i64 = i64::MIN;
/// Shortest possible frame: fixed header and empty trailer.
pub const MIN_FRAME_LEN: u64 = (FIXED_LEN + MIN_LEN) as u64;

/// The offset value that encodes special chunk `kind`.
pub fn special_offset(kind: Special) -> i64 {
    (((0x80 | kind as u8) as u64) << 56) as i64
}

/// Whether a chunk of this kind is stored as an offset rather than as bytes.
pub fn offset_encoded(kind: Special) -> bool {
    matches!(kind, Special::Zero | Special::Nan | Special::Uninit)
}

/// The special kind an offset encodes (`None` for a stored chunk), or an error
/// for a negative offset that is not a valid special value.
fn decode_special(off: i64) -> Result<Option<Special>> {
    if off >= 0 {
        return Ok(None);
    }
    if off & !(0xffi64 << 56) != 0 || off & SPECIAL_BIT == 0 {
        return Err(Error::FrameSpecial);
    }
    match ((off as u64) >> 56) as u8 & 0x7f {
        1 => Ok(Some(Special::Zero)),
        2 => Ok(Some(Special::Nan)),
        4 => Ok(Some(Special::Uninit)),
        _ => Err(Error::FrameSpecial),
    }
}

/// A 32-byte chunk of `nbytes` special values.
pub fn special_chunk(kind: Special, nbytes: i32, typesize: i32, blocksize: i32) -> Vec<u8> {
    let mut b = vec![0u8; EXTENDED_HEADER_LENGTH];
    special_header(kind, nbytes, typesize, blocksize).write(&mut b);
    b
}

/// The header of [`special_chunk`] (which is all of it).
fn special_header(kind: Special, nbytes: i32, typesize: i32, blocksize: i32) -> Header {
    Header {
        version: crate::chunk::header::VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: 0x05,
        typesize: typesize.clamp(1, 255) as u8,
        nbytes,
        blocksize: if blocksize > 0 {
            blocksize
        } else {
            crate::chunk::blocksize::compute(0, 5, typesize, nbytes, 0, SplitMode::ForwardCompat, 0x1)
        },
        cbytes: EXTENDED_HEADER_LENGTH as i32,
        blosc2_flags: (kind as u8) << 4,
        ..Header::default()
    }
}

/// The layout state that every mutation replaces as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    header_len: usize,
    frame_len: u64,
    /// Header cbytes: length of the chunks section (contiguous) or Σ chunk file sizes (sparse).
    cbytes: i64,
    /// Offsets into the chunks section, chunk ids (sparse), or special values.
    offsets: Offsets,
    /// How many entries the offsets buffer is compressed for (see writer::index_chunk).
    index_capacity: usize,
    /// The index is one run-length chunk (what c-blosc2's fill_special writes).
    run_length: bool,
}

/// One chunk as the frame stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Stored bytes at this offset of the chunks section (contiguous) or with this id (sparse).
    Stored(i64),
    /// A run of special values, stored as an offset.
    Special(Special),
}

/// An open frame.
pub struct Frame {
    bytes: Bytes,
    dir: Option<Directory>,
    layout: Layout,
    /// The undo journal of a frame file (see [`super::journal`]).
    journal: Option<Box<Journal>>,
    /// The change in progress, when journaled.
    txn: Option<Box<Txn>>,
    /// Chunks are being added in bulk (a new frame being filled): the index,
    /// trailer and header are written once, at [`Frame::end_batch`].
    batch: bool,
    /// A failed change could not be undone in place (its journal waits for
    /// the next open): no more changes through this handle.
    broken: bool,
}

/// A journaled change in progress: what undoes it, and the layout before it.
struct Txn {
    depth: u32,
    undo: Undo,
    layout: Layout,
    /// Chunk files (sparse frames) the change wrote, removed if it is undone.
    added: Vec<i64>,
    /// Chunk files the change no longer needs, removed once it is committed.
    dropped: Vec<i64>,
}

/// A shifted tail of chunks up to this size is journaled and moved as
/// c-blosc2 moves it; beyond it, an updated chunk is written in place or at
/// the end instead (journaling is bounded by a few chunks).
const SHIFT_LIMIT: u64 = 16 << 20;

/// What opening a frame produces: the frame and the super-chunk state its header holds.
pub struct Opened {
    pub frame: Frame,
    pub info: Info,
}

fn info_from_header(h: &FrameHeader, vlmetalayers: Vec<Metalayer>) -> Info {
    let cparams = CParams {
        compcode: h.compcode(),
        compcode_meta: h.compcode_meta,
        clevel: h.clevel(),
        use_dict: h.use_dict(),
        typesize: h.typesize,
        nthreads: h.tcomp.max(1),
        blocksize: h.blocksize,
        splitmode: SplitMode::from_code(h.splitmode()),
        filters: h.filters,
        filters_meta: h.filters_meta,
        owner: 0,
        schunk: None,
    };
    Info {
        cparams,
        tcomp: h.tcomp,
        tdecomp: h.tdecomp,
        nbytes: h.nbytes,
        chunksize: h.chunksize,
        vl_blocks: h.vl_blocks(),
        metalayers: h.metalayers.clone(),
        vlmetalayers,
    }
}

impl Frame {
    // ----------------------------------------------------------------- creating

    fn empty(bytes: Bytes, dir: Option<Directory>) -> Frame {
        Frame {
            bytes,
            dir,
            journal: None,
            txn: None,
            batch: false,
            broken: false,
            layout: Layout {
                header_len: 0,
                frame_len: 0,
                cbytes: 0,
                offsets: Offsets::new(),
                index_capacity: 0,
                run_length: false,
            },
        }
    }

    /// A new, empty in-memory contiguous frame.
    pub fn new_memory(info: &Info) -> Result<Frame> {
        let mut f = Frame::empty(Bytes::Memory(Vec::new()), None);
        f.rewrite_whole(info)?;
        Ok(f)
    }

    /// A new, empty contiguous frame written to `stream` at `base`.
    pub fn new_stream(stream: Box<dyn Stream>, base: u64, info: &Info) -> Result<Frame> {
        let mut f = Frame::empty(Bytes::Stream { stream, base, writable: true }, None);
        f.rewrite_whole(info)?;
        Ok(f)
    }

    /// A new, empty sparse frame in directory `path` (which must not exist).
    pub fn new_sparse(path: &str, backend: Arc<dyn Backend>, info: &Info) -> Result<Frame> {
        // The directory is made on the filesystem whatever the backend (as c-blosc2 does).
        std::fs::create_dir(path).map_err(|_| Error::FileOpen)?;
        let stream = backend.open(&format!("{path}/{SPARSE_INDEX}"), Mode::Create)?;
        let dir = Directory { path: path.to_string(), backend };
        let mut f = Frame::empty(Bytes::Stream { stream, base: 0, writable: true }, Some(dir));
        f.rewrite_whole(info)?;
        Ok(f)
    }

    // ------------------------------------------------------------------ opening

    /// Open an in-memory contiguous frame (exactly `frame_len` bytes).
    pub fn from_vec(bytes: Vec<u8>) -> Result<Opened> {
        Frame::open_bytes(Bytes::Memory(bytes), None, true)
    }

    /// Open an in-memory contiguous frame owned elsewhere (copied on the first change).
    pub fn from_shared(bytes: Arc<dyn AsRef<[u8]> + Send + Sync>) -> Result<Opened> {
        Frame::open_bytes(Bytes::Foreign(bytes), None, true)
    }

    /// Open the contiguous frame that starts at `base` in `stream`.
    pub fn open_stream(stream: Box<dyn Stream>, base: u64, writable: bool) -> Result<Opened> {
        Frame::open_bytes(Bytes::Stream { stream, base, writable }, None, false)
    }

    /// Open the sparse frame in directory `path`.
    pub fn open_sparse(path: &str, backend: Arc<dyn Backend>, writable: bool) -> Result<Opened> {
        let mode = if writable { Mode::Update } else { Mode::Read };
        let index = format!("{path}/{SPARSE_INDEX}");
        let mut stream = backend.open(&index, mode)?;
        if backend.sidecar().is_some() {
            // A change a dead process left half done is undone first.
            stream = super::journal::recover(&index, stream, 0, writable)?;
        }
        let dir = Directory { path: path.to_string(), backend };
        Frame::open_bytes(Bytes::Stream { stream, base: 0, writable }, Some(dir), false)
    }

    fn open_bytes(bytes: Bytes, dir: Option<Directory>, exact: bool) -> Result<Opened> {
        let (layout, info) = parse(&bytes, dir.is_some(), exact)?;
        let frame = Frame { bytes, dir, layout, journal: None, txn: None, batch: false, broken: false };
        if exact {
            // An in-memory frame must account for all its bytes (as c-blosc2 checks).
            frame.check_nbytes(&info)?;
        }
        Ok(Opened { frame, info })
    }

    /// Σ of the chunks' nbytes must be the header's nbytes.
    fn check_nbytes(&self, info: &Info) -> Result<()> {
        let mut total = 0i64;
        // A run of equal entries counts at once (a crafted index can repeat
        // one entry billions of times in a few bytes).
        for (v, start, end) in self.layout.offsets.spans() {
            let count = (end - start) as i64;
            if decode_special(v)?.is_some() {
                // full chunks, the frame's last one perhaps not
                let cs = i64::from(info.chunksize);
                if cs <= 0 {
                    return Err(Error::InvalidHeader);
                }
                total = total.saturating_add(cs.saturating_mul(count - 1));
                total = total.saturating_add(i64::from(self.chunk_nbytes(info, end - 1)?));
            } else {
                // the same stored chunk each time
                total = total.saturating_add(i64::from(self.chunk_nbytes(info, start)?).saturating_mul(count));
            }
        }
        if total == info.nbytes {
            Ok(())
        } else {
            Err(Error::InvalidHeader)
        }
    }

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
    fn special_nbytes(&self, info: &Info, i: usize) -> Result<i32> {
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
    fn stored_span(&self, off: i64) -> Result<(u64, u64)> {
        let hl = self.layout.header_len as u64;
        let cb = self.layout.cbytes as u64;
        let off = off as u64;
        if off >= cb {
            return Err(Error::InvalidHeader);
        }
        Ok((hl + off, cb - off))
    }

    /// The first 32 bytes (or fewer, for a short chunk) of a stored chunk, and its sizes.
    fn stored_head(&self, off: i64) -> Result<(ChunkHead, i32, i32)> {
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
    pub fn lazy_chunk_into<'a>(&'a self, info: &Info, i: usize, buf: &mut Vec<u8>) -> Result<Option<&'a [u8]>> {
        let off = match self.entry(i)? {
            Entry::Stored(off) if !self.is_memory() => off,
            _ => return self.chunk_into(info, i, buf),
        };
        let (head, nbytes, cbytes) = self.stored_head(off)?;
        let h = Header::parse(&head)?;
        // Special chunks are whole already; chunks with variable-length blocks are
        // handed out whole too (their blocks are read through their own layout).
        if h.special() != Special::None || h.header_len() != EXTENDED_HEADER_LENGTH || nbytes == 0 || h.vlblocks() {
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
        let (nchunk, offset) = if self.dir.is_some() { (off as i32, off) } else { (i as i32, off + self.layout.header_len as i64) };
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
        let start = |buf: &[u8], j: usize| i32::from_le_bytes(buf[AT + 4 * j..AT + 4 * j + 4].try_into().expect("4 bytes"));
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
        let put = |buf: &mut Vec<u8>, j: usize, size: i32| buf[sizes + 4 * j..sizes + 4 * j + 4].copy_from_slice(&size.to_le_bytes());
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
    fn read_in_chunk(&self, off: i64, at: i64, buf: &mut [u8]) -> Result<()> {
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

    // ------------------------------------------------------------ crash safety

    /// Whether changes of this frame are journaled (and so undone on failure).
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some() && !self.is_memory()
    }

    /// Make the changes of this frame file crash-safe with `journal`.
    pub fn set_journal(&mut self, journal: Journal) {
        self.journal = Some(Box::new(journal));
    }

    /// Start a change: until [`Frame::end_change`], what the change overwrites
    /// in the frame file is first saved in the journal (the header and the
    /// offsets index and trailer at once, more as the change needs it).
    /// Nested starts only count. A no-op for frames without a journal.
    pub fn begin_change(&mut self) -> Result<()> {
        if self.batch {
            return Ok(());
        }
        if self.broken {
            crate::trace!("a failed change of this frame could not be undone; reopen it to recover");
            return Err(Error::FileWrite);
        }
        if let Some(t) = self.txn.as_mut() {
            t.depth += 1;
            return Ok(());
        }
        if self.journal.is_none() {
            return Ok(());
        }
        let Bytes::Stream { stream, .. } = &self.bytes else { return Ok(()) };
        let identity = stream.identity().unwrap_or((0, 0));
        let undo = Undo { identity, old_len: self.layout.frame_len, regions: Vec::new() };
        self.txn = Some(Box::new(Txn { depth: 1, undo, layout: self.layout.clone(), added: Vec::new(), dropped: Vec::new() }));
        let from = if self.dir.is_some() { 0 } else { self.layout.header_len as u64 + self.layout.cbytes.max(0) as u64 };
        let hl = self.layout.header_len as u64;
        if let Err(e) = self.need(from, Some((0, hl))) {
            self.txn = None;
            return Err(e);
        }
        Ok(())
    }

    /// End the change begun last: on success, the commit point (the journal
    /// is emptied); on failure the old bytes and layout are put back.
    pub fn end_change<T>(&mut self, r: Result<T>) -> Result<T> {
        let Some(t) = self.txn.as_mut() else { return r };
        t.depth -= 1;
        if t.depth > 0 {
            return r;
        }
        let Some(t) = self.txn.take() else { return r };
        let journal = self.journal.as_mut().ok_or(Error::Failure)?;
        let committed = match r {
            Ok(v) if t.undo.regions.is_empty() => Ok(v),
            Ok(v) => journal.commit().map(|()| v),
            Err(e) => Err(e),
        };
        let e = match committed {
            Ok(v) => {
                // the old chunk files go once nothing can bring them back
                self.remove_files(&t.dropped);
                return Ok(v);
            }
            Err(e) => e,
        };
        self.remove_files(&t.added);
        // Undo: the old bytes, the old length, the old layout.
        self.layout = t.layout;
        let mut put_back = Ok(());
        for (pos, bytes) in &t.undo.regions {
            put_back = put_back.and_then(|()| self.bytes.write(*pos, bytes));
        }
        put_back = put_back.and_then(|()| self.bytes.truncate(t.undo.old_len));
        if put_back.is_ok() {
            if let Some(j) = self.journal.as_mut() {
                let _ = j.commit();
            }
        } else {
            // the journal stays for the next open, which puts the frame back
            self.broken = true;
        }
        Err(e)
    }

    fn remove_files(&self, ids: &[i64]) {
        if let Some(d) = &self.dir {
            for &id in ids {
                // a failure only leaves a stray file
                let _ = d.remove_chunk(id);
            }
        }
    }

    /// Remove chunk file `id` once the change is committed (at once outside a change).
    fn drop_file(&mut self, id: i64) {
        match self.txn.as_mut() {
            Some(t) => t.dropped.push(id),
            None => self.remove_files(&[id]),
        }
    }

    /// Save in the journal, if not yet, the bytes of the old frame from
    /// `from` to its end and those of `extra` (position, length), before the
    /// change writes there. Old chunk bytes nobody references need not be
    /// saved: a long stretch of the chunks section is saved chunk by chunk.
    fn need(&mut self, from: u64, extra: Option<(u64, u64)>) -> Result<()> {
        let Some(t) = self.txn.as_ref() else { return Ok(()) };
        let old_len = t.undo.old_len;
        let old = &t.layout;
        let mut want: Vec<(u64, u64)> = Vec::new();
        let section_end = if self.dir.is_some() { 0 } else { old.header_len as u64 + old.cbytes.max(0) as u64 };
        if from < section_end && section_end - from > SHIFT_LIMIT {
            // only the chunks stored there
            for off in old.offsets.values() {
                if off >= 0 {
                    let at = old.header_len as u64 + off as u64;
                    if at >= from && at < section_end {
                        let cb = self.stored_head(off).map_or(0, |h| h.2.max(0) as u64);
                        want.push((at, at + cb));
                    }
                }
            }
            want.push((section_end, old_len));
        } else {
            want.push((from, old_len));
        }
        if let Some((p, n)) = extra {
            want.push((p, p.saturating_add(n)));
        }
        let mut add = Vec::new();
        for (a, b) in want {
            let b = b.min(old_len);
            let mut pieces = vec![(a, b)];
            for (p, bytes) in &t.undo.regions {
                let (c, d) = (*p, p + bytes.len() as u64);
                pieces = pieces
                    .into_iter()
                    .flat_map(|(x, y)| {
                        let mut out = Vec::new();
                        if x < c.min(y) {
                            out.push((x, c.min(y)));
                        }
                        if d.max(x) < y {
                            out.push((d.max(x), y));
                        }
                        out
                    })
                    .collect();
            }
            for (x, y) in pieces {
                if x < y && !add.iter().any(|&(p, q): &(u64, u64)| p <= x && y <= q) {
                    add.push((x, y));
                }
            }
        }
        if add.is_empty() {
            return Ok(());
        }
        let mut regions = Vec::new();
        for (x, y) in add {
            let len = usize::try_from(y - x).map_err(|_| Error::MemoryAlloc)?;
            regions.push((x, self.bytes.read(x, len)?.into_owned()));
        }
        let t = self.txn.as_mut().ok_or(Error::Failure)?;
        t.undo.regions.extend(regions);
        let undo = t.undo.clone();
        self.journal.as_mut().ok_or(Error::Failure)?.begin(&undo)
    }

    // ------------------------------------------------------------------ writing

    /// Write the index, the trailer and the header for `layout` and `info`
    /// (the chunks section is already in place), then cut the frame there.
    fn write_tail(&mut self, info: &Info, layout: &mut Layout) -> Result<()> {
        let sparse = self.dir.is_some();
        let mut hdr = header(info, layout.cbytes, sparse)?;
        let hl = hdr.len();
        let index = if info.nbytes == 0 {
            Vec::new()
        } else if layout.run_length {
            run_length_index(layout.offsets.get(0).unwrap_or(0), layout.offsets.len())?
        } else {
            index_chunk(&layout.offsets, layout.index_capacity)?
        };
        let tail_at = if sparse || info.nbytes == 0 { hl as u64 } else { hl as u64 + layout.cbytes as u64 };
        self.need(tail_at, Some((0, hl as u64)))?;
        let mut tail = index;
        tail.extend_from_slice(&trailer(&info.vlmetalayers)?);
        let flen = tail_at + tail.len() as u64;
        hdr[16..24].copy_from_slice(&flen.to_be_bytes());
        self.bytes.write(tail_at, &tail)?;
        self.bytes.write(0, &hdr)?;
        self.bytes.truncate(flen)?;
        layout.header_len = hl;
        layout.frame_len = flen;
        Ok(())
    }

    /// Start adding chunks in bulk to a frame nobody reads yet (a copy being
    /// made): each addition only places its chunk; the index, trailer and
    /// header are written once by [`Frame::end_batch`] (else the index would be
    /// rewritten at every chunk). Not journaled: the frame is new.
    pub fn begin_batch(&mut self) {
        self.batch = true;
    }

    /// Write the index, trailer and header for what was added since [`Frame::begin_batch`].
    pub fn end_batch(&mut self, info: &Info) -> Result<()> {
        self.batch = false;
        let mut layout = self.layout.clone();
        layout.run_length = false;
        self.write_tail(info, &mut layout)?;
        self.layout = layout;
        Ok(())
    }

    /// Write `layout` as the new state; on failure put the old one back.
    fn commit(&mut self, info: &Info, old_info: &Info, mut layout: Layout) -> Result<()> {
        layout.run_length = false;
        if self.batch {
            self.layout = layout;
            return Ok(());
        }
        self.install(info, old_info, layout)
    }

    /// Write `layout` as it is (the index form included); on failure put the old one back.
    fn install(&mut self, info: &Info, old_info: &Info, mut layout: Layout) -> Result<()> {
        match self.write_tail(info, &mut layout) {
            Ok(()) => {
                self.layout = layout;
                Ok(())
            }
            Err(e) => {
                let mut old = self.layout.clone();
                let _ = self.write_tail(old_info, &mut old);
                Err(e)
            }
        }
    }

    /// Write the whole frame for the current layout (a new frame, or after a
    /// metalayer was added: the header changes length).
    fn rewrite_whole(&mut self, info: &Info) -> Result<()> {
        let mut layout = self.layout.clone();
        self.write_tail(info, &mut layout)?;
        self.layout = layout;
        Ok(())
    }

    /// Store a chunk's bytes (at the end of the chunks section, or as a new
    /// chunk file); returns its offset (or id) and the new cbytes.
    fn store(&mut self, chunk: &[u8]) -> Result<(i64, i64)> {
        let cb = self.layout.cbytes;
        if let Some(d) = &self.dir {
            let mut id = self.layout.offsets.values().filter(|&o| o >= 0).max().map_or(0, |m| m + 1);
            if let Some(t) = self.txn.as_ref() {
                // not one the change wrote already, nor one it will remove
                let taken = t.added.iter().chain(&t.dropped).copied().max().map_or(0, |m| m + 1);
                id = id.max(taken);
            }
            d.write_chunk(id, chunk)?;
            if let Some(t) = self.txn.as_mut() {
                t.added.push(id);
            }
            return Ok((id, cb + chunk.len() as i64));
        }
        let at = self.layout.header_len as u64 + cb as u64;
        self.need(at, None)?;
        self.bytes.write(at, chunk)?;
        Ok((cb, cb + chunk.len() as i64))
    }

    /// Insert `chunk` (a complete, validated chunk) at position `pos`;
    /// `info` already holds the new nbytes and chunksize.
    pub fn insert(&mut self, info: &Info, old_info: &Info, pos: usize, chunk: &[u8], kind: Special) -> Result<()> {
        if pos > self.nchunks() {
            return Err(Error::InvalidIndex);
        }
        // After every chunk was deleted the chunks section keeps its old length
        // (unreferenced bytes), and new chunks go after it, as in c-blosc2.
        if self.batch && pos == self.nchunks() {
            // a new frame being filled: no copy of the layout per chunk
            let entry = if offset_encoded(kind) && info.chunksize != 0 {
                special_offset(kind)
            } else {
                let (off, cb) = self.store(chunk)?;
                self.layout.cbytes = cb;
                off
            };
            self.layout.offsets.push(entry);
            self.layout.index_capacity = self.layout.offsets.len();
            return Ok(());
        }
        let mut layout = self.layout.clone();
        let entry = if offset_encoded(kind) && info.chunksize != 0 {
            special_offset(kind)
        } else {
            let (off, cb) = self.store(chunk)?;
            layout.cbytes = cb;
            off
        };
        layout.offsets.insert(pos, entry);
        layout.index_capacity = layout.offsets.len();
        let r = self.commit(info, old_info, layout);
        if r.is_err() && entry >= 0 {
            if let Some(d) = &self.dir {
                let _ = d.remove_chunk(entry);
            }
        }
        r
    }

    /// Replace chunk `pos` (docs/FRAME_BEHAVIOUR.md §5.3 and §7.3).
    pub fn update(&mut self, info: &Info, old_info: &Info, pos: usize, chunk: &[u8], kind: Special) -> Result<()> {
        let old = self.entry(pos)?;
        let mut layout = self.layout.clone();
        let new_special = offset_encoded(kind) && info.chunksize != 0;
        if self.dir.is_some() {
            let mut remove = None;
            match (old, new_special) {
                (Entry::Stored(id), false) => {
                    // A new file: the old one holds the old content until the index says otherwise.
                    let (_, _, ocb) = self.stored_head(id)?;
                    let (nid, _) = self.store(chunk)?;
                    layout.offsets.set(pos, nid);
                    layout.cbytes += chunk.len() as i64 - i64::from(ocb);
                    remove = Some(id);
                }
                (Entry::Stored(id), true) => {
                    let (_, _, ocb) = self.stored_head(id)?;
                    layout.offsets.set(pos, special_offset(kind));
                    layout.cbytes -= i64::from(ocb);
                    remove = Some(id);
                }
                (Entry::Special(_), false) => {
                    let (id, cb) = self.store(chunk)?;
                    layout.offsets.set(pos, id);
                    layout.cbytes = cb;
                }
                (Entry::Special(_), true) => layout.offsets.set(pos, special_offset(kind)),
            }
            layout.index_capacity = layout.offsets.len();
            let added = layout.offsets.get(pos).unwrap_or(-1);
            let old_entry = self.layout.offsets.get(pos).unwrap_or(-1);
            if let Err(e) = self.commit(info, old_info, layout) {
                if let (Some(d), true) = (&self.dir, added >= 0 && added != old_entry) {
                    let _ = d.remove_chunk(added);
                }
                return Err(e);
            }
            if let Some(id) = remove {
                self.drop_file(id);
            }
            return Ok(());
        }
        match old {
            Entry::Stored(off) => {
                let (_, _, ocb) = self.stored_head(off)?;
                // c-blosc2 takes a stored chunk of exactly 32 bytes as empty.
                let ocb = if ocb == 32 { 0 } else { i64::from(ocb) };
                let ncb = if new_special { 0 } else { chunk.len() as i64 };
                let delta = ncb - ocb;
                let hl = layout.header_len as u64;
                let tail_from = off + ocb;
                let tail_len = (layout.cbytes - tail_from).max(0) as u64;
                if tail_len > SHIFT_LIMIT {
                    // Too much to move safely: the old bytes stay where they are.
                    if new_special {
                        layout.offsets.set(pos, special_offset(kind));
                    } else {
                        let room = layout.offsets.values().filter(|&o| o > off).min().unwrap_or(layout.cbytes) - off;
                        if ncb <= room {
                            self.need(self.layout.frame_len, Some((hl + off as u64, ncb as u64)))?;
                            self.bytes.write(hl + off as u64, chunk)?;
                        } else {
                            let (noff, cb) = self.store(chunk)?;
                            layout.offsets.set(pos, noff);
                            layout.cbytes = cb;
                        }
                    }
                    layout.index_capacity = layout.offsets.len();
                    return self.commit(info, old_info, layout);
                }
                self.need(hl + off as u64, None)?;
                self.bytes.shift(hl + tail_from as u64, (hl as i64 + tail_from + delta) as u64, tail_len)?;
                if !new_special {
                    self.bytes.write(hl + off as u64, chunk)?;
                }
                layout.offsets.map_values(|o| if o > off { o + delta } else { o });
                layout.offsets.set(pos, if new_special { special_offset(kind) } else { off });
                layout.cbytes += delta;
            }
            Entry::Special(_) => {
                let entry = if new_special {
                    special_offset(kind)
                } else {
                    let (off, cb) = self.store(chunk)?;
                    layout.cbytes = cb;
                    off
                };
                layout.offsets.set(pos, entry);
            }
        }
        layout.index_capacity = layout.offsets.len();
        self.commit(info, old_info, layout)
    }

    /// Remove chunk `pos` from the index. In a contiguous frame its bytes stay
    /// (as in c-blosc2); in a sparse frame its file is removed.
    pub fn delete(&mut self, info: &Info, old_info: &Info, pos: usize) -> Result<()> {
        let old = self.entry(pos)?;
        let mut layout = self.layout.clone();
        layout.index_capacity = layout.offsets.len();
        layout.offsets.remove(pos);
        let mut remove = None;
        if let (Some(_), Entry::Stored(id)) = (&self.dir, &old) {
            layout.cbytes -= i64::from(self.stored_head(*id)?.2);
            remove = Some(*id);
        }
        self.commit(info, old_info, layout)?;
        if let Some(id) = remove {
            self.drop_file(id);
        }
        Ok(())
    }

    /// Put chunk `order[i]` at position `i`.
    pub fn reorder(&mut self, info: &Info, order: &[usize]) -> Result<()> {
        let mut layout = self.layout.clone();
        layout.offsets = Offsets::from_entries(order.iter().map(|&o| self.layout.offsets.get(o).unwrap_or(-1)));
        layout.index_capacity = layout.offsets.len();
        self.commit(info, info, layout)
    }

    /// Make the chunk list `picks` (kept chunks at distinct positions, and
    /// new special-value chunks); the chunks not kept leave the index (in a
    /// sparse frame their files are removed once the new index is written).
    /// One index write.
    pub fn arrange(&mut self, info: &Info, old_info: &Info, picks: &[Pick]) -> Result<()> {
        let mut layout = self.layout.clone();
        let stored_cbytes = self.layout.cbytes;
        let mut next_id = self.layout.offsets.values().filter(|&o| o >= 0).max().map_or(0, |m| m + 1);
        let mut offsets = Offsets::new();
        // the chunk files kept (sparse frames), to remove the others after the change
        let mut kept = std::collections::HashSet::new();
        for p in picks {
            offsets.push(match *p {
                Pick::Chunk(k) => {
                    let o = self.layout.offsets.get(k).ok_or(Error::InvalidIndex)?;
                    if o >= 0 && self.dir.is_some() {
                        kept.insert(o);
                    }
                    o
                }
                Pick::Special(kind, nbytes) if offset_encoded(kind) && info.chunksize != 0 && nbytes == info.chunksize => special_offset(kind),
                Pick::Special(kind, nbytes) if self.dir.is_some() => {
                    let c = special_chunk(kind, nbytes, info.cparams.typesize, info.cparams.blocksize);
                    let id = next_id;
                    next_id += 1;
                    if let Some(d) = &self.dir {
                        d.write_chunk(id, &c)?;
                    }
                    layout.cbytes += c.len() as i64;
                    id
                }
                Pick::Special(kind, nbytes) => {
                    let c = special_chunk(kind, nbytes, info.cparams.typesize, info.cparams.blocksize);
                    // Stored one after the other (`store` places a chunk at the current end).
                    let stored = self.store(&c);
                    let (off, cb) = stored.inspect_err(|_| self.layout.cbytes = stored_cbytes)?;
                    layout.cbytes = cb;
                    self.layout.cbytes = cb;
                    off
                }
            });
        }
        // The current layout stays what is on disk until the new one is written.
        self.layout.cbytes = stored_cbytes;
        layout.offsets = offsets;
        layout.index_capacity = layout.offsets.len();
        let mut dropped = Vec::new();
        if self.dir.is_some() {
            for id in self.layout.offsets.values() {
                if decode_special(id)?.is_none() && !kept.contains(&id) {
                    layout.cbytes -= i64::from(self.stored_head(id)?.2);
                    dropped.push(id);
                }
            }
        }
        self.commit(info, old_info, layout)?;
        if self.dir.is_some() {
            for id in dropped {
                self.drop_file(id);
            }
        }
        Ok(())
    }

    /// Rewrite header and trailer after a change of the (vl)metalayers.
    pub fn sync_meta(&mut self, info: &Info, old_info: &Info) -> Result<()> {
        let hl = header(info, self.layout.cbytes, self.dir.is_some())?.len();
        if hl != self.layout.header_len {
            // The header grows: only possible while no chunk bytes are stored.
            if self.layout.cbytes != 0 {
                return Err(Error::InvalidParam);
            }
            let layout = self.layout.clone();
            return self.install(info, old_info, layout);
        }
        let layout = self.layout.clone();
        self.commit(info, old_info, layout)
    }

    /// Fill an empty frame with `n` chunks of special values (`info` holds the
    /// new nbytes and chunksize); the index is written as one run-length chunk.
    pub fn fill_special(&mut self, info: &Info, old_info: &Info, n: usize, kind: Special) -> Result<()> {
        if self.nchunks() != 0 || !offset_encoded(kind) {
            return Err(Error::FrameSpecial);
        }
        let mut layout = self.layout.clone();
        layout.cbytes = if self.dir.is_some() { 0 } else { layout.cbytes };
        layout.offsets = Offsets::repeat(special_offset(kind), n);
        layout.index_capacity = n;
        layout.run_length = true;
        self.install(info, old_info, layout)
    }

    /// Turn the offset-encoded special chunks into stored chunks (needed before
    /// a frame's chunks become variable-sized: the offsets cannot say their size).
    pub fn materialize_specials(&mut self, info: &Info) -> Result<()> {
        for i in 0..self.nchunks() {
            if let Entry::Special(kind) = self.entry(i)? {
                let n = self.special_nbytes(info, i)?;
                let c = special_chunk(kind, n, info.cparams.typesize, info.cparams.blocksize);
                let (off, cb) = self.store(&c)?;
                self.layout.offsets.set(i, off);
                self.layout.cbytes = cb;
            }
        }
        Ok(())
    }

    /// Re-read the layout from storage when another writer has changed the
    /// frame: returns the new super-chunk state, or `None` when nothing changed.
    pub fn reload(&mut self) -> Result<Option<Info>> {
        let Bytes::Stream { .. } = self.bytes else { return Ok(None) };
        if self.disk_frame_len()? == self.layout.frame_len {
            return Ok(None);
        }
        self.force_reload().map(Some)
    }

    /// The frame length the stored header states now.
    pub fn disk_frame_len(&self) -> Result<u64> {
        let fixed = self.bytes.read(0, 24)?;
        Ok(u64::from_be_bytes(fixed[16..24].try_into().map_err(|_| Error::ReadBuffer)?))
    }

    /// Re-read the layout from storage unconditionally.
    pub fn force_reload(&mut self) -> Result<Info> {
        let (layout, info) = parse(&self.bytes, self.dir.is_some(), false)?;
        self.layout = layout;
        Ok(info)
    }
}

/// Where a frame read from a stream comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOrigin {
    /// The identity of its file (device, inode), when the stream has one.
    pub identity: Option<(u64, u64)>,
    /// Where the frame starts in the file.
    pub base: u64,
    pub writable: bool,
}

/// One chunk of a new chunk list (see [`Frame::arrange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The chunk now at this position.
    Chunk(usize),
    /// A new chunk of special values of this many bytes.
    Special(Special, i32),
}

/// Read the layout and the super-chunk state of the frame in `bytes`.
fn parse(bytes: &Bytes, sparse: bool, exact: bool) -> Result<(Layout, Info)> {
    let available = match bytes {
        Bytes::Stream { stream, base, .. } => stream.size()?.checked_sub(*base).ok_or(Error::FileRead)?,
        _ => bytes.slice().map_or(0, |s| s.len() as u64),
    };
    if available < MIN_FRAME_LEN {
        return Err(Error::ReadBuffer);
    }
    let fixed = bytes.read(0, FIXED_LEN)?;
    let hl = i32::from_be_bytes([fixed[11], fixed[12], fixed[13], fixed[14]]);
    let flen = u64::from_be_bytes(fixed[16..24].try_into().map_err(|_| Error::ReadBuffer)?);
    drop(fixed);
    if flen < MIN_FRAME_LEN || flen > available || (exact && flen != available) {
        return Err(Error::InvalidHeader);
    }
    if hl < FIXED_LEN as i32 || hl as u64 > flen - MIN_LEN as u64 {
        return Err(Error::InvalidHeader);
    }
    let h = FrameHeader::parse(&bytes.read(0, hl as usize)?, true)?;
    if h.frame_type != u8::from(sparse) {
        return Err(Error::FrameType);
    }
    // The trailer: its length is in the last bytes.
    let end = bytes.read(flen - END_LEN as u64, END_LEN)?;
    if end[0] != 0xce {
        return Err(Error::InvalidHeader);
    }
    let tlen = u64::from(u32::from_be_bytes([end[1], end[2], end[3], end[4]]));
    if tlen < MIN_LEN as u64 || tlen > flen - hl as u64 {
        return Err(Error::InvalidHeader);
    }
    let toff = flen - tlen;
    let tr = Trailer::parse(&bytes.read(toff, tlen as usize)?, 0)?;
    let offsets = read_offsets(bytes, sparse, &h, toff)?;
    let layout = Layout {
        header_len: h.header_len,
        frame_len: flen,
        cbytes: h.cbytes,
        index_capacity: offsets.len(),
        offsets,
        run_length: false,
    };
    Ok((layout, info_from_header(&h, tr.vlmetalayers)))
}

/// Decode the offsets index that ends where the trailer starts, piece by
/// piece into runs (an index of many equal entries takes little memory).
fn read_offsets(bytes: &Bytes, sparse: bool, h: &FrameHeader, trailer_at: u64) -> Result<Offsets> {
    if h.nbytes == 0 {
        return Ok(Offsets::new());
    }
    let start = if sparse { h.header_len as u64 } else { (h.header_len as u64).saturating_add(h.cbytes as u64) };
    if start.saturating_add(16) > trailer_at {
        return Err(Error::InvalidHeader);
    }
    let head = bytes.read(start, 16)?;
    let (index_nbytes, index_cbytes, _) = Header::sizes(&head)?;
    if index_nbytes < 0 || index_cbytes < 16 || start + index_cbytes as u64 > trailer_at {
        return Err(Error::InvalidHeader);
    }
    let n = match h.chunksize {
        c if c > 0 => (h.nbytes as u64).div_ceil(c as u64),
        0 if index_nbytes % 8 == 0 => index_nbytes as u64 / 8,
        _ => return Err(Error::InvalidHeader),
    };
    if n > (i32::MAX / 8) as u64 || index_nbytes as u64 != 8 * n {
        return Err(Error::InvalidHeader);
    }
    let index = bytes.read(start, index_cbytes as usize)?;
    let check = |o: i64| -> Result<i64> {
        if decode_special(o)?.is_none() && !sparse && o > h.cbytes - 16 {
            return Err(Error::InvalidHeader);
        }
        Ok(o)
    };
    decode_index(&index, n, trailer_at, check)
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

/// An index whose entries are all equal, as a 40-byte run-length chunk.
fn run_length_index(value: i64, n: usize) -> Result<Vec<u8>> {
    let nbytes = n.checked_mul(8).and_then(|b| i32::try_from(b).ok()).ok_or(Error::TwoGbLimit)?;
    let h = Header {
        version: crate::chunk::header::VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: 0x05,
        typesize: 8,
        nbytes,
        blocksize: nbytes.min(16 * 1024),
        cbytes: 40,
        blosc2_flags: (Special::Value as u8) << 4,
        ..Header::default()
    };
    let mut b = vec![0u8; 40];
    h.write(&mut b);
    b[32..].copy_from_slice(&value.to_le_bytes());
    Ok(b)
}

/// The VL-blocks flag of a chunk's header bytes.
pub fn has_vl_blocks(chunk: &[u8]) -> bool {
    chunk.len() >= EXTENDED_HEADER_LENGTH && chunk[30] & VL_BLOCKS != 0
}
