//! What `convert` and `repack` share: the parameters asked for on the command
//! line, an output written under a temporary name and renamed into place
//! only once it is whole, the progress bar and the summary.

use crate::json::{self, Value};
use b2nd::chunk::CParams;
use std::io::IsTerminal;

/// Parameters asked for; `None` keeps the input's (repack) or python-blosc2's
/// choice (convert).
#[derive(Debug, Default, Clone)]
pub struct Wanted {
    /// The codec and its meta (`zfp_rate:24`).
    pub codec: Option<(u8, u8)>,
    pub clevel: Option<u8>,
    pub filters: Option<([u8; 6], [u8; 6])>,
    pub chunks: Option<Vec<i64>>,
    pub blocks: Option<Vec<i64>>,
    /// Some(true): a sparse frame (directory); Some(false): a contiguous frame.
    pub sparse: Option<bool>,
    pub force: bool,
    pub fortran: bool,
    /// Let the tuner choose each chunk's codec, filters and level (`--tune`).
    pub tuner: Option<b2nd::chunk::Tuning>,
}

/// `NAME` or `NAME:META` (`zstd`, `zfp_rate:24`, `ndlz:4`).
pub fn parse_codec(s: &str) -> Result<(u8, u8), String> {
    let (name, meta) = s.split_once(':').unwrap_or((s, "0"));
    let name = name.to_ascii_lowercase();
    let id = b2nd::codecs::Codec::from_name(&name)
        .map(|c| c as u8)
        .or_else(|| b2nd::plugins::codec_id(&name))
        .ok_or_else(|| {
            format!(
                "unknown codec {name:?} (blosclz, lz4, lz4hc, zlib, zstd, ndlz, zfp_acc, zfp_prec, zfp_rate)"
            )
        })?;
    let meta = meta
        .parse::<i16>()
        .ok()
        .and_then(|m| u8::try_from(m).ok().or_else(|| i8::try_from(m).ok().map(|x| x as u8)))
        .ok_or_else(|| format!("codec meta {meta:?}: -128 to 255"))?;
    Ok((id, meta))
}

pub fn parse_clevel(s: &str) -> Result<u8, String> {
    s.parse::<u8>().ok().filter(|&c| c <= 9).ok_or_else(|| format!("--clevel {s:?}: 0 to 9"))
}

/// `none`, or filter names in pipeline order, each with an optional `:META`
/// (`shuffle`, `delta,bitshuffle`, `bytedelta:4`, `trunc_prec:10`).
pub fn parse_filters(s: &str) -> Result<([u8; 6], [u8; 6]), String> {
    let mut ids = [0u8; 6];
    let mut metas = [0u8; 6];
    if s == "none" || s.is_empty() {
        return Ok((ids, metas));
    }
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() > 6 {
        return Err(format!("--filters {s:?}: at most 6 filters"));
    }
    for (slot, p) in parts.iter().enumerate() {
        let (name, meta) = p.split_once(':').unwrap_or((p, "0"));
        let id = (1..=255u8)
            .find(|&id| b2nd::filters::name(id).is_some_and(|n| n.eq_ignore_ascii_case(name)))
            .or_else(|| name.parse::<u8>().ok())
            .ok_or_else(|| format!("unknown filter {name:?} (shuffle, bitshuffle, delta, trunc_prec, bytedelta, int_trunc, ndcell, ndmean)"))?;
        ids[slot] = id;
        metas[slot] = meta
            .parse::<i16>()
            .ok()
            .and_then(|m| u8::try_from(m).ok().or_else(|| i8::try_from(m).ok().map(|x| x as u8)))
            .ok_or_else(|| format!("filter meta {meta:?}: -128 to 255"))?;
    }
    Ok((ids, metas))
}

/// `100,200,50` (one length per dimension; for a super-chunk without a b2nd
/// metalayer, one number of items).
pub fn parse_shape(opt: &str, s: &str) -> Result<Vec<i64>, String> {
    s.split(',')
        .map(|x| x.trim().parse::<i64>().ok().filter(|&n| n > 0 && n <= i64::from(i32::MAX)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("{opt} {s:?}: positive lengths, comma-separated"))
}

impl Wanted {
    /// The compression parameters asked for, over `base`.
    pub fn apply(&self, base: &CParams, threads: usize) -> CParams {
        let mut cp = base.clone();
        if let Some((c, meta)) = self.codec {
            cp.compcode = c;
            cp.compcode_meta = meta;
        }
        if let Some(l) = self.clevel {
            cp.clevel = l;
        }
        if let Some((f, m)) = self.filters {
            cp.filters = f;
            cp.filters_meta = m;
        }
        cp.nthreads = threads.clamp(1, i16::MAX as usize) as i16;
        cp.owner = 0;
        cp.schunk = None;
        cp.tuner = self.tuner;
        cp
    }
}

/// What the output survives: `B2ND_DURABILITY` (`off`, `consistent`, the
/// default, or `durable`), as for programs on the C API.
pub fn durability() -> b2nd::io::Durability {
    b2nd::io::Durability::from_env().unwrap_or_default()
}

/// Where the output is written until it is whole: beside it, hidden.
pub struct Output {
    pub path: String,
    pub tmp: String,
}

impl Output {
    pub fn new(path: &str, force: bool) -> Result<Output, String> {
        let p = std::path::Path::new(path);
        if p.exists() && !force {
            return Err(format!("{path} exists (--force replaces it)"));
        }
        let name =
            p.file_name().and_then(|n| n.to_str()).ok_or_else(|| format!("{path}: not a file name"))?;
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(|d| d.to_path_buf())
            .unwrap_or_else(|| ".".into());
        if !dir.is_dir() {
            return Err(format!("{path}: no directory {}", dir.display()));
        }
        let tmp = dir.join(format!(".{name}.{}.partial", std::process::id()));
        let tmp = tmp.to_str().ok_or_else(|| format!("{path}: not a UTF-8 path"))?.to_string();
        let _ = b2nd::schunk::remove_urlpath(&tmp);
        Ok(Output { path: path.to_string(), tmp })
    }

    /// Put the whole output in place (replacing an older one). Unless
    /// `B2ND_DURABILITY=off`, what was written is synced before the rename
    /// and the directory after it: once this returns, a power loss leaves
    /// the new OUT, and before, the old one (never a renamed file whose
    /// pages were lost). On a failure the old OUT stays and the new one goes.
    pub fn commit(&self) -> Result<(), String> {
        let syncs = durability().syncs();
        if syncs {
            if let Err(e) = sync_tree(std::path::Path::new(&self.tmp)) {
                self.discard();
                return Err(format!("{}: cannot sync what was written: {e}", self.path));
            }
        }
        self.replace()?;
        if syncs {
            let dir = b2nd::io::parent_dir(&self.path);
            b2nd::io::sync_dir(dir)
                .map_err(|e| format!("{}: written, but its directory could not be synced: {e}", self.path))?;
        }
        Ok(())
    }

    /// Rename the output into place. A file over a file (or over nothing)
    /// is one rename; where either is a directory (a sparse frame), the old
    /// one is first moved aside, and back if the new one cannot take its
    /// place, so that OUT is never half removed.
    fn replace(&self) -> Result<(), String> {
        let (p, tmp) = (std::path::Path::new(&self.path), std::path::Path::new(&self.tmp));
        let old = p.symlink_metadata().ok();
        let old_is_dir = old.as_ref().is_some_and(|m| m.is_dir());
        if old.is_none() || (!old_is_dir && !tmp.is_dir()) {
            return std::fs::rename(tmp, p).map_err(|e| {
                self.discard();
                format!("{}: {}", self.path, replace_error(&e))
            });
        }
        let aside = format!("{}.old", self.tmp);
        if let Err(e) = std::fs::rename(p, &aside) {
            self.discard();
            return Err(format!("{}: cannot replace it: {}", self.path, replace_error(&e)));
        }
        if let Err(e) = std::fs::rename(tmp, p) {
            return Err(match std::fs::rename(&aside, p) {
                Ok(()) => {
                    self.discard();
                    format!("{}: {e}", self.path)
                }
                Err(_) => {
                    format!("{}: {e} (the old one is now {aside}, the new one {})", self.path, self.tmp)
                }
            });
        }
        let _ = if old_is_dir { std::fs::remove_dir_all(&aside) } else { std::fs::remove_file(&aside) };
        Ok(())
    }

    /// Remove what was written (after a failure).
    pub fn discard(&self) {
        let _ = b2nd::schunk::remove_urlpath(&self.tmp);
    }
}

/// Why a rename into place failed, in words a user can act on: Windows
/// refuses to replace a file that a program holds open (without the POSIX
/// rename semantics of recent NTFS).
fn replace_error(e: &std::io::Error) -> String {
    if cfg!(windows) && e.kind() == std::io::ErrorKind::PermissionDenied {
        format!("{e} (is it open in another program?)")
    } else {
        e.to_string()
    }
}

/// Sync a file, or every file in a directory (a sparse frame: its index
/// and chunk files) and the directory, through the core's OS layer (a sync
/// of a file opens it as the system needs; a directory's does nothing on
/// Windows).
fn sync_tree(path: &std::path::Path) -> std::io::Result<()> {
    if !path.is_dir() {
        return b2nd::os::sync_file(path);
    }
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            b2nd::os::sync_file(&entry.path())?;
        }
    }
    let dir = path.to_str().ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    b2nd::os::sync_dir(dir)
}

/// A progress bar on stderr (indicatif's), drawn only when stderr is a
/// terminal and no `--json` summary is asked for.
pub struct Bar(indicatif::ProgressBar);

impl Bar {
    pub fn new(label: &'static str, quiet: bool) -> Bar {
        if quiet || !std::io::stderr().is_terminal() {
            return Bar(indicatif::ProgressBar::hidden());
        }
        let style = indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {percent:>3}%  {binary_bytes_per_sec:>12}  {eta} left",
        )
        .expect("a valid template")
        .progress_chars("#>.");
        let bar = indicatif::ProgressBar::new(0).with_style(style).with_prefix(label);
        Bar(bar)
    }

    /// `done` of `total` bytes.
    pub fn update(&mut self, done: u64, total: u64) {
        self.0.set_length(total);
        self.0.set_position(done.min(total));
    }

    /// Take the bar off the terminal.
    pub fn finish(&mut self) {
        self.0.finish_and_clear();
    }
}

/// What was written, for `--json` and the closing line.
pub struct Summary {
    pub command: &'static str,
    pub input: String,
    pub output: String,
    pub format: String,
    pub fields: Vec<(&'static str, Value)>,
    pub nbytes: u64,
    pub out_bytes: u64,
    pub seconds: f64,
}

impl Summary {
    pub fn print(&self, as_json: bool) {
        if as_json {
            let mut fields: Vec<(&str, Value)> = vec![
                ("command", self.command.into()),
                ("input", self.input.as_str().into()),
                ("output", self.output.as_str().into()),
                ("format", self.format.as_str().into()),
            ];
            fields.extend(self.fields.iter().cloned());
            fields.push(("nbytes", self.nbytes.into()));
            fields.push(("output_bytes", self.out_bytes.into()));
            fields.push(("seconds", ((self.seconds * 1000.0).round() / 1000.0).into()));
            outln!("{}", json::text(&json::obj(fields)));
        }
    }
}

/// The bytes a file or a sparse frame directory takes.
pub fn disk_bytes(path: &str) -> u64 {
    let p = std::path::Path::new(path);
    if p.is_dir() {
        std::fs::read_dir(p)
            .map_or(0, |d| d.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
    } else {
        std::fs::metadata(p).map_or(0, |m| m.len())
    }
}

pub fn filters_json(f: &[u8; 6], m: &[u8; 6]) -> Value {
    crate::source::filters_text(f, m).into()
}
