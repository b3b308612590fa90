//! Slices of a stored array to and from C-order buffers, chunk by chunk:
//! a read decodes only the blocks it touches (or the whole chunk when it needs
//! most of it), a write rebuilds only the chunks it touches.

use super::blocks::{BlockRows, ChunkSink, ChunkSource, Cover};
use super::boxes::{buffer_len, for_each_index};
use super::Geometry;
use crate::error::{Error, Result};
use crate::schunk::SuperChunk;
use std::sync::Mutex;

/// The part of chunk box `lo..hi` inside `start..stop`.
fn clip(lo: &[i64], hi: &[i64], start: &[i64], stop: &[i64]) -> (Vec<i64>, Vec<i64>) {
    (lo.iter().zip(start).map(|(&a, &b)| a.max(b)).collect(), hi.iter().zip(stop).map(|(&a, &b)| a.min(b)).collect())
}

/// A slice read or write reports a chunk that cannot be compressed, decompressed
/// or stored as a failure (c-blosc2's code for it), with the cause under `BLOSC_TRACE`.
fn chunk_failure(e: Error) -> Error {
    crate::trace!("b2nd: a chunk operation failed: {e:?}");
    Error::Failure
}

impl Geometry {
    /// Whether a chunk's items, as stored, are in C order over the chunk
    /// shape (no padding, blocks spanning every dimension but the first).
    fn chunk_is_c_order(&self) -> bool {
        self.extchunkshape == self.chunkshape && self.blockshape.iter().zip(&self.chunkshape).skip(1).all(|(b, c)| b == c)
    }

    /// Where the whole chunk box `lo..hi` lies in a C-order buffer of
    /// `buf_shape` whose origin is at `start`, when its items are one run
    /// there in the chunk's C order: the byte range.
    fn whole_chunk_run(&self, lo: &[i64], hi: &[i64], start: &[i64], buf_shape: &[i64], ts: usize) -> Option<std::ops::Range<usize>> {
        if !self.chunk_is_c_order() || lo.iter().zip(hi).zip(&self.chunkshape).any(|((l, h), c)| h - l != *c) {
            return None;
        }
        let first = (0..lo.len()).find(|&i| hi[i] - lo[i] != 1).unwrap_or(0);
        if (first + 1..lo.len()).any(|i| hi[i] - lo[i] != buf_shape[i]) {
            return None;
        }
        let rel: Vec<i64> = lo.iter().zip(start).map(|(a, b)| a - b).collect();
        let at = super::boxes::c_index(&rel, buf_shape) as usize * ts;
        Some(at..at + self.chunk_items as usize * ts)
    }

    /// Chunk `n` is stored, and holds a whole (padded) chunk as the metalayer
    /// says (`Data` otherwise): checked before a buffer is sized from the metalayer.
    fn check_chunk(&self, sc: &SuperChunk, n: usize, ts: usize) -> Result<()> {
        if sc.chunk_nbytes(n)? as usize != self.chunk_bytes(ts)? {
            crate::trace!("chunk {n} does not hold the {} bytes the b2nd metalayer says", self.chunk_bytes(ts)?);
            return Err(Error::Data);
        }
        Ok(())
    }

    /// The items of `start..stop` of the array in `sc` into `buffer`, a C-order
    /// array of shape `buffer_shape` (at least the slice's shape; the slice goes
    /// at its origin).
    pub fn get_slice(&self, sc: &SuperChunk, start: &[i64], stop: &[i64], buffer: &mut [u8], buffer_shape: &[i64]) -> Result<()> {
        let shape = self.check_slice(start, stop, buffer_shape)?;
        let ts = sc.typesize().max(1) as usize;
        self.chunk_bytes(ts)?; // chunks a chunk cannot hold are refused on every path
        if buffer.len() < buffer_len(buffer_shape, ts)? {
            return Err(Error::WriteBuffer);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (clo, chi) = self.chunk_range(start, stop);
        let dst = Mutex::new(buffer);
        for_each_index(&clo, &chi, |c| {
            let (n, lo, hi) = self.chunk_box(c);
            let (rlo, rhi) = clip(&lo, &hi, start, stop);
            if rlo == lo && rhi == hi {
                if let Some(r) = self.whole_chunk_run(&lo, &hi, start, buffer_shape, ts) {
                    // Straight into the caller's buffer.
                    let mut dst = dst.lock().unwrap_or_else(|e| e.into_inner());
                    sc.decompress_chunk(n, dst.get_mut(r).ok_or(Error::WriteBuffer)?).map_err(chunk_failure)?;
                    return Ok(());
                }
            }
            // Only the blocks the slice touches are decoded, each by the thread
            // that decodes it, into its place in the caller's buffer.
            self.check_chunk(sc, n, ts)?;
            let sink = ChunkSink { rows: BlockRows::new(self, &lo, &rlo, &rhi, start, buffer_shape, ts)?, dst: &dst };
            sc.decompress_chunk_to(n, &sink).map_err(|e| match e {
                Error::WriteBuffer => e,
                e => chunk_failure(e),
            })
        })
    }

    /// Overwrite the items of `start..stop` of the array in `sc` with those at
    /// the origin of `buffer`, a C-order array of shape `buffer_shape`.
    pub fn set_slice(&self, sc: &mut SuperChunk, start: &[i64], stop: &[i64], buffer: &[u8], buffer_shape: &[i64]) -> Result<()> {
        let shape = self.check_slice(start, stop, buffer_shape)?;
        let ts = sc.typesize().max(1) as usize;
        self.chunk_bytes(ts)?;
        if buffer.len() < buffer_len(buffer_shape, ts)? {
            return Err(Error::ReadBuffer);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (clo, chi) = self.chunk_range(start, stop);
        let mut chunk = Vec::new();
        let mut cbuf = Vec::new();
        let mut boxes = Vec::new();
        for_each_index(&clo, &chi, |c| {
            boxes.push(self.chunk_box(c));
            Ok(())
        })?;
        for (n, lo, hi) in boxes {
            let (rlo, rhi) = clip(&lo, &hi, start, stop);
            let whole = rlo == lo && rhi == hi && lo.iter().zip(&hi).zip(&self.extchunkshape).all(|((&l, &h), &e)| h - l == e);
            if let Some(r) = whole.then(|| self.whole_chunk_run(&lo, &hi, start, buffer_shape, ts)).flatten() {
                // Straight from the caller's buffer.
                let c = sc.compress(buffer.get(r).ok_or(Error::ReadBuffer)?).map_err(chunk_failure)?;
                sc.update_chunk(n, &c).map_err(chunk_failure)?;
                continue;
            }
            let chunk_bytes = self.chunk_bytes(ts)?;
            let rows = BlockRows::new(self, &lo, &rlo, &rhi, start, buffer_shape, ts)?;
            let base = if rlo == lo && rhi == hi {
                // Every item of the chunk comes from the caller's buffer (padding is zeros).
                None
            } else {
                // The chunk's current blocks where the slice does not cover them
                // (the ones it covers whole are not decoded; block 0 always is, as
                // delta's reference), the slice's items over them.
                let skip: Vec<bool> = (0..rows.nblocks()).map(|j| j > 0 && rows.cover(j) == Cover::Full).collect();
                chunk.clear();
                chunk.resize(chunk_bytes, 0);
                sc.decompress_chunk_masked(n, &mut chunk, &skip).map_err(chunk_failure)?;
                Some(&chunk[..])
            };
            // Each block is gathered by the thread that compresses it.
            let source = ChunkSource { rows, src: buffer, base, chunk_bytes };
            sc.compress_from(&source, &mut cbuf).map_err(|e| match e {
                Error::ReadBuffer => e,
                e => chunk_failure(e),
            })?;
            sc.update_chunk(n, &cbuf).map_err(chunk_failure)?;
        }
        Ok(())
    }

    /// The items at `coords` (one `ndim`-tuple per item) of the array in `sc`,
    /// one after the other into `buffer`.
    pub fn get_points(&self, sc: &SuperChunk, coords: &[i64], buffer: &mut [u8]) -> Result<()> {
        let nd = self.ndim().max(1);
        let ts = sc.typesize().max(1) as usize;
        if !coords.len().is_multiple_of(nd) || buffer.len() < coords.len() / nd * ts {
            return Err(Error::InvalidParam);
        }
        let ones = vec![1i64; self.ndim()];
        for (k, c) in coords.chunks(nd).enumerate() {
            let c = &c[..self.ndim()];
            let stop: Vec<i64> = c.iter().map(|&x| x.saturating_add(1)).collect();
            self.get_slice(sc, c, &stop, &mut buffer[k * ts..(k + 1) * ts], &ones)?;
        }
        Ok(())
    }
}
