//! AVX2 building blocks of the tiled bit-shuffle (see `mod.rs`): as in
//! `sse2.rs`, on 32-byte vectors, using the shuffle filter's AVX2 byte
//! transposes. Rows too short for a 32-group block go to the SSE2 code.

#![deny(unsafe_op_in_unsafe_fn)]

use core::arch::x86_64::*;

use super::super::shuffle::avx2 as shuffle_avx2;
use super::{sse2, Kernels, Ops};

/// The AVX2 kernels, if the CPU has AVX2.
pub(super) fn kernels() -> Option<Kernels> {
    let transpose = shuffle_avx2::kernels()?.transpose;
    let ops = Ops { transpose, to_planes: to_planes_entry, from_planes: from_planes_entry };
    Some(Kernels { name: "avx2", ops })
}

fn to_planes_entry(bytes: &mut [u8], out: &mut [u8], m: usize) {
    // SAFETY: this function is private and only handed out by `kernels()`,
    // after AVX2 support was detected.
    unsafe { to_planes(bytes, out, m) }
}

fn from_planes_entry(src: &[u8], m: usize, bytes: &mut [u8]) {
    // SAFETY: as for `to_planes_entry`.
    unsafe { from_planes(src, m, bytes) }
}

/// See `Ops::to_planes`.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `out`.
#[target_feature(enable = "avx2")]
unsafe fn to_planes(bytes: &mut [u8], out: &mut [u8], m: usize) {
    assert!(bytes.len().is_multiple_of(8));
    let groups = bytes.len() / 8;
    // SAFETY: AVX2 (and so SSE2) is available (guaranteed by the caller).
    unsafe {
        if groups >= 32 {
            shuffle_avx2::gather8_then(bytes, out, m, groups, |x| transpose_bits(x));
        } else {
            sse2::to_planes(bytes, out, m);
        }
    }
}

/// See `Ops::from_planes`.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `src`.
#[target_feature(enable = "avx2")]
unsafe fn from_planes(src: &[u8], m: usize, bytes: &mut [u8]) {
    assert!(bytes.len().is_multiple_of(8));
    let groups = bytes.len() / 8;
    // SAFETY: AVX2 (and so SSE2) is available (guaranteed by the caller).
    unsafe {
        if groups >= 32 {
            shuffle_avx2::scatter8_with(src, m, bytes, groups, |x| transpose_bits(x));
        } else {
            sse2::from_planes(src, m, bytes);
        }
    }
}

/// As `sse2::transpose_bits`, on 32-byte vectors.
#[target_feature(enable = "avx2")]
#[inline]
fn transpose_bits(x: &mut [__m256i; 8]) {
    macro_rules! round {
        ($s:literal, $mask:literal) => {
            let mask = _mm256_set1_epi8($mask);
            for i in (0..8).filter(|i| i & $s == 0) {
                let t = _mm256_and_si256(_mm256_xor_si256(_mm256_srli_epi16::<$s>(x[i]), x[i + $s]), mask);
                x[i + $s] = _mm256_xor_si256(x[i + $s], t);
                x[i] = _mm256_xor_si256(x[i], _mm256_slli_epi16::<$s>(t));
            }
        };
    }
    round!(4, 0x0f);
    round!(2, 0x33);
    round!(1, 0x55);
}
