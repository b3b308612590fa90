use super::*;

fn b2nd(rows: i32, cols: i32) -> Vec<u8> {
    Meta {
        shape: vec![i64::from(rows) * 3, i64::from(cols) * 2],
        chunkshape: vec![rows * 2, cols],
        blockshape: vec![rows, cols],
        dtype: "|u1".into(),
        dtype_format: 0,
    }
    .serialize()
    .unwrap()
}

/// Data with every kind of repetition: runs, repeated cells, repeated
/// rows and groups of rows, noise.
fn image(rows: usize, cols: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut v = vec![0u8; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            let band = (r / 8 + c / 8) % 5;
            v[r * cols + c] = match band {
                0 => 7,
                1 => ((r % 4) * 16 + (c % 4)) as u8,
                2 => (r % 3) as u8 * 50 + (c % 8) as u8,
                3 => (rnd() % 4) as u8,
                _ => rnd() as u8,
            };
        }
    }
    v
}

fn round_trip(side: u8, rows: usize, cols: usize, data: &[u8]) -> usize {
    let meta = b2nd(rows as i32, cols as i32);
    let mut enc = vec![0u8; data.len()];
    let n = encode(side, 1, Some(&meta), data, &mut enc).unwrap();
    if n == 0 {
        return 0;
    }
    assert!(n <= data.len());
    let mut dec = vec![0xAAu8; data.len()];
    assert_eq!(decode(side, 1, None, &enc[..n], &mut dec).unwrap(), data.len());
    assert_eq!(dec, data, "side {side} {rows}x{cols}");
    n
}

#[test]
fn round_trips_with_every_record_kind() {
    // (Under Miri three of the shapes: it is slow.)
    let shapes: &[(usize, usize)] = if cfg!(miri) {
        &[(37, 50), (8, 200), (16, 16)]
    } else {
        &[(64, 64), (37, 50), (8, 200), (100, 9), (16, 16), (129, 131)]
    };
    for side in [4u8, 8] {
        for &(rows, cols) in shapes {
            let data = image(rows, cols, (rows * cols) as u64);
            let n = round_trip(side, rows, cols, &data);
            assert!(n > 0 && n < data.len(), "side {side} {rows}x{cols}: {n}");
        }
    }
}

#[test]
fn tokens_of_each_kind_are_written() {
    // 4x4 cells: a literal cell, its rows shuffled into later cells.
    let (rows, cols) = (4, 4 * 40);
    let mut data = vec![0u8; rows * cols];
    let base: Vec<u8> = (0..16).map(|i| i * 13 + 1).collect();
    for cell in 0..40 {
        for r in 0..4 {
            // cell k: rows rotated by k, one row changed every other cell
            let src_row = (r + cell) % 4;
            for c in 0..4 {
                let mut b = base[src_row * 4 + c];
                if cell % 3 == 1 && r == cell % 4 {
                    b = b.wrapping_add(cell as u8);
                }
                data[r * cols + cell * 4 + c] = b;
            }
        }
    }
    let meta = b2nd(rows as i32, cols as i32);
    let mut enc = vec![0u8; data.len()];
    let n = encode(4, 1, Some(&meta), &data, &mut enc).unwrap();
    assert!(n > 0);
    let mut dec = vec![0u8; data.len()];
    decode(4, 1, None, &enc[..n], &mut dec).unwrap();
    assert_eq!(dec, data);
    // walk the records and count the kinds of token seen
    let mut d = Decoder { src: &enc[..n], pos: HEADER };
    let mut kinds = std::collections::BTreeSet::new();
    let mut buf = [0u8; 64];
    for _ in 0..40 {
        kinds.insert(enc[d.pos] & 0xE0);
        cell4::decode(&mut d, 4, 4, &mut buf).unwrap();
    }
    assert!(kinds.len() >= 3, "{kinds:?}");
}

#[test]
fn incompressible_and_small_blocks_give_zero() {
    let data = image(32, 32, 99).iter().map(|b| b.wrapping_mul(151).wrapping_add(17)).collect::<Vec<_>>();
    let meta = b2nd(32, 32);
    // noise does not shrink
    let mut x = 0x2545F4914F6CDD1Du64;
    let noise: Vec<u8> = (0..1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    let mut enc = vec![0u8; 1024];
    assert_eq!(encode(4, 1, Some(&meta), &noise, &mut enc).unwrap(), 0);
    // an output too small for the worst case of the cells
    let mut small = vec![0u8; 40];
    assert_eq!(encode(4, 1, Some(&meta), &data, &mut small).unwrap(), 0);
    // a block smaller than a cell
    let m = b2nd(2, 4);
    assert_eq!(encode(4, 1, Some(&m), &data[..8], &mut enc).unwrap(), 0);
    assert_eq!(encode(8, 1, Some(&b2nd(4, 8)), &data[..32], &mut enc).unwrap(), 0);
}

#[test]
fn refuses_what_c_blosc2_refuses() {
    let data = vec![1u8; 256];
    let mut out = vec![0u8; 256];
    let meta = b2nd(16, 16);
    assert_eq!(encode(5, 1, Some(&meta), &data, &mut out), Err(Error::Failure));
    assert_eq!(encode(4, 1, None, &data, &mut out), Err(Error::Failure));
    let three = Meta {
        shape: vec![4; 3],
        chunkshape: vec![4; 3],
        blockshape: vec![4; 3],
        dtype: "|u1".into(),
        dtype_format: 0,
    };
    assert_eq!(encode(4, 1, Some(&three.serialize().unwrap()), &data[..64], &mut out), Err(Error::Failure));
    assert_eq!(encode(4, 1, Some(&meta), &data[..128], &mut out), Err(Error::Failure));
    assert_eq!(encode(4, 1, Some(&meta), &data, &mut out[..8]), Err(Error::Failure));
    assert_eq!(decode(3, 1, None, &data, &mut out), Err(Error::Failure));
    // decoding: short stream, not 2-D, negative lengths, output too small
    assert_eq!(decode(4, 1, None, &[2, 0, 0], &mut out), Ok(0));
    assert_eq!(decode(4, 1, None, &[3, 4, 0, 0, 0, 4, 0, 0, 0, 0x40, 1], &mut out), Err(Error::Failure));
    assert_eq!(decode(4, 1, None, &[2, 0xFC, 0xFF, 0xFF, 0xFF, 4, 0, 0, 0], &mut out), Err(Error::Failure));
    assert_eq!(decode(4, 1, None, &[2, 4, 0, 0, 0, 4, 0, 0, 0, 0x40, 1], &mut out[..15]), Ok(0));
    assert_eq!(decode(4, 1, None, &[2, 4, 0, 0, 0, 4, 0, 0, 0, 0x40, 9], &mut out[..16]), Ok(16));
    assert_eq!(&out[..16], &[9; 16]);
    // a back reference before the stream, an unknown token, a truncated literal
    assert_eq!(decode(4, 1, None, &[2, 4, 0, 0, 0, 4, 0, 0, 0, 0xC0, 20, 0], &mut out), Err(Error::Failure));
    assert_eq!(decode(4, 1, None, &[2, 4, 0, 0, 0, 4, 0, 0, 0, 0x01], &mut out), Err(Error::Failure));
    assert_eq!(decode(4, 1, None, &[2, 4, 0, 0, 0, 4, 0, 0, 0, 0, 1, 2], &mut out), Err(Error::Failure));
    assert_eq!(decode(8, 1, None, &[2, 8, 0, 0, 0, 8, 0, 0, 0, 0xAE, 0, 0], &mut out), Err(Error::Failure));
    // a huge length along one dimension with none along the other: an empty block, at once
    assert_eq!(decode(4, 1, None, &[2, 0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0], &mut out), Ok(0));
}

#[test]
fn damaged_streams_never_panic() {
    for side in [4u8, 8] {
        let (rows, cols) = (40, 44);
        let data = image(rows, cols, 5);
        let meta = b2nd(rows as i32, cols as i32);
        let mut enc = vec![0u8; data.len()];
        let n = encode(side, 1, Some(&meta), &data, &mut enc).unwrap();
        assert!(n > 0);
        let mut x = 0x9E3779B97F4A7C15u64;
        let mut out = vec![0u8; data.len() + 64];
        for round in 0..if cfg!(miri) { 40 } else { 3000 } {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let mut s = enc[..n].to_vec();
            let at = (x >> 33) as usize % n;
            s[at] = (x >> 17) as u8;
            if round % 3 == 0 {
                s.truncate((x >> 40) as usize % n);
            }
            let _ = decode(side, 1, None, &s, &mut out);
        }
    }
}
