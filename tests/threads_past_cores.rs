//! `nthreads` above the cores this process may use costs nothing: a context
//! asked for 8, 16 or 64 threads starts no more threads than one that asked
//! for as many as there are cores, and its calls give no more helpers work
//! (python-blosc2 sets nthreads to the machine's cores: a container or a
//! taskset often allows fewer). Counts, not timings.
// Linux only: it counts the threads of /proc/self/task.
#![cfg(target_os = "linux")]

use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::Codec;

/// The threads of this process now.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// 16 MiB of int32 that LZ4 compresses, in many blocks.
fn data() -> Vec<u8> {
    (0..4u32 << 20).flat_map(|i| (i / 5).to_le_bytes()).collect()
}

/// Compress and decompress `src` with `nthreads`; the threads seen while doing it, at most.
fn round_trip(src: &[u8], nthreads: i16) -> usize {
    let mut p = CParams::classic(Codec::Lz4, 5, 1, 4, false);
    p.nthreads = nthreads;
    p.blocksize = 64 << 10;
    let mut c = Compressor::new(p).unwrap();
    let mut out = vec![0u8; src.len() + 64];
    let mut most = threads();
    let n = c.compress(src, &mut out).unwrap();
    most = most.max(threads());
    let dp = DParams { nthreads, ..DParams::default() };
    let mut d = Decompressor::new(dp);
    let mut back = vec![0u8; src.len()];
    assert_eq!(d.decompress(&out[..n], &mut back).unwrap(), src.len());
    assert!(back == src);
    most.max(threads())
}

#[test]
fn nthreads_past_the_cores_starts_no_more_threads_than_the_cores() {
    let src = data();
    let start = threads();
    let cores = cores();
    // the pools a context of as many threads as cores uses: at most cores - 1 helpers
    let at_cores = round_trip(&src, cores as i16);
    assert!(
        at_cores <= start + cores.saturating_sub(1),
        "{at_cores} threads with nthreads = {cores} cores (from {start})"
    );
    // more threads asked for: not one more started
    for n in [8i16, 16, 64] {
        let seen = round_trip(&src, n);
        assert!(
            seen <= at_cores.max(start + cores.saturating_sub(1)),
            "nthreads {n}: {seen} threads (at {cores} cores: {at_cores})"
        );
    }
}
