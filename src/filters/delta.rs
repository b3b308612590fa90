//! The delta filter (filter id 3): each item is XORed with a reference.
//!
//! Block 0 of a chunk is its own reference: item `i` is XORed with item
//! `i - 1` of the same (pre-filtered) block, item 0 kept. Every other block is
//! XORed, item by item, with the chunk's *original* block 0 (before any filter).
//! Items are 1, 2, 4 or 8 bytes wide: the typesize itself when it is one of
//! those, 8 for other multiples of 8, else 1. Bytes past the last whole item
//! are kept as they are (c-blosc2 leaves them undefined; keeping them makes
//! every byte round-trip and is what c-blosc2's decoder expects).

fn unit(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    }
}

macro_rules! xor_words {
    ($w:expr, $a:expr, $b:expr, $out:expr) => {{
        match $w {
            8 => xor_chunks::<8>($a, $b, $out),
            4 => xor_chunks::<4>($a, $b, $out),
            2 => xor_chunks::<2>($a, $b, $out),
            _ => xor_chunks::<1>($a, $b, $out),
        }
    }};
}

#[inline]
fn xor_chunks<const W: usize>(a: &[u8], b: &[u8], out: &mut [u8]) {
    for ((o, x), y) in out.chunks_exact_mut(W).zip(a.chunks_exact(W)).zip(b.chunks_exact(W)) {
        for k in 0..W {
            o[k] = x[k] ^ y[k];
        }
    }
}

/// Encode one block. `src` is the block as it enters the filter, `dst` gets
/// the result (same length), `reference` is the chunk's original block 0
/// (ignored for block 0).
pub fn encode(is_first_block: bool, reference: &[u8], typesize: usize, src: &[u8], dst: &mut [u8]) {
    let w = unit(typesize);
    let n = src.len();
    let whole = n / w * w;
    if is_first_block {
        let head = w.min(whole);
        dst[..head].copy_from_slice(&src[..head]);
        if whole > w {
            let (prev, cur) = (&src[..whole - w], &src[w..whole]);
            xor_words!(w, cur, prev, &mut dst[w..whole]);
        }
    } else {
        let whole = whole.min(reference.len() / w * w);
        xor_words!(w, &src[..whole], &reference[..whole], &mut dst[..whole]);
        dst[whole..n].copy_from_slice(&src[whole..n]);
        return;
    }
    dst[whole..n].copy_from_slice(&src[whole..n]);
}

/// Decode one block in place. For block 0 `reference` is ignored; for the
/// others it must be the chunk's fully decoded block 0.
pub fn decode(is_first_block: bool, reference: &[u8], typesize: usize, block: &mut [u8]) {
    let w = unit(typesize);
    let whole = block.len() / w * w;
    if is_first_block {
        for i in (w..whole).step_by(w) {
            for k in 0..w {
                block[i + k] ^= block[i - w + k];
            }
        }
    } else {
        let whole = whole.min(reference.len() / w * w);
        for (b, r) in block[..whole].iter_mut().zip(&reference[..whole]) {
            *b ^= r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_byte_for_odd_sizes() {
        for typesize in [1usize, 2, 3, 4, 8, 12, 16] {
            for n in [0usize, 1, 5, 7, 8, 9, 33, 100, 1001] {
                let first: Vec<u8> = (0..n).map(|i| (i * 31 + 7) as u8).collect();
                let other: Vec<u8> = (0..n).map(|i| (i * 17 + 3) as u8).collect();
                let mut e0 = vec![0u8; n];
                let mut e1 = vec![0u8; n];
                encode(true, &first, typesize, &first, &mut e0);
                encode(false, &first, typesize, &other, &mut e1);
                decode(true, &[], typesize, &mut e0);
                assert_eq!(e0, first, "block 0, typesize {typesize}, n {n}");
                decode(false, &first, typesize, &mut e1);
                assert_eq!(e1, other, "block 1, typesize {typesize}, n {n}");
            }
        }
    }

    #[test]
    fn first_block_is_xor_with_previous_item() {
        let src = [1u8, 0, 3, 0, 7, 0];
        let mut dst = [0u8; 6];
        encode(true, &src, 2, &src, &mut dst);
        assert_eq!(dst, [1, 0, 2, 0, 4, 0]);
    }
}
