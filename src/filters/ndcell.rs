//! ndcell (plugin filter 32): an n-dimensional cell transform driven by the `b2nd`
//! metalayer of the super-chunk (meta: the cell's side).
//! (Being written: refuses for now, as when the plugin is not there.)

use crate::error::{Error, Result};

/// Apply the filter to one block.
pub fn encode(_meta: u8, _typesize: usize, _b2nd: Option<&[u8]>, _src: &[u8], _dst: &mut [u8]) -> Result<()> {
    Err(Error::FilterPipeline)
}

/// Undo the filter on one block.
pub fn decode(_meta: u8, _typesize: usize, _b2nd: Option<&[u8]>, _src: &[u8], _dst: &mut [u8]) -> Result<()> {
    Err(Error::FilterPipeline)
}
