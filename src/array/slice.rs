//! Slices of a stored array to and from C-order buffers, chunk by chunk:
//! a read decodes only the blocks it touches (or the whole chunk when it needs
//! most of it), a write rebuilds only the chunks it touches.

use super::blocks::{BlockRows, ChunkSink, ChunkSource, Cover};
use super::boxes::{buffer_len, for_each_index};
use super::disjoint::Disjoint;
use super::Geometry;
use crate::chunk::Compressor;
use crate::error::{Error, Result};
use crate::ndmeta::MAX_DIM;
use crate::schunk::{out_room, SuperChunk};

/// The part of chunk box `lo..hi` inside `start..stop`.
fn clip(lo: &[i64], hi: &[i64], start: &[i64], stop: &[i64]) -> (Vec<i64>, Vec<i64>) {
    (
        lo.iter().zip(start).map(|(&a, &b)| a.max(b)).collect(),
        hi.iter().zip(stop).map(|(&a, &b)| a.min(b)).collect(),
    )
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
        self.extchunkshape == self.chunkshape
            && self.blockshape.iter().zip(&self.chunkshape).skip(1).all(|(b, c)| b == c)
    }

    /// Where the whole chunk box `lo..hi` lies in a C-order buffer of
    /// `buf_shape` whose origin is at `start`, when its items are one run
    /// there in the chunk's C order: the byte range.
    fn whole_chunk_run(
        &self,
        lo: &[i64],
        hi: &[i64],
        start: &[i64],
        buf_shape: &[i64],
        ts: usize,
    ) -> Option<std::ops::Range<usize>> {
        if !self.chunk_is_c_order() || lo.iter().zip(hi).zip(&self.chunkshape).any(|((l, h), c)| h - l != *c)
        {
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
            crate::trace!(
                "chunk {n} does not hold the {} bytes the b2nd metalayer says",
                self.chunk_bytes(ts)?
            );
            return Err(Error::Data);
        }
        Ok(())
    }

    /// The items of `start..stop` of the array in `sc` into `buffer`, a C-order
    /// array of shape `buffer_shape` (at least the slice's shape; the slice goes
    /// at its origin).
    pub fn get_slice(
        &self,
        sc: &SuperChunk,
        start: &[i64],
        stop: &[i64],
        buffer: &mut [u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
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
        let dst = Disjoint::new(buffer);
        // Chunk `c` of the slice, its blocks decoded on `nthreads` threads.
        let one = |c: &[i64], alone: bool| -> Result<()> {
            let (n, lo, hi) = self.chunk_box(c);
            let (rlo, rhi) = clip(&lo, &hi, start, stop);
            if rlo == lo && rhi == hi {
                if let Some(r) = self.whole_chunk_run(&lo, &hi, start, buffer_shape, ts) {
                    // Straight into the caller's buffer.
                    // SAFETY: the chunk's items are `r` in the buffer; no other
                    // chunk of the slice has items there (see `Disjoint`).
                    let out = unsafe { dst.range_mut(r)? };
                    let got =
                        if alone { sc.decompress_chunk_alone(n, out) } else { sc.decompress_chunk(n, out) };
                    got.map_err(chunk_failure)?;
                    return Ok(());
                }
            }
            // Only the blocks the slice touches are decoded, each by the thread
            // that decodes it, into its place in the caller's buffer.
            self.check_chunk(sc, n, ts)?;
            let sink = ChunkSink {
                rows: BlockRows::new(self, &lo, &rlo, &rhi, start, buffer_shape, ts)?,
                dst: &dst,
            };
            let got =
                if alone { sc.decompress_chunk_to_alone(n, &sink) } else { sc.decompress_chunk_to(n, &sink) };
            got.map_err(|e| match e {
                Error::WriteBuffer => e,
                e => chunk_failure(e),
            })
        };
        // Many chunks: each thread decodes whole chunks, one after another
        // (no wait between chunks, and chunks with few blocks keep every
        // thread busy); few: the threads share each chunk's blocks.
        let nchunks = clo.iter().zip(&chi).map(|(a, b)| (b - a).max(0) as usize).product::<usize>();
        let bytes = shape.iter().map(|&n| n as usize).product::<usize>().saturating_mul(ts);
        let nthreads = sc.dparams().nthreads;
        let threads = crate::chunk::jobs_threads(nthreads, nchunks, bytes);
        if threads > 1 && nchunks >= threads {
            let nd = clo.len();
            return crate::chunk::run_jobs(nthreads, nchunks, bytes, &|k| {
                let mut c = [0i64; MAX_DIM];
                let mut k = k as i64;
                for d in (0..nd).rev() {
                    let ext = chi[d] - clo[d];
                    c[d] = clo[d] + k % ext;
                    k /= ext;
                }
                one(&c[..nd], true)
            });
        }
        for_each_index(&clo, &chi, |c| one(c, false))
    }

    /// Overwrite the items of `start..stop` of the array in `sc` with those at
    /// the origin of `buffer`, a C-order array of shape `buffer_shape`.
    pub fn set_slice(
        &self,
        sc: &mut SuperChunk,
        start: &[i64],
        stop: &[i64],
        buffer: &[u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
        let shape = self.check_slice(start, stop, buffer_shape)?;
        let ts = sc.typesize().max(1) as usize;
        let chunk_bytes = self.chunk_bytes(ts)?;
        if buffer.len() < buffer_len(buffer_shape, ts)? {
            return Err(Error::ReadBuffer);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (clo, chi) = self.chunk_range(start, stop);
        let mut boxes = Vec::new();
        for_each_index(&clo, &chi, |c| {
            boxes.push(self.chunk_box(c));
            Ok(())
        })?;
        let w = SliceWrite { geom: self, start, stop, buffer, buffer_shape, ts, chunk_bytes };
        // Many chunks: threads make whole chunks at once, which are then
        // stored in order; few: the threads share each chunk's blocks.
        let bytes = shape.iter().map(|&n| n as usize).product::<usize>().saturating_mul(ts);
        let at_once =
            sc.rewrite_chunks(boxes.len(), bytes, &|k| boxes[k].0, &|k, reader, comp, chunk, cbuf| {
                w.make(reader, comp, &boxes[k], true, chunk, cbuf)
            });
        if at_once.map_err(|e| match e {
            Error::ReadBuffer => e,
            e => chunk_failure(e),
        })? {
            return Ok(());
        }
        let mut comp = sc.take_compressor().map_err(chunk_failure)?;
        let (mut chunk, mut cbuf) = (Vec::new(), Vec::new());
        let r = boxes.iter().try_for_each(|b| {
            w.make(sc, &mut comp, b, false, &mut chunk, &mut cbuf)?;
            // copied, keeping `cbuf` warm (see SuperChunk::set_slice)
            sc.update_chunk(b.0, &cbuf).map(drop).map_err(chunk_failure)
        });
        sc.give_compressor(comp);
        r
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

/// A slice write: where its items come from, and how its chunks are made.
struct SliceWrite<'a> {
    geom: &'a Geometry,
    start: &'a [i64],
    stop: &'a [i64],
    buffer: &'a [u8],
    buffer_shape: &'a [i64],
    ts: usize,
    chunk_bytes: usize,
}

/// A chunk of the grid: its number and its box in the array.
type ChunkBox = (usize, Vec<i64>, Vec<i64>);

/// Room a compressed chunk may need beyond its items (header and bstarts of
/// a chunk that does not compress are within this much of its size).
const CHUNK_ROOM: usize = 32;

impl SliceWrite<'_> {
    /// Chunk `(n, lo, hi)` with the slice's items written over it, compressed
    /// by `comp` into `cbuf` (`chunk`: room for the chunk's current items,
    /// decoded on the calling thread alone when `alone`).
    fn make(
        &self,
        sc: &SuperChunk,
        comp: &mut Compressor,
        (n, lo, hi): &ChunkBox,
        alone: bool,
        chunk: &mut Vec<u8>,
        cbuf: &mut Vec<u8>,
    ) -> Result<()> {
        let g = self.geom;
        let (rlo, rhi) = clip(lo, hi, self.start, self.stop);
        let whole = rlo == *lo
            && rhi == *hi
            && lo.iter().zip(hi).zip(&g.extchunkshape).all(|((&l, &h), &e)| h - l == e);
        if let Some(r) =
            whole.then(|| g.whole_chunk_run(lo, hi, self.start, self.buffer_shape, self.ts)).flatten()
        {
            // Straight from the caller's buffer.
            let src = self.buffer.get(r).ok_or(Error::ReadBuffer)?;
            out_room(cbuf, src.len() + CHUNK_ROOM);
            let k = comp.compress(src, cbuf).map_err(chunk_failure)?;
            if k == 0 {
                return Err(chunk_failure(Error::WriteBuffer));
            }
            cbuf.truncate(k);
            return Ok(());
        }
        let rows = BlockRows::new(g, lo, &rlo, &rhi, self.start, self.buffer_shape, self.ts)?;
        let base = if rlo == *lo && rhi == *hi {
            // Every item of the chunk comes from the caller's buffer (padding is zeros).
            None
        } else {
            // The chunk's current blocks where the slice does not cover them
            // (the ones it covers whole are not decoded; block 0 always is, as
            // delta's reference), the slice's items over them.
            let skip: Vec<bool> =
                (0..rows.nblocks()).map(|j| j > 0 && rows.cover(j) == Cover::Full).collect();
            chunk.clear();
            chunk.resize(self.chunk_bytes, 0);
            let got = if alone {
                sc.decompress_chunk_masked_alone(*n, chunk, &skip)
            } else {
                sc.decompress_chunk_masked(*n, chunk, &skip)
            };
            got.map_err(chunk_failure)?;
            Some(&chunk[..])
        };
        // Each block is gathered by the thread that compresses it.
        let source = ChunkSource { rows, src: self.buffer, base, chunk_bytes: self.chunk_bytes };
        out_room(cbuf, self.chunk_bytes + CHUNK_ROOM);
        let k = comp.compress_from(&source, cbuf).map_err(|e| match e {
            Error::ReadBuffer => e,
            e => chunk_failure(e),
        })?;
        if k == 0 {
            return Err(chunk_failure(Error::WriteBuffer));
        }
        cbuf.truncate(k);
        Ok(())
    }
}
