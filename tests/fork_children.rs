//! A process that forks while it compresses on another thread: every child
//! compresses and decompresses with 2 threads and finishes. Before the fix,
//! about 1 child in 300 hung forever on a lock that a thread of the parent
//! (one of the pool's helpers, which do not exist in the child) held at the
//! instant of the fork.
//!
//! The parent keeps compressing (LZ4, shuffle, typesize 4, 2 threads, 4 MiB)
//! on one thread while its main thread forks every 1-3 ms. Each child
//! compresses 4 MiB with a context of its own and decompresses it with a
//! context the parent made before forking, both with 2 threads, checks the
//! bytes and exits. `B2ND_FORK_TRIALS` sets the number of forks (default 2,000).
#![cfg(unix)]

#[path = "common/forks.rs"]
mod forks;

use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::Codec;
use std::sync::{Arc, Mutex};

fn data() -> Vec<u8> {
    (0..1u32 << 20).flat_map(|i| (i / 7).to_ne_bytes()).collect()
}

fn cparams() -> CParams {
    let mut p = CParams::classic(Codec::Lz4, 5, 1, 4, false);
    p.nthreads = 2;
    p.blocksize = 64 << 10;
    p
}

fn dparams() -> DParams {
    DParams { nthreads: 2, ..DParams::default() }
}

/// The child's work: 0 when the bytes came back, 1 when they did not.
fn child(src: &[u8], d: &mut Decompressor) -> i32 {
    let Ok(mut c) = Compressor::new(cparams()) else { return 1 };
    let mut out = vec![0u8; src.len() + 64];
    let Ok(n) = c.compress(src, &mut out) else { return 1 };
    let mut back = vec![0u8; src.len()];
    match d.decompress(&out[..n], &mut back) {
        Ok(len) if len == src.len() && back == src => 0,
        _ => 1,
    }
}

#[test]
fn forked_children_never_hang() {
    let trials = forks::trials(2000);
    let src = Arc::new(data());
    let busy = {
        let src = Arc::clone(&src);
        let mut c = Compressor::new(cparams()).unwrap();
        let mut d = Decompressor::new(dparams());
        let mut out = vec![0u8; src.len() + 64];
        let mut back = vec![0u8; src.len()];
        move || {
            let n = c.compress(&src, &mut out).unwrap();
            d.decompress(&out[..n], &mut back).unwrap();
        }
    };
    // Made by the parent, used by every child (never by the parent meanwhile).
    let d = Mutex::new(Decompressor::new(dparams()));
    let (t, rounds) =
        forks::while_busy(busy, || forks::fork_children(trials, &|| child(&src, &mut d.lock().unwrap())));
    eprintln!("{trials} forks: {t:?} ({rounds} rounds in the parent)");
    assert_eq!((t.failed, t.hung), (0, 0), "of {trials} forked children");
}
