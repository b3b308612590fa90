//! Boxes of C-order buffers: index arithmetic and box copies between buffers.

use crate::error::{Error, Result};

/// The C-order (row-major) linear index of `coords` in an array of `shape`.
pub(crate) fn c_index(coords: &[i64], shape: &[i64]) -> i64 {
    coords.iter().zip(shape).fold(0, |acc, (&c, &s)| acc * s + c)
}

/// The coordinates of the C-order linear index `n` in an array of `shape`.
pub(crate) fn unravel(mut n: i64, shape: &[i64]) -> Vec<i64> {
    let mut out = vec![0i64; shape.len()];
    for i in (0..shape.len()).rev() {
        if shape[i] > 0 {
            out[i] = n % shape[i];
            n /= shape[i];
        }
    }
    out
}

/// The product of `v` (1 for an empty `v`), `None` on overflow.
pub(crate) fn product(v: &[i64]) -> Option<i64> {
    v.iter().try_fold(1i64, |acc, &x| acc.checked_mul(x))
}

/// The C-order strides (in items) of an array of `shape`.
pub(crate) fn strides(shape: &[i64]) -> Vec<i64> {
    let mut st = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        st[i] = st[i + 1].saturating_mul(shape[i + 1]);
    }
    st
}

/// The bytes of a C-order buffer of `shape` with items of `itemsize` bytes.
pub(crate) fn buffer_len(shape: &[i64], itemsize: usize) -> Result<usize> {
    product(shape)
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| n.checked_mul(itemsize))
        .ok_or(Error::InvalidParam)
}

/// Call `f` with every index tuple of the box `lo..hi` (C order).
pub(crate) fn for_each_index(lo: &[i64], hi: &[i64], mut f: impl FnMut(&[i64]) -> Result<()>) -> Result<()> {
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

/// Copy the box `src_start..src_stop` of `src` (a C-order array of `src_shape`
/// items of `itemsize` bytes) to `dst` (of `dst_shape`) at `dst_start`.
#[allow(clippy::too_many_arguments)] // two boxes, each a buffer with its shape and corners
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
    if [src_start.len(), src_stop.len(), dst_shape.len(), dst_start.len()].iter().any(|&l| l != nd)
        || itemsize == 0
    {
        return Err(Error::InvalidParam);
    }
    for i in 0..nd {
        let len = src_stop[i] - src_start[i];
        if src_start[i] < 0
            || len < 0
            || src_stop[i] > src_shape[i]
            || dst_start[i] < 0
            || dst_start[i] + len > dst_shape[i]
        {
            return Err(Error::InvalidParam);
        }
    }
    if buffer_len(src_shape, itemsize)? > src.len() || buffer_len(dst_shape, itemsize)? > dst.len() {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn index_helpers_agree() {
        let shape = [3, 4, 5];
        for n in 0..60 {
            assert_eq!(c_index(&unravel(n, &shape), &shape), n);
        }
        assert_eq!(strides(&shape), vec![20, 5, 1]);
        assert_eq!(product(&[]), Some(1));
        assert_eq!(product(&[i64::MAX, 2]), None);
        let mut seen = 0;
        for_each_index(&[1, 0], &[3, 2], |_| {
            seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, 4);
    }
}
