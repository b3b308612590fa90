//! Every implementation against the definition and against each other.

use super::super::shuffle::tests::{golden_input, random_bytes};
#[cfg(not(miri))]
use super::super::shuffle::tests::{BLOCKSIZES, TYPESIZES};
use super::*;

/// (Under Miri fewer sizes than the shuffle filter's tests: the bit by bit
/// definition is slow there.)
#[cfg(miri)]
const TYPESIZES: &[usize] = &[1, 2, 4, 8, 33];
#[cfg(miri)]
const BLOCKSIZES: &[usize] = &[0, 15, 64, 255, 1000];

/// Bit `b` of byte `j` of item `i` goes to bit `i % 8` of byte
/// `(8 * j + b) * (n8 / 8) + i / 8`; bytes after the `n8` items are copied.
fn bitshuffle_by_definition(ts: usize, src: &[u8]) -> Vec<u8> {
    let n8 = src.len() / ts / 8 * 8;
    let m = n8 / 8;
    let mut out = src.to_vec();
    out[..n8 * ts].fill(0);
    for i in 0..n8 {
        for j in 0..ts {
            for b in 0..8 {
                let bit = (src[i * ts + j] >> b) & 1;
                out[(8 * j + b) * m + i / 8] |= bit << (i % 8);
            }
        }
    }
    out
}

#[test]
fn transpose8_is_a_bit_transpose() {
    let x = 0x0123_4567_89ab_cdefu64;
    let y = scalar::transpose8(x);
    for r in 0..8 {
        for c in 0..8 {
            assert_eq!((y >> (8 * r + c)) & 1, (x >> (8 * c + r)) & 1);
        }
    }
    assert_eq!(scalar::transpose8(y), x);
}

#[test]
fn byte_ranges_cover_the_item() {
    for ts in 1..=if cfg!(miri) { 100 } else { 600 } {
        let ranges: Vec<_> = byte_ranges(ts).collect();
        assert_eq!(ranges[0].0, 0);
        assert!(ranges.iter().all(|&(_, jw)| (1..=JMAX).contains(&jw) && jw <= ranges[0].1));
        assert!(ranges.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        let last = ranges.last().unwrap();
        assert_eq!(last.0 + last.1, ts);
    }
}

#[test]
fn every_kernel_matches_the_definition() {
    for k in available() {
        for &ts in TYPESIZES {
            for &bs in BLOCKSIZES {
                let src = random_bytes(bs, (ts * 65_537 + bs) as u64);
                let want = bitshuffle_by_definition(ts, &src);
                let mut got = vec![0xa5; bs];
                bitshuffle_with(&k, ts, &src, &mut got);
                assert!(got == want, "{} bitshuffle ts={ts} bs={bs}", k.name);
                let mut back = vec![0x5a; bs];
                bitunshuffle_with(&k, ts, &got, &mut back, 3);
                assert!(back == src, "{} bitunshuffle ts={ts} bs={bs}", k.name);
            }
        }
    }
}

#[test]
fn public_functions_round_trip() {
    // (Under Miri without the two big blocks: it is slow.)
    let big: &[usize] = if cfg!(miri) { &[] } else { &[1 << 20, 3 << 18] };
    for &ts in TYPESIZES {
        for bs in BLOCKSIZES.iter().chain(big).copied() {
            let src = random_bytes(bs, (ts + 3 * bs) as u64);
            let mut shuffled = vec![0; bs];
            bitshuffle(ts, &src, &mut shuffled);
            let mut back = vec![0; bs];
            for version in [3, 4, 5] {
                bitunshuffle(ts, &shuffled, &mut back, version);
                assert_eq!(back, src, "ts={ts} bs={bs} version={version}");
            }
        }
    }
}

#[test]
fn every_kernel_agrees_on_larger_blocks() {
    // Sizes that exercise several tiles and the overlapping last tile.
    let all = available();
    // (Under Miri one size of two tiles and two item sizes: it is slow.)
    let (tss, bss): (&[usize], &[usize]) = if cfg!(miri) {
        (&[1, 12], &[8192 + 1029])
    } else {
        (&[1, 2, 3, 4, 7, 8, 12, 16, 24, 32, 40, 64, 100], &[8192 * 3 + 5, 100_000, 262_144])
    };
    for &ts in tss {
        for &bs in bss {
            let src = random_bytes(bs, (ts * bs) as u64);
            let mut want = vec![0; bs];
            bitshuffle_with(&all[0], ts, &src, &mut want);
            for k in &all[1..] {
                let mut got = vec![0; bs];
                bitshuffle_with(k, ts, &src, &mut got);
                assert!(got == want, "{} bitshuffle ts={ts} bs={bs}", k.name);
                bitunshuffle_with(k, ts, &want, &mut got, 5);
                assert!(got == src, "{} bitunshuffle ts={ts} bs={bs}", k.name);
            }
        }
    }
}

#[test]
fn every_alignment_gives_the_same_bytes() {
    // (Under Miri fewer sizes and offsets: it is slow.)
    let (tss, bs, off_step): (&[usize], usize, usize) =
        if cfg!(miri) { (&[12], 512 + 77, 16) } else { (&[1, 2, 4, 8, 12, 16], 8192 + 77, 1) };
    for k in available() {
        for &ts in tss {
            let src = random_bytes(bs + 64, ts as u64);
            for off in (0..33).step_by(off_step) {
                let want = bitshuffle_by_definition(ts, &src[off..off + bs]);
                let mut buf = vec![0; bs + 64];
                bitshuffle_with(&k, ts, &src[off..off + bs], &mut buf[off..off + bs]);
                assert!(buf[off..off + bs] == want, "{} ts={ts} off={off}", k.name);
                let mut back = vec![0; bs + 64];
                bitunshuffle_with(&k, ts, &want, &mut back[off..off + bs], 5);
                assert!(back[off..off + bs] == src[off..off + bs], "{} ts={ts} off={off}", k.name);
            }
        }
    }
}

#[test]
fn version_2_rule() {
    for k in available() {
        for &ts in TYPESIZES {
            for &bs in BLOCKSIZES {
                let src = random_bytes(bs, (ts * 31 + bs) as u64);
                let n = bs / ts;
                let mut got = vec![0x33; bs];
                bitunshuffle_with(&k, ts, &src, &mut got, 2);
                if n % 8 != 0 {
                    // Stored as is.
                    assert!(got == src, "{} ts={ts} bs={bs}", k.name);
                    continue;
                }
                // All whole items were bit-shuffled; the partial item is kept.
                let body = n * ts;
                let mut shuffled = vec![0; body];
                bitshuffle_with(&k, ts, &got[..body], &mut shuffled);
                assert!(shuffled == src[..body], "{} ts={ts} bs={bs}", k.name);
                assert!(got[body..] == src[body..], "{} ts={ts} bs={bs}", k.name);
            }
        }
    }
}

#[test]
fn huge_typesizes_copy() {
    let src: Vec<u8> = (0..100).collect();
    for ts in [101, usize::MAX / 3, usize::MAX] {
        let mut out = vec![0; 100];
        bitshuffle(ts, &src, &mut out);
        assert_eq!(out, src);
        bitunshuffle(ts, &src, &mut out, 2);
        assert_eq!(out, src);
        super::super::shuffle::unshuffle(ts, &src, &mut out);
        assert_eq!(out, src);
    }
}

#[test]
#[should_panic]
fn mismatched_lengths_panic() {
    bitshuffle(4, &[0; 64], &mut [0; 63]);
}

#[test]
#[should_panic]
fn zero_typesize_panics() {
    bitunshuffle(0, &[0; 64], &mut [0; 64], 5);
}

#[test]
#[cfg_attr(miri, ignore = "Miri: files (isolation)")]
fn matches_c_blosc2_golden_file() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/bitshuffle-2.20.0.cdata");
    let golden = std::fs::read(path).expect("golden file bitshuffle-2.20.0.cdata");
    let input = golden_input();
    for k in available() {
        let mut out = vec![0; input.len()];
        bitshuffle_with(&k, 4, &input, &mut out);
        assert!(out == golden, "{} bitshuffle differs from the golden file", k.name);
        let mut back = vec![0; input.len()];
        bitunshuffle_with(&k, 4, &golden, &mut back, 5);
        assert!(back == input, "{} bitunshuffle does not restore the input", k.name);
    }
}

/// Under Miri, feature detection reports what the build enables: the tests
/// above compare the SSE2 kernels with the scalar ones, and the AVX2 ones too
/// when the build enables AVX2 (scripts/miri.sh runs both builds).
#[test]
#[cfg(all(miri, target_arch = "x86_64"))]
fn under_miri_the_kernels_of_the_features_built_in_run() {
    let want = super::super::shuffle::tests::kernels_built_in();
    assert_eq!(available().iter().map(|k| k.name).collect::<Vec<_>>(), want);
    assert_eq!(best().name, want[want.len() - 1]);
}

#[test]
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
fn neon_is_the_kernel_on_aarch64() {
    assert_eq!(best().name, "neon");
    assert_eq!(available().iter().map(|k| k.name).collect::<Vec<_>>(), ["scalar", "neon"]);
}
