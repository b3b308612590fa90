//! ZFP (plugin codecs 33, 34, 35): lossy compression of floating-point
//! blocks in fixed-accuracy, fixed-precision or fixed-rate mode.
//! (Being written: refuses for now, as when the plugin is not there.)

use crate::error::{Error, Result};

/// The zfp mode a codec id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Accuracy,
    Precision,
    Rate,
}

/// Compress one block; the compressed size (0 when it does not fit).
pub fn encode(_mode: Mode, _meta: u8, _typesize: i32, _b2nd: Option<&[u8]>, _src: &[u8], _dst: &mut [u8]) -> Result<usize> {
    Err(Error::CodecSupport)
}

/// Decompress one block; the decompressed size.
pub fn decode(_mode: Mode, _meta: u8, _typesize: i32, _b2nd: Option<&[u8]>, _src: &[u8], _dst: &mut [u8]) -> Result<usize> {
    Err(Error::CodecSupport)
}
