//! Tests for both twins: round trips, the reference's refusal rules,
//! known streams, hand-made streams and hostile input.

use super::{compress_twin, decompress, decompress_unsafe, Twin};

const TWINS: [Twin; 2] = [Twin::Safe, Twin::Fast];

fn decompress_twin(twin: Twin, src: &[u8], dst: &mut [u8]) -> Option<usize> {
    match twin {
        Twin::Safe => super::decompress::decompress(src, dst),
        Twin::Fast => decompress_unsafe::decompress(src, dst),
    }
}

/// xorshift64*: deterministic test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Blosc's byte shuffle: all first bytes of the items, then all second...
fn shuffle(src: &[u8], item: usize) -> Vec<u8> {
    let items = src.len() / item;
    let mut out = src.to_vec();
    for i in 0..items {
        for b in 0..item {
            out[b * items + i] = src[i * item + b];
        }
    }
    out
}

fn english(len: usize, rng: &mut Rng) -> Vec<u8> {
    const WORDS: [&str; 24] = [
        "while", "data", "is", "a", "the", "of", "compressed", "block", "and", "small", "river", "to", "in",
        "north", "stone", "every", "light", "with", "for", "garden", "was", "under", "many", "on",
    ];
    let mut text = Vec::with_capacity(len + 16);
    while text.len() < len {
        text.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
        text.extend_from_slice(if rng.below(9) == 0 { b". " } else { b" " });
    }
    text.truncate(len);
    text
}

/// A named set of inputs of `len` bytes.
fn corpus(len: usize, seed: u64) -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng(seed | 1);
    let ints: Vec<u8> = (0..len / 4 + 1).flat_map(|i| (i as i32 * 7 - 3).to_le_bytes()).take(len).collect();
    let longs: Vec<u8> = (0..len / 8 + 1).flat_map(|i| (i as i64 * 1000).to_le_bytes()).take(len).collect();
    let floats: Vec<u8> = (0..len / 8 + 1)
        .flat_map(|i| ((i as f64 * 0.01).sin() * 1e3).to_le_bytes())
        .take(len)
        .collect();
    let mut runs = Vec::with_capacity(len + 300);
    while runs.len() < len {
        let byte = rng.next() as u8;
        runs.extend(std::iter::repeat_n(byte, 1 + rng.below(200)));
    }
    runs.truncate(len);
    let unit = rng.bytes(9000.min(len / 2 + 1));
    let far: Vec<u8> = unit.iter().cycle().take(len).copied().collect();
    vec![
        ("zeros", vec![0; len]),
        ("constant", vec![0xA5; len]),
        ("runs", runs),
        ("i32", ints.clone()),
        ("i32-shuffled", shuffle(&ints, 4)),
        ("i64-shuffled", shuffle(&longs, 8)),
        ("f64", floats.clone()),
        ("f64-shuffled", shuffle(&floats, 8)),
        ("random", rng.bytes(len)),
        ("low-entropy", (0..len).map(|_| (rng.below(3) * rng.below(3)) as u8).collect()),
        ("text", english(len, &mut rng)),
        ("far-repeats", far),
    ]
}

/// Compresses with both twins (which must agree byte for byte), checks
/// that both decoders restore the input, and returns the stream.
fn round_trip(clevel: u8, src: &[u8], name: &str) -> Vec<u8> {
    let cap = src.len() + src.len() / 16 + 66;
    let mut streams = Vec::new();
    for twin in TWINS {
        let mut buf = vec![0; cap];
        let n = compress_twin(twin, clevel, src, &mut buf);
        assert!(n < cap, "{name}: {n} >= {cap}");
        buf.truncate(n);
        streams.push(buf);
    }
    assert_eq!(streams[0], streams[1], "twins disagree: {name} clevel {clevel} len {}", src.len());
    let stream = streams.pop().unwrap();
    if !stream.is_empty() {
        for twin in TWINS {
            let mut out = vec![0; src.len()];
            let got = decompress_twin(twin, &stream, &mut out);
            assert_eq!(got, Some(src.len()), "{name}: clevel {clevel} len {} {twin:?}", src.len());
            assert!(out == src, "{name}: clevel {clevel} len {} {twin:?}: wrong bytes", src.len());
        }
    }
    stream
}

#[test]
fn round_trips_small_sizes_every_level() {
    for len in 0..=100 {
        for (name, src) in corpus(len, len as u64) {
            for clevel in 0..=9 {
                let stream = round_trip(clevel, &src, name);
                if clevel == 0 || len < 16 {
                    assert!(stream.is_empty(), "{name} clevel {clevel} len {len} not refused");
                }
            }
        }
    }
}

#[test]
fn round_trips_block_sizes_every_level() {
    for (i, len) in [127, 1000, 4096, 8192, 32 << 10, 64 << 10, 128 << 10].into_iter().enumerate() {
        for (name, src) in corpus(len, 100 + i as u64) {
            for clevel in 1..=9 {
                round_trip(clevel, &src, name);
            }
        }
    }
}

#[test]
fn round_trips_512k() {
    for (name, src) in corpus(512 << 10, 7) {
        if ["zeros", "i32-shuffled", "f64", "text", "far-repeats"].contains(&name) {
            for clevel in [1, 5, 9] {
                round_trip(clevel, &src, name);
            }
        }
    }
}

#[test]
fn compressible_data_compresses_and_random_does_not() {
    let ratio = |clevel, src: &[u8]| {
        let mut buf = vec![0; src.len() + 100];
        let n = super::compress(clevel, src, &mut buf);
        if n == 0 { 0.0 } else { src.len() as f64 / n as f64 }
    };
    let corpus: std::collections::HashMap<_, _> = corpus(64 << 10, 3).into_iter().collect();
    for clevel in 1..=9 {
        assert!(ratio(clevel, &corpus["zeros"]) > 200.0, "zeros at {clevel}");
        assert!(ratio(clevel, &corpus["i32-shuffled"]) > 20.0, "i32-shuffled at {clevel}");
        if clevel >= 3 {
            // Needs a probe window longer than the 9000-byte period.
            assert!(ratio(clevel, &corpus["far-repeats"]) > 5.0, "far-repeats at {clevel}");
        }
        assert_eq!(ratio(clevel, &corpus["random"]), 0.0, "random at {clevel}");
    }
    assert!(ratio(9, &corpus["text"]) > 1.1);
}

#[test]
fn refuses_like_the_reference() {
    let src = vec![7u8; 1000];
    let mut big = vec![0u8; 2000];
    for clevel in [0, 10, 255] {
        assert_eq!(super::compress(clevel, &src, &mut big), 0);
    }
    assert_eq!(super::compress(9, &src[..15], &mut big), 0);
    assert_ne!(super::compress(9, &src[..16], &mut big), 0);
    assert_eq!(super::compress(9, &src, &mut big[..65]), 0);
    assert_ne!(super::compress(9, &src, &mut big[..66]), 0);
}

#[test]
fn needs_one_spare_output_byte() {
    for (name, src) in corpus(20_000, 11) {
        for clevel in [1, 4, 9] {
            let stream = round_trip(clevel, &src, name);
            let n = stream.len();
            if n < 66 {
                continue;
            }
            for twin in TWINS {
                let mut tight = vec![0; n];
                assert_eq!(compress_twin(twin, clevel, &src, &mut tight), 0, "{name} {clevel}");
                let mut enough = vec![0; n + 1];
                assert_eq!(compress_twin(twin, clevel, &src, &mut enough), n, "{name} {clevel}");
                assert_eq!(enough[..n], stream[..]);
            }
        }
    }
}

#[test]
fn matches_known_reference_streams() {
    let abcd = b"abcd".repeat(16);
    let mut buf = [0u8; 300];
    let n = super::compress(9, &abcd, &mut buf);
    assert_eq!(buf[..n], [35, 97, 98, 99, 100, 224, 48, 3, 2, 98, 99, 100]);

    let n = super::compress(5, &[0; 100], &mut buf);
    assert_eq!(buf[..n], [35, 0, 0, 0, 0, 224, 84, 3, 2, 0, 0, 0]);

    let ramp: Vec<u8> = (0..200u32).map(|i| (i % 7) as u8 * 10 + (i / 50) as u8).collect();
    assert_eq!(super::compress(1, &ramp, &mut buf), 0);
    let n = super::compress(9, &ramp, &mut buf);
    let expected = [
        38, 0, 10, 20, 30, 40, 50, 60, 224, 33, 6, 7, 0, 11, 21, 31, 41, 51, 61, 1, 224, 33, 6, 7, 11, 22, 32, 42,
        52, 62, 2, 12, 224, 33, 6, 7, 22, 33, 43, 53, 63, 3, 13, 23, 224, 31, 6, 2, 13, 23, 33,
    ];
    assert_eq!(buf[..n], expected);

    let text: &[u8] = b"The quick brown fox jumps over the lazy dog. The quick brown fox jumps \
over the lazy cat. The quick brown fox jumps over the lazy dog again.";
    assert_eq!(super::compress(3, text, &mut buf), 0);
    let n = super::compress(9, text, &mut buf);
    assert_eq!(n, 70);
    assert_eq!(buf[..8], [63, 84, 104, 101, 32, 113, 117, 105]);
    assert_eq!(buf[47..n], [
        224, 30, 44, 3, 32, 99, 97, 116, 224, 32, 44, 10, 32, 100, 111, 103, 32, 97, 103, 97, 105, 110, 46
    ]);
}

#[test]
fn encodes_far_matches_like_the_reference() {
    let mut x: u32 = 1;
    let mut src: Vec<u8> = (0..9000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect();
    src.extend_from_slice(&src[..600].to_vec());
    let stream = round_trip(9, &src, "far");
    assert_eq!(stream.len(), 9298);
    // A long far match: length 7 + 255 + 255 + 73, distance 808 + 8192.
    assert_eq!(stream[stream.len() - 11..stream.len() - 4], [255, 255, 255, 73, 255, 3, 40]);
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// Length and FNV-1a digest of c-blosc2's output (0 when it refuses) for
/// each input kind and level, recorded from the reference library.
#[test]
#[rustfmt::skip]
fn matches_reference_digests() {
    const EXPECTED: [(&str, u8, usize, u64); 60] = [
        ("zeros", 1, 204, 0x3625d54d556855d1), ("zeros", 3, 204, 0x3625d54d556855d1),
        ("zeros", 5, 204, 0x3625d54d556855d1), ("zeros", 7, 204, 0x3625d54d556855d1),
        ("zeros", 9, 204, 0x3625d54d556855d1), ("constant", 1, 204, 0x82377d101d7ccbbc),
        ("constant", 3, 204, 0x82377d101d7ccbbc), ("constant", 5, 204, 0x82377d101d7ccbbc),
        ("constant", 7, 204, 0x82377d101d7ccbbc), ("constant", 9, 204, 0x82377d101d7ccbbc),
        ("runs", 1, 3231, 0x4422df653ccbfb13), ("runs", 3, 3258, 0x9fba5018f645c1c1),
        ("runs", 5, 3258, 0x9fba5018f645c1c1), ("runs", 7, 3258, 0x9fba5018f645c1c1),
        ("runs", 9, 3251, 0xc78c88380cbf84e3), ("i32", 1, 0, 0xcbf29ce484222325),
        ("i32", 3, 0, 0xcbf29ce484222325), ("i32", 5, 0, 0xcbf29ce484222325),
        ("i32", 7, 0, 0xcbf29ce484222325), ("i32", 9, 0, 0xcbf29ce484222325),
        ("i32-shuffled", 1, 2256, 0xc1ce35a3fc3d1216), ("i32-shuffled", 3, 2256, 0xc1ce35a3fc3d1216),
        ("i32-shuffled", 5, 2256, 0xc1ce35a3fc3d1216), ("i32-shuffled", 7, 2256, 0xc1ce35a3fc3d1216),
        ("i32-shuffled", 9, 2252, 0x9b523a4ed5b40569), ("i64-shuffled", 1, 3011, 0xde1de905ec283cdf),
        ("i64-shuffled", 3, 3010, 0x66c7a15253701aec), ("i64-shuffled", 5, 3010, 0x66c7a15253701aec),
        ("i64-shuffled", 7, 3010, 0x66c7a15253701aec), ("i64-shuffled", 9, 3011, 0xe2157e6a368a2ce4),
        ("f64", 1, 0, 0xcbf29ce484222325), ("f64", 3, 0, 0xcbf29ce484222325),
        ("f64", 5, 0, 0xcbf29ce484222325), ("f64", 7, 0, 0xcbf29ce484222325),
        ("f64", 9, 0, 0xcbf29ce484222325), ("f64-shuffled", 1, 39325, 0x5b38951ec384e007),
        ("f64-shuffled", 3, 39301, 0xdb3bf133269edd52), ("f64-shuffled", 5, 39301, 0xdb3bf133269edd52),
        ("f64-shuffled", 7, 0, 0xcbf29ce484222325), ("f64-shuffled", 9, 0, 0xcbf29ce484222325),
        ("random", 1, 0, 0xcbf29ce484222325), ("random", 3, 0, 0xcbf29ce484222325),
        ("random", 5, 0, 0xcbf29ce484222325), ("random", 7, 0, 0xcbf29ce484222325),
        ("random", 9, 0, 0xcbf29ce484222325), ("low-entropy", 1, 0, 0xcbf29ce484222325),
        ("low-entropy", 3, 0, 0xcbf29ce484222325), ("low-entropy", 5, 0, 0xcbf29ce484222325),
        ("low-entropy", 7, 0, 0xcbf29ce484222325), ("low-entropy", 9, 43128, 0xe2a1be89e749b182),
        ("text", 1, 0, 0xcbf29ce484222325), ("text", 3, 26185, 0x0413c66210893510),
        ("text", 5, 26185, 0x0413c66210893510), ("text", 7, 26185, 0x0413c66210893510),
        ("text", 9, 26210, 0x67110741b1a70206), ("far-repeats", 1, 0, 0xcbf29ce484222325),
        ("far-repeats", 3, 9452, 0xa78ddf7ef883c001), ("far-repeats", 5, 9452, 0xa78ddf7ef883c001),
        ("far-repeats", 7, 9452, 0xa78ddf7ef883c001), ("far-repeats", 9, 9452, 0xa78ddf7ef883c001),
    ];
    let corpus: std::collections::HashMap<_, _> = corpus(48 << 10, 2024).into_iter().collect();
    for (name, clevel, len, digest) in EXPECTED {
        let stream = round_trip(clevel, &corpus[name], name);
        assert_eq!((stream.len(), fnv1a(&stream)), (len, digest), "{name} at clevel {clevel}");
    }
}

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
    let dists = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 100, 8191, 8192, 8193, 9000];
    for dist in dists {
        for len in [3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 255, 263, 264, 300, 1000] {
            let mut stream = literals(&prefix[..dist.max(40)]);
            stream.extend(back_ref(len, dist));
            stream.extend(literals(b"xy"));
            let total = dist.max(40) + len + 2;
            for cap in [total, total + 1, total + 7, total + 8, total + 16, total + 40] {
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
        // The first control byte's top bits are ignored; later ones are not.
        assert_eq!(decompress_twin(twin, &[0xE0, 42, 0x20, 0, 0, 7], &mut out), Some(5));
        assert_eq!(out[..5], [42, 42, 42, 42, 7]);
    }
}

#[test]
fn output_too_small_fails() {
    let corpus = corpus(5000, 9);
    for (name, src) in corpus.iter().filter(|(n, _)| ["runs", "i32-shuffled", "far-repeats"].contains(n)) {
        let stream = round_trip(9, src, name);
        assert!(!stream.is_empty());
        for cap in (0..src.len()).step_by(97).chain([src.len() - 1]) {
            assert_eq!(check_decoders(&stream, cap), None, "{name} cap {cap}");
        }
    }
}

#[test]
fn truncated_streams_decode_a_prefix_or_fail() {
    for (name, src) in corpus(3000, 13) {
        let stream = round_trip(9, &src, name);
        for cut in 0..stream.len() {
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
    for _ in 0..3000 {
        let len = rng.below(300);
        let garbage = rng.bytes(len);
        check_decoders(&garbage, rng.below(2000));
    }
    for (name, src) in corpus(4000, 21) {
        let stream = round_trip(7, &src, name);
        if stream.is_empty() {
            continue;
        }
        for _ in 0..300 {
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
fn probe_twins_agree() {
    use super::{probe, probe_unsafe};
    fn both<const N: usize>(window: &[u8]) {
        let (mut a, mut b) = ([0u32; N], [0u32; N]);
        let safe = probe::estimate_ratio(window, &mut a);
        let fast = probe_unsafe::estimate_ratio(window, &mut b);
        assert_eq!(safe.to_bits(), fast.to_bits(), "window of {}", window.len());
    }
    for len in [0, 12, 13, 20, 100, 5000, 20000] {
        for (_, src) in corpus(len, 31) {
            both::<4096>(&src);
            both::<8192>(&src);
            both::<16384>(&src);
        }
    }
}

#[test]
fn match_end_twins_agree() {
    let mut rng = Rng(3);
    for _ in 0..2000 {
        let period = 1 + rng.below(40);
        let len = 40 + rng.below(200);
        let mut buf: Vec<u8> = (0..len).map(|i| (i % period) as u8).collect();
        for _ in 0..rng.below(4) {
            let at = rng.below(len);
            buf[at] = rng.next() as u8;
        }
        let bound = 1 + period + rng.below(len - period);
        let reference = rng.below(bound - period);
        let ip = reference + 1 + rng.below(bound - reference);
        let safe = super::compress::match_end(&buf, ip, reference, bound);
        let fast = super::compress_unsafe::match_end(&buf, ip, reference, bound);
        assert_eq!(safe, fast);
        assert!(safe > ip.min(bound - 1) && safe <= bound);
    }
}
