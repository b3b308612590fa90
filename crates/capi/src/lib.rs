//! b2nd-capi: c-blosc2 3.3.5's C API (exported functions and `repr(C)` structs),
//! thin wrappers over the safe `b2nd` crate. The only home of `#[no_mangle]`, raw
//! pointers and C mirrors; every export runs inside [`ffi::guard`].
//!
//! This crate has no optional features. Built, it is the C library: a
//! `cdylib` (installed as `libb2nd.so.0`, `libblosc2.dll` or
//! `libblosc2.9.dylib`: docs/BUILDING.md) and a `staticlib`.
//!
//! One folder per header that cbindgen generates from it (committed in the
//! repository's `include/`, checked by `tests/headers.rs`):
//! [`blosc2`] for `blosc2.h`, [`b2nd`] for `b2nd.h`, [`stdio`] for
//! `blosc2/blosc2-stdio.h` and [`registry`] for the `blosc2/*-registry.h`
//! headers; [`ffi`] holds the helpers they share.
#![allow(non_camel_case_types)] // C type names (`c_int`, `size_t`, ...) and the structs of the C headers

pub mod b2nd;
pub mod blosc2;
pub mod ffi;
pub mod os;
pub mod registry;
pub mod stdio;
