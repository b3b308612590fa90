//! A process that compresses through the global API (`blosc2_compress`, 2
//! threads) on one thread and forks on another: every child compresses and
//! decompresses through the global API too, with the settings its parent
//! made (LZ4, 2 threads), and finishes. The global context's lock may be held
//! by the parent's compressing thread at the fork: the child must not wait
//! for it. `B2ND_FORK_TRIALS` sets the number of forks (default 2,000).
#![cfg(unix)]

#[path = "../../../tests/common/forks.rs"]
mod forks;

use b2nd_capi::blosc2::chunk::{blosc2_compress, blosc2_decompress};
use b2nd_capi::blosc2::global::{
    blosc1_get_compressor, blosc1_set_compressor, blosc2_get_nthreads, blosc2_set_nthreads,
};
use std::ffi::CStr;
use std::sync::Arc;

fn data() -> Vec<u8> {
    (0..1u32 << 20).flat_map(|i| (i / 7).to_ne_bytes()).collect()
}

/// Compress and decompress `src` through the global API: whether the bytes came back.
fn round_trip(src: &[u8], out: &mut [u8], back: &mut [u8]) -> bool {
    // SAFETY: buffers of the sizes given.
    unsafe {
        let n = blosc2_compress(
            5,
            1,
            4,
            src.as_ptr().cast(),
            src.len() as i32,
            out.as_mut_ptr().cast(),
            out.len() as i32,
        );
        n > 0
            && blosc2_decompress(out.as_ptr().cast(), n, back.as_mut_ptr().cast(), back.len() as i32)
                == src.len() as i32
            && back == src
    }
}

#[test]
fn forked_children_of_global_callers_never_hang() {
    let trials = forks::trials(2000);
    // SAFETY: a NUL-terminated name.
    assert_eq!(unsafe { blosc1_set_compressor(c"lz4".as_ptr()) }, 1);
    blosc2_set_nthreads(2);
    let src = Arc::new(data());
    let busy = {
        let src = Arc::clone(&src);
        let mut out = vec![0u8; src.len() + 64];
        let mut back = vec![0u8; src.len()];
        move || assert!(round_trip(&src, &mut out, &mut back))
    };
    let child = || {
        // SAFETY: the library's static name.
        let name = unsafe { CStr::from_ptr(blosc1_get_compressor()) };
        if name.to_bytes() != b"lz4" || blosc2_get_nthreads() != 2 {
            return 3; // the parent's settings were lost
        }
        let mut out = vec![0u8; src.len() + 64];
        let mut back = vec![0u8; src.len()];
        if round_trip(&src, &mut out, &mut back) {
            0
        } else {
            1
        }
    };
    let (t, rounds) = forks::while_busy(busy, || forks::fork_children(trials, &child));
    eprintln!("{trials} forks: {t:?} ({rounds} rounds in the parent)");
    assert_eq!((t.failed, t.hung), (0, 0), "of {trials} forked children");
}
