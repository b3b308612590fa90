//! Codecs and filters registered at run time (c-blosc2's user-defined codecs
//! and filters, ids 160-255; ids 32-159 are reserved for globally registered
//! plugins). A chunk whose codec or filter is registered is written and read
//! like any other; one that names an unregistered id is refused.
//!
//! The plugin codecs c-blosc2 registers at start (ndlz, zfp) are built in:
//! [`codec`] finds them under their ids (see [`builtin`]). The plugin filters
//! it registers at start are run by the filter pipeline itself.

pub mod builtin;

use crate::error::{Error, Result};
use crate::params::{CParams, SchunkView};
use std::sync::{Arc, RwLock};

/// What a codec or a filter may know about the chunk being compressed.
pub struct EncodeInfo<'a> {
    pub params: &'a CParams,
    /// The whole buffer being compressed into the chunk.
    pub source: &'a [u8],
}

/// What a codec or a filter may know about the chunk being decompressed.
pub struct DecodeInfo<'a> {
    pub typesize: i32,
    /// The decompression's owner ([`crate::params::DParams::owner`]).
    pub owner: usize,
    /// The whole chunk.
    pub chunk: &'a [u8],
    /// The super-chunk decompressed from, if any.
    pub schunk: Option<&'a SchunkView>,
}

/// A codec registered by the user.
pub trait UserCodec: Send + Sync {
    fn name(&self) -> &str;
    /// Compress `src` into `dst`; the compressed size, or 0 when it does not fit.
    fn encode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<usize>;
    /// Decompress `src` into `dst`; the decompressed size.
    fn decode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<usize>;
}

/// What a chunk operation reports when a codec fails: a codec that cannot
/// be loaded is not supported; any other failure is bad data (c-blosc2's codes).
pub fn codec_failure(e: Error) -> Error {
    if e == Error::CodecSupport {
        e
    } else {
        crate::trace!("the codec failed ({e:?})");
        Error::Data
    }
}

/// A filter registered by the user.
pub trait UserFilter: Send + Sync {
    fn name(&self) -> &str;
    fn forward(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<()>;
    fn backward(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<()>;
}

/// First id of the plugin range.
pub const FIRST_PLUGIN_ID: u8 = 32;
/// First id users may register.
pub const FIRST_USER_ID: u8 = 160;

type Registry<T> = RwLock<Vec<(u8, Arc<T>)>>;
static CODECS: Registry<dyn UserCodec> = RwLock::new(Vec::new());
static FILTERS: Registry<dyn UserFilter> = RwLock::new(Vec::new());

fn register<T: ?Sized>(
    reg: &Registry<T>,
    id: u8,
    item: Arc<T>,
    name: impl Fn(&T) -> &str,
    clash: Error,
) -> Result<()> {
    let mut r = reg.write().unwrap_or_else(|e| e.into_inner());
    if let Some((_, old)) = r.iter().find(|(i, _)| *i == id) {
        // Registering the same name again is harmless (the first registration
        // stays, as in c-blosc2); another name is a clash. An unnamed filter
        // (given by its callbacks only) clashes with none.
        let (a, b) = (name(old), name(&item));
        return if a == b || a.is_empty() || b.is_empty() { Ok(()) } else { Err(clash) };
    }
    if r.len() >= 255 {
        return Err(Error::CodecSupport);
    }
    r.push((id, item));
    Ok(())
}

fn lookup<T: ?Sized>(reg: &Registry<T>, id: u8) -> Option<Arc<T>> {
    reg.read().unwrap_or_else(|e| e.into_inner()).iter().find(|(i, _)| *i == id).map(|(_, c)| Arc::clone(c))
}

/// Register a codec under `id` (160-255).
pub fn register_codec(id: u8, codec: Arc<dyn UserCodec>) -> Result<()> {
    if id < FIRST_USER_ID {
        return Err(Error::CodecParam);
    }
    register(&CODECS, id, codec, |c| c.name(), Error::CodecParam)
}

/// Register a codec under a global id (32-159): the run-time plugins
/// c-blosc2 registers at start, by name.
pub fn register_global_codec(id: u8, codec: Arc<dyn UserCodec>) -> Result<()> {
    if !(FIRST_PLUGIN_ID..FIRST_USER_ID).contains(&id) {
        return Err(Error::CodecParam);
    }
    register(&CODECS, id, codec, |c| c.name(), Error::CodecParam)
}

/// Register a filter under `id` (160-255).
pub fn register_filter(id: u8, filter: Arc<dyn UserFilter>) -> Result<()> {
    if id < FIRST_USER_ID {
        return Err(Error::Failure);
    }
    register(&FILTERS, id, filter, |f| f.name(), Error::Failure)
}

/// The codec registered under `id` (or built in under it).
pub fn codec(id: u8) -> Option<Arc<dyn UserCodec>> {
    builtin::codec(id).or_else(|| lookup(&CODECS, id))
}

/// The name of codec `code` (c-blosc2's names), also of a plugin codec (built
/// in, registered at start or by the user); `None` for an unknown code.
pub fn codec_name(code: u8) -> Option<String> {
    if let Some(c) = crate::codecs::Codec::from_compcode(code) {
        return Some(c.name().to_string());
    }
    let n = codec(code)?.name().to_string();
    (!n.is_empty()).then_some(n)
}

/// The id of the codec registered (or built in) under `name`.
pub fn codec_id(name: &str) -> Option<u8> {
    let builtin = (builtin::NDLZ..=builtin::ZFP_FIXED_RATE)
        .find(|&id| builtin::codec(id).is_some_and(|c| c.name() == name));
    builtin.or_else(|| {
        let r = CODECS.read().unwrap_or_else(|e| e.into_inner());
        r.iter().find(|(_, c)| !name.is_empty() && c.name() == name).map(|(i, _)| *i)
    })
}

/// The filter registered under `id`.
pub fn filter(id: u8) -> Option<Arc<dyn UserFilter>> {
    lookup(&FILTERS, id)
}
