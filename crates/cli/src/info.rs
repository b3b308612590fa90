//! `b2nd info FILE`: what the frame header, the metalayers and the vlmetalayers say.

use crate::json::{self, Value};
use crate::source::{codec_text, explain, filters_text, Source};
use b2nd::array::Meta;
use b2nd::chunk::CParams;
use b2nd::frame::FrameHeader;

/// What `info` reports of a frame.
struct Facts<'a> {
    src: &'a Source,
    h: FrameHeader,
    cp: CParams,
    nbytes: i64,
    cbytes: i64,
    ratio: f64,
    b2nd: Option<Result<Meta, b2nd::Error>>,
    metalayers: Vec<(String, usize)>,
    vlmeta: Vec<(String, Result<Value, String>)>,
}

pub fn run(src: &Source, as_json: bool) -> Result<i32, String> {
    let frame = src.sc.frame().ok_or("not a frame")?;
    let sc = &src.sc;
    let (nbytes, cbytes) = (sc.nbytes(), sc.cbytes());
    let vlmeta = sc
        .vlmetalayers()
        .iter()
        .map(|m| {
            let v = sc.vlmeta_get(&m.name).map_err(explain).map(|bytes| {
                json::from_msgpack(&bytes).unwrap_or_else(|| json::obj([("hex", json::hex(&bytes).into())]))
            });
            (m.name.clone(), v)
        })
        .collect();
    let facts = Facts {
        src,
        h: frame.header().map_err(explain)?,
        cp: sc.cparams().clone(),
        nbytes,
        cbytes,
        ratio: if cbytes > 0 { nbytes as f64 / cbytes as f64 } else { 0.0 },
        b2nd: src.b2nd(),
        metalayers: sc.metalayers().iter().map(|m| (m.name.clone(), m.content.len())).collect(),
        vlmeta,
    };
    if as_json {
        print_json(facts);
    } else {
        print_text(facts);
    }
    Ok(0)
}

fn print_json(x: Facts) {
    let (h, cp) = (&x.h, &x.cp);
    let filters = cp.filters.iter().zip(&cp.filters_meta).filter(|(f, _)| **f != 0).map(|(&f, &m)| {
        json::obj([
            ("name", b2nd::filters::name(f).unwrap_or_else(|| format!("filter {f}")).into()),
            ("id", f.into()),
            ("meta", m.into()),
        ])
    });
    let mut f: Vec<(&str, Value)> = vec![
        ("file", x.src.path.clone().into()),
        ("kind", x.src.kind().into()),
        ("frame_version", h.version().into()),
        ("frame_len", h.frame_len.into()),
        ("header_len", h.header_len.into()),
        ("typesize", cp.typesize.into()),
        ("codec", codec_text(cp.compcode).into()),
        ("compcode", cp.compcode.into()),
        ("compcode_meta", cp.compcode_meta.into()),
        ("clevel", cp.clevel.into()),
        ("filters", Value::Array(filters.collect())),
        ("splitmode", h.splitmode().into()),
        ("use_dict", h.use_dict().into()),
        ("blocksize", h.blocksize.into()),
        ("chunksize", h.chunksize.into()),
        ("nchunks", x.src.sc.nchunks().into()),
        ("vl_blocks", h.vl_blocks().into()),
        ("nbytes", x.nbytes.into()),
        ("cbytes", x.cbytes.into()),
        ("ratio", x.ratio.into()),
    ];
    match &x.b2nd {
        Some(Ok(m)) => f.push((
            "b2nd",
            json::obj([
                ("shape", m.shape.clone().into()),
                ("chunkshape", m.chunkshape.clone().into()),
                ("blockshape", m.blockshape.clone().into()),
                ("dtype", m.dtype.clone().into()),
                ("dtype_format", m.dtype_format.into()),
            ]),
        )),
        Some(Err(e)) => f.push(("b2nd", json::obj([("error", explain(*e).into())]))),
        None => {}
    }
    f.push((
        "metalayers",
        Value::Array(
            x.metalayers
                .iter()
                .map(|(n, l)| json::obj([("name", n.clone().into()), ("bytes", (*l).into())]))
                .collect(),
        ),
    ));
    f.push((
        "vlmetalayers",
        Value::Object(
            x.vlmeta
                .into_iter()
                .map(|(n, v)| (n, v.unwrap_or_else(|e| json::obj([("error", e.into())]))))
                .collect(),
        ),
    ));
    outln!("{}", json::text(&json::obj(f)));
}

fn print_text(x: Facts) {
    let (h, cp) = (&x.h, &x.cp);
    let chunksize = match h.chunksize {
        -1 => "none yet".to_string(),
        0 => "variable".to_string(),
        n => n.to_string(),
    };
    outln!("file:          {} ({})", x.src.path, x.src.kind());
    outln!(
        "frame:         format version {}, {} bytes, header {} bytes",
        h.version(),
        h.frame_len,
        h.header_len
    );
    outln!("typesize:      {}", cp.typesize);
    let meta = if cp.compcode_meta != 0 { format!(", meta {}", cp.compcode_meta) } else { String::new() };
    outln!("codec:         {} (level {}{meta})", codec_text(cp.compcode), cp.clevel);
    outln!("filters:       {}", filters_text(&cp.filters, &cp.filters_meta));
    let blocksize = if h.blocksize == 0 { "automatic".to_string() } else { h.blocksize.to_string() };
    outln!(
        "chunk size:    {chunksize}, block size {blocksize}{}",
        if h.vl_blocks() { ", variable-length blocks" } else { "" }
    );
    outln!("chunks:        {}", x.src.sc.nchunks());
    outln!("nbytes:        {} ({})", x.nbytes, human(x.nbytes));
    outln!("cbytes:        {} ({})", x.cbytes, human(x.cbytes));
    outln!("ratio:         {:.2}x", x.ratio);
    match &x.b2nd {
        Some(Ok(m)) => {
            outln!("b2nd:          shape {}, dtype {}", tuple(&m.shape), m.dtype);
            outln!("               chunks {}, blocks {}", tuple(&m.chunkshape), tuple(&m.blockshape));
        }
        Some(Err(e)) => outln!("b2nd:          unreadable metalayer: {}", explain(*e)),
        None => {}
    }
    if !x.metalayers.is_empty() {
        let v: Vec<String> = x.metalayers.iter().map(|(n, l)| format!("{n} ({l} bytes)")).collect();
        outln!("metalayers:    {}", v.join(", "));
    }
    for (n, v) in x.vlmeta {
        match v {
            Ok(j) => outln!("vlmeta {}: {}", json::quote(&n), json::text(&j)),
            Err(e) => outln!("vlmeta {}: unreadable: {e}", json::quote(&n)),
        }
    }
}

pub fn tuple<T: std::fmt::Display>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

pub fn human(n: i64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{x:.1} {}", units[u])
    }
}
