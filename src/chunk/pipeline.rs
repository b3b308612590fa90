//! The filter pipeline of one block: forward when compressing, backward when
//! decompressing (README_CHUNK_FORMAT.rst, "filters").

use super::header::{filter, MAX_FILTERS};
use crate::error::{Error, Result};
use crate::filters::{bitshuffle, bytedelta, delta, int_trunc, ndcell, ndmean, shuffle, trunc_prec};
use crate::params::SchunkView;
use crate::plugins::{self, DecodeInfo, EncodeInfo, FIRST_PLUGIN_ID};

/// The streams bytedelta works on: its meta, or the super-chunk's typesize
/// when the meta is 0 (refused outside a super-chunk, as in c-blosc2).
fn bytedelta_lanes(meta: u8, schunk: Option<&SchunkView>) -> Result<usize> {
    match (meta, schunk) {
        (0, Some(s)) if s.typesize > 0 => Ok(s.typesize as usize),
        (0, _) => {
            crate::trace!(
                "bytedelta with a meta of 0 takes the typesize of a super-chunk, and there is none"
            );
            Err(Error::FilterPipeline)
        }
        (m, _) => Ok(usize::from(m)),
    }
}

/// Where the current bytes of a block live while the pipeline runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Src,
    T1,
    T2,
}

/// Run the forward pipeline on `src` (one block). Returns which buffer holds
/// the result: `None` for `src` itself, `Some(true)` for `t1`, `Some(false)` for `t2`.
/// `reference` is the chunk's original block 0 (for delta).
#[allow(clippy::too_many_arguments)] // the pipeline's inputs and two scratch buffers (a hot path)
pub fn forward(
    filters: &[u8; MAX_FILTERS],
    filters_meta: &[u8; MAX_FILTERS],
    typesize: usize,
    first_block: bool,
    reference: &[u8],
    src: &[u8],
    t1: &mut [u8],
    t2: &mut [u8],
    info: Option<&EncodeInfo>,
) -> Result<Option<bool>> {
    let n = src.len();
    let mut at = At::Src;
    for (&f, &meta) in filters.iter().zip(filters_meta) {
        if f == filter::NOFILTER {
            continue;
        }
        let (input, output): (&[u8], &mut [u8]) = match at {
            At::Src => (src, &mut t1[..n]),
            At::T1 => (&t1[..n], &mut t2[..n]),
            At::T2 => (&t2[..n], &mut t1[..n]),
        };
        match f {
            filter::SHUFFLE => {
                let ts = if meta == 0 { typesize } else { usize::from(meta) };
                shuffle::shuffle(ts, input, output);
            }
            filter::BITSHUFFLE => bitshuffle::bitshuffle(typesize, input, output),
            filter::DELTA => delta::encode(first_block, reference, typesize, input, output),
            filter::TRUNC_PREC => trunc_prec::encode(meta, typesize, input, output)?,
            filter::BYTEDELTA | filter::BYTEDELTA_BUGGY => {
                let lanes = bytedelta_lanes(meta, info.and_then(|i| i.params.schunk.as_ref()))?;
                if f == filter::BYTEDELTA {
                    bytedelta::encode(lanes, input, output);
                } else {
                    bytedelta::encode_buggy(lanes, input, output);
                }
            }
            filter::INT_TRUNC => int_trunc::encode(meta, typesize, input, output)?,
            filter::NDCELL | filter::NDMEAN => {
                let b2nd = info.and_then(|i| i.params.schunk.as_ref()).and_then(|s| s.b2nd.as_deref());
                if f == filter::NDCELL {
                    ndcell::encode(meta, typesize, b2nd, input, output)?;
                } else {
                    ndmean::encode(meta, typesize, b2nd, input, output)?;
                }
            }
            id => {
                let (Some(f), Some(info)) = (plugins::filter(id), info) else {
                    return Err(Error::FilterPipeline);
                };
                f.forward(input, output, meta, info)?;
            }
        }
        at = match at {
            At::Src | At::T2 => At::T1,
            At::T1 => At::T2,
        };
    }
    Ok(match at {
        At::Src => None,
        At::T1 => Some(true),
        At::T2 => Some(false),
    })
}

/// The backward steps that move bytes from one buffer to another (all but
/// delta, which works in place, and trunc_prec and int_trunc, which have
/// nothing to undo).
pub fn out_of_place_steps(filters: &[u8; MAX_FILTERS]) -> usize {
    filters
        .iter()
        .filter(|&&f| !matches!(f, filter::NOFILTER | filter::DELTA | filter::TRUNC_PREC | filter::INT_TRUNC))
        .count()
}

/// `Some(shuffled)` when the pipeline is at most one byte shuffle over the
/// item size (`shuffled`: there is one and items have several bytes),
/// `None` for any other filter: the pipelines whose split blocks the chunk
/// code shuffles and unshuffles plane by plane itself.
pub fn plain_shuffle(
    filters: &[u8; MAX_FILTERS],
    filters_meta: &[u8; MAX_FILTERS],
    typesize: usize,
) -> Option<bool> {
    let mut shuffled = false;
    for (&f, &meta) in filters.iter().zip(filters_meta) {
        match f {
            filter::NOFILTER => {}
            filter::SHUFFLE if !shuffled && (meta == 0 || usize::from(meta) == typesize) => {
                shuffled = typesize > 1
            }
            _ => return None,
        }
    }
    Some(shuffled)
}

/// The plugin filters built in (c-blosc2 registers them at start).
pub fn is_builtin_plugin(f: u8) -> bool {
    matches!(
        f,
        filter::NDCELL | filter::NDMEAN | filter::BYTEDELTA_BUGGY | filter::BYTEDELTA | filter::INT_TRUNC
    )
}

/// Whether the pipeline validates (known or registered filters only).
pub fn check(filters: &[u8; MAX_FILTERS]) -> Result<()> {
    let known = |f: u8| {
        f <= filter::TRUNC_PREC
            || is_builtin_plugin(f)
            || (f >= FIRST_PLUGIN_ID && plugins::filter(f).is_some())
    };
    if filters.iter().all(|&f| known(f)) {
        Ok(())
    } else {
        Err(Error::FilterPipeline)
    }
}

/// Undo the pipeline. The codec has written the block into `t1` when there
/// are out-of-place steps, else directly into `dst`; the result ends in `dst`.
/// `reference` is the chunk's decoded block 0 (for delta on later blocks).
#[allow(clippy::too_many_arguments)] // as `forward`, plus the chunk's format version
pub fn backward(
    filters: &[u8; MAX_FILTERS],
    filters_meta: &[u8; MAX_FILTERS],
    typesize: usize,
    format_version: u8,
    first_block: bool,
    reference: &[u8],
    dst: &mut [u8],
    t1: &mut [u8],
    t2: &mut [u8],
    info: Option<&DecodeInfo>,
) -> Result<()> {
    let n = dst.len();
    let mut remaining = out_of_place_steps(filters);
    // Where the data is now: 0 = dst, 1 = t1, 2 = t2.
    let mut at = if remaining == 0 { 0 } else { 1 };
    for (&f, &meta) in filters.iter().zip(filters_meta).rev() {
        match f {
            filter::NOFILTER | filter::TRUNC_PREC | filter::INT_TRUNC => {}
            filter::DELTA => {
                let buf: &mut [u8] = match at {
                    0 => dst,
                    1 => &mut t1[..n],
                    _ => &mut t2[..n],
                };
                delta::decode(first_block, reference, typesize, buf);
            }
            _ => {
                remaining -= 1;
                let next = if remaining == 0 {
                    0
                } else if at == 1 {
                    2
                } else {
                    1
                };
                let (input, output): (&[u8], &mut [u8]) = match (at, next) {
                    (1, 0) => (&t1[..n], &mut *dst),
                    (2, 0) => (&t2[..n], &mut *dst),
                    (1, 2) => (&t1[..n], &mut t2[..n]),
                    (2, 1) => (&t2[..n], &mut t1[..n]),
                    _ => return Err(Error::FilterPipeline),
                };
                match f {
                    filter::SHUFFLE => {
                        let ts = if meta == 0 { typesize } else { usize::from(meta) };
                        shuffle::unshuffle(ts, input, output);
                    }
                    filter::BITSHUFFLE => bitshuffle::bitunshuffle(typesize, input, output, format_version),
                    filter::NDCELL | filter::NDMEAN => {
                        // c-blosc2 takes the item size of the super-chunk here
                        let schunk = info.and_then(|i| i.schunk);
                        let (ts, b2nd) = schunk.map_or((0, None), |s| (s.typesize, s.b2nd.as_deref()));
                        if f == filter::NDCELL {
                            ndcell::decode(meta, ts, b2nd, input, output)?;
                        } else {
                            ndmean::decode(meta, ts, b2nd, input, output)?;
                        }
                    }
                    filter::BYTEDELTA | filter::BYTEDELTA_BUGGY => {
                        let lanes = bytedelta_lanes(meta, info.and_then(|i| i.schunk))?;
                        if f == filter::BYTEDELTA {
                            bytedelta::decode(lanes, input, output);
                        } else {
                            bytedelta::decode_buggy(lanes, input, output);
                        }
                    }
                    id => {
                        let (Some(uf), Some(info)) = (plugins::filter(id), info) else {
                            return Err(Error::FilterPipeline);
                        };
                        uf.backward(input, output, meta, info)?;
                    }
                }
                at = next;
            }
        }
    }
    Ok(())
}
