//! Ids of the globally registered codecs (`blosc2/codecs-registry.h`).
#![allow(non_camel_case_types)] // the C names of blosc2/codecs-registry.h, kept for cbindgen
use crate::os::{c_char, c_int};

pub const BLOSC_CODEC_NDLZ: c_int = 32;
pub const BLOSC_CODEC_ZFP_FIXED_ACCURACY: c_int = 33;
pub const BLOSC_CODEC_ZFP_FIXED_PRECISION: c_int = 34;
pub const BLOSC_CODEC_ZFP_FIXED_RATE: c_int = 35;
pub const BLOSC_CODEC_OPENHTJ2K: c_int = 36;
pub const BLOSC_CODEC_GROK: c_int = 37;
pub const BLOSC_CODEC_OPENZL: c_int = 38;
pub const BLOSC_CODEC_J2K: c_int = 39;
pub const BLOSC_CODEC_HTJ2K: c_int = 40;

/// Symbol names a dynamically loaded codec plugin exports.
#[repr(C)]
pub struct codec_info {
    pub encoder: *mut c_char,
    pub decoder: *mut c_char,
}
