//! Free space in a contiguous frame's chunks section: the holes no chunk
//! uses, where a new or changed chunk is written instead of at the end
//! (docs/FRAME_BEHAVIOUR.md §12a).
//!
//! A change never writes where the frame as it was before the change, or as
//! it was at the last checkpoint, keeps a chunk: that is what lets a change
//! journal only the index and the tail, whatever it moves. So the space a
//! change frees (an updated chunk's old slot, a deleted chunk) is *released*
//! while the change runs, usable once it is committed; and the part of it the
//! last checkpoint still references (below the frame's length then) is
//! *settling* until the next checkpoint, when a power loss can no longer go
//! back to it.

use super::super::bytes::ChunkHead;
use super::{Frame, Layout};
use crate::chunk::header::{Header, EXTENDED_HEADER_LENGTH};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// The holes of a chunks section, in section-relative bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Space {
    /// Holes any change may fill: start -> length, disjoint, none adjacent.
    free: BTreeMap<u64, u64>,
    free_bytes: u64,
    /// Holes the last checkpoint may still reference.
    settling: Vec<(u64, u64)>,
    settling_bytes: u64,
    /// Holes the change in progress made (its chunks' old slots).
    released: Vec<(u64, u64)>,
    /// Whether holes are reused at all: not in a frame whose chunks overlap
    /// (no writer makes one; a chunk there may be another's bytes too).
    reuse: bool,
}

impl Space {
    /// The space of a section `section` bytes long holding `chunks` (start,
    /// length); its holes are free, or settling when `settle`.
    pub(super) fn from_chunks(mut chunks: Vec<(u64, u64)>, section: u64, settle: bool) -> Space {
        chunks.sort_unstable();
        let mut s = Space { reuse: true, ..Space::default() };
        let mut at = 0u64;
        for (start, len) in chunks {
            if start < at {
                // overlapping chunks: nothing is freed or reused in this frame
                return Space::default();
            }
            if start > at {
                s.add_hole(at, start - at, settle);
            }
            at = start.saturating_add(len);
        }
        if section > at {
            s.add_hole(at, section - at, settle);
        }
        s
    }

    fn add_hole(&mut self, at: u64, len: u64, settle: bool) {
        if settle {
            self.settling.push((at, len));
            self.settling_bytes += len;
        } else {
            self.insert_free(at, len);
        }
    }

    /// Bytes in holes (free and settling).
    pub(super) fn hole_bytes(&self) -> u64 {
        self.free_bytes + self.settling_bytes
    }

    /// Bytes in holes the last checkpoint may still reference.
    pub(super) fn settling_bytes(&self) -> u64 {
        self.settling_bytes
    }

    /// Make `[at, at + len)` free, merged with its neighbours.
    fn insert_free(&mut self, mut at: u64, mut len: u64) {
        if len == 0 {
            return;
        }
        if let Some((&p, &l)) = self.free.range(..at).next_back() {
            if p + l == at {
                self.free.remove(&p);
                self.free_bytes -= l;
                at = p;
                len += l;
            }
        }
        if let Some(&l) = self.free.get(&(at + len)) {
            self.free.remove(&(at + len));
            self.free_bytes -= l;
            len += l;
        }
        self.free.insert(at, len);
        self.free_bytes += len;
    }

    /// A free place for `len` bytes that ends at or before `below`: the
    /// smallest hole that holds them (the lowest of equals), taken.
    pub(super) fn take(&mut self, len: u64, below: u64) -> Option<u64> {
        if !self.reuse || len == 0 {
            return None;
        }
        let (&at, &hole) = self
            .free
            .iter()
            .filter(|&(&a, &l)| l >= len && a + len <= below)
            .min_by_key(|&(&a, &l)| (l, a))?;
        self.free.remove(&at);
        self.free_bytes -= hole;
        if hole > len {
            self.free.insert(at + len, hole - len);
            self.free_bytes += hole - len;
        }
        Some(at)
    }

    /// The settling holes' parts within `[from, to)`.
    pub(super) fn settling_in(&self, from: u64, to: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.settling.iter().filter_map(move |&(a, l)| {
            let (x, y) = (a.max(from), (a + l).min(to));
            (x < y).then_some((x, y - x))
        })
    }

    /// The change in progress no longer needs `[at, at + len)`.
    pub(super) fn release(&mut self, at: u64, len: u64) {
        if self.reuse && len > 0 {
            self.released.push((at, len));
        }
    }

    /// The change in progress is committed: what it released is free, except
    /// the part below `settle_below` (the frame's length at the last
    /// checkpoint, section-relative), which settles until the next one.
    pub(super) fn commit(&mut self, settle_below: u64) {
        for (at, len) in std::mem::take(&mut self.released) {
            let end = at + len;
            if at < settle_below {
                let cut = end.min(settle_below);
                self.settling.push((at, cut - at));
                self.settling_bytes += cut - at;
            }
            if end > settle_below {
                let from = at.max(settle_below);
                self.insert_free(from, end - from);
            }
        }
    }

    /// A checkpoint: settling holes are free.
    pub(super) fn settle(&mut self) {
        self.settling_bytes = 0;
        for (at, len) in std::mem::take(&mut self.settling) {
            self.insert_free(at, len);
        }
    }

    /// The section's new length once a free hole at its end is cut off.
    pub(super) fn trim(&mut self, section: u64) -> u64 {
        match self.free.iter().next_back() {
            Some((&at, &len)) if at + len >= section => {
                self.free.remove(&at);
                self.free_bytes -= len;
                at.min(section)
            }
            _ => section,
        }
    }
}

/// A change ends with a checkpoint once settling holes pass 1/this of the
/// chunks section (and [`SETTLING_MIN`]): until then the file grows by them.
const SETTLING_SHARE: u64 = 16;
const SETTLING_MIN: u64 = 1 << 20;
/// Compaction: while holes pass 1/this of the chunks section (and
/// [`COMPACT_MIN`]), a change also moves the chunks stored last into free
/// holes below them, up to [`COMPACT_STEP`] bytes, until holes are under
/// 1/[`COMPACT_UNTIL`]; the section's end, once free, is cut off.
const COMPACT_SHARE: u64 = 8;
const COMPACT_UNTIL: u64 = 16;
const COMPACT_MIN: u64 = 1 << 20;
const COMPACT_STEP: u64 = 4 << 20;

impl Frame {
    /// Find the holes of a contiguous frame's chunks section, once: from the
    /// chunks' headers. Holes found in the middle of an epoch settle (the
    /// last checkpoint may reference them). A chunk whose header cannot be
    /// read turns reuse off rather than failing the change.
    pub(super) fn ensure_space(&mut self) -> Result<()> {
        if self.dir.is_some() || self.batch || self.layout.space.is_some() {
            return Ok(());
        }
        let mut chunks = Vec::new();
        let mut readable = true;
        for off in self.layout.offsets.values() {
            if off >= 0 {
                match self.stored_head(off) {
                    Ok((_, _, cb)) => chunks.push((off as u64, cb.max(0) as u64)),
                    Err(_) => {
                        readable = false;
                        break;
                    }
                }
            }
        }
        let settle = self.journal.as_ref().is_some_and(|j| j.has_epoch())
            && !self.txn.as_ref().is_some_and(|t| t.fresh);
        let section = self.layout.cbytes.max(0) as u64;
        self.layout.space =
            Some(if readable { Space::from_chunks(chunks, section, settle) } else { Space::default() });
        Ok(())
    }

    /// Write `chunk` into `layout`'s chunks section (contiguous frames): into
    /// the smallest free hole that holds it, else at the end. Returns its offset.
    pub(super) fn place(&mut self, layout: &mut Layout, chunk: &[u8]) -> Result<i64> {
        let len = chunk.len() as u64;
        let mut at = None;
        if let Some(s) = layout.space.as_mut() {
            layout.cbytes = s.trim(layout.cbytes.max(0) as u64) as i64;
            at = s.take(len, u64::MAX);
        }
        let at = match at {
            Some(a) => a,
            None => {
                let a = layout.cbytes.max(0) as u64;
                layout.cbytes = i64::try_from(a + len).map_err(|_| Error::TwoGbLimit)?;
                a
            }
        };
        let hl = layout.header_len as u64;
        // a hole holds nothing the frame before the change (or at the last
        // checkpoint) references: only what lies past the old section is saved
        let old_end =
            self.txn.as_ref().map_or(0, |t| t.layout.header_len as u64 + t.layout.cbytes.max(0) as u64);
        self.need((hl + at).max(old_end), None)?;
        self.bytes.write(hl + at, chunk)?;
        Ok(at as i64)
    }

    /// Whether the chunk stored at `off` ends the chunks section of `layout`
    /// (once a free end is cut off).
    pub(super) fn last_in_section(&mut self, layout: &mut Layout, off: i64) -> Result<bool> {
        let Some(s) = layout.space.as_mut().filter(|s| s.reuse) else { return Ok(false) };
        layout.cbytes = s.trim(layout.cbytes.max(0) as u64) as i64;
        let len = self.head_in(layout, off)?;
        Ok(off as u64 + len == layout.cbytes.max(0) as u64)
    }

    /// Write `chunk` over the chunk stored last in `layout`'s section, at
    /// `off` (its old bytes journaled first): the section ends after it.
    pub(super) fn overwrite_last(&mut self, layout: &mut Layout, off: i64, chunk: &[u8]) -> Result<i64> {
        let hl = layout.header_len as u64;
        self.need(hl + off as u64, None)?;
        self.bytes.write(hl + off as u64, chunk)?;
        layout.cbytes = i64::try_from(off as u64 + chunk.len() as u64).map_err(|_| Error::TwoGbLimit)?;
        Ok(off)
    }

    /// The chunk stored at `off` leaves `layout`: its bytes are a hole once
    /// the change is committed.
    pub(super) fn release_stored(&self, layout: &mut Layout, off: i64) -> Result<()> {
        // a frame that reuses nothing (a chunk there could not be read, or
        // chunks overlap) frees nothing either, and reads no header for it
        if layout.space.as_ref().is_some_and(|s| s.reuse) {
            let cb = self.head_in(layout, off)?;
            if let Some(s) = layout.space.as_mut() {
                s.release(off as u64, cb);
            }
        }
        Ok(())
    }

    /// The stored size of the chunk at `off` of `layout` (which may hold
    /// chunks the change placed past the frame's current section).
    pub(super) fn head_in(&self, layout: &Layout, off: i64) -> Result<u64> {
        let hl = layout.header_len as u64;
        let section = layout.cbytes.max(0) as u64;
        let off = u64::try_from(off).map_err(|_| Error::InvalidHeader)?;
        if off >= section {
            return Err(Error::InvalidHeader);
        }
        let n = (section - off).min(EXTENDED_HEADER_LENGTH as u64) as usize;
        let head = ChunkHead::read(n, |buf| self.bytes.read_into(hl + off, buf))?;
        let (_, cb, _) = Header::sizes(&head)?;
        if cb < 16 || cb as u64 > section - off {
            return Err(Error::InvalidHeader);
        }
        Ok(cb as u64)
    }

    /// The change is committed: the space it released is free (or settles).
    pub(super) fn commit_space(&mut self) {
        let hl = self.layout.header_len as u64;
        let journaled = self.is_journaled();
        let below = self
            .journal
            .as_ref()
            .filter(|_| journaled)
            .and_then(|j| j.base_len())
            .map_or(0, |b| b.saturating_sub(hl));
        if let Some(s) = self.layout.space.as_mut() {
            s.commit(below);
        }
    }

    /// A checkpoint: no power loss goes back before it.
    pub(super) fn settle_space(&mut self) {
        if let Some(s) = self.layout.space.as_mut() {
            s.settle();
        }
    }

    /// Whether settling holes are many enough for a checkpoint.
    pub(super) fn settling_due(&self) -> bool {
        self.layout.space.as_ref().is_some_and(|s| {
            let n = s.settling_bytes();
            n >= SETTLING_MIN && n.saturating_mul(SETTLING_SHARE) >= self.layout.cbytes.max(0) as u64
        })
    }

    /// Before a layout is committed: cut a free end off the chunks section,
    /// and compact when holes take too much of it.
    pub(super) fn tidy(&mut self, layout: &mut Layout) -> Result<()> {
        let Some(s) = layout.space.as_mut() else { return Ok(()) };
        layout.cbytes = s.trim(layout.cbytes.max(0) as u64) as i64;
        let section = layout.cbytes.max(0) as u64;
        if s.hole_bytes() < COMPACT_MIN || s.hole_bytes().saturating_mul(COMPACT_SHARE) < section {
            return Ok(());
        }
        let mut moved = 0u64;
        while moved < COMPACT_STEP {
            let Some(s) = layout.space.as_ref() else { break };
            if s.hole_bytes().saturating_mul(COMPACT_UNTIL) < section {
                break;
            }
            // the chunk stored last, and a free hole below it
            let Some((off, pos)) = layout
                .offsets
                .spans()
                .filter(|&(v, _, _)| v >= 0)
                .max_by_key(|&(v, _, _)| v)
                .map(|(v, a, _)| (v, a))
            else {
                break;
            };
            let len = self.head_in(layout, off)?;
            let Some(to) = layout.space.as_mut().and_then(|s| s.take(len, off as u64)) else { break };
            let hl = layout.header_len as u64;
            let bytes = self.bytes.read(hl + off as u64, len as usize)?.into_owned();
            self.bytes.write(hl + to, &bytes)?;
            layout.offsets.set(pos, to as i64);
            if let Some(s) = layout.space.as_mut() {
                s.release(off as u64, len);
            }
            moved += len;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_found_between_chunks_and_at_the_end() {
        let s = Space::from_chunks(vec![(10, 5), (0, 4), (20, 10)], 40, false);
        assert_eq!(s.free.iter().map(|(&a, &l)| (a, l)).collect::<Vec<_>>(), vec![(4, 6), (15, 5), (30, 10)]);
        assert_eq!(s.hole_bytes(), 21);
    }

    #[test]
    fn overlapping_chunks_turn_reuse_off() {
        let mut s = Space::from_chunks(vec![(0, 10), (5, 10)], 40, false);
        assert_eq!(s.take(1, u64::MAX), None);
        s.release(0, 10);
        s.commit(0);
        assert_eq!(s.hole_bytes(), 0);
    }

    #[test]
    fn the_smallest_hole_that_fits_is_taken() {
        let mut s = Space::from_chunks(vec![(4, 6), (15, 5)], 40, false);
        // holes (0,4) (10,5) (20,20)
        assert_eq!(s.take(5, u64::MAX), Some(10));
        assert_eq!(s.take(3, u64::MAX), Some(0));
        assert_eq!(s.take(3, u64::MAX), Some(20));
        assert_eq!(s.take(18, u64::MAX), None);
        assert_eq!(s.take(17, u64::MAX), Some(23));
        assert_eq!(s.take(1, u64::MAX), Some(3));
        assert_eq!(s.hole_bytes(), 0);
    }

    #[test]
    fn released_space_is_free_after_the_commit_and_settles_below_the_checkpoint() {
        let mut s = Space::from_chunks(vec![(0, 100)], 100, false);
        s.release(10, 20);
        assert_eq!(s.take(5, u64::MAX), None);
        s.commit(20);
        // [10, 20) settles, [20, 30) is free
        assert_eq!(s.settling_bytes(), 10);
        assert_eq!(s.take(11, u64::MAX), None);
        assert_eq!(s.take(10, u64::MAX), Some(20));
        s.settle();
        assert_eq!(s.settling_bytes(), 0);
        assert_eq!(s.take(10, u64::MAX), Some(10));
    }

    #[test]
    fn neighbours_merge_and_the_end_is_trimmed() {
        let mut s = Space::from_chunks(vec![(0, 100)], 100, false);
        s.release(60, 40);
        s.release(20, 20);
        s.release(40, 20);
        s.commit(0);
        assert_eq!(s.free.len(), 1);
        assert_eq!(s.trim(100), 20);
        assert_eq!(s.trim(20), 20);
    }
}
