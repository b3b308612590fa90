//! `b2nd`: look inside Blosc2 files (contiguous frames, sparse frame
//! directories, frames at an offset in a larger file, `.b2nd` arrays), as
//! h5ls / h5dump / h5check do for HDF5, convert arrays to and from NumPy's
//! `.npy` and repack them with other parameters, as h5repack does. Built on
//! the library's safe API.

mod chunks;
mod convert;
mod defaults;
mod dtype;
mod dump;
mod info;
mod json;
mod repack;
mod source;
mod verify;
mod write;

use std::process::ExitCode;

const HELP: &str = "\
b2nd: look inside Blosc2 files (frames, sparse frame directories, .b2nd arrays),
convert arrays to and from NumPy .npy files, repack them with other parameters

usage: b2nd COMMAND [OPTIONS] FILE
       b2nd convert|repack [OPTIONS] IN OUT

commands:
  info     the frame header, the b2nd metalayer (shape, chunks, blocks, dtype), the other
           metalayers, the vlmetalayers (decoded from msgpack, as JSON), sizes and ratio
  chunks   one row per chunk: offset (or chunk file), compressed and uncompressed size,
           ratio, codec, filters, block size, special kind; then the totals
  dump     the values of the array (or a slice of it) as NumPy prints them; more than
           1000 items are summarised
  verify   check the header, index, trailer and metalayers, and decode every chunk;
           prints each problem with its place, exits with 1 if there is one
  convert  IN.npy OUT (a b2nd array), or IN (a b2nd array) OUT.npy; the defaults
           for a new array are python-blosc2's (zstd level 5, shuffle, its chunk
           and block shapes)
  repack   IN OUT: the array or super-chunk again with the parameters asked for,
           keeping the others, the metalayers and the vlmetalayers; chunks whose
           layout and compression stay are copied without decompressing them

options:
  --json             info, chunks, verify, convert, repack: one JSON object on stdout
  --slice SPEC       dump: start:stop or an index per dimension, comma-separated
                     (e.g. 0:10,5,: ; negative indexes count from the end)
  --offset N         the frame starts N bytes into FILE
  --threads N        verify, convert, repack: threads (default: the machine's cores)
  --codec NAME[:M]   blosclz, lz4, lz4hc, zlib, zstd, ndlz, zfp_acc, zfp_prec, zfp_rate,
                     with the codec's meta M (zfp_rate:24, ndlz:4)
  --clevel N         0 to 9
  --filters LIST     none, or names in pipeline order with an optional :META
                     (shuffle | bitshuffle | delta,shuffle | bytedelta:4 | trunc_prec:10)
  --chunks A,B,..    the chunk shape (a super-chunk without b2nd metalayer: items)
  --blocks A,B,..    the block shape (a super-chunk without b2nd metalayer: items)
  --sparse           write a sparse frame (a directory); --contiguous: one file
  --order C|F        convert to .npy: C (default) or Fortran order
  --force            replace OUT if it exists
  -h, --help         this help;  --version  the version

examples:
  b2nd info data.b2nd
  b2nd chunks --json frames/sparse.b2frame
  b2nd dump --slice 0:3,:,-1 temperature.b2nd
  b2nd verify archive.b2frame && echo intact
  b2nd convert data.npy data.b2nd
  b2nd convert --order F data.b2nd data.npy
  b2nd repack --codec lz4 --clevel 9 --chunks 100,100 data.b2nd data-lz4.b2nd

convert and repack write OUT under a temporary name and rename it into place when it is
whole and synced (B2ND_DURABILITY=off: not synced); a progress bar goes to stderr when it is a terminal; --json prints a summary.

exit status: 0 fine, 1 a problem found (verify, or unreadable chunks, or a failed
conversion), 2 bad usage or a file that cannot be opened.";

struct Args {
    command: String,
    files: Vec<String>,
    json: bool,
    slice: Option<String>,
    offset: u64,
    threads: usize,
    wanted: write::Wanted,
}

fn parse(args: &[String]) -> Result<Option<Args>, String> {
    let mut command = None;
    let mut a = Args { command: String::new(), files: Vec::new(), json: false, slice: None, offset: 0, threads: 0, wanted: write::Wanted::default() };
    let mut writes = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" | "help" => return Ok(None),
            "--version" => {
                println!("b2nd {} (Blosc2 formats; c-blosc2 3.3 API)", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            "--json" => a.json = true,
            "--slice" => a.slice = Some(value("--slice")?),
            "--offset" => a.offset = value("--offset")?.parse().map_err(|_| "--offset needs a number of bytes".to_string())?,
            "--threads" => a.threads = value("--threads")?.parse().map_err(|_| "--threads needs a number".to_string())?,
            "--codec" => (a.wanted.codec, writes) = (Some(write::parse_codec(&value("--codec")?)?), true),
            "--clevel" => (a.wanted.clevel, writes) = (Some(write::parse_clevel(&value("--clevel")?)?), true),
            "--filters" => (a.wanted.filters, writes) = (Some(write::parse_filters(&value("--filters")?)?), true),
            "--chunks" => (a.wanted.chunks, writes) = (Some(write::parse_shape("--chunks", &value("--chunks")?)?), true),
            "--blocks" => (a.wanted.blocks, writes) = (Some(write::parse_shape("--blocks", &value("--blocks")?)?), true),
            "--sparse" => (a.wanted.sparse, writes) = (Some(true), true),
            "--contiguous" => (a.wanted.sparse, writes) = (Some(false), true),
            "--force" => (a.wanted.force, writes) = (true, true),
            "--order" => {
                a.wanted.fortran = match value("--order")?.as_str() {
                    "C" | "c" => false,
                    "F" | "f" => true,
                    o => return Err(format!("--order {o:?}: C or F")),
                };
                writes = true;
            }
            s if s.starts_with("--slice=") => a.slice = Some(s["--slice=".len()..].to_string()),
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option {s}")),
            s if command.is_none() => command = Some(s.to_string()),
            s => a.files.push(s.to_string()),
        }
    }
    a.command = command.ok_or("no command")?;
    let want = match a.command.as_str() {
        "info" | "chunks" | "dump" | "verify" => 1,
        "convert" | "repack" => 2,
        c => return Err(format!("unknown command {c:?}")),
    };
    match (a.files.len(), want) {
        (0, _) => return Err("no file".into()),
        (1, 2) => return Err(format!("{} needs IN and OUT", a.command)),
        (n, 1) if n > 1 => return Err(format!("one file at a time ({})", a.files[1])),
        (n, 2) if n > 2 => return Err(format!("{} takes IN and OUT ({} too)", a.command, a.files[2])),
        _ => {}
    }
    if a.slice.is_some() && a.command != "dump" {
        return Err("--slice goes with dump".into());
    }
    if writes && want == 1 {
        return Err(format!("--codec, --clevel, --filters, --chunks, --blocks, --sparse, --order and --force go with convert and repack, not {}", a.command));
    }
    if a.threads == 0 {
        a.threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    }
    Ok(Some(a))
}

fn run(args: &[String]) -> Result<i32, (i32, String)> {
    let Some(a) = parse(args).map_err(|e| (2, format!("{e} (b2nd --help shows the usage)")))? else {
        println!("{HELP}");
        return Ok(0);
    };
    if a.command == "convert" || a.command == "repack" {
        let (inp, out) = (&a.files[0], &a.files[1]);
        if !std::path::Path::new(inp).exists() {
            return Err((2, format!("{inp}: no such file or directory")));
        }
        let r = if a.command == "convert" {
            convert::run(inp, out, a.offset, &a.wanted, a.threads, a.json)
        } else {
            repack::run(inp, out, a.offset, &a.wanted, a.threads, a.json)
        };
        let summary = r.map_err(|e| (1, e))?;
        summary.print(a.json);
        return Ok(0);
    }
    let file = &a.files[0];
    let src = source::open(file, a.offset).map_err(|e| (2, e))?;
    let r = match a.command.as_str() {
        "info" => info::run(&src, a.json),
        "chunks" => chunks::run(&src, a.json),
        "dump" => dump::run(&src, a.slice.as_deref()),
        _ => verify::run(&src, a.json, a.threads),
    };
    r.map_err(|e| (1, format!("{file}: {e}")))
}

fn main() -> ExitCode {
    // No panic message reaches the user: a panic is reported as an internal error.
    std::panic::set_hook(Box::new(|_| {}));
    let args: Vec<String> = std::env::args().skip(1).collect();
    match std::panic::catch_unwind(|| run(&args)) {
        Ok(Ok(code)) => ExitCode::from(code as u8),
        Ok(Err((code, msg))) => {
            eprintln!("b2nd: {msg}");
            ExitCode::from(code as u8)
        }
        Err(_) => {
            eprintln!("b2nd: internal error (please report it with the file)");
            ExitCode::from(3)
        }
    }
}
