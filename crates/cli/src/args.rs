//! The command line, as clap parses it: one subcommand per job, each with its
//! own `--help`; values are checked here (codec and filter names, levels,
//! shapes), so that a mistyped one is a usage error (status 2).

use crate::write::{self, Wanted};
use clap::{Args, Parser, Subcommand};

const AFTER_HELP: &str = "\
examples:
  b2nd info data.b2nd
  b2nd chunks --json frames/sparse.b2frame
  b2nd dump --slice 0:3,:,-1 temperature.b2nd
  b2nd verify archive.b2frame && echo intact
  b2nd convert data.npy data.b2nd
  b2nd convert --order F data.b2nd data.npy
  b2nd repack --codec lz4 --clevel 9 --chunks 100,100 data.b2nd data-lz4.b2nd
  b2nd tune --tradeoff 0.8 data.npy
  b2nd repack --tune --tradeoff 1 data.b2nd data-small.b2nd

convert and repack write OUT under a temporary name and rename it into place when it is
whole and synced (B2ND_DURABILITY=off: not synced); a progress bar goes to stderr when it
is a terminal; --json prints a summary.

exit status: 0 fine, 1 a problem found (verify, or unreadable chunks, or a failed
conversion), 2 bad usage or a file that cannot be opened.";

/// Look inside Blosc2 files (frames, sparse frame directories, .b2nd arrays),
/// convert arrays to and from NumPy .npy files, repack them with other parameters.
#[derive(Debug, Parser)]
#[command(name = "b2nd", bin_name = "b2nd", version = concat!(env!("CARGO_PKG_VERSION"), " (Blosc2 formats; c-blosc2 3.3 API)"))]
#[command(after_help = AFTER_HELP, disable_help_subcommand = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The frame header, the b2nd metalayer (shape, chunks, blocks, dtype), the other
    /// metalayers, the vlmetalayers (decoded from msgpack, as JSON), sizes and ratio
    Info(InfoArgs),
    /// One row per chunk: offset (or chunk file), compressed and uncompressed size,
    /// ratio, codec, filters, block size, special kind; then the totals
    Chunks(InfoArgs),
    /// The values of the array (or a slice of it) as NumPy prints them; more than
    /// 1000 items are summarised
    Dump(DumpArgs),
    /// Check the header, index, trailer and metalayers, and decode every chunk; print
    /// each problem with its place, exit with 1 if there is one
    Verify(VerifyArgs),
    /// IN.npy OUT (a b2nd array), or IN (a b2nd array) OUT.npy; the defaults for a new
    /// array are python-blosc2's (zstd level 5, shuffle, its chunk and block shapes)
    Convert(WriteArgs),
    /// IN OUT: the array or super-chunk again with the parameters asked for, keeping the
    /// others, the metalayers and the vlmetalayers; chunks whose layout and compression
    /// stay are copied without decompressing them
    Repack(WriteArgs),
    /// Run the tuner over FILE's data (.npy, or a Blosc2 file) and print its choice beside
    /// the defaults and the best of a full grid timed on the same chunks
    Tune(TuneArgs),
    /// A completion script for SHELL on stdout (bash: b2nd completions bash >
    /// /etc/bash_completion.d/b2nd)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// The file to look into.
#[derive(Debug, Args)]
pub struct Input {
    /// A frame, a sparse frame directory or a .b2nd array
    pub file: String,
    /// The frame starts N bytes into FILE
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub input: Input,
    /// One JSON object on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    #[command(flatten)]
    pub input: Input,
    /// start:stop or an index per dimension, comma-separated (e.g. 0:10,5,: ; negative
    /// indexes count from the end)
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub slice: Option<String>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub input: Input,
    /// One JSON object on stdout
    #[arg(long)]
    pub json: bool,
    /// Threads (default: the machine's cores)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
}

/// convert and repack.
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The file to read
    #[arg(value_name = "IN")]
    pub input: String,
    /// The file (or, with --sparse, the directory) to write
    #[arg(value_name = "OUT")]
    pub output: String,
    /// A summary as one JSON object on stdout
    #[arg(long)]
    pub json: bool,
    /// The frame starts N bytes into IN
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,
    /// Threads (default: the machine's cores)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// blosclz, lz4, lz4hc, zlib, zstd, ndlz, zfp_acc, zfp_prec, zfp_rate, with the codec's
    /// meta M (zfp_rate:24, ndlz:4)
    #[arg(long, value_name = "NAME[:M]", value_parser = write::parse_codec)]
    pub codec: Option<(u8, u8)>,
    /// 0 to 9
    #[arg(long, value_name = "N", value_parser = write::parse_clevel)]
    pub clevel: Option<u8>,
    /// none, or names in pipeline order with an optional :META (shuffle | bitshuffle |
    /// delta,shuffle | bytedelta:4 | trunc_prec:10)
    #[arg(long, value_name = "LIST", value_parser = write::parse_filters)]
    pub filters: Option<([u8; 6], [u8; 6])>,
    /// The chunk shape (a super-chunk without b2nd metalayer: items). (The full
    /// path of Vec keeps clap from reading it as a repeated option.)
    #[arg(long, value_name = "A,B,..", value_parser = |s: &str| write::parse_shape("--chunks", s))]
    pub chunks: Option<::std::vec::Vec<i64>>,
    /// The block shape (a super-chunk without b2nd metalayer: items)
    #[arg(long, value_name = "A,B,..", value_parser = |s: &str| write::parse_shape("--blocks", s))]
    pub blocks: Option<::std::vec::Vec<i64>>,
    /// Write a sparse frame (a directory)
    #[arg(long, overrides_with = "contiguous")]
    pub sparse: bool,
    /// Write a contiguous frame (one file)
    #[arg(long, overrides_with = "sparse")]
    pub contiguous: bool,
    /// convert to .npy: C (the default) or Fortran order
    #[arg(long, value_name = "C|F", value_parser = ["C", "c", "F", "f"])]
    pub order: Option<String>,
    /// Replace OUT if it exists
    #[arg(long)]
    pub force: bool,
    /// Let the tuner choose each chunk's codec, filters, level and split mode (its goal:
    /// --tradeoff and --perf-mode, else BTUNE_TRADEOFF and BTUNE_PERF_MODE, else 0.5 and
    /// COMP); --codec, --clevel and --filters are then only the fallback
    #[arg(long)]
    pub tune: bool,
    /// With --tune: 0 for speed, 1 for ratio
    #[arg(long, value_name = "T", value_parser = parse_tradeoff, requires = "tune")]
    pub tradeoff: Option<f32>,
    /// With --tune: the time that counts, COMP, DECOMP or BALANCED
    #[arg(long, value_name = "MODE", value_parser = parse_perf_mode, requires = "tune")]
    pub perf_mode: Option<b2nd::chunk::PerfMode>,
}

/// A tradeoff from 0 to 1.
pub fn parse_tradeoff(s: &str) -> Result<f32, String> {
    b2nd::params::parse_tradeoff(s).ok_or_else(|| format!("{s:?}: a number from 0 (speed) to 1 (ratio)"))
}

/// COMP, DECOMP or BALANCED (any case).
pub fn parse_perf_mode(s: &str) -> Result<b2nd::chunk::PerfMode, String> {
    b2nd::chunk::PerfMode::from_name(&s.to_ascii_uppercase())
        .ok_or_else(|| format!("{s:?}: COMP, DECOMP or BALANCED"))
}

/// The tuner's settings for --tune, --tradeoff and --perf-mode over the environment's.
fn tuning(
    tune: bool,
    tradeoff: Option<f32>,
    perf_mode: Option<b2nd::chunk::PerfMode>,
) -> Option<b2nd::chunk::Tuning> {
    if !tune {
        return None;
    }
    let env = b2nd::chunk::Tuning::default().with_env().unwrap_or_default();
    Some(b2nd::chunk::Tuning {
        tradeoff: tradeoff.unwrap_or(env.tradeoff),
        perf_mode: perf_mode.unwrap_or(env.perf_mode),
        ..env
    })
}

/// `tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    #[command(flatten)]
    pub input: Input,
    /// 0 for speed, 1 for ratio (default: BTUNE_TRADEOFF, else 0.5)
    #[arg(long, value_name = "T", value_parser = parse_tradeoff)]
    pub tradeoff: Option<f32>,
    /// The time that counts: COMP, DECOMP or BALANCED (default: BTUNE_PERF_MODE, else COMP)
    #[arg(long, value_name = "MODE", value_parser = parse_perf_mode)]
    pub perf_mode: Option<b2nd::chunk::PerfMode>,
    /// The bandwidth the compressed bytes travel at, in MB/s (default 21475, Btune's 20 GiB/s)
    #[arg(long, value_name = "MB/S")]
    pub bandwidth: Option<f64>,
    /// Every perf mode with tradeoffs 0, 0.5 and 1 (the grid is timed once)
    #[arg(long)]
    pub matrix: bool,
    /// A .npy file's items in chunks of N bytes
    #[arg(long, value_name = "N", default_value_t = 4 << 20)]
    pub chunk_bytes: usize,
    /// Threads
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// How many chunks, spread over the data, the grid and the defaults are timed on
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub sample_chunks: usize,
    /// Leave out the full grid (it takes minutes)
    #[arg(long)]
    pub no_grid: bool,
    /// Time everything N times, keeping the fastest
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeats: u32,
    /// Keep the grid's figures in FILE: read them from it when it exists, else write them
    #[arg(long, value_name = "FILE")]
    pub grid_file: Option<String>,
    /// One JSON object on stdout
    #[arg(long)]
    pub json: bool,
}

impl WriteArgs {
    /// The parameters asked for.
    pub fn wanted(&self) -> Wanted {
        Wanted {
            codec: self.codec,
            clevel: self.clevel,
            filters: self.filters,
            chunks: self.chunks.clone(),
            blocks: self.blocks.clone(),
            sparse: if self.sparse {
                Some(true)
            } else if self.contiguous {
                Some(false)
            } else {
                None
            },
            force: self.force,
            fortran: self.order.as_deref().is_some_and(|o| o.eq_ignore_ascii_case("f")),
            tuner: tuning(self.tune, self.tradeoff, self.perf_mode),
        }
    }
}
