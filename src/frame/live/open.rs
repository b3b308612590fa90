//! Making a frame, opening one (parsing its header, trailer and offsets
//! index), and reading its layout again after another writer changed it.

use super::super::bytes::{Bytes, Directory};
use super::super::header::{FrameHeader, FIXED_LEN};
use super::super::offsets::{decode_index, Offsets};
use super::super::trailer::{Trailer, END_LEN, MIN_LEN};
use super::super::writer::Info;
use super::super::Metalayer;
use super::{decode_special, Frame, Layout, Opened, MIN_FRAME_LEN, SPARSE_INDEX};
use crate::chunk::header::Header;
use crate::chunk::{CParams, SplitMode};
use crate::error::{Error, Result};
use crate::io::{Backend, Mode, Stream};
use std::sync::Arc;

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
        tuner: None,
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

    pub(super) fn empty(bytes: Bytes, dir: Option<Directory>) -> Frame {
        Frame {
            bytes,
            dir,
            journal: None,
            txn: None,
            batch: false,
            broken: false,
            clean: false,
            pending_drops: Vec::new(),
            layout: Layout {
                header_len: 0,
                frame_len: 0,
                cbytes: 0,
                offsets: Offsets::new(),
                index_capacity: 0,
                run_length: false,
                space: None,
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
        let stream = backend.open_kept(&format!("{path}/{SPARSE_INDEX}"), Mode::Create)?;
        let _file = stream.hold();
        let dir = Directory::new(path, backend);
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
        let mut stream = backend.open_kept(&index, mode)?;
        let _file = stream.hold();
        if let Some(sidecar) = backend.sidecar() {
            // A change a dead process left half done is undone first.
            stream = super::super::journal::recover(&index, stream, 0, writable, Some(path), &sidecar)?;
        }
        let dir = Directory::new(path, backend);
        Frame::open_bytes(Bytes::Stream { stream, base: 0, writable }, Some(dir), false)
    }

    fn open_bytes(bytes: Bytes, dir: Option<Directory>, exact: bool) -> Result<Opened> {
        let (layout, info) = parse(&bytes, dir.is_some(), exact)?;
        let frame = Frame {
            bytes,
            dir,
            layout,
            journal: None,
            txn: None,
            batch: false,
            broken: false,
            clean: false,
            pending_drops: Vec::new(),
        };
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
                total =
                    total.saturating_add(i64::from(self.chunk_nbytes(info, start)?).saturating_mul(count));
            }
        }
        if total == info.nbytes {
            Ok(())
        } else {
            Err(Error::InvalidHeader)
        }
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
        space: None,
    };
    Ok((layout, info_from_header(&h, tr.vlmetalayers)))
}

/// Decode the offsets index that ends where the trailer starts, piece by
/// piece into runs (an index of many equal entries takes little memory).
fn read_offsets(bytes: &Bytes, sparse: bool, h: &FrameHeader, trailer_at: u64) -> Result<Offsets> {
    if h.nbytes == 0 {
        return Ok(Offsets::new());
    }
    let start =
        if sparse { h.header_len as u64 } else { (h.header_len as u64).saturating_add(h.cbytes as u64) };
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
