//! The cell grid of an n-dimensional block, shared by the ndcell and ndmean
//! filters: a block of `blockshape` items (C order) is cut into cells of
//! `cellshape` items (the last cell along a dimension is cut short), and the
//! cells are visited in C order over the grid of cells. Within a cell the
//! items are visited as rows along the last dimension, in C order.
//!
//! The block's geometry comes from the `b2nd` metalayer of the super-chunk;
//! [`Grid::from_b2nd`] checks it against the block it is applied to.

use crate::error::{Error, Result};
use crate::ndmeta::Meta;

/// The most dimensions these filters handle (c-blosc2's plugins have the
/// same limit, below the 16 of b2nd arrays).
pub const MAX_DIM: usize = 8;

/// Where a cell's rows start: c-blosc2 scales every grid coordinate by the
/// cell length along the first dimension (`cellshape[0]`). With cells of
/// equal sides (ndcell, and ndmean on blocks at least a cell long) this is
/// the cell's real first item; with ndmean's cell cut down to a shorter first
/// block dimension it is not, and the rows read and written are the ones
/// c-blosc2 reads and writes (see docs/PLUGINS.md).
#[derive(Debug, Clone)]
pub struct Grid {
    ndim: usize,
    /// Items per block along each dimension.
    block: [usize; MAX_DIM],
    /// Items per cell along each dimension.
    cell: [usize; MAX_DIM],
    /// Cells along each dimension.
    cells: [usize; MAX_DIM],
    /// Items between consecutive positions along each dimension.
    stride: [usize; MAX_DIM],
}

/// One row of a cell: `len` items from item `start` of the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub start: usize,
    pub len: usize,
}

/// What [`Grid::walk`] visits: a row of the current cell, or the end of a
/// cell and its number of items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Row(Row),
    End(usize),
}

/// The block geometry a `b2nd` metalayer gives, checked against a block of
/// `len` bytes of `typesize`-byte items: 1 to [`MAX_DIM`] dimensions, every
/// block length positive, and exactly `len` bytes in a block.
pub fn block_geometry(filter: &str, b2nd: Option<&[u8]>, typesize: usize, len: usize) -> Result<Vec<i32>> {
    let Some(bytes) = b2nd else {
        crate::trace!("{filter}: the super-chunk has no b2nd metalayer");
        return Err(Error::FilterPipeline);
    };
    let (meta, _, _) = Meta::deserialize_parts(bytes).map_err(|_| {
        crate::trace!("{filter}: cannot read the b2nd metalayer");
        Error::FilterPipeline
    })?;
    let nd = meta.blockshape.len();
    if nd == 0 || nd > MAX_DIM {
        crate::trace!("{filter}: {nd} dimensions (1 to {MAX_DIM} are handled)");
        return Err(Error::FilterPipeline);
    }
    if typesize == 0 {
        crate::trace!("{filter}: invalid typesize 0");
        return Err(Error::FilterPipeline);
    }
    let mut bytes = typesize as u64;
    for (i, &b) in meta.blockshape.iter().enumerate() {
        if b <= 0 {
            crate::trace!("{filter}: invalid block length {b} along dimension {i}");
            return Err(Error::FilterPipeline);
        }
        bytes *= b as u64;
        if bytes > len as u64 {
            crate::trace!("{filter}: the block shape is larger than a block of {len} bytes");
            return Err(Error::FilterPipeline);
        }
    }
    if bytes != len as u64 {
        crate::trace!("{filter}: a block of {len} bytes is not the {bytes} bytes of the block shape");
        return Err(Error::FilterPipeline);
    }
    Ok(meta.blockshape)
}

impl Grid {
    /// The grid of `cell`-shaped cells over a `block`-shaped block (both of
    /// the same, checked, number of dimensions; every length positive).
    pub fn new(block: &[i32], cell: &[usize]) -> Grid {
        let ndim = block.len();
        let mut g =
            Grid { ndim, block: [1; MAX_DIM], cell: [1; MAX_DIM], cells: [1; MAX_DIM], stride: [1; MAX_DIM] };
        for i in 0..ndim {
            g.block[i] = block[i] as usize;
            g.cell[i] = cell[i].max(1);
            g.cells[i] = g.block[i].div_ceil(g.cell[i]);
        }
        for i in (0..ndim.saturating_sub(1)).rev() {
            g.stride[i] = g.stride[i + 1] * g.block[i + 1];
        }
        g
    }

    /// Items in the block.
    pub fn items(&self) -> usize {
        self.block[..self.ndim].iter().product()
    }

    /// Visit every cell in order: each of its rows, then its end. Stops at
    /// the first error `visit` returns.
    pub fn walk(&self, mut visit: impl FnMut(Step) -> Result<()>) -> Result<()> {
        let nd = self.ndim;
        let last = nd - 1;
        // The cell's coordinates in the grid, in C order.
        let mut at = [0usize; MAX_DIM];
        let ncells: usize = self.cells[..nd].iter().product();
        for _ in 0..ncells {
            let origin: usize = (0..nd).map(|i| at[i] * self.cell[0] * self.stride[i]).sum();
            // The cell's lengths (cut short at the block's end).
            let mut len = [0usize; MAX_DIM];
            for i in 0..nd {
                let rem = self.block[i] % self.cell[i];
                len[i] = if rem != 0 && at[i] == self.cells[i] - 1 { rem } else { self.cell[i] };
            }
            // The rows: every position of the cell but along the last dimension.
            let mut pos = [0usize; MAX_DIM];
            let nrows: usize = len[..last].iter().product();
            for _ in 0..nrows {
                let start = origin + (0..last).map(|i| pos[i] * self.stride[i]).sum::<usize>();
                visit(Step::Row(Row { start, len: len[last] }))?;
                for i in (0..last).rev() {
                    pos[i] += 1;
                    if pos[i] < len[i] {
                        break;
                    }
                    pos[i] = 0;
                }
            }
            visit(Step::End(nrows * len[last]))?;
            for i in (0..nd).rev() {
                at[i] += 1;
                if at[i] < self.cells[i] {
                    break;
                }
                at[i] = 0;
            }
        }
        Ok(())
    }

    /// Gather the cells of `src` one after another into `dst` (`typesize`-byte items).
    pub fn gather(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
        let mut out = 0;
        self.walk(|step| {
            let Step::Row(r) = step else { return Ok(()) };
            let (a, n) = (r.start * typesize, r.len * typesize);
            let (Some(s), Some(d)) = (src.get(a..a + n), dst.get_mut(out..out + n)) else {
                return Err(Error::FilterPipeline);
            };
            d.copy_from_slice(s);
            out += n;
            Ok(())
        })
    }

    /// Undo [`Grid::gather`]: scatter the consecutive cells of `src` to their
    /// places in `dst`. The last row written must end the block (c-blosc2's
    /// check that the geometry matches the data).
    pub fn scatter(&self, filter: &str, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
        let mut inp = 0;
        let mut end_of_last = 0;
        self.walk(|step| {
            let Step::Row(r) = step else { return Ok(()) };
            let (a, n) = (r.start * typesize, r.len * typesize);
            let (Some(s), Some(d)) = (src.get(inp..inp + n), dst.get_mut(a..a + n)) else {
                crate::trace!("{filter}: a cell lies outside the block");
                return Err(Error::FilterPipeline);
            };
            d.copy_from_slice(s);
            inp += n;
            end_of_last = r.start + r.len;
            Ok(())
        })?;
        if end_of_last != self.items() {
            crate::trace!(
                "{filter}: the cells end at item {end_of_last}, not at the block's end {}",
                self.items()
            );
            return Err(Error::FilterPipeline);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(g: &Grid) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        g.walk(|step| {
            v.push(match step {
                Step::Row(r) => (r.start, r.len),
                Step::End(n) => (usize::MAX, n),
            });
            Ok(())
        })
        .unwrap();
        v
    }

    #[test]
    fn a_4x8_block_in_2x2_cells() {
        // The picture in ndcell's description: cells [0 1 8 9], [2 3 10 11], ...
        let g = Grid::new(&[4, 8], &[2, 2]);
        let mut out = vec![0u8; 32];
        let src: Vec<u8> = (0..32).collect();
        g.gather(1, &src, &mut out).unwrap();
        assert_eq!(&out[..8], &[0, 1, 8, 9, 2, 3, 10, 11]);
        assert_eq!(&out[16..20], &[16, 17, 24, 25]);
        let mut back = vec![0u8; 32];
        g.scatter("t", 1, &out, &mut back).unwrap();
        assert_eq!(back, src);
    }

    #[test]
    fn cells_are_cut_at_the_block_end() {
        let g = Grid::new(&[3, 5], &[2, 2]);
        let r = rows(&g);
        // first cell 2x2, then 2x2, then 2x1 (columns 4), then the last row.
        assert_eq!(&r[..3], &[(0, 2), (5, 2), (usize::MAX, 4)]);
        assert_eq!(&r[6..9], &[(4, 1), (9, 1), (usize::MAX, 2)]);
        assert_eq!(r.last(), Some(&(usize::MAX, 1)));
        let total: usize = r.iter().filter(|x| x.0 == usize::MAX).map(|x| x.1).sum();
        assert_eq!(total, 15);
        // gather then scatter round-trips with any item size
        let src: Vec<u8> = (0..45).collect();
        let (mut a, mut b) = (vec![0; 45], vec![0; 45]);
        g.gather(3, &src, &mut a).unwrap();
        g.scatter("t", 3, &a, &mut b).unwrap();
        assert_eq!(b, src);
    }

    #[test]
    fn one_and_four_dimensions_round_trip() {
        for (block, cell) in
            [(&[10][..], &[3][..]), (&[3, 4, 5, 6][..], &[2, 2, 2, 2][..]), (&[2, 1, 7][..], &[4, 4, 4][..])]
        {
            let g = Grid::new(block, cell);
            let n = g.items() * 2;
            let src: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
            let (mut a, mut b) = (vec![0; n], vec![0; n]);
            g.gather(2, &src, &mut a).unwrap();
            assert_ne!(a, src.iter().rev().copied().collect::<Vec<_>>());
            g.scatter("t", 2, &a, &mut b).unwrap();
            assert_eq!(b, src, "{block:?} {cell:?}");
        }
    }

    #[test]
    fn a_first_cell_side_cut_short_misplaces_the_cells_as_c_blosc2_does() {
        // block 2x8, cells 2x4: the second cell starts at column 2, not 4.
        let g = Grid::new(&[2, 8], &[2, 4]);
        let r = rows(&g);
        assert_eq!(r, vec![(0, 4), (8, 4), (usize::MAX, 8), (2, 4), (10, 4), (usize::MAX, 8)]);
        let src = [0u8; 16];
        let mut dst = [0u8; 16];
        assert_eq!(g.scatter("t", 1, &src, &mut dst), Err(Error::FilterPipeline));
    }

    #[test]
    fn geometry_checks() {
        let meta = |block: &[i32]| {
            Meta {
                shape: block.iter().map(|&b| i64::from(b)).collect(),
                chunkshape: block.to_vec(),
                blockshape: block.to_vec(),
                dtype: "<f4".into(),
                dtype_format: 0,
            }
            .serialize()
            .unwrap()
        };
        assert_eq!(block_geometry("t", None, 4, 64), Err(Error::FilterPipeline));
        assert_eq!(block_geometry("t", Some(&[1, 2, 3]), 4, 64), Err(Error::FilterPipeline));
        assert_eq!(block_geometry("t", Some(&meta(&[4, 4])), 4, 64).unwrap(), vec![4, 4]);
        // a block shorter than the shape says (the last block of a chunk), or longer
        assert_eq!(block_geometry("t", Some(&meta(&[4, 4])), 4, 32), Err(Error::FilterPipeline));
        assert_eq!(block_geometry("t", Some(&meta(&[4, 4])), 4, 128), Err(Error::FilterPipeline));
        assert_eq!(block_geometry("t", Some(&meta(&[2; 9])), 1, 512), Err(Error::FilterPipeline));
        assert_eq!(block_geometry("t", Some(&meta(&[0, 4])), 4, 0), Err(Error::FilterPipeline));
        // a product that would wrap 32 bits is refused, not wrapped
        assert_eq!(block_geometry("t", Some(&meta(&[65536, 65536, 1])), 1, 0), Err(Error::FilterPipeline));
    }
}
