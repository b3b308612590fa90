//! The exports and types of `blosc2/blosc2-stdio.h`: the default filesystem
//! I/O backend and the memory-mapped one, as C callbacks.

mod file;
mod types;

pub use file::*;
pub use types::*;
