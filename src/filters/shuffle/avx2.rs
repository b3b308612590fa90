//! AVX2 byte-matrix transpose, 32 rows or columns per step.
//!
//! Same building blocks as the SSE2 version (see `sse2.rs`), run on 256-bit
//! vectors. AVX2 byte shuffles work within 128-bit lanes, so each lane does
//! an independent SSE2-sized job: the lanes are loaded from (or stored to)
//! two different 16-row (or 16-column) groups. Shapes too small for that go
//! to the SSE2 version, which falls back to scalar code in turn.

#![deny(unsafe_op_in_unsafe_fn)]

use core::arch::x86_64::*;

use super::sse2::{self, NARROW_MIN};
use super::{aligned_block_starts, block_starts, check_matrix, crowded, Kernels, Plane};

/// The AVX2 kernels, if the CPU has AVX2.
pub(crate) fn kernels() -> Option<Kernels> {
    is_x86_feature_detected!("avx2").then_some(Kernels {
        name: "avx2",
        transpose: transpose_entry,
        unshuffle_planes: Some(unshuffle_planes_entry),
    })
}

fn unshuffle_planes_entry(scratch: &[u8], planes: &[Plane<'_>], dst: &mut [u8]) -> bool {
    // SAFETY: each call: handed out by `kernels()` only, after AVX2 was detected.
    unsafe {
        match planes.len() {
            2 => scatter_planes::<2>(scratch, planes, dst),
            4 => scatter_planes::<4>(scratch, planes, dst),
            8 => scatter_planes::<8>(scratch, planes, dst),
            _ => false,
        }
    }
}

/// Unshuffles `R` rows of `n = scratch.len() / R` bytes into `dst`, each
/// row read where its [`Plane`] says: row `j` of `scratch`, a slice
/// elsewhere (a stream stored as is, never copied into `scratch`), or a
/// byte repeated, loaded from a 32-byte pattern on the stack (in L1) at
/// every step, which saves filling the row and reading it back. `false`
/// (nothing written) when `n < 32`.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If `planes.len() != R`, a [`Plane::Bytes`] slice is shorter than `n` or
/// `dst` is shorter than `n * R` bytes.
#[target_feature(enable = "avx2")]
unsafe fn scatter_planes<const R: usize>(scratch: &[u8], planes: &[Plane<'_>], dst: &mut [u8]) -> bool {
    let n = scratch.len() / R;
    assert!(planes.len() == R && dst.len() >= n * R);
    if n < 32 {
        return false;
    }
    let mut patterns = [[0u8; 32]; R];
    let mut base = [scratch.as_ptr(); R];
    let mut step = [1usize; R];
    for j in 0..R {
        match planes[j] {
            Plane::Run(b) => {
                patterns[j] = [b; 32];
                base[j] = patterns[j].as_ptr();
                step[j] = 0;
            }
            Plane::Bytes(bytes) => {
                assert!(bytes.len() >= n, "scatter_planes: a plane is shorter than the block's");
                base[j] = bytes.as_ptr();
            }
            // SAFETY: row j starts inside `scratch` (j < R, n * R <= scratch.len()).
            Plane::Scratch => base[j] = unsafe { scratch.as_ptr().add(j * n) },
        }
    }
    let d = dst.as_mut_ptr();
    for c in aligned_block_starts(n, 32, d as usize, R) {
        let mut x = [_mm256_setzero_si256(); R];
        for j in 0..R {
            // SAFETY: a run row reads its 32-byte pattern (step 0); any other
            // row reads columns c .. c+32 <= n of a row of at least n bytes.
            x[j] = unsafe { _mm256_loadu_si256(base[j].add(c * step[j]).cast()) };
        }
        interleave(&mut x);
        // SAFETY: bytes c*R .. (c+32)*R <= n*R of the destination.
        unsafe { scatter_store(x, d.add(c * R)) };
    }
    true
}

fn transpose_entry(src: &[u8], ss: usize, dst: &mut [u8], ds: usize, rows: usize, cols: usize) {
    // SAFETY: this function is private and only handed out by `kernels()`,
    // after AVX2 support was detected.
    unsafe { transpose(src, ss, dst, ds, rows, cols) }
}

/// `dst[c * ds + r] = src[r * ss + c]` for `r < rows`, `c < cols`.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If either matrix does not fit its slice (see [`super::fits`]).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn transpose(src: &[u8], ss: usize, dst: &mut [u8], ds: usize, rows: usize, cols: usize) {
    check_matrix(src.len(), ss, dst.len(), ds, rows, cols);
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    // SAFETY: all calls below: the matrices fit their slices (checked above),
    // each helper's shape precondition is tested right before it, and AVX2
    // implies SSE2.
    unsafe {
        if rows >= 32 && ss == cols && matches!(cols, 2 | 4 | 8) {
            match cols {
                2 => gather_pow2::<2>(s, d, ds, rows, |_| ()),
                4 => gather_pow2::<4>(s, d, ds, rows, |_| ()),
                _ => gather_pow2::<8>(s, d, ds, rows, |_| ()),
            }
        } else if cols >= 32 && ds == rows && matches!(rows, 2 | 4 | 8) {
            match rows {
                2 => scatter_pow2::<2>(s, ss, d, cols, |_| ()),
                4 => scatter_pow2::<4>(s, ss, d, cols, |_| ()),
                _ => scatter_pow2::<8>(s, ss, d, cols, |_| ()),
            }
        } else if rows >= 32 && cols >= 16 && rows >= cols {
            // Items of 16 bytes (typesize 16) get a fixed source stride.
            match (ss, cols) {
                (16, 16) => row_blocks::<16>(s, ss, d, ds, rows, cols),
                _ => row_blocks::<0>(s, ss, d, ds, rows, cols),
            }
        } else if cols >= 32 && rows >= 16 {
            match (ds, rows) {
                (16, 16) => col_blocks::<16>(s, ss, d, ds, rows, cols),
                _ => col_blocks::<0>(s, ss, d, ds, rows, cols),
            }
        } else if rows >= 32 && (NARROW_MIN..16).contains(&cols) {
            let done = narrow(s, src.len(), ss, d, ds, rows, cols);
            // (A source that runs on past its last row may have let every row go.)
            if done < rows {
                sse2::transpose(&src[done * ss..], ss, &mut dst[done..], ds, rows - done, cols);
            }
        } else if cols >= 32 && (NARROW_MIN..16).contains(&rows) && ds == rows {
            let done = spill(s, ss, d, rows, cols);
            if done < cols {
                sse2::transpose(&src[done..], ss, &mut dst[done * ds..], ds, rows, cols - done);
            }
        } else {
            sse2::transpose(src, ss, dst, ds, rows, cols);
        }
    }
}

/// Bit-shuffle hook: transposes `rows >= 32` rows of 8 contiguous bytes at
/// `src` into 8 rows of `dst` (stride `ds`), applying `then` to each block
/// of 8 output vectors (32 columns of the 8 rows) before storing it.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If `rows < 32` or either matrix does not fit its slice.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn gather8_then(
    src: &[u8],
    dst: &mut [u8],
    ds: usize,
    rows: usize,
    then: impl Fn(&mut [__m256i; 8]) + Copy,
) {
    assert!(rows >= 32);
    check_matrix(src.len(), 8, dst.len(), ds, rows, 8);
    // SAFETY: shapes checked above.
    unsafe { gather_pow2::<8>(src.as_ptr(), dst.as_mut_ptr(), ds, rows, then) }
}

/// Bit-shuffle hook: transposes 8 rows (stride `ss`) of `cols >= 32` bytes
/// at `src` into `cols` columns of 8 contiguous bytes, applying `first` to
/// each block of 8 loaded row vectors (32 columns) before transposing it.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If `cols < 32` or either matrix does not fit its slice.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn scatter8_with(
    src: &[u8],
    ss: usize,
    dst: &mut [u8],
    cols: usize,
    first: impl Fn(&mut [__m256i; 8]) + Copy,
) {
    assert!(cols >= 32);
    check_matrix(src.len(), ss, dst.len(), 8, 8, cols);
    // SAFETY: shapes checked above.
    unsafe { scatter_pow2::<8>(src.as_ptr(), ss, dst.as_mut_ptr(), cols, first) }
}

/// Per lane, as `sse2::interleave`.
#[target_feature(enable = "avx2")]
#[inline]
fn interleave<const R: usize>(x: &mut [__m256i; R]) {
    unit_interleave(x, |p, q| (_mm256_unpacklo_epi8(p, q), _mm256_unpackhi_epi8(p, q)));
}

/// Loads 16 bytes at `lo` into the low lane and 16 bytes at `hi` into the high one.
///
/// # Safety
/// AVX2; both 16-byte ranges are readable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn load2(lo: *const u8, hi: *const u8) -> __m256i {
    // SAFETY: guaranteed by the caller.
    unsafe { _mm256_loadu2_m128i(hi.cast(), lo.cast()) }
}

/// Rows of `C` contiguous bytes (`C` = 2, 4, 8), `rows >= 32`; `then` is
/// applied to each block's `C` output vectors before they are stored. Low lanes
/// take rows `r..r+16`, high lanes rows `r+16..r+32`. Within a lane, a byte
/// shuffle first groups the bytes of its `16 / C` rows by column; the `C`
/// vectors then form a `C × C` matrix of such groups, which is transposed
/// with `unpack` at the group's width.
///
/// # Safety
/// AVX2; `src` holds `rows * C` bytes, `dst` holds the `C × rows` matrix of stride `ds`.
#[target_feature(enable = "avx2")]
unsafe fn gather_pow2<const C: usize>(
    src: *const u8,
    dst: *mut u8,
    ds: usize,
    rows: usize,
    then: impl Fn(&mut [__m256i; C]) + Copy,
) {
    let group = group_by_column::<C>();
    if C == 8 && rows >= 64 && ds.is_multiple_of(4096) {
        // All 8 output rows share one L1 set: write each 64-byte line at
        // once (two blocks per step) so no line is evicted half-written.
        for r in aligned_block_starts(rows, 64, dst as usize, 1) {
            // SAFETY: rows r .. r+64 are inside the source.
            let (mut a, mut b) = unsafe {
                (gather_block::<C>(src.add(r * C), group), gather_block::<C>(src.add((r + 32) * C), group))
            };
            then(&mut a);
            then(&mut b);
            for j in 0..C {
                // SAFETY: output row j, columns r .. r+64, is inside the destination.
                unsafe {
                    _mm256_storeu_si256(dst.add(j * ds + r).cast(), a[j]);
                    _mm256_storeu_si256(dst.add(j * ds + r + 32).cast(), b[j]);
                }
            }
        }
        return;
    }
    for r in aligned_block_starts(rows, 32, dst as usize, 1) {
        // SAFETY: rows r .. r+32 are inside the source.
        let mut a = unsafe { gather_block::<C>(src.add(r * C), group) };
        then(&mut a);
        for (j, v) in a.iter().enumerate() {
            // SAFETY: output row j, columns r .. r+32, is inside the destination.
            unsafe { _mm256_storeu_si256(dst.add(j * ds + r).cast(), *v) };
        }
    }
}

/// Transposes the 32 rows of `C` bytes at `src` into `C` vectors of 32 bytes.
///
/// # Safety
/// AVX2; `32 * C` bytes readable at `src`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn gather_block<const C: usize>(src: *const u8, group: __m256i) -> [__m256i; C] {
    let mut x = [_mm256_setzero_si256(); C];
    for (p, v) in x.iter_mut().enumerate() {
        // SAFETY: guaranteed by the caller.
        *v = _mm256_shuffle_epi8(unsafe { load2(src.add(16 * p), src.add(16 * p + 16 * C)) }, group);
    }
    transpose_groups(&mut x);
    x
}

/// `pshufb` control gathering, in each lane of `16 / C` rows of `C` bytes,
/// byte `j` of every row into group `j`.
#[target_feature(enable = "avx2")]
#[inline]
fn group_by_column<const C: usize>() -> __m256i {
    let mut idx = [0u8; 32];
    let per_lane = 16 / C;
    for (k, b) in idx.iter_mut().enumerate() {
        let (j, row) = ((k % 16) / per_lane, (k % 16) % per_lane);
        *b = (row * C + j) as u8;
    }
    // SAFETY: `idx` is 32 readable bytes.
    unsafe { _mm256_loadu_si256(idx.as_ptr().cast()) }
}

/// Transposes the `C × C` matrix whose entries are the `16 / C`-byte groups
/// of each lane of `x[0..C]`.
#[target_feature(enable = "avx2")]
#[inline]
fn transpose_groups<const C: usize>(x: &mut [__m256i; C]) {
    match C {
        2 => {
            let (a, b) = (x[0], x[1]);
            x[0] = _mm256_unpacklo_epi64(a, b);
            x[1] = _mm256_unpackhi_epi64(a, b);
        }
        4 => unit_interleave::<C>(x, |p, q| (_mm256_unpacklo_epi32(p, q), _mm256_unpackhi_epi32(p, q))),
        _ => unit_interleave::<C>(x, |p, q| (_mm256_unpacklo_epi16(p, q), _mm256_unpackhi_epi16(p, q))),
    }
}

/// The `interleave` network with a given pair of unpacks (their width is the unit).
#[target_feature(enable = "avx2")]
#[inline]
fn unit_interleave<const R: usize>(
    x: &mut [__m256i; R],
    unpack: impl Fn(__m256i, __m256i) -> (__m256i, __m256i),
) {
    // Counted rounds (not `while streams > 1`) so that the loops unroll and
    // the arrays stay in registers.
    for round in 0..R.trailing_zeros() {
        let pieces = 1 << round;
        let half = R >> (round + 1);
        let mut y = *x;
        for j in 0..half {
            for i in 0..pieces {
                let (lo, hi) = unpack(x[j * pieces + i], x[(j + half) * pieces + i]);
                y[j * 2 * pieces + 2 * i] = lo;
                y[j * 2 * pieces + 2 * i + 1] = hi;
            }
        }
        *x = y;
    }
}

/// `R` rows into columns of `R` contiguous bytes, `cols >= 32`. Low lanes
/// hold columns `c..c+16`, high lanes columns `c+16..c+32`. `first` is
/// applied to each block's `R` loaded row vectors (`R == 2` ignores it).
///
/// # Safety
/// AVX2; `src` holds the `R × cols` matrix of stride `ss`, `dst` holds `cols * R` bytes.
#[target_feature(enable = "avx2")]
unsafe fn scatter_pow2<const R: usize>(
    src: *const u8,
    ss: usize,
    dst: *mut u8,
    cols: usize,
    first: impl Fn(&mut [__m256i; R]) + Copy,
) {
    if R == 2 {
        // SAFETY: same preconditions.
        return unsafe { scatter2(src, ss, dst, cols) };
    }
    for c in aligned_block_starts(cols, 32, dst as usize, R) {
        // SAFETY: columns c .. c+32 of the R rows are inside the source,
        // bytes c*R .. (c+32)*R inside the destination.
        unsafe { scatter_store(scatter_load::<R>(src.add(c), ss, first), dst.add(c * R)) };
    }
}

/// `scatter_pow2::<2>`: with the 8-byte quarters of each row reordered
/// first (0, 2, 1, 3), the in-lane unpacks directly give 32 contiguous bytes.
///
/// # Safety
/// As `scatter_pow2`.
#[target_feature(enable = "avx2")]
unsafe fn scatter2(src: *const u8, ss: usize, dst: *mut u8, cols: usize) {
    for c in aligned_block_starts(cols, 32, dst as usize, 2) {
        // SAFETY: columns c .. c+32 of both rows are inside the source,
        // bytes 2c .. 2c+64 inside the destination.
        unsafe {
            let a = _mm256_permute4x64_epi64::<0xd8>(_mm256_loadu_si256(src.add(c).cast()));
            let b = _mm256_permute4x64_epi64::<0xd8>(_mm256_loadu_si256(src.add(ss + c).cast()));
            _mm256_storeu_si256(dst.add(2 * c).cast(), _mm256_unpacklo_epi8(a, b));
            _mm256_storeu_si256(dst.add(2 * c + 32).cast(), _mm256_unpackhi_epi8(a, b));
        }
    }
}

/// Loads 32 columns of `R` rows, applies `first`, and interleaves them (per lane).
///
/// # Safety
/// AVX2; 32 bytes readable at `src + j * ss` for `j < R`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn scatter_load<const R: usize>(
    src: *const u8,
    ss: usize,
    first: impl Fn(&mut [__m256i; R]),
) -> [__m256i; R] {
    let mut x = [_mm256_setzero_si256(); R];
    for (j, v) in x.iter_mut().enumerate() {
        // SAFETY: guaranteed by the caller.
        *v = unsafe { _mm256_loadu_si256(src.add(j * ss).cast()) };
    }
    first(&mut x);
    interleave(&mut x);
    x
}

/// Stores the `32 * R` bytes of 32 interleaved columns: low lanes are the
/// first 16 columns, high lanes the next 16.
///
/// # Safety
/// AVX2; `32 * R` bytes writable at `dst`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn scatter_store<const R: usize>(x: [__m256i; R], dst: *mut u8) {
    for half in 0..2 {
        for t in 0..R / 2 {
            let v = match half {
                0 => _mm256_permute2x128_si256::<0x20>(x[2 * t], x[2 * t + 1]),
                _ => _mm256_permute2x128_si256::<0x31>(x[2 * t], x[2 * t + 1]),
            };
            // SAFETY: guaranteed by the caller.
            unsafe { _mm256_storeu_si256(dst.add(16 * R * half + 32 * t).cast(), v) };
        }
    }
}

/// `K` if non-zero (a stride known at compile time), else `v`.
#[inline(always)]
fn pick<const K: usize>(v: usize) -> usize {
    if K == 0 {
        v
    } else {
        debug_assert_eq!(v, K);
        K
    }
}

/// Transposes 32 rows × 16 columns at `src` (rows `16..32` in the high
/// lanes): vector `c` holds column `c` of the 32 rows.
///
/// # Safety
/// AVX2; 16 bytes readable at `src + r * ss` for `r < 32`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn row_tile<const SS: usize>(src: *const u8, ss: usize) -> [__m256i; 16] {
    let ss = pick::<SS>(ss);
    let mut x = [_mm256_setzero_si256(); 16];
    for (r, v) in x.iter_mut().enumerate() {
        // SAFETY: guaranteed by the caller.
        *v = unsafe { load2(src.add(r * ss), src.add((r + 16) * ss)) };
    }
    interleave(&mut x);
    x
}

/// Stores the first `n` vectors of `x` at `dst + c * ds`.
///
/// # Safety
/// AVX2; 32 bytes writable at each of those addresses.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store_rows(x: &[__m256i; 16], dst: *mut u8, ds: usize, n: usize) {
    for (c, v) in x.iter().enumerate().take(n) {
        // SAFETY: guaranteed by the caller.
        unsafe { _mm256_storeu_si256(dst.add(c * ds).cast(), *v) };
    }
}

/// Transposes 16 rows × 32 columns given as vectors (columns `16..32` in
/// the high lanes) and stores the 32 output rows with 16-byte stores at
/// `dst + c * ds`, in increasing address order.
///
/// # Safety
/// AVX2; 16 bytes writable at `dst + c * ds` for `c < 32`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn col_tile<const DS: usize>(mut x: [__m256i; 16], dst: *mut u8, ds: usize) {
    let ds = pick::<DS>(ds);
    interleave(&mut x);
    for (c, v) in x.iter().enumerate() {
        // SAFETY: guaranteed by the caller.
        unsafe { _mm_storeu_si128(dst.add(c * ds).cast(), _mm256_castsi256_si128(*v)) };
    }
    for (c, v) in x.iter().enumerate() {
        // SAFETY: guaranteed by the caller.
        unsafe { _mm_storeu_si128(dst.add((c + 16) * ds).cast(), _mm256_extracti128_si256::<1>(*v)) };
    }
}

/// Loads 32 bytes from each of the first `n` of 16 rows (others are zero).
///
/// # Safety
/// AVX2; 32 bytes readable at `src + r * ss` for `r < n`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn load_rows(src: *const u8, ss: usize, n: usize) -> [__m256i; 16] {
    let mut x = [_mm256_setzero_si256(); 16];
    for (r, v) in x.iter_mut().enumerate().take(n) {
        // SAFETY: guaranteed by the caller.
        *v = unsafe { _mm256_loadu_si256(src.add(r * ss).cast()) };
    }
    x
}

/// `rows >= 32`, `16 <= cols <= rows`: 32×16 blocks (64×16 when the output
/// rows are crowded), row blocks outermost.
///
/// # Safety
/// AVX2; both matrices fit their buffers.
#[target_feature(enable = "avx2")]
unsafe fn row_blocks<const SS: usize>(
    src: *const u8,
    ss: usize,
    dst: *mut u8,
    ds: usize,
    rows: usize,
    cols: usize,
) {
    let wide = rows >= 64 && crowded(ds);
    for r in aligned_block_starts(rows, if wide { 64 } else { 32 }, dst as usize, 1) {
        for c in block_starts(cols, 16) {
            // SAFETY: the block lies inside both matrices.
            unsafe {
                let x = row_tile::<SS>(src.add(r * ss + c), ss);
                if wide {
                    let y = row_tile::<SS>(src.add((r + 32) * ss + c), ss);
                    for k in 0..16 {
                        _mm256_storeu_si256(dst.add((c + k) * ds + r).cast(), x[k]);
                        _mm256_storeu_si256(dst.add((c + k) * ds + r + 32).cast(), y[k]);
                    }
                } else {
                    store_rows(&x, dst.add(c * ds + r), ds, 16);
                }
            }
        }
    }
}

/// `cols >= 32`, `rows >= 16`: 16×32 blocks, column blocks outermost.
/// (Unlike `row_blocks`, reading crowded rows 64 bytes at a time was
/// measured not to help.)
///
/// # Safety
/// AVX2; both matrices fit their buffers.
#[target_feature(enable = "avx2")]
unsafe fn col_blocks<const DS: usize>(
    src: *const u8,
    ss: usize,
    dst: *mut u8,
    ds: usize,
    rows: usize,
    cols: usize,
) {
    for r in block_starts(rows, 16) {
        for c in block_starts(cols, 32) {
            // SAFETY: the block lies inside both matrices.
            unsafe { col_tile::<DS>(load_rows(src.add(r * ss + c), ss, 16), dst.add(c * ds + r), ds) };
        }
    }
}

/// `cols < 16`, `rows >= 32`: as `sse2::narrow`, 32 rows per step.
///
/// # Safety
/// AVX2; `src` is readable for `src_len` bytes, matrices fit their buffers.
#[target_feature(enable = "avx2")]
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
    while r + 32 <= rows && (r + 31) * ss + 16 <= src_len {
        // SAFETY: the loads end at or before `src_len`; the stores are the
        // block's `cols` output rows, columns r .. r+32.
        unsafe { store_rows(&row_tile::<0>(src.add(r * ss), ss), dst.add(r), ds, cols) };
        r += 32;
    }
    r
}

/// `rows < 16`, `ds == rows`, `cols >= 32`: as `sse2::spill`, 32 columns per step.
///
/// # Safety
/// AVX2; matrices fit their buffers, `ds == rows`.
#[target_feature(enable = "avx2")]
unsafe fn spill(src: *const u8, ss: usize, dst: *mut u8, rows: usize, cols: usize) -> usize {
    if rows == 12 {
        // SAFETY: same preconditions.
        return unsafe { spill12(src, ss, dst, cols) };
    }
    let mut c = 0;
    while (c + 31) * rows + 16 <= cols * rows {
        // SAFETY: columns c .. c+32 < cols of the `rows` rows are read; the
        // last store ends at (c + 31) * rows + 16 <= cols * rows.
        unsafe { col_tile::<0>(load_rows(src.add(c), ss, rows), dst.add(c * rows), rows) };
        c += 32;
    }
    c
}

/// `spill` for 12 rows (12-byte items, a common shape): the padded 16-byte
/// columns are paired across lanes and their 4-byte padding squeezed out,
/// so each 32-byte store writes two whole columns (and spills 8 bytes).
///
/// # Safety
/// AVX2; matrices fit their buffers, `ds == 12`.
#[target_feature(enable = "avx2")]
unsafe fn spill12(src: *const u8, ss: usize, dst: *mut u8, cols: usize) -> usize {
    let squeeze = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    let mut c = 0;
    while (c + 30) * 12 + 32 <= cols * 12 {
        // SAFETY: columns c .. c+32 < cols of the 12 rows are read.
        let mut x = unsafe { load_rows(src.add(c), ss, 12) };
        interleave(&mut x);
        for half in 0..2 {
            for k in (0..16).step_by(2) {
                let pair = match half {
                    0 => _mm256_permute2x128_si256::<0x20>(x[k], x[k + 1]),
                    _ => _mm256_permute2x128_si256::<0x31>(x[k], x[k + 1]),
                };
                let v = _mm256_permutevar8x32_epi32(pair, squeeze);
                // SAFETY: columns c + 16 * half + k and the next one; the
                // last store ends at (c + 30) * 12 + 32 <= cols * 12.
                unsafe { _mm256_storeu_si256(dst.add((c + 16 * half + k) * 12).cast(), v) };
            }
        }
        c += 32;
    }
    c
}
