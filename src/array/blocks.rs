//! One chunk's blocks against a C-order buffer, block by block: the rows
//! (runs along the last dimension) a block shares with a box of the buffer.
//! The chunk layer's block jobs call these on every worker thread, so a chunk
//! is gathered from the caller's buffer, or scattered into it, by the threads
//! that compress or decode its blocks, without a chunk-sized copy.

use super::boxes::strides;
use super::disjoint::Disjoint;
use super::Geometry;
use crate::chunk::{BlockSink, BlockSource};
use crate::error::{Error, Result};
use crate::ndmeta::MAX_DIM;

/// How much of a block a box covers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cover {
    None,
    Part,
    Full,
}

/// One value per dimension (the odometer of `BlockRows::rows` works on these).
type Dims = [i64; MAX_DIM];

fn dims(v: &[i64]) -> Dims {
    let mut d = [0; MAX_DIM];
    d[..v.len()].copy_from_slice(v);
    d
}

/// The rows shared by the blocks of the chunk whose box starts at `chunk_lo`
/// and the box `lo..hi` of a C-order buffer of `buf_shape` (origin at array
/// position `start`).
pub(crate) struct BlockRows {
    nd: usize,
    ts: usize,
    block_bytes: usize,
    nblocks: usize,
    blockshape: Dims,
    grid: Dims,
    block_strides: Dims,
    buf_strides: Dims,
    chunk_lo: Dims,
    lo: Dims,
    hi: Dims,
    start: Dims,
}

impl BlockRows {
    pub(crate) fn new(
        g: &Geometry,
        chunk_lo: &[i64],
        lo: &[i64],
        hi: &[i64],
        start: &[i64],
        buf_shape: &[i64],
        ts: usize,
    ) -> Result<BlockRows> {
        let nd = g.ndim();
        if nd > MAX_DIM
            || [chunk_lo.len(), lo.len(), hi.len(), start.len(), buf_shape.len()].iter().any(|&l| l != nd)
        {
            return Err(Error::InvalidParam);
        }
        let grid = g.chunk_blocks();
        Ok(BlockRows {
            nd,
            ts,
            block_bytes: g.block_items as usize * ts,
            nblocks: grid.iter().product::<i64>().max(0) as usize,
            blockshape: dims(&g.blockshape),
            block_strides: dims(&strides(&g.blockshape)),
            buf_strides: dims(&strides(buf_shape)),
            grid: dims(&grid),
            chunk_lo: dims(chunk_lo),
            lo: dims(lo),
            hi: dims(hi),
            start: dims(start),
        })
    }

    /// Block `j`'s box (`org..org + blockshape`) clipped to `lo..hi`, and how
    /// much of the block that is.
    fn clip(
        &self,
        j: usize,
        org: &mut [i64; MAX_DIM],
        rl: &mut [i64; MAX_DIM],
        rh: &mut [i64; MAX_DIM],
    ) -> Cover {
        if j >= self.nblocks {
            return Cover::None;
        }
        let mut rest = j as i64;
        let mut full = true;
        for i in (0..self.nd).rev() {
            if self.grid[i] <= 0 {
                return Cover::None;
            }
            let b = rest % self.grid[i];
            rest /= self.grid[i];
            org[i] = self.chunk_lo[i] + b * self.blockshape[i];
            rl[i] = self.lo[i].max(org[i]);
            rh[i] = self.hi[i].min(org[i] + self.blockshape[i]);
            if rl[i] >= rh[i] {
                return Cover::None;
            }
            full &= rl[i] == org[i] && rh[i] == org[i] + self.blockshape[i];
        }
        if full {
            Cover::Full
        } else {
            Cover::Part
        }
    }

    /// The blocks of a chunk.
    pub(crate) fn nblocks(&self) -> usize {
        self.nblocks
    }

    pub(crate) fn cover(&self, j: usize) -> Cover {
        let (mut org, mut rl, mut rh) = ([0; MAX_DIM], [0; MAX_DIM], [0; MAX_DIM]);
        if self.nd == 0 {
            return if j == 0 { Cover::Full } else { Cover::None };
        }
        self.clip(j, &mut org, &mut rl, &mut rh)
    }

    /// The bytes of block `j` its rows span: from the first row's start
    /// to the last row's end (`None` if the block is not covered).
    pub(crate) fn span(&self, j: usize) -> Option<(usize, usize)> {
        if self.nd == 0 {
            return (j == 0).then_some((0, self.ts));
        }
        let (mut org, mut rl, mut rh) = ([0; MAX_DIM], [0; MAX_DIM], [0; MAX_DIM]);
        if self.clip(j, &mut org, &mut rl, &mut rh) == Cover::None {
            return None;
        }
        let (mut first, mut last) = (0i64, 0i64);
        for i in 0..self.nd {
            first += (rl[i] - org[i]) * self.block_strides[i];
            last += (rh[i] - 1 - org[i]) * self.block_strides[i];
        }
        Some((first as usize * self.ts, (last as usize + 1) * self.ts))
    }

    /// Call `f(offset_in_block, offset_in_buffer, len)` (bytes) for every row
    /// block `j` shares with the box; returns how much of the block they cover.
    pub(crate) fn rows(
        &self,
        j: usize,
        mut f: impl FnMut(usize, usize, usize) -> Result<()>,
    ) -> Result<Cover> {
        if self.nd == 0 {
            if j == 0 {
                f(0, 0, self.ts)?;
                return Ok(Cover::Full);
            }
            return Ok(Cover::None);
        }
        let (mut org, mut rl, mut rh) = ([0; MAX_DIM], [0; MAX_DIM], [0; MAX_DIM]);
        let cover = self.clip(j, &mut org, &mut rl, &mut rh);
        if cover == Cover::None {
            return Ok(cover);
        }
        let (bstr, ostr) = (&self.block_strides, &self.buf_strides);
        let (mut io, mut bo) = (0i64, 0i64);
        for i in 0..self.nd {
            io += (rl[i] - org[i]) * bstr[i];
            bo += (rl[i] - self.start[i]) * ostr[i];
        }
        let last = self.nd - 1;
        let len = (rh[last] - rl[last]) as usize * self.ts;
        let ts = self.ts as i64;
        let mut idx = rl;
        // Rows along the last dimension; offsets move by strides (odometer).
        loop {
            f((io * ts) as usize, (bo * ts) as usize, len)?;
            let mut d = last;
            loop {
                if d == 0 {
                    return Ok(cover);
                }
                d -= 1;
                idx[d] += 1;
                io += bstr[d];
                bo += ostr[d];
                if idx[d] < rh[d] {
                    break;
                }
                io -= (rh[d] - rl[d]) * bstr[d];
                bo -= (rh[d] - rl[d]) * ostr[d];
                idx[d] = rl[d];
            }
        }
    }
}

/// A chunk made from a C-order buffer: the items of the box come from the
/// buffer, the rest of the chunk (padding, items outside the box) from `base`
/// (the chunk as it was, decoded) or zeros.
pub(crate) struct ChunkSource<'a> {
    pub rows: BlockRows,
    pub src: &'a [u8],
    pub base: Option<&'a [u8]>,
    pub chunk_bytes: usize,
}

impl BlockSource for ChunkSource<'_> {
    fn len(&self) -> usize {
        self.chunk_bytes
    }

    fn block_bytes(&self) -> usize {
        self.rows.block_bytes
    }

    fn fill(&self, j: usize, out: &mut [u8]) -> Result<()> {
        if self.rows.cover(j) != Cover::Full {
            let at = j * self.rows.block_bytes;
            match self.base {
                Some(b) => out.copy_from_slice(b.get(at..at + out.len()).ok_or(Error::Data)?),
                None => out.fill(0),
            }
        }
        // The rows are short and far apart in the buffer (each a cache miss
        // the hardware does not predict): ask for all of them first, so that
        // the misses overlap, then copy.
        self.rows.rows(j, |_, bo, len| {
            if let Some(s) = self.src.get(bo..bo + len) {
                prefetch(s);
            }
            Ok(())
        })?;
        self.rows.rows(j, |io, bo, len| {
            let s = self.src.get(bo..bo + len).ok_or(Error::ReadBuffer)?;
            out.get_mut(io..io + len).ok_or(Error::Data)?.copy_from_slice(s);
            Ok(())
        })?;
        Ok(())
    }
}

/// Decoded blocks of a chunk into a C-order buffer: only the blocks the box
/// touches are decoded, and each puts its rows in place.
pub(crate) struct ChunkSink<'a, 'b> {
    pub rows: BlockRows,
    /// The caller's buffer, written by every thread that decodes a block of
    /// this chunk (or of another chunk of the same slice) at once.
    pub dst: &'a Disjoint<'b>,
}

impl BlockSink for ChunkSink<'_, '_> {
    fn block_bytes(&self) -> usize {
        self.rows.block_bytes
    }

    fn wants(&self, j: usize) -> bool {
        self.rows.cover(j) != Cover::None
    }

    fn span(&self, j: usize, len: usize) -> (usize, usize) {
        self.rows.span(j).unwrap_or((0, len))
    }

    fn put(&self, j: usize, block: &[u8]) -> Result<()> {
        // As in `ChunkSource::fill`: the rows' cache lines first, then the
        // copies (for whole blocks: a few rows of a block are better copied
        // at once, and are often in cache already).
        if self.rows.cover(j) == Cover::Full {
            self.rows.rows(j, |_, bo, len| {
                self.dst.prefetch(bo, len);
                Ok(())
            })?;
        }
        self.rows.rows(j, |io, bo, len| {
            let s = block.get(io..io + len).ok_or(Error::Data)?;
            // SAFETY: the rows of block `j` of this chunk are the buffer
            // positions of the items the block shares with the slice; no
            // other block, of this chunk or another, holds those items, so
            // no other thread writes these bytes (see `Disjoint`).
            unsafe { self.dst.write(bo, s) }
        })?;
        Ok(())
    }
}

/// Ask the CPU to bring the cache lines of `s` in (a hint: no effect on what
/// the program computes).
#[inline]
fn prefetch(s: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = s.as_ptr().cast::<i8>();
        // SAFETY: SSE is part of x86-64's baseline, and a prefetch reads
        // nothing the program sees (the addresses are inside `s` anyway).
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(s.len().saturating_sub(1)));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::geometry::tests::meta;

    /// Every box of a small padded array, against the chunk-wide scatter and gather.
    #[test]
    fn blocks_match_the_chunk_wide_copies() {
        let g = Geometry::new(&meta(&[9, 8], &[4, 5], &[3, 2])).unwrap();
        let ts = 2;
        let shape = [9i64, 8];
        let src: Vec<u8> = (0..9 * 8 * ts).map(|x| (x * 7 + 1) as u8).collect();
        let bb = g.block_items as usize * ts;
        let cb = g.chunk_items as usize * ts;
        let old: Vec<u8> = (0..cb).map(|x| (x * 3 + 5) as u8).collect();
        for c in [[0i64, 0], [1, 1], [2, 0], [2, 1]] {
            let (_, lo, hi) = g.chunk_box(&c);
            for (blo, bhi) in [
                (lo.clone(), hi.clone()),
                (vec![lo[0] + 1, lo[1]], vec![hi[0], hi[1] - 1]),
                (vec![lo[0], lo[1] + 2], vec![lo[0] + 1, hi[1]]),
            ] {
                let rows = BlockRows::new(&g, &lo, &blo, &bhi, &[0; 2], &shape, ts).unwrap();
                assert_eq!(rows.nblocks() * bb, cb);
                // Writing: the old chunk with the box's items over it.
                let mut want = old.clone();
                g.scatter(&mut want, &lo, &blo, &bhi, &src, &[0; 2], &shape, ts).unwrap();
                let source = ChunkSource { rows, src: &src, base: Some(&old), chunk_bytes: cb };
                let mut got = vec![0u8; cb];
                for (j, b) in got.chunks_mut(bb).enumerate() {
                    source.fill(j, b).unwrap();
                }
                assert_eq!(got, want, "chunk {c:?} box {blo:?}..{bhi:?}");
                // Reading: the box's items out of the chunk, only from the blocks it touches.
                let mut want = vec![0u8; src.len()];
                g.gather(&old, &lo, &blo, &bhi, &mut want, &[0; 2], &shape, ts).unwrap();
                let mut out = vec![0u8; src.len()];
                let dst = Disjoint::new(&mut out[..]);
                let sink = ChunkSink {
                    rows: BlockRows::new(&g, &lo, &blo, &bhi, &[0; 2], &shape, ts).unwrap(),
                    dst: &dst,
                };
                for (j, b) in old.chunks(bb).enumerate() {
                    if sink.wants(j) {
                        // The span runs from the first row's start to the last
                        // row's end, and the sink reads nothing outside it.
                        let (first, end) = sink.span(j, b.len());
                        let (mut lo_row, mut hi_row) = (usize::MAX, 0);
                        sink.rows
                            .rows(j, |io, _, len| {
                                (lo_row, hi_row) = (lo_row.min(io), hi_row.max(io + len));
                                Ok(())
                            })
                            .unwrap();
                        assert_eq!(
                            (first, end),
                            (lo_row, hi_row),
                            "chunk {c:?} box {blo:?}..{bhi:?} block {j}"
                        );
                        let mut masked = vec![0xEEu8; b.len()];
                        masked[first..end].copy_from_slice(&b[first..end]);
                        sink.put(j, &masked).unwrap();
                    }
                }
                assert_eq!(out, want, "chunk {c:?} box {blo:?}..{bhi:?}");
            }
        }
    }
}
