//! Every operation on an on-disk array several times bigger than the memory
//! it may use stays within its bound.
//!
//! The parent test (`operations_stay_within_memory_bounds`) writes one
//! contiguous frame file: a 4000 x 4000 array of f64 (128 MB of items) in
//! chunks of 500 x 500 (2 MB) and blocks of 125 x 500, zstd level 1 with
//! shuffle, values `i * 4000 + j` plus a pseudo-random fraction (so they
//! do not compress away: the file is over 48 MB). For each operation it then runs this test
//! binary again as a child (`--exact memory_child`, the operation named in
//! `B2ND_MEM_OP`), so that the operation's peak RSS is measured alone: the
//! child opens the array (a copy of the file when the operation changes it),
//! notes its resident memory, does the operation, reads its peak RSS
//! (`getrusage`), checks some values, and prints the numbers. The parent
//! checks that peak minus baseline is under the operation's own buffers + 8
//! chunks + 24 MB: an operation that decompresses the whole array (128 MB)
//! fails clearly.
// Linux only: it reads /proc/self/statm and getrusage.
#![cfg(target_os = "linux")]

use b2nd::array::{Array, Context, Fill};
use b2nd::chunk::CParams;
use b2nd::codecs::Codec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ROWS: i64 = 4000;
const COLS: i64 = 4000;
const CHUNK: [i32; 2] = [500, 500];
const BLOCK: [i32; 2] = [125, 500];
const CHUNK_BYTES: u64 = 500 * 500 * 8;
const MB: f64 = 1024.0 * 1024.0;

/// The item at (i, j) of the array the parent writes.
fn val(i: i64, j: i64) -> f64 {
    let mut h =
        (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    // A fraction in [0, 0.5) with every mantissa bit below the integer part random.
    (i * COLS + j) as f64 + (h >> 11) as f64 / (1u64 << 54) as f64
}

/// The item at (r, c) of a buffer of inserted items.
fn ins(r: i64, c: i64) -> f64 {
    -((r * 100_000 + c) as f64) - 0.25
}

fn cparams() -> CParams {
    let mut cp = CParams::classic(Codec::Zstd, 1, 1, 8, false);
    cp.nthreads = 1;
    cp
}

fn context(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Context {
    Context::new(shape, chunks, blocks, cparams()).dtype("<f8")
}

fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Resident memory now (bytes).
fn current_rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    pages * page
}

/// Peak resident memory so far (bytes).
fn peak_rss() -> u64 {
    // SAFETY: rusage is plain integers and timevals: all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a live, writable rusage; getrusage only writes into it.
    let r = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(r, 0);
    ru.ru_maxrss as u64 * 1024
}

// ------------------------------------------------------------ operations

/// An operation: its name, the bytes of the buffers it needs itself, and
/// whether it changes the array (then the child works on a copy of the file).
struct OpSpec {
    name: &'static str,
    own_bytes: u64,
    in_place: bool,
}

const fn op(name: &'static str, own_bytes: u64, in_place: bool) -> OpSpec {
    OpSpec { name, own_bytes, in_place }
}

const OPS: &[OpSpec] = &[
    op("resize_grow_rows", 0, true),
    op("resize_grow_cols", 0, true),
    op("resize_shrink", 0, true),
    op("resize_grow_inside_unaligned", 0, true),
    op("resize_shrink_inside_unaligned", 0, true),
    op("insert_500_rows_aligned", 500 * 4000 * 8, true),
    op("insert_300_rows_unaligned", 300 * 4000 * 8, true),
    op("append_300_cols", 4000 * 300 * 8, true),
    op("delete_rows_aligned", 0, true),
    op("delete_rows_unaligned", 0, true),
    op("delete_cols_aligned", 0, true),
    op("delete_cols_unaligned", 0, true),
    op("copy_to_file", 0, false),
    op("copy_rechunked_to_file", 0, false),
    op("slice_to_file", 0, false),
    op("slice_unaligned_to_file", 0, false),
    op("concatenate_with_itself", 0, false),
    op("read_box_500x500", 500 * 500 * 8, false),
];

/// Not an operation under test: reading the whole array into a buffer (128
/// MB) must show in the measure, else the measure means nothing.
const CONTROL: OpSpec = op("control_read_whole", (ROWS * COLS * 8) as u64, false);

/// Check the items at every pair of `rows` x `cols` (and a few pseudo-random
/// ones) against `want`.
fn verify(a: &Array, shape: [i64; 2], rows: &[i64], cols: &[i64], want: impl Fn(i64, i64) -> f64) {
    assert_eq!(a.shape(), &shape);
    let mut points: Vec<(i64, i64)> = Vec::new();
    for &i in rows.iter().chain(&[0, shape[0] - 1]) {
        for &j in cols.iter().chain(&[0, shape[1] - 1]) {
            if (0..shape[0]).contains(&i) && (0..shape[1]).contains(&j) {
                points.push((i, j));
            }
        }
    }
    let mut x = 0x1234_5678_9abc_def1u64;
    for _ in 0..40 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        points.push(((x % shape[0] as u64) as i64, ((x >> 32) % shape[1] as u64) as i64));
    }
    let mut one = [0u8; 8];
    for (i, j) in points {
        a.get_slice(&[i, j], &[i + 1, j + 1], &mut one).unwrap();
        let got = f64::from_le_bytes(one);
        assert_eq!(got, want(i, j), "item ({i}, {j}) of {shape:?}");
    }
}

/// Around a position: the items just before, at and after it.
fn around(ps: &[i64]) -> Vec<i64> {
    ps.iter().flat_map(|&p| [p - 1, p, p + 1]).collect()
}

/// What an operation gives: the new array (or none: the array changed in
/// place), its shape, rows and columns worth checking, the expected items.
type Outcome = (Option<Array>, [i64; 2], Vec<i64>, Vec<i64>, Box<dyn Fn(i64, i64) -> f64>);

/// The child: do operation `name` on the array at `src`, print the numbers.
fn run_op(name: &str, src: &str, dir: &Path) {
    let spec = OPS
        .iter()
        .chain([&CONTROL])
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no operation {name}"));
    let work = dir.join(format!("{name}.b2frame"));
    let out = dir.join(format!("{name}-out.b2frame"));
    let out_s = out.to_str().unwrap().to_string();
    let path = if spec.in_place {
        // A kernel-side copy: no file bytes pass through this process.
        std::fs::copy(src, &work).unwrap();
        work.to_str().unwrap().to_string()
    } else {
        src.to_string()
    };
    let mut a = Array::open(&path).unwrap();
    assert_eq!(a.shape(), &[ROWS, COLS]);
    let peak_before = peak_rss();
    let base = current_rss();
    let t = Instant::now();
    let own = spec.own_bytes;
    // The operation (its own buffers made inside the measured span), then
    // the shape and items to check.
    let (result, shape, rows, cols, want): Outcome = match name {
        "resize_grow_rows" => {
            a.resize(&[4600, COLS], None).unwrap();
            (
                None,
                [4600, COLS],
                around(&[4000]),
                vec![],
                Box::new(|i, j| if i < 4000 { val(i, j) } else { 0.0 }),
            )
        }
        "resize_grow_cols" => {
            a.resize(&[ROWS, 4700], None).unwrap();
            (
                None,
                [ROWS, 4700],
                vec![],
                around(&[4000]),
                Box::new(|i, j| if j < 4000 { val(i, j) } else { 0.0 }),
            )
        }
        "resize_shrink" => {
            a.resize(&[3700, 3300], None).unwrap();
            (None, [3700, 3300], around(&[3500]), around(&[3000]), Box::new(val))
        }
        "resize_grow_inside_unaligned" | "resize_shrink_inside_unaligned" => {
            // Both dimensions change inside the array, off chunk boundaries:
            // (nearly) every chunk is rebuilt.
            let (start, delta) =
                if name.contains("grow") { ([1234, 777], [300, 300]) } else { ([1000, 555], [-300, -700]) };
            let shape = [ROWS + delta[0], COLS + delta[1]];
            a.resize(&shape, Some(&start)).unwrap();
            let want = move |i: i64, j: i64| {
                let mut old = [i, j];
                for k in 0..2 {
                    if old[k] >= start[k] {
                        if delta[k] > 0 && old[k] < start[k] + delta[k] {
                            return 0.0;
                        }
                        old[k] -= delta[k];
                    }
                }
                val(old[0], old[1])
            };
            let ends = |k: usize| around(&[start[k], start[k] + delta[k].max(0)]);
            (None, shape, ends(0), ends(1), Box::new(want))
        }
        "insert_500_rows_aligned" | "insert_300_rows_unaligned" => {
            let (at, n) = if name.starts_with("insert_500") { (2000, 500) } else { (1700, 300) };
            let mut b = Vec::with_capacity(own as usize);
            for k in 0..n * COLS {
                b.extend_from_slice(&ins(k / COLS, k % COLS).to_le_bytes());
            }
            assert_eq!(b.len() as u64, own);
            a.insert(&b, 0, at).unwrap();
            drop(b);
            let want = move |i: i64, j: i64| {
                if i < at {
                    val(i, j)
                } else if i < at + n {
                    ins(i - at, j)
                } else {
                    val(i - n, j)
                }
            };
            (None, [ROWS + n, COLS], around(&[at, at + n]), vec![], Box::new(want))
        }
        "append_300_cols" => {
            let n = 300;
            let mut b = Vec::with_capacity(own as usize);
            for k in 0..ROWS * n {
                b.extend_from_slice(&ins(k / n, k % n).to_le_bytes());
            }
            a.append(&b, 1).unwrap();
            drop(b);
            let want = move |i: i64, j: i64| if j < COLS { val(i, j) } else { ins(i, j - COLS) };
            (None, [ROWS, COLS + n], vec![], around(&[COLS, COLS + n - 1]), Box::new(want))
        }
        "delete_rows_aligned" | "delete_rows_unaligned" | "delete_cols_aligned" | "delete_cols_unaligned" => {
            let axis = if name.contains("rows") { 0 } else { 1 };
            let (at, n) = match (axis, name.ends_with("unaligned")) {
                (0, false) => (1000, 500),
                (0, true) => (1234, 321),
                (_, false) => (500, 1000),
                (_, true) => (777, 333),
            };
            a.delete(axis, at, n).unwrap();
            let want = move |i: i64, j: i64| {
                let (mut i, mut j) = (i, j);
                let p = if axis == 0 { &mut i } else { &mut j };
                if *p >= at {
                    *p += n;
                }
                val(i, j)
            };
            let mut shape = [ROWS, COLS];
            shape[axis] -= n;
            let (rows, cols) = if axis == 0 { (around(&[at]), vec![]) } else { (vec![], around(&[at])) };
            (None, shape, rows, cols, Box::new(want))
        }
        "copy_to_file" | "copy_rechunked_to_file" => {
            let ctx = if name == "copy_to_file" {
                context(&[ROWS, COLS], &CHUNK, &BLOCK)
            } else {
                context(&[ROWS, COLS], &[400, 600], &[100, 300])
            };
            let c = a.copy(&ctx.stored(&out_s, true)).unwrap();
            (Some(c), [ROWS, COLS], around(&[400, 500, 2000]), around(&[500, 600, 3000]), Box::new(val))
        }
        "slice_to_file" | "slice_unaligned_to_file" => {
            let (start, stop) =
                if name == "slice_to_file" { ([0, 0], [2000, 3000]) } else { ([123, 457], [2123, 3457]) };
            let c = a.slice(&context(&[1, 1], &CHUNK, &BLOCK).stored(&out_s, true), &start, &stop).unwrap();
            let want = move |i: i64, j: i64| val(i + start[0], j + start[1]);
            (
                Some(c),
                [stop[0] - start[0], stop[1] - start[1]],
                around(&[500, 1000]),
                around(&[500, 2500]),
                Box::new(want),
            )
        }
        "concatenate_with_itself" => {
            let c =
                a.concatenate(&context(&[ROWS, COLS], &CHUNK, &BLOCK).stored(&out_s, true), &a, 0).unwrap();
            (Some(c), [2 * ROWS, COLS], around(&[4000, 6000]), vec![], Box::new(|i, j| val(i % ROWS, j)))
        }
        "read_box_500x500" => {
            let (start, stop) = ([1234i64, 2345i64], [1734i64, 2845i64]);
            let mut buf = vec![0u8; own as usize];
            a.get_slice(&start, &stop, &mut buf).unwrap();
            let v = f64s(&buf);
            for (k, x) in v.iter().enumerate() {
                let (i, j) = (start[0] + k as i64 / 500, start[1] + k as i64 % 500);
                assert_eq!(*x, val(i, j), "item ({i}, {j}) of the box");
            }
            (None, [ROWS, COLS], vec![], vec![], Box::new(val))
        }
        "control_read_whole" => {
            let v = a.to_vec().unwrap();
            assert_eq!(v.len() as u64, own);
            assert_eq!(f64::from_le_bytes(v[8 * 4001..8 * 4002].try_into().unwrap()), val(1, 1));
            drop(v);
            (None, [ROWS, COLS], vec![], vec![], Box::new(val))
        }
        _ => unreachable!(),
    };
    let secs = t.elapsed().as_secs_f64();
    let peak = peak_rss();
    // Check the values (reopened from the file: what is on disk).
    match result {
        Some(c) => {
            drop(c);
            verify(&Array::open(&out_s).unwrap(), shape, &rows, &cols, &want);
        }
        None => {
            verify(&a, shape, &rows, &cols, &want);
            drop(a);
            verify(&Array::open(&path).unwrap(), shape, &rows, &cols, &want);
        }
    }
    let _ = std::fs::remove_file(&work);
    let _ = std::fs::remove_file(&out);
    println!("B2ND_MEM {name} base={base} peak={peak} peak_before={peak_before} own={own} secs={secs:.3}");
}

/// The child: does nothing unless run by the parent with `B2ND_MEM_OP` set.
#[test]
fn memory_child() {
    let Ok(name) = std::env::var("B2ND_MEM_OP") else { return };
    let src = std::env::var("B2ND_MEM_SRC").unwrap();
    if name == "write_source" {
        write_source(&src);
        return;
    }
    let dir = PathBuf::from(std::env::var("B2ND_MEM_DIR").unwrap());
    run_op(&name, &src, &dir);
}

/// Run this binary's `memory_child` test for operation `name`.
fn child(name: &str, src: &str, dir: &Path) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "memory_child", "--nocapture", "--test-threads", "1"])
        .env("B2ND_MEM_OP", name)
        .env("B2ND_MEM_SRC", src)
        .env("B2ND_MEM_DIR", dir)
        .output()
        .unwrap()
}

// ------------------------------------------------------------ the parent

/// Write the 4000 x 4000 array to `path`, a row of chunks at a time.
fn write_source(path: &str) {
    let mut a = Array::new(&context(&[ROWS, COLS], &CHUNK, &BLOCK).stored(path, true), Fill::Uninit).unwrap();
    let band = i64::from(CHUNK[0]);
    let mut buf = Vec::with_capacity((band * COLS * 8) as usize);
    for r0 in (0..ROWS).step_by(band as usize) {
        buf.clear();
        for i in r0..r0 + band {
            for j in 0..COLS {
                buf.extend_from_slice(&val(i, j).to_le_bytes());
            }
        }
        a.set_slice(&[r0, 0], &[r0 + band, COLS], &buf).unwrap();
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn operations_stay_within_memory_bounds() {
    if std::env::var_os("B2ND_MEM_OP").is_some() {
        return;
    }
    let dir = TempDir(b2nd::os::temp_dir().join(format!("b2nd-memory-{}", b2nd::os::process_id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let src = dir.0.join("source.b2frame").to_str().unwrap().to_string();
    let t = Instant::now();
    // In a child too: a process starts with the peak RSS of the one that
    // spawned it (Linux keeps ru_maxrss across fork and exec), so this one
    // stays small.
    let out = child("write_source", &src, &dir.0);
    assert!(
        out.status.success(),
        "writing the source array failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size = std::fs::metadata(&src).unwrap().len();
    println!(
        "source: {ROWS} x {COLS} f64 ({:.0} MB of items), file {:.1} MB, written in {:.1} s",
        (ROWS * COLS * 8) as f64 / MB,
        size as f64 / MB,
        t.elapsed().as_secs_f64()
    );
    // Bigger than the bound: an operation holding every compressed chunk fails too.
    assert!(
        size as f64 > 48.0 * MB,
        "the array compresses too well ({size} bytes) for the test to mean much"
    );

    let mut failures = Vec::new();
    println!(
        "{:<32} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "operation", "base MB", "peak MB", "delta MB", "bound MB", "secs"
    );
    for o in OPS.iter().chain([&CONTROL]) {
        let out = child(o.name, &src, &dir.0);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout.lines().find_map(|l| l.find("B2ND_MEM ").map(|k| &l[k..]));
        let Some(line) = line.filter(|_| out.status.success()) else {
            failures.push(format!(
                "{}: the child failed ({}):\n{stdout}\n{}",
                o.name,
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        };
        let field = |k: &str| -> f64 {
            line.split_whitespace().find_map(|f| f.strip_prefix(&format!("{k}="))).unwrap().parse().unwrap()
        };
        let (base, peak, before, secs) = (field("base"), field("peak"), field("peak_before"), field("secs"));
        let delta = peak - base;
        let bound = (o.own_bytes + 8 * CHUNK_BYTES) as f64 + 24.0 * MB;
        println!(
            "{:<32} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>7.2}",
            o.name,
            base / MB,
            peak / MB,
            delta / MB,
            bound / MB,
            secs
        );
        if before > base + 4.0 * MB {
            failures.push(format!("{}: the peak RSS before the operation ({:.1} MB) is well over the baseline ({:.1} MB): the measure means nothing", o.name, before / MB, base / MB));
        }
        if o.name == CONTROL.name {
            if delta < 0.9 * o.own_bytes as f64 {
                failures.push(format!("{}: reading the whole array shows only {:.1} MB over the baseline: the measure does not see it", o.name, delta / MB));
            }
            continue;
        }
        if delta > bound {
            failures.push(format!(
                "{}: peak RSS {:.1} MB is {:.1} MB over the baseline {:.1} MB (peak before the operation {:.1} MB), more than its bound {:.1} MB (own buffers {:.1} MB + 8 chunks + 24 MB)",
                o.name,
                peak / MB,
                delta / MB,
                base / MB,
                before / MB,
                bound / MB,
                o.own_bytes as f64 / MB
            ));
        }
    }
    println!("all in {:.1} s", t.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
