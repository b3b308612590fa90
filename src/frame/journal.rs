//! Crash safety of frame files: an undo journal beside the frame.
//!
//! Before a change overwrites bytes of a frame file, the old content of those
//! bytes and the old file length are written to `<file>.b2journal`; once the
//! change is complete the journal is emptied (the commit point). A process
//! that dies in between leaves a complete journal, and the next open puts the
//! old bytes back: the frame is as it was before the change. A journal cut
//! short (the process died while writing it) fails its checksum and is
//! dropped: the frame was not touched yet.
//!
//! The writer holds an exclusive `flock` on the journal file during the
//! change, so an open by another process recovers only when that writer is
//! gone. A journal records the identity of its frame file, so one left beside
//! a frame that was since replaced is ignored.
//!
//! Record: `B2NDJNL1`, device u64, inode u64, old length u64, number of
//! regions u32, then per region its position u64, length u32 and bytes, then
//! an FNV-1a 64 checksum of all that (little-endian; positions are relative
//! to the frame's start).

use crate::error::{Error, Result};
use crate::io::{Backend, Mode, Stream};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"B2NDJNL1";

/// The journal path of the frame file at `path`.
pub fn journal_path(path: &str) -> String {
    format!("{path}.b2journal")
}

/// What undoes a change: the old bytes of the regions it overwrites and the
/// old length of the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undo {
    pub identity: (u64, u64),
    pub old_len: u64,
    pub regions: Vec<(u64, Vec<u8>)>,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl Undo {
    pub fn encode(&self) -> Vec<u8> {
        let size: usize = self.regions.iter().map(|(_, b)| 12 + b.len()).sum();
        let mut v = Vec::with_capacity(44 + size);
        v.extend_from_slice(MAGIC);
        v.extend_from_slice(&self.identity.0.to_le_bytes());
        v.extend_from_slice(&self.identity.1.to_le_bytes());
        v.extend_from_slice(&self.old_len.to_le_bytes());
        v.extend_from_slice(&(self.regions.len() as u32).to_le_bytes());
        for (pos, b) in &self.regions {
            v.extend_from_slice(&pos.to_le_bytes());
            v.extend_from_slice(&(b.len() as u32).to_le_bytes());
            v.extend_from_slice(b);
        }
        let sum = fnv1a(&v);
        v.extend_from_slice(&sum.to_le_bytes());
        v
    }

    /// The record in `b`, or `None` when it is not a whole one.
    pub fn decode(b: &[u8]) -> Option<Undo> {
        let body = b.get(..b.len().checked_sub(8)?)?;
        let sum = u64::from_le_bytes(b.get(body.len()..)?.try_into().ok()?);
        if fnv1a(body) != sum || body.get(..8)? != MAGIC {
            return None;
        }
        let u64_at = |at: usize| body.get(at..at + 8).map(|s| u64::from_le_bytes(s.try_into().unwrap_or_default()));
        let identity = (u64_at(8)?, u64_at(16)?);
        let old_len = u64_at(24)?;
        let n = u32::from_le_bytes(body.get(32..36)?.try_into().ok()?) as usize;
        let mut at = 36;
        let mut regions = Vec::new();
        for _ in 0..n {
            let pos = u64_at(at)?;
            let len = u32::from_le_bytes(body.get(at + 8..at + 12)?.try_into().ok()?) as usize;
            // a region lies inside the old frame (what a change saves is never past it)
            if pos.checked_add(len as u64)? > old_len {
                return None;
            }
            regions.push((pos, body.get(at + 12..at + 12 + len)?.to_vec()));
            at += 12 + len;
        }
        (at == body.len()).then_some(Undo { identity, old_len, regions })
    }
}

fn flock(f: &File, op: libc::c_int) -> bool {
    loop {
        // SAFETY: flock on an open descriptor.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            return true;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

fn same_file(f: &File, path: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// The undo journal of one frame file, held by the handle that writes it.
pub struct Journal {
    path: String,
    backend: Arc<dyn Backend>,
    /// The journal file, locked (exclusively) during a change.
    lock: Option<File>,
    stream: Option<Box<dyn Stream>>,
}

impl Journal {
    /// The journal of the frame file at `frame_path`, written through
    /// `backend` (see [`Backend::sidecar`]).
    pub fn new(frame_path: &str, backend: Arc<dyn Backend>) -> Journal {
        Journal { path: journal_path(frame_path), backend, lock: None, stream: None }
    }

    /// Lock the journal file (blocking), (re)opening it if another handle
    /// removed it in the meantime.
    fn lock(&mut self) -> Result<()> {
        for _ in 0..16 {
            if self.lock.is_none() {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&self.path)
                    .map_err(|_| Error::FileOpen)?;
                self.lock = Some(f);
                self.stream = None;
            }
            let f = self.lock.as_ref().ok_or(Error::Failure)?;
            if !flock(f, libc::LOCK_EX) {
                return Err(Error::Lock);
            }
            if same_file(f, &self.path) {
                if self.stream.is_none() {
                    match self.backend.open(&self.path, Mode::Append) {
                        Ok(s) => self.stream = Some(s),
                        Err(e) => {
                            flock(f, libc::LOCK_UN);
                            return Err(e);
                        }
                    }
                }
                return Ok(());
            }
            // removed (by a handle that closed) after we opened it: open it again
            flock(f, libc::LOCK_UN);
            self.lock = None;
        }
        Err(Error::Lock)
    }

    /// Record `undo` before a change overwrites the frame.
    pub fn begin(&mut self, undo: &Undo) -> Result<()> {
        self.lock()?;
        let rec = undo.encode();
        let r = match self.stream.as_ref() {
            Some(s) => s.write_at(0, &rec).and_then(|()| s.truncate(rec.len() as u64)),
            None => Err(Error::Failure),
        };
        if r.is_err() {
            // not recorded: nothing may be changed; an incomplete record is dropped at open
            self.unlock();
        }
        r
    }

    /// The change is complete (or undone): empty the journal and unlock it.
    pub fn commit(&mut self) -> Result<()> {
        let r = match self.stream.as_ref() {
            Some(s) => s.truncate(0),
            None => Ok(()),
        };
        if r.is_ok() {
            self.unlock();
        }
        r
    }

    fn unlock(&mut self) {
        if let Some(f) = &self.lock {
            flock(f, libc::LOCK_UN);
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        // An empty journal nobody is using is removed with its handle.
        self.stream = None;
        if let Some(f) = self.lock.take() {
            if flock(&f, libc::LOCK_EX | libc::LOCK_NB) {
                if same_file(&f, &self.path) && f.metadata().is_ok_and(|m| m.len() == 0) {
                    let _ = std::fs::remove_file(&self.path);
                }
                flock(&f, libc::LOCK_UN);
            }
        }
    }
}

/// A change that a process which died left half done on the frame file at
/// `frame_path`: its undo record, with the journal locked (exclusively) until
/// [`Pending::done`]. `None` when there is none, or when the process that
/// writes it is alive.
pub struct Pending {
    pub undo: Option<Undo>,
    file: File,
    path: String,
}

impl Pending {
    pub fn find(frame_path: &str) -> Option<Pending> {
        let path = journal_path(frame_path);
        let meta = std::fs::metadata(&path).ok()?;
        if meta.len() == 0 {
            return None;
        }
        let file = std::fs::OpenOptions::new().read(true).write(true).open(&path).ok()?;
        if !flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            return None; // its writer is at work
        }
        let mut bytes = Vec::new();
        let ok = {
            use std::io::Read;
            (&file).take(meta.len().min(1 << 34)).read_to_end(&mut bytes).is_ok()
        };
        let undo = if ok { Undo::decode(&bytes) } else { None };
        Some(Pending { undo, file, path })
    }

    /// The frame was put back (or the record was not a whole one): empty the journal.
    pub fn done(self) {
        let _ = self.file.set_len(0);
        let _ = std::fs::remove_file(&self.path);
        flock(&self.file, libc::LOCK_UN);
    }
}

/// A frame file as it was before the change a dead process left half done,
/// for a handle that may not write the file: reads see the old bytes.
pub struct Overlay {
    inner: Box<dyn Stream>,
    base: u64,
    undo: Undo,
}

impl Overlay {
    pub fn new(inner: Box<dyn Stream>, base: u64, undo: Undo) -> Overlay {
        Overlay { inner, base, undo }
    }
}

impl Stream for Overlay {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        let end = self.base.saturating_add(self.undo.old_len);
        let want = (end.saturating_sub(pos) as usize).min(buf.len());
        let n = self.inner.read_at(pos, &mut buf[..want])?;
        let buf = &mut buf[..want];
        // the bytes past the current end that the old frame had are in the record
        let mut covered = n;
        for (rpos, bytes) in &self.undo.regions {
            let r0 = self.base.saturating_add(*rpos);
            let r1 = r0.saturating_add(bytes.len() as u64);
            let (lo, hi) = (pos.max(r0), pos.saturating_add(want as u64).min(r1));
            if lo < hi {
                let dst = &mut buf[(lo - pos) as usize..(hi - pos) as usize];
                dst.copy_from_slice(&bytes[(lo - r0) as usize..(hi - r0) as usize]);
                covered = covered.max((hi - pos) as usize);
            }
        }
        Ok(covered)
    }
    fn write_at(&self, _: u64, _: &[u8]) -> Result<()> {
        Err(Error::FileWrite)
    }
    fn size(&self) -> Result<u64> {
        Ok(self.base.saturating_add(self.undo.old_len))
    }
    fn truncate(&self, _: u64) -> Result<()> {
        Err(Error::FileTruncate)
    }
    fn identity(&self) -> Option<(u64, u64)> {
        self.inner.identity()
    }
}

/// Put back, in the frame file behind `stream` (the frame at `base`), what
/// the change a dead process left half done overwrote; when the stream may
/// not be written, return a stream that reads the frame as it was. The journal
/// of a frame file that was since replaced is dropped.
pub fn recover(frame_path: &str, stream: Box<dyn Stream>, base: u64, writable: bool) -> Result<Box<dyn Stream>> {
    let Some(p) = Pending::find(frame_path) else { return Ok(stream) };
    let Some(undo) = p.undo.clone() else {
        p.done(); // cut short: the frame was not touched yet
        return Ok(stream);
    };
    if undo.identity != (0, 0) && stream.identity().is_some_and(|id| id != undo.identity) {
        p.done(); // left beside a frame that was replaced
        return Ok(stream);
    }
    crate::trace!("{frame_path}: a change was left half done by a process that died; putting the frame back as it was before it");
    if !writable {
        return Ok(Box::new(Overlay::new(stream, base, undo)));
    }
    for (pos, bytes) in &undo.regions {
        stream.write_at(base + pos, bytes)?;
    }
    stream.truncate(base + undo.old_len)?;
    p.done();
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_torn_ones_are_refused() {
        let u = Undo { identity: (3, 77), old_len: 4096, regions: vec![(0, vec![1, 2, 3]), (1000, vec![9; 300])] };
        let b = u.encode();
        assert_eq!(Undo::decode(&b), Some(u.clone()));
        for cut in [0, 1, 8, 40, b.len() / 2, b.len() - 1] {
            assert_eq!(Undo::decode(&b[..cut]), None, "cut at {cut}");
        }
        let outside = Undo { identity: (3, 77), old_len: 100, regions: vec![(90, vec![0; 20])] };
        assert_eq!(Undo::decode(&outside.encode()), None, "a region past the old length");
        let mut flipped = b.clone();
        flipped[50] ^= 1;
        assert_eq!(Undo::decode(&flipped), None);
        let empty = Undo { identity: (0, 0), old_len: 0, regions: vec![] };
        assert_eq!(Undo::decode(&empty.encode()), Some(empty));
    }
}
