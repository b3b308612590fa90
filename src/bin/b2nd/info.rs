//! `b2nd info FILE`: what the frame header, the metalayers and the vlmetalayers say.

use crate::json::{self, Json};
use crate::source::{codec_text, explain, filters_text, Source};

pub fn run(src: &Source, as_json: bool) -> Result<i32, String> {
    let frame = src.sc.frame().ok_or("not a frame")?;
    let h = frame.header().map_err(explain)?;
    let sc = &src.sc;
    let cp = sc.cparams();
    let nchunks = sc.nchunks();
    let (nbytes, cbytes) = (sc.nbytes(), sc.cbytes());
    let ratio = if cbytes > 0 { nbytes as f64 / cbytes as f64 } else { 0.0 };
    let codec = codec_text(cp.compcode);
    let filters = filters_text(&cp.filters, &cp.filters_meta);
    let chunksize = match h.chunksize {
        -1 => "none yet".to_string(),
        0 => "variable".to_string(),
        n => n.to_string(),
    };
    let b2nd = src.b2nd();
    let metalayers: Vec<(String, usize)> = sc.metalayers().iter().map(|m| (m.name.clone(), m.content.len())).collect();
    let vlmeta: Vec<(String, Result<Json, String>)> = sc
        .vlmetalayers()
        .iter()
        .map(|m| {
            let v = sc
                .vlmeta_get(&m.name)
                .map_err(explain)
                .map(|bytes| json::from_msgpack(&bytes).unwrap_or_else(|| Json::obj(vec![("hex", json::hex(&bytes).into())])));
            (m.name.clone(), v)
        })
        .collect();
    if as_json {
        let mut f: Vec<(&str, Json)> = vec![
            ("file", src.path.clone().into()),
            ("kind", src.kind().into()),
            ("frame_version", h.version().into()),
            ("frame_len", h.frame_len.into()),
            ("header_len", h.header_len.into()),
            ("typesize", cp.typesize.into()),
            ("codec", codec.clone().into()),
            ("compcode", cp.compcode.into()),
            ("compcode_meta", cp.compcode_meta.into()),
            ("clevel", cp.clevel.into()),
            ("filters", Json::Arr(cp.filters.iter().zip(&cp.filters_meta).filter(|(f, _)| **f != 0).map(|(&f, &m)| {
                Json::obj(vec![("name", b2nd::filters::name(f).unwrap_or_else(|| format!("filter {f}")).into()), ("id", f.into()), ("meta", m.into())])
            }).collect())),
            ("splitmode", h.splitmode().into()),
            ("use_dict", h.use_dict().into()),
            ("blocksize", h.blocksize.into()),
            ("chunksize", h.chunksize.into()),
            ("nchunks", nchunks.into()),
            ("vl_blocks", h.vl_blocks().into()),
            ("nbytes", nbytes.into()),
            ("cbytes", cbytes.into()),
            ("ratio", ratio.into()),
        ];
        match &b2nd {
            Some(Ok(m)) => f.push((
                "b2nd",
                Json::obj(vec![
                    ("shape", m.shape.clone().into()),
                    ("chunkshape", m.chunkshape.clone().into()),
                    ("blockshape", m.blockshape.clone().into()),
                    ("dtype", m.dtype.clone().into()),
                    ("dtype_format", m.dtype_format.into()),
                ]),
            )),
            Some(Err(e)) => f.push(("b2nd", Json::obj(vec![("error", explain(*e).into())]))),
            None => {}
        }
        f.push(("metalayers", Json::Arr(metalayers.iter().map(|(n, l)| Json::obj(vec![("name", n.clone().into()), ("bytes", (*l).into())])).collect())));
        f.push((
            "vlmetalayers",
            Json::Obj(vlmeta.into_iter().map(|(n, v)| (n, v.unwrap_or_else(|e| Json::obj(vec![("error", e.into())])))).collect()),
        ));
        println!("{}", Json::obj(f));
        return Ok(0);
    }
    println!("file:          {} ({})", src.path, src.kind());
    println!("frame:         format version {}, {} bytes, header {} bytes", h.version(), h.frame_len, h.header_len);
    println!("typesize:      {}", cp.typesize);
    let meta = if cp.compcode_meta != 0 { format!(", meta {}", cp.compcode_meta) } else { String::new() };
    println!("codec:         {codec} (level {}{meta})", cp.clevel);
    println!("filters:       {filters}");
    let blocksize = if h.blocksize == 0 { "automatic".to_string() } else { h.blocksize.to_string() };
    println!("chunk size:    {chunksize}, block size {blocksize}{}", if h.vl_blocks() { ", variable-length blocks" } else { "" });
    println!("chunks:        {nchunks}");
    println!("nbytes:        {nbytes} ({})", human(nbytes));
    println!("cbytes:        {cbytes} ({})", human(cbytes));
    println!("ratio:         {ratio:.2}x");
    match &b2nd {
        Some(Ok(m)) => {
            println!("b2nd:          shape {}, dtype {}", tuple(&m.shape), m.dtype);
            println!("               chunks {}, blocks {}", tuple(&m.chunkshape), tuple(&m.blockshape));
        }
        Some(Err(e)) => println!("b2nd:          unreadable metalayer: {}", explain(*e)),
        None => {}
    }
    if !metalayers.is_empty() {
        let v: Vec<String> = metalayers.iter().map(|(n, l)| format!("{n} ({l} bytes)")).collect();
        println!("metalayers:    {}", v.join(", "));
    }
    for (n, v) in vlmeta {
        match v {
            Ok(j) => println!("vlmeta {}: {j}", json::quote(&n)),
            Err(e) => println!("vlmeta {}: unreadable: {e}", json::quote(&n)),
        }
    }
    Ok(0)
}

pub fn tuple<T: std::fmt::Display>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    if items.len() == 1 { format!("({},)", items[0]) } else { format!("({})", items.join(", ")) }
}

pub fn human(n: i64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{n} B") } else { format!("{x:.1} {}", units[u]) }
}
