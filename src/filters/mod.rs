//! The filter pipeline's filters: shuffle, bitshuffle (scalar, SSE2 and AVX2
//! with run-time detection), delta, trunc_prec.

pub mod bitshuffle;
pub mod delta;
pub mod shuffle;
pub mod trunc_prec;
