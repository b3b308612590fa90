//! The tuner (`CParams::tuner`, c-blosc2's `tuner_id = BLOSC_BTUNE`): what
//! it writes are ordinary chunks that decompress to the input, whatever the
//! data, sizes and threads; the tradeoff moves the choice; it follows data
//! that changes; it explores on a schedule. Speed is measured by
//! scripts/bench_tuner.sh, not here.

use b2nd::chunk::tune::Readapt;
use b2nd::chunk::{CParams, Compressor, DParams, Decompressor, PerfMode, Repeat, Schedule, Tuning};
use b2nd::codecs::Codec;

/// Smooth float64 values with a little noise in the low bits: a fast codec
/// gets some ratio, a slow one with the right filter much more.
fn smooth_f64(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .flat_map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let noise = ((x >> 40) & 0xff) as f64 * 1e-9;
            ((i as f64 * 1e-3).sin() * 1000.0 + noise).to_ne_bytes()
        })
        .collect()
}

/// Bytes no codec shrinks.
fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn tuned(tradeoff: f32, typesize: i32, nthreads: i16) -> Compressor {
    let p = CParams {
        typesize,
        nthreads,
        tuner: Some(Tuning { tradeoff, ..Tuning::default() }),
        ..CParams::default()
    };
    Compressor::new(p).unwrap()
}

fn round_trip(c: &mut Compressor, data: &[u8]) -> usize {
    let mut dst = vec![0u8; data.len() + 64];
    let n = c.compress(data, &mut dst).unwrap();
    assert!(n > 0);
    let mut back = vec![0u8; data.len()];
    let got =
        Decompressor::new(DParams { nthreads: 2, ..DParams::default() }).decompress(&dst[..n], &mut back);
    assert_eq!(got.unwrap(), data.len());
    assert!(back == data, "a tuned chunk decompresses to its input");
    n
}

#[test]
fn tuned_chunks_decompress_to_their_input_whatever_the_data_and_threads() {
    let data: Vec<Vec<u8>> = vec![
        smooth_f64(40_000, 1),
        random_bytes(200_000, 2),
        vec![0u8; 1 << 20],
        (0..100_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect(),
        random_bytes(70_001, 3), // not a whole number of items
        smooth_f64(1000, 4),     // below the size worth tuning
        Vec::new(),
    ];
    let cases = [(1, 0.0), (2, 0.5), (4, 0.5), (8, 0.0), (8, 1.0), (300, 0.5)];
    for (typesize, tradeoff) in cases {
        for nthreads in [1i16, 3] {
            {
                let mut c = tuned(tradeoff, typesize, nthreads);
                for d in &data {
                    if d.is_empty() {
                        let mut dst = vec![0u8; 64];
                        assert!(c.compress(d, &mut dst).unwrap() > 0);
                        continue;
                    }
                    round_trip(&mut c, d);
                }
            }
        }
    }
}

#[test]
fn the_tradeoff_moves_the_choice_towards_the_ratio() {
    let data = smooth_f64(128 << 10, 7); // 1 MiB
    let ratio = |tradeoff| {
        let mut c = tuned(tradeoff, 8, 1);
        let n = round_trip(&mut c, &data);
        let d = c.tuner_decision().unwrap();
        assert_eq!(d.readapt, Readapt::Hard, "the first chunk is explored");
        assert!(d.choice.is_some());
        data.len() as f64 / n as f64
    };
    let (speed, size) = (ratio(0.0), ratio(1.0));
    assert!(size > 1.1 * speed, "ratio at tradeoff 1: {size:.2}, at 0: {speed:.2}");
}

#[test]
fn at_tradeoff_one_the_choice_is_the_best_ratio_of_the_codecs_at_their_top_level() {
    let data = smooth_f64(64 << 10, 9);
    let mut c = tuned(1.0, 8, 1);
    let ours = data.len() as f64 / round_trip(&mut c, &data) as f64;
    // the best of a few strong fixed choices
    let mut best = 0.0f64;
    for codec in [Codec::Zstd, Codec::Zlib, Codec::Lz4hc] {
        for shuffle in [1, 2] {
            let mut f = Compressor::new(CParams::classic(codec, 9, shuffle, 8, false)).unwrap();
            best = best.max(data.len() as f64 / round_trip(&mut f, &data) as f64);
        }
    }
    assert!(ours >= 0.9 * best, "tuned {ours:.2}, best fixed {best:.2}");
}

#[test]
fn a_change_in_the_data_brings_a_hard_readapt_forward() {
    let smooth: Vec<u8> = (0..128u32 << 10).flat_map(|i| (i / 7).to_le_bytes()).collect(); // 512 KiB chunks
    let noise = random_bytes(512 << 10, 12);
    let p = CParams {
        typesize: 4,
        tuner: Some(Tuning {
            tradeoff: 0.5,
            schedule: Schedule {
                waits: 1000,
                softs_before_hard: 0,
                hards_before_stop: 0,
                repeat: Repeat::Stop,
            },
            ..Tuning::default()
        }),
        ..CParams::default()
    };
    let mut c = Compressor::new(p).unwrap();
    let mut readapts = Vec::new();
    for i in 0..12 {
        round_trip(&mut c, if i < 6 { &smooth } else { &noise });
        readapts.push(c.tuner_decision().unwrap().readapt);
    }
    assert_eq!(readapts[0], Readapt::Hard);
    // (the first search may go on over the next chunks)
    assert!(readapts[1..6].iter().all(|r| matches!(r, Readapt::None | Readapt::Continued)), "{readapts:?}");
    // the noise is explored on the first of its chunks whose signature the
    // budget let the tuner take before compressing it, and at the latest
    // on chunk 8, its ratio having differed twice in a row (chunks 6 and 7)
    let at = (6..=8).find(|&i| readapts[i] == Readapt::Hard);
    assert!(at.is_some(), "{readapts:?}");
    assert!(readapts[at.unwrap() + 1..].iter().all(|r| *r != Readapt::Hard), "{readapts:?}");
    let totals = c.tuner_totals().unwrap();
    assert_eq!((totals.chunks, totals.explored), (12, 2));
}

#[test]
fn readapts_follow_the_schedule() {
    let data = smooth_f64(64 << 10, 13);
    let p = CParams {
        typesize: 8,
        tuner: Some(Tuning {
            tradeoff: 0.5,
            perf_mode: PerfMode::Balanced,
            schedule: Schedule { waits: 1, softs_before_hard: 2, hards_before_stop: 1, repeat: Repeat::Stop },
            ..Tuning::default()
        }),
        ..CParams::default()
    };
    let mut c = Compressor::new(p).unwrap();
    let mut seen = String::new();
    for _ in 0..10 {
        // each chunk costs more than its trials' share only when the
        // machine is quick; the budget may hold a readapt back, so compare
        // the order of the readapts, not their chunks
        round_trip(&mut c, &data);
        seen.push(match c.tuner_decision().unwrap().readapt {
            Readapt::None => '-',
            Readapt::Soft => 's',
            Readapt::Hard => 'H',
            Readapt::Continued => '+',
        });
    }
    let order: String = seen.chars().filter(|&c| c != '-' && c != '+').collect();
    assert!(["H", "Hs", "Hss", "HssH"].contains(&order.as_str()), "{seen}");
}

#[test]
fn a_hint_starts_from_the_given_parameters() {
    let data = smooth_f64(64 << 10, 15);
    let mut p = CParams::classic(Codec::Lz4, 3, 2, 8, false);
    p.tuner = Some(Tuning { hint: true, ..Tuning::default() });
    let mut c = Compressor::new(p).unwrap();
    round_trip(&mut c, &data);
    let d = c.tuner_decision().unwrap();
    assert_eq!(d.readapt, Readapt::None);
    let choice = d.choice.unwrap();
    assert_eq!((choice.codec, choice.clevel), (Codec::Lz4, 3));
}
