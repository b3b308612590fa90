//! Super-chunks: a sequence of chunks with shared parameters, metalayers and
//! variable-length metalayers, kept in memory (a list of chunks, or a
//! contiguous frame) or on disk (a contiguous frame file, possibly at an
//! offset inside a larger file, or a sparse frame directory).
//!
//! Reads take `&self` and are safe from several threads at once (every call
//! decompresses with its own state and reads files at explicit positions).

mod lock;
mod meta;
mod read;
mod shared;
mod write;

pub use lock::{env_requests_locking, lock_path};
pub use shared::{Cached, Reading, SChunk, Writing};
pub use write::{out_room, MakeChunk};

use crate::chunk::header::{Header, Special, EXTENDED_HEADER_LENGTH};
use crate::chunk::view::{ChunkView, LazySource};
use crate::chunk::{CParams, Compressor, DParams, Decompressor, Postfilter, Prefilter, SchunkView};
use crate::error::{Error, Result};
pub use crate::frame::live::Pick;
use crate::frame::live::{Frame, Opened};
use crate::frame::writer::Info;
use crate::frame::Metalayer;
use crate::io::{filesystem, Backend, Durability, Mode};
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
    /// What changes of an on-disk frame survive: a process that dies, or a
    /// machine that dies too (see [`Durability`]).
    pub durability: Durability,
}

impl Default for Storage {
    fn default() -> Self {
        Storage {
            contiguous: false,
            urlpath: None,
            backend: filesystem(),
            locking: false,
            durability: Durability::default(),
        }
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("contiguous", &self.contiguous)
            .field("urlpath", &self.urlpath)
            .field("backend", &self.backend.id())
            .field("locking", &self.locking)
            .field("durability", &self.durability)
            .finish()
    }
}

// One `Store` per super-chunk, never in a collection: the size gap costs
// nothing, and boxing `Frame` would add an indirection to every frame access.
#[allow(clippy::large_enum_variant)]
enum Store {
    /// Chunks in memory, each exactly its cbytes long.
    Memory(Vec<Vec<u8>>),
    Frame(Frame),
}

/// A super-chunk: a sequence of chunks of the same parameters, with
/// metalayers and variable-length metalayers, in memory or in a frame
/// (contiguous: one file; sparse: a directory of chunk files).
///
/// ```
/// use b2nd::chunk::{CParams, DParams};
/// use b2nd::schunk::{Storage, SuperChunk};
///
/// let cp = CParams { typesize: 4, ..CParams::default() };
/// let mut sc = SuperChunk::new(cp, DParams::default(), Storage::default())?;
/// let data: Vec<u8> = (0..10_000u32).flat_map(|i| i.to_ne_bytes()).collect();
/// sc.append_buffer(&data)?;
/// sc.append_buffer(&data)?;
/// sc.vlmeta_add("note", b"\xa5hello", None)?;
/// assert_eq!(sc.nchunks(), 2);
/// let mut back = vec![0u8; data.len()];
/// sc.decompress_chunk(1, &mut back)?;
/// assert_eq!(back, data);
/// # Ok::<(), b2nd::Error>(())
/// ```
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
    /// Buffers for the chunks read from a frame file, kept from read to read.
    read_bufs: std::sync::Mutex<Vec<Vec<u8>>>,
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
                // a journal left beside a frame that is gone is meaningless
                let _ = crate::os::remove_file(crate::frame::journal::journal_path(path));
                let mut f = if contiguous {
                    let s = storage.backend.open_kept(path, Mode::Create)?;
                    let _file = s.hold();
                    Frame::new_stream(s, 0, &info)?
                } else {
                    Frame::new_sparse(path, storage.backend.clone(), &info)?
                };
                let _file = f.hold();
                if storage.durability.syncs() {
                    f.sync_created(path)?;
                }
                Store::Frame(f)
            }
        };
        let mut sc = SuperChunk {
            info,
            dparams,
            store,
            storage,
            mem_cbytes: 0,
            lock: None,
            change_tick: 0,
            comp: None,
            prefilter: None,
            postfilter: None,
            read_bufs: Default::default(),
        };
        sc.init_lock()?;
        sc.attach_journal();
        Ok(sc)
    }

    /// Choose what the changes of this super-chunk's frame file survive from
    /// now on (see [`Durability`]); the changes since the last checkpoint
    /// get one first when syncing less.
    pub fn set_durability(&mut self, durability: Durability) -> Result<()> {
        if durability == self.storage.durability {
            return Ok(());
        }
        self.storage.durability = durability;
        if let Store::Frame(f) = &mut self.store {
            f.set_durability(durability)?;
        }
        Ok(())
    }

    /// What the changes of this super-chunk's frame file survive.
    pub fn durability(&self) -> Durability {
        self.storage.durability
    }

    /// Make every change so far durable (a checkpoint; see [`Durability`]):
    /// when this returns, a power loss loses none of them. A no-op for
    /// super-chunks in memory.
    pub fn sync(&mut self) -> Result<()> {
        match &mut self.store {
            Store::Frame(f) => f.sync(),
            Store::Memory(_) => Ok(()),
        }
    }

    /// The frame file whose changes the journal guards: the frame itself, or
    /// the index of a sparse frame.
    fn journaled_file(&self) -> Option<String> {
        let path = self.storage.urlpath.as_ref()?;
        Some(if self.storage.contiguous {
            path.clone()
        } else {
            format!("{path}/{}", crate::frame::live::SPARSE_INDEX)
        })
    }

    /// Make the changes of an on-disk frame crash-safe (`frame::journal`),
    /// when its backend has files beside the frame.
    fn attach_journal(&mut self) {
        let (Some(file), Some(sidecar)) = (self.journaled_file(), self.storage.backend.sidecar()) else {
            return;
        };
        if let Store::Frame(f) = &mut self.store {
            if !f.is_memory() {
                let mut j = crate::frame::journal::Journal::new(&file, sidecar, self.storage.durability);
                j.set_every_change(self.storage.locking);
                f.set_journal(j);
            }
        }
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
        let dparams = DParams { nthreads: 1, typesize: info.cparams.typesize, owner: 0, schunk: None };
        SuperChunk {
            info,
            dparams,
            store: Store::Frame(o.frame),
            storage,
            mem_cbytes: 0,
            lock: None,
            change_tick: 0,
            comp: None,
            prefilter: None,
            postfilter: None,
            read_bufs: Default::default(),
        }
    }

    /// Open the frame at `urlpath` (a contiguous frame file or a sparse frame directory).
    pub fn open(urlpath: &str, backend: Arc<dyn Backend>, writable: bool) -> Result<SuperChunk> {
        Self::open_with(urlpath, 0, backend, writable, false)
    }

    /// Open the contiguous frame that starts `offset` bytes into the file at `urlpath`.
    pub fn open_offset(
        urlpath: &str,
        offset: u64,
        backend: Arc<dyn Backend>,
        writable: bool,
    ) -> Result<SuperChunk> {
        Self::open_with(urlpath, offset, backend, writable, false)
    }

    /// Open with explicit locking (or `BLOSC_LOCKING`).
    pub fn open_with(
        urlpath: &str,
        offset: u64,
        backend: Arc<dyn Backend>,
        writable: bool,
        locking: bool,
    ) -> Result<SuperChunk> {
        let urlpath = local_path(urlpath);
        let sparse = is_dir(urlpath);
        let mut storage = Storage {
            contiguous: !sparse,
            urlpath: Some(urlpath.to_string()),
            backend: backend.clone(),
            locking,
            durability: Durability::default(),
        };
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
            let s = match backend.open_kept(urlpath, mode) {
                Ok(s) => s,
                // A read-only file still opens for reading.
                Err(_) if writable => backend.open_kept(urlpath, Mode::Read)?,
                Err(e) => return Err(e),
            };
            // (the file open once for all the reads of the open)
            let _file = s.hold();
            let writable = writable && backend.open(urlpath, Mode::Update).is_ok();
            // A change a dead process left half done is undone first.
            let s = if let Some(sidecar) = backend.sidecar() {
                match crate::frame::journal::recover(urlpath, s, offset, writable, None, &sidecar) {
                    Ok(s) => s,
                    Err(e) => {
                        if let Some(l) = lock.as_mut() {
                            let _ = l.release();
                        }
                        return Err(e);
                    }
                }
            } else {
                s
            };
            Frame::open_stream(s, offset, writable)
        };
        if let Some(l) = lock.as_mut() {
            if opened.is_ok() {
                l.mark_loaded();
            }
            l.release()?;
        }
        let mut sc = Self::from_opened(opened?, storage);
        sc.lock = lock.map(|l| Arc::new(Mutex::new(l)));
        sc.attach_journal();
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
        self.copy_with_params(storage, cparams, None)
    }

    /// [`SuperChunk::copy_with`] with decompression parameters for the copy
    /// (without them it gets the defaults, one thread, as in c-blosc2).
    pub fn copy_with_params(
        &self,
        storage: Storage,
        cparams: Option<CParams>,
        dparams: Option<DParams>,
    ) -> Result<SuperChunk> {
        self.copy_observed(storage, cparams, dparams, &mut |_, _| {})
    }

    /// [`SuperChunk::copy_with_params`], telling `progress` how many chunks
    /// are copied, and how many there are, as it goes.
    pub fn copy_observed(
        &self,
        storage: Storage,
        cparams: Option<CParams>,
        dparams: Option<DParams>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<SuperChunk> {
        let src = self.context_cparams();
        let given = cparams.is_some();
        let mut cp = cparams.unwrap_or_else(|| src.clone());
        if cp.blocksize == 0 {
            cp.blocksize = src.blocksize;
        }
        let same = self.prefilter.is_none()
            && self.postfilter.is_none()
            && cp.encodes_like(&src)
            && cp.blocksize == src.blocksize;
        // c-blosc2 records the copy's compression threads as given, 0 when not given.
        let tcomp = if given { cp.nthreads } else { 0 };
        cp.owner = 0;
        let mut dp =
            dparams.unwrap_or(DParams { nthreads: 1, typesize: cp.typesize, owner: 0, schunk: None });
        dp.owner = 0;
        let mut new = SuperChunk::new(cp, dp, storage)?;
        new.info.tcomp = tcomp;
        for m in &self.info.metalayers {
            new.meta_add(&m.name, &m.content)?;
        }
        new.info.chunksize = self.info.chunksize;
        // A new frame takes the chunks in bulk: its index is written once.
        if let Store::Frame(f) = &mut new.store {
            f.begin_batch();
        }
        if same || self.info.vl_blocks {
            for i in 0..self.nchunks() {
                progress(i, self.nchunks());
                // through a kept buffer: a fresh one per chunk costs its page faults
                self.with_chunk(i, false, |c| new.append_chunk(c).map(|_| ()))?;
            }
        } else {
            let mut buf = Vec::new();
            for i in 0..self.nchunks() {
                progress(i, self.nchunks());
                buf.resize(self.chunk_nbytes(i)? as usize, 0);
                self.decompress_chunk(i, &mut buf)?;
                new.append_buffer(&buf)?;
            }
        }
        if let Store::Frame(f) = &mut new.store {
            f.end_batch(&new.info)?;
            if new.storage.durability.syncs() {
                f.sync()?;
            }
        }
        progress(self.nchunks(), self.nchunks());
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
            read_bufs: Default::default(),
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

    /// Set the size every chunk but the last will have, before the first chunk
    /// is added (c-blosc2's users write the public `chunksize` field for this:
    /// a super-chunk made for 1024-byte chunks keeps 1024 when its first chunk
    /// is shorter). `-1` leaves it to the first chunk, `0` allows any sizes.
    /// Recorded in the frame header at the next change. Once chunks exist only
    /// the current value is accepted: the frame's chunk count derives from it.
    pub fn set_chunksize(&mut self, chunksize: i32) -> Result<()> {
        if chunksize == self.info.chunksize {
            return Ok(());
        }
        if chunksize < -1 {
            crate::trace!("chunksize {chunksize} is negative");
            return Err(Error::InvalidParam);
        }
        if self.nchunks() > 0 {
            crate::trace!(
                "chunksize {chunksize} refused: the super-chunk has {} chunks of chunksize {}",
                self.nchunks(),
                self.info.chunksize
            );
            return Err(Error::InvalidParam);
        }
        self.info.chunksize = chunksize;
        Ok(())
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
        // the plugins see the super-chunk as it is now (its metalayers may have changed)
        let current = {
            let b2nd = self.meta_exists("b2nd").map(|i| &self.info.metalayers[i].content[..]);
            let typesize = self.info.cparams.typesize;
            move |v: &Option<SchunkView>| {
                v.as_ref().is_some_and(|v| v.typesize == typesize && v.b2nd.as_deref() == b2nd)
            }
        };
        let stale = self.comp.as_ref().is_some_and(|c| !current(&c.params().schunk));
        if stale {
            let view = self.plugin_view();
            if let Some(c) = self.comp.as_mut() {
                c.set_schunk(Some(view));
            }
        }
        self.comp.as_mut().ok_or(Error::Failure)
    }

    /// What the plugins that depend on the super-chunk see of it (c-blosc2
    /// hands them the super-chunk): its typesize and its `b2nd` metalayer.
    pub fn plugin_view(&self) -> SchunkView {
        let b2nd = self.meta_exists("b2nd").map(|i| Arc::from(&self.info.metalayers[i].content[..]));
        SchunkView { typesize: self.info.cparams.typesize, b2nd }
    }

    /// Compress the chunks added from now on with `cparams` (the chunks stored
    /// keep theirs; the frame header records the new ones at the next change).
    /// The owner handed to user codecs and filters stays.
    pub fn set_cparams(&mut self, mut cparams: CParams) -> Result<()> {
        cparams.owner = self.info.cparams.owner;
        cparams.schunk = None; // (set by `compressor`, from the super-chunk)
        cparams.nthreads = cparams.nthreads.max(1);
        let mut comp = Compressor::sticky(cparams.clone())?;
        comp.set_prefilter(self.prefilter.clone());
        self.info.tcomp = cparams.nthreads;
        self.info.cparams = cparams;
        self.comp = Some(comp);
        Ok(())
    }

    /// Who owns this super-chunk, handed as is to user codecs and filters as
    /// they compress and decompress its chunks (see [`CParams::owner`]).
    pub fn set_owner(&mut self, owner: usize) {
        self.info.cparams.owner = owner;
        self.dparams.owner = owner;
        self.comp = None;
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
    // The lock and journal sidecars of a frame file go with it.
    let _ = crate::os::remove_file(lock_path(urlpath, false));
    let _ = crate::os::remove_file(crate::frame::journal::journal_path(urlpath));
    let p = Path::new(urlpath);
    match std::fs::symlink_metadata(p) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => remove_dir(urlpath),
        Ok(_) => crate::os::remove_file(p).map_err(|_| Error::FileRemove),
    }
}

/// Remove the directory `path` (a sparse frame's) and everything in it; an
/// error if there is none.
pub fn remove_dir(path: &str) -> Result<()> {
    crate::os::remove_dir_all(path).map_err(|_| Error::FileRemove)
}

/// Rename a file or directory.
pub fn rename_urlpath(from: &str, to: &str) -> Result<()> {
    std::fs::rename(from, to).map_err(|_| Error::FileRemove)
}
