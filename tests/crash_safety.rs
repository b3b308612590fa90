//! Crash safety of frame files (contiguous and sparse).
//!
//! Kill points: a child process applies one change to a frame through a
//! backend that counts every write and truncation (of the frame, its sparse
//! chunk files and its journal) and, at the N-th, writes half of it and
//! aborts; the parent reopens the frame and checks that it holds the state
//! before the change (or after it), that every chunk decodes to its content,
//! and that the frame takes a new chunk. N goes from 1 until the child
//! completes, for every change and both kinds of frame.
//!
//! Write faults: the same changes in this process, with the N-th write
//! failing (or writing half and failing, as a full disk does): the call
//! fails, the handle still reads the old state and can make the change once
//! the fault is gone, and the file reopens with the old state.

#[path = "common/spawn.rs"]
mod spawn;

use b2nd::chunk::{CParams, Compressor, DParams, Special};
use b2nd::codecs::Codec;
use b2nd::io::{filesystem, Backend, Mode, Stream};
use b2nd::schunk::{Storage, SuperChunk};
use b2nd::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Chunk sizes: small frames (every change moves what c-blosc2 moves), and
/// large ones (5 x 5 MB of noise: an update of the first chunk has more than
/// 16 MiB after it, and is written in place or at the end).
const SMALL: usize = 4000;
const LARGE: usize = 5 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    /// Write half, then abort the process.
    Kill,
    /// Fail without writing.
    Fail,
    /// Write half, then fail (a full disk).
    Short,
}

struct State {
    count: AtomicUsize,
    at: AtomicUsize,
    fault: Fault,
    /// Act as a user backend (I/O callbacks): paths are not files, no locks.
    user: bool,
}

#[derive(Clone)]
struct Faulty(Arc<State>);

struct FaultyStream {
    inner: Box<dyn Stream>,
    state: Arc<State>,
}

impl Faulty {
    fn new(at: usize, fault: Fault) -> Faulty {
        Faulty(Arc::new(State { count: AtomicUsize::new(0), at: AtomicUsize::new(at), fault, user: false }))
    }
    fn user(at: usize, fault: Fault) -> Faulty {
        Faulty(Arc::new(State { count: AtomicUsize::new(0), at: AtomicUsize::new(at), fault, user: true }))
    }
    fn disarm(&self) {
        self.0.at.store(usize::MAX, Ordering::SeqCst);
    }
}

impl FaultyStream {
    /// Count one write; at the chosen one, do what the fault says. Ok(true): write normally.
    fn tick(&self, half: impl FnOnce()) -> Result<(), Error> {
        let n = self.state.count.fetch_add(1, Ordering::SeqCst) + 1;
        if n != self.state.at.load(Ordering::SeqCst) {
            return Ok(());
        }
        match self.state.fault {
            Fault::Kill => {
                half();
                std::process::abort();
            }
            Fault::Fail => Err(Error::FileWrite),
            Fault::Short => {
                half();
                Err(Error::FileWrite)
            }
        }
    }
}

impl Stream for FaultyStream {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize, Error> {
        self.inner.read_at(pos, buf)
    }
    fn write_at(&self, pos: u64, data: &[u8]) -> Result<(), Error> {
        self.tick(|| {
            let _ = self.inner.write_at(pos, &data[..data.len() / 2]);
        })?;
        self.inner.write_at(pos, data)
    }
    fn size(&self) -> Result<u64, Error> {
        self.inner.size()
    }
    fn truncate(&self, len: u64) -> Result<(), Error> {
        self.tick(|| {})?;
        self.inner.truncate(len)
    }
    fn identity(&self) -> Option<(u64, u64)> {
        self.inner.identity()
    }
}

impl Backend for Faulty {
    fn open(&self, path: &str, mode: Mode) -> Result<Box<dyn Stream>, Error> {
        let inner = filesystem().open(path, mode)?;
        Ok(Box::new(FaultyStream { inner, state: self.0.clone() }))
    }
    fn is_filesystem(&self) -> bool {
        !self.0.user
    }
    fn id(&self) -> u8 {
        if self.0.user {
            200
        } else {
            0
        }
    }
    fn sidecar(&self) -> Option<Arc<dyn Backend>> {
        Some(Arc::new(self.clone()))
    }
}

/// The backend a user reopens a frame with: what I/O callbacks over files
/// are (files reached only through open, read, write, size, truncate).
fn reopen_backend(user: bool) -> Arc<dyn Backend> {
    if user {
        Arc::new(Faulty::user(usize::MAX, Fault::Fail))
    } else {
        filesystem()
    }
}

fn cparams() -> CParams {
    let mut p = CParams::classic(Codec::Lz4, 5, 1, 4, false);
    p.blocksize = 1000;
    p
}

/// Chunk contents: a ramp (compresses well) for small chunks, noise for large ones.
fn data(seed: usize, n: usize) -> Vec<u8> {
    if n == LARGE {
        let mut x = seed as u64 * 0x9e37_79b9_7f4a_7c15 + 1;
        return (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
    }
    (0..n / 4).flat_map(|i| ((i * 7 + seed * 100_003) as u32).to_le_bytes()).collect()
}

fn compress(src: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; src.len() + 64];
    let n = Compressor::new(cparams()).unwrap().compress(src, &mut out).unwrap();
    out.truncate(n);
    out
}

const CHANGES: &[&str] = &[
    "append",
    "insert",
    "update_larger",
    "update_smaller",
    "update_to_zeros",
    "update_zeros_to_stored",
    "delete",
    "delete_all_but_one",
    "reorder",
    "vlmeta_add",
    "vlmeta_update",
    "vlmeta_delete",
    "meta_update",
];

/// The frame every trial starts from: 4 chunks (the third of zeros), a metalayer, a vlmetalayer.
fn base(sc: &mut SuperChunk, size: usize) {
    sc.meta_add("m", b"metalayer-0").unwrap();
    let n = if size == LARGE { 5 } else { 4 };
    for i in 0..n {
        if i == 2 && size == SMALL {
            sc.append_chunk(&b2nd::frame::live::special_chunk(Special::Zero, size as i32, 4, 0)).unwrap();
        } else {
            sc.append_chunk(&compress(&data(i, size))).unwrap();
        }
    }
    sc.vlmeta_add("v", b"vlmeta-0", None).unwrap();
}

fn apply(sc: &mut SuperChunk, change: &str, size: usize) -> Result<(), Error> {
    match change {
        "append" => sc.append_chunk(&compress(&data(10, size))).map(drop),
        "insert" => sc.insert_chunk(1, &compress(&data(11, size))).map(drop),
        // random-ish data compresses worse: a larger chunk
        "update_larger" => {
            let noisy: Vec<u8> =
                (0..size).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[2]).collect();
            let mut c = compress(&noisy);
            if size == LARGE {
                // a stored chunk bigger than the noise chunk it replaces: memcpyed, with a longer header
                c = compress(&data(13, size));
                let mut p = cparams();
                p.clevel = 0;
                let mut out = vec![0u8; size + 64];
                let n = Compressor::new(p).unwrap().compress(&data(13, size), &mut out).unwrap();
                out.truncate(n);
                if out.len() > c.len() {
                    c = out;
                }
            }
            sc.update_chunk(if size == LARGE { 0 } else { 1 }, &c).map(drop)
        }
        "update_smaller" => {
            sc.update_chunk(if size == LARGE { 0 } else { 1 }, &compress(&vec![9u8; size])).map(drop)
        }
        "update_to_zeros" => {
            sc.update_chunk(0, &b2nd::frame::live::special_chunk(Special::Zero, size as i32, 4, 0)).map(drop)
        }
        "update_zeros_to_stored" => sc.update_chunk(2, &compress(&data(12, size))).map(drop),
        "delete" | "compact" => sc.delete_chunk(1).map(drop),
        "delete_all_but_one" => {
            // three changes: the last one is the one under test
            sc.delete_chunk(0).map(drop)
        }
        "reorder" => sc.reorder(&[3, 2, 1, 0]),
        "vlmeta_add" => sc.vlmeta_add("w", &[5u8; 300], None).map(drop),
        "vlmeta_update" => sc.vlmeta_update("v", &[6u8; 500], None).map(drop),
        "vlmeta_delete" => sc.vlmeta_delete("v").map(drop),
        "meta_update" => sc.meta_update("m", b"metalayer-1").map(drop),
        _ => panic!("unknown change {change}"),
    }
}

/// Everything a reader sees: chunks (decompressed), metalayers, vlmetalayers.
#[derive(Debug, PartialEq)]
struct Seen {
    chunks: Vec<Vec<u8>>,
    meta: Vec<u8>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

fn seen(sc: &SuperChunk) -> Result<Seen, Error> {
    let mut chunks = Vec::new();
    for i in 0..sc.nchunks() {
        let mut buf = vec![0u8; sc.chunk_nbytes(i)? as usize];
        sc.decompress_chunk(i, &mut buf)?;
        chunks.push(buf);
    }
    let mut vlmeta = Vec::new();
    for m in sc.vlmetalayers() {
        vlmeta.push((m.name.clone(), sc.vlmeta_get(&m.name)?));
    }
    Ok(Seen { chunks, meta: sc.meta_get("m")?.to_vec(), vlmeta })
}

/// The states before and after `change`, from an in-memory super-chunk.
fn model(change: &str, size: usize) -> (Seen, Seen) {
    let mut sc = SuperChunk::new(cparams(), DParams::default(), Storage::default()).unwrap();
    base(&mut sc, size);
    before_change(&mut sc, change);
    let before = seen(&sc).unwrap();
    apply(&mut sc, change, size).unwrap();
    (before, seen(&sc).unwrap())
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = b2nd::os::temp_dir().join(format!("b2nd-crash-{}-{tag}", b2nd::os::process_id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fresh frame at `path` in the base state (and the steps before the change under test).
fn make_base(path: &str, contiguous: bool, change: &str, size: usize) {
    let _ = b2nd::schunk::remove_urlpath(path);
    let storage = Storage { contiguous, urlpath: Some(path.to_string()), ..Storage::default() };
    let mut sc = SuperChunk::new(cparams(), DParams::default(), storage).unwrap();
    base(&mut sc, size);
    before_change(&mut sc, change);
}

/// The steps of the base state a change needs before it.
fn before_change(sc: &mut SuperChunk, change: &str) {
    match change {
        "delete_all_but_one" => {
            sc.delete_chunk(0).unwrap();
            sc.delete_chunk(0).unwrap();
        }
        "compact" => {
            sc.delete_chunk(1).unwrap();
        }
        _ => {}
    }
}

/// The frame after a crash or a fault: it opens, holds `before` or `after`
/// (`after` when `completed`), and takes one more chunk.
fn check_reopened(path: &str, before: &Seen, after: &Seen, completed: bool, what: &str) {
    check_reopened_with(path, before, after, completed, what, false)
}

fn check_reopened_with(path: &str, before: &Seen, after: &Seen, completed: bool, what: &str, user: bool) {
    let mut sc = SuperChunk::open(path, reopen_backend(user), true)
        .unwrap_or_else(|e| panic!("{what}: does not open: {e:?}"));
    let now = seen(&sc).unwrap_or_else(|e| panic!("{what}: unreadable: {e:?}"));
    if completed {
        assert_eq!(&now, after, "{what}: the completed change is not there");
    } else {
        assert!(&now == before || &now == after, "{what}: neither the old nor the new state: {now:?}");
    }
    let n = sc.nchunks();
    sc.append_buffer(&data(99, SMALL)).unwrap_or_else(|e| panic!("{what}: takes no new chunk: {e:?}"));
    drop(sc);
    let again = SuperChunk::open(path, filesystem(), false).unwrap();
    assert_eq!(again.nchunks(), n + 1, "{what}");
    let mut last = vec![0u8; SMALL];
    again.decompress_chunk(n, &mut last).unwrap();
    assert_eq!(last, data(99, SMALL), "{what}");
}

/// Run by the child process: apply the change through a backend that aborts at write `at`.
#[test]
fn crash_child() {
    let Ok(spec) = std::env::var("B2ND_CRASH_CHILD") else { return };
    let parts: Vec<&str> = spec.split('|').collect();
    let (path, change, at, size) =
        (parts[0], parts[1], parts[2].parse::<usize>().unwrap(), parts[3].parse::<usize>().unwrap());
    let backend = if parts.get(4) == Some(&"user") {
        Faulty::user(at, Fault::Kill)
    } else {
        Faulty::new(at, Fault::Kill)
    };
    let mut sc = SuperChunk::open(path, Arc::new(backend), true).unwrap();
    apply(&mut sc, change, size).unwrap();
    drop(sc);
    std::process::exit(0);
}

/// Run the test `name` of this binary in a child process with `var=spec`
/// (its output dropped); whether it exited normally.
fn child_ok(name: &str, var: &str, spec: String) -> bool {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env(var, spec)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    spawn::start(|| cmd.status()).expect("start the child").success()
}

/// The changes tried on large frames (those whose writes differ there).
/// "compact": a delete that finds a fifth of the frame in holes (a chunk the
/// base deleted) and moves the chunk stored last into them.
const LARGE_CHANGES: &[&str] =
    &["update_larger", "update_smaller", "update_to_zeros", "append", "delete", "compact"];

fn kill_points(size: usize, changes: &[&str]) -> usize {
    kill_points_with(size, changes, false)
}

/// Kill points through the filesystem backend, or (`user`) through a backend
/// whose paths are not files, as I/O callbacks are: its journal goes through
/// its own open, read, write, size and truncate, without locks.
fn kill_points_with(size: usize, changes: &[&str], user: bool) -> usize {
    let mut points = 0;
    for contiguous in [true, false] {
        let dir = scratch(&format!("kill-{size}-{contiguous}-{user}"));
        for change in changes {
            let (before, after) = model(change, size);
            let path = dir.join(format!("{change}.b2frame"));
            let path = path.to_str().unwrap();
            let mut completed = false;
            for at in 1..400 {
                make_base(path, contiguous, change, size);
                completed = child_ok(
                    "crash_child",
                    "B2ND_CRASH_CHILD",
                    format!("{path}|{change}|{at}|{size}|{}", if user { "user" } else { "fs" }),
                );
                let what = format!(
                    "{} frame, {change}, chunks of {size} B, killed at write {at}{}",
                    if contiguous { "contiguous" } else { "sparse" },
                    if user { ", user backend" } else { "" }
                );
                check_reopened_with(path, &before, &after, completed, &what, user);
                points += 1;
                if completed {
                    break;
                }
            }
            assert!(completed, "{change}: the change never completed");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    points
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "WASI: no child processes")]
fn killed_at_every_write_the_frame_reopens_whole() {
    let points = kill_points(SMALL, CHANGES);
    eprintln!("{points} kill points checked");
    assert!(points > 150);
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "WASI: no child processes")]
fn killed_at_every_write_through_a_user_backend_the_frame_reopens_whole() {
    let points = kill_points_with(SMALL, CHANGES, true);
    eprintln!("{points} kill points checked");
    assert!(points > 150);
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "WASI: no child processes")]
fn killed_at_every_write_a_large_frame_reopens_whole() {
    let points = kill_points(LARGE, LARGE_CHANGES);
    eprintln!("{points} kill points checked");
    assert!(points > 40);
}

fn faults(size: usize, changes: &[&str]) -> usize {
    let mut points = 0;
    for fault in [Fault::Fail, Fault::Short] {
        for contiguous in [true, false] {
            let dir = scratch(&format!("fault-{size}-{fault:?}-{contiguous}"));
            for change in changes {
                let (before, after) = model(change, size);
                let path = dir.join(format!("{change}.b2frame"));
                let path = path.to_str().unwrap();
                let mut done = false;
                for at in 1..400 {
                    make_base(path, contiguous, change, size);
                    let backend = Faulty::new(at, fault);
                    let mut sc = SuperChunk::open(path, Arc::new(backend.clone()), true).unwrap();
                    let what = format!(
                        "{} frame, {change}, {fault:?} at write {at}",
                        if contiguous { "contiguous" } else { "sparse" }
                    );
                    let r = apply(&mut sc, change, size);
                    points += 1;
                    if r.is_ok() {
                        assert_eq!(seen(&sc).unwrap(), after, "{what}");
                        drop(sc);
                        check_reopened(path, &before, &after, true, &what);
                        done = true;
                        break;
                    }
                    // the handle still shows the old state, and makes the change once the fault is gone
                    assert_eq!(seen(&sc).unwrap(), before, "{what}: the handle after the failure");
                    let reopened = SuperChunk::open(path, filesystem(), false)
                        .unwrap_or_else(|e| panic!("{what}: does not open: {e:?}"));
                    assert_eq!(seen(&reopened).unwrap(), before, "{what}: the file after the failure");
                    drop(reopened);
                    backend.disarm();
                    apply(&mut sc, change, size)
                        .unwrap_or_else(|e| panic!("{what}: the change after the fault: {e:?}"));
                    assert_eq!(seen(&sc).unwrap(), after, "{what}");
                    drop(sc);
                    check_reopened(path, &before, &after, true, &what);
                }
                assert!(done, "{change}: never completed");
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    points
}

#[test]
fn a_failed_write_leaves_the_old_frame_and_a_usable_handle() {
    assert!(faults(SMALL, CHANGES) > 300);
}

/// The same without a boot id (macOS, Windows where the registry has none):
/// the journal then checkpoints every change, and a journal record cut short
/// must not make the journal look like a dead writer's to the next open (the
/// handle was then refused its next change).
#[test]
fn a_failed_write_without_a_boot_id_leaves_the_old_frame_and_a_usable_handle() {
    b2nd::frame::journal::set_boot_id_for_this_thread(Some(None));
    let points = faults(SMALL, CHANGES);
    b2nd::frame::journal::set_boot_id_for_this_thread(None);
    assert!(points > 300);
}

#[test]
fn a_failed_write_in_a_large_frame_leaves_the_old_frame() {
    assert!(faults(LARGE, LARGE_CHANGES) > 80);
}

#[test]
fn a_journal_cut_short_is_ignored_and_one_of_a_replaced_frame_too() {
    let dir = scratch("journal");
    let path = dir.join("f.b2frame");
    let path = path.to_str().unwrap();
    make_base(path, true, "append", SMALL);
    let (before, _) = model("append", SMALL);
    // a torn record: the frame was not touched
    std::fs::write(format!("{path}.b2journal"), b"B2NDJNL1 and then nothing").unwrap();
    let sc = SuperChunk::open(path, filesystem(), true).unwrap();
    assert_eq!(seen(&sc).unwrap(), before);
    drop(sc);
    assert!(std::fs::metadata(format!("{path}.b2journal")).map_or(true, |m| m.len() == 0));
    // a whole record for another file (another inode): ignored
    let undo = b2nd::frame::journal::Undo { identity: (1, 1), old_len: 10, regions: vec![(0, vec![0; 10])] };
    std::fs::write(format!("{path}.b2journal"), undo.encode()).unwrap();
    let sc = SuperChunk::open(path, filesystem(), true).unwrap();
    assert_eq!(seen(&sc).unwrap(), before);
    drop(sc);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A change that saves more old bytes than it keeps in memory and fails
/// late: put back from its journal. Changed chunks go to holes or the end of
/// the frame, so the change that still saves every chunk is one that cuts the
/// frame short: a resize of a 48 MiB array of noise to no rows.
#[test]
fn a_failed_change_larger_than_its_memory_is_put_back_from_the_journal() {
    let dir = scratch("spill");
    let path = dir.join("a.b2nd");
    let path = path.to_str().unwrap();
    let (rows, cols) = (48i64, 1i64 << 20);
    let mut p = cparams();
    p.typesize = 1;
    let old = noise(1, (rows * cols) as usize);
    // every frame write of the change comes after its journal record (all
    // 48 MiB of chunks: more than a change keeps in memory)
    let mut failed = 0;
    for at in 1.. {
        let _ = b2nd::schunk::remove_urlpath(path);
        let ctx =
            Context::new(&[rows, cols], &[4, cols as i32], &[1, cols as i32], p.clone()).stored(path, true);
        Array::from_buffer(&ctx, &old).unwrap();
        let backend = Faulty::new(at, Fault::Fail);
        let mut a = Array::open_with(path, 0, Arc::new(backend.clone())).unwrap();
        if a.resize(&[0, cols], None).is_ok() {
            break; // no write left to fail
        }
        failed += 1;
        assert!(a.to_vec().unwrap() == old, "write {at}: the handle after the failure");
        drop(a);
        let again = Array::open(path).unwrap();
        assert!(again.to_vec().unwrap() == old, "write {at}: the file after the failure");
    }
    assert!(failed > 0, "no write of the change failed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A handle that stays open while another process dies in the middle of a
/// change of the same frame file: its next change finds that process's
/// journal, puts the frame back from it and refuses (the handle's view may
/// be stale); the frame reopens as it was before the dead process's change.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "WASI: no child processes")]
fn a_handle_open_while_another_process_dies_in_a_change_puts_the_frame_back() {
    let dir = scratch("other-dies");
    let path = dir.join("f.b2frame");
    let path = path.to_str().unwrap();
    let (before, _) = model("update_larger", SMALL);
    let mut put_back = 0;
    for at in 1..60 {
        make_base(path, true, "update_larger", SMALL);
        let mut a = SuperChunk::open(path, filesystem(), true).unwrap();
        if child_ok("crash_child", "B2ND_CRASH_CHILD", format!("{path}|update_larger|{at}|{SMALL}|fs")) {
            break; // no write left to die at
        }
        let r = a.append_chunk(&compress(&data(20, SMALL)));
        drop(a);
        if r.is_err() {
            put_back += 1;
            let again = SuperChunk::open(path, filesystem(), true).unwrap();
            assert_eq!(
                seen(&again).unwrap(),
                before,
                "killed at write {at}: the frame after the open handle put it back"
            );
        }
    }
    assert!(put_back > 0, "no kill point left a change for the open handle to put back");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Peak resident memory of this process image so far (bytes): VmHWM, which
/// an exec starts again (getrusage's maximum keeps the parent's, from before the exec).
/// (Linux: the memory test and its children are Linux-only.)
#[cfg(target_os = "linux")]
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap();
    kb.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap() * 1024
}

/// Resident memory now (bytes).
#[cfg(target_os = "linux")]
fn current_rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

/// `n` bytes of noise (they do not compress).
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[cfg(target_os = "linux")]
const SPILL_ROWS: i64 = 48;
#[cfg(target_os = "linux")]
const SPILL_COLS: i64 = 1 << 20;

/// Run by the child processes of the next test: `kill|PATH|AT` resizes the
/// array to no rows (a change that journals every chunk) through a backend
/// that aborts at write AT; `open|PATH|rw` (or
/// `ro`) opens it, prints how much its resident memory grew, and checks it.
#[cfg(target_os = "linux")]
#[test]
fn spill_child() {
    let Ok(spec) = std::env::var("B2ND_SPILL_CHILD") else { return };
    let parts: Vec<&str> = spec.split('|').collect();
    let n = (SPILL_ROWS * SPILL_COLS) as usize;
    match parts[0] {
        "kill" => {
            let backend = Faulty::new(parts[2].parse().unwrap(), Fault::Kill);
            let mut a = Array::open_with(parts[1], 0, Arc::new(backend)).unwrap();
            a.resize(&[0, SPILL_COLS], None).unwrap();
        }
        _ => {
            let before = current_rss();
            let a = SuperChunk::open(parts[1], filesystem(), parts[2] == "rw")
                .and_then(|sc| Array::from_schunk(b2nd::schunk::SChunk::new(sc)))
                .unwrap();
            let grew = peak_rss().saturating_sub(before);
            // what it reads is the array before the change, a chunk (4 rows) at a time
            let old = noise(1, n);
            let mut rows = vec![0u8; 4 * SPILL_COLS as usize];
            for r in (0..SPILL_ROWS).step_by(4) {
                a.get_slice(&[r, 0], &[r + 4, SPILL_COLS], &mut rows).unwrap();
                let at = (r * SPILL_COLS) as usize;
                assert!(rows == old[at..at + rows.len()], "rows {r}..{}", r + 4);
            }
            println!("grew {grew}");
        }
    }
    std::process::exit(0);
}

/// A process killed in the middle of a change that saved more old bytes
/// than a few chunks (a 48 MiB array of noise, in 4 MiB chunks, resized to
/// no rows): the next open, read-only or not, puts the array back while its
/// memory grows by a few chunks, not by what the journal holds.
#[cfg(target_os = "linux")]
#[test]
fn a_change_larger_than_memory_killed_is_put_back_within_bounded_memory() {
    let dir = scratch("spill-kill");
    let path = dir.join("a.b2nd");
    let path = path.to_str().unwrap();
    let mut p = cparams();
    p.typesize = 1;
    let old = noise(1, (SPILL_ROWS * SPILL_COLS) as usize);
    let exe = std::env::current_exe().unwrap();
    let child = |spec: String| {
        std::process::Command::new(&exe)
            .args(["--exact", "spill_child", "--nocapture", "--test-threads", "1"])
            .env("B2ND_SPILL_CHILD", spec)
            .stderr(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    for mode in ["ro", "rw"] {
        let _ = b2nd::schunk::remove_urlpath(path);
        let ctx = Context::new(
            &[SPILL_ROWS, SPILL_COLS],
            &[4, SPILL_COLS as i32],
            &[1, SPILL_COLS as i32],
            p.clone(),
        )
        .stored(path, true);
        Array::from_buffer(&ctx, &old).unwrap();
        // the first write after the journal record of every chunk
        let mut journal = 0;
        for at in 1..10 {
            let killed = child(format!("kill|{path}|{at}"));
            assert!(!killed.status.success(), "the change completed before write {at}");
            journal = std::fs::metadata(format!("{path}.b2journal")).map_or(0, |m| m.len());
            if journal > 40 << 20 {
                break;
            }
        }
        assert!(journal > 40 << 20, "the journal holds {journal} bytes: the test wants more than 40 MiB");
        let opened = child(format!("open|{path}|{mode}"));
        let out = String::from_utf8_lossy(&opened.stdout);
        assert!(opened.status.success(), "{mode}: the reopened array is not the old one: {out}");
        let grew: u64 = out
            .split("grew ")
            .nth(1)
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("{mode}: no report in {out:?}"))
            .parse()
            .unwrap();
        assert!(
            grew < 16 << 20,
            "{mode}: opening took {} MiB more memory (journal: {} MiB)",
            grew >> 20,
            journal >> 20
        );
    }
    // the writable open put the file back and dropped the journal
    assert!(std::fs::metadata(format!("{path}.b2journal")).map_or(true, |m| m.len() == 0));
    assert!(Array::open(path).unwrap().to_vec().unwrap() == old);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ b2nd arrays

use b2nd::array::{Array, Context, Fill};

const B2ND_CHANGES: &[&str] = &["set_slice", "resize_grow", "resize_shrink", "insert", "append", "delete"];

/// A 12 x 12 int32 array in 4 x 4 chunks (2 x 2 blocks) with items i * 1000 + j.
fn b2nd_base(path: &str, contiguous: bool) {
    let _ = b2nd::schunk::remove_urlpath(path);
    let ctx = Context::new(&[12, 12], &[4, 4], &[2, 2], cparams()).stored(path, contiguous).dtype("<i4");
    let items: Vec<u8> = (0..144i32).flat_map(|k| ((k / 12) * 1000 + k % 12).to_le_bytes()).collect();
    let mut a = Array::new(&ctx, Fill::Zeros).unwrap();
    a.set_slice(&[0, 0], &[12, 12], &items).unwrap();
}

fn b2nd_apply(a: &mut Array, change: &str) -> Result<(), Error> {
    let rows = |n: usize, v: i32| -> Vec<u8> { (0..n * 12).flat_map(|_| v.to_le_bytes()).collect() };
    match change {
        // 5 x 5 items across 4 chunks
        "set_slice" => {
            a.set_slice(&[2, 2], &[7, 7], &(0..25).flat_map(|_| (-1i32).to_le_bytes()).collect::<Vec<u8>>())
        }
        "resize_grow" => a.resize(&[16, 14], None),
        "resize_shrink" => a.resize(&[8, 12], None),
        "insert" => a.insert(&rows(4, 7), 0, 4),
        "append" => a.append(&rows(4, 9), 0),
        "delete" => a.delete(0, 4, 4),
        _ => panic!("unknown change {change}"),
    }
}

/// Shape and items of an array.
fn b2nd_seen(a: &Array) -> Result<(Vec<i64>, Vec<u8>), Error> {
    Ok((a.shape().to_vec(), a.to_vec()?))
}

/// Chunk `(ci, cj)` (4 x 4 items, clipped to the shape) of the items of a `shape` array.
fn chunk_of(shape: &[i64], items: &[u8], ci: i64, cj: i64) -> Vec<u8> {
    let mut v = Vec::new();
    for i in ci * 4..(ci * 4 + 4).min(shape[0]) {
        for j in cj * 4..(cj * 4 + 4).min(shape[1]) {
            let k = (i * shape[1] + j) as usize * 4;
            v.extend_from_slice(&items[k..k + 4]);
        }
    }
    v
}

#[test]
fn crash_child_b2nd() {
    let Ok(spec) = std::env::var("B2ND_CRASH_CHILD_B2ND") else { return };
    let parts: Vec<&str> = spec.split('|').collect();
    let (path, change, at) = (parts[0], parts[1], parts[2].parse::<usize>().unwrap());
    let mut a = Array::open_with(path, 0, Arc::new(Faulty::new(at, Fault::Kill))).unwrap();
    b2nd_apply(&mut a, change).unwrap();
    drop(a);
    std::process::exit(0);
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "WASI: no child processes")]
fn killed_at_every_write_an_array_reopens_whole() {
    let mut points = 0;
    for contiguous in [true, false] {
        let dir = scratch(&format!("kill-b2nd-{contiguous}"));
        for change in B2ND_CHANGES {
            let path = dir.join(format!("{change}.b2nd"));
            let path = path.to_str().unwrap();
            b2nd_base(path, contiguous);
            let mut model = Array::open(path).unwrap();
            let before = b2nd_seen(&model).unwrap();
            b2nd_apply(&mut model, change).unwrap();
            let after = b2nd_seen(&model).unwrap();
            drop(model);
            let mut completed = false;
            for at in 1..400 {
                b2nd_base(path, contiguous);
                completed =
                    child_ok("crash_child_b2nd", "B2ND_CRASH_CHILD_B2ND", format!("{path}|{change}|{at}"));
                let what = format!(
                    "{} array, {change}, killed at write {at}",
                    if contiguous { "contiguous" } else { "sparse" }
                );
                let mut a = Array::open(path).unwrap_or_else(|e| panic!("{what}: does not open: {e:?}"));
                let now = b2nd_seen(&a).unwrap_or_else(|e| panic!("{what}: unreadable: {e:?}"));
                if completed {
                    assert_eq!(now, after, "{what}");
                } else if *change == "set_slice" {
                    // several chunks change, each by its own committed change: each is old or new
                    assert_eq!(now.0, before.0, "{what}");
                    for ci in 0..3 {
                        for cj in 0..3 {
                            let c = chunk_of(&now.0, &now.1, ci, cj);
                            assert!(
                                c == chunk_of(&before.0, &before.1, ci, cj)
                                    || c == chunk_of(&after.0, &after.1, ci, cj),
                                "{what}: chunk {ci},{cj}"
                            );
                        }
                    }
                } else {
                    assert!(now == before || now == after, "{what}: neither the old nor the new array");
                }
                // and it still takes a change
                a.set_slice(&[0, 0], &[1, 1], &5i32.to_le_bytes())
                    .unwrap_or_else(|e| panic!("{what}: {e:?}"));
                drop(a);
                let again = Array::open(path).unwrap();
                let mut one = [0u8; 4];
                again.get_slice(&[0, 0], &[1, 1], &mut one).unwrap();
                assert_eq!(i32::from_le_bytes(one), 5, "{what}");
                points += 1;
                if completed {
                    break;
                }
            }
            assert!(completed, "{change}: never completed");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!("{points} kill points checked");
    assert!(points > 50);
}
