//! The exports and types of `b2nd.h`: `types.rs` holds the `repr(C)`
//! mirrors, `array.rs` the functions.

mod array;
// Called b2nd_types, as array.rs names it: `types` is blosc2.h's (below).
#[path = "types.rs"]
mod b2nd_types;

pub use array::*;
pub use b2nd_types::*;

// The neighbours array.rs names as `super::…`, from when it sat beside them
// in src/capi/ (`default_cparams` has since moved to blosc2/params.rs).
use super::blosc2::{global, schunk, types};
use super::ffi;
mod context {
    pub(crate) use crate::capi::blosc2::params::default_cparams;
}
