//! Files that cross machines: a contiguous frame, a sparse frame and a
//! `.b2nd` array for every codec and filter, written on one machine and read
//! on another (x86-64, aarch64, i686, s390x: `scripts/cross.sh`), and by
//! python-blosc2 (`scripts/cross_check.py`).
//!
//! A set is a folder with `manifest.txt` (one line per file: its kind, its
//! name, the file of the bytes it holds) and the files. The writer reads each
//! file back right away and stores what it decoded as the expected bytes
//! (lossy codecs and filters decode to what the writer decoded, wherever
//! they run); lossless cases must also give back the input.
//!
//! Items are numbers in the machine's byte order (what a program there has,
//! and what the value-aware filters and codecs read, as in c-blosc2): the
//! bytes of every file cross machines unchanged, except zfp's streams, which
//! are made of words in the writer's byte order (as c-blosc2's): zfp files
//! are only checked between machines of the same byte order (`byteorder.txt`
//! of a set says the writer's).
//!
//! Run alone, the test writes a set in a temporary folder and checks it. With
//! `B2ND_CROSS_WRITE=DIR` it writes a set to `DIR`; with
//! `B2ND_CROSS_CHECK=DIR` it checks the set in `DIR` (made elsewhere).

use b2nd::chunk::{CParams, DParams};
use b2nd::io::filesystem;
use b2nd::params::filter;
use b2nd::schunk::{Storage, SuperChunk};
use b2nd::{Array, Context};
use std::path::{Path, PathBuf};

const NDLZ: u8 = 32;
const ZFP_ACC: u8 = 33;
const ZFP_PREC: u8 = 34;
const ZFP_RATE: u8 = 35;

/// One case: its name, its compression parameters, the typesize of its
/// items, whether it loses information, and whether it needs an n-d array.
struct Case {
    name: String,
    cparams: CParams,
    lossy: bool,
    nd_only: bool,
}

fn params(typesize: i32, compcode: u8, compcode_meta: u8, filters: &[(u8, u8)]) -> CParams {
    let mut p = CParams { typesize, compcode, compcode_meta, clevel: 5, nthreads: 2, ..CParams::default() };
    p.filters = [0; 6];
    p.filters_meta = [0; 6];
    let at = 6 - filters.len();
    for (k, &(f, m)) in filters.iter().enumerate() {
        p.filters[at + k] = f;
        p.filters_meta[at + k] = m;
    }
    p
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |name: &str, cparams: CParams, lossy: bool, nd_only: bool| {
        out.push(Case { name: name.to_string(), cparams, lossy, nd_only });
    };
    for (name, code) in [("blosclz", 0u8), ("lz4", 1), ("lz4hc", 2), ("zlib", 4), ("zstd", 5)] {
        add(&format!("{name}-shuffle"), params(8, code, 0, &[(filter::SHUFFLE, 0)]), false, false);
    }
    add("lz4-nofilter", params(8, 1, 0, &[]), false, false);
    add("zstd-bitshuffle", params(8, 5, 0, &[(filter::BITSHUFFLE, 0)]), false, false);
    add("blosclz-bitshuffle-4", params(4, 0, 0, &[(filter::BITSHUFFLE, 0)]), false, false);
    add("lz4-delta-shuffle", params(8, 1, 0, &[(filter::DELTA, 0), (filter::SHUFFLE, 0)]), false, false);
    add(
        "zstd-truncprec-shuffle",
        params(8, 5, 0, &[(filter::TRUNC_PREC, 20), (filter::SHUFFLE, 0)]),
        true,
        false,
    );
    add(
        "zstd-shuffle-bytedelta",
        params(8, 5, 0, &[(filter::SHUFFLE, 0), (filter::BYTEDELTA, 0)]),
        false,
        false,
    );
    add(
        "lz4-shuffle-bytedelta-4",
        params(4, 1, 0, &[(filter::SHUFFLE, 0), (filter::BYTEDELTA, 4)]),
        false,
        false,
    );
    add(
        "zstd-inttrunc-shuffle",
        params(4, 5, 0, &[(filter::INT_TRUNC, 3), (filter::SHUFFLE, 0)]),
        true,
        false,
    );
    add("lz4-ndcell", params(8, 1, 0, &[(filter::NDCELL, 4)]), false, true);
    add("zstd-ndmean", params(8, 5, 0, &[(filter::NDMEAN, 4)]), true, true);
    add("ndlz", params(1, NDLZ, 4, &[]), false, true);
    add("zfp-acc", params(8, ZFP_ACC, (-8i8) as u8, &[]), true, true);
    add("zfp-prec", params(8, ZFP_PREC, 30, &[]), true, true);
    add("zfp-rate", params(4, ZFP_RATE, 20, &[]), true, true);
    out
}

const SHAPE: [i64; 2] = [120, 250];
const CHUNKS: [i32; 2] = [48, 100];
const BLOCKS: [i32; 2] = [16, 32];

/// The items of a case, in the machine's byte order: smooth, exactly
/// computed values (no libm, so every machine makes the same numbers).
fn input(typesize: i32, nitems: usize) -> Vec<u8> {
    (0..nitems)
        .flat_map(|i| {
            let (r, c) = ((i / 250) as i64, (i % 250) as i64);
            let wave = ((r * 7 + c * 3) % 200 - 100).abs() as f64;
            let v = wave * 0.125 + (r as f64) * 0.5 - (c as f64) / 64.0;
            match typesize {
                8 => v.to_ne_bytes().to_vec(),
                4 if i % 2 == 0 => (v as f32).to_ne_bytes().to_vec(),
                4 => ((r * 1000 + c * 17) as i32).to_ne_bytes().to_vec(),
                _ => vec![((r / 8) * 3 + c / 8) as u8],
            }
        })
        .collect()
}

/// Where float-only codecs are asked for: all floats.
fn input_for(case: &Case, nitems: usize) -> Vec<u8> {
    let ts = case.cparams.typesize;
    if ts == 4 && (case.cparams.compcode == ZFP_RATE || case.cparams.filters.contains(&filter::BYTEDELTA)) {
        return (0..nitems)
            .flat_map(|i| (((i % 250) as f32) * 0.25 + (i / 250) as f32).to_ne_bytes())
            .collect();
    }
    if case.cparams.filters.contains(&filter::INT_TRUNC) {
        return (0..nitems)
            .flat_map(|i| ((i as i32 % 250) * 1000 - (i / 250) as i32).to_ne_bytes())
            .collect();
    }
    input(ts, nitems)
}

fn super_chunk_bytes(sc: &SuperChunk) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..sc.nchunks() {
        let mut buf = vec![0u8; sc.chunksize().max(0) as usize];
        let n = sc.decompress_chunk(i, &mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
    }
    out
}

fn array_bytes(a: &Array) -> Vec<u8> {
    let ts = a.schunk().read().unwrap().typesize() as usize;
    let mut out = vec![0u8; a.shape().iter().product::<i64>() as usize * ts];
    a.to_buffer(&mut out).unwrap();
    out
}

/// Write every case to `dir` (which must exist), with its manifest.
fn write_set(dir: &Path) {
    let nitems = (SHAPE[0] * SHAPE[1]) as usize;
    let mut manifest = String::new();
    for case in cases() {
        let data = input_for(&case, nitems);
        let ts = case.cparams.typesize as usize;
        let mut files = Vec::new();
        if !case.nd_only {
            // 4 chunks of 40 rows (and one of 30): a super-chunk of rows
            for (kind, contiguous) in [("frame", true), ("sparse", false)] {
                let name = format!("{}.{}", case.name, if contiguous { "b2frame" } else { "sparse" });
                let path = dir.join(&name);
                let storage = Storage {
                    contiguous,
                    urlpath: Some(path.to_str().unwrap().into()),
                    ..Storage::default()
                };
                let mut sc = SuperChunk::new(case.cparams.clone(), DParams::default(), storage).unwrap();
                for rows in data.chunks(40 * 250 * ts) {
                    sc.append_buffer(rows).unwrap();
                }
                drop(sc);
                let back = SuperChunk::open(path.to_str().unwrap(), filesystem(), false).unwrap();
                files.push((kind, name, super_chunk_bytes(&back)));
            }
        }
        for (kind, contiguous) in [("b2nd", true), ("b2nd-sparse", false)] {
            let name = format!("{}.{}", case.name, if contiguous { "b2nd" } else { "b2nd.d" });
            let path = dir.join(&name);
            let order = if cfg!(target_endian = "big") { ">" } else { "<" };
            let dtype = match (ts, case.cparams.filters.contains(&filter::INT_TRUNC)) {
                (8, _) => format!("{order}f8"),
                (4, true) => format!("{order}i4"),
                (4, false)
                    if case.cparams.compcode == ZFP_RATE
                        || case.cparams.filters.contains(&filter::BYTEDELTA) =>
                {
                    format!("{order}f4")
                }
                (4, false) => "|V4".to_string(),
                _ => "|u1".to_string(),
            };
            let ctx = Context::new(&SHAPE, &CHUNKS, &BLOCKS, case.cparams.clone())
                .stored(path.to_str().unwrap(), contiguous)
                .dtype(&dtype);
            drop(Array::from_buffer(&ctx, &data).unwrap());
            files.push((kind, name, array_bytes(&Array::open(path.to_str().unwrap()).unwrap())));
        }
        for (kind, name, got) in files {
            assert!(case.lossy || got == data, "{name} does not read back what was written");
            std::fs::write(dir.join(format!("{name}.expected")), &got).unwrap();
            manifest.push_str(&format!("{kind} {name} {name}.expected\n"));
        }
    }
    std::fs::write(dir.join("manifest.txt"), manifest).unwrap();
    std::fs::write(dir.join("byteorder.txt"), BYTE_ORDER).unwrap();
}

/// This machine's byte order, as `byteorder.txt` and Python's `sys.byteorder` name it.
const BYTE_ORDER: &str = if cfg!(target_endian = "big") { "big" } else { "little" };

/// The outcome of checking a set.
struct Checked {
    read: usize,
    skipped: usize,
    failures: Vec<(String, String)>,
}

/// Check every file of the set in `dir`: (name, failure) for each that does
/// not read back its expected bytes.
fn check_set(dir: &Path) -> Checked {
    let manifest = std::fs::read_to_string(dir.join("manifest.txt")).expect("a set's manifest.txt");
    let writer = std::fs::read_to_string(dir.join("byteorder.txt")).expect("a set's byteorder.txt");
    let mut out = Checked { read: 0, skipped: 0, failures: Vec::new() };
    for line in manifest.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [kind, name, expected] = f[..] else { panic!("bad manifest line {line:?}") };
        if name.starts_with("zfp-") && writer.trim() != BYTE_ORDER {
            out.skipped += 1;
            continue;
        }
        let want = std::fs::read(dir.join(expected)).unwrap();
        let path = dir.join(name);
        let path = path.to_str().unwrap();
        let got = std::panic::catch_unwind(|| match kind {
            "frame" | "sparse" => super_chunk_bytes(&SuperChunk::open(path, filesystem(), false).unwrap()),
            "b2nd" | "b2nd-sparse" => array_bytes(&Array::open(path).unwrap()),
            _ => panic!("unknown kind {kind}"),
        });
        match got {
            Ok(got) if got == want => out.read += 1,
            Ok(got) => out.failures.push((
                name.to_string(),
                format!(
                    "{} bytes differ of {}",
                    got.iter().zip(&want).filter(|(a, b)| a != b).count() + got.len().abs_diff(want.len()),
                    want.len()
                ),
            )),
            Err(_) => out.failures.push((name.to_string(), "could not be read".into())),
        }
    }
    out
}

fn report(dir: &Path) {
    let c = check_set(dir);
    for (name, why) in &c.failures {
        eprintln!("{name}: {why}");
    }
    println!(
        "cross files in {}: {} read back, {} failed, {} skipped (zfp across byte orders)",
        dir.display(),
        c.read,
        c.failures.len(),
        c.skipped
    );
    assert!(c.failures.is_empty(), "{} files did not read back", c.failures.len());
}

#[test]
fn every_codec_and_filter_reads_back_from_a_written_set() {
    if let Some(dir) = std::env::var_os("B2ND_CROSS_WRITE") {
        let dir = PathBuf::from(dir);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        write_set(&dir);
        report(&dir);
    }
    if let Some(dir) = std::env::var_os("B2ND_CROSS_CHECK") {
        report(Path::new(&dir));
        return;
    }
    let dir = b2nd::os::temp_dir().join(format!("b2nd-cross-{}", b2nd::os::process_id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    write_set(&dir);
    let c = check_set(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(c.failures.is_empty(), "{:?}", c.failures);
    assert_eq!(
        (c.read, c.skipped),
        (cases().iter().map(|c| if c.nd_only { 2 } else { 4 }).sum::<usize>(), 0)
    );
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "WASI: a panic aborts, and the test catches one")]
fn a_file_that_changed_is_caught() {
    let dir = b2nd::os::temp_dir().join(format!("b2nd-cross-bad-{}", b2nd::os::process_id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    write_set(&dir);
    // one expected byte off, and one file cut short
    let mut want = std::fs::read(dir.join("zstd-shuffle.b2frame.expected")).unwrap();
    want[100] ^= 1;
    std::fs::write(dir.join("zstd-shuffle.b2frame.expected"), want).unwrap();
    let cut = std::fs::read(dir.join("lz4-shuffle.b2nd")).unwrap();
    std::fs::write(dir.join("lz4-shuffle.b2nd"), &cut[..cut.len() / 2]).unwrap();
    let c = check_set(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let names: Vec<&str> = c.failures.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["lz4-shuffle.b2nd", "zstd-shuffle.b2frame"]);
}
