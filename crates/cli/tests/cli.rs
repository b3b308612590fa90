//! The `b2nd` command-line tool on files of the test data and files written
//! here (b2nd arrays of several dtypes, a sparse frame, a frame at an offset),
//! intact and damaged.

#[path = "../../../tests/common/spawn.rs"]
mod spawn;

use b2nd::chunk::CParams;
use b2nd::schunk::{Storage, SuperChunk};
use b2nd::{Array, Context};
use std::process::Command;

fn tool(args: &[&str]) -> (i32, String, String) {
    // From the repository root, where the test data lies.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = spawn::start(|| Command::new(env!("CARGO_BIN_EXE_b2nd")).args(args).current_dir(root).output())
        .unwrap_or_else(|e| panic!("run b2nd: {e:?}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("b2nd-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_str().unwrap().to_string()
}

/// A float64 array of `shape` (values i * 0.5) saved at `path`.
fn f8_array(path: &str, shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Vec<f64> {
    let n: i64 = shape.iter().product();
    let vals: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
    let cp = CParams { typesize: 8, ..CParams::default() };
    let _ = std::fs::remove_file(path);
    Array::from_buffer(&Context::new(shape, chunks, blocks, cp).dtype("<f8").stored(path, true), &bytes)
        .unwrap();
    vals
}

#[test]
fn info_chunks_and_verify_on_the_test_data() {
    for f in [
        "tests/data/b2nd/example_item_prices.b2nd",
        "tests/data/b2nd/example_day_month_temp.b2nd",
        "tests/data/frames/frame_simple-lz4.b2frame",
        "tests/data/frames/frame_simple-zstd.b2frame",
    ] {
        let (rc, out, err) = tool(&["info", f]);
        assert_eq!(rc, 0, "{f}: {err}");
        assert!(out.contains("chunks:") && out.contains("ratio:"), "{out}");
        let (rc, out, _) = tool(&["chunks", f]);
        assert_eq!(rc, 0);
        assert!(out.lines().last().unwrap().trim_start().starts_with("total"));
        let (rc, out, _) = tool(&["verify", f]);
        assert_eq!(rc, 0, "{out}");
        assert!(out.contains(": ok ("));
        let (rc, out, _) = tool(&["info", "--json", f]);
        assert_eq!(rc, 0);
        assert!(out.starts_with('{') && out.trim_end().ends_with('}'));
    }
    let (_, out, _) = tool(&["info", "tests/data/frames/frame_simple-zstd.b2frame"]);
    assert!(out.contains("codec:         zstd (level 5)"), "{out}");
    assert!(out.contains("chunk size:    200000"), "{out}");
}

#[test]
fn dump_prints_values_and_slices() {
    let path = scratch("dump.b2nd");
    f8_array(&path, &[4, 5], &[3, 2], &[2, 2]);
    let (rc, out, err) = tool(&["dump", &path]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out.trim_end(), "[[0. , 0.5, 1. , 1.5, 2. ],\n [2.5, 3. , 3.5, 4. , 4.5],\n [5. , 5.5, 6. , 6.5, 7. ],\n [7.5, 8. , 8.5, 9. , 9.5]]");
    let (_, out, _) = tool(&["dump", "--slice", "1:3,-1", &path]);
    assert_eq!(out.trim_end(), "[4.5, 7. ]");
    let (_, out, _) = tool(&["dump", "--slice", "2,3", &path]);
    assert_eq!(out.trim_end(), "6.5");
    // a large array is summarised, and only the corners are read
    let big = scratch("big.b2nd");
    f8_array(&big, &[300, 400], &[100, 100], &[50, 50]);
    let (rc, out, _) = tool(&["dump", &big]);
    assert_eq!(rc, 0);
    // (values from 0.5 to 59999.5: more than 1000 apart, so in scientific form, as NumPy)
    assert!(out.starts_with("[[0.00000e+00, 5.00000e-01, 1.00000e+00, ..., 1.98500e+02,"), "{out}");
    assert!(out.contains(" ...,\n"), "{out}");
    assert!(out.trim_end().ends_with("5.99995e+04]]"), "{out}");
    let (rc, _, err) = tool(&["dump", "--slice", "0:2,7,9", &big]);
    assert_eq!(rc, 1);
    assert!(err.contains("2 dimensions") || err.contains("dimensions"), "{err}");
}

#[test]
fn sparse_frames_and_frames_at_an_offset() {
    // a sparse frame directory
    let dir = scratch("sparse.b2frame");
    let _ = std::fs::remove_dir_all(&dir);
    let cp = CParams { typesize: 4, ..CParams::default() };
    let storage = Storage { contiguous: false, urlpath: Some(dir.clone()), ..Storage::default() };
    let mut sc = SuperChunk::new(cp.clone(), Default::default(), storage).unwrap();
    let data: Vec<u8> = (0..40_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
    sc.append_buffer(&data).unwrap();
    sc.append_buffer(&data).unwrap();
    sc.vlmeta_add("attrs", &[0x81, 0xa4, b'u', b'n', b'i', b't', 0xa1, b'K'], None).unwrap();
    drop(sc);
    let (rc, out, _) = tool(&["info", &dir]);
    assert_eq!(rc, 0);
    assert!(out.contains("sparse frame"), "{out}");
    assert!(out.contains(r#"vlmeta "attrs": {"unit": "K"}"#), "{out}");
    let (_, out, _) = tool(&["chunks", &dir]);
    assert!(out.contains("00000001.chunk"), "{out}");
    assert_eq!(tool(&["verify", &dir]).0, 0);
    // a frame 1000 bytes into a file
    let sc = SuperChunk::new(cp, Default::default(), Storage::default()).unwrap();
    let mut sc = sc;
    sc.append_buffer(&data).unwrap();
    let frame = sc.to_cframe().unwrap().into_owned();
    let path = scratch("offset.bin");
    let mut file = vec![7u8; 1000];
    file.extend_from_slice(&frame);
    std::fs::write(&path, &file).unwrap();
    let (rc, out, _) = tool(&["chunks", "--offset", "1000", &path]);
    assert_eq!(rc, 0);
    assert!(
        out.lines().nth(1).unwrap().split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() > 1000,
        "{out}"
    );
    assert_eq!(tool(&["verify", "--offset", "1000", &path]).0, 0);
    let (rc, _, err) = tool(&["info", &path]);
    assert_eq!(rc, 2);
    assert!(err.contains("not a frame") || err.contains("damaged"), "{err}");
}

#[test]
fn verify_finds_damage_and_no_false_alarm() {
    let path = scratch("verify.b2nd");
    f8_array(&path, &[200, 300], &[50, 100], &[25, 50]);
    assert_eq!(tool(&["verify", &path]).0, 0);
    let good = std::fs::read(&path).unwrap();
    let (_, chunks, _) = tool(&["chunks", "--json", &path]);
    // the first chunk's offset and size, from the JSON
    let off: usize = chunks.split("\"offset\": ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    // Damage where the format can tell: a chunk's sizes, its block starts, the
    // frame's header and trailer. (Blosc2 keeps no checksums: a flipped byte of
    // compressed data may decode to other values, which no reader can see.)
    let damages: Vec<(&str, usize, u8)> = vec![
        ("chunk nbytes", off + 4, 0x10),
        ("chunk blocksize", off + 8, 0x01),
        ("chunk cbytes", off + 12, 0x40),
        ("chunk cbytes (high)", off + 14, 0x01),
        ("chunk flags", off + 2, 0xff),
        ("block start", off + 32 + 4, 0x7f),
        ("block start (high)", off + 32 + 6, 0x01),
        ("frame magic", 3, 0x20),
        ("frame nbytes", 0x1e, 0x01),
        ("frame length", 0x12, 0x01),
        ("trailer", good.len() - 20, 0xff),
        ("trailer length", good.len() - 23 + 2, 0x01),
    ];
    for (what, at, x) in damages {
        let mut bad = good.clone();
        bad[at] ^= x;
        let p = scratch("verify-bad.b2nd");
        std::fs::write(&p, &bad).unwrap();
        let (rc, out, err) = tool(&["verify", &p]);
        assert_ne!(rc, 0, "{what} not found: {out}");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
    // cut short: does not open
    let p = scratch("verify-cut.b2nd");
    std::fs::write(&p, &good[..good.len() - 10]).unwrap();
    let (rc, _, err) = tool(&["verify", &p]);
    assert_eq!(rc, 2);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn usage_errors_are_clear() {
    let (rc, out, _) = tool(&["--help"]);
    assert_eq!(rc, 0);
    assert!(out.contains("examples:"));
    for args in [
        &["info"][..],
        &["frobnicate", "x"],
        &["info", "--bogus", "x"],
        &["info", "/no/such/file"],
        &["info", "--slice", "1", "x"],
    ] {
        let (rc, _, err) = tool(args);
        assert_eq!(rc, 2, "{args:?}");
        assert!(err.starts_with("b2nd: ") && !err.contains("panicked"), "{args:?}: {err}");
    }
}

// ------------------------------------------------------------ convert and repack

use b2nd::array::npy::header_bytes;

/// A `.npy` file of `dtype` and `shape` (C or Fortran order) whose items are
/// pseudo-random bytes; returns its bytes.
fn npy_file(path: &str, dtype: &str, itemsize: usize, shape: &[i64], fortran: bool) -> Vec<u8> {
    let mut bytes = header_bytes(dtype, fortran, shape).unwrap();
    let n: i64 = shape.iter().product();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..n as usize * itemsize {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // runs of equal bytes, so the codecs have something to do
        bytes.push(((x >> 60) as u8) & 0x7);
    }
    std::fs::write(path, &bytes).unwrap();
    bytes
}

/// No file of `dir` is a leftover of a write (a hidden `.partial` file).
fn no_partial_files(dir: &str) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".partial"), "{name} left behind");
    }
}

#[test]
fn convert_round_trips_every_dtype_byte_for_byte() {
    let cases: &[(&str, usize, &[i64])] = &[
        ("<f8", 8, &[37, 29]),
        ("<f4", 4, &[5, 6, 7]),
        ("<f2", 2, &[100]),
        ("|u1", 1, &[3, 50, 4]),
        ("|i1", 1, &[10]),
        (">i4", 4, &[12, 9]),
        ("<i8", 8, &[4, 4, 4, 4]),
        ("<u2", 2, &[1000]),
        ("|b1", 1, &[33, 3]),
        ("<c16", 16, &[7, 3]),
        ("<c8", 8, &[11]),
        ("<U5", 20, &[6, 4]),
        ("|S3", 3, &[40]),
        ("|V7", 7, &[9, 2]),
        ("<M8[ns]", 8, &[25]),
        ("<m8[s]", 8, &[2, 3]),
        ("[('a', '<i4'), ('b', '<f8', (2,)), ('c', [('x', '|u1'), ('y', '>u2')])]", 23, &[17, 5]),
        ("[(('title', 'a'), '<i2'), ('', '|V2'), ('b', '<f4')]", 8, &[31]),
        ("<f8", 8, &[]),
        ("<f8", 8, &[0, 5]),
        ("|u1", 1, &[3, 0, 2]),
    ];
    for (i, &(dtype, itemsize, shape)) in cases.iter().enumerate() {
        for fortran in [false, true] {
            let npy = scratch(&format!("rt{i}{fortran}.npy"));
            let arr = scratch(&format!("rt{i}{fortran}.b2nd"));
            let back = scratch(&format!("rt{i}{fortran}.back.npy"));
            let original = npy_file(&npy, dtype, itemsize, shape, fortran);
            // small chunks and blocks, so that arrays span several chunks
            let dims = |n: i64| vec![n.to_string(); shape.len()].join(",");
            let mut args = vec!["convert", "--force"];
            let (c, b) = (dims(4), dims(2));
            if !shape.is_empty() && !shape.contains(&0) {
                args.extend(["--chunks", &c, "--blocks", &b]);
            }
            args.extend([npy.as_str(), arr.as_str()]);
            let (rc, _, err) = tool(&args);
            assert_eq!(rc, 0, "{dtype} {shape:?}: {err}");
            let a = Array::open(&arr).unwrap();
            assert_eq!((a.dtype(), a.shape(), a.typesize()), (dtype, shape, itemsize), "{dtype}");
            let order = if fortran { "F" } else { "C" };
            let (rc, _, err) = tool(&["convert", "--force", "--order", order, &arr, &back]);
            assert_eq!(rc, 0, "{dtype}: {err}");
            assert!(
                std::fs::read(&back).unwrap() == original,
                "{dtype} {shape:?} fortran={fortran}: not the same bytes"
            );
        }
    }
}

#[test]
fn convert_reads_fortran_order_into_c_order() {
    let npy = scratch("fortran.npy");
    let bytes = npy_file(&npy, "<u2", 2, &[6, 5, 4], true);
    let data = &bytes[bytes.len() - 6 * 5 * 4 * 2..];
    let arr = scratch("fortran.b2nd");
    let (rc, _, err) = tool(&["convert", "--chunks", "4,2,3", "--blocks", "2,2,2", &npy, &arr]);
    assert_eq!(rc, 0, "{err}");
    let a = Array::open(&arr).unwrap();
    let mut c = vec![0u8; data.len()];
    a.to_buffer(&mut c).unwrap();
    for (i, j, k) in (0..6).flat_map(|i| (0..5).flat_map(move |j| (0..4).map(move |k| (i, j, k)))) {
        let f = (i + 6 * j + 30 * k) * 2;
        let co = ((i * 5 + j) * 4 + k) * 2;
        assert_eq!(&c[co..co + 2], &data[f..f + 2], "item ({i}, {j}, {k})");
    }
    // and C order out of it again
    let back = scratch("fortran_c.npy");
    assert_eq!(tool(&["convert", &arr, &back]).0, 0);
    let out = std::fs::read(&back).unwrap();
    assert!(
        out[..128].starts_with(b"\x93NUMPY\x01\x00")
            && String::from_utf8_lossy(&out[10..128]).contains("'fortran_order': False, 'shape': (6, 5, 4)")
    );
    assert_eq!(&out[out.len() - c.len()..], &c[..]);
}

#[test]
fn convert_defaults_and_summary() {
    let npy = scratch("defaults.npy");
    npy_file(&npy, "<f8", 8, &[300, 200], false);
    let arr = scratch("defaults.b2nd");
    let (rc, out, err) = tool(&["convert", "--json", &npy, &arr]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.is_empty(), "quiet when stderr is not a terminal: {err}");
    // python-blosc2's choices for a 480 KB float64 array: one chunk, Zstd 5, shuffle
    for part in [
        "\"codec\": \"zstd\"",
        "\"clevel\": 5",
        "\"filters\": \"shuffle\"",
        "\"shape\": [300, 200]",
        "\"chunks\": [300, 200]",
        "\"nbytes\": 480000",
    ] {
        assert!(out.contains(part), "{part} in {out}");
    }
    let a = Array::open(&arr).unwrap();
    assert_eq!(a.chunkshape(), &[300, 200]);
    let cp = a.schunk().read().unwrap().cparams().clone();
    assert_eq!((cp.compcode, cp.clevel, cp.filters[5]), (5, 5, 1));
    // without --json: nothing on stdout
    let (rc, out, err) = tool(&["convert", "--force", &npy, &arr]);
    if cfg!(windows) && rc != 0 {
        // Windows replaces a file open in a program (here `a`) only with
        // POSIX rename semantics (NTFS, Windows 10 1809 on; not wine)
        assert!(err.contains(&arr) && err.contains("open in another program"), "{err}");
        drop(a);
        let (rc, out, err) = tool(&["convert", "--force", &npy, &arr]);
        assert_eq!((rc, out.as_str()), (0, ""), "{err}");
        return;
    }
    assert_eq!((rc, out.as_str()), (0, ""), "{err}");
    // a sparse frame
    let dir = scratch("defaults_sparse.b2nd");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(tool(&["convert", "--sparse", "--chunks", "100,100", "--blocks", "50,50", &npy, &dir]).0, 0);
    assert!(std::path::Path::new(&dir).join("chunks.b2frame").exists());
    assert_eq!(Array::open(&dir).unwrap().to_vec().unwrap(), a.to_vec().unwrap());
}

#[test]
fn convert_errors_name_the_file_and_leave_nothing() {
    let dir = std::env::temp_dir().join(format!("b2nd-cli-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let npy = format!("{d}/short.npy");
    let bytes = npy_file(&npy, "<f8", 8, &[1000, 100], false);
    std::fs::write(&npy, &bytes[..bytes.len() - 8]).unwrap();
    let out = format!("{d}/short.b2nd");
    let (rc, _, err) = tool(&["convert", &npy, &out]);
    assert_eq!(rc, 1);
    assert!(err.contains("short.npy") && err.contains("ends early"), "{err}");
    assert!(!std::path::Path::new(&out).exists());
    // not an array at all
    let junk = format!("{d}/junk.npy");
    std::fs::write(&junk, b"\x93NUMPY\x01\x00\x10\x00{'descr': 3}    \n").unwrap();
    let (rc, _, err) = tool(&["convert", &junk, &out]);
    assert!(rc == 1 && err.contains("junk.npy"), "{err}");
    // a damaged b2nd array to .npy: the failure leaves no .npy
    let arr = format!("{d}/damaged.b2nd");
    f8_array(&arr, &[100, 100], &[50, 50], &[25, 25]);
    let mut f = std::fs::read(&arr).unwrap();
    let mid = f.len() / 2;
    f[mid..mid + 64].fill(0xff);
    std::fs::write(&arr, &f).unwrap();
    let npy_out = format!("{d}/damaged.npy");
    let (rc, _, err) = tool(&["convert", &arr, &npy_out]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("damaged.b2nd"), "{err}");
    assert!(!std::path::Path::new(&npy_out).exists());
    // an existing output is kept without --force
    std::fs::write(&out, b"keep").unwrap();
    let good = format!("{d}/good.npy");
    npy_file(&good, "<i4", 4, &[10], false);
    let (rc, _, err) = tool(&["convert", &good, &out]);
    assert!(rc == 1 && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    // usage
    assert_eq!(tool(&["convert", &good]).0, 2);
    assert_eq!(tool(&["repack", &good, &out, "x"]).0, 2);
    assert_eq!(tool(&["info", "--codec", "lz4", &good]).0, 2);
    assert_eq!(tool(&["convert", "--codec", "nope", &good, &out]).0, 2);
    assert_eq!(tool(&["convert", "--filters", "shuffle,nope", &good, &out]).0, 2);
    let (rc, _, err) = tool(&["convert", "--force", "--chunks", "5,5", &good, &out]);
    assert!(rc == 1 && err.contains("1 lengths"), "{err}");
    no_partial_files(d);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The raw bytes of every chunk of a stored array.
fn stored_chunks(path: &str) -> Vec<Vec<u8>> {
    let a = Array::open(path).unwrap();
    let r = a.schunk().read().unwrap();
    (0..r.nchunks()).map(|i| r.chunk(i).unwrap().into_owned()).collect()
}

#[test]
fn repack_changes_exactly_what_is_asked() {
    let src = scratch("repack_src.b2nd");
    let vals: Vec<f64> = (0..120 * 90).map(|i| i as f64 * 0.5).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut ctx =
        Context::new(&[120, 90], &[40, 30], &[20, 10], CParams { typesize: 8, ..CParams::default() })
            .dtype("<f8")
            .stored(&src, true);
    ctx.metalayers.push(b2nd::frame::Metalayer { name: "user".into(), content: b"\x01\x02\x03".to_vec() });
    let _ = std::fs::remove_file(&src);
    Array::from_buffer(&ctx, &bytes).unwrap().vlmeta_add("note", b"\xa5hello").unwrap();
    let base = Array::open(&src).unwrap();
    let cp0 = base.schunk().read().unwrap().cparams().clone();
    let check = |path: &str, chunks: &[i32], blocks: &[i32], codec: u8, clevel: u8, filters: [u8; 6]| {
        let a = Array::open(path).unwrap();
        assert_eq!(
            (a.shape(), a.dtype(), a.chunkshape(), a.blockshape()),
            (&[120i64, 90][..], "<f8", chunks, blocks),
            "{path}"
        );
        let r = a.schunk().read().unwrap();
        let cp = r.cparams();
        assert_eq!((cp.compcode, cp.clevel, cp.filters, cp.typesize), (codec, clevel, filters, 8), "{path}");
        assert_eq!(r.meta_get("user").unwrap(), b"\x01\x02\x03");
        assert_eq!(r.vlmeta_get("note").unwrap(), b"\xa5hello");
        drop(r);
        let got: Vec<f64> =
            a.to_vec().unwrap().chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, vals);
    };
    let out = scratch("repack_codec.b2nd");
    assert_eq!(tool(&["repack", "--force", "--codec", "lz4", "--clevel", "9", &src, &out]).0, 0);
    check(&out, &[40, 30], &[20, 10], 1, 9, cp0.filters);
    let out = scratch("repack_filters.b2nd");
    assert_eq!(tool(&["repack", "--force", "--filters", "delta,bitshuffle", &src, &out]).0, 0);
    check(&out, &[40, 30], &[20, 10], cp0.compcode, cp0.clevel, [3, 2, 0, 0, 0, 0]);
    let out = scratch("repack_shape.b2nd");
    let (rc, _, err) = tool(&["repack", "--force", "--chunks", "64,64", "--blocks", "16,32", &src, &out]);
    assert_eq!(rc, 0, "{err}");
    check(&out, &[64, 64], &[16, 32], cp0.compcode, cp0.clevel, cp0.filters);
    // sparse and back; the same parameters copy every chunk as it is stored
    let sparse = scratch("repack_sparse.b2nd");
    let _ = std::fs::remove_dir_all(&sparse);
    assert_eq!(tool(&["repack", "--sparse", &src, &sparse]).0, 0);
    assert!(std::path::Path::new(&sparse).is_dir());
    check(&sparse, &[40, 30], &[20, 10], cp0.compcode, cp0.clevel, cp0.filters);
    let out = scratch("repack_same.b2nd");
    assert_eq!(tool(&["repack", "--force", "--contiguous", &sparse, &out]).0, 0);
    assert!(std::path::Path::new(&out).is_file());
    assert_eq!(stored_chunks(&out), stored_chunks(&src), "chunks copied compressed");
    // --force replaces a file by a sparse directory and back
    let swap = scratch("repack_swap.b2nd");
    let _ = std::fs::remove_dir_all(&swap);
    std::fs::write(&swap, b"old").unwrap();
    assert_eq!(tool(&["repack", "--force", "--sparse", &src, &swap]).0, 0);
    assert!(std::path::Path::new(&swap).is_dir());
    assert_eq!(tool(&["repack", "--force", "--contiguous", &src, &swap]).0, 0);
    assert!(std::path::Path::new(&swap).is_file());
    check(&swap, &[40, 30], &[20, 10], cp0.compcode, cp0.clevel, cp0.filters);
    // --json names the new parameters
    let (rc, js, _) = tool(&["repack", "--force", "--json", "--codec", "zlib", &src, &out]);
    assert_eq!(rc, 0);
    assert!(js.contains("\"codec\": \"zlib\"") && js.contains("\"chunks\": [40, 30]"), "{js}");
    // blocks that do not fit the chunks
    let (rc, _, err) = tool(&["repack", "--force", "--blocks", "50,50", &src, &out]);
    assert!(rc == 1 && err.contains("do not fit"), "{err}");
}

#[test]
fn repack_a_super_chunk_without_b2nd_metalayer() {
    let src = scratch("plain.b2frame");
    let _ = std::fs::remove_file(&src);
    let storage = Storage { contiguous: true, urlpath: Some(src.clone()), ..Storage::default() };
    let cp = CParams { typesize: 4, ..CParams::default() };
    let mut sc = SuperChunk::new(cp.clone(), b2nd::chunk::DParams::default(), storage).unwrap();
    let data: Vec<u8> = (0..10_000u32).flat_map(|x| (x / 7).to_le_bytes()).collect();
    for part in data.chunks(4000) {
        sc.append_buffer(part).unwrap();
    }
    sc.vlmeta_add("k", b"\xa1v", None).unwrap();
    drop(sc);
    let out = scratch("plain_rechunked.b2frame");
    let (rc, _, err) = tool(&["repack", "--force", "--chunks", "3000", "--codec", "zstd", &src, &out]);
    assert_eq!(rc, 0, "{err}");
    let sc = SuperChunk::open(&out, b2nd::io::filesystem(), false).unwrap();
    assert_eq!((sc.nchunks(), sc.chunksize(), sc.cparams().compcode), (4, 12000, 5));
    let mut got = Vec::new();
    for i in 0..sc.nchunks() {
        let mut buf = vec![0u8; sc.chunk_nbytes(i).unwrap() as usize];
        sc.decompress_chunk(i, &mut buf).unwrap();
        got.extend_from_slice(&buf);
    }
    assert_eq!(got, data);
    assert_eq!(sc.vlmeta_get("k").unwrap(), b"\xa1v");
    let (rc, _, err) = tool(&["repack", "--force", "--chunks", "30,30", &src, &out]);
    assert!(rc == 1 && err.contains("one number"), "{err}");
}

#[test]
fn convert_frames_at_an_offset_sparse_directories_and_plugin_codecs() {
    // a .npy of small integers, to arrays that a plugin codec (ndlz, lossless) compresses
    let npy = scratch("plugin.npy");
    let bytes = npy_file(&npy, "|u1", 1, &[120, 90], false);
    let nd = scratch("plugin_ndlz.b2nd");
    let (rc, _, err) = tool(&[
        "convert", "--force", "--codec", "ndlz:4", "--chunks", "40,30", "--blocks", "20,30", &npy, &nd,
    ]);
    assert_eq!(rc, 0, "{err}");
    let (_, info, _) = tool(&["info", &nd]);
    assert!(info.contains("codec:         ndlz (level 5, meta 4)"), "{info}");
    let back = scratch("plugin_back.npy");
    assert_eq!(tool(&["convert", "--force", &nd, &back]).0, 0);
    assert_eq!(std::fs::read(&back).unwrap(), bytes);
    // a sparse frame directory in, and the array appended to a larger file, read at its offset
    let dir = scratch("plugin_sparse.b2nd");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(tool(&["repack", "--sparse", "--codec", "zstd", &nd, &dir]).0, 0);
    assert_eq!(tool(&["convert", "--force", &dir, &back]).0, 0);
    assert_eq!(std::fs::read(&back).unwrap(), bytes);
    let big = scratch("plugin_container.bin");
    std::fs::write(&big, vec![7u8; 1000]).unwrap();
    let at = Array::open(&nd).unwrap().save_append(&big).unwrap();
    assert_eq!(at, 1000);
    assert_eq!(tool(&["convert", "--force", "--offset", "1000", &big, &back]).0, 0);
    assert_eq!(std::fs::read(&back).unwrap(), bytes);
    // a lossy plugin codec (zfp in fixed-rate mode) is what the user asked for
    let f8 = scratch("zfp.npy");
    npy_file(&f8, "<f8", 8, &[64, 64], false);
    let z = scratch("zfp.b2nd");
    let (rc, _, err) = tool(&[
        "convert",
        "--force",
        "--codec",
        "zfp_rate:32",
        "--filters",
        "none",
        "--chunks",
        "32,32",
        "--blocks",
        "16,16",
        &f8,
        &z,
    ]);
    assert_eq!(rc, 0, "{err}");
    let cp = Array::open(&z).unwrap().schunk().read().unwrap().cparams().clone();
    assert_eq!(
        (cp.compcode, cp.compcode_meta, cp.filters),
        (b2nd::plugins::codec_id("zfp_rate").unwrap(), 32, [0; 6])
    );
    assert_eq!(tool(&["convert", "--codec", "zstd:300", &f8, &z]).0, 2);
}

/// The system calls that make data durable or move it, as `strace -f -y`
/// shows them (file descriptors with their paths), in order.
fn traced_syncs(args: &[&str], durability: &str) -> Option<Vec<String>> {
    let log = scratch("strace.log");
    let bin = env!("CARGO_BIN_EXE_b2nd");
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-y", "-qq", "-o", &log, "-e", "trace=fsync,fdatasync,rename,renameat,renameat2", bin])
        .args(args);
    cmd.env("B2ND_DURABILITY", durability);
    let out = cmd.output().ok()?;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&log).unwrap();
    Some(text.lines().filter(|l| !l.contains("resumed>") || l.contains("= 0")).map(str::to_string).collect())
}

#[test]
fn outputs_are_synced_before_and_after_their_rename() {
    // strace missing, or not allowed to trace (a container without ptrace)
    if !Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!(
            "strace cannot trace here: outputs_are_synced_before_and_after_their_rename checks nothing"
        );
        return;
    }
    // a directory of its own: other tests write beside it at the same time
    let dir = scratch("durable");
    std::fs::create_dir_all(&dir).unwrap();
    let npy = format!("{dir}/in.npy");
    npy_file(&npy, "<i4", 4, &[200, 300], false);
    let file = format!("{dir}/out.b2nd");
    let sparse = format!("{dir}/sparse.b2nd");
    let back = format!("{dir}/back.npy");
    let repacked = format!("{dir}/lz4.b2nd");
    let cases: [(&[&str], &str); 4] = [
        (&["convert", "--force", &npy, &file], &file),
        (&["convert", "--force", "--sparse", "--chunks", "50,300", &npy, &sparse], &sparse),
        (&["convert", "--force", &file, &back], &back),
        (&["repack", "--force", "--codec", "lz4", &file, &repacked], &repacked),
    ];
    for (args, out) in cases {
        let lines = traced_syncs(args, "consistent").expect("run b2nd under strace");
        // rename("FROM", "TO"): the temporary output (not the old OUT moved aside) into OUT
        let into_out = |l: &String| {
            let q: Vec<&str> = l.split('"').collect();
            l.contains("rename") && q.len() >= 4 && q[1].ends_with(".partial") && q[3] == out
        };
        let renamed = lines
            .iter()
            .position(into_out)
            .unwrap_or_else(|| panic!("{args:?}: no rename into {out} in {lines:#?}"));
        // before the rename, the temporary output is synced (a sparse frame:
        // its files and its directory); after it, the directory that holds OUT
        let synced = |l: &String, path: &str| l.contains("sync(") && l.contains(&format!("<{path}>"));
        let tmp = lines[renamed].split('"').nth(1).unwrap().to_string();
        assert!(
            lines[..renamed].iter().any(|l| synced(l, &tmp)),
            "{args:?}: {tmp} not synced before its rename: {lines:#?}"
        );
        if out == sparse {
            assert!(
                lines[..renamed].iter().any(|l| synced(l, &format!("{tmp}/chunks.b2frame"))),
                "{args:?}: the index not synced: {lines:#?}"
            );
        }
        assert!(
            lines[renamed..].iter().any(|l| synced(l, &dir)),
            "{args:?}: {dir} not synced after the rename: {lines:#?}"
        );
        // B2ND_DURABILITY=off, replacing the output just written (a sparse
        // frame: a directory moved aside, then removed)
        let lines = traced_syncs(args, "off").unwrap();
        assert!(
            !lines.iter().any(|l| l.contains("sync(")),
            "{args:?} with B2ND_DURABILITY=off: nothing synced, as in the library: {lines:#?}"
        );
        assert!(lines.iter().any(into_out), "{args:?}: {lines:#?}");
        if out.ends_with(".b2nd") {
            assert_eq!(Array::open(out).unwrap().shape(), &[200, 300], "{args:?}");
        }
    }
    no_partial_files(&dir);
}

// ------------------------------------------------------------ a reader that goes away

/// Run the tool with its stdout a pipe whose reading end is already closed, as
/// after `| head -1` has read its line: every write fails with EPIPE.
fn to_closed_pipe(args: &[&str]) -> (i32, String) {
    use std::process::Stdio;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut child = Command::new(env!("CARGO_BIN_EXE_b2nd"))
        .args(args)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run b2nd");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for b2nd");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn every_command_stops_quietly_when_its_reader_goes() {
    let arr = &scratch("pipe.b2nd");
    f8_array(arr, &[300, 200], &[100, 100], &[50, 50]);
    let frame = "tests/data/frames/frame_simple-zstd.b2frame";
    let npy = scratch("pipe.npy");
    let repacked = scratch("pipe-repacked.b2nd");
    let cases: &[&[&str]] = &[
        &["--help"],
        &["--version"],
        &["info", "--help"],
        &["dump", "--help"],
        &["info", arr],
        &["info", "--json", frame],
        &["chunks", arr],
        &["chunks", "--json", frame],
        &["dump", arr],
        &["dump", "--slice", "0,:", arr],
        &["verify", arr],
        &["verify", "--json", frame],
        &["convert", "--force", "--json", arr, &npy],
        &["repack", "--force", "--json", "--codec", "lz4", arr, &repacked],
        &["completions", "bash"],
    ];
    for args in cases {
        let (rc, err) = to_closed_pipe(args);
        assert_eq!((rc, err.as_str()), (0, ""), "{args:?}");
    }
    // The conversions were done all the same.
    assert!(std::path::Path::new(&npy).exists() && std::path::Path::new(&repacked).exists());
    // And as a shell runs it (a unix shell: `head` closes the pipe).
    if cfg!(windows) {
        return;
    }
    let line = format!("'{}' dump '{arr}' | head -1", env!("CARGO_BIN_EXE_b2nd"));
    let out = Command::new("sh")
        .args(["-c", &line])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

#[test]
fn help_per_command_and_completions() {
    for cmd in ["info", "chunks", "dump", "verify", "convert", "repack"] {
        let (rc, out, err) = tool(&[cmd, "--help"]);
        assert_eq!((rc, err.as_str()), (0, ""), "{cmd}");
        assert!(out.contains(&format!("Usage: b2nd {cmd}")), "{cmd}: {out}");
    }
    let (_, out, _) = tool(&["repack", "--help"]);
    assert!(out.contains("--codec") && out.contains("--filters") && !out.contains("--slice"), "{out}");
    let (rc, _, err) = tool(&["repack", "--codex", "lz4", "a", "b"]);
    assert_eq!(rc, 2);
    assert!(err.starts_with("b2nd: ") && err.contains("--codec"), "a suggestion: {err}");
    let (rc, out, _) = tool(&["--version"]);
    assert!(rc == 0 && out.starts_with("b2nd ") && out.ends_with(")\n"), "{out:?}");
    let (rc, out, err) = tool(&[]);
    assert!(rc == 2 && out.is_empty() && err.contains("Usage: b2nd <COMMAND>"), "{err}");
    let (rc, out, _) = tool(&["completions", "bash"]);
    assert!(rc == 0 && out.contains("_b2nd()") && out.contains("repack"), "{out}");
}

// ------------------------------------------------------------ tune and repack --tune

/// A .npy file of smooth float64 values with noise in the low bits.
fn smooth_npy(path: &str, n: usize) {
    let mut bytes = header_bytes("<f8", false, &[n as i64]).unwrap();
    let mut x = 7u64;
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let v = (i as f64 * 1e-3).sin() * 1000.0 + ((x >> 40) & 0xff) as f64 * 1e-9;
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, &bytes).unwrap();
}

fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn tune_at_tradeoff_one_gets_near_the_grids_best_ratio() {
    let path = scratch("tune.npy");
    smooth_npy(&path, 64 << 10); // 512 KiB: 8 chunks of 64 KiB
    let (rc, out, err) =
        tool(&["tune", "--json", "--chunk-bytes", "65536", "--sample-chunks", "1", "--tradeoff", "1", &path]);
    assert_eq!(rc, 0, "{err}");
    let v = json_of(&out);
    assert_eq!((v["typesize"].as_u64(), v["nchunks"].as_u64()), (Some(8), Some(8)));
    // 5 codecs x 6 pipelines x 9 levels x 2 split modes x 2 block sizes (auto, 32K)
    assert_eq!(v["grid_size"].as_u64(), Some(1080));
    let row = &v["rows"][0];
    assert_eq!(row["perf_mode"], "COMP");
    assert_eq!(row["chunks"].as_u64(), Some(8));
    assert!(row["explored_chunks"].as_u64().unwrap() >= 1);
    assert!(!row["choice"].is_null());
    // at tradeoff 1 only sizes count: no timing noise in this comparison
    let ours = row["figures"]["ratio"].as_f64().unwrap();
    let best = row["grid_best"]["figures"]["ratio"].as_f64().unwrap();
    assert!(ours >= 0.9 * best, "tuned {ours:.3}, grid's best {best:.3}");
    let defaults = row["defaults"].as_array().unwrap();
    assert_eq!(defaults.len(), 2);
    assert!(defaults.iter().all(|d| d["figures"]["ratio"].as_f64().unwrap() <= best + 1e-9));
    // the sample chunk as the run compressed it: given where that was not the last choice
    let own = &row["per_chunk"];
    assert!(row.as_object().unwrap().contains_key("per_chunk"));
    assert!(
        own.is_null()
            || (own["choices"].as_array().unwrap().len() == 1 && own["choices"][0] != row["choice"])
    );
}

#[test]
fn tune_matrix_without_grid_and_its_text() {
    let path = scratch("tune_matrix.npy");
    smooth_npy(&path, 32 << 10);
    let (rc, out, err) = tool(&["tune", "--json", "--matrix", "--no-grid", "--chunk-bytes", "65536", &path]);
    assert_eq!(rc, 0, "{err}");
    let v = json_of(&out);
    assert_eq!(v["grid_size"].as_u64(), Some(0));
    let rows = v["rows"].as_array().unwrap();
    let modes: Vec<(String, f64)> = rows
        .iter()
        .map(|r| (r["perf_mode"].as_str().unwrap().to_string(), r["tradeoff"].as_f64().unwrap()))
        .collect();
    assert_eq!(modes.len(), 9);
    assert_eq!(modes[0], ("COMP".to_string(), 0.0));
    assert_eq!(modes[8], ("BALANCED".to_string(), 1.0));
    assert!(rows.iter().all(|r| r["grid_best"].is_null() && !r["choice"].is_null()));
    let (rc, out, err) = tool(&["tune", "--no-grid", "--perf-mode", "decomp", "--tradeoff", "0.3", &path]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("tradeoff 0.30, DECOMP"), "{out}");
    assert!(out.contains("tuner's choice") && out.contains("c-blosc2 default"), "{out}");
    // bad values are usage errors
    for bad in [&["tune", "--tradeoff", "2", &path][..], &["tune", "--perf-mode", "fast", &path]] {
        assert_eq!(tool(bad).0, 2, "{bad:?}");
    }
    assert_eq!(tool(&["tune", &scratch("missing.npy")]).0, 2);
}

#[test]
fn repack_tune_writes_tuned_chunks_with_the_same_values() {
    let src = scratch("tune_src.b2nd");
    let vals = f8_array(&src, &[400, 300], &[100, 300], &[25, 300]);
    let out = scratch("tune_out.b2nd");
    let (rc, _, err) = tool(&["repack", "--force", "--tune", "--tradeoff", "1", &src, &out]);
    assert_eq!(rc, 0, "{err}");
    let a = Array::open(&out).unwrap();
    assert_eq!((a.chunkshape(), a.blockshape()), (&[100, 300][..], &[25, 300][..]));
    let got: Vec<f64> =
        a.to_vec().unwrap().chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, vals);
    // the chunks were recompressed by the tuner (for size: not BloscLZ, the input's codec)
    let formats: Vec<u8> = stored_chunks(&out)
        .iter()
        .map(|c| b2nd::chunk::header::Header::parse(c).unwrap().flags >> 5 & 7)
        .collect();
    assert_eq!(formats.len(), 4);
    assert!(formats.iter().all(|&f| f != 0), "{formats:?}");
    // --tradeoff needs --tune
    assert_eq!(tool(&["repack", "--force", "--tradeoff", "1", &src, &out]).0, 2);
}
