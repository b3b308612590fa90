//! NEON building blocks of the tiled bit-shuffle (aarch64; see `mod.rs`).
//!
//! As in the SSE2 version, the shuffle filter's byte transposes of 8-byte
//! rows turn a tile row into 8 vectors, vector `k` holding byte `k` of 16
//! consecutive 8-item groups, and an 8×8 bit transpose per byte position
//! runs across them in three rounds of swapping 4×4, 2×2 and 1×1 bit blocks.
//! NEON shifts bytes on their own, so no bit leaks into a neighbour.
//! Rows too short for a 16-group block go to the scalar code.

#![deny(unsafe_op_in_unsafe_fn)]
#![allow(unused_unsafe)] // arithmetic intrinsics are safe on newer compilers, unsafe on older

use core::arch::aarch64::*;

use super::super::shuffle::neon as shuffle_neon;
use super::{scalar, Kernels, Ops};

/// The NEON kernels (always present on aarch64).
pub(super) fn kernels() -> Option<Kernels> {
    let transpose = shuffle_neon::kernels()?.transpose;
    Some(Kernels { name: "neon", ops: Ops { transpose, to_planes, from_planes } })
}

/// See `Ops::to_planes`.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `out`.
fn to_planes(bytes: &mut [u8], out: &mut [u8], m: usize) {
    assert!(bytes.len().is_multiple_of(8));
    let groups = bytes.len() / 8;
    if groups >= 16 {
        shuffle_neon::gather8_then(bytes, out, m, groups, transpose_bits);
    } else {
        scalar::to_planes(bytes, out, m);
    }
}

/// See `Ops::from_planes`.
///
/// # Panics
/// If `bytes.len() % 8 != 0` or the bit-rows do not fit `src`.
fn from_planes(src: &[u8], m: usize, bytes: &mut [u8]) {
    assert!(bytes.len().is_multiple_of(8));
    let groups = bytes.len() / 8;
    if groups >= 16 {
        shuffle_neon::scatter8_with(src, m, bytes, groups, transpose_bits);
    } else {
        scalar::from_planes(src, m, bytes);
    }
}

/// For each byte position, transposes the 8×8 bit matrix whose row `i` is
/// that byte of `x[i]`: afterwards bit `c` of `x[i]` is what bit `i` of
/// `x[c]` was.
#[inline(always)]
fn transpose_bits(x: &mut [uint8x16_t; 8]) {
    macro_rules! round {
        ($s:literal, $mask:literal) => {
            // SAFETY: register-only; NEON is on (compile-time).
            unsafe {
                let mask = vdupq_n_u8($mask);
                for i in (0..8).filter(|i| i & $s == 0) {
                    let t = vandq_u8(veorq_u8(vshrq_n_u8::<$s>(x[i]), x[i + $s]), mask);
                    x[i + $s] = veorq_u8(x[i + $s], t);
                    x[i] = veorq_u8(x[i], vshlq_n_u8::<$s>(t));
                }
            }
        };
    }
    round!(4, 0x0f);
    round!(2, 0x33);
    round!(1, 0x55);
}
