//! The exports and types of `b2nd.h`: `types.rs` holds the
//! `repr(C)` mirrors, `array.rs` the functions.

mod array;
#[path = "types.rs"]
mod b2nd_types;

pub use array::*;
pub use b2nd_types::*;

// The names array.rs reaches as `super::…` (it was written beside them in src/capi/).
use super::blosc2::{context, global, schunk, types};
use super::ffi;
