//! `b2nd chunks FILE`: one row per chunk, from the index and the chunks' headers.

use crate::json::{self, Value};
use crate::source::{chunk_info, codec_text, explain, filters_text, Source};

pub fn run(src: &Source, as_json: bool) -> Result<i32, String> {
    let n = src.sc.nchunks();
    let sparse = src.sc.frame().is_some_and(|f| f.is_sparse());
    let (mut tc, mut tn, mut bad) = (0i64, 0i64, 0usize);
    let mut rows = Vec::new();
    if !as_json {
        outln!(
            "{:>7} {:>12} {:>10} {:>10} {:>8}  {:<8} {:<28} {:>9}  special",
            "chunk",
            if sparse { "file" } else { "offset" },
            "cbytes",
            "nbytes",
            "ratio",
            "codec",
            "filters",
            "blocksize"
        );
    }
    for i in 0..n {
        match chunk_info(src, i) {
            Ok(c) => {
                tc += c.cbytes;
                tn += c.nbytes;
                let ratio = if c.cbytes > 0 { c.nbytes as f64 / c.cbytes as f64 } else { 0.0 };
                let (codec, filters, blocksize) = match &c.header {
                    Some(h) => (
                        codec_text(h.compcode()),
                        filters_text(&h.filters, &h.filters_meta),
                        h.blocksize.to_string(),
                    ),
                    None => ("-".into(), "-".into(), "-".into()),
                };
                if as_json {
                    rows.push(json::obj([
                        ("chunk", i.into()),
                        (if sparse { "file" } else { "offset" }, c.location.map_or(Value::Null, Value::from)),
                        ("cbytes", c.cbytes.into()),
                        ("nbytes", c.nbytes.into()),
                        ("ratio", json::float(ratio)),
                        ("codec", codec.into()),
                        ("filters", filters.into()),
                        ("blocksize", c.header.map_or(Value::Null, |h| h.blocksize.into())),
                        ("special", c.special_name().into()),
                    ]));
                } else {
                    let loc = c.location.map_or("-".to_string(), |l| {
                        if sparse {
                            format!("{l:08x}.chunk")
                        } else {
                            l.to_string()
                        }
                    });
                    outln!("{i:>7} {loc:>12} {:>10} {:>10} {ratio:>8.2}  {codec:<8} {filters:<28} {blocksize:>9}  {}", c.cbytes, c.nbytes, c.special_name());
                }
            }
            Err(e) => {
                bad += 1;
                if as_json {
                    rows.push(json::obj([("chunk", i.into()), ("error", explain(e).into())]));
                } else {
                    outln!("{i:>7} unreadable: {}", explain(e));
                }
            }
        }
    }
    let ratio = if tc > 0 { tn as f64 / tc as f64 } else { 0.0 };
    if as_json {
        let total = json::obj([
            ("nchunks", n.into()),
            ("cbytes", tc.into()),
            ("nbytes", tn.into()),
            ("ratio", json::float(ratio)),
            ("unreadable", bad.into()),
        ]);
        outln!("{}", json::text(&json::obj([("chunks", Value::Array(rows)), ("total", total)])));
    } else {
        outln!(
            "{:>7} {:>12} {tc:>10} {tn:>10} {ratio:>8.2}  ({n} chunks{})",
            "total",
            "",
            if bad > 0 { format!(", {bad} unreadable") } else { String::new() }
        );
    }
    Ok(if bad > 0 { 1 } else { 0 })
}
