//! NEON byte-matrix transpose (aarch64), 16 rows or columns per step.
//!
//! NEON is part of the aarch64 baseline, so this version is chosen at compile
//! time (the module only exists where `target_feature = "neon"` is on).
//! Building blocks, all in registers:
//! * rows of 2 or 4 contiguous bytes are split into their byte columns by the
//!   structured loads `vld2q_u8` / `vld4q_u8`, and merged back by the
//!   structured stores `vst2q_u8` / `vst4q_u8`; rows of 8 bytes take a
//!   `vld4q_u8` of each half of 16 rows and one `vuzp` per column pair
//!   (the inverse: `vzip`, then `vst4q_u8`);
//! * other shapes go through a 16×16 byte transpose made of four rounds of
//!   `vzip1q_u8` / `vzip2q_u8` (see [`interleave`]).
//!
//! Edges are handled by letting the last block overlap the previous one
//! (it rewrites identical bytes), so only matrices narrower than a block fall
//! back to the scalar code.

#![deny(unsafe_op_in_unsafe_fn)]
#![allow(unused_unsafe)] // arithmetic intrinsics are safe on newer compilers, unsafe on older

use core::arch::aarch64::*;

use super::{block_starts, check_matrix, scalar, Kernels};

/// The NEON kernels (always present on aarch64).
pub(crate) fn kernels() -> Option<Kernels> {
    Some(Kernels { name: "neon", transpose, unshuffle_planes: None })
}

/// Smallest narrow dimension worth the over-reading / spilling 16×16 paths.
const NARROW_MIN: usize = 3;

/// `dst[c * ds + r] = src[r * ss + c]` for `r < rows`, `c < cols`.
///
/// # Panics
/// If either matrix does not fit its slice (see [`super::fits`]).
pub(crate) fn transpose(src: &[u8], ss: usize, dst: &mut [u8], ds: usize, rows: usize, cols: usize) {
    check_matrix(src.len(), ss, dst.len(), ds, rows, cols);
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    // SAFETY: all calls below: NEON is on (compile-time), the matrices fit
    // their slices (checked above) and each helper's own shape precondition
    // is tested right before it.
    unsafe {
        if rows >= 16 && ss == cols && matches!(cols, 2 | 4 | 8) {
            match cols {
                2 => gather2(s, d, ds, rows),
                4 => gather4(s, d, ds, rows),
                _ => gather8(s, d, ds, rows, |_| ()),
            }
        } else if cols >= 16 && ds == rows && matches!(rows, 2 | 4 | 8) {
            match rows {
                2 => scatter2(s, ss, d, cols),
                4 => scatter4(s, ss, d, cols),
                _ => scatter8(s, ss, d, cols, |_| ()),
            }
        } else if rows >= 16 && cols >= 16 {
            for r in block_starts(rows, 16) {
                for c in block_starts(cols, 16) {
                    block16(s.add(r * ss + c), ss, d.add(c * ds + r), ds, 16);
                }
            }
        } else if rows >= 16 && cols >= NARROW_MIN {
            let done = narrow(s, src.len(), ss, d, ds, rows, cols);
            // (A source that runs on past its last row may have let every row go.)
            if done < rows {
                scalar::transpose(&src[done * ss..], ss, &mut dst[done..], ds, rows - done, cols);
            }
        } else if cols >= 16 && rows >= NARROW_MIN && ds == rows {
            let done = spill(s, ss, d, rows, cols);
            if done < cols {
                scalar::transpose(&src[done..], ss, &mut dst[done * ds..], ds, rows, cols - done);
            }
        } else {
            scalar::transpose(src, ss, dst, ds, rows, cols);
        }
    }
}

/// Bit-shuffle hook: transposes `rows >= 16` rows of 8 contiguous bytes at
/// `src` into 8 rows of `dst` (stride `ds`), applying `then` to each block
/// of 8 output vectors (16 columns of the 8 rows) before storing it.
///
/// # Panics
/// If `rows < 16` or either matrix does not fit its slice.
pub(crate) fn gather8_then(
    src: &[u8],
    dst: &mut [u8],
    ds: usize,
    rows: usize,
    then: impl Fn(&mut [uint8x16_t; 8]),
) {
    assert!(rows >= 16);
    check_matrix(src.len(), 8, dst.len(), ds, rows, 8);
    // SAFETY: shapes checked above.
    unsafe { gather8(src.as_ptr(), dst.as_mut_ptr(), ds, rows, then) }
}

/// Bit-shuffle hook: transposes 8 rows (stride `ss`) of `cols >= 16` bytes
/// at `src` into `cols` columns of 8 contiguous bytes, applying `first` to
/// each block of 8 loaded row vectors (16 columns) before transposing it.
///
/// # Panics
/// If `cols < 16` or either matrix does not fit its slice.
pub(crate) fn scatter8_with(
    src: &[u8],
    ss: usize,
    dst: &mut [u8],
    cols: usize,
    first: impl Fn(&mut [uint8x16_t; 8]),
) {
    assert!(cols >= 16);
    check_matrix(src.len(), ss, dst.len(), 8, 8, cols);
    // SAFETY: shapes checked above.
    unsafe { scatter8(src.as_ptr(), ss, dst.as_mut_ptr(), cols, first) }
}

/// Rows of 2 contiguous bytes, `rows >= 16`.
///
/// # Safety
/// `src` holds `rows * 2` bytes, `dst` the `2 × rows` matrix of stride `ds`.
unsafe fn gather2(src: *const u8, dst: *mut u8, ds: usize, rows: usize) {
    for r in block_starts(rows, 16) {
        // SAFETY: bytes 2r .. 2(r+16) of the source, columns r .. r+16 of both output rows.
        unsafe {
            let v = vld2q_u8(src.add(2 * r));
            vst1q_u8(dst.add(r), v.0);
            vst1q_u8(dst.add(ds + r), v.1);
        }
    }
}

/// Rows of 4 contiguous bytes, `rows >= 16`.
///
/// # Safety
/// `src` holds `rows * 4` bytes, `dst` the `4 × rows` matrix of stride `ds`.
unsafe fn gather4(src: *const u8, dst: *mut u8, ds: usize, rows: usize) {
    for r in block_starts(rows, 16) {
        // SAFETY: bytes 4r .. 4(r+16) of the source, columns r .. r+16 of the 4 output rows.
        unsafe {
            let v = vld4q_u8(src.add(4 * r));
            vst1q_u8(dst.add(r), v.0);
            vst1q_u8(dst.add(ds + r), v.1);
            vst1q_u8(dst.add(2 * ds + r), v.2);
            vst1q_u8(dst.add(3 * ds + r), v.3);
        }
    }
}

/// Rows of 8 contiguous bytes, `rows >= 16`; `then` is applied to each
/// block's 8 output vectors before they are stored.
///
/// A `vld4q_u8` of 8 rows leaves in vector `j` the bytes `j` and `j + 4` of
/// each row, alternating; unzipping the two halves' vectors `j` separates them.
///
/// # Safety
/// `src` holds `rows * 8` bytes, `dst` the `8 × rows` matrix of stride `ds`.
unsafe fn gather8(src: *const u8, dst: *mut u8, ds: usize, rows: usize, then: impl Fn(&mut [uint8x16_t; 8])) {
    for r in block_starts(rows, 16) {
        // SAFETY: bytes 8r .. 8(r+16) of the source, columns r .. r+16 of the 8 output rows.
        unsafe {
            let a = vld4q_u8(src.add(8 * r));
            let b = vld4q_u8(src.add(8 * r + 64));
            let (a, b) = ([a.0, a.1, a.2, a.3], [b.0, b.1, b.2, b.3]);
            let mut x: [uint8x16_t; 8] = core::array::from_fn(|j| {
                if j < 4 {
                    vuzp1q_u8(a[j], b[j])
                } else {
                    vuzp2q_u8(a[j - 4], b[j - 4])
                }
            });
            then(&mut x);
            for (j, v) in x.iter().enumerate() {
                vst1q_u8(dst.add(j * ds + r), *v);
            }
        }
    }
}

/// 2 rows (stride `ss`) into columns of 2 contiguous bytes, `cols >= 16`.
///
/// # Safety
/// `src` holds the `2 × cols` matrix of stride `ss`, `dst` holds `cols * 2` bytes.
unsafe fn scatter2(src: *const u8, ss: usize, dst: *mut u8, cols: usize) {
    for c in block_starts(cols, 16) {
        // SAFETY: columns c .. c+16 of both rows, bytes 2c .. 2(c+16) of the destination.
        unsafe { vst2q_u8(dst.add(2 * c), uint8x16x2_t(vld1q_u8(src.add(c)), vld1q_u8(src.add(ss + c)))) };
    }
}

/// 4 rows (stride `ss`) into columns of 4 contiguous bytes, `cols >= 16`.
///
/// # Safety
/// `src` holds the `4 × cols` matrix of stride `ss`, `dst` holds `cols * 4` bytes.
unsafe fn scatter4(src: *const u8, ss: usize, dst: *mut u8, cols: usize) {
    for c in block_starts(cols, 16) {
        // SAFETY: columns c .. c+16 of the 4 rows, bytes 4c .. 4(c+16) of the destination.
        unsafe {
            let row = |j: usize| vld1q_u8(src.add(j * ss + c));
            vst4q_u8(dst.add(4 * c), uint8x16x4_t(row(0), row(1), row(2), row(3)));
        }
    }
}

/// 8 rows (stride `ss`) into columns of 8 contiguous bytes, `cols >= 16`;
/// `first` is applied to each block's 8 loaded row vectors. The inverse of
/// [`gather8`]: rows `j` and `j + 4` zipped, then two `vst4q_u8`.
///
/// # Safety
/// `src` holds the `8 × cols` matrix of stride `ss`, `dst` holds `cols * 8` bytes.
unsafe fn scatter8(
    src: *const u8,
    ss: usize,
    dst: *mut u8,
    cols: usize,
    first: impl Fn(&mut [uint8x16_t; 8]),
) {
    for c in block_starts(cols, 16) {
        // SAFETY: columns c .. c+16 of the 8 rows, bytes 8c .. 8(c+16) of the destination.
        unsafe {
            let mut x: [uint8x16_t; 8] = core::array::from_fn(|j| vld1q_u8(src.add(j * ss + c)));
            first(&mut x);
            let lo = |j: usize| vzip1q_u8(x[j], x[j + 4]);
            let hi = |j: usize| vzip2q_u8(x[j], x[j + 4]);
            vst4q_u8(dst.add(8 * c), uint8x16x4_t(lo(0), lo(1), lo(2), lo(3)));
            vst4q_u8(dst.add(8 * c + 64), uint8x16x4_t(hi(0), hi(1), hi(2), hi(3)));
        }
    }
}

/// `x[j]` holds the bytes of row `j`; afterwards `x` is the byte stream
/// `row0[0], row1[0], .., row0[1], ..` (with `R = 16`, a 16×16 transpose:
/// `x[c]` is column `c`). Each round zips rows `j` and `j + R/2`.
#[inline(always)]
fn interleave<const R: usize>(x: &mut [uint8x16_t; R]) {
    for round in 0..R.trailing_zeros() {
        let pieces = 1 << round;
        let half = R >> (round + 1);
        let mut y = *x;
        for j in 0..half {
            for i in 0..pieces {
                let (p, q) = (x[j * pieces + i], x[(j + half) * pieces + i]);
                // SAFETY: register-only; NEON is on.
                unsafe {
                    y[j * 2 * pieces + 2 * i] = vzip1q_u8(p, q);
                    y[j * 2 * pieces + 2 * i + 1] = vzip2q_u8(p, q);
                }
            }
        }
        *x = y;
    }
}

/// Loads 16-byte pieces of the first `n` of 16 rows (the others are zero).
///
/// # Safety
/// 16 bytes at `src + r * ss` are readable for `r < n`.
#[inline(always)]
unsafe fn load16(src: *const u8, ss: usize, n: usize) -> [uint8x16_t; 16] {
    // SAFETY: register-only.
    let mut x = [unsafe { vdupq_n_u8(0) }; 16];
    for (r, v) in x.iter_mut().enumerate().take(n) {
        // SAFETY: guaranteed by the caller.
        *v = unsafe { vld1q_u8(src.add(r * ss)) };
    }
    x
}

/// Transposes the 16×16 block at `src` into `dst`, storing its first `n` columns.
///
/// # Safety
/// 16 bytes readable at `src + r * ss` for `r < 16`, writable at
/// `dst + c * ds` for `c < n`.
#[inline(always)]
unsafe fn block16(src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) {
    // SAFETY: guaranteed by the caller.
    let mut x = unsafe { load16(src, ss, 16) };
    interleave(&mut x);
    for (c, v) in x.iter().enumerate().take(n) {
        // SAFETY: guaranteed by the caller.
        unsafe { vst1q_u8(dst.add(c * ds), *v) };
    }
}

/// `cols < 16 <= rows`: reads 16 bytes per row (past the row's end, but
/// inside `src_len`) and stores the first `cols` columns. Returns the number
/// of rows done; the caller finishes the rest.
///
/// # Safety
/// `src` is readable for `src_len` bytes, matrices fit their buffers.
unsafe fn narrow(
    src: *const u8,
    src_len: usize,
    ss: usize,
    dst: *mut u8,
    ds: usize,
    rows: usize,
    cols: usize,
) -> usize {
    let mut r = 0;
    while r + 16 <= rows && (r + 15) * ss + 16 <= src_len {
        // SAFETY: the 16 loads end at or before `src_len`; the stores are
        // the block's `cols` output rows.
        unsafe { block16(src.add(r * ss), ss, dst.add(r), ds, cols) };
        r += 16;
    }
    r
}

/// `rows < 16 <= cols`, `ds == rows`: each output column is written with a
/// 16-byte store whose excess spills into the next columns, which are
/// written afterwards (stores go in increasing address order). Returns the
/// number of columns done; the caller finishes the rest, so it rewrites
/// whatever the last block spilled.
///
/// # Safety
/// Matrices fit their buffers, `ds == rows`.
unsafe fn spill(src: *const u8, ss: usize, dst: *mut u8, rows: usize, cols: usize) -> usize {
    let mut c = 0;
    while (c + 15) * rows + 16 <= cols * rows {
        // SAFETY: 16 bytes of each of the `rows` rows from column c (c + 16 <= cols);
        // the last store ends at (c + 15) * rows + 16 <= cols * rows.
        let mut x = unsafe { load16(src.add(c), ss, rows) };
        interleave(&mut x);
        for (k, v) in x.iter().enumerate() {
            // SAFETY: see above; stores go in increasing address order.
            unsafe { vst1q_u8(dst.add((c + k) * rows), *v) };
        }
        c += 16;
    }
    c
}
