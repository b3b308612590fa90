//! `b2nd`: look inside Blosc2 files (contiguous frames, sparse frame
//! directories, frames at an offset in a larger file, `.b2nd` arrays), as
//! h5ls / h5dump / h5check do for HDF5, convert arrays to and from NumPy's
//! `.npy` and repack them with other parameters, as h5repack does. Built on
//! the library's safe API; the command line is clap's, `--json` serde_json's
//! and the progress bar indicatif's.

#[macro_use]
mod out;
mod args;
mod chunks;
mod convert;
mod defaults;
mod dtype;
mod dump;
mod info;
mod json;
mod repack;
mod source;
mod tune;
mod verify;
mod write;

use args::{Cli, Command, Input, WriteArgs};
use clap::Parser;
use std::process::ExitCode;

/// The threads asked for, or the machine's cores.
fn threads(n: usize) -> usize {
    if n > 0 {
        n
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The signature of `convert::run` and `repack::run`.
type WriteJob = fn(&str, &str, u64, &write::Wanted, usize, bool) -> Result<write::Summary, String>;

/// convert or repack: IN to OUT.
fn write(a: &WriteArgs, job: WriteJob) -> Result<i32, (i32, String)> {
    if !std::path::Path::new(&a.input).exists() {
        return Err((2, format!("{}: no such file or directory", a.input)));
    }
    let summary =
        job(&a.input, &a.output, a.offset, &a.wanted(), threads(a.threads), a.json).map_err(|e| (1, e))?;
    summary.print(a.json);
    Ok(0)
}

/// info, chunks, dump or verify: `job` on one file.
fn inspect(
    input: &Input,
    job: impl FnOnce(&source::Source) -> Result<i32, String>,
) -> Result<i32, (i32, String)> {
    let src = source::open(&input.file, input.offset).map_err(|e| (2, e))?;
    job(&src).map_err(|e| (1, format!("{}: {e}", input.file)))
}

fn run(cli: Cli) -> Result<i32, (i32, String)> {
    match &cli.command {
        Command::Info(a) => inspect(&a.input, |src| info::run(src, a.json)),
        Command::Chunks(a) => inspect(&a.input, |src| chunks::run(src, a.json)),
        Command::Dump(a) => inspect(&a.input, |src| dump::run(src, a.slice.as_deref())),
        Command::Verify(a) => inspect(&a.input, |src| verify::run(src, a.json, threads(a.threads))),
        Command::Convert(a) => write(a, convert::run),
        Command::Repack(a) => write(a, repack::run),
        Command::Tune(a) => {
            let asked = tune::Asked {
                tradeoff: a.tradeoff,
                perf_mode: a.perf_mode,
                bandwidth: a.bandwidth,
                chunk_bytes: a.chunk_bytes,
                threads: a.threads,
                sample_chunks: a.sample_chunks,
                grid: !a.no_grid,
                matrix: a.matrix,
                repeats: a.repeats,
                json: a.json,
                grid_file: a.grid_file.clone(),
            };
            if !std::path::Path::new(&a.input.file).exists() {
                return Err((2, format!("{}: no such file or directory", a.input.file)));
            }
            tune::run(&a.input.file, a.input.offset, &asked).map_err(|e| (1, e))
        }
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(*shell, &mut <Cli as clap::CommandFactory>::command(), "b2nd", &mut text);
            out::bytes(&text);
            Ok(0)
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version go to stdout (a closed pipe is no error there);
        // usage errors to stderr, with the tool's prefix and status 2.
        Err(e) if !e.use_stderr() => {
            let mut text = e.render().to_string();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            out::bytes(text.as_bytes());
            return ExitCode::SUCCESS;
        }
        // No command at all: the help, on stderr.
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{}", e.render());
            return ExitCode::from(2);
        }
        Err(e) => {
            let text = e.render().to_string();
            eprint!("b2nd: {}", text.strip_prefix("error: ").unwrap_or(&text));
            return ExitCode::from(2);
        }
    };
    // No panic message reaches the user: a panic is reported as an internal error.
    std::panic::set_hook(Box::new(|_| {}));
    match std::panic::catch_unwind(|| run(cli)) {
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
