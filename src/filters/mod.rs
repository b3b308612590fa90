//! The filter pipeline's filters: shuffle, bitshuffle (scalar, SSE2 and AVX2
//! with run-time detection), delta, trunc_prec; and the plugin filters
//! c-blosc2 registers at start: bytedelta, int_trunc, ndcell, ndmean.

pub mod bitshuffle;
pub mod bytedelta;
mod cells;
pub mod delta;
pub mod int_trunc;
pub mod ndcell;
pub mod ndmean;
pub mod shuffle;
pub mod trunc_prec;
#[cfg(test)]
mod workload;

/// The name of filter `id` (c-blosc2's names: "shuffle", "bytedelta"...), also
/// of a filter registered by the user; `None` for an unknown id.
pub fn name(id: u8) -> Option<String> {
    use crate::params::filter;
    Some(match id {
        filter::NOFILTER => "nofilter".into(),
        filter::SHUFFLE => "shuffle".into(),
        filter::BITSHUFFLE => "bitshuffle".into(),
        filter::DELTA => "delta".into(),
        filter::TRUNC_PREC => "trunc_prec".into(),
        filter::NDCELL => "ndcell".into(),
        filter::NDMEAN => "ndmean".into(),
        filter::BYTEDELTA_BUGGY => "bytedelta_buggy".into(),
        filter::BYTEDELTA => "bytedelta".into(),
        filter::INT_TRUNC => "int_trunc".into(),
        _ => {
            let f = crate::plugins::filter(id)?;
            let n = f.name();
            if n.is_empty() {
                return None;
            }
            n.to_string()
        }
    })
}
