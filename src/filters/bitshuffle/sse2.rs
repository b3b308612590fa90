//! SSE2 building blocks of the tiled bit-shuffle (see `mod.rs`): the
//! shuffle filter's SSE2 transpose and an 8×8 bit transpose of each 64-bit
//! lane (the three rounds of `scalar::transpose8`, two lanes per vector).

use core::arch::x86_64::*;

use super::super::shuffle::sse2 as shuffle_sse2;
use super::{scalar, Kernels, Ops};

/// The SSE2 kernels, if the CPU has SSE2 (always true on x86_64).
pub(super) fn kernels() -> Option<Kernels> {
    let transpose = shuffle_sse2::kernels()?.transpose;
    let ops = Ops { transpose, to_planes: to_planes_entry, from_planes: from_planes_entry };
    Some(Kernels { name: "sse2", ops: Some(ops) })
}

// SAFETY (both entries): they are private and only handed out by
// `kernels()`, after SSE2 support was detected.

fn to_planes_entry(bytes: &mut [u8], out: &mut [u8], m: usize) {
    unsafe { to_planes(bytes, out, m) }
}

fn from_planes_entry(src: &[u8], m: usize, bytes: &mut [u8]) {
    unsafe { from_planes(src, m, bytes) }
}

/// See `Ops::to_planes`: bit transposes in place, then a byte transpose of
/// the `len / 8` groups into the 8 bit-rows.
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `out`.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn to_planes(bytes: &mut [u8], out: &mut [u8], m: usize) {
    assert!(bytes.len() % 8 == 0);
    // SAFETY: SSE2 is available (guaranteed by the caller).
    unsafe {
        transpose8_all(bytes);
        shuffle_sse2::transpose(bytes, 8, out, m, bytes.len() / 8, 8);
    }
}

/// See `Ops::from_planes`: the inverse of [`to_planes`].
///
/// # Safety
/// The CPU must support SSE2.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `src`.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn from_planes(src: &[u8], m: usize, bytes: &mut [u8]) {
    assert!(bytes.len() % 8 == 0);
    let groups = bytes.len() / 8;
    // SAFETY: SSE2 is available (guaranteed by the caller).
    unsafe {
        shuffle_sse2::transpose(src, m, bytes, 8, 8, groups);
        transpose8_all(bytes);
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
unsafe fn transpose8_all(bytes: &mut [u8]) {
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
