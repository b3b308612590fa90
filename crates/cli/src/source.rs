//! Opening a file for the tool: a contiguous frame (also one at an offset in a
//! larger file), a sparse frame directory, or a `.b2nd` array, read-only.

use b2nd::array::Meta;
use b2nd::chunk::header::{Header, Special};
use b2nd::frame::live::Entry;
use b2nd::schunk::SuperChunk;

pub struct Source {
    pub path: String,
    pub offset: u64,
    pub sc: SuperChunk,
}

/// What the error codes mean to someone looking at a file.
pub fn explain(e: b2nd::Error) -> String {
    use b2nd::Error as E;
    let what = match e {
        E::FileOpen => "cannot open the file",
        E::FileRead => "cannot read the file (or it ends too early)",
        E::ReadBuffer => "the data ends too early",
        E::InvalidHeader => "damaged frame: header, trailer or offsets index",
        E::FrameType => "not a frame of this kind (bad magic or frame type)",
        E::FrameSpecial => "damaged frame: an index entry names a special chunk beyond the data",
        E::Data => "damaged data",
        E::CodecSupport => "a codec this library cannot load",
        E::FilterPipeline => "a filter failed or is unknown",
        E::MetalayerNotFound => "no b2nd metalayer (not an n-dimensional array)",
        _ => "",
    };
    if what.is_empty() {
        format!("{e:?} ({})", e.code())
    } else {
        format!("{what} ({e:?}, {})", e.code())
    }
}

pub fn open(path: &str, offset: u64) -> Result<Source, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{path}: {e}"))?;
    if meta.is_dir() && offset != 0 {
        return Err(format!("{path}: a sparse frame (directory) has no offset"));
    }
    let sc = SuperChunk::open_offset(path, offset, b2nd::io::filesystem(), false)
        .map_err(|e| format!("{path}: {}", explain(e)))?;
    Ok(Source { path: path.to_string(), offset, sc })
}

impl Source {
    pub fn kind(&self) -> String {
        match self.sc.frame() {
            Some(f) if f.is_sparse() => "sparse frame (directory)".into(),
            _ if self.offset > 0 => format!("contiguous frame at offset {}", self.offset),
            _ => "contiguous frame".into(),
        }
    }

    /// The b2nd metalayer, if the frame has one (and it reads).
    pub fn b2nd(&self) -> Option<Result<Meta, b2nd::Error>> {
        self.sc.meta_get("b2nd").ok().map(Meta::deserialize)
    }
}

/// What one chunk is, as the index and its header say.
pub struct ChunkInfo {
    /// Where it is: bytes into the file (contiguous) or the chunk file's number (sparse).
    pub location: Option<i64>,
    pub cbytes: i64,
    pub nbytes: i64,
    pub header: Option<Header>,
    /// A special chunk: from the index (no bytes stored) or from its header.
    pub special: Special,
}

impl ChunkInfo {
    pub fn special_name(&self) -> &'static str {
        match self.special {
            Special::None if self.header.is_some_and(|h| h.memcpyed()) => "memcpy",
            Special::None => "",
            Special::Zero => "zeros",
            Special::Nan => "nan",
            Special::Value => "value",
            Special::Uninit => "uninit",
        }
    }
}

/// The chunk's index entry and header (read lazily: the header only).
pub fn chunk_info(src: &Source, i: usize) -> Result<ChunkInfo, b2nd::Error> {
    let frame = src.sc.frame().ok_or(b2nd::Error::InvalidParam)?;
    let entry = frame.entry(i)?;
    let nbytes = i64::from(src.sc.chunk_nbytes(i)?);
    match entry {
        Entry::Special(kind) => {
            Ok(ChunkInfo { location: None, cbytes: 0, nbytes, header: None, special: kind })
        }
        Entry::Stored(off) => {
            let lazy = src.sc.lazy_chunk(i)?;
            let h = Header::parse(&lazy)?;
            let location =
                if frame.is_sparse() { off } else { src.offset as i64 + frame.header_len() as i64 + off };
            Ok(ChunkInfo {
                location: Some(location),
                cbytes: i64::from(h.cbytes),
                nbytes,
                header: Some(h),
                special: h.special(),
            })
        }
    }
}

/// A filter pipeline as names (`shuffle, bytedelta(4)`), the slots in use only.
pub fn filters_text(filters: &[u8; 6], metas: &[u8; 6]) -> String {
    let v: Vec<String> = filters
        .iter()
        .zip(metas)
        .filter(|(f, _)| **f != 0)
        .map(|(&f, &m)| {
            let name = b2nd::filters::name(f).unwrap_or_else(|| format!("filter {f}"));
            if m != 0 {
                format!("{name}({m})")
            } else {
                name
            }
        })
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

pub fn codec_text(code: u8) -> String {
    b2nd::plugins::codec_name(code).unwrap_or_else(|| match code {
        // the run-time plugins c-blosc2 registers at start (codecs-registry.h)
        36 => "openhtj2k".into(),
        37 => "grok".into(),
        38 => "openzl".into(),
        39 => "j2k".into(),
        40 => "htj2k".into(),
        _ => format!("codec {code}"),
    })
}
