//! The `b2nd` command-line tool on files of the test data and files written
//! here (b2nd arrays of several dtypes, a sparse frame, a frame at an offset),
//! intact and damaged.

use b2nd::b2nd::{Array, Context};
use b2nd::chunk::CParams;
use b2nd::schunk::{Storage, SuperChunk};
use std::process::Command;

fn tool(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_b2nd")).args(args).output().expect("run b2nd");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
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
    Array::from_buffer(&Context::new(shape, chunks, blocks, cp).dtype("<f8").stored(path, true), &bytes).unwrap();
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
    assert!(out.lines().nth(1).unwrap().split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() > 1000, "{out}");
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
    for args in [&["info"][..], &["frobnicate", "x"], &["info", "--bogus", "x"], &["info", "/no/such/file"], &["info", "--slice", "1", "x"]] {
        let (rc, _, err) = tool(args);
        assert_eq!(rc, 2, "{args:?}");
        assert!(err.starts_with("b2nd: ") && !err.contains("panicked"), "{args:?}: {err}");
    }
}
