//! Super-chunks: a sequence of chunks with shared parameters, metalayers and
//! variable-length metalayers, kept in memory (a list of chunks, or a
//! contiguous frame) or on disk (a contiguous frame file, possibly at an
//! offset inside a larger file, or a sparse frame directory).
//!
//! Reads take `&self` and are safe from several threads at once (every call
//! decompresses with its own state and reads files at explicit positions).

mod lock;
mod shared;

pub use lock::{env_requests_locking, lock_path};
pub use shared::{Reading, SChunk};

use crate::chunk::header::{Header, Special, EXTENDED_HEADER_LENGTH};
use crate::chunk::view::{ChunkView, LazySource};
use crate::chunk::{CParams, Compressor, DParams, Decompressor, Postfilter, Prefilter};
use crate::error::{Error, Result};
use crate::frame::live::{Frame, Opened};
use crate::frame::writer::Info;
use crate::frame::Metalayer;
use crate::io::{filesystem, Backend, Mode};
use lock::FrameLock;
use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Most metalayers a super-chunk holds.
pub const MAX_METALAYERS: usize = 16;
/// Most variable-length metalayers a super-chunk holds.
pub const MAX_VLMETALAYERS: usize = 8 * 1024;
/// Longest (vl)metalayer name.
pub const METALAYER_NAME_MAXLEN: usize = 31;
/// Room a compressed chunk may need beyond its data.
const MAX_OVERHEAD: usize = 32;

/// Where and how a super-chunk is stored.
#[derive(Clone)]
pub struct Storage {
    /// A contiguous frame (in memory or in one file) rather than separate chunks.
    pub contiguous: bool,
    /// On-disk location; `None` keeps the super-chunk in memory.
    pub urlpath: Option<String>,
    /// How files are reached.
    pub backend: Arc<dyn Backend>,
    /// Lock the on-disk frame for every operation (c-blosc2's `locking`).
    pub locking: bool,
}

impl Default for Storage {
    fn default() -> Self {
        Storage { contiguous: false, urlpath: None, backend: filesystem(), locking: false }
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("contiguous", &self.contiguous)
            .field("urlpath", &self.urlpath)
            .field("backend", &self.backend.id())
            .field("locking", &self.locking)
            .finish()
    }
}

enum Store {
    /// Chunks in memory, each exactly its cbytes long.
    Memory(Vec<Vec<u8>>),
    Frame(Frame),
}

/// A super-chunk.
pub struct SuperChunk {
    info: Info,
    dparams: DParams,
    store: Store,
    storage: Storage,
    /// Σ cbytes of the chunks (in-memory super-chunks).
    mem_cbytes: i64,
    lock: Option<Arc<Mutex<FrameLock>>>,
    /// Bumped whenever the (vl)metalayers change.
    change_tick: i64,
    /// The compressor of `append_buffer` and `set_slice`, kept from call to
    /// call like c-blosc2's `schunk->cctx` (its block size carries over).
    comp: Option<Compressor>,
    prefilter: Option<Arc<dyn Prefilter>>,
    postfilter: Option<Arc<dyn Postfilter>>,
}

/// A chunk checked before it goes into a super-chunk.
struct Incoming<'a> {
    bytes: &'a [u8],
    nbytes: i32,
    kind: Special,
    vl_blocks: bool,
}

fn inspect(chunk: &[u8]) -> Result<Incoming<'_>> {
    let (_, cbytes, _) = Header::sizes(chunk)?;
    if cbytes < 16 || cbytes as usize > chunk.len() {
        return Err(Error::ReadBuffer);
    }
    let bytes = &chunk[..cbytes as usize];
    let view = ChunkView::open(bytes)?;
    if view.lazy.is_some() {
        return Err(Error::InvalidParam);
    }
    let h = view.header;
    Ok(Incoming { bytes, nbytes: h.nbytes, kind: h.special(), vl_blocks: h.vlblocks() })
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > METALAYER_NAME_MAXLEN {
        Err(Error::InvalidParam)
    } else {
        Ok(())
    }
}

fn is_dir(path: &str) -> bool {
    Path::new(path).is_dir()
}

impl SuperChunk {
    // ----------------------------------------------------------------- creating

    /// A new, empty super-chunk. Fails (`FileOpen`) when something exists at the urlpath.
    pub fn new(cparams: CParams, dparams: DParams, mut storage: Storage) -> Result<SuperChunk> {
        storage.urlpath = storage.urlpath.map(|u| local_path(&u).to_string());
        let mut info = Info::new(cparams);
        info.tdecomp = dparams.nthreads;
        let store = match (&storage.urlpath, storage.contiguous) {
            (None, false) => Store::Memory(Vec::new()),
            (None, true) => Store::Frame(Frame::new_memory(&info)?),
            (Some(path), contiguous) => {
                // Existing data is never overwritten (c-blosc2 3.3 refuses too).
                if std::fs::symlink_metadata(path).is_ok() {
                    return Err(Error::FileOpen);
                }
                if contiguous {
                    let s = storage.backend.open(path, Mode::Create)?;
                    Store::Frame(Frame::new_stream(s, 0, &info)?)
                } else {
                    Store::Frame(Frame::new_sparse(path, storage.backend.clone(), &info)?)
                }
            }
        };
        let mut sc = SuperChunk { info, dparams, store, storage, mem_cbytes: 0, lock: None, change_tick: 0, comp: None, prefilter: None, postfilter: None };
        sc.init_lock()?;
        Ok(sc)
    }

    fn init_lock(&mut self) -> Result<()> {
        if let (Some(path), true) = (&self.storage.urlpath, self.storage.backend.is_filesystem()) {
            if self.storage.locking || env_requests_locking() {
                self.storage.locking = true;
                self.lock = Some(Arc::new(Mutex::new(FrameLock::open(path, !self.storage.contiguous)?)));
            }
        }
        Ok(())
    }

    /// A super-chunk over an opened frame; thread counts start at 1 (the
    /// header's are informational and not trusted), see [`SuperChunk::set_nthreads`].
    fn from_opened(o: Opened, storage: Storage) -> SuperChunk {
        let mut info = o.info;
        info.cparams.nthreads = 1;
        let dparams = DParams { nthreads: 1, typesize: info.cparams.typesize };
        SuperChunk { info, dparams, store: Store::Frame(o.frame), storage, mem_cbytes: 0, lock: None, change_tick: 0, comp: None, prefilter: None, postfilter: None }
    }

    /// Open the frame at `urlpath` (a contiguous frame file or a sparse frame directory).
    pub fn open(urlpath: &str, backend: Arc<dyn Backend>, writable: bool) -> Result<SuperChunk> {
        Self::open_with(urlpath, 0, backend, writable, false)
    }

    /// Open the contiguous frame that starts `offset` bytes into the file at `urlpath`.
    pub fn open_offset(urlpath: &str, offset: u64, backend: Arc<dyn Backend>, writable: bool) -> Result<SuperChunk> {
        Self::open_with(urlpath, offset, backend, writable, false)
    }

    /// Open with explicit locking (or `BLOSC_LOCKING`).
    pub fn open_with(urlpath: &str, offset: u64, backend: Arc<dyn Backend>, writable: bool, locking: bool) -> Result<SuperChunk> {
        let urlpath = local_path(urlpath);
        let sparse = is_dir(urlpath);
        let mut storage = Storage { contiguous: !sparse, urlpath: Some(urlpath.to_string()), backend: backend.clone(), locking };
        let mut lock = None;
        if backend.is_filesystem() && (locking || env_requests_locking()) {
            storage.locking = true;
            let mut l = FrameLock::open(urlpath, sparse)?;
            l.acquire(false)?;
            lock = Some(l);
        }
        let opened = if sparse {
            if offset != 0 {
                return Err(Error::InvalidParam);
            }
            Frame::open_sparse(urlpath, backend, writable)
        } else {
            let mode = if writable { Mode::Update } else { Mode::Read };
            let s = match backend.open(urlpath, mode) {
                Ok(s) => s,
                // A read-only file still opens for reading.
                Err(_) if writable => backend.open(urlpath, Mode::Read)?,
                Err(e) => return Err(e),
            };
            let writable = writable && backend.open(urlpath, Mode::Update).is_ok();
            Frame::open_stream(s, offset, writable)
        };
        if let Some(l) = lock.as_mut() {
            l.release()?;
        }
        let mut sc = Self::from_opened(opened?, storage);
        sc.lock = lock.map(|l| Arc::new(Mutex::new(l)));
        Ok(sc)
    }

    /// A super-chunk over an in-memory contiguous frame (which it now owns).
    pub fn from_cframe(frame: Vec<u8>) -> Result<SuperChunk> {
        let o = Frame::from_vec(frame)?;
        Ok(Self::from_opened(o, Storage { contiguous: true, ..Storage::default() }))
    }

    /// A super-chunk over an in-memory contiguous frame owned elsewhere (copied on the first change).
    pub fn from_shared_cframe(frame: Arc<dyn AsRef<[u8]> + Send + Sync>) -> Result<SuperChunk> {
        let o = Frame::from_shared(frame)?;
        Ok(Self::from_opened(o, Storage { contiguous: true, ..Storage::default() }))
    }

    /// A copy of this super-chunk in `storage`: every chunk again, in order,
    /// with the metalayers and vlmetalayers (unreferenced bytes are dropped).
    pub fn copy_to(&self, storage: Storage) -> Result<SuperChunk> {
        self.copy_with(storage, None)
    }

    /// [`SuperChunk::copy_to`] with other compression parameters (as c-blosc2's
    /// `blosc2_schunk_copy` with `storage->cparams`): chunks are recompressed
    /// when the parameters differ from this super-chunk's, else copied as they are.
    /// A block size of 0 takes this super-chunk's.
    pub fn copy_with(&self, storage: Storage, cparams: Option<CParams>) -> Result<SuperChunk> {
        let src = self.context_cparams();
        let given = cparams.is_some();
        let mut cp = cparams.unwrap_or_else(|| src.clone());
        if cp.blocksize == 0 {
            cp.blocksize = src.blocksize;
        }
        let same = self.prefilter.is_none()
            && self.postfilter.is_none()
            && cp.typesize == src.typesize
            && cp.clevel == src.clevel
            && cp.compcode == src.compcode
            && cp.use_dict == src.use_dict
            && cp.blocksize == src.blocksize
            && cp.filters == src.filters
            && cp.filters_meta == src.filters_meta;
        // c-blosc2 records the copy's compression threads as given, 0 when not given.
        let tcomp = if given { cp.nthreads } else { 0 };
        let mut new = SuperChunk::new(cp, self.dparams.clone(), storage)?;
        new.info.tcomp = tcomp;
        for m in &self.info.metalayers {
            new.meta_add(&m.name, &m.content)?;
        }
        new.info.chunksize = self.info.chunksize;
        if same || self.info.vl_blocks {
            for i in 0..self.nchunks() {
                let c = self.chunk(i)?;
                new.append_chunk(&c)?;
            }
        } else {
            let mut buf = Vec::new();
            for i in 0..self.nchunks() {
                buf.resize(self.chunk_nbytes(i)? as usize, 0);
                self.decompress_chunk(i, &mut buf)?;
                new.append_buffer(&buf)?;
            }
        }
        // vlmetalayers are copied as c-blosc2 copies them: decompressed and
        // compressed again with the default parameters.
        for m in &self.info.vlmetalayers {
            let content = self.vlmeta_get(&m.name)?;
            new.vlmeta_add(&m.name, &content, None)?;
        }
        Ok(new)
    }

    /// The chunks copied into an in-memory (non-frame) super-chunk, as
    /// c-blosc2's `from_buffer` with copy does: special chunks become 32-byte
    /// chunks, and the blocksize is the chunks' common one (0 if they differ).
    pub fn copy_to_memory(&self) -> Result<SuperChunk> {
        let mut info = self.info.clone();
        info.nbytes = 0;
        info.chunksize = -1;
        info.vl_blocks = false;
        let mut chunks = Vec::with_capacity(self.nchunks());
        let mut blocksize = None;
        let mut mem_cbytes = 0i64;
        for i in 0..self.nchunks() {
            let c = self.chunk(i)?.into_owned();
            let h = Header::parse(&c)?;
            blocksize = match blocksize {
                None => Some(h.blocksize),
                Some(b) if b == h.blocksize => Some(b),
                Some(_) => Some(0),
            };
            mem_cbytes += c.len() as i64;
            chunks.push(c);
        }
        info.nbytes = self.info.nbytes;
        info.chunksize = self.info.chunksize;
        info.vl_blocks = self.info.vl_blocks;
        info.cparams.blocksize = blocksize.unwrap_or(self.info.cparams.blocksize);
        Ok(SuperChunk {
            info,
            dparams: self.dparams.clone(),
            store: Store::Memory(chunks),
            storage: Storage::default(),
            mem_cbytes,
            lock: None,
            change_tick: 0,
            comp: None,
            prefilter: None,
            postfilter: None,
        })
    }

    // ----------------------------------------------------------------- accessors

    pub fn nchunks(&self) -> usize {
        match &self.store {
            Store::Memory(c) => c.len(),
            Store::Frame(f) => f.nchunks(),
        }
    }

    pub fn nbytes(&self) -> i64 {
        self.info.nbytes
    }

    /// Compressed bytes: Σ chunk sizes in memory; the frame header's cbytes for frames.
    pub fn cbytes(&self) -> i64 {
        match &self.store {
            Store::Memory(_) => self.mem_cbytes,
            Store::Frame(f) => f.cbytes(),
        }
    }

    /// Size of every chunk but the last; 0 when sizes vary, -1 before the first chunk.
    pub fn chunksize(&self) -> i32 {
        self.info.chunksize
    }

    /// The super-chunk's parameters (those its frame header records).
    pub fn cparams(&self) -> &CParams {
        &self.info.cparams
    }

    /// The parameters the super-chunk's compressor holds now: those of
    /// [`SuperChunk::cparams`], with the block size the last compression chose
    /// (what c-blosc2's `blosc2_schunk_get_cparams` reports).
    pub fn context_cparams(&self) -> CParams {
        match &self.comp {
            Some(c) => c.params().clone(),
            None => self.info.cparams.clone(),
        }
    }

    fn compressor(&mut self) -> Result<&mut Compressor> {
        if self.comp.is_none() {
            let mut c = Compressor::sticky(self.info.cparams.clone())?;
            c.set_prefilter(self.prefilter.clone());
            self.comp = Some(c);
        }
        self.comp.as_mut().ok_or(Error::Failure)
    }

    /// Run `prefilter` on every block of the buffers this super-chunk compresses.
    pub fn set_prefilter(&mut self, prefilter: Option<Arc<dyn Prefilter>>) {
        if let Some(c) = self.comp.as_mut() {
            c.set_prefilter(prefilter.clone());
        }
        self.prefilter = prefilter;
    }

    /// Run `postfilter` on every block this super-chunk decompresses.
    pub fn set_postfilter(&mut self, postfilter: Option<Arc<dyn Postfilter>>) {
        self.postfilter = postfilter;
    }

    pub fn dparams(&self) -> &DParams {
        &self.dparams
    }

    pub fn typesize(&self) -> i32 {
        self.info.cparams.typesize
    }

    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    pub fn info(&self) -> &Info {
        &self.info
    }

    /// Whether the chunks use variable-length blocks.
    pub fn vl_blocks(&self) -> bool {
        self.info.vl_blocks
    }

    pub fn change_tick(&self) -> i64 {
        self.change_tick
    }

    /// The chunks of an in-memory (non-frame) super-chunk.
    pub fn memory_chunks(&self) -> Option<&[Vec<u8>]> {
        match &self.store {
            Store::Memory(c) => Some(c),
            Store::Frame(_) => None,
        }
    }

    pub fn frame(&self) -> Option<&Frame> {
        match &self.store {
            Store::Frame(f) => Some(f),
            Store::Memory(_) => None,
        }
    }

    /// Set the thread counts used for compression and decompression (and
    /// recorded in the frame header at the next change).
    pub fn set_nthreads(&mut self, compress: i16, decompress: i16) {
        self.info.cparams.nthreads = compress.max(1);
        self.info.tcomp = compress.max(1);
        if let Some(c) = self.comp.as_mut() {
            c.set_nthreads(compress.max(1));
        }
        self.dparams.nthreads = decompress.max(1);
        self.info.tdecomp = decompress.max(1);
    }

    /// Replace the decompression parameters.
    pub fn set_dparams(&mut self, dparams: DParams) {
        self.info.tdecomp = dparams.nthreads;
        self.dparams = dparams;
    }

    /// Length of the frame (contiguous or the index of a sparse one); in-memory
    /// chunk lists have none.
    pub fn frame_len(&self) -> Result<u64> {
        match &self.store {
            Store::Frame(f) => Ok(f.frame_len()),
            Store::Memory(_) => Err(Error::FrameType),
        }
    }

    pub fn metalayers(&self) -> &[Metalayer] {
        &self.info.metalayers
    }

    /// Variable-length metalayers as stored (contents are compressed chunks).
    pub fn vlmetalayers(&self) -> &[Metalayer] {
        &self.info.vlmetalayers
    }

    // ------------------------------------------------------------------ locking

    /// Take the frame lock (exclusive) across several operations. A no-op when
    /// locking is off or the super-chunk is not on disk.
    pub fn lock(&mut self) -> Result<()> {
        let changed = match self.lock.as_mut() {
            Some(l) => l.lock().unwrap_or_else(|e| e.into_inner()).acquire(true)?,
            None => return Ok(()),
        };
        if changed {
            if let Err(e) = self.reload(true) {
                let _ = self.unlock();
                return Err(e);
            }
        }
        Ok(())
    }

    pub fn unlock(&mut self) -> Result<()> {
        match self.lock.as_mut() {
            Some(l) => l.lock().unwrap_or_else(|e| e.into_inner()).release(),
            None => Ok(()),
        }
    }

    fn begin_write(&mut self) -> Result<()> {
        self.lock()?;
        if self.lock.is_none() {
            self.reload(false)?;
        }
        Ok(())
    }

    fn end_write<T>(&mut self, r: Result<T>) -> Result<T> {
        let u = self.unlock();
        let v = r?;
        u?;
        Ok(v)
    }

    /// Re-read the frame when another handle changed it on disk. Returns whether it did.
    pub fn refresh(&mut self) -> Result<bool> {
        let changed = match self.lock.as_mut() {
            Some(l) => l.lock().unwrap_or_else(|e| e.into_inner()).acquire(false)?,
            None => false,
        };
        let r = self.reload(changed);
        let u = self.unlock();
        let r = r?;
        u?;
        Ok(r)
    }

    /// Whether the on-disk frame no longer matches what this handle has read
    /// (its length changed); cheap: one small read.
    pub fn is_stale(&self) -> bool {
        match &self.store {
            Store::Frame(f) if !f.is_memory() => f.is_stale(),
            _ => false,
        }
    }

    /// Whether the frame on disk changed since this handle read it (length, or
    /// the lock's generation counter when locking); cheap.
    pub fn needs_refresh(&self) -> bool {
        self.is_stale()
            || self.lock.as_ref().is_some_and(|l| l.lock().unwrap_or_else(|e| e.into_inner()).changed_elsewhere())
    }

    /// Hold the shared frame lock while reading (a no-op without locking).
    pub fn read_lock(&self) -> Result<ReadLock> {
        if let Some(l) = &self.lock {
            l.lock().unwrap_or_else(|e| e.into_inner()).acquire(false)?;
        }
        Ok(ReadLock(self.lock.clone()))
    }

    fn reload(&mut self, force: bool) -> Result<bool> {
        let Store::Frame(f) = &mut self.store else { return Ok(false) };
        if f.is_memory() {
            return Ok(false);
        }
        let info = if force { Some(f.force_reload()?) } else { f.reload()? };
        match info {
            Some(new) => {
                let (cp_threads, dthreads) = (self.info.cparams.nthreads, self.dparams.nthreads);
                self.info = new;
                self.set_nthreads(cp_threads, dthreads);
                self.change_tick += 1;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    // ------------------------------------------------------------------ reading

    fn check_index(&self, i: usize) -> Result<()> {
        if i < self.nchunks() {
            Ok(())
        } else {
            Err(Error::InvalidIndex)
        }
    }

    /// Chunk `i` as stored (special chunks of frames are built as 32-byte chunks).
    pub fn chunk(&self, i: usize) -> Result<Cow<'_, [u8]>> {
        self.check_index(i)?;
        match &self.store {
            Store::Memory(c) => Ok(Cow::Borrowed(&c[i])),
            Store::Frame(f) => f.chunk(&self.info, i),
        }
    }

    /// Chunk `i` as a lazy chunk when on disk (see [`Frame::lazy_chunk`]), else as stored.
    pub fn lazy_chunk(&self, i: usize) -> Result<Cow<'_, [u8]>> {
        self.check_index(i)?;
        match &self.store {
            Store::Memory(c) => Ok(Cow::Borrowed(&c[i])),
            Store::Frame(f) => f.lazy_chunk(&self.info, i),
        }
    }

    /// Where the blocks of this super-chunk's lazy chunks are read from.
    pub fn lazy_source(&self) -> Option<&dyn LazySource> {
        match &self.store {
            Store::Frame(f) => Some(f),
            Store::Memory(_) => None,
        }
    }

    /// The uncompressed size of chunk `i`.
    pub fn chunk_nbytes(&self, i: usize) -> Result<i32> {
        self.check_index(i)?;
        match &self.store {
            Store::Memory(c) => Ok(Header::sizes(&c[i])?.0),
            Store::Frame(f) => f.chunk_nbytes(&self.info, i),
        }
    }

    fn decompressor(&self) -> Decompressor {
        let mut d = self.dparams.clone();
        d.typesize = self.info.cparams.typesize;
        let mut d = Decompressor::new(d);
        d.set_postfilter(self.postfilter.clone());
        d
    }

    /// A decompressor for chunk `i` (postfilters are told the chunk number).
    fn decompressor_for(&self, i: usize) -> Decompressor {
        let mut d = self.decompressor();
        d.set_nchunk(Some(i as i64));
        d
    }

    /// Decompress chunk `i` into `dst`; returns its size.
    /// (`InvalidParam` when `dst` is too small, as in c-blosc2.)
    pub fn decompress_chunk(&self, i: usize, dst: &mut [u8]) -> Result<usize> {
        let c = self.chunk(i)?;
        let n = Header::sizes(&c)?.0;
        if n < 0 || n as usize > dst.len() {
            return Err(Error::InvalidParam);
        }
        self.decompressor_for(i).decompress(&c, dst)
    }

    /// Decompress block `nblock` of the VL-block chunk `i`.
    pub fn vl_block(&self, i: usize, nblock: usize) -> Result<Vec<u8>> {
        let c = self.chunk(i)?;
        let mut d = self.decompressor();
        let sizes = d.vl_block_sizes(&c)?;
        let n = *sizes.get(nblock).ok_or(Error::InvalidParam)?;
        let mut out = vec![0u8; n];
        d.vl_decompress_block(&c, nblock, &mut out)?;
        Ok(out)
    }

    /// The (first chunk, byte offset in it) where byte `pos` of the super-chunk lives,
    /// walking chunk sizes when they vary.
    fn locate(&self, pos: i64) -> Result<(usize, i64)> {
        let cs = i64::from(self.info.chunksize);
        if cs > 0 {
            return Ok(((pos / cs) as usize, pos % cs));
        }
        let mut start = 0i64;
        for i in 0..self.nchunks() {
            let n = i64::from(self.chunk_nbytes(i)?);
            if pos < start + n {
                return Ok((i, pos - start));
            }
            start += n;
        }
        Ok((self.nchunks(), pos - start))
    }

    /// Items `[start, stop)` (in units of the typesize) into `dst`.
    pub fn get_slice(&self, start: i64, stop: i64, dst: &mut [u8]) -> Result<()> {
        let ts = i64::from(self.typesize().max(1));
        let nitems = self.info.nbytes / ts;
        if start < 0 || stop < start || stop > nitems {
            return Err(Error::InvalidParam);
        }
        let (mut pos, end) = (start * ts, stop * ts);
        if ((end - pos) as u64) > dst.len() as u64 {
            return Err(Error::WriteBuffer);
        }
        let (mut i, mut off) = self.locate(pos)?;
        let mut d = self.decompressor();
        let mut out = 0usize;
        while pos < end {
            let n = i64::from(self.chunk_nbytes(i)?);
            let take = (n - off).min(end - pos);
            if take <= 0 {
                return Err(Error::InvalidHeader);
            }
            let dst = &mut dst[out..out + take as usize];
            d.set_nchunk(Some(i as i64));
            if off == 0 && take == n {
                let c = self.chunk(i)?;
                d.decompress(&c, dst)?;
            } else {
                let c = self.lazy_chunk(i)?;
                d.getitem_bytes_lazy(&c, off, take, dst, self.lazy_source())?;
            }
            out += take as usize;
            pos += take;
            i += 1;
            off = 0;
        }
        Ok(())
    }

    /// Items at the given indices (in units of the typesize) into `dst`, in order.
    pub fn get_sparse(&self, coords: &[i64], dst: &mut [u8]) -> Result<()> {
        let ts = self.typesize().max(1) as usize;
        if coords.len().checked_mul(ts).is_none_or(|n| n > dst.len()) {
            return Err(Error::WriteBuffer);
        }
        for (k, &c) in coords.iter().enumerate() {
            self.get_slice(c, c.checked_add(1).ok_or(Error::InvalidParam)?, &mut dst[k * ts..(k + 1) * ts])?;
        }
        Ok(())
    }

    /// Overwrite items `[start, stop)` with `src`: chunks wholly covered are
    /// recompressed from `src`, partly covered ones are decompressed, patched
    /// and recompressed.
    pub fn set_slice(&mut self, start: i64, stop: i64, src: &[u8]) -> Result<()> {
        self.writing(|s| s.set_slice_now(start, stop, src))
    }

    fn set_slice_now(&mut self, start: i64, stop: i64, src: &[u8]) -> Result<()> {
        let ts = i64::from(self.typesize().max(1));
        let nitems = self.info.nbytes / ts;
        if start < 0 || stop < start || stop > nitems {
            return Err(Error::InvalidParam);
        }
        let (mut pos, end) = (start * ts, stop * ts);
        if ((end - pos) as u64) > src.len() as u64 {
            return Err(Error::ReadBuffer);
        }
        let (mut i, mut off) = self.locate(pos)?;
        let mut used = 0usize;
        while pos < end {
            let n = self.chunk_nbytes(i)? as usize;
            let take = (n as i64 - off).min(end - pos) as usize;
            let mut buf = vec![0u8; n];
            if take < n {
                self.decompress_chunk(i, &mut buf)?;
            }
            buf[off as usize..off as usize + take].copy_from_slice(&src[used..used + take]);
            let mut c = vec![0u8; n + MAX_OVERHEAD];
            let comp = self.compressor()?;
            comp.set_nchunk(Some(i as i64));
            let cb = comp.compress(&buf, &mut c)?;
            c.truncate(cb);
            self.update_chunk(i, &c)?;
            used += take;
            pos += take as i64;
            i += 1;
            off = 0;
        }
        Ok(())
    }

    /// The chunks holding items `[start, stop)`, first and one past the last.
    pub fn slice_chunks(&self, start: i64, stop: i64) -> Result<(usize, usize)> {
        let ts = i64::from(self.typesize().max(1));
        if start < 0 || stop < start || stop * ts > self.info.nbytes {
            return Err(Error::InvalidParam);
        }
        let (first, _) = self.locate(start * ts)?;
        if stop == start {
            return Ok((first, first));
        }
        let (last, _) = self.locate(stop * ts - 1)?;
        Ok((first, last + 1))
    }

    // ------------------------------------------------------------------ writing

    /// The chunksize after adding a chunk of `n` bytes at `pos` (c-blosc2's rules,
    /// docs/FRAME_BEHAVIOUR.md §6.1).
    fn chunksize_after_insert(&self, pos: usize, n: i32) -> Result<i32> {
        let c = self.info.chunksize;
        let count = self.nchunks();
        Ok(match c {
            -1 => n,
            0 => 0,
            _ if count == 0 => n,
            c if pos == count => {
                let last = self.chunk_nbytes(count - 1)?;
                if last < c || n > c {
                    0
                } else {
                    c
                }
            }
            c if n != c => 0,
            c => c,
        })
    }

    fn check_vl(&self, inc: &Incoming) -> Result<()> {
        if self.nchunks() > 0 && inc.vl_blocks != self.info.vl_blocks {
            return Err(Error::ChunkAppend);
        }
        Ok(())
    }

    /// Apply a change to the chunks: `f` does the storage part with the new and old info.
    fn mutate(
        &mut self,
        new_info: Info,
        f: impl FnOnce(&mut Store, &Info, &Info, &mut i64) -> Result<()>,
    ) -> Result<()> {
        if new_info.chunksize == 0 && self.info.chunksize > 0 {
            if let Store::Frame(fr) = &mut self.store {
                fr.materialize_specials(&self.info)?;
            }
        }
        f(&mut self.store, &new_info, &self.info, &mut self.mem_cbytes)?;
        self.info = new_info;
        Ok(())
    }

    /// Run a change under the frame lock (when locking), after picking up what
    /// other handles changed on disk.
    fn writing<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.begin_write()?;
        let r = f(self);
        self.end_write(r)
    }

    /// Append a chunk; returns the new number of chunks.
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<usize> {
        self.writing(|s| {
            let pos = s.nchunks();
            s.insert_chunk_now(pos, chunk)
        })
    }

    /// Insert a chunk at position `pos`; returns the new number of chunks.
    pub fn insert_chunk(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        self.writing(|s| s.insert_chunk_now(pos, chunk))
    }

    fn insert_chunk_now(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        self.insert_cow(pos, Cow::Borrowed(chunk))
    }

    /// Insert a chunk; an in-memory super-chunk keeps an owned chunk as it is
    /// (no copy).
    fn insert_cow(&mut self, pos: usize, chunk: Cow<'_, [u8]>) -> Result<usize> {
        if pos > self.nchunks() {
            return Err(Error::InvalidIndex);
        }
        let inc = inspect(&chunk)?;
        self.check_vl(&inc)?;
        let (len, nbytes, kind, vl_blocks) = (inc.bytes.len(), inc.nbytes, inc.kind, inc.vl_blocks);
        let mut info = self.info.clone();
        info.chunksize = self.chunksize_after_insert(pos, nbytes)?;
        info.nbytes += i64::from(nbytes);
        if self.nchunks() == 0 {
            info.vl_blocks = vl_blocks;
        }
        self.mutate(info, move |store, new, old, mem_cbytes| match store {
            Store::Memory(c) => {
                let bytes = match chunk {
                    Cow::Owned(mut v) => {
                        v.truncate(len);
                        v
                    }
                    Cow::Borrowed(b) => b[..len].to_vec(),
                };
                c.insert(pos, bytes);
                *mem_cbytes += len as i64;
                Ok(())
            }
            Store::Frame(f) => f.insert(new, old, pos, &chunk[..len], kind),
        })?;
        Ok(self.nchunks())
    }

    /// Replace chunk `pos`; returns the number of chunks.
    pub fn update_chunk(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        self.writing(|s| s.update_chunk_now(pos, chunk))
    }

    fn update_chunk_now(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        self.check_index(pos)?;
        let inc = inspect(chunk)?;
        if inc.vl_blocks != self.info.vl_blocks {
            return Err(Error::ChunkUpdate);
        }
        let old_n = self.chunk_nbytes(pos)?;
        let mut info = self.info.clone();
        let c = info.chunksize;
        let last = pos + 1 == self.nchunks();
        if c > 0 && (inc.nbytes > c || (!last && inc.nbytes != c)) {
            info.chunksize = 0;
        }
        info.nbytes += i64::from(inc.nbytes) - i64::from(old_n);
        self.mutate(info, |store, new, old, mem_cbytes| match store {
            Store::Memory(c) => {
                *mem_cbytes += inc.bytes.len() as i64 - c[pos].len() as i64;
                c[pos] = inc.bytes.to_vec();
                Ok(())
            }
            Store::Frame(f) => f.update(new, old, pos, inc.bytes, inc.kind),
        })?;
        Ok(self.nchunks())
    }

    /// Remove chunk `pos`; returns the new number of chunks.
    pub fn delete_chunk(&mut self, pos: usize) -> Result<usize> {
        self.writing(|s| s.delete_chunk_now(pos))
    }

    fn delete_chunk_now(&mut self, pos: usize) -> Result<usize> {
        self.check_index(pos)?;
        let old_n = self.chunk_nbytes(pos)?;
        let mut info = self.info.clone();
        info.nbytes -= i64::from(old_n);
        if self.nchunks() == 1 {
            info.vl_blocks = false;
        }
        self.mutate(info, |store, new, old, mem_cbytes| match store {
            Store::Memory(c) => {
                *mem_cbytes -= c.remove(pos).len() as i64;
                Ok(())
            }
            Store::Frame(f) => f.delete(new, old, pos),
        })?;
        Ok(self.nchunks())
    }

    /// Put chunk `order[i]` at position `i` (`order` is a permutation).
    pub fn reorder(&mut self, order: &[i64]) -> Result<()> {
        self.writing(|s| s.reorder_now(order))
    }

    fn reorder_now(&mut self, order: &[i64]) -> Result<()> {
        let n = self.nchunks();
        if order.len() != n {
            return Err(Error::InvalidParam);
        }
        let mut seen = vec![false; n];
        let mut idx = Vec::with_capacity(n);
        for &o in order {
            let o = usize::try_from(o).map_err(|_| Error::InvalidIndex)?;
            if o >= n || std::mem::replace(&mut seen[o], true) {
                return Err(Error::InvalidIndex);
            }
            idx.push(o);
        }
        if self.info.chunksize > 0 {
            // A shorter last chunk may not move elsewhere.
            let last = self.chunk_nbytes(n - 1)?;
            if n > 0 && last != self.info.chunksize && idx[n - 1] != n - 1 {
                return Err(Error::InvalidParam);
            }
        }
        let info = self.info.clone();
        self.mutate(info, |store, new, _, _| match store {
            Store::Memory(c) => {
                let mut old: Vec<Option<Vec<u8>>> = std::mem::take(c).into_iter().map(Some).collect();
                *c = idx.iter().map(|&o| old[o].take().unwrap_or_default()).collect();
                Ok(())
            }
            Store::Frame(f) => f.reorder(new, &idx),
        })
    }

    /// Make the chunk list `keep` (distinct positions of the current chunks,
    /// in their new order): the chunks not named leave the super-chunk. One
    /// index write for a frame, however many chunks move or go.
    pub fn select_chunks(&mut self, keep: &[usize]) -> Result<()> {
        self.writing(|s| s.select_chunks_now(keep))
    }

    fn select_chunks_now(&mut self, keep: &[usize]) -> Result<()> {
        let n = self.nchunks();
        let mut seen = vec![false; n];
        for &k in keep {
            if k >= n || std::mem::replace(&mut seen[k], true) {
                return Err(Error::InvalidIndex);
            }
        }
        if keep.len() == n && keep.iter().enumerate().all(|(i, &k)| i == k) {
            return Ok(());
        }
        let mut info = self.info.clone();
        let mut nbytes = 0i64;
        let mut uniform = true;
        for (i, &k) in keep.iter().enumerate() {
            let nb = self.chunk_nbytes(k)?;
            nbytes += i64::from(nb);
            let last = i + 1 == keep.len();
            if info.chunksize > 0 && (nb > info.chunksize || (!last && nb != info.chunksize)) {
                uniform = false;
            }
        }
        info.nbytes = nbytes;
        if !uniform {
            info.chunksize = 0;
        }
        if keep.is_empty() {
            info.vl_blocks = false;
        }
        self.mutate(info, |store, new, old, mem_cbytes| match store {
            Store::Memory(c) => {
                let mut all: Vec<Option<Vec<u8>>> = std::mem::take(c).into_iter().map(Some).collect();
                *c = keep.iter().map(|&k| all[k].take().unwrap_or_default()).collect();
                *mem_cbytes = c.iter().map(|x| x.len() as i64).sum();
                Ok(())
            }
            Store::Frame(f) => f.select(new, old, keep),
        })
    }

    /// `src` compressed with the super-chunk's parameters (and compressor, whose
    /// block size carries over as in c-blosc2).
    pub fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        let mut c = vec![0u8; src.len() + MAX_OVERHEAD];
        let n = self.compressor()?.compress(src, &mut c)?;
        if n == 0 {
            return Err(Error::WriteBuffer);
        }
        c.truncate(n);
        Ok(c)
    }

    /// Compress `src` with the super-chunk's parameters and append it.
    pub fn append_buffer(&mut self, src: &[u8]) -> Result<usize> {
        self.writing(|s| s.append_buffer_now(src))
    }

    fn append_buffer_now(&mut self, src: &[u8]) -> Result<usize> {
        let mut c = vec![0u8; src.len() + MAX_OVERHEAD];
        let pos = self.nchunks();
        let comp = self.compressor()?;
        comp.set_nchunk(Some(pos as i64));
        let n = comp.compress(src, &mut c)?;
        c.truncate(n);
        if let Store::Memory(_) = self.store {
            // The chunk list keeps this very buffer, shrunk (no second copy).
            c.shrink_to_fit();
        }
        self.insert_cow(pos, Cow::Owned(c))
    }

    /// Fill an empty super-chunk with `nitems` items of special values, in
    /// chunks of `chunksize` bytes; returns the number of chunks.
    pub fn fill_special(&mut self, nitems: i64, kind: Special, chunksize: i32) -> Result<usize> {
        self.writing(|s| s.fill_special_now(nitems, kind, chunksize))
    }

    fn fill_special_now(&mut self, nitems: i64, kind: Special, chunksize: i32) -> Result<usize> {
        if nitems == 0 {
            return Ok(0);
        }
        let ts = self.typesize();
        if nitems < 0 || chunksize <= 0 || ts <= 0 {
            return Err(Error::InvalidParam);
        }
        if self.info.nbytes > 0 || self.cbytes() > 0 || self.nchunks() > 0 {
            return Err(Error::FrameSpecial);
        }
        if !matches!(kind, Special::Zero | Special::Nan | Special::Uninit) {
            return Err(Error::SchunkSpecial);
        }
        let chunkitems = i64::from(chunksize / ts);
        if chunkitems <= 0 {
            return Err(Error::InvalidParam);
        }
        let full = nitems / chunkitems;
        let leftover = nitems % chunkitems;
        let n = full + i64::from(leftover > 0);
        if n > i64::from(i32::MAX / 8) || nitems > i64::MAX / i64::from(ts) {
            return Err(Error::SchunkSpecial);
        }
        let cs = (chunkitems * i64::from(ts)) as i32;
        let mut cp = self.info.cparams.clone();
        cp.nthreads = 1;
        if let Store::Frame(_) = self.store {
            let mut info = self.info.clone();
            info.chunksize = cs;
            info.nbytes = nitems * i64::from(ts);
            // The header's blocksize becomes that of a sample special chunk.
            let mut sample = [0u8; EXTENDED_HEADER_LENGTH];
            crate::chunk::special::make(&cp, kind, cs, None, &mut sample)?;
            info.cparams.blocksize = Header::parse(&sample)?.blocksize;
            match &mut self.store {
                Store::Frame(f) => f.fill_special(&info, &self.info, n as usize, kind)?,
                Store::Memory(_) => return Err(Error::Failure),
            };
            self.info = info;
            return Ok(self.nchunks());
        }
        let mut chunk = [0u8; EXTENDED_HEADER_LENGTH];
        crate::chunk::special::make(&cp, kind, cs, None, &mut chunk)?;
        for _ in 0..full {
            self.append_chunk(&chunk)?;
        }
        if leftover > 0 {
            crate::chunk::special::make(&cp, kind, (leftover * i64::from(ts)) as i32, None, &mut chunk)?;
            self.append_chunk(&chunk)?;
        }
        Ok(self.nchunks())
    }

    // -------------------------------------------------------------- metalayers

    fn sync_meta(&mut self, old: &Info) -> Result<()> {
        self.change_tick += 1;
        match &mut self.store {
            Store::Frame(f) => f.sync_meta(&self.info, old),
            Store::Memory(_) => Ok(()),
        }
    }

    /// Run a metalayer change: `f` edits a copy of the info; on failure nothing changes.
    fn change_meta<T>(&mut self, f: impl FnOnce(&mut Info) -> Result<T>) -> Result<T> {
        let mut info = self.info.clone();
        let v = f(&mut info)?;
        let old = std::mem::replace(&mut self.info, info);
        if let Err(e) = self.sync_meta(&old) {
            self.info = old;
            return Err(e);
        }
        Ok(v)
    }

    /// Index of metalayer `name`.
    pub fn meta_exists(&self, name: &str) -> Option<usize> {
        self.info.metalayers.iter().position(|m| m.name == name)
    }

    pub fn meta_get(&self, name: &str) -> Result<&[u8]> {
        let i = self.meta_exists(name).ok_or(Error::NotFound)?;
        Ok(&self.info.metalayers[i].content)
    }

    /// Add a metalayer (only before any chunk data exists); returns its index.
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.writing(|s| s.meta_add_now(name, content))
    }

    fn meta_add_now(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        check_name(name)?;
        if self.meta_exists(name).is_some() || self.info.metalayers.len() >= MAX_METALAYERS {
            return Err(Error::InvalidParam);
        }
        // A frame header cannot grow once chunks follow it; without a frame it can.
        if self.frame().is_some() && (self.cbytes() > 0 || self.info.nbytes > 0) {
            return Err(Error::InvalidParam);
        }
        i32::try_from(content.len()).map_err(|_| Error::InvalidParam)?;
        self.change_meta(|info| {
            info.metalayers.push(Metalayer { name: name.to_string(), content: content.to_vec() });
            Ok(info.metalayers.len() - 1)
        })
    }

    /// Overwrite a metalayer's content; it may not grow (the frame header keeps
    /// its size). A shorter content replaces the start of the old one, as c-blosc2 does.
    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.writing(|s| s.meta_update_now(name, content))
    }

    fn meta_update_now(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        let i = self.meta_exists(name).ok_or(Error::NotFound)?;
        if content.len() > self.info.metalayers[i].content.len() {
            return Err(Error::InvalidParam);
        }
        self.change_meta(|info| {
            info.metalayers[i].content[..content.len()].copy_from_slice(content);
            Ok(i)
        })
    }

    pub fn vlmeta_exists(&self, name: &str) -> Option<usize> {
        self.info.vlmetalayers.iter().position(|m| m.name == name)
    }

    /// The content of vlmetalayer `name`, decompressed.
    pub fn vlmeta_get(&self, name: &str) -> Result<Vec<u8>> {
        let i = self.vlmeta_exists(name).ok_or(Error::NotFound)?;
        let stored = &self.info.vlmetalayers[i].content;
        let (nbytes, cbytes, _) = Header::sizes(stored).map_err(|_| Error::Data)?;
        if cbytes as usize != stored.len() || nbytes < 0 {
            return Err(Error::Data);
        }
        let mut out = vec![0u8; nbytes as usize];
        let n = Decompressor::new(DParams::default()).decompress(stored, &mut out)?;
        if n != nbytes as usize {
            return Err(Error::Data);
        }
        Ok(out)
    }

    fn compress_vlmeta(content: &[u8], cparams: Option<&CParams>) -> Result<Vec<u8>> {
        let cp = cparams.cloned().unwrap_or_default();
        let len = content.len().checked_add(MAX_OVERHEAD).filter(|&l| l <= i32::MAX as usize).ok_or(Error::InvalidParam)?;
        let mut out = vec![0u8; len];
        let n = Compressor::new(cp)?.compress(content, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Add a variable-length metalayer (compressed with `cparams`, or the defaults); returns its index.
    pub fn vlmeta_add(&mut self, name: &str, content: &[u8], cparams: Option<&CParams>) -> Result<usize> {
        self.writing(|s| s.vlmeta_add_now(name, content, cparams))
    }

    fn vlmeta_add_now(&mut self, name: &str, content: &[u8], cparams: Option<&CParams>) -> Result<usize> {
        check_name(name)?;
        if self.vlmeta_exists(name).is_some() || self.info.vlmetalayers.len() >= MAX_VLMETALAYERS {
            return Err(Error::InvalidParam);
        }
        let stored = Self::compress_vlmeta(content, cparams)?;
        self.change_meta(|info| {
            info.vlmetalayers.push(Metalayer { name: name.to_string(), content: stored });
            Ok(info.vlmetalayers.len() - 1)
        })
    }

    /// Replace the content of a variable-length metalayer; returns its index.
    pub fn vlmeta_update(&mut self, name: &str, content: &[u8], cparams: Option<&CParams>) -> Result<usize> {
        self.writing(|s| s.vlmeta_update_now(name, content, cparams))
    }

    fn vlmeta_update_now(&mut self, name: &str, content: &[u8], cparams: Option<&CParams>) -> Result<usize> {
        let i = self.vlmeta_exists(name).ok_or(Error::NotFound)?;
        let stored = Self::compress_vlmeta(content, cparams)?;
        self.change_meta(|info| {
            info.vlmetalayers[i].content = stored;
            Ok(i)
        })
    }

    /// Remove a variable-length metalayer; returns how many remain.
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<usize> {
        self.writing(|s| s.vlmeta_delete_now(name))
    }

    fn vlmeta_delete_now(&mut self, name: &str) -> Result<usize> {
        let i = self.vlmeta_exists(name).ok_or(Error::NotFound)?;
        self.change_meta(|info| {
            info.vlmetalayers.remove(i);
            Ok(info.vlmetalayers.len())
        })
    }

    // ----------------------------------------------------------------- frames

    /// The super-chunk as one contiguous frame: the frame itself for in-memory
    /// frames, else a copy made as c-blosc2 makes it.
    pub fn to_cframe(&self) -> Result<Cow<'_, [u8]>> {
        if let Store::Frame(f) = &self.store {
            if let Some(b) = f.as_bytes() {
                return Ok(Cow::Borrowed(b));
            }
        }
        let copy = self.copy_to(Storage { contiguous: true, ..Storage::default() })?;
        let bytes = copy.to_cframe()?.into_owned();
        Ok(Cow::Owned(bytes))
    }

    /// Write the super-chunk as a contiguous frame file at `urlpath`; returns its length.
    pub fn to_file(&self, urlpath: &str) -> Result<u64> {
        let frame = self.to_cframe()?;
        let s = self.storage.backend.open(urlpath, Mode::Create)?;
        s.write_at(0, &frame)?;
        Ok(frame.len() as u64)
    }

    /// Append the super-chunk as a contiguous frame at the end of `urlpath`;
    /// returns the offset where it starts.
    pub fn append_to_file(&self, urlpath: &str) -> Result<u64> {
        let frame = self.to_cframe()?;
        let s = self.storage.backend.open(urlpath, Mode::Append)?;
        let at = s.size()?;
        s.write_at(at, &frame)?;
        Ok(at)
    }
}

/// The shared frame lock, held until dropped.
pub struct ReadLock(Option<Arc<Mutex<FrameLock>>>);

impl Drop for ReadLock {
    fn drop(&mut self) {
        if let Some(l) = &self.0 {
            let _ = l.lock().unwrap_or_else(|e| e.into_inner()).release();
        }
    }
}

impl Frame {
    /// Whether the frame on disk has another length than this handle knows.
    pub fn is_stale(&self) -> bool {
        self.disk_frame_len().is_ok_and(|l| l != self.frame_len())
    }
}

/// The local path a urlpath names: `file:///` URLs lose their prefix (as
/// in c-blosc2: `file:///data/a.b2nd` is `data/a.b2nd`), other paths stay.
pub fn local_path(urlpath: &str) -> &str {
    urlpath.strip_prefix("file:///").unwrap_or(urlpath)
}

/// Remove a file or a directory tree (what `urlpath` names), if present.
pub fn remove_urlpath(urlpath: &str) -> Result<()> {
    // The lock sidecar of a frame file goes with it.
    let _ = std::fs::remove_file(lock_path(urlpath, false));
    let p = Path::new(urlpath);
    match std::fs::symlink_metadata(p) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(p).map_err(|_| Error::FileRemove),
        Ok(_) => std::fs::remove_file(p).map_err(|_| Error::FileRemove),
    }
}

/// Rename a file or directory.
pub fn rename_urlpath(from: &str, to: &str) -> Result<()> {
    std::fs::rename(from, to).map_err(|_| Error::FileRemove)
}
