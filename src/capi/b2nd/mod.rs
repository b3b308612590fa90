//! The exports and types of `b2nd.h`: `types.rs` holds the `repr(C)`
//! mirrors, `context.rs` contexts and the metalayer, `array.rs` the arrays.

mod array;
mod context;
mod types;

pub use array::*;
pub use context::*;
pub use types::*;
