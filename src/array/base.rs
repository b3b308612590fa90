//! [`Array`]: an n-dimensional array over a shared super-chunk, and
//! [`Context`]: how to make one. Creating, opening, saving, slices, points and
//! selections, metalayers; shape changes are in `reshape`, copies in `copy`.

use super::boxes::buffer_len;
use super::view::View;
use super::{Geometry, Meta};
use crate::chunk::{CParams, DParams, Special};
use crate::error::{Error, Result};
use crate::frame::Metalayer;
use crate::io::{filesystem, Backend};
use crate::schunk::{SChunk, Storage, SuperChunk};
use std::sync::Arc;

/// How to make a new array: its shapes and dtype, its compression and
/// decompression parameters, where it is stored, and extra metalayers.
#[derive(Clone)]
pub struct Context {
    pub meta: Meta,
    pub cparams: CParams,
    pub dparams: DParams,
    pub storage: Storage,
    pub metalayers: Vec<Metalayer>,
}

impl Context {
    /// An in-memory array of `shape` in chunks of `chunkshape` and blocks of
    /// `blockshape`, items of `cparams.typesize` bytes (dtype `|S<typesize>`).
    pub fn new(shape: &[i64], chunkshape: &[i32], blockshape: &[i32], cparams: CParams) -> Context {
        let dtype = format!("|S{}", cparams.typesize);
        let meta = Meta {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            dtype,
            dtype_format: 0,
        };
        let dparams =
            DParams { nthreads: cparams.nthreads, typesize: cparams.typesize, owner: 0, schunk: None };
        Context { meta, cparams, dparams, storage: Storage::default(), metalayers: Vec::new() }
    }

    /// The same, stored at `urlpath` (a contiguous frame file, or a sparse
    /// frame directory when `contiguous` is false).
    pub fn stored(mut self, urlpath: &str, contiguous: bool) -> Context {
        self.storage.urlpath = Some(urlpath.to_string());
        self.storage.contiguous = contiguous;
        self
    }

    /// The same with a NumPy dtype string (e.g. `<f8`).
    pub fn dtype(mut self, dtype: &str) -> Context {
        self.meta.dtype = dtype.to_string();
        self
    }
}

/// How the items of a new array start out.
#[derive(Debug, Clone, Copy)]
pub enum Fill<'a> {
    Zeros,
    Uninit,
    Nans,
    /// Every item is this value (typesize bytes).
    Value(&'a [u8]),
}

/// An n-dimensional array stored in a super-chunk (in memory, in a frame, in
/// a file or a sparse directory). Cloning gives another handle on the same
/// stored array. A view ([`Array::squeeze`], [`Array::expand_dims`]) is an
/// array too: it shares the stored array and has its own shape.
///
/// ```
/// use b2nd::array::{Array, Context};
/// use b2nd::chunk::CParams;
///
/// let cp = CParams { typesize: 4, ..CParams::default() };
/// let ctx = Context::new(&[10, 10], &[4, 5], &[2, 5], cp);
/// let data: Vec<u8> = (0..100u32).flat_map(|x| x.to_le_bytes()).collect();
/// let mut a = Array::from_buffer(&ctx, &data).unwrap();
/// let mut row = vec![0u8; 10 * 4];
/// a.get_slice(&[3, 0], &[4, 10], &mut row).unwrap();
/// assert_eq!(&row[..4], &30u32.to_le_bytes());
/// a.append(&[0u8; 2 * 10 * 4], 0).unwrap();
/// assert_eq!(a.shape(), &[12, 10]);
/// ```
#[derive(Clone)]
pub struct Array {
    pub(crate) sc: SChunk,
    /// The stored array's metalayer and geometry.
    pub(crate) base: Meta,
    pub(crate) geom: Geometry,
    pub(crate) view: Option<View>,
    /// The super-chunk's change tick when `base` was read.
    pub(crate) tick: i64,
}

/// The b2nd metalayer of a super-chunk.
pub(crate) fn stored_meta(sc: &SuperChunk) -> Result<Meta> {
    Meta::deserialize(sc.meta_get("b2nd").map_err(|_| Error::MetalayerNotFound)?)
}

impl Array {
    // ------------------------------------------------------------ creating

    /// A new array made as `ctx` says, its items set by `fill`. The block size
    /// of the compression parameters is the block shape's.
    pub fn new(ctx: &Context, fill: Fill) -> Result<Array> {
        let geom = Geometry::new(&ctx.meta)?;
        let mut cparams = ctx.cparams.clone();
        cparams.blocksize = if geom.block_items == 0 { 0 } else { geom.block_bytes(cparams.typesize)? };
        let mut sc = SuperChunk::new(cparams, ctx.dparams.clone(), ctx.storage.clone())?;
        let r = init(&mut sc, &geom, &ctx.meta, &ctx.metalayers, fill);
        if let Err(e) = r {
            if let Some(p) = &ctx.storage.urlpath {
                drop(sc);
                let _ = crate::schunk::remove_urlpath(p);
            }
            return Err(e);
        }
        Array::from_schunk(SChunk::new(sc))
    }

    pub fn zeros(ctx: &Context) -> Result<Array> {
        Array::new(ctx, Fill::Zeros)
    }

    /// As c-blosc2 3.3 makes "empty" arrays: of zeros.
    pub fn empty(ctx: &Context) -> Result<Array> {
        Array::new(ctx, Fill::Zeros)
    }

    pub fn uninit(ctx: &Context) -> Result<Array> {
        Array::new(ctx, Fill::Uninit)
    }

    /// An array of NaNs (items of 4 or 8 bytes).
    pub fn nans(ctx: &Context) -> Result<Array> {
        Array::new(ctx, Fill::Nans)
    }

    /// An array whose items all are `value` (typesize bytes).
    pub fn full(ctx: &Context, value: &[u8]) -> Result<Array> {
        Array::new(ctx, Fill::Value(value))
    }

    /// A new array holding the C-order items of `buffer`.
    pub fn from_buffer(ctx: &Context, buffer: &[u8]) -> Result<Array> {
        let geom = Geometry::new(&ctx.meta)?;
        let ts = ctx.cparams.typesize.max(1) as usize;
        if buffer.len() < buffer_len(&geom.shape, ts)? {
            return Err(Error::InvalidParam);
        }
        let mut a = Array::new(ctx, Fill::Uninit)?;
        let start = vec![0; geom.ndim()];
        a.set_slice(&start, &geom.shape, buffer)?;
        Ok(a)
    }

    /// The array stored in a super-chunk (which must have a `b2nd` metalayer).
    pub fn from_schunk(sc: SChunk) -> Result<Array> {
        // The metalayer as the handle has it loaded, without the frame lock
        // (as c-blosc2 does): a caller may hold another handle's lock on the
        // same frame (python-blosc2 does, and a thread blocked here would
        // hold the GIL), and the array's reads refresh from disk anyway.
        let (base, tick) = {
            let r = sc.read_cached();
            (stored_meta(&r)?, r.change_tick())
        };
        // A metalayer asking for chunks bigger than a chunk can hold (a crafted
        // file) opens as in c-blosc2; reads and writes refuse to allocate them
        // (`Geometry::chunk_bytes`).
        let geom = Geometry::new(&base)?;
        Ok(Array { sc, base, geom, view: None, tick })
    }

    /// Open the array stored at `urlpath` (a frame file or a sparse frame directory).
    pub fn open(urlpath: &str) -> Result<Array> {
        Array::open_with(urlpath, 0, filesystem())
    }

    /// Open the array whose contiguous frame starts `offset` bytes into `urlpath`.
    pub fn open_offset(urlpath: &str, offset: u64) -> Result<Array> {
        Array::open_with(urlpath, offset, filesystem())
    }

    /// Open through an I/O backend (writable when the backend allows it).
    pub fn open_with(urlpath: &str, offset: u64, backend: Arc<dyn Backend>) -> Result<Array> {
        Array::from_schunk(SChunk::new(SuperChunk::open_offset(urlpath, offset, backend, true)?))
    }

    /// The array in an in-memory contiguous frame (which it now owns).
    pub fn from_cframe(frame: Vec<u8>) -> Result<Array> {
        Array::from_schunk(SChunk::new(SuperChunk::from_cframe(frame)?))
    }

    // ------------------------------------------------------------ accessors

    /// The array's metalayer: its shapes and dtype (a view's own).
    pub fn meta(&self) -> &Meta {
        self.view.as_ref().map_or(&self.base, |v| v.meta())
    }

    /// The layout of the array's items (a view's own).
    pub fn geometry(&self) -> &Geometry {
        self.view.as_ref().map_or(&self.geom, |v| v.geometry())
    }

    /// The stored array's metalayer (for a view: of the array it views).
    pub fn stored_meta(&self) -> &Meta {
        &self.base
    }

    pub fn ndim(&self) -> usize {
        self.meta().ndim()
    }

    pub fn shape(&self) -> &[i64] {
        &self.geometry().shape
    }

    pub fn chunkshape(&self) -> &[i32] {
        &self.meta().chunkshape
    }

    pub fn blockshape(&self) -> &[i32] {
        &self.meta().blockshape
    }

    pub fn dtype(&self) -> &str {
        &self.meta().dtype
    }

    pub fn nitems(&self) -> i64 {
        self.geometry().nitems()
    }

    /// The bytes of an item.
    pub fn typesize(&self) -> usize {
        self.sc.read_cached().typesize().max(1) as usize
    }

    /// The super-chunk the array is stored in (shared with the array).
    pub fn schunk(&self) -> &SChunk {
        &self.sc
    }

    /// The super-chunk's change tick when the shape was last read.
    pub fn change_tick(&self) -> i64 {
        self.tick
    }

    pub fn is_view(&self) -> bool {
        self.view.is_some()
    }

    /// Pick up changes another handle (or process) made to the stored array:
    /// returns whether its shape was read again. A view keeps its shape.
    pub fn refresh(&mut self) -> Result<bool> {
        self.sc.refresh_if_stale()?;
        let r = self.sc.read_cached();
        if r.change_tick() == self.tick || self.view.is_some() {
            return Ok(false);
        }
        let meta = stored_meta(&r)?;
        let tick = r.change_tick();
        drop(r);
        if meta.ndim() != self.base.ndim()
            || meta.chunkshape != self.base.chunkshape
            || meta.blockshape != self.base.blockshape
        {
            return Err(Error::Data);
        }
        let changed = meta != self.base;
        self.geom = Geometry::new(&meta)?;
        self.base = meta;
        self.tick = tick;
        Ok(changed)
    }

    /// Whether another handle (or process) changed the stored array since
    /// this one read its shape: cheap (a look at the frame's length or lock
    /// counter); [`Array::refresh`] then reads it again.
    pub fn is_stale(&self) -> bool {
        let r = self.sc.read_cached();
        r.needs_refresh() || (self.view.is_none() && r.change_tick() != self.tick)
    }

    /// Record a new stored shape after a change this handle made.
    pub(crate) fn set_base(&mut self, meta: Meta, geom: Geometry) {
        self.base = meta;
        self.geom = geom;
        self.tick = self.sc.read_cached().change_tick();
    }

    // ------------------------------------------------------------ reading

    /// The items of `start..stop` into `buffer`, a C-order array of shape
    /// `buffer_shape` (at least the slice's; the items go at its origin).
    pub fn get_slice_into(
        &self,
        start: &[i64],
        stop: &[i64],
        buffer: &mut [u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
        if self.view.is_some() && self.empty_box(start, stop, buffer.len(), buffer_shape)? {
            return Ok(());
        }
        let r = self.sc.read()?;
        match &self.view {
            None => self.geom.get_slice(&r, start, stop, buffer, buffer_shape),
            Some(v) => {
                let (s0, s1, bs) = v.to_base(self.geom.ndim(), start, stop, buffer_shape)?;
                self.geom.get_slice(&r, &s0, &s1, buffer, &bs)
            }
        }
    }

    /// Check a box in this array's own coordinates and a buffer of
    /// `buffer_shape` (`len` bytes); returns whether the box holds no items.
    fn empty_box(&self, start: &[i64], stop: &[i64], len: usize, buffer_shape: &[i64]) -> Result<bool> {
        let shape = self.geometry().check_slice(start, stop, buffer_shape)?;
        if len < buffer_len(buffer_shape, self.typesize())? {
            return Err(Error::WriteBuffer);
        }
        Ok(shape.contains(&0))
    }

    /// Check an orthogonal selection in this array's own coordinates; returns
    /// whether it selects no items.
    fn empty_selection(&self, selection: &[Vec<i64>], len: usize, buffer_shape: &[i64]) -> Result<bool> {
        let shape = self.shape();
        if selection.len() != shape.len() || buffer_shape.len() != shape.len() {
            return Err(Error::InvalidParam);
        }
        for (i, sel) in selection.iter().enumerate() {
            if sel.len() as i64 > buffer_shape[i] || sel.iter().any(|&x| x < 0 || x >= shape[i]) {
                return Err(Error::InvalidParam);
            }
        }
        if len < buffer_len(buffer_shape, self.typesize())? {
            return Err(Error::WriteBuffer);
        }
        Ok(selection.iter().any(|s| s.is_empty()))
    }

    /// The items of `start..stop` into `buffer`, in C order.
    pub fn get_slice(&self, start: &[i64], stop: &[i64], buffer: &mut [u8]) -> Result<()> {
        let shape: Vec<i64> = start.iter().zip(stop).map(|(a, b)| (b - a).max(0)).collect();
        self.get_slice_into(start, stop, buffer, &shape)
    }

    /// All items into `buffer`, in C order.
    pub fn to_buffer(&self, buffer: &mut [u8]) -> Result<()> {
        let start = vec![0; self.ndim()];
        let stop = self.shape().to_vec();
        self.get_slice(&start, &stop, buffer)
    }

    /// All items, in C order.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = vec![0u8; buffer_len(self.shape(), self.typesize())?];
        self.to_buffer(&mut v)?;
        Ok(v)
    }

    /// The items at the flat C-order `indices`, one after the other into `buffer`.
    pub fn get_points(&self, indices: &[i64], buffer: &mut [u8]) -> Result<()> {
        let shape = self.shape().to_vec();
        let nd = shape.len();
        if indices.is_empty() {
            return Ok(());
        }
        let ts = self.typesize();
        if buffer.len() < indices.len().checked_mul(ts).ok_or(Error::InvalidParam)? {
            return Err(Error::InvalidParam);
        }
        let nitems = self.nitems();
        let ones = vec![1i64; nd];
        let mut start = vec![0i64; nd];
        for (k, &f) in indices.iter().enumerate() {
            if f < 0 || f >= nitems {
                return Err(Error::InvalidParam);
            }
            let mut rest = f;
            for i in (0..nd).rev() {
                start[i] = rest % shape[i];
                rest /= shape[i];
            }
            let stop: Vec<i64> = start.iter().map(|&x| x + 1).collect();
            self.get_slice_into(&start, &stop, &mut buffer[k * ts..(k + 1) * ts], &ones)?;
        }
        Ok(())
    }

    /// The items of an orthogonal selection (`selection[i]`: the indices along
    /// dimension `i`) into `buffer`, a C-order array of `buffer_shape`.
    pub fn get_orthogonal(
        &self,
        selection: &[Vec<i64>],
        buffer: &mut [u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
        if self.view.is_some() && self.empty_selection(selection, buffer.len(), buffer_shape)? {
            return Ok(());
        }
        let r = self.sc.read()?;
        match &self.view {
            None => self.geom.get_selection(&r, selection, buffer, buffer_shape),
            Some(v) => {
                let (s, b) = v.selection_to_base(self.geom.ndim(), selection, buffer_shape)?;
                self.geom.get_selection(&r, &s, buffer, &b)
            }
        }
    }

    // ------------------------------------------------------------ writing

    /// Overwrite the items of `start..stop` with those at the origin of
    /// `buffer`, a C-order array of `buffer_shape`.
    pub fn set_slice_from(
        &mut self,
        start: &[i64],
        stop: &[i64],
        buffer: &[u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
        self.refresh()?;
        if self.view.is_some() && self.empty_box(start, stop, buffer.len(), buffer_shape)? {
            return Ok(());
        }
        let mut w = self.sc.write();
        // One exclusive frame lock across the chunks written: a locked reader
        // sees the slice before or after, never half written; and one change
        // of the frame: a process or machine that dies leaves it before or after.
        w.lock()?;
        let geom = &self.geom;
        let r = match &self.view {
            None => w.atomically(|w| geom.set_slice(w, start, stop, buffer, buffer_shape)),
            Some(v) => v
                .to_base(geom.ndim(), start, stop, buffer_shape)
                .and_then(|(s0, s1, bs)| w.atomically(|w| geom.set_slice(w, &s0, &s1, buffer, &bs))),
        };
        let u = w.unlock();
        r.and(u)
    }

    /// Overwrite the items of `start..stop` with `buffer` (C order).
    pub fn set_slice(&mut self, start: &[i64], stop: &[i64], buffer: &[u8]) -> Result<()> {
        let shape: Vec<i64> = start.iter().zip(stop).map(|(a, b)| (b - a).max(0)).collect();
        self.set_slice_from(start, stop, buffer, &shape)
    }

    /// Set the items of an orthogonal selection from `buffer` (C order, `buffer_shape`).
    pub fn set_orthogonal(
        &mut self,
        selection: &[Vec<i64>],
        buffer: &[u8],
        buffer_shape: &[i64],
    ) -> Result<()> {
        self.refresh()?;
        if self.view.is_some() && self.empty_selection(selection, buffer.len(), buffer_shape)? {
            return Ok(());
        }
        let mut w = self.sc.write();
        w.lock()?;
        let r = match &self.view {
            None => self.geom.set_selection(&mut w, selection, buffer, buffer_shape),
            Some(v) => v
                .selection_to_base(self.geom.ndim(), selection, buffer_shape)
                .and_then(|(s, b)| self.geom.set_selection(&mut w, &s, buffer, &b)),
        };
        let u = w.unlock();
        r.and(u)
    }

    // ------------------------------------------------------------ views

    /// A view without the dimensions marked in `index` (each of length 1).
    pub fn squeeze_index(&self, index: &[bool]) -> Result<Array> {
        if index.len() != self.ndim() {
            return Err(Error::InvalidParam);
        }
        let mut map = Vec::new();
        for (j, &drop) in index.iter().enumerate() {
            if drop {
                if self.shape()[j] != 1 {
                    return Err(Error::InvalidParam);
                }
            } else {
                map.push(Some(j));
            }
        }
        self.view_of(map)
    }

    /// A view without the dimensions of length 1.
    pub fn squeeze(&self) -> Result<Array> {
        let index: Vec<bool> = self.shape().iter().map(|&s| s == 1).collect();
        self.squeeze_index(&index)
    }

    /// A view with `axis.len()` dimensions: those marked are new ones of
    /// length 1, the others are this array's, in order.
    pub fn expand_dims(&self, axis: &[bool]) -> Result<Array> {
        if axis.iter().filter(|&&a| !a).count() != self.ndim() {
            return Err(Error::InvalidParam);
        }
        let mut next = 0;
        let map = axis
            .iter()
            .map(|&new| {
                if new {
                    None
                } else {
                    next += 1;
                    Some(next - 1)
                }
            })
            .collect();
        self.view_of(map)
    }

    /// A view whose dimension `j` is `map[j]` of this array (or a new one).
    fn view_of(&self, map: Vec<Option<usize>>) -> Result<Array> {
        let view = match &self.view {
            Some(v) => v.then(&self.base, &map)?,
            None => View::new(&self.base, map)?,
        };
        Ok(Array {
            sc: self.sc.clone(),
            base: self.base.clone(),
            geom: self.geom.clone(),
            view: Some(view),
            tick: self.tick,
        })
    }

    // ------------------------------------------------------------ saving

    /// The array as a contiguous frame (a view: with its own shape).
    pub fn to_cframe(&self) -> Result<Vec<u8>> {
        if self.view.is_none() {
            return Ok(self.sc.read()?.to_cframe()?.into_owned());
        }
        let copy = self.copy(&self.save_context(Storage { contiguous: true, ..Storage::default() }))?;
        let r = copy.sc.read()?.to_cframe()?.into_owned();
        Ok(r)
    }

    /// Save the array at `urlpath`: a frame file, or a sparse frame directory
    /// when the array is not stored contiguously (as c-blosc2 does).
    pub fn save(&self, urlpath: &str) -> Result<()> {
        let r = self.sc.read()?;
        let storage = Storage {
            contiguous: r.storage().contiguous,
            urlpath: Some(urlpath.to_string()),
            ..Storage::default()
        };
        if self.view.is_none() {
            r.copy_with(storage, None)?;
            return Ok(());
        }
        drop(r);
        self.copy(&self.save_context(storage))?;
        Ok(())
    }

    /// Append the array as a contiguous frame to the file `urlpath`; returns
    /// the offset where it starts (for [`Array::open_offset`]).
    pub fn save_append(&self, urlpath: &str) -> Result<u64> {
        if self.view.is_none() {
            return self.sc.read()?.append_to_file(urlpath);
        }
        let copy = self.copy(&self.save_context(Storage { contiguous: true, ..Storage::default() }))?;
        let at = copy.sc.read()?.append_to_file(urlpath)?;
        Ok(at)
    }

    /// A context for a copy of this array as it is (same shapes, compression) in `storage`.
    pub fn save_context(&self, storage: Storage) -> Context {
        let r = self.sc.read_cached();
        let cparams = r.context_cparams();
        Context {
            meta: self.meta().clone(),
            cparams,
            dparams: r.dparams().clone(),
            storage,
            metalayers: Vec::new(),
        }
    }

    // ------------------------------------------------------------ metalayers

    /// The content of metalayer `name`.
    pub fn meta_get(&self, name: &str) -> Result<Vec<u8>> {
        Ok(self.sc.read()?.meta_get(name)?.to_vec())
    }

    /// Add a metalayer (only while the array has no chunks in a frame).
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.sc.write().meta_add(name, content)
    }

    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        if name == "b2nd" {
            return Err(Error::InvalidParam);
        }
        self.sc.write().meta_update(name, content)
    }

    /// The metalayers other than `b2nd`.
    pub fn user_metalayers(&self) -> Vec<Metalayer> {
        self.sc.read_cached().metalayers().iter().filter(|m| m.name != "b2nd").cloned().collect()
    }

    pub fn vlmeta_get(&self, name: &str) -> Result<Vec<u8>> {
        self.sc.read()?.vlmeta_get(name)
    }

    pub fn vlmeta_add(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.sc.write().vlmeta_add(name, content, None)
    }

    pub fn vlmeta_update(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.sc.write().vlmeta_update(name, content, None)
    }

    pub fn vlmeta_delete(&mut self, name: &str) -> Result<usize> {
        self.sc.write().vlmeta_delete(name)
    }
}

/// Make the empty super-chunk `sc` hold an array: the `b2nd` metalayer, the
/// other metalayers, and every chunk with its items set by `fill`.
fn init(
    sc: &mut SuperChunk,
    geom: &Geometry,
    meta: &Meta,
    metalayers: &[Metalayer],
    fill: Fill,
) -> Result<()> {
    let ts = i64::from(sc.typesize());
    if ts <= 0 {
        return Err(Error::InvalidParam);
    }
    let chunkbytes = geom
        .chunk_items
        .checked_mul(ts)
        .filter(|&b| b <= i64::from(crate::chunk::header::MAX_BUFFERSIZE))
        .ok_or(Error::MaxBufsizeExceeded)?;
    sc.meta_add("b2nd", &meta.serialize()?)?;
    for m in metalayers {
        sc.meta_add(&m.name, &m.content)?;
    }
    let nchunks = geom.nchunks();
    if let Fill::Value(v) = fill {
        if v.len() != ts as usize {
            return Err(Error::InvalidParam);
        }
    }
    if nchunks == 0 {
        return Ok(());
    }
    match fill {
        Fill::Value(v) => {
            let mut chunk = vec![0u8; 64 + ts as usize];
            let n = crate::chunk::special::make(
                &sc.context_cparams(),
                Special::Value,
                chunkbytes as i32,
                Some(v),
                &mut chunk,
            )?;
            for _ in 0..nchunks {
                sc.append_chunk(&chunk[..n])?;
            }
        }
        f => {
            let kind = match f {
                Fill::Zeros => Special::Zero,
                Fill::Nans => Special::Nan,
                _ => Special::Uninit,
            };
            sc.fill_special(nchunks * geom.chunk_items, kind, chunkbytes as i32)?;
        }
    }
    Ok(())
}
