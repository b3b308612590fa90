//! The C API: c-blosc2 3.3.5's exported functions and `repr(C)` structs,
//! thin wrappers over the safe core. The only home of `#[no_mangle]`, raw
//! pointers and C mirrors; every export runs inside [`ffi::guard`].
#![allow(non_camel_case_types, clippy::missing_safety_doc)]

pub mod b2nd;
pub mod chunk;
pub mod context;
pub mod ffi;
pub mod global;
mod hooks;
pub mod io;
pub mod misc;
pub mod plugins;
pub mod schunk;
pub mod types;
pub mod b2nd_types;
pub mod defaults;
pub mod stdio;
pub mod stdio_types;
pub mod registry;
