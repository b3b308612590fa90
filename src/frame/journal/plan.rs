//! Reading a journal left behind: what it asks of its frame, with the
//! positions of the old bytes it holds (never the bytes themselves).

use super::record::*;
use super::*;

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
pub(super) const PIECE: usize = 1 << 20;

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
    fn pieces(
        &self,
        pos: u64,
        len: u64,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
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
pub(super) struct RegionsMeta {
    pub(super) seq: u64,
    pub(super) pre_len: u64,
    pub(super) regions: Vec<(Saved, bool)>,
}

/// The record of regions at `at`, whose payload is `len` bytes, when whole
/// and of this epoch. Its bytes are checksummed a piece at a time.
pub(super) fn scan_regions(
    src: &Source,
    at: u64,
    len: u64,
    epoch: &EpochRecord,
    buf: &mut Vec<u8>,
) -> Result<Option<RegionsMeta>> {
    let mut sum = Sum::new();
    let mut head = [0u8; 5 + 28];
    if len < 28 || !src.fill(at, &mut head)? {
        return Ok(None);
    }
    sum.update(&head);
    let p = &head[5..];
    let (Some(nonce), Some(seq), Some(pre_len), Some(n)) =
        (u64_at(p, 0), u64_at(p, 8), u64_at(p, 16), u32_at(p, 24))
    else {
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
pub(super) type Scanned = (EpochRecord, Vec<RegionsMeta>, Vec<u64>);

/// The whole records of a journal of the second format, up to the first
/// one that is not (cut short, or never written).
pub(super) fn scan(src: &Source) -> Result<Option<Scanned>> {
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
pub(super) fn scan_v1(src: &Source) -> Result<Plan> {
    let fnv = |h: u64, bytes: &[u8]| {
        bytes.iter().fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    };
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let Some(body) = src.size.checked_sub(8) else { return Ok(Plan::Nothing) };
    let mut head = [0u8; 36];
    if !src.fill(0, &mut head)? {
        return Ok(Plan::Nothing);
    }
    h = fnv(h, &head);
    let (Some(id0), Some(id1), Some(old_len), Some(n)) =
        (u64_at(&head, 8), u64_at(&head, 16), u64_at(&head, 24), u32_at(&head, 32))
    else {
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
