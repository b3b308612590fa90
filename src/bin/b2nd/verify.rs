//! `b2nd verify FILE`: checks the header, the index, the trailer (opening the
//! frame does), the metalayers, and decodes every chunk, on several threads.
//! Reports each problem with where it is; the exit code is 1 when there is one.

use crate::json::Json;
use crate::source::{chunk_info, explain, Source};
use b2nd::b2nd::Geometry;
use b2nd::chunk::view::ChunkView;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

struct Problem {
    place: String,
    what: String,
}

pub fn run(src: &Source, as_json: bool, threads: usize) -> Result<i32, String> {
    let sc = &src.sc;
    let n = sc.nchunks();
    let mut problems = Vec::new();
    let chunksize = i64::from(sc.chunksize());
    // b2nd arrays: the metalayer must read, and say how many chunks of which size there are
    let mut chunk_bytes = None;
    if let Some(m) = src.b2nd() {
        match m.and_then(|m| Geometry::new(&m).map(|g| (m, g))) {
            Ok((_, g)) => {
                let ts = sc.typesize().max(1) as usize;
                if g.nchunks() != n as i64 {
                    problems.push(Problem { place: "b2nd metalayer".into(), what: format!("the shape makes {} chunks, the frame has {n}", g.nchunks()) });
                }
                chunk_bytes = g.chunk_bytes(ts).ok();
            }
            Err(e) => problems.push(Problem { place: "b2nd metalayer".into(), what: explain(e) }),
        }
    }
    for m in sc.vlmetalayers() {
        if let Err(e) = sc.vlmeta_get(&m.name) {
            problems.push(Problem { place: format!("vlmetalayer {:?}", m.name), what: explain(e) });
        }
    }
    // every chunk: its header, then the whole decoding
    let next = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    let extents = Mutex::new(Vec::new());
    let total = Mutex::new(0i64);
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, 64) {
            s.spawn(|| {
                let mut buf = Vec::new();
                let mut sum = 0i64;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let report = |what: String, at: Option<i64>| {
                        let place = match at {
                            Some(at) => format!("chunk {i} (at {at})"),
                            None => format!("chunk {i}"),
                        };
                        found.lock().unwrap_or_else(|e| e.into_inner()).push((i, Problem { place, what }));
                    };
                    let c = match chunk_info(src, i) {
                        Ok(c) => c,
                        Err(e) => {
                            report(explain(e), None);
                            continue;
                        }
                    };
                    sum += c.nbytes;
                    if let Some(at) = c.location {
                        extents.lock().unwrap_or_else(|e| e.into_inner()).push((at, c.cbytes, i));
                    }
                    if chunksize > 0 && c.nbytes > chunksize {
                        report(format!("holds {} bytes, more than the chunk size {chunksize}", c.nbytes), c.location);
                        continue;
                    }
                    if let Some(b) = chunk_bytes {
                        if c.nbytes != b as i64 {
                            report(format!("holds {} bytes, the b2nd chunk shape {b}", c.nbytes), c.location);
                            continue;
                        }
                    }
                    // the chunk must hold together (a plain copy as long as it says,
                    // its block starts there) before its size is allocated
                    match sc.chunk(i).and_then(|raw| ChunkView::open(&raw).map(|_| ())) {
                        Ok(()) => {}
                        Err(e) => {
                            report(format!("is damaged: {}", explain(e)), c.location);
                            continue;
                        }
                    }
                    buf.resize(c.nbytes.max(0) as usize, 0);
                    match sc.decompress_chunk(i, &mut buf) {
                        Ok(got) if got as i64 == c.nbytes => {}
                        Ok(got) => report(format!("decodes to {got} bytes, its header says {}", c.nbytes), c.location),
                        Err(e) => report(format!("does not decode: {}", explain(e)), c.location),
                    }
                }
                *total.lock().unwrap_or_else(|e| e.into_inner()) += sum;
            });
        }
    });
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    // In a contiguous frame the chunks lie in the chunks section and do not overlap
    // (chunks named by several index entries are one extent).
    if let Some(frame) = sc.frame().filter(|f| !f.is_sparse()) {
        let mut ext = extents.into_inner().unwrap_or_else(|e| e.into_inner());
        ext.sort_unstable();
        ext.dedup_by_key(|e| (e.0, e.1));
        let end = src.offset as i64 + frame.header_len() as i64 + frame.cbytes();
        for (k, &(at, cb, i)) in ext.iter().enumerate() {
            if at + cb > end {
                found.push((i, Problem { place: format!("chunk {i} (at {at})"), what: format!("its {cb} bytes run past the chunks section (ends at {end})") }));
            } else if let Some(&(next_at, _, j)) = ext.get(k + 1) {
                if next_at < at + cb {
                    found.push((i, Problem { place: format!("chunk {i} (at {at})"), what: format!("its {cb} bytes overlap chunk {j} (at {next_at})") }));
                }
            }
        }
    }
    found.sort_by_key(|(i, _)| *i);
    problems.extend(found.into_iter().map(|(_, p)| p));
    let total = total.into_inner().unwrap_or(0);
    if total != sc.nbytes() && problems.is_empty() {
        problems.push(Problem { place: "header".into(), what: format!("nbytes {} but the chunks hold {total}", sc.nbytes()) });
    }
    if as_json {
        let list = problems.iter().map(|p| Json::obj(vec![("where", p.place.clone().into()), ("problem", p.what.clone().into())])).collect();
        println!("{}", Json::obj(vec![("file", src.path.clone().into()), ("chunks", n.into()), ("ok", problems.is_empty().into()), ("problems", Json::Arr(list))]));
    } else {
        for p in &problems {
            println!("{}: {}: {}", src.path, p.place, p.what);
        }
        if problems.is_empty() {
            println!("{}: ok ({n} chunks, {} bytes decoded)", src.path, total);
        } else {
            println!("{}: {} problem(s)", src.path, problems.len());
        }
    }
    Ok(if problems.is_empty() { 0 } else { 1 })
}
