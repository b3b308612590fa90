//! SSE2 building blocks of the tiled bit-shuffle (see `mod.rs`).
//!
//! The bit transposes use `movemask`, which gathers the top bit of 16 bytes:
//! with the bytes doubled (shifted left by one) between rounds, eight
//! `movemask`s yield the eight bit-planes of 16 bytes, 16 bits each.

use core::arch::x86_64::*;

use super::super::shuffle::{block_starts, sse2 as shuffle_sse2};
use super::{scalar, Kernels, Ops};

/// The SSE2 kernels, if the CPU has SSE2 (always true on x86_64).
pub(super) fn kernels() -> Option<Kernels> {
    let transpose = shuffle_sse2::kernels()?.transpose;
    let ops = Ops { transpose, planes: planes_entry, gather: gather_entry, transpose8_all: transpose8_entry };
    Some(Kernels { name: "sse2", ops: Some(ops) })
}

// SAFETY (the three entries): they are private and only handed out by
// `kernels()`, after SSE2 support was detected.

fn planes_entry(bytes: &[u8], dst: &mut [u8], m: usize, row0: usize, col0: usize) {
    unsafe { planes(bytes, dst, m, row0, col0) }
}

fn gather_entry(t: &[u8], dst: &mut [u8], ts: usize, jw: usize, q0: usize, j0: usize) {
    unsafe { gather(t, dst, ts, jw, q0, j0) }
}

fn transpose8_entry(bytes: &mut [u8]) {
    unsafe { transpose8_all(bytes) }
}

/// Asserts that bit-rows `row0 .. row0 + 8` (`m` bytes each) exist in `dst`
/// and that `n` bytes from `col0` fit in a row.
pub(super) fn check_planes(dst_len: usize, m: usize, row0: usize, col0: usize, n: usize) {
    assert!(col0 + n <= m && (row0 + 8) * m <= dst_len, "bitshuffle: bit-rows out of bounds");
}

/// `scalar::planes`, 16 bytes per step.
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `dst`.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn planes(bytes: &[u8], dst: &mut [u8], m: usize, row0: usize, col0: usize) {
    assert!(bytes.len() % 8 == 0);
    check_planes(dst.len(), m, row0, col0, bytes.len() / 8);
    let full = bytes.len() / 16 * 16;
    // SAFETY: `full` bytes are readable; the bit-rows fit (checked above).
    unsafe { planes16(bytes.as_ptr(), full, dst.as_mut_ptr().add(row0 * m + col0), m) };
    scalar::planes(&bytes[full..], dst, m, row0, col0 + full / 8);
}

/// Bit-planes of `len` bytes (a multiple of 16) at `src`: plane `b` goes to
/// `out + b * m`, `len / 8` bytes.
///
/// # Safety
/// SSE2; `len` bytes readable at `src`, `len / 8` bytes writable at
/// `out + b * m` for `b < 8`.
#[target_feature(enable = "sse2")]
#[inline]
pub(super) unsafe fn planes16(src: *const u8, len: usize, out: *mut u8, m: usize) {
    for off in (0..len).step_by(16) {
        // SAFETY: guaranteed by the caller.
        let mut v = unsafe { _mm_loadu_si128(src.add(off).cast()) };
        for b in (0..8).rev() {
            let bits = _mm_movemask_epi8(v) as u16;
            // SAFETY: guaranteed by the caller.
            unsafe { out.add(b * m + off / 8).cast::<u16>().write_unaligned(bits) };
            v = _mm_add_epi8(v, v);
        }
    }
}

/// Asserts the shape contract of `gather`; returns the number of groups.
pub(super) fn check_gather(t_len: usize, dst_len: usize, ts: usize, jw: usize, q0: usize, j0: usize) -> usize {
    let q = t_len / (8 * jw);
    assert!(jw >= 2 && t_len == 8 * jw * q && j0 + jw <= ts, "bitshuffle: bad gather tile");
    assert!((q0 + q) * 8 * ts <= dst_len, "bitshuffle: gather out of bounds");
    q
}

/// Bit-transposes the tile `t` into items (see `Ops::gather`), two item
/// bytes (16 tile bytes) per step; `jw >= 2`.
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// On a tile shape that does not fit `dst` or `ts`.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn gather(t: &[u8], dst: &mut [u8], ts: usize, jw: usize, q0: usize, j0: usize) {
    let q = check_gather(t.len(), dst.len(), ts, jw, q0, j0);
    let (t, d) = (t.as_ptr(), dst.as_mut_ptr());
    for g in 0..q {
        for jj in block_starts(jw, 2) {
            // SAFETY: 16 bytes of group g from item byte jj (jj + 2 <= jw);
            // 2 bytes at item byte j0 + jj of the group's 8 items (j0 + jj + 2 <= ts).
            unsafe {
                let mut v = _mm_loadu_si128(t.add(8 * (g * jw + jj)).cast());
                let out = d.add(8 * (q0 + g) * ts + j0 + jj);
                for k in (0..8).rev() {
                    out.add(k * ts).cast::<u16>().write_unaligned(_mm_movemask_epi8(v) as u16);
                    v = _mm_add_epi8(v, v);
                }
            }
        }
    }
}

/// `scalar::transpose8` on each 64-bit lane.
#[target_feature(enable = "sse2")]
#[inline]
fn transpose8_x2(mut x: __m128i) -> __m128i {
    macro_rules! round {
        ($shift:literal, $mask:literal) => {
            let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<$shift>(x)), _mm_set1_epi64x($mask));
            x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<$shift>(t)));
        };
    }
    round!(7, 0x00aa_00aa_00aa_00aa);
    round!(14, 0x0000_cccc_0000_cccc);
    round!(28, 0x0000_0000_f0f0_f0f0);
    x
}

/// `scalar::transpose8_all`, 16 bytes per step.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn transpose8_all(bytes: &mut [u8]) {
    let full = bytes.len() / 16 * 16;
    let p = bytes.as_mut_ptr();
    for off in (0..full).step_by(16) {
        // SAFETY: off + 16 <= full <= bytes.len().
        unsafe {
            let v = _mm_loadu_si128(p.add(off).cast());
            _mm_storeu_si128(p.add(off).cast(), transpose8_x2(v));
        }
    }
    scalar::transpose8_all(&mut bytes[full..]);
}
