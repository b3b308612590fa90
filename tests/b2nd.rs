//! n-dimensional arrays: the testdata files written by python-blosc2, and
//! slices read and written against a plain C-order model.

use b2nd::array::{Array, Context, Fill, Meta};
use b2nd::chunk::CParams;
use b2nd::codecs::Codec;
use b2nd::io::filesystem;
use b2nd::schunk::{SChunk, Storage, SuperChunk};
use std::path::PathBuf;

fn testdata(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel).to_str().unwrap().to_string()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[test]
fn python_written_arrays_read_whole() {
    let a = Array::from_schunk(SChunk::new(
        SuperChunk::open(&testdata("b2nd/example_item_prices.b2nd"), filesystem(), false).unwrap(),
    ))
    .unwrap();
    assert_eq!(a.meta().shape, vec![12, 25, 250]);
    assert_eq!(a.meta().chunkshape, vec![8, 10, 50]);
    assert_eq!(a.meta().blockshape, vec![4, 5, 10]);
    let mut all = vec![0u8; 12 * 25 * 250 * 4];
    a.to_buffer(&mut all).unwrap();
    let v = f32s(&all);
    assert_eq!(&v[..3], &[194.5, 148.0, 376.0]);
    let sum: f64 = v.iter().map(|&x| f64::from(x)).sum();
    assert!((sum - 18_800_850.0).abs() < 1.0, "sum {sum}");
    // A slice equals the same window of the whole.
    let (start, stop) = ([3i64, 7, 45], [11i64, 19, 233]);
    let mut part = vec![0u8; 8 * 12 * 188 * 4];
    a.get_slice(&start, &stop, &mut part).unwrap();
    let p = f32s(&part);
    for i in 0..8 {
        for j in 0..12 {
            for k in 0..188 {
                let want = v[((3 + i) * 25 + 7 + j) * 250 + 45 + k];
                assert_eq!(p[(i * 12 + j) * 188 + k], want);
            }
        }
    }
    let d = Array::from_schunk(SChunk::new(
        SuperChunk::open(&testdata("b2nd/example_day_month_temp.b2nd"), filesystem(), false).unwrap(),
    ))
    .unwrap();
    assert_eq!(d.meta().shape, vec![400, 3]);
    let mut t = vec![0u8; 400 * 3 * 4];
    d.to_buffer(&mut t).unwrap();
    // As c-blosc2 3.3.5's b2nd_to_cbuffer gives them (NaNs included).
    let t = f32s(&t);
    assert_eq!(&t[..2], &[9.0, 3.0]);
    assert!((t[2] - 31.144).abs() < 1e-4 && (t[1199] - 2.70937).abs() < 1e-5);
    assert_eq!(t.iter().filter(|x| !x.is_finite()).count(), 5);
}

fn ctx(meta: &Meta, cp: &CParams, storage: Storage) -> Context {
    let mut c = Context::new(&meta.shape, &meta.chunkshape, &meta.blockshape, cp.clone()).dtype(&meta.dtype);
    c.storage = storage;
    c
}

fn model(shape: &[i64]) -> Vec<u8> {
    let n: i64 = shape.iter().product();
    (0..n).flat_map(|i| ((i * 2654435761) as u32 ^ 0x5bd1e995).to_le_bytes()).collect()
}

fn window(all: &[u8], shape: &[i64], start: &[i64], stop: &[i64]) -> Vec<u8> {
    let mut out = Vec::new();
    let nd = shape.len();
    let mut idx = start.to_vec();
    if start.iter().zip(stop).any(|(a, b)| a >= b) {
        return out;
    }
    loop {
        let lin = idx.iter().zip(shape).fold(0i64, |acc, (&i, &s)| acc * s + i) as usize;
        out.extend_from_slice(&all[4 * lin..4 * lin + 4]);
        let mut d = nd;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < stop[d] {
                break;
            }
            idx[d] = start[d];
        }
    }
}

#[test]
fn slices_round_trip_against_a_model() {
    let dir = b2nd::os::temp_dir().join(format!("b2nd-arrays-{}", b2nd::os::process_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = vec![13i64, 7, 29];
    let meta = Meta {
        shape: shape.clone(),
        chunkshape: vec![5, 4, 10],
        blockshape: vec![2, 3, 4],
        dtype: "<u4".into(),
        dtype_format: 0,
    };
    let mut cp = CParams::classic(Codec::Lz4, 5, 1, 4, false);
    cp.nthreads = 1;
    for (k, storage) in [
        Storage::default(),
        Storage { contiguous: true, ..Storage::default() },
        Storage {
            contiguous: true,
            urlpath: Some(dir.join("a.b2nd").to_str().unwrap().into()),
            ..Storage::default()
        },
    ]
    .into_iter()
    .enumerate()
    {
        let mut all = model(&shape);
        let mut a = Array::from_buffer(&ctx(&meta, &cp, storage), &all).unwrap();
        assert_eq!(a.schunk().read().unwrap().nchunks(), 3 * 2 * 3);
        let mut back = vec![0u8; all.len()];
        a.to_buffer(&mut back).unwrap();
        assert_eq!(back, all, "storage {k}");
        let mut seed = 7u64;
        let mut rnd = |n: i64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as i64) % n
        };
        for round in 0..40 {
            let mut start = Vec::new();
            let mut stop = Vec::new();
            for &s in &shape {
                let a0 = rnd(s + 1);
                let b0 = rnd(s + 1);
                start.push(a0.min(b0));
                stop.push(a0.max(b0));
            }
            let want = window(&all, &shape, &start, &stop);
            let mut got = vec![0u8; want.len()];
            a.get_slice(&start, &stop, &mut got).unwrap();
            assert_eq!(got, want, "storage {k} round {round} {start:?}..{stop:?}");
            if round % 3 == 0 {
                // Write new values there and update the model.
                let new: Vec<u8> =
                    (0..want.len()).map(|i| (i as u8).wrapping_mul(31).wrapping_add(round as u8)).collect();
                a.set_slice(&start, &stop, &new).unwrap();
                let mut it = new.chunks_exact(4);
                let nd = shape.len();
                let mut idx = start.clone();
                if start.iter().zip(&stop).all(|(x, y)| x < y) {
                    loop {
                        let lin = idx.iter().zip(&shape).fold(0i64, |acc, (&i, &s)| acc * s + i) as usize;
                        all[4 * lin..4 * lin + 4].copy_from_slice(it.next().unwrap());
                        let mut d = nd;
                        let mut done = false;
                        loop {
                            if d == 0 {
                                done = true;
                                break;
                            }
                            d -= 1;
                            idx[d] += 1;
                            if idx[d] < stop[d] {
                                break;
                            }
                            idx[d] = start[d];
                        }
                        if done {
                            break;
                        }
                    }
                }
            }
        }
        a.to_buffer(&mut back).unwrap();
        assert_eq!(back, all, "storage {k} after writes");
        let path = a.schunk().read().unwrap().storage().urlpath.clone();
        if let Some(path) = path {
            drop(a);
            let again = Array::open(&path).unwrap();
            let mut b = vec![0u8; all.len()];
            again.to_buffer(&mut b).unwrap();
            assert_eq!(b, all);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn filled_arrays() {
    let meta = Meta {
        shape: vec![10, 10],
        chunkshape: vec![4, 6],
        blockshape: vec![2, 3],
        dtype: "<f8".into(),
        dtype_format: 0,
    };
    let cp = CParams::classic(Codec::Zstd, 5, 1, 8, false);
    let z = Array::new(&ctx(&meta, &cp, Storage { contiguous: true, ..Storage::default() }), Fill::Zeros)
        .unwrap();
    let mut b = vec![1u8; 800];
    z.to_buffer(&mut b).unwrap();
    assert!(b.iter().all(|&x| x == 0));
    let f = Array::new(&ctx(&meta, &cp, Storage::default()), Fill::Value(&2.5f64.to_le_bytes())).unwrap();
    f.to_buffer(&mut b).unwrap();
    assert!(b.chunks_exact(8).all(|c| f64::from_le_bytes(c.try_into().unwrap()) == 2.5));
    let n = Array::new(&ctx(&meta, &cp, Storage::default()), Fill::Nans).unwrap();
    n.to_buffer(&mut b).unwrap();
    assert!(b.chunks_exact(8).all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
}

/// A fresh directory for `tag`, the path of a 4x3 uint32-sized array in it,
/// and the context that stores it there (LZ4, shuffle).
fn stored_4x3(tag: &str) -> (PathBuf, String, Context) {
    let dir = b2nd::os::temp_dir().join(format!("b2nd-{tag}-{}", b2nd::os::process_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.b2nd").to_str().unwrap().to_string();
    let cp = CParams::classic(Codec::Lz4, 5, 1, 4, false);
    let ctx = Context::new(&[4, 3], &[2, 2], &[2, 1], cp).stored(&path, true);
    (dir, path, ctx)
}

#[test]
fn shape_changes_through_another_handle_are_picked_up() {
    let (dir, path, ctx) = stored_4x3("handles");
    let row = |v: u32| -> Vec<u8> { (0..3).flat_map(|_| v.to_le_bytes()).collect() };
    let mut a = Array::from_buffer(&ctx, &row(1).repeat(4)).unwrap();
    // A second handle on the same super-chunk, and one on the same file.
    let mut same = a.clone();
    let mut other = Array::open(&path).unwrap();
    a.append(&row(2), 0).unwrap();
    same.append(&row(3), 0).unwrap();
    other.append(&row(4), 0).unwrap();
    let mut again = Array::open(&path).unwrap();
    assert_eq!(again.shape(), &[7, 3]);
    let all = again.to_vec().unwrap();
    let firsts: Vec<u8> = all.chunks_exact(12).map(|r| r[0]).collect();
    assert_eq!(firsts, vec![1, 1, 1, 1, 2, 3, 4]);
    again.delete(0, 0, 4).unwrap();
    a.refresh().unwrap();
    assert_eq!(a.shape(), &[3, 3]);
    drop((a, same, other, again));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_metalayer_asking_for_chunks_too_big_opens_but_allocates_nothing() {
    let mut sc = SuperChunk::new(
        CParams::classic(Codec::Lz4, 5, 1, 8, false),
        b2nd::chunk::DParams::default(),
        Storage::default(),
    )
    .unwrap();
    // 46340^2 items of 8 bytes: 17 GB per chunk, more than a chunk can hold.
    let meta = Meta {
        shape: vec![1 << 20, 1 << 20],
        chunkshape: vec![46340, 46340],
        blockshape: vec![1, 1],
        dtype: "<f8".into(),
        dtype_format: 0,
    };
    sc.meta_add("b2nd", &meta.serialize().unwrap()).unwrap();
    let mut a = Array::from_schunk(SChunk::new(sc)).unwrap();
    assert_eq!(a.shape(), &[1 << 20, 1 << 20]);
    let mut one = [0u8; 8];
    assert_eq!(a.get_slice(&[0, 0], &[1, 1], &mut one), Err(b2nd::Error::TwoGbLimit));
    assert_eq!(a.set_slice(&[5, 5], &[6, 6], &one), Err(b2nd::Error::TwoGbLimit));
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "WASI: no file locks (one process)")]
fn an_array_over_a_handle_opens_while_another_handle_holds_the_frame_lock() {
    // python-blosc2 holds one handle's lock across calls (holding_lock) while
    // other threads make arrays over other handles of the same frame; making
    // the array reads the metalayer the handle has loaded, as c-blosc2 does,
    // instead of waiting for the lock (with the GIL held: a deadlock).
    let (dir, path, ctx) = stored_4x3("held-lock");
    drop(Array::from_buffer(&ctx, &[7u8; 48]).unwrap());
    let second = SuperChunk::open_with(&path, 0, filesystem(), true, true).unwrap();
    let mut first = SuperChunk::open_with(&path, 0, filesystem(), true, true).unwrap();
    first.lock().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let a = Array::from_schunk(SChunk::new(second)).map(|a| a.shape().to_vec());
        let _ = tx.send(a);
    });
    let made = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the array waited for the other handle's lock");
    assert_eq!(made.unwrap(), vec![4, 3]);
    first.unlock().unwrap();
    // (Closed first: Windows removes no directory with files open in it.)
    drop(first);
    std::fs::remove_dir_all(&dir).unwrap();
}
