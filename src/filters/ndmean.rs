//! ndmean (plugin filter 33): replaces every cell of an n-dimensional block of
//! `float32` or `float64` items by its mean, and writes the cells one after
//! another (as ndcell lays them out), so that the codec sees runs of equal
//! values. Lossy: decoding puts each cell's mean back at its items' places.
//! `meta` (a signed byte) is the cell side, cut down to the block's length
//! along shorter dimensions; the block's shape comes from the `b2nd`
//! metalayer of the super-chunk. The means are summed and divided in the
//! items' own precision, in the order c-blosc2 sums them, so that the bytes
//! are c-blosc2's.
//! Items are floats in the machine's byte order, as c-blosc2 reads them
//! (see docs/PORTING.md).

use super::cells::{block_geometry, Grid, Step, MAX_DIM};
use crate::error::{Error, Result};

/// The cell grid for `meta` over the block.
fn grid(meta: u8, typesize: usize, b2nd: Option<&[u8]>, len: usize) -> Result<Grid> {
    let block = block_geometry("ndmean", b2nd, typesize, len)?;
    let side = meta as i8;
    if side <= 0 {
        crate::trace!("ndmean: invalid cell side (meta) {side}");
        return Err(Error::FilterPipeline);
    }
    let mut cell = [0usize; MAX_DIM];
    for (c, &b) in cell.iter_mut().zip(&block) {
        *c = (side as usize).min(b as usize);
    }
    Ok(Grid::new(&block, &cell[..block.len()]))
}

/// Items of `N` bytes that ndmean averages.
trait Item: Copy + std::ops::AddAssign + std::ops::Div<Output = Self> {
    const ZERO: Self;
    fn read(b: &[u8]) -> Self;
    fn write(self, b: &mut [u8]);
    fn count(n: usize) -> Self;
}

impl Item for f32 {
    const ZERO: f32 = 0.0;
    fn read(b: &[u8]) -> f32 {
        f32::from_ne_bytes([b[0], b[1], b[2], b[3]])
    }
    fn write(self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_ne_bytes());
    }
    fn count(n: usize) -> f32 {
        n as f32
    }
}

impl Item for f64 {
    const ZERO: f64 = 0.0;
    fn read(b: &[u8]) -> f64 {
        f64::from_ne_bytes(b[..8].try_into().unwrap_or([0; 8]))
    }
    fn write(self, b: &mut [u8]) {
        b.copy_from_slice(&self.to_ne_bytes());
    }
    fn count(n: usize) -> f64 {
        n as f64
    }
}

fn means<T: Item>(g: &Grid, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let ts = std::mem::size_of::<T>();
    let mut sum = T::ZERO;
    let mut out = 0;
    g.walk(|step| match step {
        Step::Row(r) => {
            let row = src.get(r.start * ts..(r.start + r.len) * ts).ok_or(Error::FilterPipeline)?;
            for item in row.chunks_exact(ts) {
                sum += T::read(item);
            }
            Ok(())
        }
        Step::End(n) => {
            let mean = sum / T::count(n);
            sum = T::ZERO;
            let cell = dst.get_mut(out..out + n * ts).ok_or(Error::FilterPipeline)?;
            for item in cell.chunks_exact_mut(ts) {
                mean.write(item);
            }
            out += n * ts;
            Ok(())
        }
    })
}

/// Apply the filter to one block (`typesize`: the compression parameters',
/// 4 or 8).
pub fn encode(meta: u8, typesize: usize, b2nd: Option<&[u8]>, src: &[u8], dst: &mut [u8]) -> Result<()> {
    if typesize != 4 && typesize != 8 {
        crate::trace!("ndmean: items of {typesize} bytes (only float32 and float64 are averaged)");
        return Err(Error::FilterPipeline);
    }
    let g = grid(meta, typesize, b2nd, src.len())?;
    if typesize == 4 {
        means::<f32>(&g, src, dst)
    } else {
        means::<f64>(&g, src, dst)
    }
}

/// Undo the filter on one block: each cell's items go back to their places
/// (`typesize`: the super-chunk's, read as c-blosc2 reads it, a signed byte).
pub fn decode(meta: u8, typesize: i32, b2nd: Option<&[u8]>, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let ts = typesize as i8;
    if ts <= 0 {
        crate::trace!("ndmean: invalid typesize {typesize}");
        return Err(Error::FilterPipeline);
    }
    grid(meta, ts as usize, b2nd, src.len())?.scatter("ndmean", ts as usize, src, dst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndmeta::Meta;

    fn b2nd(block: &[i32]) -> Vec<u8> {
        Meta {
            shape: block.iter().map(|&b| i64::from(b)).collect(),
            chunkshape: block.to_vec(),
            blockshape: block.to_vec(),
            dtype: "<f4".into(),
            dtype_format: 0,
        }
        .serialize()
        .unwrap()
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn each_cell_becomes_its_mean() {
        // 4x4 block, 2x2 cells
        let vals: Vec<f32> = (0..16).map(|i| i as f32).collect();
        let meta = b2nd(&[4, 4]);
        let src = f32s(&vals);
        let mut enc = vec![0u8; 64];
        encode(2, 4, Some(&meta), &src, &mut enc).unwrap();
        // cell (0,0) = {0,1,4,5}: mean 2.5, written four times first
        assert_eq!(&enc[..16], &f32s(&[2.5; 4])[..]);
        assert_eq!(&enc[16..32], &f32s(&[4.5; 4])[..]);
        let mut dec = vec![0u8; 64];
        decode(2, 4, Some(&meta), &enc, &mut dec).unwrap();
        let got: Vec<f32> = dec.chunks(4).map(f32::read).collect();
        assert_eq!(&got[..8], &[2.5, 2.5, 4.5, 4.5, 2.5, 2.5, 4.5, 4.5]);
    }

    #[test]
    fn doubles_partial_cells_and_cut_sides() {
        // 3x5 block of f64, side 2: the last row and column are cells of their own size
        let vals: Vec<f64> = (0..15).map(|i| (i * i) as f64 / 7.0).collect();
        let src: Vec<u8> = vals.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let meta = b2nd(&[3, 5]);
        let mut enc = vec![0u8; 120];
        encode(2, 8, Some(&meta), &src, &mut enc).unwrap();
        let mut dec = vec![0u8; 120];
        decode(2, 8, Some(&meta), &enc, &mut dec).unwrap();
        let got: Vec<f64> = dec.chunks(8).map(f64::read).collect();
        assert_eq!(got[14], vals[14]);
        let m = (vals[0] + vals[1] + vals[5] + vals[6]) / 4.0;
        assert_eq!([got[0], got[1], got[5], got[6]], [m; 4]);
        // a side of 100 is cut to the block: one cell, the whole block's mean
        encode(100, 8, Some(&meta), &src, &mut enc).unwrap();
        let all = vals.iter().fold(0.0, |a, b| a + b) / 15.0;
        assert!(enc.chunks(8).all(|c| f64::read(c) == all));
    }

    #[test]
    fn refuses_what_c_blosc2_refuses() {
        let meta = b2nd(&[4, 4]);
        let src = vec![0u8; 64];
        let mut dst = vec![0u8; 64];
        assert_eq!(encode(2, 2, Some(&b2nd(&[4, 8])), &src, &mut dst), Err(Error::FilterPipeline));
        assert_eq!(encode(2, 4, None, &src, &mut dst), Err(Error::FilterPipeline));
        assert_eq!(encode(0, 4, Some(&meta), &src, &mut dst), Err(Error::FilterPipeline));
        assert_eq!(encode(200, 4, Some(&meta), &src, &mut dst), Err(Error::FilterPipeline));
        assert_eq!(decode(2, 256, Some(&meta), &src, &mut dst), Err(Error::FilterPipeline));
        // decoding does not look at the item type: 2-byte items are put back too
        assert!(decode(2, 2, Some(&b2nd(&[4, 8])), &src, &mut dst).is_ok());
        // a first dimension shorter than the cell (c-blosc2 writes, then cannot read)
        let m = b2nd(&[2, 8]);
        assert!(encode(4, 4, Some(&m), &src, &mut dst).is_ok());
        let enc = dst.clone();
        assert_eq!(decode(4, 4, Some(&m), &enc, &mut dst), Err(Error::FilterPipeline));
    }
}
