//! Portable building blocks of the tiled bit-shuffle (see `mod.rs`): the
//! version used on non-x86 targets, and the SIMD versions' fallback for
//! rows too short for a vector block.

use super::super::shuffle::scalar::transpose;

/// Transposes the 8×8 bit matrix held in `x`, row `i` being byte `i`
/// (little-endian order) and column `k` bit `k`: afterwards bit `k` of byte
/// `i` is what bit `i` of byte `k` was. Three rounds swap the off-diagonal
/// 1×1, 2×2 and 4×4 sub-blocks.
#[inline]
pub(super) fn transpose8(mut x: u64) -> u64 {
    const ROUNDS: [(u32, u64); 3] =
        [(7, 0x00aa_00aa_00aa_00aa), (14, 0x0000_cccc_0000_cccc), (28, 0x0000_0000_f0f0_f0f0)];
    for (shift, mask) in ROUNDS {
        let t = (x ^ (x >> shift)) & mask;
        x ^= t ^ (t << shift);
    }
    x
}

/// In place, the 8×8 bit transpose of every 8-byte group of `bytes`.
pub(super) fn transpose8_all(bytes: &mut [u8]) {
    for chunk in bytes.chunks_exact_mut(8) {
        let y = transpose8(u64::from_le_bytes((&*chunk).try_into().unwrap()));
        chunk.copy_from_slice(&y.to_le_bytes());
    }
}

/// `Ops::to_planes`: bit-transposes each 8-byte group of `bytes` (clobbered)
/// into the 8 bit-rows `out[b * m..][..bytes.len() / 8]`.
pub(super) fn to_planes(bytes: &mut [u8], out: &mut [u8], m: usize) {
    transpose8_all(bytes);
    transpose(bytes, 8, out, m, bytes.len() / 8, 8);
}

/// `Ops::from_planes`: the inverse of [`to_planes`].
pub(super) fn from_planes(src: &[u8], m: usize, bytes: &mut [u8]) {
    transpose(src, m, bytes, 8, 8, bytes.len() / 8);
    transpose8_all(bytes);
}
