//! The exports and types of `b2nd.h`: `types.rs` holds the `repr(C)`
//! mirrors, `context.rs` contexts and the metalayer, `array.rs` the arrays,
//! `fields.rs` the array handle and its public fields.

mod array;
mod context;
mod fields;
mod types;

pub use array::*;
pub use context::*;
pub use types::*;
