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

use crate::error::{Error, Result};
use crate::io::{Backend, Durability, Mode, Stream};
use std::cell::Cell;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::{Arc, OnceLock};
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

/// The id of this boot of the machine (Linux: `/proc/sys/kernel/random/boot_id`),
/// or `None` when unknown.
pub fn boot_id() -> Option<[u8; 16]> {
    if let Some(o) = BOOT_OVERRIDE.with(|b| b.get()) {
        return o;
    }
    static ID: OnceLock<Option<[u8; 16]>> = OnceLock::new();
    *ID.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        if digits.len() != 32 {
            return None;
        }
        let mut id = [0u8; 16];
        for (i, pair) in digits.chunks(2).enumerate() {
            id[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
        }
        Some(id)
    })
}

fn new_nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    h.write_u32(std::process::id());
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish() | 1
}

/// What undoes a change: the old bytes of the regions it overwrites and the
/// old length of the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undo {
    pub identity: (u64, u64),
    pub old_len: u64,
    pub regions: Vec<(u64, Vec<u8>)>,
}

/// The checksum of the first journal format (FNV-1a 64).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The checksum of a record of the second format: four independent lanes
/// of 8-byte words (xor, multiply by an odd constant, rotate, add), folded
/// with the length and the last bytes, then mixed. A record holds what a
/// change overwrites (up to 16 MiB moved by an update): it runs at several
/// GB/s where a byte at a time (FNV-1a) made half the cost of an update.
fn checksum(bytes: &[u8]) -> u64 {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xbf58_476d_1ce4_e5b9;
    const K3: u64 = 0x94d0_49bb_1331_11eb;
    let mut lanes = [K1, K2, K3, K1 ^ K3];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (k, lane) in lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(block[k * 8..k * 8 + 8].try_into().unwrap_or_default());
            *lane = (*lane ^ w).wrapping_mul(K2).rotate_left(29).wrapping_add(w);
        }
    }
    let mut h = (bytes.len() as u64).wrapping_mul(K3);
    for (k, lane) in lanes.iter().enumerate() {
        h = (h ^ lane.rotate_left(16 * k as u32)).wrapping_mul(K1);
    }
    for &b in blocks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 31;
    h = h.wrapping_mul(K2);
    h ^= h >> 29;
    h = h.wrapping_mul(K3);
    h ^ (h >> 32)
}

impl Undo {
    /// The record of the first journal format (one change, rewritten whole).
    pub fn encode(&self) -> Vec<u8> {
        let size: usize = self.regions.iter().map(|(_, b)| 12 + b.len()).sum();
        let mut v = Vec::with_capacity(44 + size);
        v.extend_from_slice(MAGIC_V1);
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

    /// The record of the first format in `b`, or `None` when it is not a whole one.
    pub fn decode(b: &[u8]) -> Option<Undo> {
        let body = b.get(..b.len().checked_sub(8)?)?;
        let sum = u64::from_le_bytes(b.get(body.len()..)?.try_into().ok()?);
        if fnv1a(body) != sum || body.get(..8)? != MAGIC_V1 {
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

/// Append a record to `out`.
fn put_record(out: &mut Vec<u8>, tag: u8, payload: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.push(tag);
    out.extend_from_slice(&[0; 4]);
    payload(out);
    let len = (out.len() - start - 5) as u32;
    out[start + 1..start + 5].copy_from_slice(&len.to_le_bytes());
    let sum = checksum(&out[start..]);
    out.extend_from_slice(&sum.to_le_bytes());
}

struct EpochRecord {
    boot: [u8; 16],
    nonce: u64,
    identity: (u64, u64),
    base_len: u64,
}

struct RegionsRecord {
    seq: u64,
    pre_len: u64,
    regions: Vec<(u64, Vec<u8>, bool)>,
}

fn u64_at(p: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(p.get(i..i.checked_add(8)?)?.try_into().ok()?))
}

fn u32_at(p: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_le_bytes(p.get(i..i.checked_add(4)?)?.try_into().ok()?))
}

/// The record at `at` in `b`: its tag and payload, when whole.
fn record_at(b: &[u8], at: usize) -> Option<(u8, &[u8])> {
    let tag = *b.get(at)?;
    let len = u32_at(b, at + 1)? as usize;
    let end = at.checked_add(5)?.checked_add(len)?;
    let whole = b.get(at..end)?;
    (checksum(whole) == u64_at(b, end)?).then(|| (tag, &whole[5..]))
}

fn epoch_record(p: &[u8]) -> Option<EpochRecord> {
    if p.len() != 48 {
        return None;
    }
    let boot = p[..16].try_into().ok()?;
    Some(EpochRecord { boot, nonce: u64_at(p, 16)?, identity: (u64_at(p, 24)?, u64_at(p, 32)?), base_len: u64_at(p, 40)? })
}

fn regions_record(p: &[u8], nonce: u64, base_len: u64) -> Option<RegionsRecord> {
    // a record of another epoch (left past a truncation that was not synced) ends the journal
    if u64_at(p, 0)? != nonce {
        return None;
    }
    let (seq, pre_len) = (u64_at(p, 8)?, u64_at(p, 16)?);
    let n = u32_at(p, 24)? as usize;
    let mut i = 28;
    let mut regions = Vec::new();
    for _ in 0..n {
        let pos = u64_at(p, i)?;
        let len = u32_at(p, i + 8)? as usize;
        let base = match *p.get(i + 12)? {
            0 => false,
            1 => true,
            _ => return None,
        };
        // what a change saves lies inside the frame it changes (and inside
        // the frame at the checkpoint, for a base region)
        let bound = if base { base_len.min(pre_len) } else { pre_len };
        if pos.checked_add(len as u64)? > bound {
            return None;
        }
        regions.push((pos, p.get(i + 13..(i + 13).checked_add(len)?)?.to_vec(), base));
        i += 13 + len;
    }
    (i == p.len()).then_some(RegionsRecord { seq, pre_len, regions })
}

/// The whole records of a journal of the second format, up to the first
/// one that is not (cut short, or never written).
fn parse(b: &[u8]) -> Option<(EpochRecord, Vec<RegionsRecord>, Vec<u64>)> {
    if b.get(..8)? != MAGIC {
        return None;
    }
    let (tag, p) = record_at(b, 8)?;
    let epoch = if tag == TAG_EPOCH { epoch_record(p)? } else { return None };
    let mut at = 8 + 13 + p.len();
    let mut regions = Vec::new();
    let mut commits = Vec::new();
    while let Some((tag, p)) = record_at(b, at) {
        match tag {
            TAG_REGIONS => match regions_record(p, epoch.nonce, epoch.base_len) {
                Some(r) => regions.push(r),
                None => break,
            },
            TAG_COMMIT if p.len() == 16 && u64_at(p, 0) == Some(epoch.nonce) => commits.extend(u64_at(p, 8)),
            _ => break,
        }
        at += 13 + p.len();
    }
    Some((epoch, regions, commits))
}

/// The parts of `[a, b)` that the sorted, disjoint ranges `set` do not cover.
pub(crate) fn ranges_gaps(set: &[(u64, u64)], a: u64, b: u64) -> Vec<(u64, u64)> {
    let mut gaps = Vec::new();
    let mut cur = a;
    let first = set.partition_point(|&(_, end)| end <= a);
    for &(x, y) in set[first..].iter().take_while(|&&(x, _)| x < b) {
        if x > cur {
            gaps.push((cur, x));
        }
        cur = cur.max(y);
    }
    if cur < b {
        gaps.push((cur, b));
    }
    gaps
}

/// Add `[a, b)` to the sorted, disjoint ranges `set`, merging what touches it.
pub(crate) fn ranges_insert(set: &mut Vec<(u64, u64)>, a: u64, b: u64) {
    if a >= b {
        return;
    }
    let lo = set.partition_point(|&(_, end)| end < a);
    let hi = set.partition_point(|&(start, _)| start <= b);
    let (mut x, mut y) = (a, b);
    if lo < hi {
        x = x.min(set[lo].0);
        y = y.max(set[hi - 1].1);
    }
    set.splice(lo..hi, [(x, y)]);
}

/// What a journal left behind asks of its frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Nothing was changed yet (no whole record): drop the journal.
    Nothing,
    /// Every change is complete: the frame stands as it is (once synced, the
    /// journal can go). Of the frame with this identity.
    Keep((u64, u64)),
    /// Put these bytes back.
    Undo(Undo),
}

/// What the journal `bytes` asks of its frame, on the machine boot `boot`.
pub fn plan(bytes: &[u8], boot: Option<[u8; 16]>) -> Plan {
    if bytes.starts_with(MAGIC_V1) {
        return Undo::decode(bytes).map_or(Plan::Nothing, Plan::Undo);
    }
    let Some((epoch, records, commits)) = parse(bytes) else { return Plan::Nothing };
    let identity = epoch.identity;
    if boot.is_some_and(|b| b == epoch.boot) {
        // only the process died: the last change alone, if it is not complete
        let Some(last) = records.iter().map(|r| r.seq).max() else { return Plan::Keep(identity) };
        if commits.contains(&last) {
            return Plan::Keep(identity);
        }
        let mut old_len = None;
        let mut regions = Vec::new();
        for r in records.into_iter().filter(|r| r.seq == last) {
            old_len.get_or_insert(r.pre_len);
            regions.extend(r.regions.into_iter().map(|(p, b, _)| (p, b)));
        }
        return Plan::Undo(Undo { identity, old_len: old_len.unwrap_or(epoch.base_len), regions });
    }
    // after a reboot (or on another machine): back to the checkpoint
    let regions = records.into_iter().flat_map(|r| r.regions).filter(|r| r.2).map(|(p, b, _)| (p, b)).collect();
    Plan::Undo(Undo { identity, old_len: epoch.base_len, regions })
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
                let s = match self.backend.open(&self.path, Mode::Update) {
                    Ok(s) => s,
                    Err(_) => self.backend.open(&self.path, Mode::Create)?,
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

    fn stream(&self) -> Result<&dyn Stream> {
        self.stream.as_deref().ok_or(Error::Failure)
    }

    /// Whether the journal still holds this handle's epoch (no other handle
    /// took it over since).
    fn epoch_is_ours(&self) -> Result<bool> {
        let Some(e) = &self.epoch else { return Ok(false) };
        let s = self.stream()?;
        let mut nonce = [0u8; 8];
        Ok(s.size()? == e.len && s.read_at(NONCE_AT, &mut nonce)? == 8 && u64::from_le_bytes(nonce) == e.nonce)
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
        let len = usize::try_from(size.min(1 << 34)).map_err(|_| Error::MemoryAlloc)?;
        let mut bytes = vec![0u8; len];
        let n = s.read_at(0, &mut bytes)?;
        bytes.truncate(n);
        Ok(Found::Foreign(plan(&bytes, boot_id())))
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
            let identity = self.frame_identity();
            let nonce = new_nonce();
            out.extend_from_slice(MAGIC);
            put_record(&mut out, TAG_EPOCH, |v| {
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
        }
        let e = self.epoch.as_mut().ok_or(Error::Failure)?;
        // split each region into its base parts and the rest
        let mut pieces: Vec<(u64, &[u8], bool)> = Vec::new();
        let mut new_base = Vec::new();
        for (pos, bytes) in regions {
            let end = pos + bytes.len() as u64;
            let mut at = *pos;
            let limit = e.base_len.min(pre_len);
            // base ranges: [pos, min(end, limit)) minus what is saved
            let gaps = if at < end.min(limit) { ranges_gaps(&e.saved, at, end.min(limit)) } else { Vec::new() };
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
        // records of at most RECORD_MAX payload (a region longer is split)
        let mut i = 0;
        let mut split: Vec<(u64, &[u8], bool)> = Vec::new();
        for (p, b, base) in pieces {
            for (k, part) in b.chunks(RECORD_MAX / 2).enumerate() {
                split.push((p + (k * (RECORD_MAX / 2)) as u64, part, base));
            }
        }
        while i < split.len() {
            let mut j = i;
            let mut size = 28;
            while j < split.len() && (j == i || size + 13 + split[j].1.len() <= RECORD_MAX) {
                size += 13 + split[j].1.len();
                j += 1;
            }
            let group = &split[i..j];
            put_record(&mut out, TAG_REGIONS, |v| {
                v.extend_from_slice(&e.nonce.to_le_bytes());
                v.extend_from_slice(&e.seq.to_le_bytes());
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
        let at = e.len;
        let stream = self.stream.as_deref().ok_or(Error::Failure)?;
        stream.write_at(at, &out)?;
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
            flock(f, libc::LOCK_UN);
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        // An empty journal nobody is using is removed with its handle (one
        // through user callbacks stays, empty: they cannot remove files).
        self.stream = None;
        if let Some(f) = self.lock.take() {
            if flock(&f, libc::LOCK_EX | libc::LOCK_NB) {
                if same_file(&f, &self.path) && f.metadata().is_ok_and(|m| m.len() == 0) {
                    let _ = self.backend.remove(&self.path);
                }
                flock(&f, libc::LOCK_UN);
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
        let plan = if ok { plan(&bytes, boot_id()) } else { Plan::Nothing };
        Some(Pending { plan, file, path })
    }

    /// The frame was put back (or the record was not a whole one) and
    /// synced: empty the journal (durably) and remove it.
    pub fn done(self) {
        let _ = self.file.set_len(0);
        let _ = self.file.sync_data();
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

/// [`recover`] through a backend whose paths are not files (user
/// callbacks): the journal is read and emptied with the backend's own
/// callbacks, and not locked.
fn recover_through(frame_path: &str, stream: Box<dyn Stream>, base: u64, writable: bool, sidecar: &Arc<dyn Backend>) -> Result<Box<dyn Stream>> {
    let path = journal_path(frame_path);
    let Ok(j) = sidecar.open(&path, Mode::Read) else { return Ok(stream) };
    let size = match j.size() {
        Ok(0) => return Ok(stream),
        Ok(n) => n,
        Err(e) => {
            crate::trace!("{path}: the I/O backend has no size callback: the journal cannot be read");
            return Err(e);
        }
    };
    let mut bytes = vec![0u8; usize::try_from(size.min(1 << 34)).map_err(|_| Error::MemoryAlloc)?];
    let n = j.read_at(0, &mut bytes)?;
    bytes.truncate(n);
    drop(j);
    let empty = || -> Result<()> {
        let j = sidecar.open(&path, Mode::Update)?;
        j.truncate(0)?;
        j.sync()
    };
    match plan(&bytes, boot_id()) {
        Plan::Nothing | Plan::Keep(_) if writable => {
            stream.sync()?;
            empty()?;
        }
        Plan::Nothing | Plan::Keep(_) => {}
        Plan::Undo(undo) => {
            crate::trace!("{frame_path}: a change was left half done (a process or the machine died); putting the frame back as it was before it");
            if !writable {
                return Ok(Box::new(Overlay::new(stream, base, undo)));
            }
            put_back(stream.as_ref(), base, &undo)?;
            empty()?;
        }
    }
    Ok(stream)
}

/// Write back what `undo` saved of the frame at `base` of `stream`, cut it to
/// its old length and sync it.
fn put_back(stream: &dyn Stream, base: u64, undo: &Undo) -> Result<()> {
    for (pos, bytes) in &undo.regions {
        stream.write_at(base + pos, bytes)?;
    }
    stream.truncate(base + undo.old_len)?;
    stream.sync()
}

/// Sync every chunk file of the sparse frame directory `dir`, and the directory.
pub fn sync_chunk_files(dir: &str) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|_| Error::FileOpen)?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().ends_with(".chunk") {
            File::open(entry.path()).and_then(|f| f.sync_data()).map_err(|_| Error::FileWrite)?;
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
    let Some(p) = Pending::find(frame_path) else { return Ok(stream) };
    let replaced = |identity: (u64, u64)| identity != (0, 0) && stream.identity().is_some_and(|id| id != identity);
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
        Plan::Undo(undo) if replaced(undo.identity) => p.done(),
        Plan::Undo(undo) => {
            crate::trace!("{frame_path}: a change was left half done (a process or the machine died); putting the frame back as it was before it");
            if !writable {
                return Ok(Box::new(Overlay::new(stream, base, undo)));
            }
            put_back(stream.as_ref(), base, &undo)?;
            p.done();
        }
    }
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

    #[test]
    fn ranges_merge_and_leave_gaps() {
        let mut set = Vec::new();
        for (a, b) in [(10, 20), (30, 40), (20, 25), (50, 60), (5, 8), (39, 51)] {
            ranges_insert(&mut set, a, b);
        }
        assert_eq!(set, vec![(5, 8), (10, 25), (30, 60)]);
        assert_eq!(ranges_gaps(&set, 0, 100), vec![(0, 5), (8, 10), (25, 30), (60, 100)]);
        assert_eq!(ranges_gaps(&set, 12, 28), vec![(25, 28)]);
        assert_eq!(ranges_gaps(&set, 31, 59), vec![]);
        assert_eq!(ranges_gaps(&[], 3, 4), vec![(3, 4)]);
    }

    #[test]
    fn plans_undo_the_change_in_progress_or_go_back_to_the_checkpoint() {
        let dir = std::env::temp_dir().join(format!("b2nd-journal-plan-{}", std::process::id()));
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
        assert_eq!(plan(&bytes, Some(me)), Plan::Undo(change));
        // the machine died: back to the checkpoint
        let base = Undo { identity, old_len: 100, regions: vec![(0, vec![1; 10]), (50, vec![3; 5])] };
        assert_eq!(plan(&bytes, Some([8; 16])), Plan::Undo(base.clone()));
        assert_eq!(plan(&bytes, None), Plan::Undo(base));
        // cut short anywhere: never more than what whole records say
        for cut in 0..bytes.len() {
            match plan(&bytes[..cut], Some(me)) {
                Plan::Nothing | Plan::Keep(_) => {}
                Plan::Undo(u) => assert!(u.regions.iter().all(|(p, b)| p + b.len() as u64 <= 100)),
            }
        }
        // the first change alone, committed: nothing to undo on this boot
        j.end_change().unwrap();
        let bytes = std::fs::read(journal_path(&frame)).unwrap();
        assert_eq!(plan(&bytes, Some(me)), Plan::Keep(identity));
        // a flipped bit ends the journal where it is
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert_eq!(plan(&flipped, Some(me)), Plan::Nothing);
        j.unlock();
        drop(j);
        set_boot_id_for_this_thread(None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
