//! Portable byte-matrix transpose: the reference every SIMD version is
//! tested against, the fallback on non-x86 targets, and the tail handler of
//! the SIMD versions.

use super::check_matrix;

/// `dst[c * dst_stride + r] = src[r * src_stride + c]` for `r < rows`, `c < cols`.
///
/// # Panics
/// If either matrix does not fit its slice (see [`super::fits`]).
pub(crate) fn transpose(
    src: &[u8],
    src_stride: usize,
    dst: &mut [u8],
    dst_stride: usize,
    rows: usize,
    cols: usize,
) {
    check_matrix(src.len(), src_stride, dst.len(), dst_stride, rows, cols);
    if rows == 0 || cols == 0 {
        return;
    }
    if cols <= rows {
        // Few long output rows: write each one sequentially.
        for c in 0..cols {
            let out = &mut dst[c * dst_stride..c * dst_stride + rows];
            let column = src[c..].iter().step_by(src_stride);
            for (o, &v) in out.iter_mut().zip(column) {
                *o = v;
            }
        }
    } else {
        // Few long input rows: read each one sequentially.
        for r in 0..rows {
            let row = &src[r * src_stride..r * src_stride + cols];
            let column = dst[r..].iter_mut().step_by(dst_stride);
            for (o, &v) in column.zip(row) {
                *o = v;
            }
        }
    }
}
