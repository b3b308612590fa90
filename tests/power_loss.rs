//! Power loss: what a machine that dies leaves of a frame's files, and what
//! libb2nd reopens from it.
//!
//! A recording backend passes every write, truncation, sync, file made or
//! removed and directory sync of a sequence of changes (of the frame, its
//! sparse chunk files and its journal) to the filesystem, and notes it. After
//! each of those operations, disk images are built the way a power loss may
//! leave the disk: what was synced stays; of the rest, none, all, random
//! subsets of 4 KiB pieces, or only the newest operations; a file made or
//! removed since its directory was last synced is there or not. Each image
//! is written over the frame's files and reopened as after a reboot (or, for
//! the image that keeps everything, as after the process alone died), and
//! must hold the state after one of the changes, each entirely: at least the
//! last one made durable (every returned change in durable mode; the last
//! sync or close in consistent mode), at most the one in progress.
//!
//! `B2ND_POWER_DUMP=SUBSTRING` prints the recorded operations of the cases
//! whose name holds it (the numbers failures name).

use b2nd::chunk::{CParams, Compressor, DParams, Special};
use b2nd::codecs::Codec;
use b2nd::frame::journal::{set_boot_id_for_this_thread, set_epoch_age_for_this_thread};
use b2nd::io::{filesystem, Backend, Durability, Mode, Stream};
use b2nd::schunk::{Storage, SuperChunk};
use b2nd::Error;
use b2nd::{Array, Context};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

const PAGE: u64 = 4096;

/// One recorded operation.
#[derive(Clone)]
enum Op {
    Write {
        file: usize,
        pos: u64,
        data: Vec<u8>,
    },
    Truncate {
        file: usize,
        len: u64,
    },
    Sync {
        file: usize,
    },
    /// The file was made (its directory entry appeared).
    Create {
        file: usize,
    },
    Remove {
        file: usize,
    },
    SyncDir {
        dir: String,
    },
    /// A change returned: the state after it is `states[n]`.
    Returned(usize),
    /// Everything before is promised durable: the state `states[n]` at least.
    Durable(usize),
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Write { file, pos, data } => write!(f, "write of file {file}, {} bytes at {pos}", data.len()),
            Op::Truncate { file, len } => write!(f, "truncation of file {file} to {len}"),
            Op::Sync { file } => write!(f, "sync of file {file}"),
            Op::Create { file } => write!(f, "file {file} made"),
            Op::Remove { file } => write!(f, "file {file} removed"),
            Op::SyncDir { dir } => write!(f, "sync of directory {dir}"),
            Op::Returned(n) => write!(f, "change {n} returned"),
            Op::Durable(n) => write!(f, "state {n} durable"),
        }
    }
}

#[derive(Default)]
struct Log {
    paths: Vec<String>,
    ids: HashMap<String, usize>,
    ops: Vec<Op>,
    /// Files the recording knows exist (made before it started, or seen made).
    known: HashSet<String>,
}

impl Log {
    fn id(&mut self, path: &str) -> usize {
        let key = key(path);
        if let Some(&i) = self.ids.get(&key) {
            return i;
        }
        self.paths.push(path.to_string());
        self.ids.insert(key, self.paths.len() - 1);
        self.paths.len() - 1
    }
}

/// One name for a file however its path was spelt: on Windows the library
/// joins with `/` what a directory listing joins with `\\`.
fn key(path: &str) -> String {
    if cfg!(windows) {
        path.replace('\\', "/")
    } else {
        path.to_string()
    }
}

#[derive(Clone, Default)]
struct Rec(Arc<Mutex<Log>>);

struct RecStream {
    inner: Box<dyn Stream>,
    file: usize,
    log: Arc<Mutex<Log>>,
}

impl Rec {
    fn push(&self, op: Op) {
        self.0.lock().unwrap().ops.push(op);
    }
}

impl Stream for RecStream {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize, Error> {
        self.inner.read_at(pos, buf)
    }
    fn write_at(&self, pos: u64, data: &[u8]) -> Result<(), Error> {
        self.log.lock().unwrap().ops.push(Op::Write { file: self.file, pos, data: data.to_vec() });
        self.inner.write_at(pos, data)
    }
    fn size(&self) -> Result<u64, Error> {
        self.inner.size()
    }
    fn truncate(&self, len: u64) -> Result<(), Error> {
        self.log.lock().unwrap().ops.push(Op::Truncate { file: self.file, len });
        self.inner.truncate(len)
    }
    fn identity(&self) -> Option<(u64, u64)> {
        self.inner.identity()
    }
    fn sync(&self) -> Result<(), Error> {
        self.log.lock().unwrap().ops.push(Op::Sync { file: self.file });
        self.inner.sync()
    }
}

impl Backend for Rec {
    fn open(&self, path: &str, mode: Mode) -> Result<Box<dyn Stream>, Error> {
        let file = {
            let mut log = self.0.lock().unwrap();
            let file = log.id(path);
            if mode.writable() && !log.known.contains(&key(path)) {
                // made now, or just before outside the backend (a journal's lock)
                log.known.insert(key(path));
                log.ops.push(Op::Create { file });
                if mode == Mode::Create {
                    log.ops.push(Op::Truncate { file, len: 0 });
                }
            } else if mode == Mode::Create {
                log.ops.push(Op::Truncate { file, len: 0 });
            }
            file
        };
        let inner = filesystem().open(path, mode)?;
        Ok(Box::new(RecStream { inner, file, log: self.0.clone() }))
    }
    fn is_filesystem(&self) -> bool {
        true
    }
    fn id(&self) -> u8 {
        0
    }
    fn sidecar(&self) -> Option<Arc<dyn Backend>> {
        Some(Arc::new(self.clone()))
    }
    fn remove(&self, path: &str) -> Result<(), Error> {
        {
            let mut log = self.0.lock().unwrap();
            let file = log.id(path);
            log.known.remove(&key(path));
            log.ops.push(Op::Remove { file });
        }
        filesystem().remove(path)
    }
    fn sync_dir(&self, dir: &str) -> Result<(), Error> {
        self.push(Op::SyncDir { dir: dir.to_string() });
        filesystem().sync_dir(dir)
    }
}

// ------------------------------------------------------------------ the disk model

#[derive(Clone, Debug)]
enum Unsynced {
    Write(u64, Vec<u8>),
    Truncate(u64),
}

/// One file as the disk holds it: what was synced, and what was done since.
#[derive(Clone, Debug, Default)]
struct FileModel {
    exists_durable: bool,
    exists_now: bool,
    durable: Vec<u8>,
    since: Vec<Unsynced>,
}

fn apply(content: &mut Vec<u8>, op: &Unsynced) {
    match op {
        Unsynced::Write(pos, data) => {
            let end = *pos as usize + data.len();
            if content.len() < end {
                content.resize(end, 0);
            }
            content[*pos as usize..end].copy_from_slice(data);
        }
        Unsynced::Truncate(len) => content.resize(*len as usize, 0),
    }
}

/// Whether `path` is a file of the directory `dir` (compared as paths: `\`
/// and `/` both separate on Windows, and a trailing one does not count).
fn in_dir(path: &str, dir: &str) -> bool {
    std::path::Path::new(path).parent() == Some(std::path::Path::new(dir))
}

/// A tiny deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// What a power loss keeps of the operations that were not synced.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Keep {
    None,
    All,
    /// A random subset of 4 KiB pieces (and of truncations and entries).
    Random,
    /// Only the newest operations of each file (a random number of them).
    Newest,
}

struct Disk {
    paths: Vec<String>,
    files: Vec<FileModel>,
}

impl Disk {
    fn step(&mut self, op: &Op) {
        match op {
            Op::Write { file, pos, data } => {
                self.files[*file].since.push(Unsynced::Write(*pos, data.clone()))
            }
            Op::Truncate { file, len } => self.files[*file].since.push(Unsynced::Truncate(*len)),
            Op::Sync { file } => {
                let f = &mut self.files[*file];
                for u in std::mem::take(&mut f.since) {
                    apply(&mut f.durable, &u);
                }
            }
            Op::Create { file } => {
                let f = &mut self.files[*file];
                if !f.exists_now {
                    f.exists_now = true;
                    if !f.exists_durable {
                        f.durable.clear();
                        f.since.clear();
                    }
                }
            }
            Op::Remove { file } => self.files[*file].exists_now = false,
            Op::SyncDir { dir } => {
                for (i, f) in self.files.iter_mut().enumerate() {
                    if in_dir(&self.paths[i], dir) {
                        f.exists_durable = f.exists_now;
                        if !f.exists_now {
                            f.durable.clear();
                            f.since.clear();
                        }
                    }
                }
            }
            Op::Returned(_) | Op::Durable(_) => {}
        }
    }

    /// The files a power loss keeping `keep` leaves (`None`: absent).
    fn image(&self, keep: Keep, rng: &mut Rng) -> Vec<Option<Vec<u8>>> {
        self.files
            .iter()
            .map(|f| {
                let present = if f.exists_durable == f.exists_now {
                    f.exists_now
                } else {
                    match keep {
                        Keep::None => f.exists_durable,
                        Keep::All | Keep::Newest => f.exists_now,
                        Keep::Random => rng.coin(),
                    }
                };
                if !present {
                    return None;
                }
                let mut c = f.durable.clone();
                match keep {
                    Keep::None => {}
                    Keep::All => f.since.iter().for_each(|u| apply(&mut c, u)),
                    Keep::Newest => {
                        let n = f.since.len();
                        let from = if n == 0 { 0 } else { n - 1 - (rng.next() as usize % n) };
                        f.since[from..].iter().for_each(|u| apply(&mut c, u));
                    }
                    Keep::Random => {
                        for u in &f.since {
                            match u {
                                Unsynced::Write(pos, data) => {
                                    // in pieces at page boundaries, each kept or not
                                    let (mut at, end) = (*pos, pos + data.len() as u64);
                                    while at < end {
                                        let next = ((at / PAGE + 1) * PAGE).min(end);
                                        if rng.coin() {
                                            let piece =
                                                data[(at - pos) as usize..(next - pos) as usize].to_vec();
                                            apply(&mut c, &Unsynced::Write(at, piece));
                                        }
                                        at = next;
                                    }
                                }
                                Unsynced::Truncate(_) => {
                                    if rng.coin() {
                                        apply(&mut c, u)
                                    }
                                }
                            }
                        }
                    }
                }
                Some(c)
            })
            .collect()
    }
}

/// Write an image over the files (in place: the frame file keeps its identity).
fn materialize(paths: &[String], image: &[Option<Vec<u8>>]) {
    for (p, c) in paths.iter().zip(image) {
        match c {
            Some(c) => {
                let f = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(p).unwrap();
                f.set_len(c.len() as u64).unwrap();
                b2nd::os::write_all_at(&f, 0, c).unwrap();
            }
            None => {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

// ------------------------------------------------------------------ the cases

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Schunk,
    Array,
}

fn cparams(typesize: i32) -> CParams {
    let mut p = CParams::classic(Codec::Lz4, 5, 1, typesize, false);
    p.blocksize = 0;
    p
}

/// Chunk contents: noise for large chunks (they stay large), a ramp otherwise.
fn data(seed: u64, n: usize, noisy: bool) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|i| {
            if noisy {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            } else {
                (i as u64 / 7 + seed) as u8
            }
        })
        .collect()
}

fn compress(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len() + 64];
    let n = Compressor::new(cparams(4)).unwrap().compress(bytes, &mut out).unwrap();
    out.truncate(n);
    out
}

/// What a reader sees of a super-chunk, as bytes (an error: a chunk that does not decode).
fn seen_schunk(sc: &SuperChunk) -> Result<Vec<u8>, Error> {
    let mut v = Vec::new();
    v.extend_from_slice(&(sc.nchunks() as u64).to_le_bytes());
    for i in 0..sc.nchunks() {
        let mut buf = vec![0u8; sc.chunk_nbytes(i)? as usize];
        sc.decompress_chunk(i, &mut buf)?;
        v.extend_from_slice(&(buf.len() as u64).to_le_bytes());
        v.extend_from_slice(&buf);
    }
    for m in sc.metalayers() {
        v.extend_from_slice(m.name.as_bytes());
        v.extend_from_slice(&m.content);
    }
    for m in sc.vlmetalayers() {
        v.extend_from_slice(m.name.as_bytes());
        v.extend_from_slice(&sc.vlmeta_get(&m.name)?);
    }
    Ok(v)
}

fn seen_array(a: &Array) -> Result<Vec<u8>, Error> {
    let mut v: Vec<u8> = a.shape().iter().flat_map(|d| d.to_le_bytes()).collect();
    v.extend_from_slice(&a.to_vec()?);
    Ok(v)
}

struct Case {
    /// Epochs end at this age (`None`: the default, longer than a case).
    epoch: Option<std::time::Duration>,
    kind: Kind,
    contiguous: bool,
    durability: Durability,
    /// Chunk bytes (the frame is larger than 16 MiB when they are large).
    chunk: usize,
    /// Crash images per crash point and way of keeping (random ones).
    randoms: usize,
}

/// The base frame (made through the filesystem, then closed: durable).
fn make_base(case: &Case, path: &str) {
    let _ = b2nd::schunk::remove_urlpath(path);
    let noisy = case.chunk > 1 << 20;
    match case.kind {
        Kind::Schunk => {
            let storage = Storage {
                contiguous: case.contiguous,
                urlpath: Some(path.to_string()),
                durability: case.durability,
                ..Storage::default()
            };
            let mut sc = SuperChunk::new(cparams(4), DParams::default(), storage).unwrap();
            sc.meta_add("m", b"metalayer-0").unwrap();
            let n = if noisy { 6 } else { 4 };
            for i in 0..n {
                if i == 2 && !noisy {
                    sc.append_chunk(&b2nd::frame::live::special_chunk(
                        Special::Zero,
                        case.chunk as i32,
                        4,
                        0,
                    ))
                    .unwrap();
                } else {
                    sc.append_chunk(&compress(&data(i, case.chunk, noisy))).unwrap();
                }
            }
            sc.vlmeta_add("v", b"vlmeta-0", None).unwrap();
        }
        Kind::Array => {
            // chunks of (rows x 256) items of 4 bytes
            let rows = (case.chunk / 1024) as i64;
            let mut ctx =
                Context::new(&[rows * 3, 512], &[rows as i32, 256], &[(rows as i32).min(8), 256], cparams(4))
                    .stored(path, case.contiguous);
            ctx.storage.durability = case.durability;
            let n = (rows * 3 * 512 * 4) as usize;
            Array::from_buffer(&ctx, &data(1, n, noisy)).unwrap();
        }
    }
}

/// The changes of a case, through `backend`, noting each return (and each
/// durable point) in `rec`; returns the states after each (the base first).
fn run_changes(case: &Case, path: &str, rec: &Rec) -> Vec<Vec<u8>> {
    let noisy = case.chunk > 1 << 20;
    let durable = case.durability == Durability::Durable;
    let mut states = Vec::new();
    let backend: Arc<dyn Backend> = Arc::new(rec.clone());
    let note = |states: &mut Vec<Vec<u8>>, s: Vec<u8>, synced: bool| {
        states.push(s);
        let n = states.len() - 1;
        rec.push(Op::Returned(n));
        if durable || synced {
            rec.push(Op::Durable(n));
        }
    };
    match case.kind {
        Kind::Schunk => {
            let mut sc = SuperChunk::open(path, backend, true).unwrap();
            sc.set_durability(case.durability).unwrap();
            states.push(seen_schunk(&sc).unwrap());
            let c = case.chunk;
            type Change = Box<dyn Fn(&mut SuperChunk) -> Result<(), Error>>;
            let changes: Vec<(Change, bool)> = vec![
                (Box::new(move |s| s.append_chunk(&compress(&data(10, c, noisy))).map(drop)), false),
                (Box::new(move |s| s.insert_chunk(1, &compress(&data(11, c, noisy))).map(drop)), false),
                (Box::new(move |s| s.update_chunk(0, &compress(&data(12, c, true))).map(drop)), false),
                (Box::new(move |s| s.update_chunk(1, &compress(&vec![9u8; c])).map(drop)), false),
                (Box::new(move |s| s.sync()), true),
                (
                    Box::new(move |s| {
                        s.update_chunk(3, &b2nd::frame::live::special_chunk(Special::Zero, c as i32, 4, 0))
                            .map(drop)
                    }),
                    false,
                ),
                (Box::new(move |s| s.delete_chunk(2).map(drop)), false),
                (Box::new(move |s| s.reorder(&(0..s.nchunks() as i64).rev().collect::<Vec<_>>())), false),
                (Box::new(move |s| s.meta_update("m", b"metalayer-1").map(drop)), false),
                (Box::new(move |s| s.vlmeta_add("w", &[5u8; 300], None).map(drop)), false),
                (Box::new(move |s| s.vlmeta_update("v", &[6u8; 500], None).map(drop)), false),
                (Box::new(move |s| s.vlmeta_delete("w").map(drop)), false),
                (Box::new(move |s| s.append_chunk(&compress(&data(13, c, noisy))).map(drop)), false),
            ];
            for (change, synced) in changes {
                change(&mut sc).unwrap();
                let s = seen_schunk(&sc).unwrap();
                note(&mut states, s, synced);
            }
            drop(sc);
        }
        Kind::Array => {
            let mut a = Array::open_with(path, 0, backend).unwrap();
            a.schunk().write().set_durability(case.durability).unwrap();
            states.push(seen_array(&a).unwrap());
            let rows = (case.chunk / 1024) as i64;
            let row = |seed: u64, n: i64| data(seed, (n * 512 * 4) as usize, noisy);
            a.append(&row(20, rows), 0).unwrap();
            note(&mut states, seen_array(&a).unwrap(), false);
            // across four chunks, none of them whole: one change
            let (r0, r1) = (rows / 2, rows + rows / 2);
            a.set_slice(&[r0, 128], &[r1, 384], &data(21, ((r1 - r0) * 256 * 4) as usize, noisy)).unwrap();
            note(&mut states, seen_array(&a).unwrap(), false);
            a.insert(&row(22, rows), 0, rows).unwrap();
            note(&mut states, seen_array(&a).unwrap(), false);
            a.schunk().write().sync().unwrap();
            note(&mut states, seen_array(&a).unwrap(), true);
            a.delete(0, 0, rows).unwrap();
            note(&mut states, seen_array(&a).unwrap(), false);
            let shape = a.shape().to_vec();
            a.resize(&[shape[0] + rows / 2, shape[1] + 256], None).unwrap();
            note(&mut states, seen_array(&a).unwrap(), false);
            a.resize(&[shape[0] - rows, shape[1]], None).unwrap();
            note(&mut states, seen_array(&a).unwrap(), false);
            drop(a);
        }
    }
    // the close made the last state durable
    let n = states.len() - 1;
    rec.push(Op::Durable(n));
    states
}

/// Open the frame (which recovers it) and read all of it.
fn reopen(case: &Case, path: &str, what: &str) -> Vec<u8> {
    let seen = match case.kind {
        Kind::Schunk => SuperChunk::open(path, filesystem(), true).map(|sc| seen_schunk(&sc)),
        Kind::Array => Array::open(path).map(|a| seen_array(&a)),
    };
    seen.unwrap_or_else(|e| panic!("{what}: does not open: {e:?}"))
        .unwrap_or_else(|e| panic!("{what}: unreadable: {e:?}"))
}

/// Every file below `dir` (a sparse frame's directory holds some).
fn files_below(dir: &std::path::Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_below(&p, out);
        } else {
            out.push(p.to_str().unwrap().to_string());
        }
    }
}

/// Run a case; returns the number of crash images checked.
fn run_case(case: &Case, tag: &str) -> usize {
    let dir = b2nd::os::temp_dir().join(format!("b2nd-power-{}-{tag}", b2nd::os::process_id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(if case.contiguous { "f.b2frame" } else { "f.b2sparse" });
    let path = path.to_str().unwrap().to_string();
    make_base(case, &path);

    // the disk as the base left it: all of it durable
    let rec = Rec::default();
    let mut base_files = Vec::new();
    files_below(&dir, &mut base_files);
    let base_contents: Vec<Vec<u8>> = base_files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    {
        let mut log = rec.0.lock().unwrap();
        for p in &base_files {
            log.id(p);
            log.known.insert(key(p));
        }
    }
    set_epoch_age_for_this_thread(case.epoch);
    let states = run_changes(case, &path, &rec);
    set_epoch_age_for_this_thread(None);
    let log = std::mem::take(&mut *rec.0.lock().unwrap());
    let mut disk = Disk { paths: log.paths.clone(), files: vec![FileModel::default(); log.paths.len()] };
    for (i, c) in base_contents.into_iter().enumerate() {
        disk.files[i] = FileModel { exists_durable: true, exists_now: true, durable: c, since: Vec::new() };
    }

    if std::env::var("B2ND_POWER_DUMP").is_ok_and(|t| tag.contains(&t)) {
        for (i, op) in log.ops.iter().enumerate() {
            eprintln!("{tag} op {}: {op:?}", i + 1);
        }
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ tag.len() as u64);
    let (mut returned, mut durable) = (0usize, 0usize);
    let mut images = 0;
    let other_boot = Some(Some([0xee; 16]));
    for (p, op) in std::iter::once(None).chain(log.ops.iter().map(Some)).enumerate() {
        if let Some(op) = op {
            disk.step(op);
            match op {
                Op::Returned(n) => returned = *n,
                Op::Durable(n) => durable = *n,
                _ => {}
            }
            if matches!(op, Op::Returned(_) | Op::Durable(_)) {
                continue;
            }
        }
        let hi = (returned + 1).min(states.len() - 1);
        let mut ways =
            vec![(Keep::All, true), (Keep::None, false), (Keep::All, false), (Keep::Newest, false)];
        ways.extend(std::iter::repeat_n((Keep::Random, false), case.randoms));
        for (keep, same_boot) in ways {
            let image = disk.image(keep, &mut rng);
            materialize(&disk.paths, &image);
            set_boot_id_for_this_thread(if same_boot { None } else { other_boot });
            let what = format!(
                "{tag}: after operation {p} ({op:?}), keeping {keep:?}{}",
                if same_boot { ", the process died" } else { ", power lost" }
            );
            let now = reopen(case, &path, &what);
            set_boot_id_for_this_thread(None);
            let lo = if same_boot { returned } else { durable };
            let found = (lo..=hi).find(|&j| states[j] == now);
            if found.is_none() {
                let other = states.iter().position(|s| *s == now);
                panic!("{what}: not one of the states {lo}..={hi} (returned {returned}, durable {durable}; it is state {other:?})");
            }
            images += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    images
}

const SMALL: usize = 4096;
const LARGE: usize = 3 << 20;

#[test]
fn power_loss_keeps_every_frame_consistent() {
    let mut total = 0;
    // consistent with an epoch per case, or a checkpoint (not synced) after every change; durable
    let modes = [
        (Durability::Consistent, None),
        (Durability::Consistent, Some(std::time::Duration::ZERO)),
        (Durability::Durable, None),
    ];
    for (durability, epoch) in modes {
        for contiguous in [true, false] {
            for kind in [Kind::Schunk, Kind::Array] {
                let case = Case { epoch, kind, contiguous, durability, chunk: SMALL, randoms: 3 };
                let tag = format!(
                    "{kind:?}-{}-{durability:?}{}-small",
                    if contiguous { "contiguous" } else { "sparse" },
                    if epoch.is_some() { "-short-epochs" } else { "" }
                );
                let n = run_case(&case, &tag);
                eprintln!("{tag}: {n} crash images");
                total += n;
            }
        }
    }
    eprintln!("{total} crash images of small frames");
    assert!(total >= 1000, "{total}");
}

#[test]
fn power_loss_keeps_large_frames_consistent() {
    let mut total = 0;
    for contiguous in [true, false] {
        let case = Case {
            epoch: None,
            kind: Kind::Schunk,
            contiguous,
            durability: Durability::Consistent,
            chunk: LARGE,
            randoms: 1,
        };
        let tag = format!("large-{}", if contiguous { "contiguous" } else { "sparse" });
        let n = run_case(&case, &tag);
        eprintln!("{tag}: {n} crash images");
        total += n;
    }
    assert!(total > 100, "{total}");
}
