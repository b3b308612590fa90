//! Ids of the globally registered filters (`blosc2/filters-registry.h`).
#![allow(non_camel_case_types)] // the C names of blosc2/filters-registry.h, kept for cbindgen
use crate::os::{c_char, c_int};

pub const BLOSC_FILTER_NDCELL: c_int = 32;
pub const BLOSC_FILTER_NDMEAN: c_int = 33;
pub const BLOSC_FILTER_BYTEDELTA_BUGGY: c_int = 34;
pub const BLOSC_FILTER_BYTEDELTA: c_int = 35;
pub const BLOSC_FILTER_INT_TRUNC: c_int = 36;

/// Symbol names a dynamically loaded filter plugin exports.
#[repr(C)]
pub struct filter_info {
    pub forward: *mut c_char,
    pub backward: *mut c_char,
}
