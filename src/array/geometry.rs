//! The layout of an array's items in its chunks (README_B2ND_METALAYER.rst):
//! the array is cut into chunks of `chunkshape` (C order over the chunk grid,
//! edge chunks padded), each chunk into blocks of `blockshape` (C order over
//! the chunk's block grid, the chunk padded to whole blocks), and the items of
//! a block are in C order.
//!
//! Every layout c-blosc2 accepts is one here: 0 to 16 dimensions, dimensions
//! of length 0 (with a chunk length of 0 or more), blocks longer than chunks
//! along some dimension (the chunk is padded to one block there).

use super::boxes::{c_index, for_each_index, product, unravel};
use super::Meta;
use crate::error::{Error, Result};

/// The derived sizes of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    pub shape: Vec<i64>,
    pub chunkshape: Vec<i64>,
    pub blockshape: Vec<i64>,
    /// The chunk shape rounded up to whole blocks.
    pub extchunkshape: Vec<i64>,
    /// The number of chunks along each dimension.
    pub chunks: Vec<i64>,
    /// Items of a (padded) chunk, and of a block.
    pub chunk_items: i64,
    pub block_items: i64,
}

impl Geometry {
    pub fn new(meta: &Meta) -> Result<Geometry> {
        meta.check()?;
        let shape = meta.shape.clone();
        let chunkshape: Vec<i64> = meta.chunkshape.iter().map(|&c| i64::from(c)).collect();
        let blockshape: Vec<i64> = meta.blockshape.iter().map(|&b| i64::from(b)).collect();
        let extchunkshape: Vec<i64> = chunkshape
            .iter()
            .zip(&blockshape)
            .map(|(&c, &b)| if c == 0 { 0 } else { (c + b - 1) / b * b })
            .collect();
        let chunks: Vec<i64> =
            shape.iter().zip(&chunkshape).map(|(&s, &c)| if c == 0 { 0 } else { (s + c - 1) / c }).collect();
        let chunk_items = product(&extchunkshape).ok_or(Error::InvalidParam)?;
        let block_items = product(&blockshape).ok_or(Error::InvalidParam)?;
        // The chunk and block item counts are 32-bit in the format (and in c-blosc2).
        let fits = |v: &[i64]| product(v).is_some_and(|n| n <= i64::from(i32::MAX));
        if !fits(&chunkshape) || !fits(&blockshape) {
            return Err(Error::InvalidParam);
        }
        product(&chunks).ok_or(Error::InvalidParam)?;
        product(&shape).ok_or(Error::InvalidParam)?;
        // the shape padded to whole chunks must be countable too
        let ext: Option<Vec<i64>> = chunks.iter().zip(&chunkshape).map(|(&n, &c)| n.checked_mul(c)).collect();
        ext.as_deref().and_then(product).ok_or(Error::InvalidParam)?;
        Ok(Geometry { shape, chunkshape, blockshape, extchunkshape, chunks, chunk_items, block_items })
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Items of the array (1 for a 0-dimensional array).
    pub fn nitems(&self) -> i64 {
        product(&self.shape).unwrap_or(0)
    }

    /// Chunks the array is stored in (none when it has no items).
    pub fn nchunks(&self) -> i64 {
        if self.nitems() == 0 {
            0
        } else {
            product(&self.chunks).unwrap_or(0)
        }
    }

    /// The shape rounded up to whole chunks.
    pub fn extshape(&self) -> Vec<i64> {
        self.chunks.iter().zip(&self.chunkshape).map(|(&n, &c)| n * c).collect()
    }

    /// The blocks along each dimension of a chunk.
    pub fn chunk_blocks(&self) -> Vec<i64> {
        self.extchunkshape
            .iter()
            .zip(&self.blockshape)
            .map(|(&e, &b)| if b == 0 { 0 } else { e / b })
            .collect()
    }

    /// The bytes of a (padded) chunk of items of `typesize` bytes: what a
    /// chunk buffer takes. More than a chunk can hold (the chunk format's
    /// 2 GiB limit) is refused with `TwoGbLimit`: an array whose metalayer asks
    /// for that (a crafted file) opens, but reading or writing it allocates nothing.
    pub fn chunk_bytes(&self, typesize: usize) -> Result<usize> {
        // (in u64: on 32-bit targets too, a chunk past the limit is `TwoGbLimit`)
        let n = u64::try_from(self.chunk_items)
            .ok()
            .and_then(|n| n.checked_mul(typesize as u64))
            .ok_or(Error::InvalidParam)?;
        if n > crate::chunk::header::MAX_BUFFERSIZE as u64 {
            crate::trace!("a chunk of {n} bytes is more than a chunk can hold");
            return Err(Error::TwoGbLimit);
        }
        usize::try_from(n).map_err(|_| Error::TwoGbLimit)
    }

    /// The block size (bytes) of an array of items of `typesize` bytes.
    pub fn block_bytes(&self, typesize: i32) -> Result<i32> {
        if typesize <= 0 {
            return Err(Error::InvalidParam);
        }
        i32::try_from(self.block_items * i64::from(typesize)).map_err(|_| Error::InvalidParam)
    }

    /// Check `start..stop` against the shape and a buffer of `buffer_shape`;
    /// returns the slice's shape.
    pub fn check_slice(&self, start: &[i64], stop: &[i64], buffer_shape: &[i64]) -> Result<Vec<i64>> {
        let nd = self.ndim();
        if start.len() != nd || stop.len() != nd || buffer_shape.len() != nd {
            return Err(Error::InvalidParam);
        }
        let mut shape = Vec::with_capacity(nd);
        for i in 0..nd {
            if start[i] < 0
                || stop[i] < start[i]
                || stop[i] > self.shape[i]
                || buffer_shape[i] < stop[i] - start[i]
            {
                return Err(Error::InvalidParam);
            }
            shape.push(stop[i] - start[i]);
        }
        Ok(shape)
    }

    /// The grid position of chunk `n`.
    pub fn chunk_coords(&self, n: i64) -> Vec<i64> {
        unravel(n, &self.chunks)
    }

    /// The chunk at grid position `c`: its number and its box in the array
    /// (without the padding).
    pub fn chunk_box(&self, c: &[i64]) -> (usize, Vec<i64>, Vec<i64>) {
        let lo: Vec<i64> = c.iter().zip(&self.chunkshape).map(|(&c, &s)| c * s).collect();
        let hi: Vec<i64> =
            lo.iter().zip(&self.chunkshape).zip(&self.shape).map(|((&l, &s), &n)| (l + s).min(n)).collect();
        (c_index(c, &self.chunks) as usize, lo, hi)
    }

    /// The chunks that hold part of `start..stop`, as a box of the grid.
    pub fn chunk_range(&self, start: &[i64], stop: &[i64]) -> (Vec<i64>, Vec<i64>) {
        let lo = start.iter().zip(&self.chunkshape).map(|(&s, &c)| if c == 0 { 0 } else { s / c }).collect();
        let hi = stop
            .iter()
            .zip(&self.chunkshape)
            .map(|(&s, &c)| if c == 0 { 0 } else { (s + c - 1) / c })
            .collect();
        (lo, hi)
    }

    /// The numbers of the chunks that hold part of `start..stop`, ascending.
    pub fn slice_chunks(&self, start: &[i64], stop: &[i64]) -> Result<Vec<i64>> {
        let nd = self.ndim();
        if start.len() != nd || stop.len() != nd {
            return Err(Error::InvalidParam);
        }
        for i in 0..nd {
            if start[i] < 0 || stop[i] < start[i] || stop[i] > self.shape[i] {
                return Err(Error::InvalidParam);
            }
        }
        if self.nchunks() == 0 {
            return Ok(Vec::new());
        }
        let (lo, hi) = self.chunk_range(start, stop);
        let mut out = Vec::new();
        for_each_index(&lo, &hi, |c| {
            out.push(c_index(c, &self.chunks));
            Ok(())
        })?;
        out.sort_unstable();
        Ok(out)
    }

    /// Item offset, inside its chunk, of the item at chunk-local `local`.
    pub fn offset_in_chunk(&self, local: &[i64]) -> i64 {
        let block: Vec<i64> = local.iter().zip(&self.blockshape).map(|(&l, &b)| l / b).collect();
        let inner: Vec<i64> = local.iter().zip(&self.blockshape).map(|(&l, &b)| l % b).collect();
        c_index(&block, &self.chunk_blocks()) * self.block_items + c_index(&inner, &self.blockshape)
    }

    /// Call `f(block, offset_in_block, buffer_offset, len)` (offsets and
    /// length in bytes) for every run of items of the box `lo..hi` inside the
    /// chunk whose box starts at `chunk_lo` that is contiguous both in its
    /// block and in a C-order buffer of shape `buf_shape` whose origin is the
    /// array position `start`. Runs come block after block.
    #[allow(clippy::too_many_arguments)] // a box, its chunk, the buffer's shape and origin, and the callback
    pub fn for_each_run(
        &self,
        chunk_lo: &[i64],
        lo: &[i64],
        hi: &[i64],
        start: &[i64],
        buf_shape: &[i64],
        ts: usize,
        mut f: impl FnMut(usize, usize, usize, usize) -> Result<()>,
    ) -> Result<()> {
        let nd = self.ndim();
        if nd > 0 && lo.iter().zip(hi).any(|(a, b)| a >= b) {
            return Ok(());
        }
        let rows = super::blocks::BlockRows::new(self, chunk_lo, lo, hi, start, buf_shape, ts)?;
        if nd == 0 {
            return rows.rows(0, |io, bo, len| f(0, io, bo, len)).map(|_| ());
        }
        // The blocks the box touches, in C order, and the rows of each.
        let (bs, grid) = (&self.blockshape, self.chunk_blocks());
        let blo: Vec<i64> = (0..nd).map(|i| (lo[i] - chunk_lo[i]) / bs[i]).collect();
        let bhi: Vec<i64> = (0..nd).map(|i| (hi[i] - chunk_lo[i] - 1) / bs[i] + 1).collect();
        for_each_index(&blo, &bhi, |b| {
            let block = c_index(b, &grid) as usize;
            rows.rows(block, |io, bo, len| f(block, io, bo, len)).map(|_| ())
        })
    }

    /// Copy the box `lo..hi` (array coordinates, inside the chunk whose box
    /// starts at `chunk_lo`) from the C-order buffer `src` (of `buf_shape`,
    /// origin at array position `start`) into the decompressed chunk `chunk`.
    #[allow(clippy::too_many_arguments)] // as `for_each_run`, with the chunk and the buffer
    pub(crate) fn scatter(
        &self,
        chunk: &mut [u8],
        chunk_lo: &[i64],
        lo: &[i64],
        hi: &[i64],
        src: &[u8],
        start: &[i64],
        buf_shape: &[i64],
        ts: usize,
    ) -> Result<()> {
        let block_bytes = self.block_items as usize * ts;
        self.for_each_run(chunk_lo, lo, hi, start, buf_shape, ts, |blk, io, bo, len| {
            let co = blk * block_bytes + io;
            let s = src.get(bo..bo + len).ok_or(Error::ReadBuffer)?;
            chunk.get_mut(co..co + len).ok_or(Error::Data)?.copy_from_slice(s);
            Ok(())
        })
    }

    /// The reverse of [`Geometry::scatter`]: from the chunk into the buffer
    /// (reads go block by block through `b2nd::blocks::ChunkSink`).
    #[cfg(test)]
    #[allow(clippy::too_many_arguments)] // as `scatter`, which it mirrors
    pub(crate) fn gather(
        &self,
        chunk: &[u8],
        chunk_lo: &[i64],
        lo: &[i64],
        hi: &[i64],
        dst: &mut [u8],
        start: &[i64],
        buf_shape: &[i64],
        ts: usize,
    ) -> Result<()> {
        let block_bytes = self.block_items as usize * ts;
        self.for_each_run(chunk_lo, lo, hi, start, buf_shape, ts, |blk, io, bo, len| {
            let co = blk * block_bytes + io;
            let s = chunk.get(co..co + len).ok_or(Error::Data)?;
            dst.get_mut(bo..bo + len).ok_or(Error::WriteBuffer)?.copy_from_slice(s);
            Ok(())
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn meta(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Meta {
        Meta {
            shape: shape.to_vec(),
            chunkshape: chunks.to_vec(),
            blockshape: blocks.to_vec(),
            dtype: "<u2".into(),
            dtype_format: 0,
        }
    }

    #[test]
    fn geometry_pads_chunks_to_whole_blocks() {
        let g = Geometry::new(&meta(&[10, 7], &[4, 5], &[3, 2])).unwrap();
        assert_eq!(g.extchunkshape, vec![6, 6]);
        assert_eq!(g.chunks, vec![3, 2]);
        assert_eq!((g.chunk_items, g.block_items), (36, 6));
        // item (4, 3) of chunk (0, 0): block (1, 1) of a 2x3 block grid, inner (1, 1)
        assert_eq!(g.offset_in_chunk(&[4, 3]), 4 * 6 + 2 + 1);
        assert!(Geometry::new(&meta(&[10], &[0], &[1])).is_err());
        assert_eq!(Geometry::new(&meta(&[0, 3], &[2, 2], &[1, 1])).unwrap().nitems(), 0);
    }

    #[test]
    fn layouts_c_blosc2_accepts() {
        // Blocks longer than chunks: the chunk is one padded block there.
        let g = Geometry::new(&meta(&[10], &[4], &[5])).unwrap();
        assert_eq!((g.extchunkshape.clone(), g.chunks.clone(), g.chunk_items), (vec![5], vec![3], 5));
        let g = Geometry::new(&meta(&[7, 9, 11, 4], &[2, 5, 10, 5], &[5, 2, 5, 2])).unwrap();
        assert_eq!(g.extchunkshape, vec![5, 6, 10, 6]);
        // Zero-length dimensions, with chunk (and block) lengths of 0 too.
        let g = Geometry::new(&meta(&[20, 0], &[7, 0], &[3, 0])).unwrap();
        assert_eq!((g.nitems(), g.nchunks(), g.chunk_items), (0, 0, 0));
        let g = Geometry::new(&meta(&[40, 0, 12], &[7, 3, 5], &[2, 2, 2])).unwrap();
        assert_eq!((g.nitems(), g.nchunks()), (0, 0));
        // 0 dimensions: one item in one chunk.
        let g = Geometry::new(&meta(&[], &[], &[])).unwrap();
        assert_eq!((g.nitems(), g.nchunks(), g.chunk_items), (1, 1, 1));
        // A zero block length needs a zero chunk length; a zero chunk length an empty dimension.
        assert!(Geometry::new(&meta(&[0], &[3], &[0])).is_err());
        assert!(Geometry::new(&meta(&[5], &[0], &[0])).is_err());
    }

    #[test]
    fn runs_cover_a_box_once() {
        let g = Geometry::new(&meta(&[9, 8], &[4, 3], &[2, 2])).unwrap();
        let ts = 2;
        let mut chunk = vec![0u8; g.chunk_items as usize * ts];
        let src: Vec<u8> = (0..9 * 8 * ts).map(|x| x as u8).collect();
        // Chunk (1, 1): rows 4..8, columns 3..6.
        let (lo, hi) = (vec![4, 3], vec![8, 6]);
        g.scatter(&mut chunk, &lo, &lo, &hi, &src, &[0, 0], &[9, 8], ts).unwrap();
        let mut back = vec![0u8; src.len()];
        g.gather(&chunk, &lo, &lo, &hi, &mut back, &[0, 0], &[9, 8], ts).unwrap();
        for r in 0..9 {
            for c in 0..8 {
                let inside = (4..8).contains(&r) && (3..6).contains(&c);
                let o = (r * 8 + c) * ts;
                assert_eq!(back[o] == src[o], inside || src[o] == 0, "({r}, {c})");
            }
        }
    }
}
