//! Tests for both twins: round trips, the reference's refusal rules,
//! known streams, hand-made streams and hostile input.  Helpers and the
//! test corpus live here.

mod decode;
mod encode;
mod twins;

use super::{compress_twin, decompress_unsafe, Twin};

pub(super) const TWINS: [Twin; 2] = [Twin::Safe, Twin::Fast];

pub(super) fn decompress_twin(twin: Twin, src: &[u8], dst: &mut [u8]) -> Option<usize> {
    match twin {
        Twin::Safe => super::decompress::decompress(src, dst),
        Twin::Fast => decompress_unsafe::decompress(src, dst),
    }
}

/// xorshift64*: deterministic test data.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(super) fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Blosc's byte shuffle: all first bytes of the items, then all second...
pub(super) fn shuffle(src: &[u8], item: usize) -> Vec<u8> {
    let items = src.len() / item;
    let mut out = src.to_vec();
    for i in 0..items {
        for b in 0..item {
            out[b * items + i] = src[i * item + b];
        }
    }
    out
}

pub(super) fn english(len: usize, rng: &mut Rng) -> Vec<u8> {
    const WORDS: [&str; 24] = [
        "while",
        "data",
        "is",
        "a",
        "the",
        "of",
        "compressed",
        "block",
        "and",
        "small",
        "river",
        "to",
        "in",
        "north",
        "stone",
        "every",
        "light",
        "with",
        "for",
        "garden",
        "was",
        "under",
        "many",
        "on",
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
pub(super) fn corpus(len: usize, seed: u64) -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng(seed | 1);
    let ints: Vec<u8> = (0..len / 4 + 1).flat_map(|i| (i as i32 * 7 - 3).to_le_bytes()).take(len).collect();
    let longs: Vec<u8> = (0..len / 8 + 1).flat_map(|i| (i as i64 * 1000).to_le_bytes()).take(len).collect();
    let floats: Vec<u8> =
        (0..len / 8 + 1).flat_map(|i| ((i as f64 * 0.01).sin() * 1e3).to_le_bytes()).take(len).collect();
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
pub(super) fn round_trip(clevel: u8, src: &[u8], name: &str) -> Vec<u8> {
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
