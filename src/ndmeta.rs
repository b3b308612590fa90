//! The `b2nd` metalayer (README_B2ND_METALAYER.rst): a msgpack array of
//! version, ndim, shape (int64), chunkshape and blockshape (int32), and — from
//! the 7-element form on — the dtype format and the dtype string. (A leaf
//! module: the n-dimensional plugins below the super-chunk read it too; the
//! array layer adds its checks in `b2nd::meta`.)

use crate::error::{Error, Result};

/// Most dimensions an array has.
pub const MAX_DIM: usize = 16;
/// Version of the metalayer format written.
pub const VERSION: u8 = 0;
/// The dtype assumed when a metalayer has none.
pub const DEFAULT_DTYPE: &str = "|u1";
/// The NumPy dtype format.
pub const DTYPE_NUMPY_FORMAT: u8 = 0;

/// What the `b2nd` metalayer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub shape: Vec<i64>,
    pub chunkshape: Vec<i32>,
    pub blockshape: Vec<i32>,
    pub dtype: String,
    pub dtype_format: u8,
}

impl Meta {
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The metalayer's bytes.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let nd = self.ndim();
        if nd > MAX_DIM
            || self.chunkshape.len() != nd
            || self.blockshape.len() != nd
            || self.dtype_format > 127
        {
            return Err(Error::InvalidParam);
        }
        let dlen = u32::try_from(self.dtype.len())
            .ok()
            .filter(|&l| l <= i32::MAX as u32)
            .ok_or(Error::InvalidParam)?;
        let mut m = Vec::with_capacity(3 + 3 + nd * 19 + 6 + self.dtype.len());
        m.extend_from_slice(&[0x97, VERSION, nd as u8, 0x90 + nd as u8]);
        for &s in &self.shape {
            m.push(0xd3);
            m.extend_from_slice(&s.to_be_bytes());
        }
        for part in [&self.chunkshape, &self.blockshape] {
            m.push(0x90 + nd as u8);
            for &s in part.iter() {
                m.push(0xd2);
                m.extend_from_slice(&s.to_be_bytes());
            }
        }
        m.push(self.dtype_format);
        m.push(0xdb);
        m.extend_from_slice(&dlen.to_be_bytes());
        m.extend_from_slice(self.dtype.as_bytes());
        Ok(m)
    }

    /// Read a metalayer (also the older 6-element form, which has no dtype).
    pub fn deserialize(bytes: &[u8]) -> Result<Meta> {
        let (m, _, _) = Self::deserialize_parts(bytes)?;
        m.check()?;
        Ok(m)
    }

    /// [`Meta::deserialize`] without checking that the shapes make an array,
    /// also telling how many bytes were read and whether there is a dtype.
    pub fn deserialize_parts(bytes: &[u8]) -> Result<(Meta, usize, bool)> {
        let mut r = Reader { b: bytes, pos: 0 };
        let n = r.u8()?;
        if n != 0x96 && n != 0x97 {
            return Err(Error::InvalidHeader);
        }
        let _version = r.u8()?;
        let nd = r.u8()? as usize;
        if nd > MAX_DIM {
            return Err(Error::InvalidHeader);
        }
        let mut shape = Vec::with_capacity(nd);
        r.array(nd)?;
        for _ in 0..nd {
            r.marker(0xd3)?;
            shape.push(i64::from_be_bytes(r.take(8)?.try_into().map_err(|_| Error::InvalidHeader)?));
        }
        let mut parts = [Vec::with_capacity(nd), Vec::with_capacity(nd)];
        for part in parts.iter_mut() {
            r.array(nd)?;
            for _ in 0..nd {
                r.marker(0xd2)?;
                part.push(i32::from_be_bytes(r.take(4)?.try_into().map_err(|_| Error::InvalidHeader)?));
            }
        }
        let [chunkshape, blockshape] = parts;
        let (dtype, dtype_format) = if n == 0x97 {
            let format = r.u8()?;
            let len = match r.u8()? {
                m @ 0xa0..=0xbf => usize::from(m - 0xa0),
                0xd9 => usize::from(r.u8()?),
                0xda => {
                    usize::from(u16::from_be_bytes(r.take(2)?.try_into().map_err(|_| Error::InvalidHeader)?))
                }
                0xdb => u32::from_be_bytes(r.take(4)?.try_into().map_err(|_| Error::InvalidHeader)?) as usize,
                _ => return Err(Error::InvalidHeader),
            };
            let s = std::str::from_utf8(r.take(len)?).map_err(|_| Error::InvalidHeader)?;
            (s.to_string(), format)
        } else {
            (DEFAULT_DTYPE.to_string(), DTYPE_NUMPY_FORMAT)
        };
        let m = Meta { shape, chunkshape, blockshape, dtype, dtype_format };
        Ok((m, r.pos, n == 0x97))
    }

    /// Shapes that make a valid geometry (the layouts c-blosc2 accepts):
    /// non-negative lengths; a block length of 0 only with a chunk length of
    /// 0, and a chunk length of 0 only along a dimension of length 0. Blocks
    /// may be longer than chunks.
    pub fn check(&self) -> Result<()> {
        let nd = self.ndim();
        if nd > MAX_DIM || self.chunkshape.len() != nd || self.blockshape.len() != nd {
            return Err(Error::InvalidParam);
        }
        for i in 0..nd {
            let (s, c, b) = (self.shape[i], self.chunkshape[i], self.blockshape[i]);
            if s < 0 || c < 0 || b < 0 || (b == 0 && c != 0) || (c == 0 && s != 0) {
                return Err(Error::InvalidParam);
            }
        }
        Ok(())
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(Error::InvalidHeader)?;
        let s = self.b.get(self.pos..end).ok_or(Error::InvalidHeader)?;
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn marker(&mut self, m: u8) -> Result<()> {
        if self.u8()? == m {
            Ok(())
        } else {
            Err(Error::InvalidHeader)
        }
    }

    fn array(&mut self, n: usize) -> Result<()> {
        self.marker(0x90 + n as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let m = Meta {
            shape: vec![12, 25, 250],
            chunkshape: vec![8, 10, 50],
            blockshape: vec![4, 5, 10],
            dtype: "<f4".into(),
            dtype_format: 0,
        };
        let b = m.serialize().unwrap();
        assert_eq!(b[..4], [0x97, 0, 3, 0x93]);
        assert_eq!(Meta::deserialize(&b).unwrap(), m);
        for cut in 0..b.len() {
            assert!(Meta::deserialize(&b[..cut]).is_err());
        }
        let mut bad = b.clone();
        bad[2] = 17;
        assert!(Meta::deserialize(&bad).is_err());
        let mut zero_chunk = m.clone();
        zero_chunk.chunkshape[1] = 0;
        assert!(Meta::deserialize(&zero_chunk.serialize().unwrap()).is_err());
        zero_chunk.shape[1] = 0;
        zero_chunk.blockshape[1] = 0;
        assert!(Meta::deserialize(&zero_chunk.serialize().unwrap()).is_ok());
    }
}
