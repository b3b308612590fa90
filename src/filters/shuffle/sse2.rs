//! SSE2 byte-matrix transpose, 16 rows or columns per step.
//!
//! Building blocks, all in registers:
//! * `deinterleave`: splits `C` vectors holding 16 contiguous `C`-byte rows
//!   (`C` = 2, 4, 8) into the `C` output rows, by halving the stream into
//!   even and odd bytes `log2 C` times (`packus` of masked / shifted words).
//! * `interleave`: the inverse, merging `R` rows (`R` = 2, 4, 8, 16) of 16
//!   bytes into contiguous `R`-byte columns with `unpacklo/hi_epi8`; with
//!   `R = 16` it is a full 16×16 byte transpose.
//!
//! These register-only helpers carry no `target_feature` (SSE2 is part of
//! the x86_64 baseline) so that they can be forced inline: out of line, their
//! register arrays end up in memory.
//!
//! Edges are handled by letting the last block overlap the previous one
//! (it rewrites identical bytes), so only matrices narrower than a block fall
//! back to the scalar code.

#![deny(unsafe_op_in_unsafe_fn)]

use core::arch::x86_64::*;

use super::{block_starts, check_matrix, crowded, scalar, Kernels};

/// The SSE2 kernels, if the CPU has SSE2 (always true on x86_64).
pub(crate) fn kernels() -> Option<Kernels> {
    is_x86_feature_detected!("sse2").then_some(Kernels {
        name: "sse2",
        transpose: transpose_entry,
        unshuffle_planes: None,
    })
}

fn transpose_entry(src: &[u8], ss: usize, dst: &mut [u8], ds: usize, rows: usize, cols: usize) {
    // SAFETY: this function is private and only handed out by `kernels()`,
    // after SSE2 support was detected.
    unsafe { transpose(src, ss, dst, ds, rows, cols) }
}

/// Smallest narrow dimension worth the over-reading / spilling 16×16 paths.
pub(crate) const NARROW_MIN: usize = 3;

/// `dst[c * ds + r] = src[r * ss + c]` for `r < rows`, `c < cols`.
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If either matrix does not fit its slice (see [`super::fits`]).
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn transpose(src: &[u8], ss: usize, dst: &mut [u8], ds: usize, rows: usize, cols: usize) {
    check_matrix(src.len(), ss, dst.len(), ds, rows, cols);
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    // SAFETY: all calls below: the matrices fit their slices (checked above)
    // and each helper's own shape precondition is tested right before it.
    unsafe {
        if rows >= 16 && ss == cols && matches!(cols, 2 | 4 | 8) {
            match cols {
                2 => gather_pow2::<2>(s, d, ds, rows, |_| ()),
                4 => gather_pow2::<4>(s, d, ds, rows, |_| ()),
                _ => gather_pow2::<8>(s, d, ds, rows, |_| ()),
            }
        } else if cols >= 16 && ds == rows && matches!(rows, 2 | 4 | 8) {
            match rows {
                2 => scatter_pow2::<2>(s, ss, d, cols, |_| ()),
                4 => scatter_pow2::<4>(s, ss, d, cols, |_| ()),
                _ => scatter_pow2::<8>(s, ss, d, cols, |_| ()),
            }
        } else if rows >= 16 && cols >= 16 {
            blocks(s, ss, d, ds, rows, cols);
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
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If `rows < 16` or either matrix does not fit its slice.
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn gather8_then(
    src: &[u8],
    dst: &mut [u8],
    ds: usize,
    rows: usize,
    then: impl Fn(&mut [__m128i; 8]),
) {
    assert!(rows >= 16);
    check_matrix(src.len(), 8, dst.len(), ds, rows, 8);
    // SAFETY: shapes checked above.
    unsafe { gather_pow2::<8>(src.as_ptr(), dst.as_mut_ptr(), ds, rows, then) }
}

/// Bit-shuffle hook: transposes 8 rows (stride `ss`) of `cols >= 16` bytes
/// at `src` into `cols` columns of 8 contiguous bytes, applying `first` to
/// each block of 8 loaded row vectors (16 columns) before transposing it.
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If `cols < 16` or either matrix does not fit its slice.
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn scatter8_with(
    src: &[u8],
    ss: usize,
    dst: &mut [u8],
    cols: usize,
    first: impl Fn(&mut [__m128i; 8]),
) {
    assert!(cols >= 16);
    check_matrix(src.len(), ss, dst.len(), 8, 8, cols);
    // SAFETY: shapes checked above.
    unsafe { scatter_pow2::<8>(src.as_ptr(), ss, dst.as_mut_ptr(), cols, first) }
}

/// Even bytes of `a` then of `b`.
#[inline(always)]
fn even(a: __m128i, b: __m128i) -> __m128i {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe {
        let m = _mm_set1_epi16(0x00ff);
        _mm_packus_epi16(_mm_and_si128(a, m), _mm_and_si128(b, m))
    }
}

/// Odd bytes of `a` then of `b`.
#[inline(always)]
fn odd(a: __m128i, b: __m128i) -> __m128i {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { _mm_packus_epi16(_mm_srli_epi16::<8>(a), _mm_srli_epi16::<8>(b)) }
}

/// `x` holds one byte stream of `C` pieces; afterwards `x[j]` holds the
/// bytes at positions `j mod C` (C a power of two).
#[inline(always)]
fn deinterleave<const C: usize>(x: &mut [__m128i; C]) {
    // Counted rounds (not `while streams < C`) so that the loops unroll and
    // the arrays stay in registers.
    for round in 0..C.trailing_zeros() {
        let streams = 1 << round;
        let pieces = C >> round;
        let half = pieces / 2;
        let mut y = *x;
        for j in 0..streams {
            for i in 0..half {
                let (a, b) = (x[j * pieces + 2 * i], x[j * pieces + 2 * i + 1]);
                y[j * half + i] = even(a, b);
                y[(j + streams) * half + i] = odd(a, b);
            }
        }
        *x = y;
    }
}

/// Inverse of [`deinterleave`]: `x[j]` holds the bytes of row `j`;
/// afterwards `x` is the byte stream `row0[0], row1[0], .., row0[1], ..`.
#[inline(always)]
fn interleave<const R: usize>(x: &mut [__m128i; R]) {
    for round in 0..R.trailing_zeros() {
        let pieces = 1 << round;
        let half = R >> (round + 1);
        let mut y = *x;
        for j in 0..half {
            for i in 0..pieces {
                let (p, q) = (x[j * pieces + i], x[(j + half) * pieces + i]);
                // SAFETY: SSE2 is part of the x86_64 baseline.
                unsafe {
                    y[j * 2 * pieces + 2 * i] = _mm_unpacklo_epi8(p, q);
                    y[j * 2 * pieces + 2 * i + 1] = _mm_unpackhi_epi8(p, q);
                }
            }
        }
        *x = y;
    }
}

/// Rows of `C` contiguous bytes (`src` stride `C`), `rows >= 16`; `then`
/// is applied to each block's `C` output vectors before they are stored.
///
/// # Safety
/// SSE2; `src` holds `rows * C` bytes, `dst` holds the `C × rows` matrix of stride `ds`.
#[target_feature(enable = "sse2")]
unsafe fn gather_pow2<const C: usize>(
    src: *const u8,
    dst: *mut u8,
    ds: usize,
    rows: usize,
    then: impl Fn(&mut [__m128i; C]),
) {
    for r in block_starts(rows, 16) {
        let mut x = [_mm_setzero_si128(); C];
        for (p, v) in x.iter_mut().enumerate() {
            // SAFETY: bytes r*C .. (r+16)*C are inside the source.
            *v = unsafe { _mm_loadu_si128(src.add(r * C + 16 * p).cast()) };
        }
        deinterleave(&mut x);
        then(&mut x);
        for (j, v) in x.iter().enumerate() {
            // SAFETY: output row j, columns r .. r+16, is inside the destination.
            unsafe { _mm_storeu_si128(dst.add(j * ds + r).cast(), *v) };
        }
    }
}

/// `R` rows (stride `ss`) into columns of `R` contiguous bytes, `cols >= 16`;
/// `first` is applied to each block's `R` loaded row vectors.
///
/// # Safety
/// SSE2; `src` holds the `R × cols` matrix of stride `ss`, `dst` holds `cols * R` bytes.
#[target_feature(enable = "sse2")]
unsafe fn scatter_pow2<const R: usize>(
    src: *const u8,
    ss: usize,
    dst: *mut u8,
    cols: usize,
    first: impl Fn(&mut [__m128i; R]),
) {
    for c in block_starts(cols, 16) {
        let mut x = [_mm_setzero_si128(); R];
        for (j, v) in x.iter_mut().enumerate() {
            // SAFETY: row j, columns c .. c+16, is inside the source.
            *v = unsafe { _mm_loadu_si128(src.add(j * ss + c).cast()) };
        }
        first(&mut x);
        interleave(&mut x);
        for (p, v) in x.iter().enumerate() {
            // SAFETY: bytes c*R .. (c+16)*R are inside the destination.
            unsafe { _mm_storeu_si128(dst.add(c * R + 16 * p).cast(), *v) };
        }
    }
}

/// Loads 16-byte pieces of the first `n` of 16 rows (the others are zero).
///
/// # Safety
/// SSE2; 16 bytes at `src + r * ss` are readable for `r < n`.
#[target_feature(enable = "sse2")]
#[inline]
unsafe fn load16(src: *const u8, ss: usize, n: usize) -> [__m128i; 16] {
    let mut x = [_mm_setzero_si128(); 16];
    for (r, v) in x.iter_mut().enumerate().take(n) {
        // SAFETY: guaranteed by the caller.
        *v = unsafe { _mm_loadu_si128(src.add(r * ss).cast()) };
    }
    x
}

/// Transposes the 16×16 block at `src` into `dst`, storing its first `n` columns.
///
/// # Safety
/// SSE2; 16 bytes readable at `src + r * ss` for `r < 16`, writable at
/// `dst + c * ds` for `c < n`.
#[target_feature(enable = "sse2")]
#[inline]
unsafe fn block16(src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) {
    // SAFETY: guaranteed by the caller.
    let mut x = unsafe { load16(src, ss, 16) };
    interleave(&mut x);
    for (c, v) in x.iter().enumerate().take(n) {
        // SAFETY: guaranteed by the caller.
        unsafe { _mm_storeu_si128(dst.add(c * ds).cast(), *v) };
    }
}

/// General case, `rows >= 16` and `cols >= 16`: 16×16 blocks. The outer loop
/// runs along the longer side so that the longer side is read or written in
/// order. When the rows on the short side are crowded (see [`crowded`]), four
/// blocks are done at once so that each of their lines is accessed whole.
///
/// # Safety
/// SSE2; both matrices fit their buffers.
#[target_feature(enable = "sse2")]
unsafe fn blocks(src: *const u8, ss: usize, dst: *mut u8, ds: usize, rows: usize, cols: usize) {
    if rows >= cols {
        let wide = rows >= 64 && crowded(ds);
        for r in block_starts(rows, if wide { 64 } else { 16 }) {
            for c in block_starts(cols, 16) {
                // SAFETY: the block (64 or 16 rows × 16 columns) lies inside both matrices.
                unsafe {
                    let (s, d) = (src.add(r * ss + c), dst.add(c * ds + r));
                    if wide {
                        wide_rows(s, ss, d, ds)
                    } else {
                        block16(s, ss, d, ds, 16)
                    }
                }
            }
        }
    } else {
        let wide = cols >= 64 && crowded(ss);
        for c in block_starts(cols, if wide { 64 } else { 16 }) {
            for r in block_starts(rows, 16) {
                // SAFETY: the block (16 rows × 64 or 16 columns) lies inside both matrices.
                unsafe {
                    let (s, d) = (src.add(r * ss + c), dst.add(c * ds + r));
                    if wide {
                        wide_cols(s, ss, d, ds)
                    } else {
                        block16(s, ss, d, ds, 16)
                    }
                }
            }
        }
    }
}

/// 64 rows × 16 columns: four 16×16 transposes, then the 64 bytes of each
/// output row stored together.
///
/// # Safety
/// SSE2; 16 bytes readable at `src + r * ss` for `r < 64`, 64 bytes
/// writable at `dst + c * ds` for `c < 16`.
#[target_feature(enable = "sse2")]
unsafe fn wide_rows(src: *const u8, ss: usize, dst: *mut u8, ds: usize) {
    let t: [[__m128i; 16]; 4] = core::array::from_fn(|k| {
        // SAFETY: guaranteed by the caller.
        let mut x = unsafe { load16(src.add(16 * k * ss), ss, 16) };
        interleave(&mut x);
        x
    });
    for c in 0..16 {
        for (k, x) in t.iter().enumerate() {
            // SAFETY: guaranteed by the caller.
            unsafe { _mm_storeu_si128(dst.add(c * ds + 16 * k).cast(), x[c]) };
        }
    }
}

/// 16 rows × 64 columns: the 64 bytes of each row loaded together, then four
/// 16×16 transposes.
///
/// # Safety
/// SSE2; 64 bytes readable at `src + r * ss` for `r < 16`, 16 bytes
/// writable at `dst + c * ds` for `c < 64`.
#[target_feature(enable = "sse2")]
unsafe fn wide_cols(src: *const u8, ss: usize, dst: *mut u8, ds: usize) {
    let lines: [[__m128i; 4]; 16] = core::array::from_fn(|r| {
        // SAFETY: guaranteed by the caller.
        core::array::from_fn(|k| unsafe { _mm_loadu_si128(src.add(r * ss + 16 * k).cast()) })
    });
    for k in 0..4 {
        let mut x = lines.map(|line| line[k]);
        interleave(&mut x);
        for (c, v) in x.iter().enumerate() {
            // SAFETY: guaranteed by the caller.
            unsafe { _mm_storeu_si128(dst.add((16 * k + c) * ds).cast(), *v) };
        }
    }
}

/// `cols < 16 <= rows`: reads 16 bytes per row (past the row's end, but
/// inside `src_len`) and stores the first `cols` columns. Returns the number
/// of rows done; the caller finishes the rest.
///
/// # Safety
/// SSE2; `src` is readable for `src_len` bytes, matrices fit their buffers.
#[target_feature(enable = "sse2")]
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
/// SSE2; matrices fit their buffers, `ds == rows`.
#[target_feature(enable = "sse2")]
unsafe fn spill(src: *const u8, ss: usize, dst: *mut u8, rows: usize, cols: usize) -> usize {
    let mut c = 0;
    while (c + 15) * rows + 16 <= cols * rows {
        // SAFETY: 16 bytes of each of the `rows` rows from column c (c + 16 <= cols);
        // the last store ends at (c + 15) * rows + 16 <= cols * rows.
        let mut x = unsafe { load16(src.add(c), ss, rows) };
        interleave(&mut x);
        for (k, v) in x.iter().enumerate() {
            // SAFETY: see above; stores go in increasing address order.
            unsafe { _mm_storeu_si128(dst.add((c + k) * rows).cast(), *v) };
        }
        c += 16;
    }
    c
}
