//! The hot paths allocate nothing once warm: compression and decompression
//! contexts (1 and 2 threads, every codec) and super-chunk reads reuse their
//! buffers; b2nd slices allocate only a little bookkeeping, never a buffer.
//! The counter is process-wide, so this binary has no test harness: its
//! `main` runs the checks one after the other on the main thread. Under
//! libtest, a finished test's thread and the harness allocate (its result,
//! the "running for over 60 seconds" notice on a slow machine) while the next
//! test counts.
//!
//! Each test runs beside two busy processes it starts itself: on a loaded
//! machine a helper thread may miss the warm-up call and join a later one,
//! which must find its buffers and codec state ready all the same.

#[path = "common/spawn.rs"]
mod spawn;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::ALL;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
            BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
            BYTES.fetch_add(new_size, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Processes that keep every core busy while a test runs (killed on drop).
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn start(n: usize) -> Busy {
        // this test program again, told to spin (no shell: Windows has none)
        let spin = || {
            let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
            cmd.env(SPIN, "1");
            spawn::start(|| cmd.spawn()).expect("start a busy process")
        };
        Busy((0..n).map(|_| spin()).collect())
    }
}

/// Set in the busy processes of [`Busy`]: spin until killed.
const SPIN: &str = "B2ND_NO_ALLOC_SPIN";

impl Drop for Busy {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Allocations made while `f` runs (on any thread).
fn allocations(f: impl FnOnce()) -> usize {
    allocated(f).0
}

/// Allocations made while `f` runs (on any thread), and their bytes.
fn allocated(f: impl FnOnce()) -> (usize, usize) {
    ALLOCS.store(0, Ordering::SeqCst);
    BYTES.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    (ALLOCS.load(Ordering::SeqCst), BYTES.load(Ordering::SeqCst))
}

fn warm_contexts_compress_decompress_and_getitem_without_allocating() {
    let _busy = Busy::start(2);
    let src: Vec<u8> = (0u32..1 << 20).flat_map(|i| (i / 3 + ((i * 7919) >> 9 & 3)).to_le_bytes()).collect();
    let mut dst = vec![0u8; src.len() + 64];
    let mut back = vec![0u8; src.len()];
    let mut items = vec![0u8; 4000];
    for codec in ALL {
        for shuffle in [0, 1, 2] {
            for nthreads in [1i16, 2] {
                let mut p = CParams::classic(codec, 5, shuffle, 4, false);
                p.nthreads = nthreads;
                let mut c = Compressor::new(p).unwrap();
                let mut d = Decompressor::new(DParams { nthreads, ..DParams::default() });
                // Warm up: buffers, pools, codec states.
                let n = c.compress(&src, &mut dst).unwrap();
                d.decompress(&dst[..n], &mut back).unwrap();
                d.getitem(&dst[..n], 123_457, 1000, &mut items).unwrap();
                let (mut cn, mut dn, mut gn) = (0, 0, 0);
                for _ in 0..3 {
                    let mut n = 0;
                    cn += allocations(|| n = c.compress(&src, &mut dst).unwrap());
                    dn += allocations(|| assert_eq!(d.decompress(&dst[..n], &mut back).unwrap(), src.len()));
                    gn += allocations(|| {
                        assert_eq!(d.getitem(&dst[..n], 123_457, 1000, &mut items).unwrap(), 4000)
                    });
                }
                assert!(back == src && items == src[123_457 * 4..124_457 * 4]);
                assert_eq!(
                    (cn, dn, gn),
                    (0, 0, 0),
                    "{codec:?} shuffle {shuffle} {nthreads} threads: allocations in 3 warm compress, decompress, getitem calls"
                );
            }
        }
    }
}

fn scratch_dir() -> std::path::PathBuf {
    b2nd::os::temp_dir().join(format!("b2nd-no-alloc-{}", b2nd::os::process_id()))
}

fn scratch(name: &str) -> String {
    let dir = scratch_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::remove_dir_all(&p);
    p.to_str().unwrap().to_string()
}

fn warm_super_chunk_and_array_reads_without_allocating() {
    let _busy = Busy::start(2);
    use b2nd::array::{Array, Context};
    use b2nd::codecs::Codec;
    use b2nd::schunk::{Storage, SuperChunk};
    let chunk: Vec<u8> = (0u32..1 << 16).flat_map(|i| (i / 3).to_le_bytes()).collect();
    let storages = [
        ("memory", Storage::default()),
        ("memory frame", Storage { contiguous: true, ..Storage::default() }),
        (
            "frame file",
            Storage { contiguous: true, urlpath: Some(scratch("f.b2frame")), ..Storage::default() },
        ),
        (
            "sparse dir",
            Storage { contiguous: false, urlpath: Some(scratch("s.b2frame")), ..Storage::default() },
        ),
    ];
    for (name, storage) in storages {
        for nthreads in [1i16, 2] {
            let mut cp = CParams::classic(Codec::Lz4, 5, 1, 4, false);
            cp.nthreads = nthreads;
            if let Some(p) = &storage.urlpath {
                let _ = std::fs::remove_file(p);
                let _ = std::fs::remove_dir_all(p);
            }
            let mut sc =
                SuperChunk::new(cp, DParams { nthreads, ..DParams::default() }, storage.clone()).unwrap();
            for _ in 0..4 {
                sc.append_buffer(&chunk).unwrap();
            }
            let mut out = vec![0u8; chunk.len()];
            let mut items = vec![0u8; 400];
            sc.decompress_chunk(2, &mut out).unwrap();
            sc.get_slice(70_000, 70_100, &mut items).unwrap();
            let d = allocations(|| {
                for i in 0..4 {
                    assert_eq!(sc.decompress_chunk(i, &mut out).unwrap(), chunk.len());
                }
            });
            let g = allocations(|| {
                for k in 0..4 {
                    sc.get_slice(70_000 + k * 1000, 70_100 + k * 1000, &mut items).unwrap();
                }
            });
            assert!(out == chunk);
            if name == "sparse dir" {
                // Each read opens the chunk's file by its path (as c-blosc2
                // does): the path and the open file are allocated, three per
                // file opened (4 chunk reads; 4 slices reading the chunk's
                // size, its header, block starts and one block each); nothing
                // else. Windows makes one more: the path in UTF-16.
                let per_open = if cfg!(windows) { 4 } else { 3 };
                assert!(
                    d <= per_open * 4 && g <= per_open * 4 * 4,
                    "{name}, {nthreads} threads: {d} and {g} allocations"
                );
            } else {
                assert_eq!(
                    (d, g),
                    (0, 0),
                    "{name}, {nthreads} threads: allocations in warm decompress_chunk, get_slice"
                );
            }
        }
    }
    // A b2nd array in memory: slices and items go from the blocks they touch
    // into the caller's buffer. What is allocated is bookkeeping (coordinate
    // lists of the slice's chunks and blocks, a few dozen bytes each), never
    // a buffer for a block (4000 bytes here) or a chunk.
    let shape = [60i64, 60, 60];
    let all: Vec<u8> = (0u32..60 * 60 * 60).flat_map(|i| i.to_le_bytes()).collect();
    let ctx =
        Context::new(&shape, &[30, 30, 30], &[10, 10, 10], CParams::classic(Codec::Lz4, 5, 1, 4, false));
    let a = Array::from_buffer(&ctx, &all).unwrap();
    let mut plane = vec![0u8; 60 * 60 * 4];
    let mut one = [0u8; 4];
    a.get_slice(&[7, 0, 0], &[8, 60, 60], &mut plane).unwrap();
    a.get_slice(&[1, 2, 3], &[2, 3, 4], &mut one).unwrap();
    for (start, stop, out) in
        [([31, 0, 0], [32, 60, 60], &mut plane[..]), ([41, 42, 43], [42, 43, 44], &mut one[..])]
    {
        let (n, bytes) = allocated(|| a.get_slice(&start, &stop, out).unwrap());
        assert!(bytes < 2000, "a warm array slice {start:?}..{stop:?}: {n} allocations, {bytes} bytes");
    }
    assert_eq!(u32::from_le_bytes(one), 41 * 3600 + 42 * 60 + 43);
    assert_eq!(plane[..8], [(31u32 * 3600).to_le_bytes(), (31u32 * 3600 + 1).to_le_bytes()].concat()[..]);
}

/// A warm tuner allocates nothing per chunk: not when it compresses with its
/// choice, not when it runs trials (soft and hard readapts, after the first).
fn warm_tuner_compresses_and_readapts_without_allocating() {
    use b2nd::chunk::{Repeat, Schedule, Tuning};
    let _busy = Busy::start(2);
    let smooth: Vec<u8> = (0u64..1 << 19)
        .flat_map(|i| ((i as f64 * 1e-3).sin() * 1e3 + (i % 7) as f64 * 1e-9).to_le_bytes())
        .collect();
    let ramp: Vec<u8> =
        (0u64..1 << 19).flat_map(|i| (i * 3 + (((i * 7919) >> 5) & 3)).to_le_bytes()).collect();
    let mut dst = vec![0u8; smooth.len() + 64];
    for nthreads in [1i16, 2] {
        let tuning = Tuning {
            tradeoff: 0.0,
            schedule: Schedule {
                waits: 0,
                softs_before_hard: 1,
                hards_before_stop: 1000,
                repeat: Repeat::All,
            },
            // (the trace, which allocates: for looking at a failure, not for counting)
            trace: std::env::var_os("B2ND_NO_ALLOC_TRACE").is_some(),
            ..Tuning::default()
        };
        let p = CParams { typesize: 8, nthreads, tuner: Some(tuning), ..CParams::default() };
        let mut c = Compressor::new(p).unwrap();
        // warm up: the first hard readapt and the trials after it on both kinds of data
        for i in 0..24 {
            c.compress(if i % 8 < 4 { &smooth } else { &ramp }, &mut dst).unwrap();
        }
        // then counted until four readapts more have come (hard ones among
        // them, which move between codecs and levels: zlib's stream at
        // another level was made anew); the data changes every four chunks,
        // which brings hard readapts forward, as their budget allows (before
        // the chunks' signatures did, wine took up to 1859 chunks for four)
        let explored = c.tuner_totals().unwrap().explored;
        let (mut n, mut chunks) = (0, 0);
        while chunks < 24 || (chunks < 6000 && c.tuner_totals().unwrap().explored - explored < 4) {
            let data = if chunks % 8 < 4 { &smooth } else { &ramp };
            let k = allocations(|| assert!(c.compress(data, &mut dst).unwrap() > 0));
            if k > 0 {
                println!("  chunk {chunks}: {k} allocations, {:?}", c.tuner_decision());
            }
            n += k;
            chunks += 1;
        }
        let readapts = c.tuner_totals().unwrap().explored - explored;
        assert!(readapts >= 4, "{nthreads} thread(s): {readapts} readapts in {chunks} chunks");
        assert_eq!(
            n, 0,
            "{nthreads} thread(s): {n} allocations in {chunks} tuned chunks ({readapts} readapts)"
        );
        println!("  tuner, {nthreads} thread(s): {chunks} chunks, {readapts} readapts, no allocation");
    }
}

/// Runs the checks in order; an argument that is not a flag selects the
/// checks whose names contain it, as libtest's filter does.
fn main() {
    if std::env::var_os(SPIN).is_some() {
        loop {
            std::hint::spin_loop();
        }
    }
    let checks: [(&str, fn()); 3] = [
        (
            "warm_contexts_compress_decompress_and_getitem_without_allocating",
            warm_contexts_compress_decompress_and_getitem_without_allocating,
        ),
        (
            "warm_super_chunk_and_array_reads_without_allocating",
            warm_super_chunk_and_array_reads_without_allocating,
        ),
        (
            "warm_tuner_compresses_and_readapts_without_allocating",
            warm_tuner_compresses_and_readapts_without_allocating,
        ),
    ];
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    for (name, check) in checks {
        if filter.as_deref().is_none_or(|f| name.contains(f)) {
            check();
            println!("test {name} ... ok");
        }
    }
    // (the scratch files of the checks that passed; a failure keeps them)
    let _ = std::fs::remove_dir_all(scratch_dir());
}
