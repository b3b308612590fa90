//! SSE2 building blocks of the tiled bit-shuffle (see `mod.rs`).
//!
//! The shuffle filter's byte transposes of 8-byte rows turn a tile row into
//! 8 vectors, vector `k` holding byte `k` of 16 consecutive 8-item groups
//! (or, the other way, the 8 bit-rows' bytes of 16 groups). Bit `b` of
//! vector `k` must become bit `k` of vector `b`: an 8×8 bit transpose per
//! byte position, done across the 8 vectors by three rounds of swapping
//! 4×4, 2×2 and 1×1 bit blocks (shift, mask, xor) between vector pairs.
//! Rows too short for a 16-group block go to the scalar code.

#![deny(unsafe_op_in_unsafe_fn)]

use core::arch::x86_64::*;

use super::super::shuffle::sse2 as shuffle_sse2;
use super::{scalar, Kernels, Ops};

/// The SSE2 kernels, if the CPU has SSE2 (always true on x86_64).
pub(super) fn kernels() -> Option<Kernels> {
    let transpose = shuffle_sse2::kernels()?.transpose;
    let ops = Ops { transpose, to_planes: to_planes_entry, from_planes: from_planes_entry };
    Some(Kernels { name: "sse2", ops })
}

fn to_planes_entry(bytes: &mut [u8], out: &mut [u8], m: usize) {
    // SAFETY: this function is private and only handed out by `kernels()`,
    // after SSE2 support was detected.
    unsafe { to_planes(bytes, out, m) }
}

fn from_planes_entry(src: &[u8], m: usize, bytes: &mut [u8]) {
    // SAFETY: as for `to_planes_entry`.
    unsafe { from_planes(src, m, bytes) }
}

/// See `Ops::to_planes`.
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `out`.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn to_planes(bytes: &mut [u8], out: &mut [u8], m: usize) {
    assert!(bytes.len().is_multiple_of(8));
    let groups = bytes.len() / 8;
    if groups >= 16 {
        // SAFETY: SSE2 is available (guaranteed by the caller).
        unsafe { shuffle_sse2::gather8_then(bytes, out, m, groups, |x| transpose_bits(x)) };
    } else {
        scalar::to_planes(bytes, out, m);
    }
}

/// See `Ops::from_planes`.
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `src`.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn from_planes(src: &[u8], m: usize, bytes: &mut [u8]) {
    assert!(bytes.len().is_multiple_of(8));
    let groups = bytes.len() / 8;
    if groups >= 16 {
        // SAFETY: SSE2 is available (guaranteed by the caller).
        unsafe { shuffle_sse2::scatter8_with(src, m, bytes, groups, |x| transpose_bits(x)) };
    } else {
        scalar::from_planes(src, m, bytes);
    }
}

/// For each byte position, transposes the 8×8 bit matrix whose row `i` is
/// that byte of `x[i]`: afterwards bit `c` of `x[i]` is what bit `i` of
/// `x[c]` was.
#[target_feature(enable = "sse2")]
#[inline]
fn transpose_bits(x: &mut [__m128i; 8]) {
    macro_rules! round {
        ($s:literal, $mask:literal) => {
            let mask = _mm_set1_epi8($mask);
            for i in (0..8).filter(|i| i & $s == 0) {
                // Word shifts leak bits across bytes only into masked-out positions.
                let t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi16::<$s>(x[i]), x[i + $s]), mask);
                x[i + $s] = _mm_xor_si128(x[i + $s], t);
                x[i] = _mm_xor_si128(x[i], _mm_slli_epi16::<$s>(t));
            }
        };
    }
    round!(4, 0x0f);
    round!(2, 0x33);
    round!(1, 0x55);
}
