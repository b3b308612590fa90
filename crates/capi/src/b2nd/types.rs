//! The `repr(C)` mirrors and constants of `b2nd.h`.
#![allow(non_camel_case_types)] // the C names of b2nd.h, kept for cbindgen

use crate::blosc2::types::{blosc2_metalayer, blosc2_schunk, blosc2_storage, BLOSC2_MAX_METALAYERS};
use crate::os::c_char;

/// Version of the b2nd metalayer format.
pub const B2ND_METALAYER_VERSION: i32 = 0;
/// Most dimensions of an array.
pub const B2ND_MAX_DIM: usize = 16;
/// Most user metalayers of an array (one slot is the b2nd metalayer).
pub const B2ND_MAX_METALAYERS: usize = BLOSC2_MAX_METALAYERS - 1;
/// The NumPy dtype format.
pub const DTYPE_NUMPY_FORMAT: i32 = 0;

/// The decompressed chunk an array keeps at hand.
#[repr(C)]
pub struct chunk_cache_s {
    pub data: *mut u8,
    pub nchunk: i64,
}

/// Parameters for creating an array (published in full, field for field as
/// c-blosc2 keeps it, because programs read `ctx->ndim` and `ctx->shape`).
#[repr(C)]
pub struct b2nd_context_s {
    pub ndim: i8,
    pub shape: [i64; B2ND_MAX_DIM],
    pub chunkshape: [i32; B2ND_MAX_DIM],
    pub blockshape: [i32; B2ND_MAX_DIM],
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    pub b2_storage: *mut blosc2_storage,
    pub metalayers: [blosc2_metalayer; B2ND_MAX_METALAYERS],
    pub nmetalayers: i32,
}

/// The name programs use for [`b2nd_context_s`].
pub type b2nd_context_t = b2nd_context_s;

/// A multidimensional array stored in a super-chunk.
#[repr(C)]
pub struct b2nd_array_t {
    pub sc: *mut blosc2_schunk,
    pub shape: [i64; B2ND_MAX_DIM],
    pub chunkshape: [i32; B2ND_MAX_DIM],
    pub extshape: [i64; B2ND_MAX_DIM],
    pub blockshape: [i32; B2ND_MAX_DIM],
    pub extchunkshape: [i64; B2ND_MAX_DIM],
    pub nitems: i64,
    pub chunknitems: i32,
    pub extnitems: i64,
    pub blocknitems: i32,
    pub extchunknitems: i64,
    pub ndim: i8,
    pub chunk_cache: chunk_cache_s,
    pub item_array_strides: [i64; B2ND_MAX_DIM],
    pub item_chunk_strides: [i64; B2ND_MAX_DIM],
    pub item_extchunk_strides: [i64; B2ND_MAX_DIM],
    pub item_block_strides: [i64; B2ND_MAX_DIM],
    pub block_chunk_strides: [i64; B2ND_MAX_DIM],
    pub chunk_array_strides: [i64; B2ND_MAX_DIM],
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    pub last_tick: i64,
}

/// Keeps the b2nd types in the generated header until the b2nd functions
/// that use them are exported (cbindgen only emits types reachable from an
/// export or listed in its config).
#[doc(hidden)]
pub fn _types(_: &b2nd_array_t, _: &b2nd_context_t) {}
