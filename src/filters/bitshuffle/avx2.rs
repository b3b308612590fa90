//! AVX2 building blocks of the tiled bit-shuffle (see `mod.rs`): the
//! shuffle filter's AVX2 transpose, with the 8×8 bit transposes of
//! `sse2.rs` (on four 64-bit lanes) fused into its 8-byte-row kernels, so
//! each tile row is read and written once. Short rows go to the SSE2 code.

use core::arch::x86_64::*;

use super::super::shuffle::avx2 as shuffle_avx2;
use super::{sse2, Kernels, Ops};

/// The AVX2 kernels, if the CPU has AVX2.
pub(super) fn kernels() -> Option<Kernels> {
    let transpose = shuffle_avx2::kernels()?.transpose;
    let ops = Ops { transpose, to_planes: to_planes_entry, from_planes: from_planes_entry };
    Some(Kernels { name: "avx2", ops: Some(ops) })
}

// SAFETY (both entries): they are private and only handed out by
// `kernels()`, after AVX2 support was detected.

fn to_planes_entry(bytes: &mut [u8], out: &mut [u8], m: usize) {
    unsafe { to_planes(bytes, out, m) }
}

fn from_planes_entry(src: &[u8], m: usize, bytes: &mut [u8]) {
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
    assert!(bytes.len() % 8 == 0);
    let groups = bytes.len() / 8;
    // SAFETY: AVX2 (and so SSE2) is available (guaranteed by the caller).
    unsafe {
        if groups >= 32 {
            shuffle_avx2::gather8_mapped(bytes, out, m, groups, |v| transpose8_x4(v));
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
    assert!(bytes.len() % 8 == 0);
    let groups = bytes.len() / 8;
    // SAFETY: AVX2 (and so SSE2) is available (guaranteed by the caller).
    unsafe {
        if groups >= 32 {
            shuffle_avx2::scatter8_mapped(src, m, bytes, groups, |v| transpose8_x4(v));
        } else {
            sse2::from_planes(src, m, bytes);
        }
    }
}

/// `scalar::transpose8` on each 64-bit lane.
#[target_feature(enable = "avx2")]
#[inline]
fn transpose8_x4(mut x: __m256i) -> __m256i {
    macro_rules! round {
        ($shift:literal, $mask:literal) => {
            let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<$shift>(x)), _mm256_set1_epi64x($mask));
            x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<$shift>(t)));
        };
    }
    round!(7, 0x00aa_00aa_00aa_00aa);
    round!(14, 0x0000_cccc_0000_cccc);
    round!(28, 0x0000_0000_f0f0_f0f0);
    x
}
