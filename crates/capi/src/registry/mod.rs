//! Ids of the codecs, filters and tuners c-blosc2 registers globally (the
//! `blosc2/*-registry.h` headers). libb2nd ships none of these plugins: a
//! chunk that names one is refused with `BLOSC2_ERROR_CODEC_SUPPORT` or
//! `BLOSC2_ERROR_FILTER_PIPELINE`.

pub mod codecs;
pub mod filters;
pub mod tuners;
