//! `b2nd tune FILE`: run the library's tuner over an array's data (a .npy
//! file or a Blosc2 file) and print its choice and figures beside the
//! defaults of c-blosc2 and python-blosc2 and the best of a full grid of
//! codecs, filters, levels, split modes and block sizes timed on the same
//! chunks (docs/TOOL.md, "tune").

use crate::json::{self, float, obj, Value};
use crate::source::explain;
use b2nd::chunk::tune::grid::{self, Point, Series};
use b2nd::chunk::tune::score::{Figures, MIN_RATIO};
use b2nd::chunk::tune::space::{self, Candidate};
use b2nd::chunk::{CParams, PerfMode, SplitMode, Tuning};
use b2nd::codecs::Codec;
use b2nd::schunk::SuperChunk;
use std::io::{Read, Seek, SeekFrom};

/// What `tune` is asked.
pub struct Asked {
    pub tradeoff: Option<f32>,
    pub perf_mode: Option<PerfMode>,
    /// MB/s (10^6 bytes).
    pub bandwidth: Option<f64>,
    pub chunk_bytes: usize,
    pub threads: usize,
    pub sample_chunks: usize,
    pub grid: bool,
    pub matrix: bool,
    pub repeats: u32,
    pub json: bool,
    /// Where the grid's figures are kept (read when there, else written).
    pub grid_file: Option<String>,
}

/// The data: chunks of a .npy file's items, or of a super-chunk.
enum Data {
    Npy { file: std::fs::File, start: u64, len: u64, chunk: usize },
    Frame(Box<SuperChunk>),
}

struct Input {
    data: Data,
    typesize: usize,
    nchunks: usize,
    kind: String,
}

impl Input {
    fn open(path: &str, offset: u64, chunk_bytes: usize) -> Result<Input, String> {
        if path.ends_with(".npy") {
            let (h, file) = b2nd::array::npy_io::read_header(std::path::Path::new(path))
                .map_err(|e| format!("{path}: {e}"))?;
            let len = h.data_len().map_err(|e| format!("{path}: {}", e.0))?;
            let typesize = h.itemsize.max(1);
            let chunk = (chunk_bytes.max(typesize) / typesize) * typesize;
            let nchunks = len.div_ceil(chunk as u64) as usize;
            let kind = format!("npy {} {:?}", h.dtype, h.shape);
            return Ok(Input {
                data: Data::Npy { file, start: h.data_offset, len, chunk },
                typesize,
                nchunks,
                kind,
            });
        }
        let src = crate::source::open(path, offset)?;
        let typesize = src.sc.typesize().max(1) as usize;
        let nchunks = src.sc.nchunks();
        let kind = src.kind();
        Ok(Input { data: Data::Frame(Box::new(src.sc)), typesize, nchunks, kind })
    }

    fn read(&mut self, i: usize, buf: &mut Vec<u8>) -> b2nd::Result<()> {
        match &mut self.data {
            Data::Npy { file, start, len, chunk } => {
                let at = i as u64 * *chunk as u64;
                let n = (*chunk as u64).min(len.saturating_sub(at)) as usize;
                buf.resize(n, 0);
                file.seek(SeekFrom::Start(*start + at)).map_err(|_| b2nd::Error::FileRead)?;
                file.read_exact(buf).map_err(|_| b2nd::Error::FileRead)
            }
            Data::Frame(sc) => {
                buf.resize(sc.chunk_nbytes(i)?.max(0) as usize, 0);
                let n = sc.decompress_chunk(i, buf)?;
                buf.truncate(n);
                Ok(())
            }
        }
    }
}

/// The two libraries' default parameters for items of `typesize` bytes.
fn defaults(typesize: usize, threads: usize) -> [(&'static str, CParams); 2] {
    let base = CParams { typesize: typesize as i32, nthreads: threads as i16, ..CParams::default() };
    let py = CParams { compcode: Codec::Zstd as u8, clevel: 5, splitmode: SplitMode::Auto, ..base.clone() };
    [("c-blosc2 default", base), ("python-blosc2 default", py)]
}

/// A row of results: one tuning.
struct Row {
    tuning: Tuning,
    run: grid::Run,
    choice: Option<Candidate>,
    /// The choice's figures on the sample chunks.
    ours: Figures,
    best: Option<Point>,
    /// The defaults' figures, timed with the choice's.
    defaults: Vec<(&'static str, Figures)>,
    /// The grid's fastest point that compresses, timed with the choice.
    fastest: Option<Point>,
    /// Where the run compressed the sample chunks with other parameters
    /// than its last choice: those, and their figures on them (each chunk
    /// with its own), timed with the choice.
    per_chunk: Option<(Vec<Option<Candidate>>, Figures)>,
}

pub fn run(path: &str, offset: u64, a: &Asked) -> Result<i32, String> {
    let mut input = Input::open(path, offset, a.chunk_bytes)?;
    if input.nchunks == 0 {
        return Err(format!("{path}: no chunks to tune"));
    }
    let threads = a.threads.max(1);
    let base = CParams { typesize: input.typesize as i32, nthreads: threads as i16, ..CParams::default() };
    let env =
        Tuning::default().with_env().map_err(|_| "BTUNE_TRADEOFF is not a number from 0 to 1".to_string())?;
    let one = Tuning {
        tradeoff: a.tradeoff.unwrap_or(env.tradeoff),
        perf_mode: a.perf_mode.unwrap_or(env.perf_mode),
        bandwidth: a.bandwidth.map_or(env.bandwidth, |b| (b * 1e6) as u64),
        ..env
    };
    let tunings: Vec<Tuning> = if a.matrix {
        [PerfMode::Comp, PerfMode::Decomp, PerfMode::Balanced]
            .iter()
            .flat_map(|&perf_mode| [0.0, 0.5, 1.0].map(|tradeoff| Tuning { tradeoff, perf_mode, ..one }))
            .collect()
    } else {
        vec![one]
    };
    // the sample chunks: evenly spread
    let k = a.sample_chunks.clamp(1, input.nchunks);
    let mut sample = Vec::with_capacity(k);
    let mut sample_at = Vec::with_capacity(k);
    for j in 0..k {
        let i = if k == 1 { input.nchunks / 2 } else { j * (input.nchunks - 1) / (k - 1) };
        sample_at.push(i as u64);
        let mut buf = Vec::new();
        input.read(i, &mut buf).map_err(|e| format!("{path}: chunk {i}: {}", explain(e)))?;
        sample.push(buf);
    }
    let sample: Vec<&[u8]> = sample.iter().map(|v| &v[..]).collect();
    let chunk_len = sample.iter().map(|c| c.len()).max().unwrap_or(0);
    let cached = match &a.grid_file {
        Some(f) if a.grid && std::path::Path::new(f).exists() => {
            Some(load_grid(f, input.typesize, chunk_len)?)
        }
        _ => None,
    };
    let points = if cached.is_some() {
        cached
    } else if a.grid {
        let cands = space::grid(input.typesize, chunk_len, true);
        let interactive = !a.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let pts = grid::grid(&sample, &base, &cands, a.repeats, |i, n| {
            if interactive && (i % 20 == 0 || i == n) {
                eprint!("\rgrid: {i}/{n}");
                if i == n {
                    eprintln!();
                }
            }
        })
        .map_err(|e| format!("{path}: the grid: {}", explain(e)))?;
        if let Some(f) = &a.grid_file {
            save_grid(f, &pts)?;
        }
        Some(pts)
    } else {
        None
    };
    // What a row compares is timed again, together: the choice, the grid's
    // five best points for the goal and the two defaults, in interleaved
    // rounds (the fastest of each counts), so that neither the grid's
    // luckiest single run nor a slow minute of the machine decides.
    let rounds = a.repeats.max(5);
    let default_params = defaults(input.typesize, threads);
    let mut rows = Vec::new();
    for tuning in tunings {
        let n = input.nchunks;
        let mut read = |i: usize, buf: &mut Vec<u8>| input.read(i, buf);
        let run = grid::run(Series { n, read: &mut read }, &base, &tuning, a.repeats)
            .map_err(|e| format!("{path}: the tuned run: {}", explain(e)))?;
        let choice = run.last;
        let params = |c: Option<Candidate>| c.map_or_else(|| base.clone(), |c| c.params(&base));
        let mut set: Vec<Vec<CParams>> = vec![vec![params(choice)]];
        set.extend(default_params.iter().map(|(_, p)| vec![p.clone()]));
        let top: Vec<Candidate> = points.as_deref().map_or_else(Vec::new, |p| top_points(p, &tuning, 5));
        set.extend(top.iter().map(|c| vec![c.params(&base)]));
        // (the end of the scale a tradeoff of 0 is judged against)
        let fastest = points.as_deref().and_then(|p| extremes(p).1).filter(|_| tuning.tradeoff == 0.0);
        set.extend(fastest.map(|p| vec![p.candidate.params(&base)]));
        // what the run did to the sample chunks themselves, where it differs
        // from its last choice (data that changes along the array)
        let used: Vec<Option<Candidate>> = sample_at
            .iter()
            .map(|&i| run.decisions.iter().find(|d| d.nchunk == i).and_then(|d| d.choice))
            .collect();
        let differs = used.iter().any(|c| *c != choice);
        if differs {
            set.push(used.iter().map(|c| params(*c)).collect());
        }
        let figs = measure_together(&sample, &set, rounds).map_err(|e| format!("{path}: {}", explain(e)))?;
        let fastest = fastest.map(|p| Point { figures: figs[3 + top.len()], ..p });
        let per_chunk = if differs { Some((used, figs[figs.len() - 1])) } else { None };
        let ours = figs[0];
        let defaults: Vec<(&str, Figures)> =
            default_params.iter().map(|(name, _)| *name).zip(figs[1..3].iter().copied()).collect();
        let mut contenders: Vec<Point> = top
            .iter()
            .zip(&figs[3..3 + top.len()])
            .map(|(c, f)| Point { candidate: *c, figures: *f })
            .collect();
        if let Some(c) = choice {
            contenders.push(Point { candidate: c, figures: ours });
        }
        let best = if points.is_some() { grid::best(&contenders, &tuning).copied() } else { None };
        rows.push(Row { tuning, run, choice, ours, best, defaults, fastest, per_chunk });
    }
    let grid_size = points.as_ref().map_or(0, |p| p.len());
    if a.json {
        print_json(path, &input, threads, k, grid_size, &rows, points.as_deref());
    } else {
        print_text(path, &input, threads, k, grid_size, &rows);
    }
    Ok(0)
}

/// The `k` best points of the grid for `tuning`.
fn top_points(points: &[Point], tuning: &Tuning, k: usize) -> Vec<Candidate> {
    let mut ranked: Vec<&Point> = points.iter().collect();
    ranked.sort_by(|a, b| {
        if a.figures.beats(&b.figures, tuning) {
            std::cmp::Ordering::Less
        } else if b.figures.beats(&a.figures, tuning) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    ranked.into_iter().take(k).map(|p| p.candidate).collect()
}

/// Each of `set` timed on `sample` in `rounds` interleaved rounds (one
/// measurement of each per round; one taking over a second is not timed
/// after the second round): the fastest times of each. An entry is the
/// parameters of every chunk, or of each chunk in turn.
fn measure_together(sample: &[&[u8]], set: &[Vec<CParams>], rounds: u32) -> b2nd::Result<Vec<Figures>> {
    let mut best: Vec<Option<Figures>> = vec![None; set.len()];
    for round in 0..rounds.max(1) {
        for (p, b) in set.iter().zip(best.iter_mut()) {
            if round >= 2 && b.is_some_and(|f| f.ctime + f.dtime > 1.0) {
                continue;
            }
            let f = match &p[..] {
                [all] => grid::measure(sample, all, 1)?,
                each => {
                    let mut f = Figures { nbytes: 0, cbytes: 0, ctime: 0.0, dtime: 0.0 };
                    for (chunk, p) in sample.iter().zip(each) {
                        f = f.add(&grid::measure(std::slice::from_ref(chunk), p, 1)?);
                    }
                    f
                }
            };
            *b = Some(match *b {
                None => f,
                Some(o) => Figures { ctime: o.ctime.min(f.ctime), dtime: o.dtime.min(f.dtime), ..o },
            });
        }
    }
    Ok(best.into_iter().map(|f| f.expect("measured at least once")).collect())
}

fn candidate_json(c: Option<&Candidate>) -> Value {
    match c {
        Some(c) => obj([
            ("codec", c.codec.name().into()),
            ("clevel", c.clevel.into()),
            ("filters", c.pipeline.name().into()),
            ("split", c.split.name().into()),
            ("blocksize", c.blocksize.into()),
        ]),
        None => Value::Null,
    }
}

fn figures_json(f: &Figures, t: &Tuning) -> Value {
    obj([
        ("nbytes", f.nbytes.into()),
        ("cbytes", f.cbytes.into()),
        ("ratio", float(f.ratio())),
        ("compress_mb_s", float(f.cspeed() / 1e6)),
        ("decompress_mb_s", float(f.dspeed() / 1e6)),
        ("score", float(f.score(t))),
    ])
}

/// The grid's highest ratio, and its fastest compressor among the points
/// that compress (a ratio of at least [`MIN_RATIO`]): the ends of the scale.
fn extremes(points: &[Point]) -> (Option<f64>, Option<Point>) {
    let max = points.iter().map(|p| p.figures.ratio()).reduce(f64::max);
    let fastest = points
        .iter()
        .filter(|p| p.figures.ratio() >= MIN_RATIO)
        .reduce(|a, b| if b.figures.cspeed() > a.figures.cspeed() { b } else { a })
        .copied();
    (max, fastest)
}

fn print_json(
    path: &str,
    input: &Input,
    threads: usize,
    k: usize,
    grid_size: usize,
    rows: &[Row],
    points: Option<&[Point]>,
) {
    let grid_max_ratio = points.and_then(|p| extremes(p).0);
    let rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            let t = &r.tuning;
            let score = r.ours.score(t);
            let defs: Vec<Value> = r
                .defaults
                .iter()
                .map(|(name, f)| {
                    obj([
                        ("name", (*name).into()),
                        ("figures", figures_json(f, t)),
                        ("ours_vs", float(score / f.score(t))),
                    ])
                })
                .collect();
            obj([
                ("tradeoff", float(f64::from(t.tradeoff))),
                ("perf_mode", t.perf_mode.name().into()),
                ("bandwidth", t.bandwidth.into()),
                ("choice", candidate_json(r.choice.as_ref())),
                ("figures", figures_json(&r.ours, t)),
                (
                    "grid_best",
                    r.best.map_or(Value::Null, |b| {
                        obj([
                            ("candidate", candidate_json(Some(&b.candidate))),
                            ("figures", figures_json(&b.figures, t)),
                            ("ours_vs", float(score / b.figures.score(t))),
                        ])
                    }),
                ),
                ("defaults", Value::Array(defs)),
                (
                    "per_chunk",
                    r.per_chunk.as_ref().map_or(Value::Null, |(used, f)| {
                        let pc = f.score(t);
                        obj([
                            (
                                "choices",
                                Value::Array(used.iter().map(|c| candidate_json(c.as_ref())).collect()),
                            ),
                            ("figures", figures_json(f, t)),
                            ("grid_best_vs", r.best.map_or(Value::Null, |b| float(pc / b.figures.score(t)))),
                            (
                                "defaults_vs",
                                Value::Array(
                                    r.defaults.iter().map(|(_, d)| float(pc / d.score(t))).collect(),
                                ),
                            ),
                        ])
                    }),
                ),
                ("grid_max_ratio", grid_max_ratio.map_or(Value::Null, float)),
                (
                    "grid_fastest_compressing",
                    r.fastest.map_or(Value::Null, |p| {
                        obj([
                            ("candidate", candidate_json(Some(&p.candidate))),
                            ("figures", figures_json(&p.figures, t)),
                        ])
                    }),
                ),
                ("chunks", r.run.totals.chunks.into()),
                ("explored_chunks", r.run.totals.explored.into()),
                ("trials", r.run.totals.trials.into()),
                ("trial_seconds", float(r.run.totals.trial_time.as_secs_f64())),
                ("run_seconds", float(r.run.seconds)),
                ("run_decompress_seconds", float(r.run.dseconds)),
                ("run_nbytes", r.run.decisions.iter().map(|d| d.figures.nbytes).sum::<u64>().into()),
                ("run_cbytes", r.run.cbytes.into()),
                ("fixed_seconds", float(r.run.fixed_seconds)),
                ("run_vs_fixed", float(r.run.seconds / r.run.fixed_seconds.max(1e-12))),
                (
                    "run_ratio",
                    float(
                        r.run.decisions.iter().map(|d| d.figures.nbytes).sum::<u64>() as f64
                            / r.run.cbytes.max(1) as f64,
                    ),
                ),
            ])
        })
        .collect();
    let v = obj([
        ("file", path.into()),
        ("data", input.kind.clone().into()),
        ("typesize", input.typesize.into()),
        ("nchunks", input.nchunks.into()),
        ("threads", threads.into()),
        ("sample_chunks", k.into()),
        ("grid_size", grid_size.into()),
        ("rows", Value::Array(rows)),
    ]);
    outln!("{}", json::text(&v));
}

fn print_text(path: &str, input: &Input, threads: usize, k: usize, grid_size: usize, rows: &[Row]) {
    outln!(
        "{path}: {}, typesize {}, {} chunks, {threads} thread(s)",
        input.kind,
        input.typesize,
        input.nchunks
    );
    outln!(
        "figures on {k} chunk(s) spread over the data{}",
        if grid_size > 0 { format!("; grid of {grid_size} candidates") } else { String::new() }
    );
    let line = |what: &str, c: Option<&Candidate>, f: &Figures, t: &Tuning, best: Option<f64>| {
        let desc = c.map_or_else(|| "-".to_string(), |c| c.describe());
        let rel = best.map_or_else(String::new, |b| format!("{:>8.3}", f.score(t) / b));
        outln!(
            "  {what:<22} {desc:<46} {:>8.2}x {:>9.1} {:>9.1} {rel}",
            f.ratio(),
            f.cspeed() / 1e6,
            f.dspeed() / 1e6
        );
    };
    for r in rows {
        let t = &r.tuning;
        outln!("");
        outln!(
            "tradeoff {:.2}, {}, bandwidth {} MB/s",
            t.tradeoff,
            t.perf_mode.name(),
            t.bandwidth / 1_000_000
        );
        outln!(
            "  {:<22} {:<46} {:>9} {:>9} {:>9} {:>8}",
            "",
            "codec level filters split block",
            "ratio",
            "comp MB/s",
            "dec. MB/s",
            if r.best.is_some() { "score/best" } else { "" }
        );
        let best = r.best.map(|b| b.figures.score(t));
        line("tuner's choice", r.choice.as_ref(), &r.ours, t, best);
        if let Some((_, f)) = &r.per_chunk {
            // (the sample chunks as the run compressed them, each with its own choice)
            line("the run's own chunks", None, f, t, best);
        }
        if let Some(b) = &r.best {
            line("grid's best", Some(&b.candidate), &b.figures, t, best);
        }
        for (name, f) in &r.defaults {
            line(name, None, f, t, best);
        }
        let tt = &r.run.totals;
        outln!(
            "  run: {} chunks, {} explored, {} trials ({:.1} ms); {:.3} s, {:.3} s with the choice fixed ({:.2}x)",
            tt.chunks,
            tt.explored,
            tt.trials,
            tt.trial_time.as_secs_f64() * 1e3,
            r.run.seconds,
            r.run.fixed_seconds,
            r.run.seconds / r.run.fixed_seconds.max(1e-12)
        );
    }
}

/// Keep the grid's figures: one line per candidate, in the grid's order.
fn save_grid(file: &str, points: &[Point]) -> Result<(), String> {
    let mut text = String::new();
    for p in points {
        let f = &p.figures;
        text +=
            &format!("{} {} {} {:e} {:e}\n", p.candidate.describe(), f.nbytes, f.cbytes, f.ctime, f.dtime);
    }
    std::fs::write(file, text).map_err(|e| format!("{file}: {e}"))
}

/// The figures [`save_grid`] kept, for the same grid.
fn load_grid(file: &str, typesize: usize, chunk_len: usize) -> Result<Vec<Point>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let cands = space::grid(typesize, chunk_len, true);
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() != cands.len() {
        return Err(format!(
            "{file}: not this data's grid ({} lines, {} candidates)",
            lines.len(),
            cands.len()
        ));
    }
    cands
        .iter()
        .zip(lines)
        .map(|(c, l)| {
            let desc = c.describe();
            let rest = l.strip_prefix(&desc).ok_or_else(|| format!("{file}: {l:?} is not {desc:?}"))?;
            let v: Vec<&str> = rest.split_whitespace().collect();
            let bad = || format!("{file}: {l:?}");
            let [n, cb, ct, dt] = v[..] else { return Err(bad()) };
            let figures = Figures {
                nbytes: n.parse().map_err(|_| bad())?,
                cbytes: cb.parse().map_err(|_| bad())?,
                ctime: ct.parse().map_err(|_| bad())?,
                dtime: dt.parse().map_err(|_| bad())?,
            };
            Ok(Point { candidate: *c, figures })
        })
        .collect()
}
