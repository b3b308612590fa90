//! NDLZ (plugin codec 32): a Lempel-Ziv codec for 2-D blocks of cells.
//! (Being written: refuses for now, as when the plugin is not there.)

use crate::error::{Error, Result};

/// Compress one block; the compressed size (0 when it does not fit).
pub fn encode(_meta: u8, _typesize: i32, _b2nd: Option<&[u8]>, _src: &[u8], _dst: &mut [u8]) -> Result<usize> {
    Err(Error::CodecSupport)
}

/// Decompress one block; the decompressed size.
pub fn decode(_meta: u8, _typesize: i32, _b2nd: Option<&[u8]>, _src: &[u8], _dst: &mut [u8]) -> Result<usize> {
    Err(Error::CodecSupport)
}
