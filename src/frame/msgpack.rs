//! The few msgpack pieces frames use, read with bounds checks at every step.

use crate::error::{Error, Result};

/// A read position in a byte slice; every read checks its bounds.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8], pos: usize) -> Cursor<'a> {
        Cursor { bytes, pos }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(Error::ReadBuffer)?;
        let s = self.bytes.get(self.pos..end).ok_or(Error::ReadBuffer)?;
        self.pos = end;
        Ok(s)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// Expect the marker byte `m`.
    pub fn marker(&mut self, m: u8) -> Result<()> {
        if self.u8()? == m {
            Ok(())
        } else {
            Err(Error::InvalidHeader)
        }
    }

    pub fn be_u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub fn be_i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn be_u32(&mut self) -> Result<u32> {
        Ok(self.be_i32()? as u32)
    }

    pub fn be_i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }
}

/// A (variable-length) metalayer: its name and its content bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metalayer {
    pub name: String,
    pub content: Vec<u8>,
}

/// Read a metalayers section: `93 cd <u16> de <u16 n> {fixstr name, d2 <i32 offset>}*n dc <u16 n>
/// {c6 <u32 len> bytes}*n`, where offsets count from `base` within `bytes` and every
/// content must end before `limit`.
pub fn read_metalayers(
    bytes: &[u8],
    at: usize,
    base: usize,
    limit: usize,
    max: usize,
) -> Result<Vec<Metalayer>> {
    let mut c = Cursor::new(bytes, at);
    c.marker(0x93)?;
    c.marker(0xcd)?;
    c.be_u16()?;
    c.marker(0xde)?;
    let n = usize::from(c.be_u16()?);
    if n > max {
        return Err(Error::InvalidHeader);
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = c.u8()?;
        if !(0xa0..=0xbf).contains(&m) {
            return Err(Error::InvalidHeader);
        }
        let name = c.take(usize::from(m - 0xa0))?;
        let name = String::from_utf8(name.to_vec()).map_err(|_| Error::InvalidHeader)?;
        c.marker(0xd2)?;
        let offset = c.be_i32()?;
        if offset < 0 {
            return Err(Error::InvalidHeader);
        }
        let pos = base.checked_add(offset as usize).ok_or(Error::InvalidHeader)?;
        if pos >= limit {
            return Err(Error::InvalidHeader);
        }
        let mut v = Cursor::new(&bytes[..limit.min(bytes.len())], pos);
        v.marker(0xc6).map_err(|_| Error::InvalidHeader)?;
        let len = v.be_u32()? as usize;
        let content = v.take(len).map_err(|_| Error::InvalidHeader)?.to_vec();
        out.push(Metalayer { name, content });
    }
    Ok(out)
}
