//! The `b2nd` metalayer as arrays use it: the format is [`crate::ndmeta`];
//! here, the checks of new arrays' shapes and the printed form.

use crate::error::{Error, Result};
pub use crate::ndmeta::{Meta, DEFAULT_DTYPE, DTYPE_NUMPY_FORMAT, MAX_DIM, VERSION};

impl Meta {
    /// Check shapes given as parameters for new arrays, which may be
    /// placeholders (c-blosc2 accepts a chunk length of 0 along a dimension
    /// that is not empty, for contexts whose arrays get another shape, e.g.
    /// slices): non-negative lengths, a block length of 0 only with a chunk
    /// length of 0. Returns the shapes of a block.
    pub fn check_params(&self) -> Result<BlockShape> {
        let nd = self.ndim();
        if nd > MAX_DIM || self.chunkshape.len() != nd || self.blockshape.len() != nd {
            return Err(Error::InvalidParam);
        }
        for i in 0..nd {
            let (s, c, b) = (self.shape[i], self.chunkshape[i], self.blockshape[i]);
            if s < 0 || c < 0 || b < 0 || (b == 0 && c != 0) {
                return Err(Error::InvalidParam);
            }
        }
        Ok(BlockShape(self.blockshape.clone()))
    }
}

impl std::fmt::Display for Meta {
    /// The metalayer as `b2nd_print_meta` prints it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |v: Vec<String>| v.join(", ");
        writeln!(f, "b2nd metalayer parameters:")?;
        writeln!(f, " Ndim:       {}", self.ndim())?;
        writeln!(f, " shape:      {}", join(self.shape.iter().map(|x| x.to_string()).collect()))?;
        writeln!(f, " chunkshape: {}", join(self.chunkshape.iter().map(|x| x.to_string()).collect()))?;
        writeln!(f, " dtype: {}", self.dtype)?;
        writeln!(f, " blockshape: {}", join(self.blockshape.iter().map(|x| x.to_string()).collect()))
    }
}

/// The shape of a block.
pub struct BlockShape(Vec<i32>);

impl BlockShape {
    /// The bytes of a block of items of `typesize` bytes.
    pub fn block_bytes(&self, typesize: i32) -> Result<i32> {
        self.0
            .iter()
            .try_fold(typesize, |acc, &b| acc.checked_mul(b))
            .filter(|_| typesize > 0)
            .ok_or(Error::InvalidParam)
    }
}
