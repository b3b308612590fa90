//! Ids of the globally registered tuners (`blosc2/tuners-registry.h`).
#![allow(non_camel_case_types)] // the C names of blosc2/tuners-registry.h, kept for cbindgen
use crate::os::{c_char, c_int};

pub const BLOSC_BTUNE: c_int = 32;

/// Symbol names a dynamically loaded tuner plugin exports.
#[repr(C)]
pub struct tuner_info {
    pub init: *mut c_char,
    pub next_blocksize: *mut c_char,
    pub next_cparams: *mut c_char,
    pub update: *mut c_char,
    pub free: *mut c_char,
}
