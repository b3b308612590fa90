//! Orthogonal selections (a list of indices per dimension, their outer
//! product selected) and points, read and written chunk by chunk.

use super::boxes::{c_index, for_each_index};
use super::Geometry;
use crate::error::{Error, Result};
use crate::schunk::SuperChunk;

impl Geometry {
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
        if selection.len() != nd
            || buffer_shape.len() != nd
            || selection.iter().zip(buffer_shape).any(|(s, &b)| (s.len() as i64) > b)
        {
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
            let mut slot = std::collections::HashMap::new();
            for (p, &x) in sel.iter().enumerate() {
                let c = x / self.chunkshape[i];
                let k = *slot.entry(c).or_insert_with(|| {
                    g.push((c, Vec::new()));
                    g.len() - 1
                });
                g[k].1.push(p);
            }
            groups.push(g);
        }
        let counts: Vec<i64> = groups.iter().map(|g| g.len() as i64).collect();
        let zeros = vec![0i64; nd];
        let mut pairs = Vec::new();
        let mut local = vec![0i64; nd];
        let mut out = vec![0i64; nd];
        for_each_index(&zeros, &counts, |gi| {
            let chunk: Vec<i64> = (0..nd).map(|i| groups[i][gi[i] as usize].0).collect();
            let n = c_index(&chunk, &self.chunks) as usize;
            pairs.clear();
            let lens: Vec<i64> = (0..nd).map(|i| groups[i][gi[i] as usize].1.len() as i64).collect();
            for_each_index(&zeros, &lens, |pi| {
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

    /// The items of an orthogonal selection into `dst` (C order, `buffer_shape`).
    pub fn get_selection(
        &self,
        sc: &SuperChunk,
        selection: &[Vec<i64>],
        dst: &mut [u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
        let ts = sc.typesize().max(1) as usize;
        let mut chunk = vec![0u8; self.chunk_bytes(ts)?];
        self.for_each_selected(selection, buffer_shape, |n, pairs| {
            sc.decompress_chunk(n, &mut chunk)?;
            for &(co, bo) in pairs {
                let d = dst.get_mut(bo * ts..(bo + 1) * ts).ok_or(Error::WriteBuffer)?;
                d.copy_from_slice(chunk.get(co * ts..(co + 1) * ts).ok_or(Error::Data)?);
            }
            Ok(())
        })
    }

    /// Set the items of an orthogonal selection from `src` (C order, `buffer_shape`).
    pub fn set_selection(
        &self,
        sc: &mut SuperChunk,
        selection: &[Vec<i64>],
        src: &[u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
        let ts = sc.typesize().max(1) as usize;
        let mut chunk = vec![0u8; self.chunk_bytes(ts)?];
        let mut todo = Vec::new();
        self.for_each_selected(selection, buffer_shape, |n, pairs| {
            todo.push((n, pairs.to_vec()));
            Ok(())
        })?;
        for (n, pairs) in todo {
            chunk.fill(0);
            sc.decompress_chunk(n, &mut chunk)?;
            for (co, bo) in pairs {
                let s = src.get(bo * ts..(bo + 1) * ts).ok_or(Error::ReadBuffer)?;
                chunk.get_mut(co * ts..(co + 1) * ts).ok_or(Error::Data)?.copy_from_slice(s);
            }
            let c = sc.compress(&chunk)?;
            sc.update_chunk(n, &c)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Meta;
    use super::*;

    #[test]
    fn orthogonal_selections_visit_every_item_once() {
        let m = Meta {
            shape: vec![9, 8],
            chunkshape: vec![4, 3],
            blockshape: vec![2, 3],
            dtype: "<u2".into(),
            dtype_format: 0,
        };
        let g = Geometry::new(&m).unwrap();
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
