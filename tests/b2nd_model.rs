//! Model-based test of `b2nd::array::Array`: random sequences of operations
//! run both on a real array and on a plain model (an n-d C-order `Vec<i32>`
//! with its shape), and after every step the whole array is compared with the
//! model.
//!
//! The model follows the spec of shape changes: along each dimension a change
//! opens `d` positions at `at` (they read as zeros) or removes `d` positions
//! from `at`; items keep their values and move accordingly. One exception, kept
//! for c-blosc2 compatibility: when a dimension grows at its end and its old
//! length was not a multiple of the chunk length, the new positions that were
//! padding of the old edge chunk read whatever that chunk held there. The
//! model marks those positions (and the items of `Fill::Uninit` arrays) as
//! undefined until they are written again; every other item must match.
//!
//! Operations: set_slice / get_slice_into of random boxes (buffers larger
//! than the box too), resize with and without start (growth and shrinking,
//! chunk-aligned or not, several dimensions at once), insert, append, delete,
//! get_points, get/set_orthogonal, copy / slice / concatenate into new arrays
//! of every storage kind (same or other chunk shapes and codecs; sometimes
//! going on with the new array), extend (also with a view, and with the array
//! itself), squeezed and expanded views (read, written, copied, sliced,
//! saved; never resizable), changes through a second handle picked up by
//! `refresh` or by a write, save + open, and reopening (`Array::open` for
//! files, `from_cframe(to_cframe())` for frames) every 5 steps.
//!
//! Each case (storage kind x number of dimensions) runs 12 seeds of 300
//! steps (`B2ND_MODEL_SEEDS` / `B2ND_MODEL_STEPS` run longer ones). On a
//! failure the message names the seed and the step; with `B2ND_MINIMISE=1`
//! the failing sequence is also minimised (operations left out while the
//! failure stays) and printed, ready to be turned into a test.
//!
//! Bugs the random cases found keep their minimal reproductions below
//! (`bug_*`, now passing): empty ranges and selections along a dimension that
//! `expand_dims` added, and `get_points` on 0-dimensional views.

use b2nd::array::{Array, Context, Fill};
use b2nd::chunk::CParams;
use b2nd::codecs::Codec;
use b2nd::schunk::Storage;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

// ------------------------------------------------------------ random numbers

/// xorshift64*: small, seeded, deterministic.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03);
        if r.0 == 0 {
            r.0 = 1;
        }
        for _ in 0..4 {
            r.next();
        }
        r
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// 0..n (0 when n <= 0).
    fn below(&mut self, n: i64) -> i64 {
        if n <= 0 {
            0
        } else {
            (self.next() % n as u64) as i64
        }
    }

    /// lo..=hi.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below(hi - lo + 1)
    }

    fn chance(&mut self, percent: i64) -> bool {
        self.below(100) < percent
    }
}

/// `n` pseudo-random values made from `seed`.
fn values(seed: u64, n: usize) -> Vec<i32> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| r.next() as i32).collect()
}

fn to_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

// ------------------------------------------------------------ index helpers

fn items(shape: &[i64]) -> usize {
    shape.iter().product::<i64>() as usize
}

fn ravel(idx: &[i64], shape: &[i64]) -> usize {
    idx.iter().zip(shape).fold(0i64, |a, (&i, &s)| a * s + i) as usize
}

fn unravel(mut k: usize, shape: &[i64]) -> Vec<i64> {
    let mut idx = vec![0i64; shape.len()];
    for i in (0..shape.len()).rev() {
        let s = shape[i].max(1) as usize;
        idx[i] = (k % s) as i64;
        k /= s;
    }
    idx
}

/// Every index of the box `lo..hi`, in C order.
fn for_each_idx(lo: &[i64], hi: &[i64], mut f: impl FnMut(&[i64])) {
    if lo.iter().zip(hi).any(|(a, b)| a >= b) {
        return;
    }
    let nd = lo.len();
    let mut idx = lo.to_vec();
    loop {
        f(&idx);
        let mut d = nd;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < hi[d] {
                break;
            }
            idx[d] = lo[d];
        }
    }
}

fn valid_box(start: &[i64], stop: &[i64], shape: &[i64]) -> bool {
    start.len() == shape.len()
        && stop.len() == shape.len()
        && (0..shape.len()).all(|i| 0 <= start[i] && start[i] <= stop[i] && stop[i] <= shape[i])
}

fn box_shape(start: &[i64], stop: &[i64]) -> Vec<i64> {
    start.iter().zip(stop).map(|(a, b)| b - a).collect()
}

fn nchunks(shape: &[i64], chunks: &[i32]) -> i64 {
    shape.iter().zip(chunks).map(|(&s, &c)| (s + i64::from(c) - 1) / i64::from(c)).product()
}

const MAX_LEN: i64 = 14;
// (Under Miri fewer items and chunks: it is slow.)
const MAX_ITEMS: i64 = if cfg!(miri) { 250 } else { 2000 };
const MAX_CHUNKS: i64 = if cfg!(miri) { 24 } else { 200 };

/// Whether an array of `shape` in chunks of `chunks` is small enough.
fn small(shape: &[i64], chunks: &[i32]) -> bool {
    shape.iter().all(|&s| (0..=MAX_LEN).contains(&s))
        && shape.iter().product::<i64>() <= MAX_ITEMS
        && nchunks(shape, chunks) <= MAX_CHUNKS
}

// ------------------------------------------------------------ the model

const SENTINEL: i32 = 0x5A5A_5A5A;

#[derive(Clone, Debug)]
struct Model {
    shape: Vec<i64>,
    chunks: Vec<i64>,
    data: Vec<i32>,
    /// false: the item is unspecified (may read as anything).
    def: Vec<bool>,
}

impl Model {
    fn filled(shape: &[i64], chunks: &[i32], v: i32, def: bool) -> Model {
        let n = items(shape);
        Model {
            shape: shape.to_vec(),
            chunks: chunks.iter().map(|&c| i64::from(c)).collect(),
            data: vec![v; n],
            def: vec![def; n],
        }
    }

    fn nitems(&self) -> usize {
        self.data.len()
    }

    /// The items of `start..stop` as a new model (chunks `chunks`).
    fn sub(&self, start: &[i64], stop: &[i64], chunks: &[i32]) -> Model {
        let mut m = Model::filled(&box_shape(start, stop), chunks, 0, true);
        let mut k = 0;
        for_each_idx(start, stop, |idx| {
            let f = ravel(idx, &self.shape);
            m.data[k] = self.data[f];
            m.def[k] = self.def[f];
            k += 1;
        });
        m
    }

    /// Per dimension `(at, delta)`: `delta` positions open (> 0) or go (< 0) at `at`.
    fn change(&self, ch: &[(i64, i64)]) -> Model {
        let nd = self.shape.len();
        let shape: Vec<i64> = (0..nd).map(|i| self.shape[i] + ch[i].1).collect();
        let mut m = Model {
            shape: shape.clone(),
            chunks: self.chunks.clone(),
            data: vec![0; items(&shape)],
            def: vec![true; items(&shape)],
        };
        let zeros = vec![0i64; nd];
        let mut k = 0;
        let mut old = vec![0i64; nd];
        for_each_idx(&zeros, &shape, |idx| {
            let mut fresh = false;
            let mut unspecified = false;
            for i in 0..nd {
                let (at, d) = ch[i];
                let p = idx[i];
                let (olen, c) = (self.shape[i], self.chunks[i]);
                if p < at {
                    old[i] = p;
                } else if d >= 0 {
                    if p < at + d {
                        fresh = true;
                        // The c-blosc2 exception: padding of the old edge chunk.
                        if at == olen && olen % c != 0 && p < (olen + c - 1) / c * c {
                            unspecified = true;
                        }
                    } else {
                        old[i] = p - d;
                    }
                } else {
                    old[i] = p - d;
                }
            }
            if !fresh {
                let f = ravel(&old, &self.shape);
                m.data[k] = self.data[f];
                m.def[k] = self.def[f];
            } else {
                m.def[k] = !unspecified;
            }
            k += 1;
        });
        m
    }

    /// This model followed by `other` along `axis`.
    fn concat(&self, other: &Model, axis: usize, chunks: &[i32]) -> Model {
        let mut shape = self.shape.clone();
        let a = shape[axis];
        shape[axis] += other.shape[axis];
        let mut m = Model::filled(&shape, chunks, 0, true);
        let zeros = vec![0i64; shape.len()];
        let mut k = 0;
        for_each_idx(&zeros, &shape.clone(), |idx| {
            let (src, f) = if idx[axis] < a {
                (self, ravel(idx, &self.shape))
            } else {
                let mut j = idx.to_vec();
                j[axis] -= a;
                (other, ravel(&j, &other.shape))
            };
            m.data[k] = src.data[f];
            m.def[k] = src.def[f];
            k += 1;
        });
        m
    }
}

/// Write the box `start..stop` of the flat C-order items `data`/`def` of
/// `shape` from the origin of `vals`, a C-order buffer of `bshape`.
fn model_write(
    shape: &[i64],
    data: &mut [i32],
    def: &mut [bool],
    start: &[i64],
    stop: &[i64],
    vals: &[i32],
    bshape: &[i64],
) {
    let mut rel = vec![0i64; start.len()];
    for_each_idx(start, stop, |idx| {
        for i in 0..idx.len() {
            rel[i] = idx[i] - start[i];
        }
        let f = ravel(idx, shape);
        data[f] = vals[ravel(&rel, bshape)];
        def[f] = true;
    });
}

/// Compare the items `got` (C order) with the model's flat items.
fn compare(got: &[i32], m: &Model, shape: &[i64], what: &str) -> Result<(), String> {
    if got.len() != m.data.len() {
        return Err(format!("{what}: {} items, the model has {}", got.len(), m.data.len()));
    }
    for (k, &g) in got.iter().enumerate() {
        if m.def[k] && g != m.data[k] {
            return Err(format!(
                "{what}: item {:?} of {:?} is {g} instead of {}",
                unravel(k, shape),
                shape,
                m.data[k]
            ));
        }
    }
    Ok(())
}

/// The whole array against the model (shape and every defined item).
fn check(a: &Array, m: &Model, what: &str) -> Result<(), String> {
    if a.shape() != m.shape.as_slice() {
        return Err(format!("{what}: shape {:?} instead of {:?}", a.shape(), m.shape));
    }
    let v = from_bytes(&a.to_vec().map_err(|e| format!("{what}: to_vec: {e:?}"))?);
    compare(&v, m, &m.shape, what)
}

// ------------------------------------------------------------ arrays

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// In memory, separate chunks.
    Mem,
    /// An in-memory contiguous frame.
    Frame,
    /// A contiguous frame file.
    File,
    /// A sparse frame directory.
    Sparse,
}

const KINDS: [Kind; 4] = [Kind::Mem, Kind::Frame, Kind::File, Kind::Sparse];

#[derive(Clone, Debug)]
enum InitFill {
    Zeros,
    Value(i32),
    Nans,
    Uninit,
    Buffer(u64),
}

/// Chunk and block shapes and compression of a new array.
#[derive(Clone, Debug)]
struct Spec {
    chunks: Vec<i32>,
    blocks: Vec<i32>,
    codec: u8,
}

#[derive(Clone, Debug)]
struct Init {
    shape: Vec<i64>,
    spec: Spec,
    fill: InitFill,
}

/// The other array of a concatenation: the current shape but `len` along the axis.
#[derive(Clone, Debug)]
struct OtherSpec {
    len: i64,
    spec: Spec,
    kind: Kind,
    fill: InitFill,
    /// (`len` 1) an expand_dims view of an array without the axis.
    view: bool,
}

/// The other array of a concatenation, of `shape` but `other.len` along `axis`.
fn make_other(
    env: &mut Env,
    other: &OtherSpec,
    shape: &[i64],
    axis: usize,
) -> Result<(Array, Option<String>, Model), String> {
    let mut oshape = shape.to_vec();
    oshape[axis] = other.len;
    if !other.view || other.len != 1 {
        return env.make(other.kind, &oshape, &other.spec, &other.fill);
    }
    let drop_axis = |v: &[i32]| -> Vec<i32> {
        v.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &x)| x).collect()
    };
    let mut bshape = oshape.clone();
    bshape.remove(axis);
    let spec = Spec {
        chunks: drop_axis(&other.spec.chunks),
        blocks: drop_axis(&other.spec.blocks),
        codec: other.spec.codec,
    };
    let (a, path, mut m) = env.make(other.kind, &bshape, &spec, &other.fill)?;
    let axes: Vec<bool> = (0..shape.len()).map(|i| i == axis).collect();
    let v = a.expand_dims(&axes).map_err(|err| format!("expand_dims {axes:?} of {bshape:?}: {err:?}"))?;
    m.shape = oshape;
    m.chunks = other.spec.chunks.iter().map(|&c| i64::from(c)).collect();
    Ok((v, path, m))
}

fn cparams(codec: u8) -> CParams {
    // (Under Miri BloscLZ in place of LZ4 and Zstd: they are C libraries.)
    let (lz4, zstd) = if cfg!(miri) { (Codec::BloscLz, Codec::BloscLz) } else { (Codec::Lz4, Codec::Zstd) };
    let mut cp = match codec {
        0 => CParams { typesize: 4, ..CParams::default() },
        1 => CParams::classic(lz4, 1, 1, 4, false),
        2 => CParams::classic(zstd, 3, 2, 4, false),
        3 => CParams::classic(Codec::BloscLz, 0, 0, 4, false),
        // Two threads without delta: blocks gathered and scattered by the block jobs.
        4 => {
            let mut c = CParams::classic(lz4, 5, 1, 4, false);
            c.nthreads = 2;
            return c;
        }
        _ => {
            let mut c = CParams::classic(lz4, 5, 1, 4, true);
            c.nthreads = 2;
            return c;
        }
    };
    cp.nthreads = 1;
    cp
}

/// Temporary files of one test (or one replay).
struct Env {
    dir: PathBuf,
    n: usize,
}

impl Env {
    fn new(tag: &str) -> Env {
        let dir = b2nd::os::temp_dir().join(format!("b2nd-model-{}-{tag}", b2nd::os::process_id()));
        // (Not under Miri, whose isolation refuses files: its arrays stay in memory.)
        if !cfg!(miri) {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
        }
        Env { dir, n: 0 }
    }

    fn storage(&mut self, kind: Kind) -> (Storage, Option<String>) {
        self.n += 1;
        let path = |ext: &str| self.dir.join(format!("a{}.{ext}", self.n)).to_str().unwrap().to_string();
        // (Under Miri, whose isolation refuses files, the file kinds' in-memory twins.)
        let kind = match kind {
            Kind::File if cfg!(miri) => Kind::Frame,
            Kind::Sparse if cfg!(miri) => Kind::Mem,
            kind => kind,
        };
        match kind {
            Kind::Mem => (Storage::default(), None),
            Kind::Frame => (Storage { contiguous: true, ..Storage::default() }, None),
            Kind::File => {
                let p = path("b2frame");
                (Storage { contiguous: true, urlpath: Some(p.clone()), ..Storage::default() }, Some(p))
            }
            Kind::Sparse => {
                let p = path("b2nd");
                (Storage { contiguous: false, urlpath: Some(p.clone()), ..Storage::default() }, Some(p))
            }
        }
    }

    fn context(&mut self, kind: Kind, shape: &[i64], spec: &Spec) -> (Context, Option<String>) {
        let (storage, path) = self.storage(kind);
        let mut ctx = Context::new(shape, &spec.chunks, &spec.blocks, cparams(spec.codec)).dtype("<i4");
        ctx.storage = storage;
        (ctx, path)
    }

    /// A new array and its model.
    fn make(
        &mut self,
        kind: Kind,
        shape: &[i64],
        spec: &Spec,
        fill: &InitFill,
    ) -> Result<(Array, Option<String>, Model), String> {
        let (ctx, path) = self.context(kind, shape, spec);
        let n = items(shape);
        let ch = &spec.chunks;
        let (res, m) = match fill {
            InitFill::Zeros => (Array::new(&ctx, Fill::Zeros), Model::filled(shape, ch, 0, true)),
            InitFill::Value(v) => {
                (Array::new(&ctx, Fill::Value(&v.to_le_bytes())), Model::filled(shape, ch, *v, true))
            }
            InitFill::Nans => {
                (Array::new(&ctx, Fill::Nans), Model::filled(shape, ch, f32::NAN.to_bits() as i32, true))
            }
            InitFill::Uninit => (Array::new(&ctx, Fill::Uninit), Model::filled(shape, ch, 0, false)),
            InitFill::Buffer(seed) => {
                let v = values(*seed, n);
                let a = Array::from_buffer(&ctx, &to_bytes(&v));
                let mut m = Model::filled(shape, ch, 0, true);
                m.data = v;
                (a, m)
            }
        };
        let a = res.map_err(|e| format!("creating a {kind:?} array {shape:?} {spec:?} {fill:?}: {e:?}"))?;
        Ok((a, path, m))
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if !cfg!(miri) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn remove(path: &Option<String>) {
    if let Some(p) = path {
        let _ = b2nd::schunk::remove_urlpath(p);
    }
}

// ------------------------------------------------------------ operations

/// One step, with every parameter concrete (so a sequence can be replayed,
/// and minimised: a step whose parameters do not fit the current shape is
/// skipped).
#[derive(Clone, Debug)]
enum Op {
    /// Write random values (from `seed`) to `start..stop` from a buffer
    /// `pad` larger than the box.
    SetSlice {
        start: Vec<i64>,
        stop: Vec<i64>,
        pad: Vec<i64>,
        seed: u64,
    },
    GetSlice {
        start: Vec<i64>,
        stop: Vec<i64>,
        pad: Vec<i64>,
    },
    Resize {
        shape: Vec<i64>,
        start: Option<Vec<i64>>,
    },
    Insert {
        axis: usize,
        at: i64,
        n: i64,
        seed: u64,
    },
    Append {
        axis: usize,
        n: i64,
        seed: u64,
    },
    Delete {
        axis: usize,
        start: i64,
        len: i64,
    },
    Points {
        idx: Vec<i64>,
    },
    GetOrth {
        sel: Vec<Vec<i64>>,
        pad: Vec<i64>,
    },
    SetOrth {
        sel: Vec<Vec<i64>>,
        seed: u64,
    },
    /// Copy to another storage; `replace`: go on with the copy.
    Copy {
        to: Kind,
        spec: Spec,
        replace: bool,
    },
    Slice {
        start: Vec<i64>,
        stop: Vec<i64>,
        to: Kind,
        spec: Spec,
        replace: bool,
    },
    Concat {
        axis: usize,
        other: OtherSpec,
        to: Kind,
        spec: Spec,
        replace: bool,
    },
    Extend {
        axis: usize,
        other: OtherSpec,
    },
    /// Extend the array with itself (another handle on the same array).
    ExtendSelf {
        axis: usize,
    },
    /// A squeezed view: read, maybe written (view coordinates).
    /// `derive`: from this seed, a copy, slice, cframe or save of the view.
    Squeeze {
        write: Option<(Vec<i64>, Vec<i64>, u64)>,
        derive: Option<u64>,
    },
    /// An expanded view (of the array, or of its squeezed view).
    Expand {
        axes: Vec<bool>,
        of_squeeze: bool,
        write: Option<(Vec<i64>, Vec<i64>, u64)>,
        derive: Option<u64>,
    },
    /// Open the array again (a frame: from its bytes).
    Reopen,
    /// Save to a new path, open it and compare.
    Save,
    /// Do `inner` (a write or a shape change) through another handle on the
    /// same array (a clone); then the array picks the change up, by
    /// `refresh()` or by writing (writes refresh first).
    OtherHandle {
        inner: Box<Op>,
        refresh: bool,
    },
}

struct State {
    kind: Kind,
    arr: Option<Array>,
    path: Option<String>,
    m: Model,
}

impl State {
    fn a(&self) -> &Array {
        self.arr.as_ref().unwrap()
    }

    fn a_mut(&mut self) -> &mut Array {
        self.arr.as_mut().unwrap()
    }

    /// Go on with another array (the old one is dropped and its files removed).
    fn replace(&mut self, a: Array, path: Option<String>, m: Model) {
        self.arr = None;
        remove(&self.path);
        self.arr = Some(a);
        self.path = path;
        self.m = m;
    }
}

fn e<T>(what: &str, r: b2nd::error::Result<T>) -> Result<T, String> {
    r.map_err(|err| format!("{what}: {err:?}"))
}

/// A view's model: the same items with another shape.
fn view_model(m: &Model, shape: &[i64]) -> Model {
    Model { shape: shape.to_vec(), chunks: vec![1; shape.len()], data: m.data.clone(), def: m.def.clone() }
}

/// Read a view whole, maybe write a box of it (updating the model), and check
/// that it cannot change shape.
#[allow(clippy::too_many_arguments)] // the test's state, the view, and what to do with it
fn exercise_view(
    env: &mut Env,
    st: &mut State,
    mut v: Array,
    shape: &[i64],
    added: &[bool],
    write: &Option<(Vec<i64>, Vec<i64>, u64)>,
    derive: Option<u64>,
    what: &str,
) -> Result<bool, String> {
    check(&v, &view_model(&st.m, shape), what)?;
    if let Some(seed) = derive {
        derive_from_view(env, &v, &view_model(&st.m, shape), seed, what)?;
    }
    if let Some((start, stop, seed)) = write {
        if valid_box(start, stop, shape) {
            let bs = box_shape(start, stop);
            let vals = values(*seed, items(&bs));
            e(&format!("{what}: set_slice {start:?}..{stop:?}"), v.set_slice(start, stop, &to_bytes(&vals)))?;
            let m = &mut st.m;
            model_write(shape, &mut m.data, &mut m.def, start, stop, &vals, &bs);
            check(&v, &view_model(&st.m, shape), &format!("{what} after writing"))?;
            let mut back = vec![0u8; vals.len() * 4];
            e(&format!("{what}: get_slice {start:?}..{stop:?}"), v.get_slice(start, stop, &mut back))?;
            if from_bytes(&back) != vals {
                return Err(format!(
                    "{what}: get_slice {start:?}..{stop:?} does not give back what was written"
                ));
            }
        }
        // Points and an orthogonal selection of the view, read and written
        // (along an added dimension the selection is [0]: empty selections there
        // fail, see `bug_expand_dims_view_empty_selection_along_added_dim`).
        let mut r = Rng::new(seed ^ 0x5555);
        let n = st.m.nitems() as i64;
        // Also on 0-dimensional views (see `bug_get_points_of_a_0_dim_array`).
        if n > 0 {
            let idx: Vec<i64> = (0..r.range(1, 5)).map(|_| r.below(n)).collect();
            let mut buf = vec![0u8; idx.len() * 4];
            e(&format!("{what}: get_points {idx:?}"), v.get_points(&idx, &mut buf))?;
            for (k, got) in from_bytes(&buf).into_iter().enumerate() {
                let f = idx[k] as usize;
                if st.m.def[f] && got != st.m.data[f] {
                    return Err(format!(
                        "{what}: get_points: point {k} (flat {f}) is {got} instead of {}",
                        st.m.data[f]
                    ));
                }
            }
        }
        let mut sel = gen_selection(&mut r, shape, true);
        for (i, &new) in added.iter().enumerate() {
            if new {
                sel[i] = vec![0];
            }
        }
        let lens: Vec<i64> = sel.iter().map(|x| x.len() as i64).collect();
        let vals = values(r.next(), items(&lens));
        e(&format!("{what}: set_orthogonal {sel:?}"), v.set_orthogonal(&sel, &to_bytes(&vals), &lens))?;
        let nd = shape.len();
        let zeros = vec![0i64; nd];
        let m = &mut st.m;
        for_each_idx(&zeros, &lens, |p| {
            let abs: Vec<i64> = (0..nd).map(|i| sel[i][p[i] as usize]).collect();
            let f = ravel(&abs, shape);
            m.data[f] = vals[ravel(p, &lens)];
            m.def[f] = true;
        });
        let mut back = vec![0u8; vals.len() * 4];
        e(&format!("{what}: get_orthogonal {sel:?}"), v.get_orthogonal(&sel, &mut back, &lens))?;
        if from_bytes(&back) != vals {
            return Err(format!(
                "{what}: get_orthogonal {sel:?} does not give back what set_orthogonal wrote"
            ));
        }
        check(&v, &view_model(&st.m, shape), &format!("{what} after set_orthogonal"))?;
    }
    if v.resize(shape, None).is_ok() {
        return Err(format!("{what}: a view was resized"));
    }
    if !shape.is_empty() && v.delete(0, 0, 0).is_ok() {
        return Err(format!("{what}: a view had items deleted"));
    }
    Ok(true)
}

/// A copy, a slice, a cframe or a saved file of the view `v` (model `m`),
/// made as `seed` says, compared with the model.
fn derive_from_view(env: &mut Env, v: &Array, m: &Model, seed: u64, what: &str) -> Result<(), String> {
    let mut r = Rng::new(seed);
    let nd = m.shape.len();
    let kind = KINDS[r.below(4) as usize];
    let any = Spec { chunks: vec![6; nd], blocks: vec![7; nd], codec: 0 };
    match r.below(4) {
        0 => {
            let spec = gen_spec_for(&mut r, &m.shape, &any);
            let (ctx, path) = env.context(kind, &m.shape, &spec);
            let c = e(&format!("{what}: copy to {kind:?} {spec:?}"), v.copy(&ctx))?;
            let res = check(&c, m, &format!("{what}: its copy to {kind:?} {spec:?}"));
            drop(c);
            remove(&path);
            res
        }
        1 => {
            let (start, stop) = gen_box(&mut r, &m.shape, &vec![1; nd]);
            let spec = gen_spec_for(&mut r, &box_shape(&start, &stop), &any);
            let (ctx, path) = env.context(kind, &m.shape, &spec);
            let c = e(
                &format!("{what}: slice {start:?}..{stop:?} to {kind:?} {spec:?}"),
                v.slice(&ctx, &start, &stop),
            )?;
            let res = check(
                &c,
                &m.sub(&start, &stop, &spec.chunks),
                &format!("{what}: its slice {start:?}..{stop:?} to {kind:?} {spec:?}"),
            );
            drop(c);
            remove(&path);
            res
        }
        2 => {
            let c =
                e(&format!("{what}: from_cframe(to_cframe)"), v.to_cframe().and_then(Array::from_cframe))?;
            check(&c, m, &format!("{what}: from its cframe"))
        }
        // (Not under Miri: its isolation refuses files.)
        _ if cfg!(miri) => Ok(()),
        _ => {
            let (_, path) = env.storage(if r.chance(50) { Kind::File } else { Kind::Sparse });
            let p = path.clone().unwrap();
            let res = v.save(&p).and_then(|_| Array::open(&p));
            let res = e(&format!("{what}: save and open"), res)
                .and_then(|c| check(&c, m, &format!("{what}: saved and opened")));
            remove(&path);
            res
        }
    }
}

/// Do `op` on the array and the model; `Ok(false)`: skipped (does not fit).
fn exec(env: &mut Env, st: &mut State, op: &Op) -> Result<bool, String> {
    let nd = st.m.shape.len();
    let shape = st.m.shape.clone();
    match op {
        Op::SetSlice { start, stop, pad, seed } => {
            if !valid_box(start, stop, &shape) || pad.len() != nd {
                return Ok(false);
            }
            let bs: Vec<i64> = box_shape(start, stop).iter().zip(pad).map(|(a, b)| a + b).collect();
            let vals = values(*seed, items(&bs));
            e("set_slice", st.a_mut().set_slice_from(start, stop, &to_bytes(&vals), &bs))?;
            let m = &mut st.m;
            model_write(&shape, &mut m.data, &mut m.def, start, stop, &vals, &bs);
        }
        Op::GetSlice { start, stop, pad } => {
            if !valid_box(start, stop, &shape) || pad.len() != nd {
                return Ok(false);
            }
            let sh = box_shape(start, stop);
            let bs: Vec<i64> = sh.iter().zip(pad).map(|(a, b)| a + b).collect();
            let mut buf = to_bytes(&vec![SENTINEL; items(&bs)]);
            e("get_slice_into", st.a().get_slice_into(start, stop, &mut buf, &bs))?;
            let got = from_bytes(&buf);
            let zeros = vec![0i64; nd];
            let mut err = None;
            for_each_idx(&zeros, &bs, |rel| {
                let k = ravel(rel, &bs);
                let inside = (0..nd).all(|i| rel[i] < sh[i]);
                let want = if inside {
                    let abs: Vec<i64> = (0..nd).map(|i| rel[i] + start[i]).collect();
                    let f = ravel(&abs, &shape);
                    st.m.def[f].then_some(st.m.data[f])
                } else {
                    Some(SENTINEL)
                };
                if err.is_none() && want.is_some_and(|w| w != got[k]) {
                    err = Some(format!(
                        "get_slice_into: buffer item {rel:?} (buffer {bs:?}) is {} instead of {want:?}",
                        got[k]
                    ));
                }
            });
            if let Some(m) = err {
                return Err(m);
            }
        }
        Op::Resize { shape: new, start } => {
            if new.len() != nd || start.as_ref().is_some_and(|s| s.len() != nd) || new.iter().any(|&n| n < 0)
            {
                return Ok(false);
            }
            let mut ch = Vec::with_capacity(nd);
            for i in 0..nd {
                let d = new[i] - shape[i];
                let at = match start {
                    Some(s) => s[i],
                    None if d >= 0 => shape[i],
                    None => new[i],
                };
                if at < 0 || at > shape[i] || (d < 0 && at - d > shape[i]) {
                    return Ok(false);
                }
                ch.push((at, d));
            }
            e("resize", st.a_mut().resize(new, start.as_deref()))?;
            st.m = st.m.change(&ch);
        }
        Op::Insert { axis, at, n, seed } => return insert(st, *axis, Some(*at), *n, *seed),
        Op::Append { axis, n, seed } => return insert(st, *axis, None, *n, *seed),
        Op::Delete { axis, start, len } => {
            if *axis >= nd || *start < 0 || *len < 0 || start + len > shape[*axis] {
                return Ok(false);
            }
            e("delete", st.a_mut().delete(*axis, *start, *len))?;
            let mut ch: Vec<(i64, i64)> = shape.iter().map(|&s| (s, 0)).collect();
            ch[*axis] = (*start, -len);
            st.m = st.m.change(&ch);
        }
        Op::Points { idx } => {
            if idx.iter().any(|&f| f < 0 || f as usize >= st.m.nitems()) {
                return Ok(false);
            }
            let mut buf = vec![0u8; idx.len() * 4];
            e("get_points", st.a().get_points(idx, &mut buf))?;
            for (k, v) in from_bytes(&buf).into_iter().enumerate() {
                let f = idx[k] as usize;
                if st.m.def[f] && v != st.m.data[f] {
                    return Err(format!(
                        "get_points: point {k} (flat {f}) is {v} instead of {}",
                        st.m.data[f]
                    ));
                }
            }
        }
        Op::GetOrth { sel, pad } => {
            if sel.len() != nd
                || pad.len() != nd
                || (0..nd).any(|i| sel[i].iter().any(|&x| x < 0 || x >= shape[i]))
            {
                return Ok(false);
            }
            let lens: Vec<i64> = sel.iter().map(|s| s.len() as i64).collect();
            let bs: Vec<i64> = lens.iter().zip(pad).map(|(a, b)| a + b).collect();
            let mut buf = to_bytes(&vec![SENTINEL; items(&bs)]);
            e("get_orthogonal", st.a().get_orthogonal(sel, &mut buf, &bs))?;
            let got = from_bytes(&buf);
            let zeros = vec![0i64; nd];
            let mut err = None;
            for_each_idx(&zeros, &bs, |p| {
                let k = ravel(p, &bs);
                let inside = (0..nd).all(|i| p[i] < lens[i]);
                let want = if inside {
                    let abs: Vec<i64> = (0..nd).map(|i| sel[i][p[i] as usize]).collect();
                    let f = ravel(&abs, &shape);
                    st.m.def[f].then_some(st.m.data[f])
                } else {
                    Some(SENTINEL)
                };
                if err.is_none() && want.is_some_and(|w| w != got[k]) {
                    err = Some(format!(
                        "get_orthogonal: buffer item {p:?} (buffer {bs:?}) is {} instead of {want:?}",
                        got[k]
                    ));
                }
            });
            if let Some(m) = err {
                return Err(m);
            }
        }
        Op::SetOrth { sel, seed } => {
            if sel.len() != nd || (0..nd).any(|i| sel[i].iter().any(|&x| x < 0 || x >= shape[i])) {
                return Ok(false);
            }
            let lens: Vec<i64> = sel.iter().map(|s| s.len() as i64).collect();
            let vals = values(*seed, items(&lens));
            e("set_orthogonal", st.a_mut().set_orthogonal(sel, &to_bytes(&vals), &lens))?;
            let zeros = vec![0i64; nd];
            let m = &mut st.m;
            for_each_idx(&zeros, &lens, |p| {
                let abs: Vec<i64> = (0..nd).map(|i| sel[i][p[i] as usize]).collect();
                let f = ravel(&abs, &shape);
                m.data[f] = vals[ravel(p, &lens)];
                m.def[f] = true;
            });
        }
        Op::Copy { to, spec, replace } => {
            if spec.chunks.len() != nd {
                return Ok(false);
            }
            let (ctx, path) = env.context(*to, &shape, spec);
            let c = e(&format!("copy to {to:?} {spec:?}"), st.a().copy(&ctx))?;
            let mut m = st.m.clone();
            m.chunks = c.chunkshape().iter().map(|&x| i64::from(x)).collect();
            if c.chunkshape() != spec.chunks.as_slice() || c.blockshape() != spec.blocks.as_slice() {
                return Err(format!(
                    "copy: chunks {:?} blocks {:?} instead of {spec:?}",
                    c.chunkshape(),
                    c.blockshape()
                ));
            }
            let r = check(&c, &m, &format!("the copy to {to:?} {spec:?}"));
            finish(st, c, path, m, *replace && *to == st.kind, r)?;
        }
        Op::Slice { start, stop, to, spec, replace } => {
            if !valid_box(start, stop, &shape) || spec.chunks.len() != nd {
                return Ok(false);
            }
            let (ctx, path) = env.context(*to, &shape, spec);
            let c =
                e(&format!("slice {start:?}..{stop:?} to {to:?} {spec:?}"), st.a().slice(&ctx, start, stop))?;
            let m = st.m.sub(start, stop, &spec.chunks);
            let r = check(&c, &m, &format!("the slice {start:?}..{stop:?} to {to:?} {spec:?}"));
            finish(st, c, path, m, *replace && *to == st.kind, r)?;
        }
        Op::Concat { axis, other, to, spec, replace } => {
            if *axis >= nd || spec.chunks.len() != nd || other.spec.chunks.len() != nd {
                return Ok(false);
            }
            let (o, opath, om) = make_other(env, other, &shape, *axis)?;
            let (ctx, path) = env.context(*to, &shape, spec);
            let r = st.a().concatenate(&ctx, &o, *axis);
            drop(o);
            remove(&opath);
            let c = e(&format!("concatenate along {axis} with {other:?} to {to:?} {spec:?}"), r)?;
            let m = st.m.concat(&om, *axis, &spec.chunks);
            let r =
                check(&c, &m, &format!("the concatenation along {axis} with {other:?} to {to:?} {spec:?}"));
            finish(st, c, path, m, *replace && *to == st.kind, r)?;
            check(st.a(), &st.m, "the array after a concatenation")?;
        }
        Op::Extend { axis, other } => {
            if *axis >= nd || other.spec.chunks.len() != nd {
                return Ok(false);
            }
            let (o, opath, om) = make_other(env, other, &shape, *axis)?;
            let r = st.a_mut().extend(&o, *axis);
            let r2 = check(&o, &om, "the other array after extend");
            drop(o);
            remove(&opath);
            e(&format!("extend along {axis} with {other:?}"), r)?;
            r2?;
            let chunks: Vec<i32> = st.m.chunks.iter().map(|&c| c as i32).collect();
            st.m = st.m.concat(&om, *axis, &chunks);
        }
        Op::ExtendSelf { axis } => {
            if *axis >= nd {
                return Ok(false);
            }
            let other = st.a().clone();
            e(&format!("extend along {axis} with itself"), st.a_mut().extend(&other, *axis))?;
            let chunks: Vec<i32> = st.m.chunks.iter().map(|&c| c as i32).collect();
            st.m = st.m.concat(&st.m, *axis, &chunks);
        }
        Op::Squeeze { write, derive } => {
            let v = e("squeeze", st.a().squeeze())?;
            let vshape: Vec<i64> = shape.iter().copied().filter(|&s| s != 1).collect();
            let added = vec![false; vshape.len()];
            exercise_view(env, st, v, &vshape, &added, write, *derive, "the squeezed view")?;
        }
        Op::Expand { axes, of_squeeze, write, derive } => {
            let (base, bshape) = if *of_squeeze {
                (
                    e("squeeze", st.a().squeeze())?,
                    shape.iter().copied().filter(|&s| s != 1).collect::<Vec<_>>(),
                )
            } else {
                (st.a().clone(), shape.clone())
            };
            if axes.iter().filter(|&&x| !x).count() != bshape.len() {
                return Ok(false);
            }
            let v = e(&format!("expand_dims {axes:?}"), base.expand_dims(axes))?;
            let mut it = bshape.iter();
            let vshape: Vec<i64> =
                axes.iter().map(|&new| if new { 1 } else { *it.next().unwrap() }).collect();
            exercise_view(
                env,
                st,
                v,
                &vshape,
                axes,
                write,
                *derive,
                &format!("the expanded view {axes:?} (of squeeze: {of_squeeze})"),
            )?;
        }
        Op::Reopen => match st.kind {
            Kind::File | Kind::Sparse => {
                st.arr = None;
                let p = st.path.clone().unwrap();
                let a = e("open", Array::open(&p))?;
                st.arr = Some(a);
                let spec: Vec<i64> = st.a().chunkshape().iter().map(|&c| i64::from(c)).collect();
                if spec != st.m.chunks {
                    return Err(format!("reopened: chunks {spec:?} instead of {:?}", st.m.chunks));
                }
            }
            Kind::Frame | Kind::Mem => {
                let frame = e("to_cframe", st.a().to_cframe())?;
                let a = e("from_cframe", Array::from_cframe(frame))?;
                if st.kind == Kind::Frame {
                    st.arr = Some(a);
                } else {
                    check(&a, &st.m, "the array from its cframe")?;
                }
            }
        },
        Op::OtherHandle { inner, refresh } => {
            let main = st.arr.take().unwrap();
            st.arr = Some(main.clone());
            let r = exec(env, st, inner);
            st.arr = Some(main);
            if !r? {
                return Ok(false);
            }
            let zeros = vec![0i64; st.m.shape.len()];
            if *refresh {
                e("refresh", st.a_mut().refresh())?;
            } else {
                e(
                    "an empty set_slice after another handle's change",
                    st.a_mut().set_slice(&zeros, &zeros, &[]),
                )?;
            }
        }
        // (Not under Miri: its isolation refuses files.)
        Op::Save if cfg!(miri) => return Ok(false),
        Op::Save => {
            let contiguous = matches!(st.kind, Kind::Frame | Kind::File);
            let (_, path) = env.storage(if contiguous { Kind::File } else { Kind::Sparse });
            let p = path.clone().unwrap();
            e("save", st.a().save(&p))?;
            let r = match Array::open(&p) {
                Ok(a) => check(&a, &st.m, "the saved array"),
                Err(err) => Err(format!("opening the saved array: {err:?}")),
            };
            remove(&path);
            r?;
        }
    }
    Ok(true)
}

/// The end of an operation making a new array: go on with it (`replace`) or
/// drop it.
fn finish(
    st: &mut State,
    c: Array,
    path: Option<String>,
    m: Model,
    replace: bool,
    r: Result<(), String>,
) -> Result<(), String> {
    if r.is_ok() && replace {
        st.replace(c, path, m);
    } else {
        drop(c);
        remove(&path);
    }
    r
}

fn insert(st: &mut State, axis: usize, at: Option<i64>, n: i64, seed: u64) -> Result<bool, String> {
    let shape = st.m.shape.clone();
    let nd = shape.len();
    if axis >= nd || n < 0 {
        return Ok(false);
    }
    let at_ = at.unwrap_or(shape[axis]);
    if at_ < 0 || at_ > shape[axis] {
        return Ok(false);
    }
    let row: i64 = (0..nd).filter(|&i| i != axis).map(|i| shape[i]).product();
    let mut bs = shape.clone();
    bs[axis] = n;
    let vals = values(seed, (row * n) as usize);
    let r = match at {
        Some(at) => st.a_mut().insert(&to_bytes(&vals), axis, at),
        None => st.a_mut().append(&to_bytes(&vals), axis),
    };
    e(&format!("insert {n} at {at_} along {axis}"), r)?;
    if row == 0 {
        // No items to insert: the number of positions is unknown, nothing changes.
        return Ok(true);
    }
    let mut ch: Vec<(i64, i64)> = shape.iter().map(|&s| (s, 0)).collect();
    ch[axis] = (at_, n);
    st.m = st.m.change(&ch);
    let mut start = vec![0i64; nd];
    start[axis] = at_;
    let mut stop = st.m.shape.clone();
    stop[axis] = at_ + n;
    let m = &mut st.m;
    model_write(&m.shape.clone(), &mut m.data, &mut m.def, &start, &stop, &vals, &bs);
    Ok(true)
}

// ------------------------------------------------------------ generating

fn gen_spec(r: &mut Rng, nd: usize) -> Spec {
    Spec {
        chunks: (0..nd).map(|_| r.range(1, 6) as i32).collect(),
        blocks: (0..nd).map(|_| r.range(1, 7) as i32).collect(),
        codec: r.below(6) as u8,
    }
}

/// A spec for a new array of `shape`: often the current one (chunks copied
/// as they are), else random (kept small).
fn gen_spec_for(r: &mut Rng, shape: &[i64], cur: &Spec) -> Spec {
    if r.chance(40) {
        let mut s = cur.clone();
        if r.chance(30) {
            s.codec = r.below(6) as u8;
        }
        return s;
    }
    for _ in 0..20 {
        let s = gen_spec(r, shape.len());
        if nchunks(shape, &s.chunks) <= MAX_CHUNKS {
            return s;
        }
    }
    Spec { chunks: vec![6; shape.len()], blocks: vec![7; shape.len()], codec: 0 }
}

fn gen_fill(r: &mut Rng) -> InitFill {
    match r.below(20) {
        0..=4 => InitFill::Zeros,
        5..=8 => InitFill::Value(r.next() as i32),
        9 => InitFill::Nans,
        10..=11 => InitFill::Uninit,
        _ => InitFill::Buffer(r.next()),
    }
}

fn gen_len(r: &mut Rng) -> i64 {
    if r.chance(8) {
        0
    } else {
        r.range(1, 12)
    }
}

fn gen_init(r: &mut Rng, nd: usize) -> Init {
    loop {
        let shape: Vec<i64> = (0..nd).map(|_| gen_len(r)).collect();
        let spec = gen_spec(r, nd);
        if small(&shape, &spec.chunks) {
            return Init { shape, spec, fill: gen_fill(r) };
        }
    }
}

/// A box inside `shape`: whole, chunk-aligned or random along each dimension.
fn gen_box(r: &mut Rng, shape: &[i64], chunks: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut start = Vec::new();
    let mut stop = Vec::new();
    for (&s, &c) in shape.iter().zip(chunks) {
        let (a, b) = match r.below(6) {
            0 => (0, s),
            1 => {
                let a = (r.below(s / c + 1) * c).min(s);
                (a, (a + c * r.range(1, 2)).min(s))
            }
            _ => {
                let (x, y) = (r.below(s + 1), r.below(s + 1));
                (x.min(y), x.max(y))
            }
        };
        start.push(a);
        stop.push(b);
    }
    (start, stop)
}

fn gen_pad(r: &mut Rng, nd: usize) -> Vec<i64> {
    (0..nd).map(|_| if r.chance(25) { r.range(1, 2) } else { 0 }).collect()
}

/// A position along a dimension of length `len` (chunks of `c`): often the
/// end or a chunk boundary.
fn gen_at(r: &mut Rng, len: i64, c: i64) -> i64 {
    match r.below(4) {
        0 => len,
        1 => (r.below(len / c + 1) * c).min(len),
        _ => r.below(len + 1),
    }
}

/// A new length for a dimension of length `len` (chunks of `c`).
fn gen_new_len(r: &mut Rng, len: i64, c: i64) -> i64 {
    match r.below(7) {
        0 => len + r.range(1, 4),
        1 => len - r.range(1, len.clamp(1, 4)),
        2 => (len / c + r.range(0, 1)) * c,
        3 => (len / c - r.range(0, 1)).max(0) * c,
        4 if r.chance(30) => 0,
        _ => r.below(MAX_LEN + 1),
    }
    .clamp(0, MAX_LEN)
}

fn gen_selection(r: &mut Rng, shape: &[i64], unique: bool) -> Vec<Vec<i64>> {
    shape
        .iter()
        .map(|&s| {
            let lo = if r.chance(10) { 0 } else { 1 };
            let n = if s == 0 { 0 } else { r.range(lo, 4.min(s)) };
            let mut out: Vec<i64> = Vec::new();
            while (out.len() as i64) < n {
                let x = r.below(s);
                if !unique || !out.contains(&x) {
                    out.push(x);
                }
            }
            out
        })
        .collect()
}

fn gen_other(r: &mut Rng, shape: &[i64], axis: usize, cur: &Spec) -> Option<OtherSpec> {
    for _ in 0..10 {
        let len = r.range(0, 5);
        let mut s = shape.to_vec();
        s[axis] += len;
        if !small(&s, &cur.chunks) {
            continue;
        }
        let mut os = s.clone();
        os[axis] = len;
        let spec = gen_spec_for(r, &os, cur);
        let kind = if r.chance(70) { Kind::Mem } else { KINDS[r.below(4) as usize] };
        return Some(OtherSpec { len, spec, kind, fill: gen_fill(r), view: len == 1 && r.chance(50) });
    }
    None
}

/// A box of a view to write (`added`: the view's added dimensions).
///
/// Along an added dimension the box is any of 0..1, 0..0 and 1..1 (see
/// `bug_expand_dims_view_empty_box_along_added_dim` and
/// `bug_expand_dims_view_range_1_1_along_added_dim`).
fn gen_view_write(r: &mut Rng, vshape: &[i64], added: &[bool]) -> Option<(Vec<i64>, Vec<i64>, u64)> {
    if r.chance(50) {
        let ones = vec![1i64; vshape.len()];
        let (mut a, mut b) = gen_box(r, vshape, &ones);
        for (i, &new) in added.iter().enumerate() {
            if new {
                (a[i], b[i]) = [(0, 1), (0, 1), (0, 0), (1, 1)][r.below(4) as usize];
            }
        }
        Some((a, b, r.next()))
    } else {
        None
    }
}

fn gen_op(r: &mut Rng, st: &State, spec: &Spec) -> Op {
    let m = &st.m;
    let shape = &m.shape;
    let nd = shape.len();
    let cur = Spec { chunks: m.chunks.iter().map(|&c| c as i32).collect(), ..spec.clone() };
    loop {
        let op = match r.below(100) {
            0..=16 => {
                let (start, stop) = gen_box(r, shape, &m.chunks);
                Op::SetSlice { start, stop, pad: gen_pad(r, nd), seed: r.next() }
            }
            17..=26 => {
                let (start, stop) = gen_box(r, shape, &m.chunks);
                Op::GetSlice { start, stop, pad: gen_pad(r, nd) }
            }
            27..=40 => {
                let mut new = shape.clone();
                let several = r.chance(40);
                let one = r.below(nd as i64) as usize;
                for i in 0..nd {
                    if i == one || (several && r.chance(50)) {
                        new[i] = gen_new_len(r, shape[i], m.chunks[i]);
                    }
                }
                if !small(&new, &cur.chunks) {
                    continue;
                }
                let start = r.chance(50).then(|| {
                    (0..nd)
                        .map(|i| {
                            let d = new[i] - shape[i];
                            if d >= 0 {
                                gen_at(r, shape[i], m.chunks[i])
                            } else {
                                gen_at(r, shape[i] + d, m.chunks[i])
                            }
                        })
                        .collect()
                });
                Op::Resize { shape: new, start }
            }
            41..=48 => {
                let axis = r.below(nd as i64) as usize;
                let n = if r.chance(30) { m.chunks[axis] } else { r.range(0, 4) };
                let mut new = shape.clone();
                new[axis] += n;
                if !small(&new, &cur.chunks) {
                    continue;
                }
                if r.chance(30) {
                    Op::Append { axis, n, seed: r.next() }
                } else {
                    Op::Insert { axis, at: gen_at(r, shape[axis], m.chunks[axis]), n, seed: r.next() }
                }
            }
            49..=56 => {
                let axis = r.below(nd as i64) as usize;
                let s = shape[axis];
                let (start, len) = if r.chance(30) {
                    let c = m.chunks[axis];
                    let a = (r.below(s / c + 1) * c).min(s);
                    (a, c.min(s - a))
                } else {
                    let a = r.below(s + 1);
                    (a, r.below((s - a).min(5) + 1))
                };
                Op::Delete { axis, start, len }
            }
            57..=60 => {
                let n = m.nitems() as i64;
                if n == 0 {
                    continue;
                }
                Op::Points { idx: (0..r.range(0, 8)).map(|_| r.below(n)).collect() }
            }
            61..=64 => Op::GetOrth { sel: gen_selection(r, shape, false), pad: gen_pad(r, nd) },
            65..=68 => Op::SetOrth { sel: gen_selection(r, shape, true), seed: r.next() },
            69..=72 => {
                let to = if r.chance(50) { st.kind } else { KINDS[r.below(4) as usize] };
                Op::Copy { to, spec: gen_spec_for(r, shape, &cur), replace: r.chance(50) }
            }
            73..=75 => {
                let (start, stop) = gen_box(r, shape, &m.chunks);
                let to = if r.chance(50) { st.kind } else { KINDS[r.below(4) as usize] };
                let sh = box_shape(&start, &stop);
                Op::Slice { spec: gen_spec_for(r, &sh, &cur), start, stop, to, replace: r.chance(30) }
            }
            76..=78 => {
                let axis = r.below(nd as i64) as usize;
                let Some(other) = gen_other(r, shape, axis, &cur) else { continue };
                let mut s = shape.clone();
                s[axis] += other.len;
                let to = if r.chance(50) { st.kind } else { KINDS[r.below(4) as usize] };
                Op::Concat { axis, other, to, spec: gen_spec_for(r, &s, &cur), replace: r.chance(40) }
            }
            79..=83 => {
                let axis = r.below(nd as i64) as usize;
                let Some(other) = gen_other(r, shape, axis, &cur) else { continue };
                Op::Extend { axis, other }
            }
            84..=85 => {
                let axis = r.below(nd as i64) as usize;
                let mut s = shape.clone();
                s[axis] *= 2;
                if !small(&s, &cur.chunks) {
                    continue;
                }
                Op::ExtendSelf { axis }
            }
            86..=89 => {
                let vshape: Vec<i64> = shape.iter().copied().filter(|&s| s != 1).collect();
                let added = vec![false; vshape.len()];
                let write = gen_view_write(r, &vshape, &added);
                Op::Squeeze { write, derive: r.chance(40).then(|| r.next()) }
            }
            90..=93 => {
                let of_squeeze = r.chance(30);
                let bshape: Vec<i64> = if of_squeeze {
                    shape.iter().copied().filter(|&s| s != 1).collect()
                } else {
                    shape.clone()
                };
                let total = bshape.len() + r.range(if bshape.is_empty() { 1 } else { 0 }, 2) as usize;
                let mut axes = vec![false; total];
                let mut added = 0;
                while added < total - bshape.len() {
                    let k = r.below(total as i64) as usize;
                    if !axes[k] {
                        axes[k] = true;
                        added += 1;
                    }
                }
                let mut it = bshape.iter();
                let vshape: Vec<i64> =
                    axes.iter().map(|&new| if new { 1 } else { *it.next().unwrap() }).collect();
                let write = gen_view_write(r, &vshape, &axes);
                Op::Expand { axes, of_squeeze, write, derive: r.chance(40).then(|| r.next()) }
            }
            94..=95 => Op::Reopen,
            96..=97 => {
                let inner = gen_op(r, st, spec);
                if !matches!(
                    inner,
                    Op::SetSlice { .. }
                        | Op::SetOrth { .. }
                        | Op::Resize { .. }
                        | Op::Insert { .. }
                        | Op::Append { .. }
                        | Op::Delete { .. }
                        | Op::Extend { .. }
                ) {
                    continue;
                }
                Op::OtherHandle { inner: Box::new(inner), refresh: r.chance(50) }
            }
            _ => Op::Save,
        };
        return op;
    }
}

// ------------------------------------------------------------ running

/// Do one step and compare the whole array with the model (and every
/// `EVERY_REOPEN` steps done, reopen it and compare again); a panic in the
/// library is a failure too.
fn do_step(env: &mut Env, st: &mut State, op: &Op, done: &mut usize) -> Result<(), String> {
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        if exec(env, st, op)? {
            *done += 1;
            check(st.a(), &st.m, &format!("after {op:?}"))?;
            if (*done).is_multiple_of(EVERY_REOPEN) && st.kind != Kind::Mem {
                exec(env, st, &Op::Reopen)?;
                check(st.a(), &st.m, &format!("reopened after {op:?}"))?;
            }
        }
        Ok(())
    }));
    r.unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panic in {op:?}: {msg}"))
    })
}

/// Run `ops` from `init`; `Err((step, message))` at the first failure.
fn replay(env: &mut Env, kind: Kind, init: &Init, ops: &[Op]) -> Result<(), (usize, String)> {
    let (a, path, m) = env.make(kind, &init.shape, &init.spec, &init.fill).map_err(|e| (0, e))?;
    let mut st = State { kind, arr: Some(a), path, m };
    check(st.a(), &st.m, "the new array").map_err(|e| (0, e))?;
    let mut done = 0usize;
    for (k, op) in ops.iter().enumerate() {
        do_step(env, &mut st, op, &mut done).map_err(|e| (k, e))?;
    }
    Ok(())
}

/// The ops of a failing sequence that are needed for it to fail (greedy:
/// leave out runs of ops, then single ops, while it still fails).
fn minimise(tag: &str, kind: Kind, init: &Init, ops: &[Op]) -> Vec<Op> {
    let fails = |ops: &[Op]| {
        let mut env = Env::new(&format!("{tag}-min"));
        replay(&mut env, kind, init, ops).is_err()
    };
    let mut ops = ops.to_vec();
    let mut n = ops.len() / 2;
    while n >= 1 {
        let mut i = 0;
        while i < ops.len() {
            let mut t = ops.clone();
            t.drain(i..(i + n).min(ops.len()));
            if fails(&t) {
                ops = t;
            } else {
                i += n;
            }
        }
        n /= 2;
    }
    ops
}

const EVERY_REOPEN: usize = 5;

/// Seeds and steps per case: as given, or from `B2ND_MODEL_SEEDS` and
/// `B2ND_MODEL_STEPS` (longer runs to hunt for bugs).
fn run_case(tag: &str, kind: Kind, nd: usize, seeds: u64, steps: usize) {
    // Small arrays: every thread the blocks can feed, so the 2-thread codecs'
    // multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    // (Under Miri one short run: it is slow.)
    let (seeds, steps) = if cfg!(miri) { (1, 10) } else { (seeds, steps) };
    let env_num = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let seeds = env_num("B2ND_MODEL_SEEDS").unwrap_or(seeds);
    let steps = env_num("B2ND_MODEL_STEPS").map_or(steps, |s| s as usize);
    for seed in 0..seeds {
        let s = seed * 1000 + nd as u64 * 10 + kind as u64;
        let mut r = Rng::new(s);
        let init = gen_init(&mut r, nd);
        let mut env = Env::new(tag);
        let (a, path, m) = env.make(kind, &init.shape, &init.spec, &init.fill).unwrap();
        let mut st = State { kind, arr: Some(a), path, m };
        check(st.a(), &st.m, "the new array").unwrap();
        let mut ops = Vec::new();
        let mut failure = None;
        let mut done = 0usize;
        let mut stats = std::collections::BTreeMap::new();
        let (mut undefined, mut total) = (0usize, 0usize);
        for step in 0..steps {
            let op = gen_op(&mut r, &st, &init.spec);
            ops.push(op.clone());
            let res = do_step(&mut env, &mut st, &op, &mut done);
            if let Err(msg) = res {
                failure = Some((step, msg));
                break;
            }
            if std::env::var_os("B2ND_MODEL_STATS").is_some() {
                let name = format!("{op:?}");
                let name = name.split([' ', '{', '(']).next().unwrap().to_string();
                *stats.entry(name).or_insert(0usize) += 1;
                undefined += st.m.def.iter().filter(|&&d| !d).count();
                total += st.m.def.len();
            }
        }
        if std::env::var_os("B2ND_MODEL_STATS").is_some() {
            eprintln!(
                "{tag} seed {s}: {stats:?} executed {done}, undefined {undefined}/{total}, final shape {:?}",
                st.m.shape
            );
        }
        drop(st);
        if let Some((step, msg)) = failure {
            let mut report = format!("{tag}: seed {s}, step {step}: {msg}\ninit: {init:?}\n");
            if std::env::var_os("B2ND_MINIMISE").is_some() {
                let min = minimise(tag, kind, &init, &ops);
                let mut env = Env::new(&format!("{tag}-min"));
                let why = replay(&mut env, kind, &init, &min).err();
                report += &format!("minimal sequence ({} ops, fails with {why:?}):\n", min.len());
                for op in &min {
                    report += &format!("  {op:?}\n");
                }
            } else {
                report += "(run with B2ND_MINIMISE=1 for a minimal sequence)\n";
            }
            panic!("{report}");
        }
    }
}

macro_rules! cases {
    ($($(#[$attr:meta])* $name:ident: $kind:expr, $nd:expr, $seeds:expr, $steps:expr;)*) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                run_case(stringify!($name), $kind, $nd, $seeds, $steps);
            }
        )*
    };
}

cases! {
    memory_1d: Kind::Mem, 1, 12, 300;
    memory_2d: Kind::Mem, 2, 12, 300;
    memory_3d: Kind::Mem, 3, 12, 300;
    memory_4d: Kind::Mem, 4, 12, 300;
    memory_frame_1d: Kind::Frame, 1, 12, 300;
    memory_frame_2d: Kind::Frame, 2, 12, 300;
    memory_frame_3d: Kind::Frame, 3, 12, 300;
    memory_frame_4d: Kind::Frame, 4, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    file_frame_1d: Kind::File, 1, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    file_frame_2d: Kind::File, 2, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    file_frame_3d: Kind::File, 3, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    file_frame_4d: Kind::File, 4, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    sparse_dir_1d: Kind::Sparse, 1, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    sparse_dir_2d: Kind::Sparse, 2, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    sparse_dir_3d: Kind::Sparse, 3, 12, 300;
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    sparse_dir_4d: Kind::Sparse, 4, 12, 300;
}

// ------------------------------------------------------------ known bugs
//
// Minimal reproductions of what the random cases found (the random cases
// leave these inputs out on purpose; see `gen_view_write`).

fn small_array() -> Array {
    let ctx = Context::new(&[4], &[2], &[2], CParams { typesize: 4, ..CParams::default() }).dtype("<i4");
    Array::from_buffer(&ctx, &to_bytes(&[1, 2, 3, 4])).unwrap()
}

/// A plain array of shape [4, 1] takes the empty box [0, 0]..[4, 0] with an
/// empty buffer; the same box of a view of shape [4, 1] (a [4] array with a
/// dimension added) is refused: the view keeps the buffer shape [4, 0]'s
/// other lengths for the stored array ([4]), which wants 4 items.
#[test]
fn bug_expand_dims_view_empty_box_along_added_dim() {
    let ctx =
        Context::new(&[4, 1], &[2, 1], &[2, 1], CParams { typesize: 4, ..CParams::default() }).dtype("<i4");
    let mut plain = Array::zeros(&ctx).unwrap();
    plain.set_slice(&[0, 0], &[4, 0], &[]).unwrap();
    plain.get_slice(&[0, 0], &[4, 0], &mut []).unwrap();
    let mut v = small_array().expand_dims(&[false, true]).unwrap();
    assert_eq!(v.shape(), &[4, 1]);
    v.get_slice(&[0, 0], &[4, 0], &mut []).expect("get_slice of an empty box of the view");
    v.set_slice(&[0, 0], &[4, 0], &[]).expect("set_slice of an empty box of the view");
}

/// The same for orthogonal selections: an empty selection along an added
/// dimension is refused (a plain [4, 1] array takes it).
#[test]
fn bug_expand_dims_view_empty_selection_along_added_dim() {
    let ctx =
        Context::new(&[4, 1], &[2, 1], &[2, 1], CParams { typesize: 4, ..CParams::default() }).dtype("<i4");
    let mut plain = Array::zeros(&ctx).unwrap();
    let sel = [vec![0, 3], vec![]];
    plain.get_orthogonal(&sel, &mut [], &[2, 0]).unwrap();
    plain.set_orthogonal(&sel, &[], &[2, 0]).unwrap();
    let mut v = small_array().expand_dims(&[false, true]).unwrap();
    v.get_orthogonal(&sel, &mut [], &[2, 0]).expect("get_orthogonal of an empty selection of the view");
    v.set_orthogonal(&sel, &[], &[2, 0]).expect("set_orthogonal of an empty selection of the view");
}

/// Along a dimension of length 1, 1..1 is a valid (empty) range: a plain
/// array takes it, a view refuses it along an added dimension.
#[test]
fn bug_expand_dims_view_range_1_1_along_added_dim() {
    let ctx =
        Context::new(&[4, 1], &[2, 1], &[2, 1], CParams { typesize: 4, ..CParams::default() }).dtype("<i4");
    let mut plain = Array::zeros(&ctx).unwrap();
    plain.set_slice(&[0, 1], &[4, 1], &[]).unwrap();
    plain.get_slice(&[0, 1], &[4, 1], &mut []).unwrap();
    let mut v = small_array().expand_dims(&[false, true]).unwrap();
    v.get_slice(&[0, 1], &[4, 1], &mut []).expect("get_slice 1..1 along the added dimension");
    v.set_slice(&[0, 1], &[4, 1], &[]).expect("set_slice 1..1 along the added dimension");
}

/// A 0-dimensional array (here the squeezed view of a [1, 1] array) has one
/// item, at flat index 0: to_vec and get_slice give it, get_points refuses it.
#[test]
fn bug_get_points_of_a_0_dim_array() {
    let ctx =
        Context::new(&[1, 1], &[1, 1], &[1, 1], CParams { typesize: 4, ..CParams::default() }).dtype("<i4");
    let a = Array::from_buffer(&ctx, &to_bytes(&[7])).unwrap();
    let v = a.squeeze().unwrap();
    assert_eq!(v.shape(), &[] as &[i64]);
    assert_eq!(from_bytes(&v.to_vec().unwrap()), vec![7]);
    let mut one = [0u8; 4];
    v.get_slice(&[], &[], &mut one).unwrap();
    assert_eq!(from_bytes(&one), vec![7]);
    let mut buf = [0u8; 4];
    v.get_points(&[0], &mut buf).expect("get_points [0] of a 0-dimensional view");
    assert_eq!(from_bytes(&buf), vec![7]);
}
