//! `b2nd`: look inside Blosc2 files (contiguous frames, sparse frame
//! directories, frames at an offset in a larger file, `.b2nd` arrays), as
//! h5ls / h5dump / h5check do for HDF5. Built on the library's safe API.

mod chunks;
mod dtype;
mod dump;
mod info;
mod json;
mod source;
mod verify;

use std::process::ExitCode;

const HELP: &str = "\
b2nd: look inside Blosc2 files (frames, sparse frame directories, .b2nd arrays)

usage: b2nd COMMAND [OPTIONS] FILE

commands:
  info     the frame header, the b2nd metalayer (shape, chunks, blocks, dtype), the other
           metalayers, the vlmetalayers (decoded from msgpack, as JSON), sizes and ratio
  chunks   one row per chunk: offset (or chunk file), compressed and uncompressed size,
           ratio, codec, filters, block size, special kind; then the totals
  dump     the values of the array (or a slice of it) as NumPy prints them; more than
           1000 items are summarised
  verify   check the header, index, trailer and metalayers, and decode every chunk;
           prints each problem with its place, exits with 1 if there is one

options:
  --json             info, chunks, verify: one JSON object on stdout
  --slice SPEC       dump: start:stop or an index per dimension, comma-separated
                     (e.g. 0:10,5,: ; negative indexes count from the end)
  --offset N         the frame starts N bytes into FILE
  --threads N        verify: decoding threads (default: the machine's cores)
  -h, --help         this help;  --version  the version

examples:
  b2nd info data.b2nd
  b2nd chunks --json frames/sparse.b2frame
  b2nd dump --slice 0:3,:,-1 temperature.b2nd
  b2nd verify archive.b2frame && echo intact

exit status: 0 fine, 1 a problem found (verify, or unreadable chunks), 2 bad usage or a
file that cannot be opened.";

struct Args {
    command: String,
    file: String,
    json: bool,
    slice: Option<String>,
    offset: u64,
    threads: usize,
}

fn parse(args: &[String]) -> Result<Option<Args>, String> {
    let mut command = None;
    let mut file = None;
    let mut a = Args { command: String::new(), file: String::new(), json: false, slice: None, offset: 0, threads: 0 };
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
            s if s.starts_with("--slice=") => a.slice = Some(s["--slice=".len()..].to_string()),
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option {s}")),
            s if command.is_none() => command = Some(s.to_string()),
            s if file.is_none() => file = Some(s.to_string()),
            s => return Err(format!("one file at a time ({s})")),
        }
    }
    a.command = command.ok_or("no command")?;
    if !matches!(a.command.as_str(), "info" | "chunks" | "dump" | "verify") {
        return Err(format!("unknown command {:?}", a.command));
    }
    a.file = file.ok_or("no file")?;
    if a.slice.is_some() && a.command != "dump" {
        return Err("--slice goes with dump".into());
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
    let src = source::open(&a.file, a.offset).map_err(|e| (2, e))?;
    let r = match a.command.as_str() {
        "info" => info::run(&src, a.json),
        "chunks" => chunks::run(&src, a.json),
        "dump" => dump::run(&src, a.slice.as_deref()),
        _ => verify::run(&src, a.json, a.threads),
    };
    r.map_err(|e| (1, format!("{}: {e}", a.file)))
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
