//! n-dimensional arrays on super-chunks (the b2nd format): the array is cut
//! into chunks of `chunkshape` (in C order over the chunk grid, edge chunks
//! padded), every chunk into blocks of `blockshape` (in C order over the
//! chunk's block grid), and the items of a block are in C order. The shapes
//! live in the `b2nd` metalayer ([`meta`]).

pub mod meta;

pub use meta::Meta;

use crate::chunk::{CParams, Special};
use crate::error::{Error, Result};
use crate::schunk::{Storage, SuperChunk};

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

fn c_index(coords: &[i64], shape: &[i64]) -> i64 {
    coords.iter().zip(shape).fold(0, |acc, (&c, &s)| acc * s + c)
}

fn product(v: &[i64]) -> Option<i64> {
    v.iter().try_fold(1i64, |acc, &x| acc.checked_mul(x))
}

/// Call `f` with every index tuple of the box `lo..hi` (C order).
fn for_each_index(lo: &[i64], hi: &[i64], mut f: impl FnMut(&[i64]) -> Result<()>) -> Result<()> {
    if lo.iter().zip(hi).any(|(a, b)| a >= b) {
        return Ok(());
    }
    let mut idx = lo.to_vec();
    loop {
        f(&idx)?;
        let mut d = idx.len();
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < hi[d] {
                break;
            }
            idx[d] = lo[d];
        }
    }
}

impl Geometry {
    pub fn new(meta: &Meta) -> Result<Geometry> {
        meta.check()?;
        let shape = meta.shape.clone();
        let chunkshape: Vec<i64> = meta.chunkshape.iter().map(|&c| i64::from(c)).collect();
        let blockshape: Vec<i64> = meta.blockshape.iter().map(|&b| i64::from(b)).collect();
        let extchunkshape: Vec<i64> = chunkshape.iter().zip(&blockshape).map(|(&c, &b)| (c + b - 1) / b * b).collect();
        let chunks: Vec<i64> = shape.iter().zip(&chunkshape).map(|(&s, &c)| (s + c - 1) / c).collect();
        let chunk_items = product(&extchunkshape).ok_or(Error::InvalidParam)?;
        let block_items = product(&blockshape).ok_or(Error::InvalidParam)?;
        product(&chunks).ok_or(Error::InvalidParam)?;
        Ok(Geometry { shape, chunkshape, blockshape, extchunkshape, chunks, chunk_items, block_items })
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn nitems(&self) -> i64 {
        product(&self.shape).unwrap_or(0)
    }

    pub fn nchunks(&self) -> i64 {
        product(&self.chunks).unwrap_or(0)
    }

    /// The blocks along each dimension of a chunk.
    fn chunk_blocks(&self) -> Vec<i64> {
        self.extchunkshape.iter().zip(&self.blockshape).map(|(&e, &b)| e / b).collect()
    }

    fn check_slice(&self, start: &[i64], stop: &[i64], buffer_shape: &[i64]) -> Result<Vec<i64>> {
        let nd = self.ndim();
        if start.len() != nd || stop.len() != nd || buffer_shape.len() != nd {
            return Err(Error::InvalidParam);
        }
        let mut shape = Vec::with_capacity(nd);
        for i in 0..nd {
            if start[i] < 0 || stop[i] < start[i] || stop[i] > self.shape[i] || buffer_shape[i] < stop[i] - start[i] {
                return Err(Error::InvalidParam);
            }
            shape.push(stop[i] - start[i]);
        }
        Ok(shape)
    }

    /// The chunk at grid position `c`: its number and its box in the array.
    fn chunk_box(&self, c: &[i64]) -> (usize, Vec<i64>, Vec<i64>) {
        let g = self;
        let lo: Vec<i64> = c.iter().zip(&g.chunkshape).map(|(&c, &s)| c * s).collect();
        let hi: Vec<i64> = lo.iter().zip(&g.chunkshape).zip(&g.shape).map(|((&l, &s), &n)| (l + s).min(n)).collect();
        (c_index(c, &g.chunks) as usize, lo, hi)
    }

    /// The chunks that hold part of `start..stop`, as grid boxes.
    fn chunk_range(&self, start: &[i64], stop: &[i64]) -> (Vec<i64>, Vec<i64>) {
        let g = self;
        let lo = start.iter().zip(&g.chunkshape).map(|(&s, &c)| s / c).collect();
        let hi = stop.iter().zip(&g.chunkshape).map(|(&s, &c)| (s + c - 1) / c).collect();
        (lo, hi)
    }

    /// Call `f(block, offset_in_block, buffer_offset, len)` (offsets and
    /// length in bytes) for every run of items of the box `lo..hi` inside the
    /// chunk whose box starts at `chunk_lo` that is contiguous both in its
    /// block and in a C-order buffer of shape `buf_shape` whose origin is the
    /// array position `start`. Runs come block after block.
    #[allow(clippy::too_many_arguments)]
    fn for_each_run(
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
        if nd == 0 {
            return f(0, 0, 0, ts);
        }
        let last = nd - 1;
        let bs = &self.blockshape;
        let grid = self.chunk_blocks();
        let blo: Vec<i64> = (0..nd).map(|i| (lo[i] - chunk_lo[i]) / bs[i]).collect();
        let bhi: Vec<i64> = (0..nd).map(|i| (hi[i] - chunk_lo[i] - 1) / bs[i] + 1).collect();
        let strides = |shape: &[i64]| {
            let mut st = vec![1i64; nd];
            for i in (0..last).rev() {
                st[i] = st[i + 1] * shape[i + 1];
            }
            st
        };
        let (bstr, ostr) = (strides(bs), strides(buf_shape));
        let mut rl = vec![0i64; nd];
        let mut rh = vec![0i64; nd];
        let mut idx = vec![0i64; nd];
        for_each_index(&blo, &bhi, |b| {
            let mut io = 0i64;
            let mut bo = 0i64;
            for i in 0..nd {
                let org = chunk_lo[i] + b[i] * bs[i];
                rl[i] = lo[i].max(org);
                rh[i] = hi[i].min(org + bs[i]);
                io += (rl[i] - org) * bstr[i];
                bo += (rl[i] - start[i]) * ostr[i];
            }
            let block = c_index(b, &grid) as usize;
            let len = (rh[last] - rl[last]) as usize * ts;
            idx.copy_from_slice(&rl);
            // Rows along the last dimension; offsets move by strides (odometer).
            loop {
                f(block, io as usize * ts, bo as usize * ts, len)?;
                let mut d = last;
                loop {
                    if d == 0 {
                        return Ok(());
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
        })
    }

    /// The items of `start..stop` of the array in `sc` into `buffer`, a C-order
    /// array of shape `buffer_shape` (at least the slice's shape; the slice goes
    /// at its origin).
    pub fn get_slice(&self, sc: &SuperChunk, start: &[i64], stop: &[i64], buffer: &mut [u8], buffer_shape: &[i64]) -> Result<()> {
        let shape = self.check_slice(start, stop, buffer_shape)?;
        let ts = sc.typesize().max(1) as usize;
        let need = product(buffer_shape).ok_or(Error::InvalidParam)? as usize * ts;
        if buffer.len() < need {
            return Err(Error::WriteBuffer);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (clo, chi) = self.chunk_range(start, stop);
        let block_bytes = self.block_items as usize * ts;
        let mut chunk = vec![0u8; self.chunk_items as usize * ts];
        let mut blockbuf = vec![0u8; block_bytes];
        for_each_index(&clo, &chi, |c| {
            let (n, lo, hi) = self.chunk_box(c);
            let rlo: Vec<i64> = lo.iter().zip(start).map(|(&a, &b)| a.max(b)).collect();
            let rhi: Vec<i64> = hi.iter().zip(stop).map(|(&a, &b)| a.min(b)).collect();
            // A chunk mostly needed is decoded whole; else only the blocks needed.
            let needed: i64 = rlo.iter().zip(&rhi).map(|(a, b)| b - a).product();
            if needed * 2 >= self.chunk_items {
                sc.decompress_chunk(n, &mut chunk)?;
                return self.for_each_run(&lo, &rlo, &rhi, start, buffer_shape, ts, |blk, io, bo, len| {
                    let co = blk * block_bytes + io;
                    let src = chunk.get(co..co + len).ok_or(Error::Data)?;
                    buffer.get_mut(bo..bo + len).ok_or(Error::WriteBuffer)?.copy_from_slice(src);
                    Ok(())
                });
            }
            let first_item = n as i64 * self.chunk_items;
            let mut current = usize::MAX;
            self.for_each_run(&lo, &rlo, &rhi, start, buffer_shape, ts, |blk, io, bo, len| {
                if blk != current {
                    let at = first_item + (blk as i64) * self.block_items;
                    sc.get_slice(at, at + self.block_items, &mut blockbuf)?;
                    current = blk;
                }
                let src = blockbuf.get(io..io + len).ok_or(Error::Data)?;
                buffer.get_mut(bo..bo + len).ok_or(Error::WriteBuffer)?.copy_from_slice(src);
                Ok(())
            })
        })
    }

    /// Overwrite the items of `start..stop` of the array in `sc` with those at
    /// the origin of `buffer`, a C-order array of shape `buffer_shape`.
    pub fn set_slice(&self, sc: &mut SuperChunk, start: &[i64], stop: &[i64], buffer: &[u8], buffer_shape: &[i64]) -> Result<()> {
        let shape = self.check_slice(start, stop, buffer_shape)?;
        let ts = sc.typesize().max(1) as usize;
        let need = product(buffer_shape).ok_or(Error::InvalidParam)? as usize * ts;
        if buffer.len() < need {
            return Err(Error::ReadBuffer);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (clo, chi) = self.chunk_range(start, stop);
        let mut chunk = vec![0u8; self.chunk_items as usize * ts];
        let mut boxes = Vec::new();
        for_each_index(&clo, &chi, |c| {
            boxes.push(self.chunk_box(c));
            Ok(())
        })?;
        for (n, lo, hi) in boxes {
            let rlo: Vec<i64> = lo.iter().zip(start).map(|(&a, &b)| a.max(b)).collect();
            let rhi: Vec<i64> = hi.iter().zip(stop).map(|(&a, &b)| a.min(b)).collect();
            let whole = rlo == lo && rhi == hi && lo.iter().zip(&hi).zip(&self.extchunkshape).all(|((&l, &h), &e)| h - l == e);
            // Items a chunk leaves undefined (uninitialized chunks, padding) are zeros.
            chunk.fill(0);
            if !whole {
                sc.decompress_chunk(n, &mut chunk)?;
            }
            let block_bytes = self.block_items as usize * ts;
            self.for_each_run(&lo, &rlo, &rhi, start, buffer_shape, ts, |blk, io, bo, len| {
                let co = blk * block_bytes + io;
                let src = buffer.get(bo..bo + len).ok_or(Error::ReadBuffer)?;
                chunk.get_mut(co..co + len).ok_or(Error::Data)?.copy_from_slice(src);
                Ok(())
            })?;
            let c = sc.compress(&chunk)?;
            sc.update_chunk(n, &c)?;
        }
        Ok(())
    }

    /// The block size (bytes) of an array of items of `typesize` bytes.
    pub fn block_bytes(&self, typesize: i32) -> Result<i32> {
        if typesize <= 0 {
            return Err(Error::InvalidParam);
        }
        i32::try_from(self.block_items * i64::from(typesize)).map_err(|_| Error::InvalidParam)
    }

    /// Make the empty super-chunk `sc` hold an array: the `b2nd` metalayer, the
    /// other metalayers, and every chunk with its items set by `fill`.
    pub fn init(&self, sc: &mut SuperChunk, meta: &Meta, metalayers: &[crate::frame::Metalayer], fill: Fill) -> Result<()> {
        let ts = i64::from(sc.typesize());
        if ts <= 0 {
            return Err(Error::InvalidParam);
        }
        let chunkbytes = self
            .chunk_items
            .checked_mul(ts)
            .filter(|&b| b <= i64::from(crate::chunk::header::MAX_BUFFERSIZE))
            .ok_or(Error::MaxBufsizeExceeded)?;
        sc.meta_add("b2nd", &meta.serialize()?)?;
        for m in metalayers {
            sc.meta_add(&m.name, &m.content)?;
        }
        let nchunks = if self.nitems() == 0 { 0 } else { self.nchunks() };
        match fill {
            Fill::Value(v) => {
                if v.len() != ts as usize {
                    return Err(Error::InvalidParam);
                }
                let mut chunk = vec![0u8; 64 + ts as usize];
                let n = crate::chunk::special::make(&sc.context_cparams(), Special::Value, chunkbytes as i32, Some(v), &mut chunk)?;
                for _ in 0..nchunks {
                    sc.append_chunk(&chunk[..n])?;
                }
            }
            f if nchunks > 0 => {
                let kind = match f {
                    Fill::Zeros => Special::Zero,
                    Fill::Nans => Special::Nan,
                    _ => Special::Uninit,
                };
                sc.fill_special(nchunks * self.chunk_items, kind, chunkbytes as i32)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Item offset, inside its chunk, of the item at chunk-local `coords`.
    fn offset_in_chunk(&self, local: &[i64]) -> i64 {
        let block: Vec<i64> = local.iter().zip(&self.blockshape).map(|(&l, &b)| l / b).collect();
        let inner: Vec<i64> = local.iter().zip(&self.blockshape).map(|(&l, &b)| l % b).collect();
        c_index(&block, &self.chunk_blocks()) * self.block_items + c_index(&inner, &self.blockshape)
    }
}

/// How the items of a new array start out.
pub enum Fill<'a> {
    Zeros,
    Uninit,
    Nans,
    /// Every item is this value (typesize bytes).
    Value(&'a [u8]),
}

/// An n-dimensional array.
pub struct Array {
    pub sc: SuperChunk,
    pub meta: Meta,
    pub geom: Geometry,
}

impl Array {
    /// The array stored in `sc` (which must have a `b2nd` metalayer).
    pub fn from_schunk(sc: SuperChunk) -> Result<Array> {
        let meta = Meta::deserialize(sc.meta_get("b2nd").map_err(|_| Error::MetalayerNotFound)?)?;
        let geom = Geometry::new(&meta)?;
        Ok(Array { sc, meta, geom })
    }

    pub fn typesize(&self) -> usize {
        self.sc.typesize().max(1) as usize
    }

    /// A new array of `meta`'s shapes in `storage`, its items set by `fill`.
    /// The block size of `cparams` is set to the block shape's.
    pub fn new(meta: Meta, mut cparams: CParams, storage: Storage, fill: Fill) -> Result<Array> {
        let geom = Geometry::new(&meta)?;
        cparams.blocksize = geom.block_bytes(cparams.typesize)?;
        let mut sc = SuperChunk::new(cparams, crate::chunk::DParams::default(), storage)?;
        geom.init(&mut sc, &meta, &[], fill)?;
        Ok(Array { sc, meta, geom })
    }

    /// A new array holding `buffer` (the items in C order).
    pub fn from_buffer(meta: Meta, cparams: CParams, storage: Storage, buffer: &[u8]) -> Result<Array> {
        let geom = Geometry::new(&meta)?;
        let ts = cparams.typesize.max(1) as usize;
        if (buffer.len() as u64) < (geom.nitems() as u64).saturating_mul(ts as u64) {
            return Err(Error::InvalidParam);
        }
        let mut a = Array::new(meta, cparams, storage, Fill::Uninit)?;
        let start = vec![0; a.geom.ndim()];
        let stop = a.geom.shape.clone();
        a.set_slice(&start, &stop, buffer)?;
        Ok(a)
    }

    /// The items of `start..stop` into `buffer`, in C order.
    pub fn get_slice(&self, start: &[i64], stop: &[i64], buffer: &mut [u8]) -> Result<()> {
        let shape: Vec<i64> = start.iter().zip(stop).map(|(a, b)| (b - a).max(0)).collect();
        self.geom.get_slice(&self.sc, start, stop, buffer, &shape)
    }

    /// Overwrite the items of `start..stop` with `buffer` (C order).
    pub fn set_slice(&mut self, start: &[i64], stop: &[i64], buffer: &[u8]) -> Result<()> {
        let shape: Vec<i64> = start.iter().zip(stop).map(|(a, b)| (b - a).max(0)).collect();
        self.geom.set_slice(&mut self.sc, start, stop, buffer, &shape)
    }

    /// All items, in C order.
    pub fn to_buffer(&self, buffer: &mut [u8]) -> Result<()> {
        let start = vec![0; self.geom.ndim()];
        self.get_slice(&start, &self.geom.shape.clone(), buffer)
    }
}

/// Copy the box `src_start..src_stop` of `src` (a C-order array of `src_shape`
/// items of `itemsize` bytes) to `dst` (of `dst_shape`) at `dst_start`.
#[allow(clippy::too_many_arguments)]
pub fn copy_box(
    itemsize: usize,
    src: &[u8],
    src_shape: &[i64],
    src_start: &[i64],
    src_stop: &[i64],
    dst: &mut [u8],
    dst_shape: &[i64],
    dst_start: &[i64],
) -> Result<()> {
    let nd = src_shape.len();
    if [src_start.len(), src_stop.len(), dst_shape.len(), dst_start.len()].iter().any(|&l| l != nd) || itemsize == 0 {
        return Err(Error::InvalidParam);
    }
    for i in 0..nd {
        let len = src_stop[i] - src_start[i];
        if src_start[i] < 0 || len < 0 || src_stop[i] > src_shape[i] || dst_start[i] < 0 || dst_start[i] + len > dst_shape[i] {
            return Err(Error::InvalidParam);
        }
    }
    let need = |shape: &[i64]| product(shape).and_then(|n| usize::try_from(n).ok()).and_then(|n| n.checked_mul(itemsize));
    if need(src_shape).is_none_or(|n| n > src.len()) || need(dst_shape).is_none_or(|n| n > dst.len()) {
        return Err(Error::InvalidParam);
    }
    if nd == 0 {
        dst[..itemsize].copy_from_slice(&src[..itemsize]);
        return Ok(());
    }
    let last = nd - 1;
    let run = (src_stop[last] - src_start[last]) as usize * itemsize;
    let mut outer_hi = src_stop.to_vec();
    outer_hi[last] = src_start[last] + 1;
    let mut d = vec![0i64; nd];
    for_each_index(src_start, &outer_hi, |idx| {
        for i in 0..nd {
            d[i] = idx[i] - src_start[i] + dst_start[i];
        }
        let so = c_index(idx, src_shape) as usize * itemsize;
        let dof = c_index(&d, dst_shape) as usize * itemsize;
        dst[dof..dof + run].copy_from_slice(&src[so..so + run]);
        Ok(())
    })
}

impl Geometry {
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

    /// Visit the items of an orthogonal selection (`selection[i]`: indices
    /// along dimension `i`) chunk by chunk: `f(chunk_number, offsets)` gets the
    /// (item offset in the chunk, item index in a C-order result of shape
    /// `buffer_shape`) pairs.
    pub fn for_each_selected(
        &self,
        selection: &[Vec<i64>],
        buffer_shape: &[i64],
        mut f: impl FnMut(usize, &[(usize, usize)]) -> Result<()>,
    ) -> Result<()> {
        let nd = self.ndim();
        if selection.len() != nd || buffer_shape.len() != nd || selection.iter().zip(buffer_shape).any(|(s, &b)| (s.len() as i64) > b) {
            return Err(Error::InvalidParam);
        }
        for (i, sel) in selection.iter().enumerate() {
            if sel.iter().any(|&x| x < 0 || x >= self.shape[i]) {
                return Err(Error::InvalidParam);
            }
        }
        // Per dimension: the selected positions grouped by chunk coordinate.
        let mut groups: Vec<Vec<(i64, Vec<usize>)>> = Vec::with_capacity(nd);
        for (i, sel) in selection.iter().enumerate() {
            let mut g: Vec<(i64, Vec<usize>)> = Vec::new();
            for (p, &x) in sel.iter().enumerate() {
                let c = x / self.chunkshape[i];
                match g.iter_mut().find(|(cc, _)| *cc == c) {
                    Some((_, v)) => v.push(p),
                    None => g.push((c, vec![p])),
                }
            }
            groups.push(g);
        }
        let counts: Vec<i64> = groups.iter().map(|g| g.len() as i64).collect();
        let zeros = vec![0i64; nd];
        let mut pairs = Vec::new();
        for_each_index(&zeros, &counts, |gi| {
            let chunk: Vec<i64> = (0..nd).map(|i| groups[i][gi[i] as usize].0).collect();
            let n = c_index(&chunk, &self.chunks) as usize;
            pairs.clear();
            let lens: Vec<i64> = (0..nd).map(|i| groups[i][gi[i] as usize].1.len() as i64).collect();
            let z = vec![0i64; nd];
            let mut local = vec![0i64; nd];
            let mut out = vec![0i64; nd];
            for_each_index(&z, &lens, |pi| {
                for i in 0..nd {
                    let p = groups[i][gi[i] as usize].1[pi[i] as usize];
                    out[i] = p as i64;
                    local[i] = selection[i][p] - chunk[i] * self.chunkshape[i];
                }
                pairs.push((self.offset_in_chunk(&local) as usize, c_index(&out, buffer_shape) as usize));
                Ok(())
            })?;
            f(n, &pairs)
        })
    }
}

impl Geometry {
    /// Rewrite the array in `sc` with the shapes of `new_meta` (same chunk and
    /// block shapes) and the items of `data` (C order, the new shape): every
    /// chunk is compressed again, chunks are added or removed at the end, and
    /// the `b2nd` metalayer is updated. Returns the new geometry.
    pub fn rewrite(&self, sc: &mut SuperChunk, new_meta: &Meta, data: &[u8]) -> Result<Geometry> {
        let g = Geometry::new(new_meta)?;
        let ts = sc.typesize().max(1) as usize;
        if (data.len() as u64) < (g.nitems() as u64).saturating_mul(ts as u64) {
            return Err(Error::InvalidParam);
        }
        let nchunks = if g.nitems() == 0 { 0 } else { g.nchunks() as usize };
        let zeros = vec![0i64; g.ndim()];
        let mut chunk = vec![0u8; g.chunk_items as usize * ts];
        let mut grid = Vec::with_capacity(nchunks);
        if nchunks > 0 {
            for_each_index(&zeros, &g.chunks, |c| {
                grid.push(c.to_vec());
                Ok(())
            })?;
        }
        for c in &grid {
            let (n, lo, hi) = g.chunk_box(c);
            chunk.fill(0);
            let block_bytes = g.block_items as usize * ts;
            g.for_each_run(&lo, &lo, &hi, &zeros, &g.shape, ts, |blk, io, bo, len| {
                let co = blk * block_bytes + io;
                chunk[co..co + len].copy_from_slice(data.get(bo..bo + len).ok_or(Error::ReadBuffer)?);
                Ok(())
            })?;
            let bytes = sc.compress(&chunk)?;
            if n < sc.nchunks() {
                sc.update_chunk(n, &bytes)?;
            } else {
                sc.append_chunk(&bytes)?;
            }
        }
        while sc.nchunks() > nchunks {
            sc.delete_chunk(sc.nchunks() - 1)?;
        }
        sc.meta_update("b2nd", &new_meta.serialize()?)?;
        Ok(g)
    }

    /// All items of the array in `sc`, in C order.
    pub fn read_all(&self, sc: &SuperChunk) -> Result<Vec<u8>> {
        let ts = sc.typesize().max(1) as usize;
        let n = usize::try_from(self.nitems()).map_err(|_| Error::InvalidParam)?;
        let mut all = vec![0u8; n.checked_mul(ts).ok_or(Error::InvalidParam)?];
        let start = vec![0i64; self.ndim()];
        self.get_slice(sc, &start, &self.shape, &mut all, &self.shape)?;
        Ok(all)
    }
}

/// The C-order buffer of `shape2` made from `old` (of `shape1`): the items of
/// `old` go to `dst_start` onwards, the rest are zeros.
pub fn reshaped(itemsize: usize, old: &[u8], shape1: &[i64], shape2: &[i64], src_start: &[i64], src_stop: &[i64], dst_start: &[i64]) -> Result<Vec<u8>> {
    let n = product(shape2).and_then(|n| usize::try_from(n).ok()).and_then(|n| n.checked_mul(itemsize)).ok_or(Error::InvalidParam)?;
    let mut out = vec![0u8; n];
    if src_start.iter().zip(src_stop).all(|(a, b)| a < b) {
        copy_box(itemsize, old, shape1, src_start, src_stop, &mut out, shape2, dst_start)?;
    }
    Ok(out)
}

impl Geometry {
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
        let (lo, hi) = self.chunk_range(start, stop);
        let mut out = Vec::new();
        for_each_index(&lo, &hi, |c| {
            out.push(c_index(c, &self.chunks));
            Ok(())
        })?;
        out.sort_unstable();
        Ok(out)
    }
}

impl Geometry {
    /// Append `data` (C order; the array's shape but for `n` along the first
    /// dimension) after the last items of the first dimension, chunk by chunk:
    /// existing chunks of the last row are completed, new rows of chunks are
    /// appended (in C order the new chunks all come after the old ones). The
    /// array is never read whole. Returns the new geometry.
    pub fn append_first_axis(&self, sc: &mut SuperChunk, meta: &Meta, data: &[u8], n: i64) -> Result<(Meta, Geometry)> {
        let nd = self.ndim();
        if nd == 0 || n < 0 {
            return Err(Error::InvalidParam);
        }
        let ts = sc.typesize().max(1) as usize;
        let mut new_meta = meta.clone();
        new_meta.shape[0] = self.shape[0].checked_add(n).ok_or(Error::InvalidParam)?;
        let g = Geometry::new(&new_meta)?;
        let mut dshape = self.shape.clone();
        dshape[0] = n;
        let need = product(&dshape).and_then(|x| usize::try_from(x).ok()).and_then(|x| x.checked_mul(ts)).ok_or(Error::InvalidParam)?;
        if data.len() < need {
            return Err(Error::InvalidParam);
        }
        if n > 0 && g.nitems() > 0 {
            let mut start = vec![0i64; nd];
            start[0] = self.shape[0];
            let mut clo = vec![0i64; nd];
            clo[0] = self.shape[0] / self.chunkshape[0];
            let block_bytes = g.block_items as usize * ts;
            let mut chunk = vec![0u8; g.chunk_items as usize * ts];
            let mut boxes = Vec::new();
            for_each_index(&clo, &g.chunks, |c| {
                boxes.push(g.chunk_box(c));
                Ok(())
            })?;
            for (k, lo, hi) in boxes {
                chunk.fill(0);
                if k < sc.nchunks() {
                    sc.decompress_chunk(k, &mut chunk)?;
                }
                let rlo: Vec<i64> = lo.iter().zip(&start).map(|(&a, &b)| a.max(b)).collect();
                g.for_each_run(&lo, &rlo, &hi, &start, &dshape, ts, |blk, io, bo, len| {
                    let co = blk * block_bytes + io;
                    chunk[co..co + len].copy_from_slice(data.get(bo..bo + len).ok_or(Error::ReadBuffer)?);
                    Ok(())
                })?;
                let bytes = sc.compress(&chunk)?;
                if k < sc.nchunks() {
                    sc.update_chunk(k, &bytes)?;
                } else {
                    sc.append_chunk(&bytes)?;
                }
            }
        }
        sc.meta_update("b2nd", &new_meta.serialize()?)?;
        Ok((new_meta, g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Meta {
        Meta { shape: shape.to_vec(), chunkshape: chunks.to_vec(), blockshape: blocks.to_vec(), dtype: "<u2".into(), dtype_format: 0 }
    }

    #[test]
    fn geometry_pads_chunks_to_whole_blocks() {
        let g = Geometry::new(&meta(&[10, 7], &[4, 5], &[3, 2])).unwrap();
        assert_eq!(g.extchunkshape, vec![6, 6]);
        assert_eq!(g.chunks, vec![3, 2]);
        assert_eq!((g.chunk_items, g.block_items), (36, 6));
        // item (4, 3) of chunk (0, 0): block (1, 1) of a 2x3 block grid, inner (1, 1)
        assert_eq!(g.offset_in_chunk(&[4, 3]), 4 * 6 + 2 + 1);
        assert!(Geometry::new(&meta(&[10], &[4], &[5])).is_err());
        assert!(Geometry::new(&meta(&[10], &[0], &[1])).is_err());
        assert_eq!(Geometry::new(&meta(&[0, 3], &[2, 2], &[1, 1])).unwrap().nitems(), 0);
    }

    #[test]
    fn copy_box_moves_a_window_and_checks_bounds() {
        let src: Vec<u8> = (0..4 * 5).map(|x| x as u8).collect();
        let mut dst = vec![0u8; 3 * 3];
        copy_box(1, &src, &[4, 5], &[1, 2], &[3, 5], &mut dst, &[3, 3], &[1, 0]).unwrap();
        assert_eq!(dst, vec![0, 0, 0, 7, 8, 9, 12, 13, 14]);
        assert!(copy_box(1, &src, &[4, 5], &[1, 2], &[3, 6], &mut dst, &[3, 3], &[0, 0]).is_err());
        assert!(copy_box(1, &src, &[4, 5], &[0, 0], &[2, 2], &mut dst, &[3, 3], &[2, 2]).is_err());
        assert!(copy_box(1, &src[..10], &[4, 5], &[0, 0], &[1, 1], &mut dst, &[3, 3], &[0, 0]).is_err());
    }

    #[test]
    fn orthogonal_selections_visit_every_item_once() {
        let g = Geometry::new(&meta(&[9, 8], &[4, 3], &[2, 3])).unwrap();
        let sel = vec![vec![8, 0, 5], vec![7, 1]];
        let mut seen = Vec::new();
        g.for_each_selected(&sel, &[3, 2], |_, pairs| {
            seen.extend(pairs.iter().map(|p| p.1));
            Ok(())
        })
        .unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..6).collect::<Vec<_>>());
        assert!(g.for_each_selected(&[vec![9], vec![0]], &[1, 1], |_, _| Ok(())).is_err());
        assert!(g.for_each_selected(&sel, &[2, 2], |_, _| Ok(())).is_err());
    }
}
