//! `b2nd repack IN OUT`: the array (or super-chunk) again with other
//! parameters: codec, level, filters, chunk or block shape, contiguous or
//! sparse. What is not asked for stays as it was; metalayers and
//! vlmetalayers are kept, and chunks whose layout and compression do not
//! change are copied as they are stored, without decompressing them.

use crate::write::{disk_bytes, filters_json, Bar, Output, Summary, Wanted};
use b2nd::array::Array;
use b2nd::schunk::{SChunk, Storage, SuperChunk};
use std::time::Instant;

pub fn run(
    input: &str,
    output: &str,
    offset: u64,
    w: &Wanted,
    threads: usize,
    json: bool,
) -> Result<Summary, String> {
    if w.fortran {
        return Err("--order goes with a .npy output (b2nd convert)".into());
    }
    let t0 = Instant::now();
    let src = crate::source::open(input, offset)?;
    let sparse_in = src.sc.frame().is_some_and(|f| f.is_sparse());
    let has_b2nd = src.b2nd().is_some();
    let mut sc = src.sc;
    sc.set_nthreads(threads as i16, threads as i16);
    let out = Output::new(output, w.force)?;
    let storage = Storage {
        contiguous: !w.sparse.unwrap_or(sparse_in),
        urlpath: Some(out.tmp.clone()),
        durability: crate::write::durability(),
        ..Storage::default()
    };
    let mut bar = Bar::new("repack", json);
    let nbytes = sc.nbytes().max(0) as u64;
    let mut progress = |done: usize, total: usize| {
        bar.update(if total == 0 { nbytes } else { nbytes * done as u64 / total as u64 }, nbytes)
    };
    let r = if has_b2nd {
        let a = Array::from_schunk(SChunk::new(sc))
            .map_err(|e| format!("{input}: {}", crate::source::explain(e)))?;
        array(&a, storage, w, threads, &mut progress)
    } else {
        schunk(&sc, storage, w, threads, &mut progress)
    };
    bar.finish();
    let (mut fields, cp) = match r {
        Ok(x) => x,
        Err(e) => {
            out.discard();
            return Err(format!("{input}: {e}"));
        }
    };
    out.commit()?;
    fields.extend([
        ("codec", crate::source::codec_text(cp.compcode).into()),
        ("clevel", cp.clevel.into()),
        ("filters", filters_json(&cp.filters, &cp.filters_meta)),
    ]);
    let sparse = w.sparse.unwrap_or(sparse_in);
    Ok(Summary {
        command: "repack",
        input: input.into(),
        output: output.into(),
        format: format!(
            "{} ({} frame)",
            if has_b2nd { "b2nd" } else { "super-chunk" },
            if sparse { "sparse" } else { "contiguous" }
        ),
        fields,
        nbytes,
        out_bytes: disk_bytes(output),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

type Fields = Vec<(&'static str, crate::json::Value)>;

fn explain(e: b2nd::Error) -> String {
    crate::source::explain(e)
}

/// A b2nd array: its shapes and dtype stay, its chunks and blocks may change.
fn array(
    a: &Array,
    storage: Storage,
    w: &Wanted,
    threads: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Fields, b2nd::chunk::CParams), String> {
    let nd = a.ndim();
    let mut ctx = a.save_context(storage);
    ctx.cparams = w.apply(&ctx.cparams, threads);
    ctx.dparams.nthreads = ctx.cparams.nthreads;
    let dims = |opt: &str, v: &[i64]| -> Result<Vec<i32>, String> {
        if v.len() != nd {
            return Err(format!("{opt} needs {nd} lengths, one per dimension of the array"));
        }
        Ok(v.iter().map(|&x| x as i32).collect())
    };
    if let Some(c) = &w.chunks {
        ctx.meta.chunkshape = dims("--chunks", c)?;
    }
    if let Some(b) = &w.blocks {
        ctx.meta.blockshape = dims("--blocks", b)?;
    } else if w.chunks.is_some() {
        // blocks as they were, within the new chunks
        ctx.meta.blockshape =
            ctx.meta.blockshape.iter().zip(&ctx.meta.chunkshape).map(|(&b, &c)| b.min(c).max(1)).collect();
    }
    if ctx.meta.blockshape.iter().zip(&ctx.meta.chunkshape).any(|(b, c)| b > c) {
        return Err(format!(
            "blocks {:?} do not fit in chunks {:?}",
            ctx.meta.blockshape, ctx.meta.chunkshape
        ));
    }
    let copy = a.copy_observed(&ctx, progress).map_err(explain)?;
    let fields: Fields = vec![
        ("shape", a.shape().to_vec().into()),
        ("dtype", a.dtype().into()),
        ("chunks", copy.chunkshape().to_vec().into()),
        ("blocks", copy.blockshape().to_vec().into()),
        ("cbytes", copy.schunk().read_cached().cbytes().into()),
    ];
    Ok((fields, ctx.cparams))
}

/// A super-chunk without a b2nd metalayer: `--chunks N` and `--blocks N`
/// count items.
fn schunk(
    sc: &SuperChunk,
    storage: Storage,
    w: &Wanted,
    threads: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Fields, b2nd::chunk::CParams), String> {
    let one = |opt: &str, v: &Option<Vec<i64>>| -> Result<Option<i64>, String> {
        match v.as_deref() {
            None => Ok(None),
            Some([n]) => Ok(Some(*n)),
            Some(_) => {
                Err(format!("{opt}: a super-chunk without a b2nd metalayer takes one number of items"))
            }
        }
    };
    let ts = i64::from(sc.typesize().max(1));
    let mut cp = w.apply(&sc.context_cparams(), threads);
    if let Some(b) = one("--blocks", &w.blocks)? {
        cp.blocksize = i32::try_from(b * ts).map_err(|_| "--blocks: a block over 2 GiB".to_string())?;
    }
    let new = match one("--chunks", &w.chunks)? {
        None => sc.copy_observed(storage, Some(cp.clone()), None, progress).map_err(explain)?,
        Some(items) => rechunk(sc, storage, cp.clone(), items * ts, progress)?,
    };
    let fields: Fields = vec![
        ("typesize", sc.typesize().into()),
        ("chunksize", new.chunksize().into()),
        ("nchunks", new.nchunks().into()),
        ("cbytes", new.cbytes().into()),
    ];
    Ok((fields, cp))
}

/// The super-chunk's bytes again in chunks of `chunk_bytes`.
fn rechunk(
    sc: &SuperChunk,
    storage: Storage,
    cp: b2nd::chunk::CParams,
    chunk_bytes: i64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<SuperChunk, String> {
    let chunk_bytes = usize::try_from(chunk_bytes)
        .ok()
        .filter(|&n| n <= i32::MAX as usize)
        .ok_or("--chunks: a chunk over 2 GiB")?;
    let mut dp = sc.dparams().clone();
    dp.nthreads = cp.nthreads;
    dp.owner = 0;
    dp.schunk = None;
    let mut new = SuperChunk::new(cp, dp, storage).map_err(explain)?;
    for m in sc.metalayers() {
        new.meta_add(&m.name, &m.content).map_err(explain)?;
    }
    let mut carry: Vec<u8> = Vec::with_capacity(chunk_bytes);
    let mut buf = Vec::new();
    for i in 0..sc.nchunks() {
        progress(i, sc.nchunks());
        buf.resize(sc.chunk_nbytes(i).map_err(explain)?.max(0) as usize, 0);
        sc.decompress_chunk(i, &mut buf).map_err(explain)?;
        let mut rest = &buf[..];
        while !rest.is_empty() {
            let take = (chunk_bytes - carry.len()).min(rest.len());
            carry.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if carry.len() == chunk_bytes {
                new.append_buffer(&carry).map_err(explain)?;
                carry.clear();
            }
        }
    }
    if !carry.is_empty() {
        new.append_buffer(&carry).map_err(explain)?;
    }
    progress(sc.nchunks(), sc.nchunks());
    for m in sc.vlmetalayers() {
        let content = sc.vlmeta_get(&m.name).map_err(explain)?;
        new.vlmeta_add(&m.name, &content, None).map_err(explain)?;
    }
    Ok(new)
}
