//! A fixed workload for each SIMD kernel and its scalar oracle, for
//! `scripts/kernel_counts.sh`, which counts the instructions each executes
//! under an emulator (where no timing means anything).
//!
//! `B2ND_WORKLOAD="FILTER KERNEL TYPESIZE"` (FILTER: shuffle, unshuffle,
//! bitshuffle, bitunshuffle or bytedelta-decode; KERNEL: a name of
//! `available()`, or scalar / neon for bytedelta) runs that one case on a
//! 64 KiB block, once, after printing where `run` was loaded (so that the
//! script can find the kernels' code in memory). Without it, every case runs once on a smaller
//! block, and every kernel must give the oracle's bytes.

use super::{bitshuffle, bytedelta, shuffle};

fn block(len: usize) -> Vec<u8> {
    // smooth float64 values: what the filters are used on
    (0..len / 8).flat_map(|i| (1000.0 + (i % 997) as f64 * 0.125).to_le_bytes()).collect()
}

/// Run one case `reps` times; its output.
fn run(filter: &str, kernel: &str, ts: usize, src: &[u8], reps: usize) -> Vec<u8> {
    let mut dst = vec![0u8; src.len()];
    for _ in 0..reps {
        match filter {
            "shuffle" | "unshuffle" => {
                let k = shuffle::available()
                    .into_iter()
                    .find(|k| k.name == kernel)
                    .expect("a kernel of this machine");
                if filter == "shuffle" {
                    shuffle::shuffle_with(&k, ts, src, &mut dst);
                } else {
                    shuffle::unshuffle_with(&k, ts, src, &mut dst);
                }
            }
            "bitshuffle" | "bitunshuffle" => {
                let k = bitshuffle::available()
                    .into_iter()
                    .find(|k| k.name == kernel)
                    .expect("a kernel of this machine");
                if filter == "bitshuffle" {
                    bitshuffle::bitshuffle_with(&k, ts, src, &mut dst);
                } else {
                    bitshuffle::bitunshuffle_with(&k, ts, src, &mut dst, 3);
                }
            }
            "bytedelta-decode" => {
                for (s, d) in src.chunks(src.len() / ts).zip(dst.chunks_mut(src.len() / ts)) {
                    match kernel {
                        "scalar" => bytedelta::decode_stream_scalar(s, d, 0),
                        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
                        "neon" => bytedelta::decode_stream_neon(s, d),
                        _ => panic!("no bytedelta kernel {kernel} here"),
                    }
                }
            }
            _ => panic!("unknown filter {filter}"),
        }
    }
    dst
}

#[test]
fn workload() {
    if let Ok(spec) = std::env::var("B2ND_WORKLOAD") {
        let f: Vec<&str> = spec.split_whitespace().collect();
        let [filter, kernel, ts] = f[..] else { panic!("B2ND_WORKLOAD=\"FILTER KERNEL TYPESIZE\"") };
        let src = block(64 << 10);
        let anchor: fn(&str, &str, usize, &[u8], usize) -> Vec<u8> = run;
        println!("B2ND_WORKLOAD_ANCHOR {:p}", anchor as *const ());
        std::hint::black_box(run(filter, kernel, ts.parse().unwrap(), &src, 1));
        return;
    }
    let src = block(if cfg!(miri) { 2 << 10 } else { 24 << 10 }); // (Miri is slow)
    let mut bytedelta_kernels = vec!["scalar"];
    if cfg!(all(target_arch = "aarch64", target_feature = "neon")) {
        bytedelta_kernels.push("neon");
    }
    for ts in [2, 4, 8, 16] {
        for filter in ["shuffle", "unshuffle", "bitshuffle", "bitunshuffle", "bytedelta-decode"] {
            let kernels: Vec<&str> = match filter {
                "shuffle" | "unshuffle" => shuffle::available().iter().map(|k| k.name).collect(),
                "bytedelta-decode" => bytedelta_kernels.clone(),
                _ => bitshuffle::available().iter().map(|k| k.name).collect(),
            };
            let want = run(filter, "scalar", ts, &src, 1);
            for k in kernels {
                assert!(run(filter, k, ts, &src, 1) == want, "{filter} {k} typesize {ts}");
            }
        }
    }
}
