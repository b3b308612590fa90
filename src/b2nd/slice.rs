//! Slices of a stored array to and from C-order buffers, chunk by chunk:
//! a read decodes only the blocks it touches (or the whole chunk when it needs
//! most of it), a write rebuilds only the chunks it touches.

use super::boxes::{buffer_len, for_each_index};
use super::Geometry;
use crate::error::{Error, Result};
use crate::schunk::SuperChunk;

/// The part of chunk box `lo..hi` inside `start..stop`.
fn clip(lo: &[i64], hi: &[i64], start: &[i64], stop: &[i64]) -> (Vec<i64>, Vec<i64>) {
    (lo.iter().zip(start).map(|(&a, &b)| a.max(b)).collect(), hi.iter().zip(stop).map(|(&a, &b)| a.min(b)).collect())
}

impl Geometry {
    /// The items of `start..stop` of the array in `sc` into `buffer`, a C-order
    /// array of shape `buffer_shape` (at least the slice's shape; the slice goes
    /// at its origin).
    pub fn get_slice(&self, sc: &SuperChunk, start: &[i64], stop: &[i64], buffer: &mut [u8], buffer_shape: &[i64]) -> Result<()> {
        let shape = self.check_slice(start, stop, buffer_shape)?;
        let ts = sc.typesize().max(1) as usize;
        if buffer.len() < buffer_len(buffer_shape, ts)? {
            return Err(Error::WriteBuffer);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (clo, chi) = self.chunk_range(start, stop);
        let block_bytes = self.block_items as usize * ts;
        let mut chunk = Vec::new();
        let mut blockbuf = vec![0u8; block_bytes];
        for_each_index(&clo, &chi, |c| {
            let (n, lo, hi) = self.chunk_box(c);
            let (rlo, rhi) = clip(&lo, &hi, start, stop);
            // A chunk mostly needed is decoded whole; else only the blocks needed.
            let needed: i64 = rlo.iter().zip(&rhi).map(|(a, b)| b - a).product();
            if needed * 2 >= self.chunk_items {
                chunk.resize(self.chunk_bytes(ts)?, 0);
                sc.decompress_chunk(n, &mut chunk)?;
                return self.gather(&chunk, &lo, &rlo, &rhi, buffer, start, buffer_shape, ts);
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
        if buffer.len() < buffer_len(buffer_shape, ts)? {
            return Err(Error::ReadBuffer);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (clo, chi) = self.chunk_range(start, stop);
        let mut chunk = vec![0u8; self.chunk_bytes(ts)?];
        let mut boxes = Vec::new();
        for_each_index(&clo, &chi, |c| {
            boxes.push(self.chunk_box(c));
            Ok(())
        })?;
        for (n, lo, hi) in boxes {
            let (rlo, rhi) = clip(&lo, &hi, start, stop);
            let whole = rlo == lo && rhi == hi && lo.iter().zip(&hi).zip(&self.extchunkshape).all(|((&l, &h), &e)| h - l == e);
            // Items a chunk leaves undefined (uninitialized chunks, padding) are zeros.
            chunk.fill(0);
            if !whole {
                sc.decompress_chunk(n, &mut chunk)?;
            }
            self.scatter(&mut chunk, &lo, &rlo, &rhi, buffer, start, buffer_shape, ts)?;
            let c = sc.compress(&chunk)?;
            sc.update_chunk(n, &c)?;
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
