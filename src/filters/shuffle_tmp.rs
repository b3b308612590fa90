//! Interim scalar shuffle (replaced by the SIMD module).
pub fn shuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / ts;
    for i in 0..n {
        for b in 0..ts {
            dst[b * n + i] = src[i * ts + b];
        }
    }
    dst[n * ts..].copy_from_slice(&src[n * ts..]);
}
pub fn unshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / ts;
    for i in 0..n {
        for b in 0..ts {
            dst[i * ts + b] = src[b * n + i];
        }
    }
    dst[n * ts..].copy_from_slice(&src[n * ts..]);
}
