//! Shape changes (resize, insert, append, delete), chunk by chunk.
//!
//! Along each dimension a change opens `d` new positions at `at` (growth) or
//! removes `d` positions from `at` (shrinking). Every chunk of the new shape
//! is then one of:
//! - a chunk of the old array moved as it is (compressed, untouched), when
//!   along every dimension it maps onto one old chunk by a whole number of
//!   chunks (always the case when the changes are chunk-aligned);
//! - a chunk of zeros (a special chunk: no data stored, and in a frame not
//!   even a chunk, just its index entry), when along some dimension it lies
//!   in the new positions;
//! - a chunk rebuilt from the parts of the (at most 2 per changed dimension)
//!   old chunks it covers, decoded one box at a time.
//!
//! Moved chunks keep the old chunk number's bytes; rebuilt chunks are
//! appended after the old ones, and one final index write puts every chunk in
//! its place, adds the chunks of zeros and drops the chunks that left. As in c-blosc2, growing a
//! dimension at its end keeps the old edge chunk as it is, so the items
//! that were its padding show in the grown part (zeros for arrays written
//! from buffers; the fill value for filled arrays).

use super::boxes::{buffer_len, c_index, for_each_index};
use super::{Array, Geometry, Meta};
use crate::chunk::Special;
use crate::error::{Error, Result};
use crate::schunk::{Pick, SuperChunk};

/// One dimension's change: `delta` positions open (> 0) or go (< 0) at `at`.
#[derive(Debug, Clone, Copy)]
struct AxisChange {
    old_len: i64,
    at: i64,
    delta: i64,
}

/// A run of new positions `lo..hi` along one dimension, and the old position
/// of `lo` (`None`: new positions).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Seg {
    lo: i64,
    hi: i64,
    old: Option<i64>,
}

impl AxisChange {
    /// The runs that make up the new positions `lo..hi`.
    fn segments(&self, lo: i64, hi: i64) -> Vec<Seg> {
        let mut out = Vec::with_capacity(3);
        let mut push = |a: i64, b: i64, old: Option<i64>| {
            if a < b {
                out.push(Seg { lo: a, hi: b, old });
            }
        };
        let (at, d) = (self.at, self.delta);
        push(lo, hi.min(at), Some(lo));
        if d >= 0 {
            push(lo.max(at), hi.min(at + d), None);
            let a = lo.max(at + d);
            push(a, hi, Some(a - d));
        } else {
            let a = lo.max(at);
            push(a, hi, Some(a - d));
        }
        out
    }
}

/// Where a chunk of the new shape comes from.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    Moved(usize),
    Zeros,
    /// Rebuilt from old boxes: per dimension, the runs of its box.
    Rebuilt(Vec<Vec<Seg>>),
}

/// Classify chunk `c` of `new` under `changes`.
fn source_of(new: &Geometry, old: &Geometry, changes: &[AxisChange], c: &[i64]) -> Source {
    let nd = new.ndim();
    let mut per_axis = Vec::with_capacity(nd);
    let mut moved = Vec::with_capacity(nd);
    let mut movable = true;
    for i in 0..nd {
        let cs = new.chunkshape[i];
        let lo = c[i] * cs;
        let hi = (lo + cs).min(new.shape[i]);
        let segs = changes[i].segments(lo, hi);
        if segs.iter().all(|s| s.old.is_none()) {
            return Source::Zeros;
        }
        let ch = &changes[i];
        let single = match segs.as_slice() {
            [Seg { old: Some(o), .. }] => Some(*o - lo),
            // Growth at the end: the old edge chunk stays as it is (c-blosc2).
            [Seg { old: Some(o), .. }, Seg { old: None, .. }]
                if ch.delta > 0 && ch.at == ch.old_len && *o == lo =>
            {
                Some(0)
            }
            _ => None,
        };
        match single {
            Some(shift) if shift % cs == 0 => moved.push((lo + shift) / cs),
            _ => movable = false,
        }
        per_axis.push(segs);
    }
    if movable {
        return Source::Moved(c_index(&moved, &old.chunks) as usize);
    }
    Source::Rebuilt(per_axis)
}

/// Build chunk `c` of `new` from the old array (`old` in `sc`) into `chunk`.
#[allow(clippy::too_many_arguments)] // both geometries, the segments, and the caller's reused buffers
fn rebuild(
    sc: &SuperChunk,
    new: &Geometry,
    old: &Geometry,
    c: &[i64],
    segs: &[Vec<Seg>],
    chunk: &mut [u8],
    tmp: &mut Vec<u8>,
    ts: usize,
) -> Result<()> {
    let nd = new.ndim();
    chunk.fill(0);
    let (_, chunk_lo, _) = new.chunk_box(c);
    let counts: Vec<i64> = segs.iter().map(|s| s.len() as i64).collect();
    let zeros = vec![0i64; nd];
    for_each_index(&zeros, &counts, |k| {
        let parts: Vec<Seg> = (0..nd).map(|i| segs[i][k[i] as usize]).collect();
        if parts.iter().any(|p| p.old.is_none()) {
            return Ok(());
        }
        let nlo: Vec<i64> = parts.iter().map(|p| p.lo).collect();
        let nhi: Vec<i64> = parts.iter().map(|p| p.hi).collect();
        let olo: Vec<i64> = parts.iter().map(|p| p.old.unwrap_or(0)).collect();
        let shape: Vec<i64> = parts.iter().map(|p| p.hi - p.lo).collect();
        let ohi: Vec<i64> = olo.iter().zip(&shape).map(|(a, s)| a + s).collect();
        tmp.resize(buffer_len(&shape, ts)?, 0);
        old.get_slice(sc, &olo, &ohi, tmp, &shape)?;
        new.scatter(chunk, &chunk_lo, &nlo, &nhi, tmp, &nlo, &shape, ts)
    })
}

/// Change the shape of the array in `sc` from `old` to `meta` under `changes`.
fn apply(sc: &mut SuperChunk, old: &Geometry, meta: &Meta, changes: &[AxisChange]) -> Result<Geometry> {
    let new = Geometry::new(meta)?;
    let ts = sc.typesize().max(1) as usize;
    let old_n = sc.nchunks();
    let mut plan = Vec::new();
    if new.nchunks() > 0 {
        let zeros = vec![0i64; new.ndim()];
        for_each_index(&zeros, &new.chunks, |c| {
            plan.push((c.to_vec(), source_of(&new, old, changes, c)));
            Ok(())
        })?;
    }
    let chunkbytes = new.chunk_bytes(ts)?;
    let zeros =
        Pick::Special(Special::Zero, i32::try_from(chunkbytes).map_err(|_| Error::MaxBufsizeExceeded)?);
    let mut chunk = Vec::new();
    let mut tmp = Vec::new();
    let mut keep = Vec::with_capacity(plan.len());
    let r = (|| {
        for (c, src) in &plan {
            match src {
                Source::Moved(k) if *k < old_n => keep.push(Pick::Chunk(*k)),
                Source::Moved(_) => return Err(Error::Data),
                Source::Zeros => keep.push(zeros),
                Source::Rebuilt(segs) => {
                    chunk.resize(chunkbytes, 0);
                    rebuild(sc, &new, old, c, segs, &mut chunk, &mut tmp, ts)?;
                    let bytes = sc.compress(&chunk)?;
                    sc.append_chunk(&bytes)?;
                    keep.push(Pick::Chunk(sc.nchunks() - 1));
                }
            }
        }
        sc.arrange(&keep)?;
        sc.meta_update("b2nd", &meta.serialize()?)?;
        Ok(())
    })();
    if let Err(e) = r {
        // Drop what was appended; the old chunks are still in place.
        if sc.nchunks() > old_n {
            let back: Vec<usize> = (0..old_n).collect();
            let _ = sc.select_chunks(&back);
        }
        return Err(e);
    }
    Ok(new)
}

impl Array {
    fn check_reshapable(&mut self) -> Result<()> {
        if self.view.is_some() {
            return Err(Error::InvalidParam);
        }
        self.refresh()?;
        Ok(())
    }

    /// Change the shape: `plan` gives one change per dimension from the
    /// current shape, `then` runs on the new geometry. Both run under the
    /// exclusive frame lock (when the frame is locked), after picking up what
    /// other handles changed, so that a change is never planned on a stale shape.
    fn change_shape(
        &mut self,
        plan: impl FnOnce(&[i64]) -> Result<Vec<AxisChange>>,
        then: impl FnOnce(&mut SuperChunk, &Geometry) -> Result<()>,
    ) -> Result<()> {
        let mut w = self.sc.write();
        w.lock()?;
        let r = (|| {
            let base = super::base::stored_meta(&w)?;
            if base.ndim() != self.base.ndim()
                || base.chunkshape != self.base.chunkshape
                || base.blockshape != self.base.blockshape
            {
                return Err(Error::Data);
            }
            let geom = if base == self.base { self.geom.clone() } else { Geometry::new(&base)? };
            let changes = plan(&geom.shape)?;
            let mut meta = base.clone();
            for (i, ch) in changes.iter().enumerate() {
                meta.shape[i] =
                    ch.old_len.checked_add(ch.delta).filter(|&n| n >= 0).ok_or(Error::InvalidParam)?;
            }
            // The new layout, metalayer and data are one change of the frame:
            // a process dying in it leaves the old array.
            Ok(w.atomically(|w| {
                let g = if meta == base { geom } else { apply(w, &geom, &meta, &changes)? };
                then(w, &g)
            }))
        })();
        // whatever happened, the handle follows what is stored now
        let stored = super::base::stored_meta(&w).and_then(|m| Geometry::new(&m).map(|g| (m, g)));
        let unlocked = w.unlock();
        drop(w);
        let r = r?;
        let (meta, g) = stored?;
        self.set_base(meta, g);
        r?;
        unlocked
    }

    /// Change the shape to `new_shape`. Along each dimension, new items (zeros)
    /// open at `start[i]`, or items go from `start[i]` on; without `start`,
    /// items open or go at the end.
    pub fn resize(&mut self, new_shape: &[i64], start: Option<&[i64]>) -> Result<()> {
        self.check_reshapable()?;
        let plan = |shape: &[i64]| {
            let nd = shape.len();
            if new_shape.len() != nd || start.is_some_and(|s| s.len() != nd) {
                return Err(Error::InvalidParam);
            }
            let mut changes = Vec::with_capacity(nd);
            for i in 0..nd {
                let (old, new) = (shape[i], new_shape[i]);
                if new < 0 {
                    return Err(Error::InvalidParam);
                }
                let delta = new - old;
                let at = match start {
                    Some(s) => s[i],
                    None if delta >= 0 => old,
                    None => new,
                };
                if at < 0 || at > old || (delta < 0 && at - delta > old) {
                    return Err(Error::InvalidParam);
                }
                changes.push(AxisChange { old_len: old, at, delta });
            }
            Ok(changes)
        };
        self.change_shape(plan, |_, _| Ok(()))
    }

    /// Insert the items of `buffer` (C order; the array's shape but along
    /// `axis`) at position `at` of `axis`.
    pub fn insert(&mut self, buffer: &[u8], axis: usize, at: i64) -> Result<()> {
        self.check_reshapable()?;
        let ts = self.typesize() as i64;
        let opened = std::cell::Cell::new(0i64);
        let plan = |shape: &[i64]| {
            if axis >= shape.len() || at < 0 || at > shape[axis] {
                return Err(Error::InvalidParam);
            }
            let row = shape
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != axis)
                .try_fold(ts, |a, (_, &s)| a.checked_mul(s))
                .ok_or(Error::InvalidParam)?;
            let len = buffer.len() as i64;
            if (row == 0 && len != 0) || (row != 0 && len % row != 0) {
                return Err(Error::InvalidParam);
            }
            opened.set(if row == 0 { 0 } else { len / row });
            let mut changes: Vec<AxisChange> =
                shape.iter().map(|&s| AxisChange { old_len: s, at: s, delta: 0 }).collect();
            changes[axis] = AxisChange { old_len: shape[axis], at, delta: opened.get() };
            Ok(changes)
        };
        self.change_shape(plan, |sc, g| {
            let mut start = vec![0i64; g.ndim()];
            start[axis] = at;
            let mut stop = g.shape.clone();
            stop[axis] = at + opened.get();
            let bshape: Vec<i64> = start.iter().zip(&stop).map(|(a, b)| b - a).collect();
            g.set_slice(sc, &start, &stop, buffer, &bshape)
        })
    }

    /// Append the items of `buffer` (C order; the array's shape but along
    /// `axis`) at the end of `axis`.
    pub fn append(&mut self, buffer: &[u8], axis: usize) -> Result<()> {
        self.refresh()?;
        let end = *self.geom.shape.get(axis).ok_or(Error::InvalidParam)?;
        self.insert(buffer, axis, end)
    }

    /// Remove `len` items along `axis` from `start` on.
    pub fn delete(&mut self, axis: usize, start: i64, len: i64) -> Result<()> {
        self.check_reshapable()?;
        let plan = |shape: &[i64]| {
            if axis >= shape.len()
                || start < 0
                || len < 0
                || start.checked_add(len).is_none_or(|e| e > shape[axis])
            {
                return Err(Error::InvalidParam);
            }
            let mut changes: Vec<AxisChange> =
                shape.iter().map(|&s| AxisChange { old_len: s, at: s, delta: 0 }).collect();
            changes[axis] = AxisChange { old_len: shape[axis], at: start, delta: -len };
            Ok(changes)
        };
        self.change_shape(plan, |_, _| Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geom(shape: &[i64], chunks: &[i32]) -> Geometry {
        let m = Meta {
            shape: shape.to_vec(),
            chunkshape: chunks.to_vec(),
            blockshape: chunks.to_vec(),
            dtype: "|u1".into(),
            dtype_format: 0,
        };
        Geometry::new(&m).unwrap()
    }

    #[test]
    fn segments_of_growth_and_shrinking() {
        let grow = AxisChange { old_len: 10, at: 4, delta: 3 };
        assert_eq!(
            grow.segments(0, 13),
            vec![
                Seg { lo: 0, hi: 4, old: Some(0) },
                Seg { lo: 4, hi: 7, old: None },
                Seg { lo: 7, hi: 13, old: Some(4) }
            ]
        );
        let shrink = AxisChange { old_len: 10, at: 4, delta: -3 };
        assert_eq!(
            shrink.segments(3, 7),
            vec![Seg { lo: 3, hi: 4, old: Some(3) }, Seg { lo: 4, hi: 7, old: Some(7) }]
        );
    }

    #[test]
    fn aligned_changes_move_chunks_unaligned_rebuild() {
        let old = geom(&[10, 6], &[5, 3]);
        let none = AxisChange { old_len: 6, at: 6, delta: 0 };
        // 5 rows inserted at row 5: chunk rows 0 and 2 move, row 1 is new.
        let new = geom(&[15, 6], &[5, 3]);
        let ch = [AxisChange { old_len: 10, at: 5, delta: 5 }, none];
        assert_eq!(source_of(&new, &old, &ch, &[0, 1]), Source::Moved(1));
        assert_eq!(source_of(&new, &old, &ch, &[1, 0]), Source::Zeros);
        assert_eq!(source_of(&new, &old, &ch, &[2, 1]), Source::Moved(3));
        // 2 rows at row 3: the rows from chunk row 0 on are rebuilt.
        let new = geom(&[12, 6], &[5, 3]);
        let ch = [AxisChange { old_len: 10, at: 3, delta: 2 }, none];
        assert!(matches!(source_of(&new, &old, &ch, &[0, 0]), Source::Rebuilt(_)));
        assert!(matches!(source_of(&new, &old, &ch, &[2, 0]), Source::Rebuilt(_)));
        // Growth at the end keeps the old edge chunk.
        let old = geom(&[8, 6], &[5, 3]);
        let ch = [AxisChange { old_len: 8, at: 8, delta: 4 }, none];
        assert_eq!(source_of(&new, &old, &ch, &[1, 1]), Source::Moved(3));
        assert_eq!(source_of(&new, &old, &ch, &[2, 0]), Source::Zeros);
    }
}
