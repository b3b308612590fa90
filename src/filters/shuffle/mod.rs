//! The byte-shuffle filter (filter id 1).
//!
//! A block of `n = len / typesize` items is seen as an `n × typesize` byte
//! matrix; shuffling transposes it, so the output holds byte 0 of every item,
//! then byte 1 of every item, and so on. The `len % typesize` bytes after the
//! last whole item are copied unchanged; typesize 1 is a plain copy. The
//! output is byte-identical to c-blosc2's `blosc2_shuffle` /
//! `blosc2_unshuffle` for every length and typesize.
//!
//! Everything is built on one primitive, a strided byte-matrix transpose
//! (`TransposeFn`), which the bitshuffle filter reuses. It comes in three
//! versions: `scalar` (portable, also the SIMD versions' fallback for shapes
//! smaller than a vector block), `sse2` and `avx2` (x86_64 only, chosen at
//! run time) and `neon` (aarch64, chosen at compile time: NEON is part of
//! its baseline); see their module docs. The best one for the running CPU is
//! chosen on first use and cached. Nothing allocates.
//!
//! Preconditions (checked with `assert!`, a violation is a programming
//! error and panics): `src.len() == dst.len()` and `typesize >= 1`.
//! Validating the typesize against Blosc's 1..=256 range is the caller's job;
//! larger values work too.

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
pub(crate) mod neon;
pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2;
#[cfg(test)]
pub(crate) mod tests;

use std::sync::OnceLock;

/// Strided byte-matrix transpose:
/// `dst[c * dst_stride + r] = src[r * src_stride + c]` for `r < rows`, `c < cols`.
pub(crate) type TransposeFn =
    fn(src: &[u8], src_stride: usize, dst: &mut [u8], dst_stride: usize, rows: usize, cols: usize);

/// Unshuffle of `planes.len()` rows of `n = scratch.len() / planes.len()`
/// bytes into `dst` (`n * planes.len()` bytes), each row where its
/// [`Plane`] says (a [`Plane::Scratch`] row is row `j` of `scratch`).
/// `false` when the kernel has no version for that shape (nothing written).
pub(crate) type UnshufflePlanesFn = fn(scratch: &[u8], planes: &[Plane<'_>], dst: &mut [u8]) -> bool;

/// Where one byte plane of a block to unshuffle is (see [`unshuffle_planes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plane<'a> {
    /// In the scratch buffer, at its own place.
    Scratch,
    /// This byte, repeated.
    Run(u8),
    /// The first `n` of these bytes (a stream stored as is, read where it lies).
    Bytes(&'a [u8]),
}

/// One implementation of the transpose primitive.
#[derive(Clone, Copy)]
pub(crate) struct Kernels {
    /// "scalar", "sse2", "avx2" or "neon" (for tests and benchmarks).
    #[cfg_attr(not(test), allow(dead_code))]
    pub name: &'static str,
    /// Panics if either matrix does not fit its slice (see [`fits`]).
    pub transpose: TransposeFn,
    /// An unshuffle that reads each plane where it is and makes the run
    /// planes in registers, if the kernel has one.
    pub unshuffle_planes: Option<UnshufflePlanesFn>,
}

const SCALAR: Kernels = Kernels { name: "scalar", transpose: scalar::transpose, unshuffle_planes: None };

/// Every implementation the running CPU supports, best last.
/// Used by the tests and benchmarks to compare them against each other.
#[allow(dead_code)] // only the tests call it: unused in the library build
pub(crate) fn available() -> Vec<Kernels> {
    #[cfg(target_arch = "x86_64")]
    let simd = [sse2::kernels(), avx2::kernels()];
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let simd = [neon::kernels()];
    #[cfg(not(any(target_arch = "x86_64", all(target_arch = "aarch64", target_feature = "neon"))))]
    let simd: [Option<Kernels>; 0] = [];
    std::iter::once(SCALAR).chain(simd.into_iter().flatten()).collect()
}

/// The best implementation for this CPU, detected once.
fn best() -> &'static Kernels {
    static BEST: OnceLock<Kernels> = OnceLock::new();
    BEST.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = avx2::kernels().or_else(sse2::kernels) {
            return k;
        }
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        if let Some(k) = neon::kernels() {
            return k;
        }
        SCALAR
    })
}

/// Shuffles one block: `dst[j * n + i] = src[i * typesize + j]` for the
/// `n = src.len() / typesize` whole items; trailing bytes are copied as is.
///
/// # Panics
/// If `src.len() != dst.len()` or `typesize == 0`.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    shuffle_with(best(), typesize, src, dst);
}

/// Undoes [`shuffle`]: `dst[i * typesize + j] = src[j * n + i]`; trailing
/// bytes are copied as is.
///
/// # Panics
/// If `src.len() != dst.len()` or `typesize == 0`.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    unshuffle_with(best(), typesize, src, dst);
}

/// Undoes [`shuffle`] of a block whose byte planes were stored separately
/// (as the codec streams of a block split by item byte are): plane `j`
/// (`n = scratch.len() / typesize` bytes) is where `planes[j]` says: at its
/// place in `scratch` (bytes `j * n .. (j + 1) * n`), a run of one byte, or
/// the first `n` bytes of a slice elsewhere (a stream stored as is, read in
/// the chunk itself rather than copied out first). Runs are made in
/// registers and other planes read where they lie when the kernel can;
/// otherwise they are first written into `scratch` (which is why it is
/// mutable), whatever it held there. Trailing bytes are copied as is from
/// `scratch`.
///
/// # Panics
/// If `scratch.len() != dst.len()`, `typesize == 0`, `planes.len() !=
/// typesize` or a [`Plane::Bytes`] slice is shorter than `n`.
pub fn unshuffle_planes(typesize: usize, scratch: &mut [u8], planes: &[Plane<'_>], dst: &mut [u8]) {
    unshuffle_planes_with(best(), typesize, scratch, planes, dst);
}

pub(crate) fn unshuffle_planes_with(
    k: &Kernels,
    typesize: usize,
    scratch: &mut [u8],
    planes: &[Plane<'_>],
    dst: &mut [u8],
) {
    check(typesize, scratch, dst);
    assert_eq!(planes.len(), typesize, "unshuffle_planes: one entry per byte plane");
    let n = scratch.len() / typesize;
    let body = n * typesize;
    assert!(
        planes.iter().all(|p| !matches!(p, Plane::Bytes(b) if b.len() < n)),
        "unshuffle_planes: a plane is shorter than the block's"
    );
    let elsewhere = planes.iter().any(|p| *p != Plane::Scratch);
    if elsewhere
        && typesize > 1
        && k.unshuffle_planes.is_some_and(|f| f(&scratch[..body], planes, &mut dst[..body]))
    {
        dst[body..].copy_from_slice(&scratch[body..]);
        return;
    }
    for (row, plane) in scratch[..body].chunks_exact_mut(n.max(1)).zip(planes) {
        match *plane {
            Plane::Scratch => {}
            Plane::Run(b) => row.fill(b),
            Plane::Bytes(bytes) => row.copy_from_slice(&bytes[..row.len()]),
        }
    }
    unshuffle_with(k, typesize, scratch, dst);
}

/// `dst[c * ds + r] = src[r * ss + c]` for `r < rows`, `c < cols`, by the
/// best kernel for this CPU.
///
/// # Panics
/// If either matrix does not fit its slice.
pub(crate) fn transpose(src: &[u8], ss: usize, dst: &mut [u8], ds: usize, rows: usize, cols: usize) {
    (best().transpose)(src, ss, dst, ds, rows, cols);
}

fn check(typesize: usize, src: &[u8], dst: &[u8]) {
    assert_eq!(src.len(), dst.len(), "shuffle: source and destination lengths differ");
    assert!(typesize >= 1, "shuffle: typesize must be at least 1");
}

pub(crate) fn shuffle_with(k: &Kernels, typesize: usize, src: &[u8], dst: &mut [u8]) {
    check(typesize, src, dst);
    let n = src.len() / typesize;
    let body = n * typesize;
    if typesize > 1 {
        (k.transpose)(&src[..body], typesize, &mut dst[..body], n, n, typesize);
    } else {
        dst[..body].copy_from_slice(&src[..body]);
    }
    dst[body..].copy_from_slice(&src[body..]);
}

pub(crate) fn unshuffle_with(k: &Kernels, typesize: usize, src: &[u8], dst: &mut [u8]) {
    check(typesize, src, dst);
    let n = src.len() / typesize;
    let body = n * typesize;
    if typesize > 1 {
        (k.transpose)(&src[..body], n, &mut dst[..body], typesize, typesize, n);
    } else {
        dst[..body].copy_from_slice(&src[..body]);
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Block starts covering `0..len` with blocks of `b` (`len >= b`); the last
/// one is moved back so it ends exactly at `len` (overlapping its
/// predecessor: SIMD code rewrites a few identical bytes rather than falling
/// back to scalar code for the tail).
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) fn block_starts(len: usize, b: usize) -> impl Iterator<Item = usize> + Clone {
    debug_assert!(len >= b);
    (0..len).step_by(b).map(move |s| s.min(len - b))
}

/// Like [`block_starts`], for blocks written at `base + unit * start`: after
/// a first block at 0, the blocks start where that address is a multiple of
/// 32 (if `unit` allows it), which makes most stores aligned. Blocks may
/// overlap; `b >= 32`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn aligned_block_starts(
    len: usize,
    b: usize,
    base: usize,
    unit: usize,
) -> impl Iterator<Item = usize> + Clone {
    let gap = base.wrapping_neg() % 32;
    let skew = if gap.is_multiple_of(unit) && len > b { gap / unit } else { 0 };
    (skew > 0).then_some(0).into_iter().chain((skew..len).step_by(b).map(move |s| s.min(len - b)))
}

/// True when 16 rows `stride` apart fall into at most two L1 sets (of 64
/// lines of 64 bytes), i.e. at least 8 of them compete for one set. The SIMD
/// versions then access each line of those rows whole, in one go, where that
/// was measured to help.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn crowded(stride: usize) -> bool {
    stride.is_multiple_of(2048)
}

/// True when a `rows × cols` matrix with the given row stride fits in `len`
/// bytes (and rows do not overlap).
pub(crate) fn fits(len: usize, stride: usize, rows: usize, cols: usize) -> bool {
    if rows == 0 || cols == 0 {
        return true;
    }
    stride >= cols
        && (rows - 1).checked_mul(stride).and_then(|x| x.checked_add(cols)).is_some_and(|end| end <= len)
}

/// Asserts the shape contract of every `transpose` implementation.
pub(crate) fn check_matrix(
    src_len: usize,
    src_stride: usize,
    dst_len: usize,
    dst_stride: usize,
    rows: usize,
    cols: usize,
) {
    assert!(fits(src_len, src_stride, rows, cols), "transpose: source matrix out of bounds");
    assert!(fits(dst_len, dst_stride, cols, rows), "transpose: destination matrix out of bounds");
}
