//! The part of zfp 1.0.1's C interface (`vendor/zfp/include/zfp.h`,
//! `zfp/bitstream.h`) the codec uses. zfp is built into the crate by
//! `build.rs`.

use libc::{c_double, c_int, c_uint, c_void, size_t};

/// `zfp_stream` (opaque here: only handled by pointer).
#[repr(C)]
pub struct ZfpStream {
    _private: [u8; 0],
}

/// `zfp_field` (opaque here).
#[repr(C)]
pub struct ZfpField {
    _private: [u8; 0],
}

/// `bitstream` (opaque).
#[repr(C)]
pub struct BitStream {
    _private: [u8; 0],
}

/// `zfp_type`.
pub type ZfpType = c_int;
pub const ZFP_TYPE_FLOAT: ZfpType = 3;
pub const ZFP_TYPE_DOUBLE: ZfpType = 4;

/// The most bit planes zfp codes (`ZFP_MAX_PREC`).
pub const ZFP_MAX_PREC: u32 = 64;

extern "C" {
    pub fn zfp_stream_open(stream: *mut BitStream) -> *mut ZfpStream;
    pub fn zfp_stream_close(zfp: *mut ZfpStream);
    pub fn zfp_stream_set_accuracy(zfp: *mut ZfpStream, tolerance: c_double) -> c_double;
    pub fn zfp_stream_set_precision(zfp: *mut ZfpStream, precision: c_uint) -> c_uint;
    pub fn zfp_stream_set_rate(
        zfp: *mut ZfpStream,
        rate: c_double,
        ty: ZfpType,
        dims: c_uint,
        align: c_int,
    ) -> c_double;
    pub fn zfp_stream_params(
        zfp: *const ZfpStream,
        minbits: *mut c_uint,
        maxbits: *mut c_uint,
        maxprec: *mut c_uint,
        minexp: *mut c_int,
    );
    pub fn zfp_stream_maximum_size(zfp: *const ZfpStream, field: *const ZfpField) -> size_t;
    pub fn zfp_stream_set_bit_stream(zfp: *mut ZfpStream, stream: *mut BitStream);
    pub fn zfp_stream_rewind(zfp: *mut ZfpStream);
    pub fn zfp_field_1d(pointer: *mut c_void, ty: ZfpType, nx: size_t) -> *mut ZfpField;
    pub fn zfp_field_2d(pointer: *mut c_void, ty: ZfpType, nx: size_t, ny: size_t) -> *mut ZfpField;
    pub fn zfp_field_3d(
        pointer: *mut c_void,
        ty: ZfpType,
        nx: size_t,
        ny: size_t,
        nz: size_t,
    ) -> *mut ZfpField;
    pub fn zfp_field_4d(
        pointer: *mut c_void,
        ty: ZfpType,
        nx: size_t,
        ny: size_t,
        nz: size_t,
        nw: size_t,
    ) -> *mut ZfpField;
    pub fn zfp_field_free(field: *mut ZfpField);
    pub fn zfp_compress(zfp: *mut ZfpStream, field: *const ZfpField) -> size_t;
    pub fn zfp_decompress(zfp: *mut ZfpStream, field: *mut ZfpField) -> size_t;
    pub fn stream_open(buffer: *mut c_void, bytes: size_t) -> *mut BitStream;
    pub fn stream_close(stream: *mut BitStream);
}
