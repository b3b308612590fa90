//! The plugin codecs c-blosc2 3.3 registers at `blosc2_init`, built in: ndlz
//! (32) and zfp in its three modes (33 fixed accuracy, 34 fixed precision, 35
//! fixed rate). Each is an adapter from the codec interface to its module in
//! [`crate::codecs`], handing it the codec meta, the typesize and the `b2nd`
//! metalayer of the super-chunk (the n-dimensional codecs take their
//! geometry from it).

use super::{DecodeInfo, EncodeInfo, UserCodec};
use crate::codecs::{ndlz, zfp};
use crate::error::Result;
use std::sync::{Arc, OnceLock};

/// Ids of the built-in plugin codecs (`blosc2/codecs-registry.h`).
pub const NDLZ: u8 = 32;
pub const ZFP_FIXED_ACCURACY: u8 = 33;
pub const ZFP_FIXED_PRECISION: u8 = 34;
pub const ZFP_FIXED_RATE: u8 = 35;

struct Ndlz;

impl UserCodec for Ndlz {
    fn name(&self) -> &str {
        "ndlz"
    }
    fn encode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<usize> {
        let b2nd = info.params.schunk.as_ref().and_then(|s| s.b2nd.as_deref());
        ndlz::encode(meta, info.params.typesize, b2nd, src, dst)
    }
    fn decode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<usize> {
        let b2nd = info.schunk.and_then(|s| s.b2nd.as_deref());
        ndlz::decode(meta, info.typesize, b2nd, src, dst)
    }
}

struct Zfp(zfp::Mode);

impl UserCodec for Zfp {
    fn name(&self) -> &str {
        match self.0 {
            zfp::Mode::Accuracy => "zfp_acc",
            zfp::Mode::Precision => "zfp_prec",
            zfp::Mode::Rate => "zfp_rate",
        }
    }
    fn encode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<usize> {
        // Outside a super-chunk the block is stored as it is (c-blosc2's zfp
        // gives up without an error there).
        let Some(schunk) = info.params.schunk.as_ref() else { return Ok(0) };
        let b2nd = schunk.b2nd.as_deref();
        zfp::encode(self.0, meta, info.params.typesize, b2nd, src, dst)
    }
    fn decode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<usize> {
        let b2nd = info.schunk.and_then(|s| s.b2nd.as_deref());
        zfp::decode(self.0, meta, info.typesize, b2nd, src, dst)
    }
}

/// The built-in codec with this id.
pub fn codec(id: u8) -> Option<Arc<dyn UserCodec>> {
    static ALL: OnceLock<[Arc<dyn UserCodec>; 4]> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        [
            Arc::new(Ndlz),
            Arc::new(Zfp(zfp::Mode::Accuracy)),
            Arc::new(Zfp(zfp::Mode::Precision)),
            Arc::new(Zfp(zfp::Mode::Rate)),
        ]
    });
    match id {
        NDLZ..=ZFP_FIXED_RATE => Some(Arc::clone(&all[usize::from(id - NDLZ)])),
        _ => None,
    }
}
