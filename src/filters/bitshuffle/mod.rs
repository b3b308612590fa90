//! The bit-shuffle filter (filter id 2).
//!
//! Of the `n = len / typesize` items only the first `n8 = n - n % 8` are
//! transformed; the bytes after them (up to 7 items plus the partial item)
//! are copied unchanged. The `n8` items are seen as a matrix of bits:
//! output *bit-row* `r = 8 * j + b` (`j` a byte of the item, `b` a bit of
//! that byte, least significant first) is `m = n8 / 8` bytes long and holds
//! bit `b` of byte `j` of every item, item `i` at bit `i % 8` of byte
//! `i / 8`. The output is byte-identical to c-blosc2's `blosc2_bitshuffle`
//! and its internal `bitunshuffle`, including the old rule of
//! format-version-2 (Blosc1 era) chunks.
//!
//! How: the items are processed in tiles of a few KiB held in a stack
//! buffer (no allocation, no block-sized temporary), in two steps per tile
//! (see `forward_tiled`): a byte transpose with the shuffle filter's
//! transpose (one row per item byte), then, for each row, an 8×8 bit
//! transpose of every group of 8 items combined with a byte transpose
//! straight into the 8 bit-rows. Unshuffling runs the same steps backwards.
//! The building blocks come in four versions: `scalar` (portable), `sse2`
//! and `avx2` (x86_64 only, chosen at run time) and `neon` (aarch64, where
//! NEON is part of the baseline); the best one is chosen on first use and
//! cached.
//!
//! Preconditions (checked with `assert!`, a violation is a programming
//! error and panics): `src.len() == dst.len()` and `typesize >= 1`.
//! Validating the typesize against Blosc's 1..=256 range is the caller's job;
//! larger values work too.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod sse2;
#[cfg(test)]
mod tests;

use std::sync::OnceLock;

use super::shuffle::{self, TransposeFn};

/// One implementation of the filter: the tiled driver below with a set of
/// building blocks.
#[derive(Clone, Copy)]
pub(crate) struct Kernels {
    /// "scalar", "sse2", "avx2" or "neon" (for tests and benchmarks).
    #[cfg_attr(not(test), allow(dead_code))]
    pub name: &'static str,
    ops: Ops,
}

/// Building blocks of the tiled driver (for SIMD versions, safe entry
/// points handed out only once the CPU features they need were detected).
#[derive(Clone, Copy)]
struct Ops {
    /// The shuffle filter's byte-matrix transpose.
    transpose: TransposeFn,
    /// `(bytes, out, m)`: `bytes` holds one item byte of consecutive items,
    /// 8 items per 8-byte group; bit-transposes each group into the 8
    /// bit-rows `out[b * m..][..bytes.len() / 8]`. `bytes` may be clobbered.
    to_planes: fn(&mut [u8], &mut [u8], usize),
    /// `(src, m, bytes)`: the inverse, from the 8 bit-rows `src[b * m..]`.
    from_planes: fn(&[u8], usize, &mut [u8]),
}

const SCALAR: Kernels = Kernels {
    name: "scalar",
    ops: Ops {
        transpose: shuffle::scalar::transpose,
        to_planes: scalar::to_planes,
        from_planes: scalar::from_planes,
    },
};

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

/// Bit-shuffles one block (see the module documentation).
///
/// # Panics
/// If `src.len() != dst.len()` or `typesize == 0`.
pub fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bitshuffle_with(best(), typesize, src, dst);
}

/// Undoes [`bitshuffle`]. `format_version` is the chunk's format version
/// byte: version 2 (Blosc1 era) chunks used the old rule, where a block
/// whose item count is not a multiple of 8 was stored as is, and otherwise
/// all its whole items were bit-shuffled. For that old rule, bytes after the
/// last whole item (which c-blosc2 leaves unwritten) are copied unchanged.
///
/// # Panics
/// If `src.len() != dst.len()` or `typesize == 0`.
pub fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8], format_version: u8) {
    bitunshuffle_with(best(), typesize, src, dst, format_version);
}

fn check(typesize: usize, src: &[u8], dst: &[u8]) {
    assert_eq!(src.len(), dst.len(), "bitshuffle: source and destination lengths differ");
    assert!(typesize >= 1, "bitshuffle: typesize must be at least 1");
}

pub(crate) fn bitshuffle_with(k: &Kernels, typesize: usize, src: &[u8], dst: &mut [u8]) {
    check(typesize, src, dst);
    let body = (src.len() / typesize) / 8 * 8 * typesize;
    let (s, d) = (&src[..body], &mut dst[..body]);
    match body {
        0 => {}
        1..=SMALL => forward_tiled::<SMALL>(&k.ops, typesize, s, d),
        _ => forward_tiled::<TILE>(&k.ops, typesize, s, d),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

pub(crate) fn bitunshuffle_with(
    k: &Kernels,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    format_version: u8,
) {
    check(typesize, src, dst);
    let n = src.len() / typesize;
    let body = if format_version == 2 {
        if n.is_multiple_of(8) {
            n * typesize
        } else {
            0
        }
    } else {
        n / 8 * 8 * typesize
    };
    let (s, d) = (&src[..body], &mut dst[..body]);
    match body {
        0 => {}
        1..=SMALL => backward_tiled::<SMALL>(&k.ops, typesize, s, d),
        _ => backward_tiled::<TILE>(&k.ops, typesize, s, d),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Asserts the contract of the body transforms (`src.len() == dst.len() ==
/// n8 * typesize`, `n8 % 8 == 0`); returns `n8 / 8`, the length of a bit-row.
fn body_rows(typesize: usize, src: &[u8], dst: &[u8]) -> usize {
    assert!(typesize >= 1 && src.len() == dst.len() && src.len().is_multiple_of(8 * typesize));
    src.len() / (8 * typesize)
}

/// Stack bytes of one tile (zeroed per call, so small blocks use [`SMALL`]).
const TILE: usize = 8192;
const SMALL: usize = 1024;
/// A tile buffer, aligned for the SIMD stores into it.
#[repr(align(64))]
struct Tile<const N: usize>([u8; N]);

/// Most item bytes handled per tile.
const JMAX: usize = 32;

/// Splits the item bytes `0..ts` into ranges `(j0, jw)` of at most `JMAX`
/// bytes, of nearly equal widths; the first range is the widest.
fn byte_ranges(ts: usize) -> impl Iterator<Item = (usize, usize)> {
    let k = ts.div_ceil(JMAX);
    (0..k).map(move |i| ((i * ts).div_ceil(k), ((i + 1) * ts).div_ceil(k) - (i * ts).div_ceil(k)))
}

/// Bit-shuffles `n8` items a tile of `e` items at a time, in a stack
/// buffer `t`, for a range of up to `JMAX` item bytes `j0 ..` at a time:
/// 1. byte-transpose the items into `t`: row `jj` = byte `j0 + jj` of each item;
/// 2. bit-transpose each 8-byte group of a row into the 8 bit-rows of its
///    item byte (`Ops::to_planes`).
fn forward_tiled<const N: usize>(ops: &Ops, ts: usize, src: &[u8], dst: &mut [u8]) {
    let m = body_rows(ts, src, dst);
    let n8 = 8 * m;
    let items = (N / ts.div_ceil(ts.div_ceil(JMAX))) & !31;
    let mut buf = Tile([0u8; N]);
    for e0 in (0..n8).step_by(items) {
        let e = items.min(n8 - e0);
        for (j0, jw) in byte_ranges(ts) {
            let t = &mut buf.0[..e * jw];
            if ts == 1 {
                t.copy_from_slice(&src[e0..e0 + e]);
            } else {
                (ops.transpose)(&src[e0 * ts + j0..], ts, t, e, e, jw);
            }
            for (jj, row) in t.chunks_exact_mut(e).enumerate() {
                (ops.to_planes)(row, &mut dst[8 * (j0 + jj) * m + e0 / 8..], m);
            }
        }
    }
}

/// Undoes [`forward_tiled`], for a tile of `q` groups of 8 items:
/// 1. bit-transpose the 8 bit-rows of each item byte `j0 + jj` into row `jj`
///    of `t`: byte `j0 + jj` of each item (`Ops::from_planes`);
/// 2. byte-transpose the rows into the items.
///
/// Typesize 1 needs no buffer: step 1 already gives the items.
fn backward_tiled<const N: usize>(ops: &Ops, ts: usize, src: &[u8], dst: &mut [u8]) {
    let m = body_rows(ts, src, dst);
    if ts == 1 {
        for q0 in (0..m).step_by(N / 8) {
            (ops.from_planes)(&src[q0..], m, &mut dst[8 * q0..(8 * q0 + N).min(8 * m)]);
        }
        return;
    }
    let g = N / (8 * ts.div_ceil(ts.div_ceil(JMAX)));
    let groups = if g >= 32 { g & !31 } else { g };
    let mut buf = Tile([0u8; N]);
    for q0 in (0..m).step_by(groups) {
        let q = groups.min(m - q0);
        for (j0, jw) in byte_ranges(ts) {
            let t = &mut buf.0[..8 * jw * q];
            for (jj, row) in t.chunks_exact_mut(8 * q).enumerate() {
                (ops.from_planes)(&src[8 * (j0 + jj) * m + q0..], m, row);
            }
            (ops.transpose)(t, 8 * q, &mut dst[8 * q0 * ts + j0..], ts, jw, 8 * q);
        }
    }
}
