//! Bytedelta (plugin filter 35): the block is seen as `lanes` streams of
//! `len / lanes` bytes each (what shuffle leaves: stream k holds byte k of
//! every item), and each byte of a stream becomes its difference with the
//! byte before it in the same stream (the first with 0). Smooth
//! floating-point data turns into small, repetitive deltas. Bytes after the
//! last whole stream group (`len % lanes`) pass through unchanged. `lanes` is
//! the filter's meta, or the super-chunk's typesize when the meta is 0.
//!
//! Filter 34 (`BYTEDELTA_BUGGY`) is the first version c-blosc2 shipped:
//! c-blosc2 3.3 still decodes (and writes) it. It works on 16-byte groups,
//! and the bytes after the last whole group of a stream restart from 0
//! instead of following the group's last byte. Chunks written with it only
//! decode right with the same rule, so it is kept as is.

/// Encode one block.
pub fn encode(lanes: usize, src: &[u8], dst: &mut [u8]) {
    run(lanes, src, dst, false, encode_stream);
}

/// Decode one block.
pub fn decode(lanes: usize, src: &[u8], dst: &mut [u8]) {
    run(lanes, src, dst, false, decode_stream);
}

/// Encode one block as filter 34 does.
pub fn encode_buggy(lanes: usize, src: &[u8], dst: &mut [u8]) {
    run(lanes, src, dst, true, encode_stream);
}

/// Decode one block of filter 34.
pub fn decode_buggy(lanes: usize, src: &[u8], dst: &mut [u8]) {
    run(lanes, src, dst, true, decode_stream);
}

/// Apply `f` to every stream; with `groups`, the bytes after the last whole
/// 16-byte group of a stream form a stream of their own.
fn run(lanes: usize, src: &[u8], dst: &mut [u8], groups: bool, f: fn(&[u8], &mut [u8])) {
    let n = src.len().min(dst.len());
    let lanes = lanes.max(1);
    let stream = n / lanes;
    let whole = stream * lanes;
    if stream > 0 {
        for (s, d) in src[..whole].chunks_exact(stream).zip(dst[..whole].chunks_exact_mut(stream)) {
            if groups && stream >= 16 {
                let g = stream / 16 * 16;
                let (s1, s2) = s.split_at(g);
                let (d1, d2) = d.split_at_mut(g);
                f(s1, d1);
                f(s2, d2);
            } else {
                f(s, d);
            }
        }
    }
    dst[whole..n].copy_from_slice(&src[whole..n]);
}

fn encode_stream(s: &[u8], d: &mut [u8]) {
    let Some(&first) = s.first() else { return };
    d[0] = first;
    // (a form the compiler vectorizes)
    for (o, (a, b)) in d[1..].iter_mut().zip(s[1..].iter().zip(s.iter())) {
        *o = a.wrapping_sub(*b);
    }
}

fn decode_stream(s: &[u8], d: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("ssse3") {
            // SAFETY: the CPU has SSSE3; the function reads `s` and writes `d`
            // only within their common length.
            unsafe { decode_stream_ssse3(s, d) }
        } else {
            // SAFETY: SSE2 is part of x86_64; bounds as above.
            unsafe { decode_stream_sse2(s, d) }
        }
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    decode_stream_neon(s, d);
    #[cfg(not(any(target_arch = "x86_64", all(target_arch = "aarch64", target_feature = "neon"))))]
    decode_stream_scalar(s, d, 0)
}

/// The running sum from `prev` on (the oracle of the vector versions).
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), allow(dead_code))]
pub(crate) fn decode_stream_scalar(s: &[u8], d: &mut [u8], mut prev: u8) {
    for (o, &v) in d.iter_mut().zip(s) {
        prev = prev.wrapping_add(v);
        *o = prev;
    }
}

/// Prefix sums of 16 bytes at a time (four shifted adds), plus the running
/// total of the groups before, kept broadcast in a register (the carry never
/// leaves the vector unit, and each group adds to it independently).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn decode_stream_sse2(s: &[u8], d: &mut [u8]) {
    use std::arch::x86_64::*;
    let n = s.len().min(d.len());
    let mut carry = _mm_setzero_si128();
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n, the length of both slices at least.
        let mut x = unsafe { _mm_loadu_si128(s.as_ptr().add(i) as *const __m128i) };
        x = _mm_add_epi8(x, _mm_slli_si128(x, 1));
        x = _mm_add_epi8(x, _mm_slli_si128(x, 2));
        x = _mm_add_epi8(x, _mm_slli_si128(x, 4));
        x = _mm_add_epi8(x, _mm_slli_si128(x, 8));
        // SAFETY: as for the load.
        unsafe { _mm_storeu_si128(d.as_mut_ptr().add(i) as *mut __m128i, _mm_add_epi8(x, carry)) };
        // the group's own total (byte 15) into every byte — pair it up, spread
        // the pair over the high words, then the high dword over the register —
        // added to the carry: the chain from group to group is one add
        let total = _mm_shuffle_epi32(_mm_shufflehi_epi16(_mm_unpackhi_epi8(x, x), 0xff), 0xff);
        carry = _mm_add_epi8(carry, total);
        i += 16;
    }
    let mut prev = if i > 0 { d[i - 1] } else { 0 };
    for (o, &v) in d[i..n].iter_mut().zip(&s[i..n]) {
        prev = prev.wrapping_add(v);
        *o = prev;
    }
}

/// As [`decode_stream_sse2`], with SSSE3's byte shuffle: the prefix sum runs
/// within each 8-byte half (three shifted adds), then the low half's total is
/// added to the high half, and the group's total is broadcast, one shuffle
/// each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn decode_stream_ssse3(s: &[u8], d: &mut [u8]) {
    use std::arch::x86_64::*;
    let n = s.len().min(d.len());
    let last = _mm_set1_epi8(15);
    let low_total_to_high = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, 7, 7, 7, 7, 7, 7, 7, 7);
    let mut carry = _mm_setzero_si128();
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n, the length of both slices at least.
        let mut x = unsafe { _mm_loadu_si128(s.as_ptr().add(i) as *const __m128i) };
        x = _mm_add_epi8(x, _mm_slli_epi64(x, 8));
        x = _mm_add_epi8(x, _mm_slli_epi64(x, 16));
        x = _mm_add_epi8(x, _mm_slli_epi64(x, 32));
        x = _mm_add_epi8(x, _mm_shuffle_epi8(x, low_total_to_high));
        // SAFETY: as for the load.
        unsafe { _mm_storeu_si128(d.as_mut_ptr().add(i) as *mut __m128i, _mm_add_epi8(x, carry)) };
        carry = _mm_add_epi8(carry, _mm_shuffle_epi8(x, last));
        i += 16;
    }
    let mut prev = if i > 0 { d[i - 1] } else { 0 };
    for (o, &v) in d[i..n].iter_mut().zip(&s[i..n]) {
        prev = prev.wrapping_add(v);
        *o = prev;
    }
}

/// As [`decode_stream_sse2`] with NEON (aarch64, where it is part of the
/// baseline): the prefix sum of 16 bytes in four adds of the group shifted
/// by 1, 2, 4 and 8 bytes (`vext` against zero), plus the broadcast running
/// total of the groups before; the group's own total (lane 15) is broadcast
/// and added to it.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[allow(unused_unsafe)] // arithmetic intrinsics are safe on newer compilers, unsafe on older
pub(crate) fn decode_stream_neon(s: &[u8], d: &mut [u8]) {
    use std::arch::aarch64::*;
    let n = s.len().min(d.len());
    // SAFETY: register-only; NEON is on (compile-time).
    let (zero, mut carry) = unsafe { (vdupq_n_u8(0), vdupq_n_u8(0)) };
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n, the length of both slices at least; the
        // other intrinsics work on registers only.
        unsafe {
            let mut x = vld1q_u8(s.as_ptr().add(i));
            x = vaddq_u8(x, vextq_u8::<15>(zero, x));
            x = vaddq_u8(x, vextq_u8::<14>(zero, x));
            x = vaddq_u8(x, vextq_u8::<12>(zero, x));
            x = vaddq_u8(x, vextq_u8::<8>(zero, x));
            vst1q_u8(d.as_mut_ptr().add(i), vaddq_u8(x, carry));
            carry = vaddq_u8(carry, vdupq_laneq_u8::<15>(x));
        }
        i += 16;
    }
    let mut prev = if i > 0 { d[i - 1] } else { 0 };
    for (o, &v) in d[i..n].iter_mut().zip(&s[i..n]) {
        prev = prev.wrapping_add(v);
        *o = prev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_encode(lanes: usize, src: &[u8], buggy: bool) -> Vec<u8> {
        let stream = src.len() / lanes;
        let mut out = src.to_vec();
        for k in 0..lanes {
            let s = &src[k * stream..(k + 1) * stream];
            let restart = if buggy && stream >= 16 { stream / 16 * 16 } else { usize::MAX };
            for i in 0..stream {
                let before = if i == 0 || i == restart { 0 } else { s[i - 1] };
                out[k * stream + i] = s[i].wrapping_sub(before);
            }
        }
        out
    }

    #[test]
    fn round_trips_and_matches_the_definition() {
        let mut x = 7u32;
        // (Under Miri up to 1000 bytes: it is slow.)
        let lens: &[usize] = if cfg!(miri) {
            &[0, 1, 15, 16, 17, 33, 100, 1000]
        } else {
            &[0, 1, 5, 15, 16, 17, 33, 100, 1000, 4099, 65536]
        };
        for &len in lens {
            let src: Vec<u8> = (0..len)
                .map(|i| {
                    x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                    (i / 7) as u8 ^ (x >> 29) as u8
                })
                .collect();
            for lanes in [1usize, 2, 3, 4, 8, 12, 16, 255] {
                for buggy in [false, true] {
                    let mut enc = vec![0xAAu8; len];
                    let mut dec = vec![0x55u8; len];
                    if buggy {
                        encode_buggy(lanes, &src, &mut enc);
                        decode_buggy(lanes, &enc, &mut dec);
                    } else {
                        encode(lanes, &src, &mut enc);
                        decode(lanes, &enc, &mut dec);
                    }
                    assert_eq!(
                        enc,
                        reference_encode(lanes, &src, buggy),
                        "len {len} lanes {lanes} buggy {buggy}"
                    );
                    assert_eq!(dec, src, "len {len} lanes {lanes} buggy {buggy}");
                }
            }
        }
    }

    #[test]
    fn every_decoder_variant_matches_the_scalar_sum() {
        let s: Vec<u8> = (0..1000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for n in [0usize, 1, 15, 16, 17, 31, 32, 33, 100, 1000] {
            let mut want = vec![0u8; n];
            decode_stream_scalar(&s[..n], &mut want, 0);
            #[cfg(target_arch = "x86_64")]
            {
                let mut got = vec![0u8; n];
                // SAFETY: SSE2 is part of x86_64.
                unsafe { decode_stream_sse2(&s[..n], &mut got) };
                assert_eq!(got, want, "sse2, {n} bytes");
                if std::arch::is_x86_feature_detected!("ssse3") {
                    let mut got = vec![0u8; n];
                    // SAFETY: detected just above.
                    unsafe { decode_stream_ssse3(&s[..n], &mut got) };
                    assert_eq!(got, want, "ssse3, {n} bytes");
                }
            }
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            {
                let mut got = vec![0u8; n];
                decode_stream_neon(&s[..n], &mut got);
                assert_eq!(got, want, "neon, {n} bytes");
            }
        }
    }

    /// Under Miri, feature detection reports what the build enables: the
    /// SSSE3 decoder runs when the build enables SSSE3 (scripts/miri.sh's
    /// AVX2 build does).
    #[test]
    #[cfg(all(miri, target_arch = "x86_64"))]
    fn under_miri_the_ssse3_decoder_runs_where_the_build_enables_it() {
        assert_eq!(std::arch::is_x86_feature_detected!("ssse3"), cfg!(target_feature = "ssse3"));
    }

    #[test]
    fn the_two_versions_differ_after_the_last_group() {
        let src: Vec<u8> = (0..40u8).collect();
        let (mut a, mut b) = (vec![0; 40], vec![0; 40]);
        encode(1, &src, &mut a);
        encode_buggy(1, &src, &mut b);
        assert_eq!(a[..32], b[..32]);
        assert_eq!(a[32], 1);
        assert_eq!(b[32], 32);
    }
}
