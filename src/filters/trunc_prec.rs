//! The truncate-precision filter (filter id 4): zeroes low mantissa bits of
//! float32 (typesize 4) or float64 (typesize 8) items. Lossy, so there is
//! nothing to undo when decoding.
//!
//! `meta` (a signed byte): a positive value is the number of mantissa bits to
//! keep, a negative one the number of bits to drop.
//!
//! Items are numbers in the machine's byte order, as c-blosc2 reads them: on
//! a big-endian machine, big-endian floats (see docs/PORTING.md).

use crate::error::{Error, Result};

fn mask_bits(meta: i8, mantissa_bits: i32) -> Result<u32> {
    let p = i32::from(meta);
    if p.abs() > mantissa_bits {
        return Err(Error::FilterPipeline);
    }
    let zeroed = if p >= 0 { mantissa_bits - p } else { -p };
    if zeroed >= mantissa_bits {
        return Err(Error::FilterPipeline);
    }
    Ok(zeroed as u32)
}

/// Apply the filter to one block. Bytes past the last whole item are copied.
pub fn encode(meta: u8, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let meta = meta as i8;
    let whole = match typesize {
        4 => {
            let keep = !((1u32 << mask_bits(meta, 23)?) - 1);
            for (o, i) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                let v = u32::from_ne_bytes([i[0], i[1], i[2], i[3]]) & keep;
                o.copy_from_slice(&v.to_ne_bytes());
            }
            src.len() / 4 * 4
        }
        8 => {
            let keep = !((1u64 << mask_bits(meta, 52)?) - 1);
            for (o, i) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(i);
                o.copy_from_slice(&(u64::from_ne_bytes(b) & keep).to_ne_bytes());
            }
            src.len() / 8 * 8
        }
        _ => return Err(Error::FilterPipeline),
    };
    dst[whole..].copy_from_slice(&src[whole..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_requested_bits() {
        let x = 1.2345678f32.to_ne_bytes();
        let mut out = [0u8; 4];
        encode(10, 4, &x, &mut out).unwrap();
        let v = u32::from_ne_bytes(out);
        assert_eq!(v & ((1 << 13) - 1), 0);
        assert_eq!(v >> 13, u32::from_ne_bytes(x) >> 13);
        encode((-3i8) as u8, 4, &x, &mut out).unwrap();
        assert_eq!(u32::from_ne_bytes(out), u32::from_ne_bytes(x) & !7);
        assert!(encode(24, 4, &x, &mut out).is_err());
        assert!(encode((-23i8) as u8, 4, &x, &mut out).is_err());
        assert!(encode(3, 2, &x, &mut out).is_err());
        let y = 3.25f64.to_ne_bytes();
        let mut out8 = [0u8; 8];
        encode(52, 8, &y, &mut out8).unwrap();
        assert_eq!(out8, y);
    }
}
