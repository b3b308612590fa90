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
    let mut s = Sum::new();
    s.update(bytes);
    s.finish()
}

/// [`checksum`] of bytes that come a piece at a time.
struct Sum {
    lanes: [u64; 4],
    pending: [u8; 32],
    npending: usize,
    total: u64,
}

impl Sum {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xbf58_476d_1ce4_e5b9;
    const K3: u64 = 0x94d0_49bb_1331_11eb;

    fn new() -> Sum {
        Sum { lanes: [Self::K1, Self::K2, Self::K3, Self::K1 ^ Self::K3], pending: [0; 32], npending: 0, total: 0 }
    }

    fn block(&mut self, block: &[u8]) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(block[k * 8..k * 8 + 8].try_into().unwrap_or_default());
            *lane = (*lane ^ w).wrapping_mul(Self::K2).rotate_left(29).wrapping_add(w);
        }
    }

    fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.npending > 0 {
            let take = (32 - self.npending).min(bytes.len());
            self.pending[self.npending..self.npending + take].copy_from_slice(&bytes[..take]);
            self.npending += take;
            bytes = &bytes[take..];
            if self.npending < 32 {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.npending = 0;
        }
        let mut blocks = bytes.chunks_exact(32);
        for block in &mut blocks {
            self.block(block);
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.npending = rest.len();
    }

    fn finish(&self) -> u64 {
        let mut h = self.total.wrapping_mul(Self::K3);
        for (k, lane) in self.lanes.iter().enumerate() {
            h = (h ^ lane.rotate_left(16 * k as u32)).wrapping_mul(Self::K1);
        }
        for &b in &self.pending[..self.npending] {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        h ^= h >> 31;
        h = h.wrapping_mul(Self::K2);
        h ^= h >> 29;
        h = h.wrapping_mul(Self::K3);
        h ^ (h >> 32)
    }
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
    (i == p.len()).then_some(RegionsRecord { seq, regions })
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

/// Old bytes of a frame that a journal holds: `len` bytes for position `pos`
/// of the frame, at `at` in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saved {
    pub pos: u64,
    pub len: u64,
    pub at: u64,
}

/// What puts a frame back: its old length and the old bytes of the regions
/// a change (or the changes since the checkpoint) overwrote, read from the
/// journal a piece at a time (a change of many gigabytes saves as much).
/// The regions are disjoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restore {
    pub identity: (u64, u64),
    pub old_len: u64,
    pub regions: Vec<Saved>,
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
    Undo(Restore),
}

/// Bytes are read from a journal and copied out of it in pieces this long.
const PIECE: usize = 1 << 20;

/// A journal being read: its length, and a read at a position.
pub struct Source<'a> {
    size: u64,
    read: &'a dyn Fn(u64, &mut [u8]) -> Result<usize>,
}

impl<'a> Source<'a> {
    pub fn new(size: u64, read: &'a dyn Fn(u64, &mut [u8]) -> Result<usize>) -> Source<'a> {
        Source { size, read }
    }

    /// Fill `buf` from `pos`; `false` when the journal ends before.
    fn fill(&self, pos: u64, buf: &mut [u8]) -> Result<bool> {
        if pos.checked_add(buf.len() as u64).is_none_or(|end| end > self.size) {
            return Ok(false);
        }
        let mut done = 0;
        while done < buf.len() {
            let n = (self.read)(pos + done as u64, &mut buf[done..])?;
            if n == 0 {
                return Ok(false);
            }
            done += n;
        }
        Ok(true)
    }

    /// Give `f` the `len` bytes at `pos`, a piece at a time; `false` when
    /// the journal ends before.
    fn pieces(&self, pos: u64, len: u64, buf: &mut Vec<u8>, mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        if pos.checked_add(len).is_none_or(|end| end > self.size) {
            return Ok(false);
        }
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(PIECE as u64) as usize;
            buf.resize(n, 0);
            if !self.fill(pos + done, &mut buf[..n])? {
                return Ok(false);
            }
            f(&buf[..n])?;
            done += n as u64;
        }
        Ok(true)
    }

    /// Call `f` with every region of `r` (position in the frame, old bytes),
    /// a piece at a time.
    pub fn each_region(&self, r: &Restore, mut f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        let mut buf = Vec::new();
        for s in &r.regions {
            let mut at = s.pos;
            let whole = self.pieces(s.at, s.len, &mut buf, |b| {
                f(at, b)?;
                at += b.len() as u64;
                Ok(())
            })?;
            if !whole {
                // it was whole when planned: the journal changed since
                return Err(Error::FileRead);
            }
        }
        Ok(())
    }
}

/// A whole record of regions, without their bytes.
struct RegionsMeta {
    seq: u64,
    pre_len: u64,
    regions: Vec<(Saved, bool)>,
}

/// The record of regions at `at`, whose payload is `len` bytes, when whole
/// and of this epoch. Its bytes are checksummed a piece at a time.
fn scan_regions(src: &Source, at: u64, len: u64, epoch: &EpochRecord, buf: &mut Vec<u8>) -> Result<Option<RegionsMeta>> {
    let mut sum = Sum::new();
    let mut head = [0u8; 5 + 28];
    if len < 28 || !src.fill(at, &mut head)? {
        return Ok(None);
    }
    sum.update(&head);
    let p = &head[5..];
    let (Some(nonce), Some(seq), Some(pre_len), Some(n)) = (u64_at(p, 0), u64_at(p, 8), u64_at(p, 16), u32_at(p, 24)) else {
        return Ok(None);
    };
    // a record of another epoch (left past a truncation that was not synced) ends the journal
    if nonce != epoch.nonce {
        return Ok(None);
    }
    let mut i = 28u64;
    let mut regions = Vec::new();
    for _ in 0..n {
        let mut rh = [0u8; 13];
        if i + 13 > len || !src.fill(at + 5 + i, &mut rh)? {
            return Ok(None);
        }
        sum.update(&rh);
        let (Some(pos), Some(rlen)) = (u64_at(&rh, 0), u32_at(&rh, 8)) else { return Ok(None) };
        let base = match rh[12] {
            0 => false,
            1 => true,
            _ => return Ok(None),
        };
        let rlen = u64::from(rlen);
        // what a change saves lies inside the frame it changes (and inside
        // the frame at the checkpoint, for a base region)
        let bound = if base { epoch.base_len.min(pre_len) } else { pre_len };
        if pos.checked_add(rlen).is_none_or(|end| end > bound) || i + 13 + rlen > len {
            return Ok(None);
        }
        let data = at + 5 + i + 13;
        if !src.pieces(data, rlen, buf, |b| {
            sum.update(b);
            Ok(())
        })? {
            return Ok(None);
        }
        if rlen > 0 {
            regions.push((Saved { pos, len: rlen, at: data }, base));
        }
        i += 13 + rlen;
    }
    let mut stored = [0u8; 8];
    if i != len || !src.fill(at + 5 + len, &mut stored)? || sum.finish() != u64::from_le_bytes(stored) {
        return Ok(None);
    }
    Ok(Some(RegionsMeta { seq, pre_len, regions }))
}

/// What a journal of the second format holds: its epoch, its records of
/// regions and the changes committed.
type Scanned = (EpochRecord, Vec<RegionsMeta>, Vec<u64>);

/// The whole records of a journal of the second format, up to the first
/// one that is not (cut short, or never written).
fn scan(src: &Source) -> Result<Option<Scanned>> {
    let mut first = [0u8; 8 + 13 + 48];
    if !src.fill(0, &mut first)? || &first[..8] != MAGIC {
        return Ok(None);
    }
    let epoch = match record_at(&first, 8) {
        Some((TAG_EPOCH, p)) => match epoch_record(p) {
            Some(e) => e,
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let mut at = first.len() as u64;
    let mut records = Vec::new();
    let mut commits = Vec::new();
    let mut buf = Vec::new();
    loop {
        let mut head = [0u8; 5];
        if !src.fill(at, &mut head)? {
            break;
        }
        let len = u64::from(u32::from_le_bytes([head[1], head[2], head[3], head[4]]));
        match head[0] {
            TAG_REGIONS => match scan_regions(src, at, len, &epoch, &mut buf)? {
                Some(r) => records.push(r),
                None => break,
            },
            TAG_COMMIT if len == 16 => {
                let mut k = [0u8; 5 + 16 + 8];
                if !src.fill(at, &mut k)? {
                    break;
                }
                match record_at(&k, 0) {
                    Some((_, p)) if u64_at(p, 0) == Some(epoch.nonce) => commits.extend(u64_at(p, 8)),
                    _ => break,
                }
            }
            _ => break,
        }
        at += 5 + len + 8;
    }
    Ok(Some((epoch, records, commits)))
}

/// A journal of the first format: one change, in one record, with an FNV-1a
/// checksum of it all at the end.
fn scan_v1(src: &Source) -> Result<Plan> {
    let fnv = |h: u64, bytes: &[u8]| bytes.iter().fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let Some(body) = src.size.checked_sub(8) else { return Ok(Plan::Nothing) };
    let mut head = [0u8; 36];
    if !src.fill(0, &mut head)? {
        return Ok(Plan::Nothing);
    }
    h = fnv(h, &head);
    let (Some(id0), Some(id1), Some(old_len), Some(n)) = (u64_at(&head, 8), u64_at(&head, 16), u64_at(&head, 24), u32_at(&head, 32)) else {
        return Ok(Plan::Nothing);
    };
    let mut at = 36u64;
    let mut regions = Vec::new();
    let mut buf = Vec::new();
    for _ in 0..n {
        let mut rh = [0u8; 12];
        if at + 12 > body || !src.fill(at, &mut rh)? {
            return Ok(Plan::Nothing);
        }
        h = fnv(h, &rh);
        let (Some(pos), Some(len)) = (u64_at(&rh, 0), u32_at(&rh, 8)) else { return Ok(Plan::Nothing) };
        let len = u64::from(len);
        // a region lies inside the old frame (what a change saves is never past it)
        if pos.checked_add(len).is_none_or(|end| end > old_len) || at + 12 + len > body {
            return Ok(Plan::Nothing);
        }
        if !src.pieces(at + 12, len, &mut buf, |b| {
            h = fnv(h, b);
            Ok(())
        })? {
            return Ok(Plan::Nothing);
        }
        if len > 0 {
            regions.push(Saved { pos, len, at: at + 12 });
        }
        at += 12 + len;
    }
    let mut stored = [0u8; 8];
    if at != body || !src.fill(body, &mut stored)? || h != u64::from_le_bytes(stored) {
        return Ok(Plan::Nothing);
    }
    Ok(Plan::Undo(Restore { identity: (id0, id1), old_len, regions }))
}

/// What the journal `src` asks of its frame, on the machine boot `boot`.
/// Memory: the positions of the regions it holds, not their bytes.
pub fn plan(src: &Source, boot: Option<[u8; 16]>) -> Result<Plan> {
    let mut magic = [0u8; 8];
    if src.fill(0, &mut magic)? && &magic == MAGIC_V1 {
        return scan_v1(src);
    }
    let Some((epoch, records, commits)) = scan(src)? else { return Ok(Plan::Nothing) };
    let identity = epoch.identity;
    if boot.is_some_and(|b| b == epoch.boot) {
        // only the process died: the last change alone, if it is not complete
        let Some(last) = records.iter().map(|r| r.seq).max() else { return Ok(Plan::Keep(identity)) };
        if commits.contains(&last) {
            return Ok(Plan::Keep(identity));
        }
        let mut old_len = None;
        let mut regions = Vec::new();
        for r in records.into_iter().filter(|r| r.seq == last) {
            old_len.get_or_insert(r.pre_len);
            regions.extend(r.regions.into_iter().map(|(s, _)| s));
        }
        return Ok(Plan::Undo(Restore { identity, old_len: old_len.unwrap_or(epoch.base_len), regions }));
    }
    // after a reboot (or on another machine): back to the checkpoint
    let regions = records.into_iter().flat_map(|r| r.regions).filter(|r| r.1).map(|(s, _)| s).collect();
    Ok(Plan::Undo(Restore { identity, old_len: epoch.base_len, regions }))
}

/// [`plan`] of a journal held in memory.
pub fn plan_bytes(bytes: &[u8], boot: Option<[u8; 16]>) -> Plan {
    let read = |pos: u64, buf: &mut [u8]| -> Result<usize> {
        let from = (pos as usize).min(bytes.len());
        let n = buf.len().min(bytes.len() - from);
        buf[..n].copy_from_slice(&bytes[from..from + n]);
        Ok(n)
    };
    plan(&Source::new(bytes.len() as u64, &read), boot).unwrap_or(Plan::Nothing)
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
    /// The journal beside `frame_path`, locked, and what it asks; `None`
    /// when there is none or its writer is at work.
    pub fn find(frame_path: &str) -> Result<Option<Pending>> {
        let path = journal_path(frame_path);
        let Ok(meta) = std::fs::metadata(&path) else { return Ok(None) };
        if meta.len() == 0 {
            return Ok(None);
        }
        let Ok(file) = std::fs::OpenOptions::new().read(true).write(true).open(&path) else { return Ok(None) };
        if !flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
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
        let _ = std::fs::remove_file(&self.path);
        flock(&self.file, libc::LOCK_UN);
    }
}

fn read_file_at(f: &File, pos: u64, buf: &mut [u8]) -> Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match f.read_at(buf, pos) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(Error::FileRead),
        }
    }
}

/// With a read-only handle, the old bytes an overlay shows are copied out of
/// the journal (which a writer may empty in the meantime): kept in memory up
/// to this much, in an unlinked temporary file past it.
const OVERLAY_IN_MEMORY: u64 = 32 << 20;

/// Where an overlay keeps its copy of the old bytes.
enum Kept {
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
            let dir = std::env::temp_dir();
            let name = dir.join(format!("b2nd-overlay-{}-{:x}", std::process::id(), new_nonce()));
            let f = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&name).map_err(|_| Error::FileOpen)?;
            let _ = std::fs::remove_file(&name);
            Kept::File(f)
        };
        let mut regions = Vec::with_capacity(sorted.len());
        let mut off = 0u64;
        let restore = Restore { identity: r.identity, old_len: r.old_len, regions: sorted };
        src.each_region(&restore, |pos, bytes| {
            match &mut kept {
                Kept::Memory(v) => v.extend_from_slice(bytes),
                Kept::File(f) => {
                    use std::os::unix::fs::FileExt;
                    f.write_all_at(bytes, off).map_err(|_| Error::FileWrite)?;
                }
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
            Kept::File(f) => {
                use std::os::unix::fs::FileExt;
                f.read_exact_at(dst, off).map_err(|_| Error::FileRead)
            }
        }
    }
}

impl Stream for Overlay {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        let end = self.base.saturating_add(self.old_len);
        let want = (end.saturating_sub(pos) as usize).min(buf.len());
        let n = self.inner.read_at(pos, &mut buf[..want])?;
        let buf = &mut buf[..want];
        let (lo_pos, hi_pos) = (pos.saturating_sub(self.base), pos.saturating_add(want as u64).saturating_sub(self.base));
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
fn put_back(stream: &dyn Stream, base: u64, r: &Restore, src: &Source) -> Result<()> {
    src.each_region(r, |pos, bytes| stream.write_at(base + pos, bytes))?;
    stream.truncate(base + r.old_len)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a plan puts back, with the bytes it reads from `journal`.
    fn undo_of(journal: &[u8], plan: Plan) -> Option<Undo> {
        let Plan::Undo(r) = plan else { return None };
        let regions = r.regions.iter().map(|s| (s.pos, journal[s.at as usize..(s.at + s.len) as usize].to_vec())).collect();
        Some(Undo { identity: r.identity, old_len: r.old_len, regions })
    }

    #[test]
    fn records_of_the_first_format_round_trip_and_torn_ones_are_refused() {
        let u = Undo { identity: (3, 77), old_len: 4096, regions: vec![(0, vec![1, 2, 3]), (1000, vec![9; 300])] };
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
    fn the_checksum_of_pieces_is_the_checksum_of_the_whole() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for len in [0, 1, 31, 32, 33, 64, 100, 1000] {
            let whole = checksum(&bytes[..len]);
            for step in [1, 5, 31, 32, 33, 200] {
                let mut s = Sum::new();
                for piece in bytes[..len].chunks(step) {
                    s.update(piece);
                }
                assert_eq!(s.finish(), whole, "{len} bytes in pieces of {step}");
            }
        }
        assert_ne!(checksum(&bytes[..100]), checksum(&bytes[..99]));
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
        assert_eq!(undo_of(&bytes, plan_bytes(&bytes, Some(me))), Some(change));
        // the machine died: back to the checkpoint
        let base = Undo { identity, old_len: 100, regions: vec![(0, vec![1; 10]), (50, vec![3; 5])] };
        assert_eq!(undo_of(&bytes, plan_bytes(&bytes, Some([8; 16]))), Some(base.clone()));
        assert_eq!(undo_of(&bytes, plan_bytes(&bytes, None)), Some(base));
        // cut short anywhere: never more than what whole records say
        for cut in 0..bytes.len() {
            match plan_bytes(&bytes[..cut], Some(me)) {
                Plan::Nothing | Plan::Keep(_) => {}
                Plan::Undo(u) => assert!(u.regions.iter().all(|s| s.pos + s.len <= 100 && s.at + s.len <= cut as u64)),
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
