//! The filter pipeline's filters: shuffle, bitshuffle (scalar, SSE2 and AVX2
//! with run-time detection), delta, trunc_prec; and the plugin filters
//! c-blosc2 registers at start: bytedelta, int_trunc, ndcell, ndmean.

pub mod bitshuffle;
pub mod bytedelta;
mod cells;
pub mod delta;
pub mod int_trunc;
pub mod ndcell;
pub mod ndmean;
pub mod shuffle;
pub mod trunc_prec;
