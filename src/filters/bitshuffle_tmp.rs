//! Interim scalar bitshuffle (replaced by the SIMD module).
pub fn bitshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / ts / 8 * 8;
    dst[..n * ts].fill(0);
    let row = n / 8;
    for i in 0..n {
        for b in 0..ts {
            let v = src[i * ts + b];
            for bit in 0..8 {
                if v >> bit & 1 != 0 {
                    dst[(b * 8 + bit) * row + i / 8] |= 1 << (i % 8);
                }
            }
        }
    }
    dst[n * ts..].copy_from_slice(&src[n * ts..]);
}
pub fn bitunshuffle(ts: usize, src: &[u8], dst: &mut [u8], version: u8) {
    let all = src.len() / ts;
    if version == 2 && all % 8 != 0 {
        dst.copy_from_slice(src);
        return;
    }
    let n = all / 8 * 8;
    dst[..n * ts].fill(0);
    let row = n / 8;
    for i in 0..n {
        for b in 0..ts {
            let mut v = 0u8;
            for bit in 0..8 {
                v |= (src[(b * 8 + bit) * row + i / 8] >> (i % 8) & 1) << bit;
            }
            dst[i * ts + b] = v;
        }
    }
    dst[n * ts..].copy_from_slice(&src[n * ts..]);
}
