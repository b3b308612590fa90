//! The filter pipeline's filters: shuffle, bitshuffle, delta, trunc_prec.

#[path = "bitshuffle_tmp.rs"]
pub mod bitshuffle;
pub mod delta;
#[path = "shuffle_tmp.rs"]
pub mod shuffle;
pub mod trunc_prec;
