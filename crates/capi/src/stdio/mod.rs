//! The exports and types of `blosc2/blosc2-stdio.h`: the default filesystem
//! I/O backend (`file.rs`) and the memory-mapped one (`mmap.rs`), as the C
//! callbacks of `blosc2_io_cb`.
//!
//! Both backends report failures the c-blosc2 way: `NULL` from the open
//! functions, a short item count from reads and writes, a negative value
//! from the size, truncate, close and destroy functions.

mod file;
mod mmap;
mod types;

pub use file::*;
pub use mmap::*;
pub use types::*;

/// The byte length of `nitems` items of `size` bytes, when both are
/// non-negative and the product fits in `i64` and `usize`.
fn byte_count(size: i64, nitems: i64) -> Option<usize> {
    if size < 0 || nitems < 0 {
        return None;
    }
    usize::try_from(size.checked_mul(nitems)?).ok()
}
