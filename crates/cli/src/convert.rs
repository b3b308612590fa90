//! `b2nd convert IN OUT`: a NumPy `.npy` file to a b2nd array (a contiguous
//! frame, or a sparse frame directory with `--sparse`), or a b2nd array to a
//! `.npy` file (C order, or Fortran order with `--order F`). Which way is told
//! by IN's first bytes; between two b2nd arrays it repacks.

use crate::write::{disk_bytes, filters_json, Bar, Output, Summary, Wanted};
use b2nd::array::npy_io::{self, NpyError};
use b2nd::schunk::{SChunk, Storage};
use b2nd::{Array, Context};
use std::path::Path;
use std::time::Instant;

fn is_npy(path: &str) -> bool {
    let mut magic = [0u8; 6];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && &magic == b"\x93NUMPY"
}

fn npy_error(path: &str, e: NpyError) -> String {
    match e {
        NpyError::Blosc(e) => format!("{path}: {}", crate::source::explain(e)),
        e => format!("{path}: {e}"),
    }
}

pub fn run(
    input: &str,
    output: &str,
    offset: u64,
    w: &Wanted,
    threads: usize,
    json: bool,
) -> Result<Summary, String> {
    let out_npy = output.ends_with(".npy");
    if is_npy(input) {
        if out_npy {
            return Err(format!("{input} and {output} are both .npy files: one side is a b2nd array"));
        }
        if w.fortran {
            return Err("--order goes with a .npy output".into());
        }
        to_b2nd(input, output, w, threads, json)
    } else if out_npy {
        if w.codec.is_some()
            || w.clevel.is_some()
            || w.filters.is_some()
            || w.chunks.is_some()
            || w.blocks.is_some()
            || w.sparse.is_some()
        {
            return Err(
                "--codec, --clevel, --filters, --chunks, --blocks and --sparse go with a b2nd output".into(),
            );
        }
        to_npy(input, output, offset, w, threads, json)
    } else {
        crate::repack::run(input, output, offset, w, threads, json).map(|mut s| {
            s.command = "convert";
            s
        })
    }
}

fn to_b2nd(input: &str, output: &str, w: &Wanted, threads: usize, json: bool) -> Result<Summary, String> {
    let t0 = Instant::now();
    let (h, _) = npy_io::read_header(Path::new(input)).map_err(|e| npy_error(input, e))?;
    let nd = h.shape.len();
    let (chunks, blocks) =
        crate::defaults::chunks_blocks(&h.shape, h.itemsize, w.chunks.as_deref(), w.blocks.as_deref())
            .map_err(|e| format!("{input}: {e}"))?;
    let mut cp = w.apply(&crate::defaults::cparams(&h.dtype), threads);
    cp.typesize = i32::try_from(h.itemsize).map_err(|_| format!("{input}: items of {} bytes", h.itemsize))?;
    let out = Output::new(output, w.force)?;
    let mut ctx = Context::new(&h.shape, &chunks, &blocks, cp).dtype(&h.dtype);
    ctx.dparams.nthreads = ctx.cparams.nthreads;
    ctx.storage = Storage {
        contiguous: !w.sparse.unwrap_or(false),
        urlpath: Some(out.tmp.clone()),
        durability: crate::write::durability(),
        ..Storage::default()
    };
    let mut bar = Bar::new("convert", json);
    let r = npy_io::import(Path::new(input), &ctx, &mut |d, t| bar.update(d, t));
    bar.finish();
    let a = match r {
        Ok(a) => a,
        Err(e) => {
            out.discard();
            return Err(npy_error(input, e));
        }
    };
    let cbytes = a.schunk().read_cached().cbytes();
    drop(a);
    out.commit()?;
    debug_assert_eq!(chunks.len(), nd);
    Ok(Summary {
        command: "convert",
        input: input.into(),
        output: output.into(),
        format: if w.sparse.unwrap_or(false) { "b2nd (sparse frame)".into() } else { "b2nd".into() },
        fields: vec![
            ("shape", h.shape.clone().into()),
            ("dtype", h.dtype.as_str().into()),
            ("chunks", chunks.into()),
            ("blocks", blocks.into()),
            ("codec", crate::source::codec_text(ctx.cparams.compcode).into()),
            ("clevel", ctx.cparams.clevel.into()),
            ("filters", filters_json(&ctx.cparams.filters, &ctx.cparams.filters_meta)),
            ("cbytes", cbytes.into()),
        ],
        nbytes: h.data_len().unwrap_or(0),
        out_bytes: disk_bytes(output),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn to_npy(
    input: &str,
    output: &str,
    offset: u64,
    w: &Wanted,
    threads: usize,
    json: bool,
) -> Result<Summary, String> {
    let t0 = Instant::now();
    let src = crate::source::open(input, offset)?;
    let mut sc = src.sc;
    sc.set_nthreads(threads as i16, threads as i16);
    let a =
        Array::from_schunk(SChunk::new(sc)).map_err(|e| format!("{input}: {}", crate::source::explain(e)))?;
    let out = Output::new(output, w.force)?;
    let mut bar = Bar::new("convert", json);
    let r = npy_io::export(&a, Path::new(&out.tmp), w.fortran, &mut |d, t| bar.update(d, t));
    bar.finish();
    if let Err(e) = r {
        out.discard();
        return Err(npy_error(input, e));
    }
    out.commit()?;
    let nbytes = a.nitems() as u64 * a.typesize() as u64;
    Ok(Summary {
        command: "convert",
        input: input.into(),
        output: output.into(),
        format: if w.fortran { "npy (Fortran order)".into() } else { "npy".into() },
        fields: vec![("shape", a.shape().to_vec().into()), ("dtype", a.dtype().into())],
        nbytes,
        out_bytes: disk_bytes(output),
        seconds: t0.elapsed().as_secs_f64(),
    })
}
