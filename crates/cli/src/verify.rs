//! `b2nd verify FILE`: checks the header, the index, the trailer (opening the
//! frame does), the metalayers, and decodes every chunk, on several threads.
//! Reports each problem with where it is; the exit code is 1 when there is one.

use crate::json::{self, Value};
use crate::source::{chunk_info, explain, Source};
use b2nd::array::Geometry;
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
    let (mut problems, chunk_bytes) = check_metalayers(src);
    let (mut found, extents, total) = decode_all(src, threads, chunk_bytes);
    found.extend(check_extents(src, extents));
    found.sort_by_key(|(i, _)| *i);
    problems.extend(found.into_iter().map(|(_, p)| p));
    if total != sc.nbytes() && problems.is_empty() {
        problems.push(Problem {
            place: "header".into(),
            what: format!("nbytes {} but the chunks hold {total}", sc.nbytes()),
        });
    }
    print_report(src, n, &problems, total, as_json);
    Ok(if problems.is_empty() { 0 } else { 1 })
}

/// The problems of the metalayers (a b2nd metalayer must read, and say how
/// many chunks of which size there are; vlmetalayers must decode), and the
/// size of a b2nd array's chunks.
fn check_metalayers(src: &Source) -> (Vec<Problem>, Option<usize>) {
    let sc = &src.sc;
    let mut problems = Vec::new();
    let mut chunk_bytes = None;
    if let Some(m) = src.b2nd() {
        match m.and_then(|m| Geometry::new(&m).map(|g| (m, g))) {
            Ok((_, g)) => {
                let ts = sc.typesize().max(1) as usize;
                if g.nchunks() != sc.nchunks() as i64 {
                    problems.push(Problem {
                        place: "b2nd metalayer".into(),
                        what: format!(
                            "the shape makes {} chunks, the frame has {}",
                            g.nchunks(),
                            sc.nchunks()
                        ),
                    });
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
    (problems, chunk_bytes)
}

/// Where a chunk is stored in the file, and its stored size.
type Extent = (i64, i64, usize);

/// Every chunk checked and decoded on `threads` threads: the problems found
/// (with the chunk they belong to), the chunks' extents in the file, and the
/// bytes they hold.
fn decode_all(
    src: &Source,
    threads: usize,
    chunk_bytes: Option<usize>,
) -> (Vec<(usize, Problem)>, Vec<Extent>, i64) {
    let n = src.sc.nchunks();
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
                    let (nbytes, at, problem) = check_chunk(src, i, chunk_bytes, &mut buf);
                    sum += nbytes;
                    if let Some(e) = at {
                        extents.lock().unwrap_or_else(|e| e.into_inner()).push(e);
                    }
                    if let Some(p) = problem {
                        found.lock().unwrap_or_else(|e| e.into_inner()).push((i, p));
                    }
                }
                *total.lock().unwrap_or_else(|e| e.into_inner()) += sum;
            });
        }
    });
    let found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    let extents = extents.into_inner().unwrap_or_else(|e| e.into_inner());
    (found, extents, total.into_inner().unwrap_or(0))
}

/// Chunk `i` checked (its header, its size against the frame's and the
/// array's chunk size, its parts) and decoded into `buf`: the bytes its
/// header says it holds, its extent in the file, and its problem if any.
fn check_chunk(
    src: &Source,
    i: usize,
    chunk_bytes: Option<usize>,
    buf: &mut Vec<u8>,
) -> (i64, Option<Extent>, Option<Problem>) {
    let sc = &src.sc;
    let c = match chunk_info(src, i) {
        Ok(c) => c,
        Err(e) => return (0, None, Some(Problem { place: format!("chunk {i}"), what: explain(e) })),
    };
    let extent = c.location.map(|at| (at, c.cbytes, i));
    let problem = |what: String| {
        let place = match c.location {
            Some(at) => format!("chunk {i} (at {at})"),
            None => format!("chunk {i}"),
        };
        Some(Problem { place, what })
    };
    let chunksize = i64::from(sc.chunksize());
    if chunksize > 0 && c.nbytes > chunksize {
        return (
            c.nbytes,
            extent,
            problem(format!("holds {} bytes, more than the chunk size {chunksize}", c.nbytes)),
        );
    }
    if let Some(b) = chunk_bytes.filter(|&b| c.nbytes != b as i64) {
        return (c.nbytes, extent, problem(format!("holds {} bytes, the b2nd chunk shape {b}", c.nbytes)));
    }
    // the chunk must hold together (a plain copy as long as it says, its
    // block starts there) before its size is allocated
    if let Err(e) = sc.chunk(i).and_then(|raw| ChunkView::open(&raw).map(|_| ())) {
        return (c.nbytes, extent, problem(format!("is damaged: {}", explain(e))));
    }
    buf.resize(c.nbytes.max(0) as usize, 0);
    let found = match sc.decompress_chunk(i, buf) {
        Ok(got) if got as i64 == c.nbytes => None,
        Ok(got) => problem(format!("decodes to {got} bytes, its header says {}", c.nbytes)),
        Err(e) => problem(format!("does not decode: {}", explain(e))),
    };
    (c.nbytes, extent, found)
}

/// In a contiguous frame the chunks lie in the chunks section and do not
/// overlap (chunks named by several index entries are one extent).
fn check_extents(src: &Source, mut ext: Vec<Extent>) -> Vec<(usize, Problem)> {
    let mut found = Vec::new();
    let Some(frame) = src.sc.frame().filter(|f| !f.is_sparse()) else { return found };
    ext.sort_unstable();
    ext.dedup_by_key(|e| (e.0, e.1));
    let end = src.offset as i64 + frame.header_len() as i64 + frame.cbytes();
    for (k, &(at, cb, i)) in ext.iter().enumerate() {
        if at + cb > end {
            found.push((
                i,
                Problem {
                    place: format!("chunk {i} (at {at})"),
                    what: format!("its {cb} bytes run past the chunks section (ends at {end})"),
                },
            ));
        } else if let Some(&(next_at, _, j)) = ext.get(k + 1) {
            if next_at < at + cb {
                found.push((
                    i,
                    Problem {
                        place: format!("chunk {i} (at {at})"),
                        what: format!("its {cb} bytes overlap chunk {j} (at {next_at})"),
                    },
                ));
            }
        }
    }
    found
}

fn print_report(src: &Source, n: usize, problems: &[Problem], total: i64, as_json: bool) {
    if as_json {
        let list = problems
            .iter()
            .map(|p| json::obj([("where", p.place.clone().into()), ("problem", p.what.clone().into())]))
            .collect();
        outln!(
            "{}",
            json::text(&json::obj([
                ("file", src.path.clone().into()),
                ("chunks", n.into()),
                ("ok", problems.is_empty().into()),
                ("problems", Value::Array(list))
            ]))
        );
        return;
    }
    for p in problems {
        outln!("{}: {}: {}", src.path, p.place, p.what);
    }
    if problems.is_empty() {
        outln!("{}: ok ({n} chunks, {} bytes decoded)", src.path, total);
    } else {
        outln!("{}: {} problem(s)", src.path, problems.len());
    }
}
