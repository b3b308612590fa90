//! Crash safety of frame files: an undo journal beside the frame.
//!
//! Before a change overwrites bytes of a frame file, their old content is
//! appended to `<file>.b2journal`. A process that dies in the middle of a
//! change leaves a record of it there, and the next open puts the old bytes
//! back: the frame is as it was before the change. A record cut short (the
//! process died while writing it) fails its checksum and is dropped: the
//! frame was not touched yet.
//!
//! Power loss. A machine that dies keeps, of what was not synced, any subset
//! of pages. The journal keeps, besides each change's own undo, the old bytes
//! of every region a change overwrites for the first time since the last
//! *checkpoint* (the frame as last synced): these *base* regions are synced
//! before the frame is overwritten there. A checkpoint syncs the frame (its
//! chunk files and directory too, for a sparse frame) and empties the
//! journal. An open after a reboot (the journal's boot id is not the
//! machine's) puts back the base regions: the frame is as at the checkpoint.
//! An open on the same boot (only the process died; the page cache holds
//! every write) undoes the change in progress alone. With
//! [`Durability::Consistent`] a checkpoint ends the first change after the
//! epoch (the changes since the last one) is [`EPOCH_AGE`] old or its journal
//! [`EPOCH_BYTES`] long, and every close; with [`Durability::Durable`] every
//! change ends with one, synced; [`Durability::Off`] syncs nothing.
//!
//! The writer holds an exclusive `flock` on the journal file during a
//! change, so an open by another process recovers only when that writer is
//! gone, or between its changes (a journal whose last change is complete is
//! then taken over: the frame is synced and the journal emptied, and the
//! writer notices at its next change). A journal records the identity of its
//! frame file, so one left beside a frame that was since replaced is ignored.
//!
//! Format (little-endian; positions relative to the frame's start): `B2NDJNL2`,
//! then records of a tag byte, a u32 payload length, the payload and a
//! 64-bit checksum of tag, length and payload (see `checksum`). `E` (first):
//! boot id (16 bytes), epoch nonce u64, device u64, inode u64, frame length
//! at the checkpoint u64. `R`: epoch nonce u64, change number u64, frame length before the
//! change u64, number of regions u32, then per region its position u64,
//! length u32, base flag u8 and bytes. `K`: epoch nonce u64, change number
//! u64: a change complete whose records stay (they hold base regions). A
//! record of another epoch (left past a truncation a power loss undid) ends
//! the journal. Journals of the first format (`B2NDJNL1`, one
//! record of a single change) are still recovered.

mod plan;
mod record;
mod recover;

pub use plan::{plan, plan_bytes, Plan, Restore, Saved, Source};
pub use record::Undo;
use record::{put_record, record_at, regions_record};
pub(crate) use record::{ranges_gaps, ranges_insert};
pub use recover::{recover, sync_chunk_files, Overlay};

use crate::error::{Error, Result};
use crate::io::{Backend, Durability, Mode, Stream};
use std::cell::Cell;
use std::fs::File;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MAGIC_V1: &[u8; 8] = b"B2NDJNL1";
const MAGIC: &[u8; 8] = b"B2NDJNL2";
const TAG_EPOCH: u8 = b'E';
const TAG_REGIONS: u8 = b'R';
const TAG_COMMIT: u8 = b'K';
/// Where the epoch nonce lies: after the magic, the `E` record's tag and length, and the boot id.
const NONCE_AT: u64 = 8 + 5 + 16;
/// Regions are written in records of at most this payload.
const RECORD_MAX: usize = 1 << 30;

/// With [`Durability::Consistent`], the changes of an epoch older than this
/// end with a checkpoint.
pub const EPOCH_AGE: Duration = Duration::from_secs(1);

thread_local! {
    static EPOCH_AGE_OVERRIDE: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// End epochs, on this thread, at this age instead of [`EPOCH_AGE`] (`None`:
/// the default again). For tests of checkpoints that are not synced.
#[doc(hidden)]
pub fn set_epoch_age_for_this_thread(age: Option<Duration>) {
    EPOCH_AGE_OVERRIDE.with(|a| a.set(age));
}
/// ... and so do those of an epoch whose journal is this long.
pub const EPOCH_BYTES: u64 = 64 << 20;

/// The journal path of the frame file at `path`.
pub fn journal_path(path: &str) -> String {
    format!("{path}.b2journal")
}

/// Open `path` through `backend` in `mode` ("rb" or "r+b": the file must
/// exist), or `None` when it does not exist. User I/O callbacks often open
/// nothing and still return a stream (a wrapper around a NULL `FILE *`, as
/// c-blosc2's `test_udio.c` writes them): such a stream is taken for a file
/// that does not exist when it can tell neither its size nor its first bytes.
/// A backend without a size callback is an error (the journal needs one).
pub(crate) fn open_existing(
    backend: &dyn Backend,
    path: &str,
    mode: Mode,
) -> Result<Option<Box<dyn Stream>>> {
    let Ok(s) = backend.open(path, mode) else { return Ok(None) };
    match s.size() {
        Ok(_) => Ok(Some(s)),
        Err(Error::PluginIo) => {
            crate::trace!("{path}: the I/O backend has no size callback: the journal cannot be used");
            Err(Error::PluginIo)
        }
        Err(e) => {
            let mut first = [0u8; 1];
            if matches!(s.read_at(0, &mut first), Ok(1)) {
                // something is there, and its size cannot be told
                return Err(e);
            }
            Ok(None)
        }
    }
}

thread_local! {
    static BOOT_OVERRIDE: Cell<Option<Option<[u8; 16]>>> = const { Cell::new(None) };
}

/// Pretend, on this thread, that the machine's boot id is `id` (`Some(None)`:
/// unknown; `None`: the real one again). For tests that open what a power
/// loss would leave, as after a reboot.
#[doc(hidden)]
pub fn set_boot_id_for_this_thread(id: Option<Option<[u8; 16]>>) {
    BOOT_OVERRIDE.with(|b| b.set(id));
}

/// The id of this boot of the machine, or `None` when unknown (see
/// `crate::os::boot_id`).
pub fn boot_id() -> Option<[u8; 16]> {
    if let Some(o) = BOOT_OVERRIDE.with(|b| b.get()) {
        return o;
    }
    crate::os::boot_id()
}

fn new_nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    h.write_u32(crate::os::process_id());
    h.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
    );
    h.finish() | 1
}

/// The journal's lock: the byte it takes on systems whose locks are of byte
/// ranges and keep other handles from writing them (Windows): one far past
/// any record, which the journal's own writes never reach.
const LOCK_BYTE: u64 = 1 << 62;

/// Lock the journal exclusively, waiting (`wait`) or not; whether it is held.
fn lock_journal(f: &File, wait: bool) -> bool {
    crate::os::lock(f, LOCK_BYTE, crate::os::Lock::Exclusive, wait).unwrap_or(false)
}

fn unlock_journal(f: &File) {
    let _ = crate::os::unlock(f, LOCK_BYTE);
}

fn same_file(f: &File, path: &str) -> bool {
    match (crate::os::identity(f), crate::os::path_identity(path)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The undo journal of one frame file, held by the handle that writes it.
pub struct Journal {
    path: String,
    backend: Arc<dyn Backend>,
    durability: Durability,
    /// A checkpoint ends every change (a frame several processes write).
    every_change: bool,
    /// The journal file, locked (exclusively) during a change.
    lock: Option<File>,
    stream: Option<Box<dyn Stream>>,
    /// The changes since the last checkpoint, when the journal holds them.
    epoch: Option<Epoch>,
    /// The journal's directory entry is durable.
    dir_synced: bool,
    /// The journal was emptied (a checkpoint) without a sync since.
    reset_unsynced: bool,
}

struct Epoch {
    nonce: u64,
    /// The frame's length at the checkpoint.
    base_len: u64,
    /// The regions of the frame at the checkpoint saved so far (sorted, disjoint).
    saved: Vec<(u64, u64)>,
    /// The change in progress (or the last one).
    seq: u64,
    /// The journal's length.
    len: u64,
    started: Instant,
    /// Where the records of the change in progress start, whether it wrote
    /// some and whether they hold base regions.
    change_start: u64,
    change_wrote: bool,
    change_base: bool,
}

/// What a change finds in the journal when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The changes since this handle's last checkpoint (or none): go on.
    Ours,
    /// Records another handle left (one of another process, gone or between
    /// its changes): what they ask of the frame, to be done (and the frame
    /// synced) before [`Journal::reset`].
    Foreign(Plan),
}

impl Journal {
    /// The journal of the frame file at `frame_path`, written through
    /// `backend` (see [`Backend::sidecar`]).
    pub fn new(frame_path: &str, backend: Arc<dyn Backend>, durability: Durability) -> Journal {
        Journal {
            path: journal_path(frame_path),
            backend,
            durability,
            every_change: false,
            lock: None,
            stream: None,
            epoch: None,
            dir_synced: false,
            reset_unsynced: false,
        }
    }

    pub fn durability(&self) -> Durability {
        self.durability
    }

    pub fn set_durability(&mut self, durability: Durability) {
        self.durability = durability;
    }

    /// End every change with a checkpoint (for frames several processes
    /// write in turn, which would otherwise wait for each other's).
    pub fn set_every_change(&mut self, yes: bool) {
        self.every_change = yes;
    }

    /// Lock the journal file (blocking), (re)opening it if another handle
    /// removed it in the meantime. Through a backend whose paths are not
    /// files (user callbacks), the journal is opened with the backend's own
    /// `open` and not locked: one writer at a time is the caller's to ensure.
    fn lock(&mut self) -> Result<()> {
        if !self.backend.is_filesystem() {
            if self.stream.is_none() {
                // "r+b", else "w+b" (made empty): C modes have no "create, keep, write anywhere"
                let s = match open_existing(self.backend.as_ref(), &self.path, Mode::Update)? {
                    Some(s) => s,
                    None => self.backend.open(&self.path, Mode::Create)?,
                };
                self.stream = Some(s);
                self.epoch = None;
            }
            return Ok(());
        }
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
                self.epoch = None;
                self.dir_synced = false;
            }
            let f = self.lock.as_ref().ok_or(Error::Failure)?;
            if !lock_journal(f, true) {
                return Err(Error::Lock);
            }
            if same_file(f, &self.path) {
                if self.stream.is_none() {
                    match self.backend.open(&self.path, Mode::Append) {
                        Ok(s) => self.stream = Some(s),
                        Err(e) => {
                            unlock_journal(f);
                            return Err(e);
                        }
                    }
                }
                return Ok(());
            }
            // removed (by a handle that closed) after we opened it: open it again
            unlock_journal(f);
            self.lock = None;
        }
        Err(Error::Lock)
    }

    fn stream(&self) -> Result<&dyn Stream> {
        self.stream.as_deref().ok_or(Error::Failure)
    }

    /// Whether the journal still holds this handle's epoch (no other handle
    /// took it over since).
    fn epoch_is_ours(&self) -> Result<bool> {
        let Some(e) = &self.epoch else { return Ok(false) };
        let s = self.stream()?;
        let mut nonce = [0u8; 8];
        Ok(s.size()? == e.len
            && s.read_at(NONCE_AT, &mut nonce)? == 8
            && u64::from_le_bytes(nonce) == e.nonce)
    }

    /// Start a change: lock the journal and look at what it holds.
    pub fn start_change(&mut self) -> Result<Found> {
        self.lock()?;
        let found = self.look();
        if let Err(e) = &found {
            if *e == Error::PluginIo {
                crate::trace!("{}: the I/O backend (id {}) lacks a callback the journal needs (size, truncate, read or write): changes of a frame it holds cannot be made crash-safe, and are refused", self.path, self.backend.id());
            }
            self.unlock();
        }
        found
    }

    fn look(&mut self) -> Result<Found> {
        if self.epoch_is_ours()? {
            if let Some(e) = self.epoch.as_mut() {
                e.seq += 1;
                e.change_start = e.len;
                e.change_wrote = false;
                e.change_base = false;
            }
            return Ok(Found::Ours);
        }
        self.epoch = None;
        let s = self.stream()?;
        let size = s.size()?;
        if size == 0 {
            return Ok(Found::Ours);
        }
        let read = |pos: u64, buf: &mut [u8]| s.read_at(pos, buf);
        Ok(Found::Foreign(plan(&Source::new(size, &read), boot_id())?))
    }

    /// Call `f` with every region (position, old bytes) of `r`, a plan of
    /// this journal that [`Journal::start_change`] found, a piece at a time.
    pub fn restore_regions(&self, r: &Restore, f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        let s = self.stream()?;
        let read = |pos: u64, buf: &mut [u8]| s.read_at(pos, buf);
        Source::new(s.size()?, &read).each_region(r, f)
    }

    /// Lock the journal and say whether it still holds this handle's epoch
    /// (for a checkpoint at close); unlock with [`Journal::unlock`].
    pub fn lock_own_epoch(&mut self) -> Result<bool> {
        if self.epoch.is_none() {
            return Ok(false);
        }
        self.lock()?;
        let ours = self.epoch_is_ours();
        if !matches!(ours, Ok(true)) {
            self.epoch = None;
        }
        ours
    }

    /// Record, before a change overwrites them, the current bytes of these
    /// regions of the frame (whose length is `pre_len` before the change).
    /// The parts the frame had at the checkpoint and that are not saved yet
    /// are base regions: synced (unless `Off`) before this returns.
    pub fn save(&mut self, pre_len: u64, regions: &[(u64, Vec<u8>)]) -> Result<()> {
        let r = self.save_inner(pre_len, regions);
        if r.is_err() {
            // not recorded: nothing may be changed; an incomplete record is dropped at open
            self.unlock();
        }
        r
    }

    fn save_inner(&mut self, pre_len: u64, regions: &[(u64, Vec<u8>)]) -> Result<()> {
        let mut out = Vec::new();
        if self.epoch.is_none() {
            self.start_epoch(pre_len, &mut out)?;
        }
        let e = self.epoch.as_mut().ok_or(Error::Failure)?;
        let (pieces, new_base) = split_regions(&e.saved, e.base_len.min(pre_len), regions);
        put_region_records(&mut out, e.nonce, e.seq, pre_len, &pieces);
        let at = e.len;
        let stream = self.stream.as_deref().ok_or(Error::Failure)?;
        if let Err(err) = stream.write_at(at, &out) {
            // Records cut short: the journal back to its last whole record, so
            // that it stays this handle's epoch. Otherwise another handle's
            // open, finding it unlocked, would take the records for those of
            // a dead writer (without a boot id: to be undone, and this handle
            // then broken). Should the cut fail too, an open drops them.
            let _ = stream.truncate(at);
            return Err(err);
        }
        e.len = at + out.len() as u64;
        e.change_wrote = true;
        if !new_base.is_empty() {
            e.change_base = true;
            for (a, b) in new_base {
                ranges_insert(&mut e.saved, a, b);
            }
            if self.durability.syncs() {
                stream.sync()?;
                self.reset_unsynced = false;
                if !self.dir_synced {
                    self.backend.sync_dir(crate::io::parent_dir(&self.path))?;
                    self.dir_synced = true;
                }
            }
        }
        Ok(())
    }

    /// A new epoch for a frame of `pre_len` bytes: the journal emptied, and
    /// its magic and epoch record put in `out`, to be written first.
    fn start_epoch(&mut self, pre_len: u64, out: &mut Vec<u8>) -> Result<()> {
        let identity = self.frame_identity();
        let nonce = new_nonce();
        out.extend_from_slice(MAGIC);
        put_record(out, TAG_EPOCH, |v| {
            v.extend_from_slice(&boot_id().unwrap_or_default());
            v.extend_from_slice(&nonce.to_le_bytes());
            v.extend_from_slice(&identity.0.to_le_bytes());
            v.extend_from_slice(&identity.1.to_le_bytes());
            v.extend_from_slice(&pre_len.to_le_bytes());
        });
        self.stream()?.truncate(0)?;
        self.epoch = Some(Epoch {
            nonce,
            base_len: pre_len,
            saved: Vec::new(),
            seq: 1,
            len: 0,
            started: Instant::now(),
            change_start: 0,
            change_wrote: false,
            change_base: false,
        });
        Ok(())
    }

    fn frame_identity(&self) -> (u64, u64) {
        let frame = self.path.strip_suffix(".b2journal").unwrap_or(&self.path);
        crate::io::path_identity(frame).unwrap_or((0, 0))
    }

    /// The change is complete (or was put back): its records go, but those
    /// holding base regions, which a commit record then follows.
    pub fn end_change(&mut self) -> Result<()> {
        let Some(e) = self.epoch.as_mut() else { return Ok(()) };
        if !e.change_wrote {
            return Ok(());
        }
        let stream = self.stream.as_deref().ok_or(Error::Failure)?;
        if e.change_base {
            let mut out = Vec::new();
            let (nonce, seq) = (e.nonce, e.seq);
            put_record(&mut out, TAG_COMMIT, |v| {
                v.extend_from_slice(&nonce.to_le_bytes());
                v.extend_from_slice(&seq.to_le_bytes());
            });
            stream.write_at(e.len, &out)?;
            e.len += out.len() as u64;
        } else {
            stream.truncate(e.change_start)?;
            e.len = e.change_start;
        }
        e.change_wrote = false;
        Ok(())
    }

    /// Call `f` with every region (position, old bytes) the change in
    /// progress saved, reading its records back one at a time.
    pub fn change_regions(&self, mut f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        let e = self.epoch.as_ref().ok_or(Error::Failure)?;
        let s = self.stream()?;
        let mut at = if e.change_start == 0 { 8 } else { e.change_start };
        let mut head = [0u8; 5];
        let mut rec = Vec::new();
        while at < e.len {
            s.read_exact_at(at, &mut head)?;
            let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
            rec.resize(13 + len, 0);
            s.read_exact_at(at, &mut rec)?;
            let (tag, payload) = record_at(&rec, 0).ok_or(Error::FileRead)?;
            if tag == TAG_REGIONS {
                let r = regions_record(payload, e.nonce, e.base_len).ok_or(Error::FileRead)?;
                if r.seq == e.seq {
                    for (pos, bytes, _) in &r.regions {
                        f(*pos, bytes)?;
                    }
                }
            }
            at += rec.len() as u64;
        }
        Ok(())
    }

    /// Whether the epoch should end with a checkpoint now.
    pub fn checkpoint_due(&self) -> bool {
        let Some(e) = &self.epoch else { return false };
        self.every_change
            || self.durability != Durability::Consistent
            || boot_id().is_none()
            || e.started.elapsed() >= EPOCH_AGE_OVERRIDE.with(|a| a.get()).unwrap_or(EPOCH_AGE)
            || e.len >= EPOCH_BYTES
    }

    /// Whether the journal holds changes since the last checkpoint.
    pub fn has_epoch(&self) -> bool {
        self.epoch.is_some()
    }

    /// The frame's length at the last checkpoint, while an epoch is open.
    pub fn base_len(&self) -> Option<u64> {
        self.epoch.as_ref().map(|e| e.base_len)
    }

    /// Empty the journal (the frame was synced: the checkpoint), syncing
    /// that when `sync`.
    pub fn reset(&mut self, sync: bool) -> Result<()> {
        self.stream()?.truncate(0)?;
        self.epoch = None;
        self.reset_unsynced = true;
        if sync {
            self.sync_reset()?;
        }
        Ok(())
    }

    /// Make the last emptying of the journal durable, if it is not: until
    /// then a power loss can bring back the records of an earlier epoch
    /// (and the frame back to the checkpoint before it).
    pub fn sync_reset(&mut self) -> Result<()> {
        if self.reset_unsynced {
            if let Some(s) = self.stream.as_deref() {
                s.sync()?;
            }
            self.reset_unsynced = false;
        }
        Ok(())
    }

    pub fn unlock(&mut self) {
        if let Some(f) = &self.lock {
            unlock_journal(f);
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        // An empty journal nobody is using is removed with its handle (one
        // through user callbacks stays, empty: they cannot remove files).
        self.stream = None;
        if let Some(f) = self.lock.take() {
            if lock_journal(&f, false) {
                if same_file(&f, &self.path) && f.metadata().is_ok_and(|m| m.len() == 0) {
                    let _ = self.backend.remove(&self.path);
                }
                unlock_journal(&f);
            }
        }
    }
}

/// A journal left beside the frame file at `frame_path` by a handle that
/// is gone (or between two of its changes): what it asks, with the journal
/// locked (exclusively) until [`Pending::done`]. `None` when there is none,
/// or when its writer is in the middle of a change.
pub struct Pending {
    pub plan: Plan,
    file: File,
    path: String,
}

impl Pending {
    /// The journal beside `frame_path`, locked, and what it asks; `None`
    /// when there is none or its writer is at work.
    pub fn find(frame_path: &str) -> Result<Option<Pending>> {
        let path = journal_path(frame_path);
        let Ok(meta) = std::fs::metadata(&path) else { return Ok(None) };
        if meta.len() == 0 {
            return Ok(None);
        }
        let Ok(file) = std::fs::OpenOptions::new().read(true).write(true).open(&path) else {
            return Ok(None);
        };
        if !lock_journal(&file, false) {
            return Ok(None); // its writer is at work
        }
        let size = file.metadata().map_err(|_| Error::FileRead)?.len();
        let plan = plan(&Source::new(size, &|pos, buf| read_file_at(&file, pos, buf)), boot_id())?;
        Ok(Some(Pending { plan, file, path }))
    }

    /// The frame was put back (or the record was not a whole one) and
    /// synced: empty the journal (durably) and remove it.
    pub fn done(self) {
        let _ = self.file.set_len(0);
        let _ = self.file.sync_data();
        let _ = crate::os::remove_file(&self.path);
        unlock_journal(&self.file);
    }
}

fn read_file_at(f: &File, pos: u64, buf: &mut [u8]) -> Result<usize> {
    crate::os::read_at(f, pos, buf).map_err(|_| Error::FileRead)
}

/// A piece of a region to save: `(position, bytes, base)` (see [`split_regions`]).
type Piece<'a> = (u64, &'a [u8], bool);

/// The regions to save, split into pieces `(position, bytes, base)`: `base`
/// for the bytes below `limit` (the frame's length when the epoch began) that
/// no earlier record of the epoch has saved, which undo restores; and those
/// newly saved base ranges.
fn split_regions<'a>(
    saved: &[(u64, u64)],
    limit: u64,
    regions: &'a [(u64, Vec<u8>)],
) -> (Vec<Piece<'a>>, Vec<(u64, u64)>) {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut new_base = Vec::new();
    for (pos, bytes) in regions {
        let end = pos + bytes.len() as u64;
        let mut at = *pos;
        // base ranges: [pos, min(end, limit)) minus what is saved
        let gaps = if at < end.min(limit) { ranges_gaps(saved, at, end.min(limit)) } else { Vec::new() };
        for (a, b) in gaps {
            if a > at {
                pieces.push((at, &bytes[(at - pos) as usize..(a - pos) as usize], false));
            }
            pieces.push((a, &bytes[(a - pos) as usize..(b - pos) as usize], true));
            new_base.push((a, b));
            at = b;
        }
        if at < end {
            pieces.push((at, &bytes[(at - pos) as usize..], false));
        }
    }
    (pieces, new_base)
}

/// Put `pieces` into `out` as region records of at most `RECORD_MAX` bytes of
/// payload (a piece longer than half of it is split).
fn put_region_records(out: &mut Vec<u8>, nonce: u64, seq: u64, pre_len: u64, pieces: &[Piece]) {
    let mut split: Vec<Piece> = Vec::new();
    for &(p, b, base) in pieces {
        for (k, part) in b.chunks(RECORD_MAX / 2).enumerate() {
            split.push((p + (k * (RECORD_MAX / 2)) as u64, part, base));
        }
    }
    let mut i = 0;
    while i < split.len() {
        let mut j = i;
        let mut size = 28;
        while j < split.len() && (j == i || size + 13 + split[j].1.len() <= RECORD_MAX) {
            size += 13 + split[j].1.len();
            j += 1;
        }
        let group = &split[i..j];
        put_record(out, TAG_REGIONS, |v| {
            v.extend_from_slice(&nonce.to_le_bytes());
            v.extend_from_slice(&seq.to_le_bytes());
            v.extend_from_slice(&pre_len.to_le_bytes());
            v.extend_from_slice(&(group.len() as u32).to_le_bytes());
            for (p, b, base) in group {
                v.extend_from_slice(&p.to_le_bytes());
                v.extend_from_slice(&(b.len() as u32).to_le_bytes());
                v.push(u8::from(*base));
                v.extend_from_slice(b);
            }
        });
        i = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a plan puts back, with the bytes it reads from `journal`.
    fn undo_of(journal: &[u8], plan: Plan) -> Option<Undo> {
        let Plan::Undo(r) = plan else { return None };
        let regions = r
            .regions
            .iter()
            .map(|s| (s.pos, journal[s.at as usize..(s.at + s.len) as usize].to_vec()))
            .collect();
        Some(Undo { identity: r.identity, old_len: r.old_len, regions })
    }

    #[test]
    fn records_of_the_first_format_round_trip_and_torn_ones_are_refused() {
        let u = Undo {
            identity: (3, 77),
            old_len: 4096,
            regions: vec![(0, vec![1, 2, 3]), (1000, vec![9; 300])],
        };
        let b = u.encode();
        assert_eq!(undo_of(&b, plan_bytes(&b, None)), Some(u.clone()));
        for cut in [0, 1, 8, 40, b.len() / 2, b.len() - 1] {
            assert_eq!(plan_bytes(&b[..cut], None), Plan::Nothing, "cut at {cut}");
        }
        let outside = Undo { identity: (3, 77), old_len: 100, regions: vec![(90, vec![0; 20])] };
        assert_eq!(plan_bytes(&outside.encode(), None), Plan::Nothing, "a region past the old length");
        let mut flipped = b.clone();
        flipped[50] ^= 1;
        assert_eq!(plan_bytes(&flipped, None), Plan::Nothing);
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(plan_bytes(&longer, None), Plan::Nothing, "bytes after the checksum");
        let empty = Undo { identity: (0, 0), old_len: 0, regions: vec![] };
        assert_eq!(undo_of(&empty.encode(), plan_bytes(&empty.encode(), None)), Some(empty));
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    fn plans_undo_the_change_in_progress_or_go_back_to_the_checkpoint() {
        let dir = crate::os::temp_dir().join(format!("b2nd-journal-plan-{}", crate::os::process_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let frame = dir.join("f.b2frame");
        std::fs::write(&frame, [0u8; 100]).unwrap();
        let frame = frame.to_str().unwrap().to_string();
        let me = [7u8; 16];
        set_boot_id_for_this_thread(Some(Some(me)));
        let mut j = Journal::new(&frame, crate::io::filesystem(), Durability::Off);
        assert_eq!(j.start_change().unwrap(), Found::Ours);
        j.save(100, &[(0, vec![1; 10])]).unwrap();
        j.end_change().unwrap();
        j.unlock();
        assert_eq!(j.start_change().unwrap(), Found::Ours);
        // 0..10 is saved already (not a base region now), 50..55 is new
        j.save(100, &[(0, vec![2; 10]), (50, vec![3; 5])]).unwrap();
        let bytes = std::fs::read(journal_path(&frame)).unwrap();
        let identity = crate::io::path_identity(&frame).unwrap();
        // the process died: the change in progress goes
        let change = Undo { identity, old_len: 100, regions: vec![(0, vec![2; 10]), (50, vec![3; 5])] };
        assert_eq!(undo_of(&bytes, plan_bytes(&bytes, Some(me))), Some(change));
        // the machine died: back to the checkpoint
        let base = Undo { identity, old_len: 100, regions: vec![(0, vec![1; 10]), (50, vec![3; 5])] };
        assert_eq!(undo_of(&bytes, plan_bytes(&bytes, Some([8; 16]))), Some(base.clone()));
        assert_eq!(undo_of(&bytes, plan_bytes(&bytes, None)), Some(base));
        // cut short anywhere: never more than what whole records say
        for cut in 0..bytes.len() {
            match plan_bytes(&bytes[..cut], Some(me)) {
                Plan::Nothing | Plan::Keep(_) => {}
                Plan::Undo(u) => {
                    assert!(u.regions.iter().all(|s| s.pos + s.len <= 100 && s.at + s.len <= cut as u64))
                }
            }
        }
        // the first change alone, committed: nothing to undo on this boot
        j.end_change().unwrap();
        let bytes = std::fs::read(journal_path(&frame)).unwrap();
        assert_eq!(plan_bytes(&bytes, Some(me)), Plan::Keep(identity));
        // a flipped bit ends the journal where it is
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert_eq!(plan_bytes(&flipped, Some(me)), Plan::Nothing);
        j.unlock();
        drop(j);
        set_boot_id_for_this_thread(None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
