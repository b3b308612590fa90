//! ndcell (plugin filter 32): regroups an n-dimensional block cell by cell,
//! so that the items of each cell (of side `meta` along every dimension, cut
//! short at the block's end) follow one another. Lossless. The block's shape
//! comes from the `b2nd` metalayer of the super-chunk; without one, or with a
//! block that does not match it, the filter refuses (`FilterPipeline`), as
//! c-blosc2's does.

use super::cells::{block_geometry, Grid, MAX_DIM};
use crate::error::{Error, Result};

/// The cell grid for `meta` over the block, after c-blosc2's checks: a
/// positive side, and a whole cell no larger than the block.
fn grid(meta: u8, typesize: usize, b2nd: Option<&[u8]>, len: usize) -> Result<Grid> {
    let block = block_geometry("ndcell", b2nd, typesize, len)?;
    let side = usize::from(meta);
    if side == 0 {
        crate::trace!("ndcell: a cell side (meta) of 0");
        return Err(Error::FilterPipeline);
    }
    let cell_items = (side as u128).pow(block.len() as u32);
    if cell_items > (len / typesize) as u128 {
        crate::trace!("ndcell: a cell of {side}^{} items is larger than the block", block.len());
        return Err(Error::FilterPipeline);
    }
    Ok(Grid::new(&block, &[side; MAX_DIM][..block.len()]))
}

/// Apply the filter to one block (`typesize`: the compression parameters').
pub fn encode(meta: u8, typesize: usize, b2nd: Option<&[u8]>, src: &[u8], dst: &mut [u8]) -> Result<()> {
    grid(meta, typesize, b2nd, src.len())?.gather(typesize, src, dst)
}

/// Undo the filter on one block (`typesize`: the super-chunk's, as c-blosc2
/// takes it).
pub fn decode(meta: u8, typesize: i32, b2nd: Option<&[u8]>, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let typesize = typesize.max(0) as usize;
    grid(meta, typesize, b2nd, src.len())?.scatter("ndcell", typesize, src, dst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndmeta::Meta;

    struct View {
        typesize: i32,
        b2nd: Option<Vec<u8>>,
    }

    fn view(typesize: i32, block: &[i32]) -> View {
        let m = Meta {
            shape: block.iter().map(|&b| i64::from(b) * 3).collect(),
            chunkshape: block.iter().map(|&b| b * 2).collect(),
            blockshape: block.to_vec(),
            dtype: "|u1".into(),
            dtype_format: 0,
        };
        View { typesize, b2nd: Some(m.serialize().unwrap()) }
    }

    #[test]
    fn round_trips_2d_and_3d_blocks_with_partial_cells() {
        for (ts, block, side) in
            [(4usize, &[10, 6][..], 4u8), (1, &[5, 5, 5][..], 2), (8, &[7][..], 3), (2, &[3, 2, 2, 3][..], 2)]
        {
            let v = view(ts as i32, block);
            let n = block.iter().product::<i32>() as usize * ts;
            let src: Vec<u8> = (0..n).map(|i| (i * 31 % 256) as u8).collect();
            let (mut a, mut b) = (vec![0; n], vec![0; n]);
            encode(side, ts, v.b2nd.as_deref(), &src, &mut a).unwrap();
            if block.len() > 1 {
                assert_ne!(a, src);
            }
            decode(side, v.typesize, v.b2nd.as_deref(), &a, &mut b).unwrap();
            assert_eq!(b, src, "{block:?} side {side}");
        }
    }

    #[test]
    fn refuses_what_c_blosc2_refuses() {
        let v = view(4, &[8, 8]);
        let b2nd = v.b2nd.as_deref();
        let src = vec![1u8; 256];
        let mut dst = vec![0u8; 256];
        // no b2nd metalayer, a side of 0, a cell larger than the block
        assert_eq!(encode(4, 4, None, &src, &mut dst), Err(Error::FilterPipeline));
        assert_eq!(decode(4, 4, None, &src, &mut dst), Err(Error::FilterPipeline));
        assert_eq!(encode(0, 4, b2nd, &src, &mut dst), Err(Error::FilterPipeline));
        assert_eq!(encode(9, 4, b2nd, &src, &mut dst), Err(Error::FilterPipeline));
        // a cell longer than the block along one dimension, but no larger in items: accepted
        let w = view(1, &[2, 50]);
        let src = vec![3u8; 100];
        let mut dst = vec![0u8; 100];
        assert!(encode(4, 1, w.b2nd.as_deref(), &src, &mut dst).is_ok());
        // a block that does not match the shape (a chunk's last, short block)
        assert_eq!(encode(2, 4, b2nd, &src[..64], &mut dst[..64]), Err(Error::FilterPipeline));
        // the super-chunk's item size is what decoding uses
        let src = vec![1u8; 256];
        let mut dst = vec![0u8; 256];
        assert_eq!(
            decode(2, 2, view(2, &[8, 8]).b2nd.as_deref(), &src, &mut dst),
            Err(Error::FilterPipeline)
        );
        assert_eq!(
            decode(2, 0, view(0, &[8, 8]).b2nd.as_deref(), &src, &mut dst),
            Err(Error::FilterPipeline)
        );
    }
}
