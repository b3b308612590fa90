//! Decoder tests: every copy shape, malformed and hostile streams.

use super::super::decompress;
use super::{corpus, decompress_twin, round_trip, Rng, TWINS};

/// Straightforward decoder, written from the format description.
fn reference_decode(src: &[u8], cap: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut ip = 1;
    let mut ctrl = (*src.first()? & 31) as usize;
    loop {
        if ctrl < 32 {
            let lits = src.get(ip..ip + ctrl + 1)?;
            out.extend_from_slice(lits);
            ip += ctrl + 1;
        } else {
            let mut len = (ctrl >> 5) + 2;
            if len == 9 {
                loop {
                    if ip + 1 >= src.len() {
                        return None;
                    }
                    len += src[ip] as usize;
                    ip += 1;
                    if src[ip - 1] != 255 {
                        break;
                    }
                }
            } else if ip + 1 >= src.len() {
                return None;
            }
            let mut dist = ((ctrl & 31) << 8) + src[ip] as usize + 1;
            ip += 1;
            if dist == 31 * 256 + 256 {
                if ip + 1 >= src.len() {
                    return None;
                }
                dist = ((src[ip] as usize) << 8 | src[ip + 1] as usize) + 8192;
                ip += 2;
            }
            if dist > out.len() || out.len() + len > cap {
                return None;
            }
            if ip >= src.len() {
                return Some(out);
            }
            for _ in 0..len {
                out.push(out[out.len() - dist]);
            }
        }
        if out.len() > cap {
            return None;
        }
        if ip >= src.len() {
            return Some(out);
        }
        ctrl = src[ip] as usize;
        ip += 1;
    }
}

/// Runs both decoders on `src` with a `cap`-byte output and checks them
/// against each other and against `reference_decode`.
fn check_decoders(src: &[u8], cap: usize) -> Option<usize> {
    let expected = reference_decode(src, cap);
    let mut first = None;
    for twin in TWINS {
        let mut out = vec![0xEE; cap];
        let got = decompress_twin(twin, src, &mut out);
        assert_eq!(got, expected.as_ref().map(Vec::len), "{twin:?} on {src:?}");
        if let Some(n) = got {
            assert!(n <= cap);
            assert_eq!(out[..n], expected.as_ref().unwrap()[..], "{twin:?}");
        }
        first = got;
    }
    first
}

/// Literal token(s) for `bytes` (at most 32 per token).
fn literals(bytes: &[u8]) -> Vec<u8> {
    bytes.chunks(32).flat_map(|c| std::iter::once(c.len() as u8 - 1).chain(c.iter().copied())).collect()
}

/// A back-reference token copying `len` (>= 3) bytes from `dist` back.
fn back_ref(len: usize, dist: usize) -> Vec<u8> {
    let d = dist - 1;
    let mut token = Vec::new();
    let (hi, lo, far) = if d < 8191 { (d >> 8, d & 255, None) } else { (31, 255, Some(d - 8191)) };
    if len - 2 < 7 {
        token.push((((len - 2) << 5) + hi) as u8);
    } else {
        token.push(((7 << 5) + hi) as u8);
        let mut rest = len - 9;
        while rest >= 255 {
            token.push(255);
            rest -= 255;
        }
        token.push(rest as u8);
    }
    token.push(lo as u8);
    if let Some(f) = far {
        token.extend_from_slice(&[(f >> 8) as u8, f as u8]);
    }
    token
}

#[test]
fn decodes_every_copy_shape() {
    let mut rng = Rng(5);
    let prefix = rng.bytes(9000);
    // (Under Miri, the distances, lengths and spare room next to the limits: it is slow.)
    let (dists, lens, spare): (&[usize], &[usize], &[usize]) = if cfg!(miri) {
        (&[1, 2, 7, 8, 9, 16, 17, 33, 8191, 8193], &[3, 264], &[0])
    } else {
        (
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 100, 8191, 8192, 8193, 9000],
            &[3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 255, 263, 264, 300, 1000],
            &[0, 1, 7, 8, 16, 40],
        )
    };
    for &dist in dists {
        for &len in lens {
            let mut stream = literals(&prefix[..dist.max(40)]);
            stream.extend(back_ref(len, dist));
            stream.extend(literals(b"xy"));
            let total = dist.max(40) + len + 2;
            for cap in spare.iter().map(|s| total + s) {
                assert_eq!(check_decoders(&stream, cap), Some(total), "dist {dist} len {len} cap {cap}");
            }
            assert_eq!(check_decoders(&stream, total - 1), None);
        }
    }
}

#[test]
fn rejects_malformed_streams() {
    let mut out = [0u8; 64];
    for twin in TWINS {
        // Empty input.
        assert_eq!(decompress_twin(twin, &[], &mut out), None);
        // A literal run longer than the input.
        assert_eq!(decompress_twin(twin, &[3, 1, 2], &mut out), None);
        // A reference reaching before the start of the output.
        assert_eq!(decompress_twin(twin, &[1, 9, 9, 0x20, 2, 0, 0], &mut out), None);
        // A reference with its distance byte missing.
        assert_eq!(decompress_twin(twin, &[1, 9, 9, 0x20], &mut out), None);
        // A length extension that never ends.
        assert_eq!(decompress_twin(twin, &[1, 9, 9, 0xE0, 255, 255], &mut out), None);
        // A far reference with its distance cut short.
        assert_eq!(decompress_twin(twin, &[1, 9, 9, 0x3F, 255, 0], &mut out), None);
        // Output too small for a literal run, then for a reference.
        assert_eq!(decompress_twin(twin, &[3, 1, 2, 3, 4], &mut out[..3]), None);
        assert_eq!(decompress_twin(twin, &[0, 7, 0x40, 0, 0, 1], &mut out[..4]), None);
        // Like the reference, stop before a back-reference that ends the stream.
        assert_eq!(decompress_twin(twin, &[1, 9, 8, 0xE0, 0, 0], &mut out), Some(2));
        // The first encoders wrote tiny inputs as one literal run, unmarked.
        assert_eq!(decompress_twin(twin, &[2, 1, 2, 3], &mut out), Some(3));
        assert_eq!(decompress_twin(twin, &[0x22, 1, 2, 3], &mut out), Some(3));
        // The first control byte's top bits are ignored; later ones are not.
        assert_eq!(decompress_twin(twin, &[0xE0, 42, 0x20, 0, 0, 7], &mut out), Some(5));
        assert_eq!(out[..5], [42, 42, 42, 42, 7]);
    }
}

#[test]
fn output_too_small_fails() {
    // (Under Miri 2000 bytes: it is slow.)
    let corpus = corpus(if cfg!(miri) { 2000 } else { 5000 }, 9);
    for (name, src) in corpus.iter().filter(|(n, _)| ["runs", "i32-shuffled", "far-repeats"].contains(n)) {
        let stream = round_trip(9, src, name);
        assert!(!stream.is_empty());
        for cap in (0..src.len()).step_by(if cfg!(miri) { 997 } else { 97 }).chain([src.len() - 1]) {
            assert_eq!(check_decoders(&stream, cap), None, "{name} cap {cap}");
        }
    }
}

#[test]
fn truncated_streams_decode_a_prefix_or_fail() {
    // (Under Miri 600 bytes, cut every 7 bytes: it is slow.)
    let (len, step) = if cfg!(miri) { (600, 7) } else { (3000, 1) };
    for (name, src) in corpus(len, 13) {
        let stream = round_trip(9, &src, name);
        for cut in (0..stream.len()).step_by(step) {
            if let Some(n) = check_decoders(&stream[..cut], src.len()) {
                let mut out = vec![0; src.len()];
                assert_eq!(decompress(&stream[..cut], &mut out), Some(n));
                assert!(out[..n] == src[..n], "{name}: cut {cut}");
            }
        }
    }
}

#[test]
fn garbage_and_bit_flips_never_panic() {
    let mut rng = Rng(77);
    // (Under Miri fewer streams, of 1000 bytes: it is slow.)
    let (garbage, len, flips) = if cfg!(miri) { (60, 600, 6) } else { (3000, 4000, 300) };
    for _ in 0..garbage {
        let len = rng.below(300);
        let garbage = rng.bytes(len);
        check_decoders(&garbage, rng.below(2000));
    }
    for (name, src) in corpus(len, 21) {
        let stream = round_trip(7, &src, name);
        if stream.is_empty() {
            continue;
        }
        for _ in 0..flips {
            let mut bad = stream.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bad.len());
                bad[at] ^= 1 << rng.below(8);
            }
            check_decoders(&bad, src.len() + rng.below(100));
        }
    }
}

#[test]
fn prefixes_stop_early_with_the_same_bytes() {
    // (Under Miri 3 KiB: it is slow.)
    let (len, near, far) = if cfg!(miri) { (3 << 10, 511, 1000) } else { (64 << 10, 4095, 30_000) };
    for (name, src) in corpus(len, 31) {
        let mut packed = vec![0u8; src.len() + 64];
        let n = super::super::compress(5, &src, &mut packed);
        if n == 0 {
            continue;
        }
        let packed = &packed[..n];
        for twin in TWINS {
            for want in [0, 1, 7, 100, near, far, src.len() - 1, src.len()] {
                let mut dst = vec![0u8; src.len()];
                let got = super::super::decompress_prefix_twin(twin, packed, &mut dst, want);
                let got = got.unwrap_or_else(|| panic!("{name}: prefix of {want} failed"));
                assert!(got >= want, "{name}: {got} bytes for a prefix of {want}");
                assert!(dst[..want] == src[..want], "{name}: prefix of {want} differs");
                if want < src.len() / 2 {
                    // It stopped well before the end.
                    assert!(got < src.len(), "{name}: a prefix of {want} decoded everything");
                }
            }
            // A whole decode still rejects trailing garbage.
            let mut longer = packed.to_vec();
            longer.extend_from_slice(&[0u8, 1, 2]);
            let mut dst = vec![0u8; src.len()];
            assert_eq!(
                super::super::decompress_prefix_twin(twin, &longer, &mut dst, src.len()),
                None,
                "{name}"
            );
        }
    }
}
