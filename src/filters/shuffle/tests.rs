//! Every implementation against the definition and against each other.

use super::*;

/// Small deterministic generator (xorshift64*), enough for test data.
pub(crate) fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

#[cfg(not(miri))]
pub(crate) const TYPESIZES: &[usize] = &[
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
    29, 30, 31, 32, 33, 48, 63, 64, 65, 128, 255, 256, 257,
];
/// (Under Miri, the sizes next to the kernels' shape limits: it is slow.)
#[cfg(miri)]
pub(crate) const TYPESIZES: &[usize] = &[1, 2, 3, 4, 7, 8, 12, 16, 17, 32, 33, 65];

#[cfg(not(miri))]
pub(crate) const BLOCKSIZES: &[usize] =
    &[0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 100, 255, 256, 1000, 4096, 65536 + 3];
/// (Under Miri, as for `TYPESIZES`.)
#[cfg(miri)]
pub(crate) const BLOCKSIZES: &[usize] = &[0, 1, 15, 16, 33, 64, 255, 1000];

fn shuffle_by_definition(ts: usize, src: &[u8]) -> Vec<u8> {
    let n = src.len() / ts;
    let mut out = src.to_vec();
    for i in 0..n {
        for j in 0..ts {
            out[j * n + i] = src[i * ts + j];
        }
    }
    out
}

fn transpose_by_definition(src: &[u8], ss: usize, dst: &mut [u8], ds: usize, rows: usize, cols: usize) {
    for r in 0..rows {
        for c in 0..cols {
            dst[c * ds + r] = src[r * ss + c];
        }
    }
}

#[test]
fn every_kernel_matches_the_definition() {
    for k in available() {
        for &ts in TYPESIZES {
            for &bs in BLOCKSIZES {
                let src = random_bytes(bs, (ts * 1_000_003 + bs) as u64);
                let want = shuffle_by_definition(ts, &src);
                let mut got = vec![0xa5; bs];
                shuffle_with(&k, ts, &src, &mut got);
                assert!(got == want, "{} shuffle ts={ts} bs={bs}", k.name);
                let mut back = vec![0x5a; bs];
                unshuffle_with(&k, ts, &got, &mut back);
                assert!(back == src, "{} unshuffle ts={ts} bs={bs}", k.name);
            }
        }
    }
}

#[test]
fn public_functions_round_trip() {
    for &ts in TYPESIZES {
        for &bs in BLOCKSIZES {
            let src = random_bytes(bs, (ts + 7 * bs) as u64);
            let mut shuffled = vec![0; bs];
            shuffle(ts, &src, &mut shuffled);
            assert_eq!(shuffled, shuffle_by_definition(ts, &src), "ts={ts} bs={bs}");
            let mut back = vec![0; bs];
            unshuffle(ts, &shuffled, &mut back);
            assert_eq!(back, src, "ts={ts} bs={bs}");
        }
    }
}

#[test]
fn strided_transposes_match_the_definition() {
    // (Under Miri, the dimensions next to the kernels' shape limits: it is slow.)
    let dims: &[usize] = if cfg!(miri) {
        &[0, 1, 3, 8, 16, 17, 33]
    } else {
        &[0, 1, 2, 3, 4, 5, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 47, 64, 65, 100]
    };
    for k in available() {
        for &rows in dims {
            for &cols in dims {
                // (under Miri two of the strides)
                let extras: &[(usize, usize)] =
                    if cfg!(miri) { &[(0, 0), (16, 17)] } else { &[(0, 0), (3, 0), (0, 5), (16, 17)] };
                for &(extra_s, extra_d) in extras {
                    let (ss, ds) = (cols + extra_s, rows + extra_d);
                    let src = random_bytes(rows * ss, (rows * 131 + cols) as u64);
                    let mut want = vec![0xee; cols * ds];
                    let mut got = want.clone();
                    transpose_by_definition(&src, ss, &mut want, ds, rows, cols);
                    (k.transpose)(&src, ss, &mut got, ds, rows, cols);
                    assert!(got == want, "{} rows={rows} cols={cols} ss={ss} ds={ds}", k.name);
                    if rows > 0 && cols > 0 {
                        // Slices that end right after the last row (column),
                        // or anywhere before the next row's end.
                        let (src_tight, dst_tight) = ((rows - 1) * ss + cols, (cols - 1) * ds + rows);
                        for (sl, dl) in
                            [(src_tight, dst_tight), (rows * ss - 1, dst_tight), (src_tight, cols * ds - 1)]
                        {
                            let sl = sl.max(src_tight);
                            let dl = dl.max(dst_tight);
                            let mut got = vec![0xee; dl];
                            (k.transpose)(&src[..sl], ss, &mut got, ds, rows, cols);
                            assert!(
                                got[..dst_tight] == want[..dst_tight],
                                "{} rows={rows} cols={cols} ss={ss} ds={ds} slices {sl} {dl}",
                                k.name
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn transposes_leave_bytes_outside_the_matrix_alone() {
    // Over-reading and spilling paths must not touch the gaps between rows
    // nor anything after the matrix.
    for k in available() {
        for (rows, cols) in [(5, 40), (3, 100), (13, 64), (12, 64), (12, 97), (40, 5), (100, 7), (64, 13)] {
            for (ss, ds) in [(cols, rows), (cols + 2, rows + 3)] {
                let src = random_bytes(rows * ss + 8, 9);
                let mut want = vec![0x77; cols * ds + 40];
                let mut got = want.clone();
                transpose_by_definition(&src, ss, &mut want, ds, rows, cols);
                (k.transpose)(&src, ss, &mut got, ds, rows, cols);
                assert!(got == want, "{} rows={rows} cols={cols} ss={ss} ds={ds}", k.name);
            }
        }
    }
}

#[test]
fn every_alignment_gives_the_same_bytes() {
    // The SIMD versions pick their block starts from the destination's
    // address; every offset must give the same result.
    for k in available() {
        // (Under Miri fewer sizes and offsets: it is slow.)
        let (tss, bss, off_step): (&[usize], &[usize], usize) = if cfg!(miri) {
            (&[2, 12, 32], &[1000], 8)
        } else {
            (&[2, 3, 4, 8, 12, 16, 24, 32], &[100, 1000, 4099], 1)
        };
        for &ts in tss {
            for &bs in bss {
                let src = random_bytes(bs + 64, (ts * bs) as u64);
                let want = shuffle_by_definition(ts, &src[..bs]);
                for off in (0..33).step_by(off_step) {
                    let mut buf = vec![0; bs + 64];
                    shuffle_with(&k, ts, &src[off..off + bs], &mut buf[off..off + bs]);
                    let got = &buf[off..off + bs];
                    assert!(
                        got == shuffle_by_definition(ts, &src[off..off + bs]),
                        "{} ts={ts} off={off}",
                        k.name
                    );
                    let mut back = vec![0; bs + 64];
                    unshuffle_with(&k, ts, &want, &mut back[off..off + bs]);
                    assert!(back[off..off + bs] == src[..bs], "{} ts={ts} off={off}", k.name);
                }
            }
        }
    }
}

#[test]
#[should_panic]
fn mismatched_lengths_panic() {
    shuffle(4, &[0; 16], &mut [0; 15]);
}

#[test]
#[should_panic]
fn zero_typesize_panics() {
    unshuffle(0, &[0; 16], &mut [0; 16]);
}

#[test]
#[should_panic]
fn out_of_bounds_matrix_panics() {
    for k in available() {
        (k.transpose)(&[0; 63], 8, &mut [0; 64], 8, 8, 8);
    }
}

/// The int32 sequence 0..1_000_000, little endian, as c-blosc2's golden files use.
pub(crate) fn golden_input() -> Vec<u8> {
    (0..1_000_000i32).flat_map(i32::to_le_bytes).collect()
}

#[test]
#[cfg_attr(miri, ignore = "Miri: files (isolation)")]
fn matches_c_blosc2_golden_file() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/shuffle-2.20.0.cdata");
    let golden = std::fs::read(path).expect("golden file shuffle-2.20.0.cdata");
    let input = golden_input();
    for k in available() {
        let mut out = vec![0; input.len()];
        shuffle_with(&k, 4, &input, &mut out);
        assert!(out == golden, "{} shuffle differs from the golden file", k.name);
        let mut back = vec![0; input.len()];
        unshuffle_with(&k, 4, &golden, &mut back);
        assert!(back == input, "{} unshuffle does not restore the input", k.name);
    }
}

#[test]
fn unshuffle_with_planes_elsewhere_matches_unshuffling_the_filled_planes() {
    // Each plane is in the scratch buffer, a run or a slice elsewhere (two
    // bits per plane choose; every combination for small typesizes, a few
    // for the larger ones). Planes not in the scratch buffer hold garbage
    // there, which must not show; slices elsewhere are longer than a plane
    // and start at odd offsets; the destination starts at every alignment
    // mod 32. (Under Miri fewer sizes and patterns: it is slow.)
    let (sizes, tss): (&[usize], &[usize]) = if cfg!(miri) {
        (&[0, 1, 33, 100], &[1, 2, 4, 8, 12])
    } else {
        (&[0, 1, 7, 31, 32, 33, 63, 64, 65, 100, 1000, 4096 + 5], &[1, 2, 3, 4, 5, 8, 12, 16])
    };
    for k in available() {
        for &ts in tss {
            let patterns: Vec<u64> = if ts <= 4 && !cfg!(miri) {
                (0..1u64 << (2 * ts)).collect()
            } else {
                let all_elsewhere = (0..ts).fold(0u64, |p, j| p | 2 << (2 * j));
                vec![0, 1, 2, 0b1001, 0b0110, 0x5555_5555 & ((1 << (2 * ts)) - 1), all_elsewhere, 0x1b1b_1b1b]
            };
            for &n in sizes {
                let len = n * ts + ts / 2;
                for &pattern in &patterns {
                    let kind = |j: usize| (pattern >> (2 * j) & 3) as u8;
                    let garbage = random_bytes(len, (ts * 977 + n * 31) as u64 ^ pattern);
                    let away: Vec<Vec<u8>> = (0..ts)
                        .map(|j| random_bytes(n + 3 + j, (j * 7919 + n) as u64 ^ (pattern << 8)))
                        .collect();
                    let mut planes = Vec::new();
                    let mut filled = garbage.clone();
                    for j in 0..ts {
                        let row = &mut filled[j * n..(j + 1) * n];
                        planes.push(match kind(j) {
                            1 => {
                                let b = [0u8, 0xff, 0x5a][j % 3];
                                row.fill(b);
                                Plane::Run(b)
                            }
                            2 | 3 => {
                                let at = usize::from(kind(j) == 3) + j % 3;
                                row.copy_from_slice(&away[j][at..at + n]);
                                Plane::Bytes(&away[j][at..])
                            }
                            _ => Plane::Scratch,
                        });
                    }
                    let mut want = vec![0; len];
                    unshuffle_with(&k, ts, &filled, &mut want);
                    let offset = (n + pattern as usize) % 32;
                    let mut buf = vec![0xee; len + offset];
                    let mut scratch = garbage.clone();
                    unshuffle_planes_with(&k, ts, &mut scratch, &planes, &mut buf[offset..]);
                    assert!(buf[offset..] == want[..], "{} ts={ts} n={n} planes={pattern:#b}", k.name);
                    assert!(buf[..offset].iter().all(|&b| b == 0xee));
                }
            }
        }
    }
}

#[test]
#[should_panic(expected = "shorter than the block's")]
fn unshuffle_planes_refuses_a_plane_shorter_than_the_block() {
    let mut scratch = [0u8; 64 * 4];
    let short = [1u8; 63];
    let planes = [Plane::Scratch, Plane::Bytes(&short), Plane::Run(3), Plane::Scratch];
    unshuffle_planes(4, &mut scratch, &planes, &mut [0u8; 64 * 4]);
}

/// The x86-64 kernels Miri's feature detection reports: those the build
/// enables (shared with the bitshuffle filter's tests).
#[cfg(all(miri, target_arch = "x86_64"))]
pub(crate) fn kernels_built_in() -> &'static [&'static str] {
    if cfg!(target_feature = "avx2") {
        &["scalar", "sse2", "avx2"]
    } else {
        &["scalar", "sse2"]
    }
}

/// Under Miri, feature detection reports what the build enables: the tests
/// above compare the SSE2 kernel with the scalar one, and the AVX2 one too
/// when the build enables AVX2 (scripts/miri.sh runs both builds).
#[test]
#[cfg(all(miri, target_arch = "x86_64"))]
fn under_miri_the_kernels_of_the_features_built_in_run() {
    let want = kernels_built_in();
    assert_eq!(available().iter().map(|k| k.name).collect::<Vec<_>>(), want);
    assert_eq!(best().name, want[want.len() - 1]);
}

#[test]
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
fn neon_is_the_kernel_on_aarch64() {
    assert_eq!(best().name, "neon");
    assert_eq!(available().iter().map(|k| k.name).collect::<Vec<_>>(), ["scalar", "neon"]);
}
