//! Copies, slices into new arrays, concatenation: chunk by chunk. A chunk of
//! the result that is exactly a chunk of a source (same chunk and block
//! shapes, aligned, same compression) is copied compressed, as it is; the
//! others are built from the boxes of the sources they cover.

use super::boxes::{buffer_len, c_index, for_each_index};
use super::{Array, Context, Fill, Geometry};
use crate::chunk::CParams;
use crate::error::{Error, Result};
use crate::schunk::{SChunk, Storage};

/// A box of a source array placed in the result: the source's items
/// `src_start..src_start + shape` go to `dst_start..` of the result.
struct Part<'a> {
    array: &'a Array,
    src_start: Vec<i64>,
    dst_start: Vec<i64>,
    shape: Vec<i64>,
    /// Compressed chunks may be copied as they are.
    raw: bool,
}

/// Whether chunks compressed with `a` may stand for chunks compressed with `b`
/// (the codec's meta and the split mode count too: they shape the streams).
fn same_compression(a: &CParams, b: &CParams) -> bool {
    a.encodes_like(b) && a.compcode_meta == b.compcode_meta && a.splitmode == b.splitmode
}

impl Part<'_> {
    /// The source chunk that is exactly the result's chunk box `lo..hi`, if any.
    fn raw_chunk(&self, dst: &Geometry, lo: &[i64], hi: &[i64]) -> Option<usize> {
        let a = self.array;
        if !self.raw
            || a.view.is_some()
            || a.geom.chunkshape != dst.chunkshape
            || a.geom.blockshape != dst.blockshape
        {
            return None;
        }
        let g = &a.geom;
        let mut coords = Vec::with_capacity(lo.len());
        for i in 0..lo.len() {
            let s = lo[i] - self.dst_start[i] + self.src_start[i];
            if lo[i] < self.dst_start[i]
                || hi[i] > self.dst_start[i] + self.shape[i]
                || s % g.chunkshape[i] != 0
            {
                return None;
            }
            // The source chunk's items must be exactly the box (no more, no less).
            let send = (s + g.chunkshape[i]).min(g.shape[i]);
            if send - s != hi[i] - lo[i] {
                return None;
            }
            coords.push(s / g.chunkshape[i]);
        }
        Some(c_index(&coords, &g.chunks) as usize)
    }
}

/// Write `parts` into the array `dst` (`geom` its stored geometry), chunk by
/// chunk; chunks no part touches stay. Items of a chunk no part covers are
/// kept from the chunk (decoded) unless `fresh` (the chunk holds zeros).
fn write_parts(
    dst: &SChunk,
    geom: &Geometry,
    parts: &[Part],
    fresh: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<()> {
    let nd = geom.ndim();
    if geom.nchunks() == 0 {
        return Ok(());
    }
    let ts = dst.read_cached().typesize().max(1) as usize;
    let chunkbytes = geom.chunk_bytes(ts)?;
    let mut chunk = vec![0u8; chunkbytes];
    let mut tmp = Vec::new();
    let zeros = vec![0i64; nd];
    let total = geom.nchunks() as usize;
    let mut done = 0usize;
    for_each_index(&zeros, &geom.chunks, |c| {
        done += 1;
        progress(done - 1, total);
        let (n, lo, hi) = geom.chunk_box(c);
        let touching: Vec<&Part> = parts
            .iter()
            .filter(|p| (0..nd).all(|i| lo[i] < p.dst_start[i] + p.shape[i] && p.dst_start[i] < hi[i]))
            .collect();
        if touching.is_empty() {
            return Ok(());
        }
        if let [p] = touching.as_slice() {
            if let Some(k) = p.raw_chunk(geom, &lo, &hi) {
                let raw = p.array.sc.read()?.chunk(k)?.into_owned();
                dst.write().update_chunk(n, &raw)?;
                return Ok(());
            }
        }
        chunk.fill(0);
        let covered: i64 = touching
            .iter()
            .map(|p| {
                (0..nd)
                    .map(|i| (hi[i].min(p.dst_start[i] + p.shape[i]) - lo[i].max(p.dst_start[i])).max(0))
                    .product::<i64>()
            })
            .sum();
        let whole: i64 = lo.iter().zip(&hi).map(|(a, b)| b - a).product();
        if !fresh && covered < whole {
            dst.read()?.decompress_chunk(n, &mut chunk)?;
        }
        for p in touching {
            let ilo: Vec<i64> = (0..nd).map(|i| lo[i].max(p.dst_start[i])).collect();
            let ihi: Vec<i64> = (0..nd).map(|i| hi[i].min(p.dst_start[i] + p.shape[i])).collect();
            let shape: Vec<i64> = ilo.iter().zip(&ihi).map(|(a, b)| b - a).collect();
            let s0: Vec<i64> = (0..nd).map(|i| ilo[i] - p.dst_start[i] + p.src_start[i]).collect();
            let s1: Vec<i64> = s0.iter().zip(&shape).map(|(a, s)| a + s).collect();
            tmp.resize(buffer_len(&shape, ts)?, 0);
            p.array.get_slice_into(&s0, &s1, &mut tmp, &shape)?;
            geom.scatter(&mut chunk, &lo, &ilo, &ihi, &tmp, &ilo, &shape, ts)?;
        }
        let mut w = dst.write();
        let bytes = w.compress(&chunk)?;
        w.update_chunk(n, &bytes)?;
        Ok(())
    })?;
    progress(total, total);
    Ok(())
}

impl Array {
    /// A copy of this array made as `ctx` says (its shape becomes this
    /// array's), with this array's other metalayers and vlmetalayers.
    pub fn copy(&self, ctx: &Context) -> Result<Array> {
        self.copy_observed(ctx, &mut |_, _| {})
    }

    /// [`Array::copy`], telling `progress` how many of the copy's chunks are
    /// done as it goes.
    pub fn copy_observed(&self, ctx: &Context, progress: &mut dyn FnMut(usize, usize)) -> Result<Array> {
        let mut ctx = ctx.clone();
        ctx.meta.shape = self.shape().to_vec();
        if ctx.meta.ndim() != self.ndim()
            || ctx.meta.chunkshape.len() != self.ndim()
            || ctx.meta.blockshape.len() != self.ndim()
        {
            return Err(Error::InvalidParam);
        }
        let r = self.sc.read()?;
        if self.view.is_none()
            && ctx.meta.chunkshape == self.base.chunkshape
            && ctx.meta.blockshape == self.base.blockshape
        {
            // The stored super-chunk again: compressed chunks as they are when
            // the compression is the same, else recompressed one by one.
            let mut cp = ctx.cparams.clone();
            cp.blocksize = self.geom.block_bytes(cp.typesize)?;
            let sc = r.copy_observed(ctx.storage.clone(), Some(cp), None, progress)?;
            return Array::from_schunk(SChunk::new(sc));
        }
        ctx.metalayers = r.metalayers().iter().filter(|m| m.name != "b2nd").cloned().collect();
        let vlmetas: Vec<(String, Vec<u8>)> = r
            .vlmetalayers()
            .iter()
            .map(|m| Ok((m.name.clone(), r.vlmeta_get(&m.name)?)))
            .collect::<Result<_>>()?;
        let raw = same_compression(r.cparams(), &ctx.cparams);
        drop(r);
        let mut out = Array::new(&ctx, Fill::Zeros)?;
        let part = Part {
            array: self,
            src_start: vec![0; self.ndim()],
            dst_start: vec![0; self.ndim()],
            shape: self.shape().to_vec(),
            raw,
        };
        write_parts(&out.sc, &out.geom, &[part], true, progress)?;
        for (name, content) in vlmetas {
            out.vlmeta_add(&name, &content)?;
        }
        Ok(out)
    }

    /// A new array made as `ctx` says (with the slice's shape) holding the
    /// items of `start..stop`; the part of the slice beyond this array's shape
    /// (c-blosc2 accepts such slices) holds zeros.
    pub fn slice(&self, ctx: &Context, start: &[i64], stop: &[i64]) -> Result<Array> {
        let nd = self.ndim();
        let mut ctx = ctx.clone();
        if start.len() != nd
            || stop.len() != nd
            || ctx.meta.chunkshape.len() != nd
            || ctx.meta.blockshape.len() != nd
        {
            return Err(Error::InvalidParam);
        }
        if start.iter().zip(stop).any(|(&a, &b)| a < 0 || b < a) {
            return Err(Error::InvalidParam);
        }
        ctx.meta.shape = start.iter().zip(stop).map(|(a, b)| b - a).collect();
        let inside: Vec<i64> = (0..nd).map(|i| (stop[i].min(self.shape()[i]) - start[i]).max(0)).collect();
        let raw = same_compression(self.sc.read()?.cparams(), &ctx.cparams);
        let out = Array::new(&ctx, Fill::Zeros)?;
        let part =
            Part { array: self, src_start: start.to_vec(), dst_start: vec![0; nd], shape: inside, raw };
        write_parts(&out.sc, &out.geom, &[part], true, &mut |_, _| {})?;
        Ok(out)
    }

    /// A new array made as `ctx` says: this array followed by `other` along `axis`.
    pub fn concatenate(&self, ctx: &Context, other: &Array, axis: usize) -> Result<Array> {
        self.check_concat(other, axis)?;
        let mut out = self.copy(ctx)?;
        out.extend(other, axis)?;
        Ok(out)
    }

    /// Append `other`'s items after this array's along `axis` (this array grows).
    pub fn extend(&mut self, other: &Array, axis: usize) -> Result<()> {
        self.refresh()?;
        self.check_concat(other, axis)?;
        if other.sc.same(&self.sc) {
            // Reading from what is being changed: take a compressed snapshot first.
            let snap = other.copy(&other.save_context(Storage::default()))?;
            return self.extend(&snap, axis);
        }
        let mut new_shape = self.geom.shape.clone();
        let at = new_shape[axis];
        new_shape[axis] += other.shape()[axis];
        self.resize(&new_shape, None)?;
        let mut dst_start = vec![0; self.ndim()];
        dst_start[axis] = at;
        let part = Part {
            array: other,
            src_start: vec![0; other.ndim()],
            dst_start,
            shape: other.shape().to_vec(),
            raw: true,
        };
        write_parts(&self.sc, &self.geom, &[part], false, &mut |_, _| {})
    }

    fn check_concat(&self, other: &Array, axis: usize) -> Result<()> {
        let nd = self.ndim();
        if nd == 0
            || other.ndim() != nd
            || axis >= nd
            || (0..nd).any(|i| i != axis && self.shape()[i] != other.shape()[i])
            || self.typesize() != other.typesize()
        {
            return Err(Error::InvalidParam);
        }
        Ok(())
    }
}
