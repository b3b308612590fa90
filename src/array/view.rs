//! Views: an array seen with dimensions of length 1 removed (squeeze) or
//! added (expand_dims). A view shares the stored array's chunks; every
//! operation maps its coordinates onto the stored array's.

use super::{Geometry, Meta};
use crate::error::{Error, Result};

/// How a view's dimensions map onto the stored array's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// For each dimension of the view: the stored array's dimension, or
    /// `None` for an added dimension of length 1.
    map: Vec<Option<usize>>,
    /// The view's own shapes (chunk and block lengths of added dimensions are 1).
    meta: Meta,
    geom: Geometry,
}

impl View {
    /// The view of the stored array `base` (`base_nd` dimensions) given by `map`.
    pub fn new(base: &Meta, map: Vec<Option<usize>>) -> Result<View> {
        if map.len() > super::meta::MAX_DIM || map.iter().flatten().any(|&b| b >= base.ndim()) {
            return Err(Error::InvalidParam);
        }
        // Stored dimensions left out must have length 1.
        for b in 0..base.ndim() {
            if !map.contains(&Some(b)) && base.shape[b] != 1 {
                return Err(Error::InvalidParam);
            }
        }
        let meta = Meta {
            shape: map.iter().map(|m| m.map_or(1, |b| base.shape[b])).collect(),
            chunkshape: map.iter().map(|m| m.map_or(1, |b| base.chunkshape[b])).collect(),
            blockshape: map.iter().map(|m| m.map_or(1, |b| base.blockshape[b])).collect(),
            dtype: base.dtype.clone(),
            dtype_format: base.dtype_format,
        };
        let geom = Geometry::new(&meta)?;
        Ok(View { map, meta, geom })
    }

    /// This view seen through `map` (a view of a view).
    pub fn then(&self, base: &Meta, map: &[Option<usize>]) -> Result<View> {
        let composed = map.iter().map(|m| m.and_then(|j| self.map.get(j).copied().flatten())).collect();
        View::new(base, composed)
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    pub fn map(&self) -> &[Option<usize>] {
        &self.map
    }

    /// A box (and the shape of the buffer it goes to) in the stored array's coordinates.
    pub fn to_base(
        &self,
        base_nd: usize,
        start: &[i64],
        stop: &[i64],
        bshape: &[i64],
    ) -> Result<(Vec<i64>, Vec<i64>, Vec<i64>)> {
        let n = self.map.len();
        if start.len() != n || stop.len() != n || bshape.len() != n {
            return Err(Error::InvalidParam);
        }
        let (mut s0, mut s1, mut bs) = (vec![0i64; base_nd], vec![1i64; base_nd], vec![1i64; base_nd]);
        for (j, m) in self.map.iter().enumerate() {
            match m {
                Some(b) => {
                    s0[*b] = start[j];
                    s1[*b] = stop[j];
                    bs[*b] = bshape[j];
                }
                // An added dimension: the slice along it is 0..1 (or empty).
                None if start[j] == 0 && (0..=1).contains(&stop[j]) && bshape[j] >= stop[j] => {
                    if stop[j] == 0 {
                        // An empty slice: empty in the stored array too.
                        if let Some(b) = self.map.iter().flatten().next() {
                            s1[*b] = s0[*b];
                        } else if base_nd > 0 {
                            s1[0] = 0;
                        }
                    }
                }
                None => return Err(Error::InvalidParam),
            }
        }
        Ok((s0, s1, bs))
    }

    /// An orthogonal selection (and its buffer shape) in the stored array's coordinates.
    pub fn selection_to_base(
        &self,
        base_nd: usize,
        sel: &[Vec<i64>],
        bshape: &[i64],
    ) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
        if sel.len() != self.map.len() || bshape.len() != self.map.len() {
            return Err(Error::InvalidParam);
        }
        let (mut s, mut b) = (vec![vec![0i64]; base_nd], vec![1i64; base_nd]);
        for (j, m) in self.map.iter().enumerate() {
            match m {
                Some(base) => {
                    s[*base] = sel[j].clone();
                    b[*base] = bshape[j];
                }
                None if sel[j].len() == 1 && sel[j][0] == 0 && bshape[j] >= 1 => {}
                None => return Err(Error::InvalidParam),
            }
        }
        Ok((s, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Meta {
        Meta {
            shape: vec![4, 1, 6],
            chunkshape: vec![2, 1, 3],
            blockshape: vec![1, 1, 3],
            dtype: "<f8".into(),
            dtype_format: 0,
        }
    }

    #[test]
    fn squeeze_and_expand_map_coordinates() {
        let v = View::new(&base(), vec![Some(0), Some(2)]).unwrap();
        assert_eq!(v.meta().shape, vec![4, 6]);
        let (s0, s1, bs) = v.to_base(3, &[1, 2], &[3, 5], &[2, 3]).unwrap();
        assert_eq!((s0, s1, bs), (vec![1, 0, 2], vec![3, 1, 5], vec![2, 1, 3]));
        // Dropping a dimension longer than 1 is refused.
        assert!(View::new(&base(), vec![Some(1), Some(2)]).is_err());
        let e = v.then(&base(), &[None, Some(0), Some(1)]).unwrap();
        assert_eq!(e.meta().shape, vec![1, 4, 6]);
        assert_eq!(e.map(), &[None, Some(0), Some(2)]);
        assert!(e.to_base(3, &[0, 0, 0], &[2, 1, 1], &[2, 1, 1]).is_err());
    }
}
