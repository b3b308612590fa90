//! Doing what a journal asks when its frame is opened: putting old bytes
//! back, or showing them through an overlay when the frame may not be written.

use super::*;

/// With a read-only handle, the old bytes an overlay shows are copied out of
/// the journal (which a writer may empty in the meantime): kept in memory up
/// to this much, in an unlinked temporary file past it.
pub(super) const OVERLAY_IN_MEMORY: u64 = 32 << 20;

/// Where an overlay keeps its copy of the old bytes.
pub(super) enum Kept {
    Memory(Vec<u8>),
    File(File),
}

/// A frame file as it was before the change a dead process left half done,
/// for a handle that may not write the file: reads see the old bytes.
pub struct Overlay {
    inner: Box<dyn Stream>,
    base: u64,
    old_len: u64,
    /// (position in the frame, length, position in `kept`), sorted and disjoint.
    regions: Vec<(u64, u64, u64)>,
    kept: Kept,
}

impl Overlay {
    /// The frame at `base` of `inner` as `r` (a plan of the journal `src`)
    /// puts it back.
    pub fn new(inner: Box<dyn Stream>, base: u64, r: &Restore, src: &Source) -> Result<Overlay> {
        let mut sorted = r.regions.clone();
        sorted.sort_by_key(|s| s.pos);
        let total: u64 = sorted.iter().map(|s| s.len).sum();
        let mut kept = if total <= OVERLAY_IN_MEMORY {
            Kept::Memory(Vec::with_capacity(total as usize))
        } else {
            let dir = crate::os::temp_dir();
            let name = dir.join(format!("b2nd-overlay-{}-{:x}", crate::os::process_id(), new_nonce()));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&name)
                .map_err(|_| Error::FileOpen)?;
            let _ = crate::os::remove_file(&name);
            Kept::File(f)
        };
        let mut regions = Vec::with_capacity(sorted.len());
        let mut off = 0u64;
        let restore = Restore { identity: r.identity, old_len: r.old_len, regions: sorted };
        src.each_region(&restore, |pos, bytes| {
            match &mut kept {
                Kept::Memory(v) => v.extend_from_slice(bytes),
                Kept::File(f) => crate::os::write_all_at(f, off, bytes).map_err(|_| Error::FileWrite)?,
            }
            match regions.last_mut() {
                // the next piece of the same region
                Some((p, l, o)) if *p + *l == pos && *o + *l == off => *l += bytes.len() as u64,
                _ => regions.push((pos, bytes.len() as u64, off)),
            }
            off += bytes.len() as u64;
            Ok(())
        })?;
        Ok(Overlay { inner, base, old_len: r.old_len, regions, kept })
    }

    fn kept_at(&self, off: u64, dst: &mut [u8]) -> Result<()> {
        match &self.kept {
            Kept::Memory(v) => {
                dst.copy_from_slice(&v[off as usize..off as usize + dst.len()]);
                Ok(())
            }
            Kept::File(f) => match crate::os::read_at(f, off, dst) {
                Ok(n) if n == dst.len() => Ok(()),
                _ => Err(Error::FileRead),
            },
        }
    }
}

impl Stream for Overlay {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        let end = self.base.saturating_add(self.old_len);
        let want = (end.saturating_sub(pos) as usize).min(buf.len());
        let n = self.inner.read_at(pos, &mut buf[..want])?;
        let buf = &mut buf[..want];
        let (lo_pos, hi_pos) =
            (pos.saturating_sub(self.base), pos.saturating_add(want as u64).saturating_sub(self.base));
        // the bytes past the current end that the old frame had are in the record
        let mut covered = n;
        let first = self.regions.partition_point(|&(p, l, _)| p + l <= lo_pos);
        for &(rpos, len, off) in self.regions[first..].iter().take_while(|&&(p, _, _)| p < hi_pos) {
            let r0 = self.base.saturating_add(rpos);
            let r1 = r0.saturating_add(len);
            let (lo, hi) = (pos.max(r0), pos.saturating_add(want as u64).min(r1));
            if lo < hi {
                self.kept_at(off + (lo - r0), &mut buf[(lo - pos) as usize..(hi - pos) as usize])?;
                covered = covered.max((hi - pos) as usize);
            }
        }
        Ok(covered)
    }
    fn write_at(&self, _: u64, _: &[u8]) -> Result<()> {
        Err(Error::FileWrite)
    }
    fn size(&self) -> Result<u64> {
        Ok(self.base.saturating_add(self.old_len))
    }
    fn truncate(&self, _: u64) -> Result<()> {
        Err(Error::FileTruncate)
    }
    fn identity(&self) -> Option<(u64, u64)> {
        self.inner.identity()
    }
    fn hold(&self) -> Option<crate::io::Hold> {
        self.inner.hold()
    }
    fn path_replaced(&self) -> Option<bool> {
        self.inner.path_replaced()
    }
}

/// [`recover`] through a backend whose paths are not files (user
/// callbacks): the journal is read and emptied with the backend's own
/// callbacks, and not locked.
pub(super) fn recover_through(
    frame_path: &str,
    stream: Box<dyn Stream>,
    base: u64,
    writable: bool,
    sidecar: &Arc<dyn Backend>,
) -> Result<Box<dyn Stream>> {
    let path = journal_path(frame_path);
    let Some(j) = open_existing(sidecar.as_ref(), &path, Mode::Read)? else { return Ok(stream) };
    let size = match j.size()? {
        0 => return Ok(stream),
        n => n,
    };
    let read = |pos: u64, buf: &mut [u8]| j.read_at(pos, buf);
    let src = Source::new(size, &read);
    let empty = || -> Result<()> {
        let j = sidecar.open(&path, Mode::Update)?;
        j.truncate(0)?;
        j.sync()
    };
    match plan(&src, boot_id())? {
        Plan::Nothing | Plan::Keep(_) if writable => {
            drop(j);
            stream.sync()?;
            empty()?;
        }
        Plan::Nothing | Plan::Keep(_) => {}
        Plan::Undo(r) => {
            crate::trace!("{frame_path}: a change was left half done (a process or the machine died); putting the frame back as it was before it");
            if !writable {
                return Ok(Box::new(Overlay::new(stream, base, &r, &src)?));
            }
            put_back(stream.as_ref(), base, &r, &src)?;
            drop(j);
            empty()?;
        }
    }
    Ok(stream)
}

/// Write back the old bytes of `r` (read from the journal `src`) to the
/// frame at `base` of `stream`, cut it to its old length and sync it.
pub(super) fn put_back(stream: &dyn Stream, base: u64, r: &Restore, src: &Source) -> Result<()> {
    src.each_region(r, |pos, bytes| stream.write_at(base + pos, bytes))?;
    stream.truncate(base + r.old_len)?;
    stream.sync()
}

/// Sync every chunk file of the sparse frame directory `dir`, and the directory.
pub fn sync_chunk_files(dir: &str) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|_| Error::FileOpen)?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().ends_with(".chunk") {
            crate::os::sync_file(&entry.path()).map_err(|_| Error::FileWrite)?;
        }
    }
    crate::io::sync_dir(dir)
}

/// Do, on the frame file behind `stream` (the frame at `base`; the index of
/// the sparse frame in directory `dir`), what a journal left behind asks: put
/// back what a change left half done overwrote (or, after a reboot, what the
/// changes since the last checkpoint overwrote), sync, and drop the journal.
/// When the stream may not be written, return a stream that reads the frame
/// as it was. The journal of a frame file that was since replaced is dropped.
/// Memory stays within a piece of the journal (and the positions of its
/// regions) however much it holds.
pub fn recover(
    frame_path: &str,
    stream: Box<dyn Stream>,
    base: u64,
    writable: bool,
    dir: Option<&str>,
    sidecar: &Arc<dyn Backend>,
) -> Result<Box<dyn Stream>> {
    if !sidecar.is_filesystem() {
        return recover_through(frame_path, stream, base, writable, sidecar);
    }
    let Some(p) = Pending::find(frame_path)? else { return Ok(stream) };
    let replaced =
        |identity: (u64, u64)| identity != (0, 0) && stream.identity().is_some_and(|id| id != identity);
    match p.plan.clone() {
        // cut short: the frame was not touched yet
        Plan::Nothing => p.done(),
        Plan::Keep(identity) if replaced(identity) => p.done(),
        Plan::Keep(_) => {
            // every change complete: the frame stands once it is durable
            if writable {
                stream.sync()?;
                if let Some(d) = dir {
                    sync_chunk_files(d)?;
                }
                p.done();
            }
        }
        Plan::Undo(r) if replaced(r.identity) => p.done(),
        Plan::Undo(r) => {
            crate::trace!("{frame_path}: a change was left half done (a process or the machine died); putting the frame back as it was before it");
            let size = p.file.metadata().map_err(|_| Error::FileRead)?.len();
            let read = |pos: u64, buf: &mut [u8]| read_file_at(&p.file, pos, buf);
            let src = Source::new(size, &read);
            if !writable {
                return Ok(Box::new(Overlay::new(stream, base, &r, &src)?));
            }
            put_back(stream.as_ref(), base, &r, &src)?;
            p.done();
        }
    }
    Ok(stream)
}
