//! The n-dimensional plugins (filters ndcell and ndmean, codecs ndlz and zfp)
//! through the safe API: b2nd arrays in memory and on disk, slices, reopening.
//! (Byte identity with c-blosc2 and the cross-reading are in c_tests/xnd.c.)

use b2nd::chunk::header::filter;
use b2nd::chunk::{CParams, SplitMode};
use b2nd::Error;
use b2nd::{Array, Context};

const NDLZ: u8 = 32;
const ZFP_ACC: u8 = 33;
const ZFP_PREC: u8 = 34;
const ZFP_RATE: u8 = 35;

/// A smooth field of `shape` as float64 or float32, C order.
fn field(shape: &[i64], typesize: usize) -> Vec<u8> {
    let n: i64 = shape.iter().product();
    let mut out = Vec::with_capacity(n as usize * typesize);
    for i in 0..n {
        let (mut rest, mut x) = (i, 0.0f64);
        for (d, &s) in shape.iter().enumerate().rev() {
            x += ((rest % s) as f64 * 0.07 * (d + 1) as f64).sin() * 5.0;
            rest /= s;
        }
        if typesize == 8 {
            out.extend_from_slice(&x.to_ne_bytes());
        } else {
            out.extend_from_slice(&(x as f32).to_ne_bytes());
        }
    }
    out
}

fn with_filter(typesize: i32, f: u8, meta: u8) -> CParams {
    let mut p = CParams { typesize, ..CParams::default() };
    p.filters = [0, 0, 0, 0, f, filter::SHUFFLE];
    p.filters_meta = [0, 0, 0, 0, meta, 0];
    p
}

fn with_codec(typesize: i32, codec: u8, meta: u8) -> CParams {
    let mut p = CParams { typesize, compcode: codec, compcode_meta: meta, ..CParams::default() };
    p.filters = [0; 6];
    p
}

fn values(a: &Array) -> Vec<u8> {
    let n: i64 = a.shape().iter().product();
    let mut out = vec![0u8; n as usize * a.schunk().read().unwrap().typesize() as usize];
    a.to_buffer(&mut out).unwrap();
    out
}

#[test]
fn ndcell_is_lossless_from_one_to_four_dimensions() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    for (shape, chunk, block, side) in [
        (&[1000i64][..], &[300][..], &[70][..], 4u8),
        (&[100, 90][..], &[40, 33][..], &[16, 16][..], 3),
        (&[30, 20, 25][..], &[12, 10, 9][..], &[6, 5, 8][..], 2),
        (&[10, 9, 8, 7][..], &[5, 5, 4, 4][..], &[4, 4, 2, 3][..], 2),
    ] {
        for nthreads in [1, 2] {
            let mut p = with_filter(8, filter::NDCELL, side);
            p.nthreads = nthreads;
            let data = field(shape, 8);
            let a = Array::from_buffer(&Context::new(shape, chunk, block, p), &data).unwrap();
            assert_eq!(values(&a), data, "{shape:?}");
        }
    }
}

#[test]
fn ndmean_averages_cells_and_survives_a_reopen() {
    let dir = b2nd::os::temp_dir().join(format!("b2nd-ndmean-{}", b2nd::os::process_id()));
    let path = dir.with_extension("b2nd");
    let shape = [64i64, 48];
    let data = field(&shape, 4);
    let ctx = Context::new(&shape, &[32, 24], &[16, 12], with_filter(4, filter::NDMEAN, 4))
        .stored(path.to_str().unwrap(), true);
    let a = Array::from_buffer(&ctx, &data).unwrap();
    let got = values(&a);
    // every 4x4 cell holds its mean
    let at =
        |buf: &[u8], r: usize, c: usize| f32::from_ne_bytes(buf[(r * 48 + c) * 4..][..4].try_into().unwrap());
    let mut sum = 0.0f32;
    for r in 0..4 {
        for c in 0..4 {
            sum += at(&data, r, c);
        }
    }
    assert_eq!(at(&got, 0, 0), sum / 16.0);
    assert_eq!(at(&got, 3, 3), sum / 16.0);
    let b = Array::open(path.to_str().unwrap()).unwrap();
    assert_eq!(values(&b), got);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn ndlz_on_byte_planes_and_with_a_slice_write() {
    let shape = [100i64, 120];
    let data: Vec<u8> = (0..12000u32).map(|i| ((i / 120) / 8 * 3 + (i % 120) / 8) as u8).collect();
    for meta in [4u8, 8] {
        let a =
            Array::from_buffer(&Context::new(&shape, &[48, 64], &[24, 32], with_codec(1, NDLZ, meta)), &data)
                .unwrap();
        assert_eq!(values(&a), data);
        let (nbytes, cbytes) = {
            let sc = a.schunk().read().unwrap();
            (sc.nbytes(), sc.cbytes())
        };
        assert!(cbytes < nbytes / 3, "cells of equal bytes compress: {cbytes} of {nbytes}");
        // 2-byte items: one 2-D stream per byte when the streams are split
        let wide: Vec<u8> = data.iter().flat_map(|&b| [b, b / 2]).collect();
        let mut p = with_codec(2, NDLZ, meta);
        p.splitmode = SplitMode::Always;
        let mut b = Array::from_buffer(&Context::new(&shape, &[50, 60], &[24, 32], p), &wide).unwrap();
        assert_eq!(values(&b), wide);
        let patch = vec![7u8; 10 * 10 * 2];
        b.set_slice(&[45, 55], &[55, 65], &patch).unwrap();
        let mut back = vec![0u8; patch.len()];
        b.get_slice(&[45, 55], &[55, 65], &mut back).unwrap();
        assert_eq!(back, patch);
    }
}

#[test]
fn zfp_modes_keep_their_promises() {
    let shape = [40i64, 36, 20];
    for ts in [4usize, 8] {
        let data = field(&shape, ts);
        let read = |codec: u8, meta: u8| {
            let a = Array::from_buffer(
                &Context::new(&shape, &[20, 18, 20], &[8, 12, 8], with_codec(ts as i32, codec, meta)),
                &data,
            )
            .unwrap();
            let sc = a.schunk().read().unwrap();
            let ratio = sc.cbytes() as f64 / sc.nbytes() as f64;
            drop(sc);
            (values(&a), ratio)
        };
        let err = |got: &[u8]| -> f64 {
            got.chunks(ts)
                .zip(data.chunks(ts))
                .map(|(g, d)| {
                    if ts == 8 {
                        (f64::from_ne_bytes(g.try_into().unwrap())
                            - f64::from_ne_bytes(d.try_into().unwrap()))
                        .abs()
                    } else {
                        f64::from(
                            (f32::from_ne_bytes(g.try_into().unwrap())
                                - f32::from_ne_bytes(d.try_into().unwrap()))
                            .abs(),
                        )
                    }
                })
                .fold(0.0, f64::max)
        };
        let (acc, _) = read(ZFP_ACC, (-2i8) as u8);
        assert!(err(&acc) <= 0.01);
        let (lo, _) = read(ZFP_PREC, 2);
        let (hi, _) = read(ZFP_PREC, 20);
        assert!(err(&hi) < err(&lo));
        let (_, quarter) = read(ZFP_RATE, 25);
        assert!(quarter < 0.27, "{quarter}");
    }
}

#[test]
fn malformed_parameters_fail_as_in_c_blosc2() {
    let shape = [16i64, 16];
    // (not one repeated value: such chunks are stored as runs, without filters or codec)
    let data: Vec<u8> = (0..16 * 16 * 4).map(|i| (i * 7 % 251) as u8).collect();
    let make = |p: CParams, block: &[i32]| {
        Array::from_buffer(&Context::new(&shape, &[16, 16], block, p), &data).err()
    };
    // cells larger than the block, a side of 0, ndmean on integers
    assert_eq!(make(with_filter(4, filter::NDCELL, 9), &[8, 8]), Some(Error::Failure));
    assert_eq!(make(with_filter(4, filter::NDCELL, 0), &[8, 8]), Some(Error::Failure));
    assert_eq!(make(with_filter(2, filter::NDMEAN, 4), &[8, 8]), Some(Error::Failure));
    // ndlz needs a 2-D block of bytes; zfp blocks of at least 4 per side, floats
    assert_eq!(make(with_codec(4, NDLZ, 4), &[8, 8]), Some(Error::Failure));
    assert_eq!(make(with_codec(1, NDLZ, 5), &[8, 8]), Some(Error::Failure));
    assert_eq!(make(with_codec(4, ZFP_ACC, 0), &[2, 8]), Some(Error::Failure));
    assert_eq!(make(with_codec(2, ZFP_RATE, 50), &[8, 8]), Some(Error::Failure));
    // outside a b2nd array the n-dimensional filters have no geometry
    let mut sc = b2nd::schunk::SuperChunk::new(
        with_filter(4, filter::NDCELL, 2),
        Default::default(),
        Default::default(),
    )
    .unwrap();
    assert_eq!(sc.append_buffer(&data).err(), Some(Error::FilterPipeline));
}
