//! Integer truncation (plugin filter 36): zeroes the low bits of 1-, 2-, 4-
//! or 8-byte integer items. Lossy, so there is nothing to undo when decoding.
//!
//! `meta` (a signed byte): a positive value is the number of bits to keep, a
//! negative one the number of bits to zero. Keeping no bit (0, or zeroing
//! all of them) or more bits than an item has is refused, as c-blosc2 does.
//! Bytes after the last whole item are copied.
//! Items are integers in the machine's byte order, as c-blosc2 reads them
//! (see docs/PORTING.md).

use crate::error::{Error, Result};

/// The mask of the bits kept in an item of `bits` bits.
fn mask(meta: u8, bits: u32) -> Result<u64> {
    let m = i32::from(meta as i8);
    let zeroed = if m >= 0 { bits as i32 - m } else { -m };
    if zeroed < 0 || zeroed >= bits as i32 {
        crate::trace!("int_trunc: cannot keep {m} bits of {bits}-bit items");
        return Err(Error::FilterPipeline);
    }
    Ok(!((1u64 << zeroed) - 1))
}

/// Apply the filter to one block.
pub fn encode(meta: u8, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    let whole = n / typesize.max(1) * typesize;
    match typesize {
        1 => {
            let k = mask(meta, 8)? as u8;
            for (o, &i) in dst.iter_mut().zip(src) {
                *o = i & k;
            }
        }
        2 => {
            let k = mask(meta, 16)? as u16;
            for (o, i) in dst.chunks_exact_mut(2).zip(src.chunks_exact(2)) {
                o.copy_from_slice(&(u16::from_ne_bytes([i[0], i[1]]) & k).to_ne_bytes());
            }
        }
        4 => {
            let k = mask(meta, 32)? as u32;
            for (o, i) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                o.copy_from_slice(&(u32::from_ne_bytes([i[0], i[1], i[2], i[3]]) & k).to_ne_bytes());
            }
        }
        8 => {
            let k = mask(meta, 64)?;
            for (o, i) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(i);
                o.copy_from_slice(&(u64::from_ne_bytes(b) & k).to_ne_bytes());
            }
        }
        _ => {
            crate::trace!("int_trunc: items of {typesize} bytes are not handled");
            return Err(Error::FilterPipeline);
        }
    }
    dst[whole..].copy_from_slice(&src[whole..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_or_drops_bits() {
        let src: Vec<u8> = (0..17u8).map(|i| i.wrapping_mul(37) | 0x81).collect();
        let mut out = vec![0u8; 17];
        encode(5, 1, &src, &mut out).unwrap();
        assert!(out.iter().zip(&src).all(|(o, s)| *o == s & 0xf8));
        encode((-2i8) as u8, 2, &src, &mut out).unwrap();
        for k in 0..8 {
            let v = u16::from_ne_bytes([src[2 * k], src[2 * k + 1]]) & !3;
            assert_eq!(u16::from_ne_bytes([out[2 * k], out[2 * k + 1]]), v);
        }
        assert_eq!(out[16], src[16]);
        encode(1, 8, &src, &mut out).unwrap();
        let word = |b: &[u8]| u64::from_ne_bytes(b[..8].try_into().unwrap());
        assert_eq!(word(&out), word(&src) & (1 << 63));
        encode(32, 4, &src, &mut out).unwrap();
        assert_eq!(out, src);
    }

    #[test]
    fn refuses_what_c_blosc2_refuses() {
        let src = [1u8; 16];
        let mut out = [0u8; 16];
        for (meta, ts) in [(0i8, 4usize), (33, 4), (-32, 4), (9, 1), (-8, 1), (10, 3), (10, 16), (65, 8)] {
            assert_eq!(
                encode(meta as u8, ts, &src, &mut out),
                Err(Error::FilterPipeline),
                "meta {meta} typesize {ts}"
            );
        }
        assert!(encode((-31i8) as u8, 4, &src, &mut out).is_ok());
        assert!(encode((-63i8) as u8, 8, &src, &mut out).is_ok());
    }
}
