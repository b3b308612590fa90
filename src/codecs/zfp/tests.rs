use super::*;

fn b2nd(block: &[i32]) -> Vec<u8> {
    Meta {
        shape: block.iter().map(|&b| i64::from(b) * 2).collect(),
        chunkshape: block.to_vec(),
        blockshape: block.to_vec(),
        dtype: "<f8".into(),
        dtype_format: 0,
    }
    .serialize()
    .unwrap()
}

fn smooth(n: usize) -> Vec<f64> {
    (0..n).map(|i| (i as f64 * 0.01).sin() * 100.0 + (i as f64 * 0.003).cos()).collect()
}

fn bytes64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn bytes32(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| (*x as f32).to_ne_bytes()).collect()
}

fn round_trip(mode: Mode, meta: u8, typesize: i32, block: &[i32]) -> (usize, Vec<u8>, Vec<u8>) {
    let n: i32 = block.iter().product();
    let vals = smooth(n as usize);
    let src = if typesize == 8 { bytes64(&vals) } else { bytes32(&vals) };
    let meta_bytes = b2nd(block);
    let mut enc = vec![0u8; src.len()];
    let c = encode(mode, meta, typesize, Some(&meta_bytes), &src, &mut enc).unwrap();
    let mut dec = vec![0u8; src.len()];
    if c > 0 {
        assert_eq!(decode(mode, meta, typesize, Some(&meta_bytes), &enc[..c], &mut dec).unwrap(), src.len());
    }
    (c, src, dec)
}

fn max_error(typesize: i32, a: &[u8], b: &[u8]) -> f64 {
    if typesize == 8 {
        a.chunks(8)
            .zip(b.chunks(8))
            .map(|(x, y)| {
                (f64::from_ne_bytes(x.try_into().unwrap()) - f64::from_ne_bytes(y.try_into().unwrap())).abs()
            })
            .fold(0.0, f64::max)
    } else {
        a.chunks(4)
            .zip(b.chunks(4))
            .map(|(x, y)| {
                f64::from(
                    f32::from_ne_bytes(x.try_into().unwrap()) - f32::from_ne_bytes(y.try_into().unwrap()),
                )
                .abs()
            })
            .fold(0.0, f64::max)
    }
}

#[test]
#[cfg_attr(miri, ignore = "Miri: calls the C codec zfp")]
fn accuracy_keeps_the_tolerance() {
    let mut compressed = 0;
    for (ts, block) in [(8, &[1000][..]), (4, &[40, 50][..]), (8, &[10, 12, 14][..]), (4, &[4, 5, 6, 7][..])]
    {
        for e in [-3i8, -1, 1] {
            let (c, src, dec) = round_trip(Mode::Accuracy, e as u8, ts, block);
            if c > 0 {
                compressed += 1;
                assert!(
                    c < src.len() && max_error(ts, &src, &dec) <= 10f64.powi(i32::from(e)),
                    "{block:?} {e}"
                );
            }
        }
    }
    assert!(compressed >= 10, "{compressed}");
}

#[test]
#[cfg_attr(miri, ignore = "Miri: calls the C codec zfp")]
fn precision_and_rate() {
    // more planes, smaller error
    let (_, src, lo) = round_trip(Mode::Precision, 4, 8, &[30, 30]);
    let (_, _, hi) = round_trip(Mode::Precision, 30, 8, &[30, 30]);
    assert!(max_error(8, &src, &hi) < max_error(8, &src, &lo));
    // a rate of 25% gives a quarter of the bytes (zfp pads streams to words)
    let (c, src, dec) = round_trip(Mode::Rate, 25, 4, &[64, 64]);
    assert!(c > 0 && c <= src.len() / 4 + 8, "{c}");
    assert!(max_error(4, &src, &dec) < 1.0);
    // a rate that does not shrink the block: stored as it is
    assert_eq!(round_trip(Mode::Rate, 100, 4, &[16, 16]).0, 0);
    // rates above 100% (more bits per block than zfp's own bound; c-blosc2
    // 3.3.5 writes past its buffer there): stored as they are, in bounds
    assert_eq!(round_trip(Mode::Rate, 255, 8, &[8, 8, 4, 4]).0, 0);
    assert_eq!(round_trip(Mode::Rate, 200, 4, &[64]).0, 0);
}

#[test]
fn refuses_what_c_blosc2_refuses() {
    let src = vec![0u8; 16 * 16 * 8];
    let mut dst = vec![0u8; src.len()];
    let m = b2nd(&[16, 16]);
    assert_eq!(encode(Mode::Accuracy, 0, 8, None, &src, &mut dst), Err(Error::Failure));
    assert_eq!(
        encode(Mode::Accuracy, 0, 8, Some(&b2nd(&[2, 64])), &src[..1024], &mut dst),
        Err(Error::Failure)
    );
    assert_eq!(encode(Mode::Accuracy, 0, 8, Some(&b2nd(&[4; 5])), &src, &mut dst), Err(Error::Failure));
    // 2-byte items of a whole block; of a part of a block (a split stream): stored as is
    assert_eq!(encode(Mode::Rate, 50, 2, Some(&m), &src[..512], &mut dst), Err(Error::Failure));
    assert_eq!(encode(Mode::Rate, 50, 2, Some(&m), &src[..256], &mut dst), Ok(0));
    assert_eq!(encode(Mode::Precision, 10, 8, Some(&m), &src[..1000], &mut dst), Ok(0));
    // decoding: a block larger than the output, items that are not floats
    assert_eq!(decode(Mode::Rate, 50, 8, Some(&m), &src[..64], &mut dst[..1000]), Err(Error::Failure));
    assert_eq!(decode(Mode::Rate, 50, 2, Some(&m), &src[..64], &mut dst), Err(Error::Failure));
    assert_eq!(decode(Mode::Rate, 50, 8, Some(&b2nd(&[0, 16])), &src[..64], &mut dst), Err(Error::Failure));
}

#[test]
#[cfg_attr(miri, ignore = "Miri: calls the C codec zfp")]
fn damaged_and_truncated_streams_stay_in_bounds() {
    for mode in [Mode::Accuracy, Mode::Precision, Mode::Rate] {
        let meta = match mode {
            Mode::Accuracy => (-2i8) as u8,
            Mode::Precision => 12,
            Mode::Rate => 30,
        };
        let (c, src, _) = round_trip(mode, meta, 8, &[20, 24]);
        assert!(c > 0);
        let m = b2nd(&[20, 24]);
        let mut enc = vec![0u8; src.len()];
        let c = encode(mode, meta, 8, Some(&m), &src, &mut enc).unwrap();
        let mut out = vec![0u8; src.len()];
        let mut x = 12345u64;
        for round in 0..300 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let mut s = enc[..c].to_vec();
            if round % 2 == 0 {
                s.truncate((x >> 35) as usize % c);
            }
            for _ in 0..4 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                if !s.is_empty() {
                    let at = (x >> 33) as usize % s.len();
                    s[at] ^= (x >> 20) as u8 | 1;
                }
            }
            let _ = decode(mode, meta, 8, Some(&m), &s, &mut out);
            // all ones: the longest bit planes a stream can have
            let _ = decode(mode, meta, 8, Some(&m), &vec![0xFF; c], &mut out);
        }
    }
}
