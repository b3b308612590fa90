//! Decompressing chunks, whole or in part (getitem), on one or more threads.

use super::blocks::BlockSink;
use super::header::{Header, Special, MAX_FILTERS};
use super::hooks::{Postfilter, PostfilterBlock};
use super::pipeline;
use super::pool::{Scratch, Workers};
use super::special;
use super::view::{ChunkView, LazySource, LazyTrailer};
use crate::codecs::{self, DDict, ZstdDDict};
use crate::error::{Error, Result};
use crate::params::{DParams, SchunkView};
use crate::plugins::{self, DecodeInfo};
use std::sync::{Arc, Mutex};

/// A decompression context: parameters, worker threads and their scratch.
pub struct Decompressor {
    params: DParams,
    workers: Workers,
    maskout: Option<Vec<bool>>,
    postfilter: Option<Arc<dyn Postfilter>>,
    /// The number of the chunk being decompressed in its super-chunk (for postfilters).
    nchunk: Option<i64>,
}

/// The dictionary of a chunk, digested for its codec.
enum ChunkDict<'a> {
    None,
    Lz4(&'a [u8]),
    Owned(Vec<u8>),
    Zstd(ZstdDDict),
}

impl ChunkDict<'_> {
    fn as_ddict(&self) -> Option<DDict<'_>> {
        match self {
            ChunkDict::None => None,
            ChunkDict::Lz4(b) => Some(DDict::Lz4(b)),
            ChunkDict::Owned(b) => Some(DDict::Lz4(b)),
            ChunkDict::Zstd(d) => Some(DDict::Zstd(d)),
        }
    }
}

/// Blocks are split into at most this many streams (one per item byte) by
/// c-blosc2; a chunk that claims more is decoded the general way.
const MAX_SPLIT_STREAMS: usize = 16;

/// What [`Decoder::stream`] did with a stream.
#[derive(Clone, Copy)]
enum Stream {
    /// Decoded (or copied) into its target, or skipped.
    Written,
    /// A run of this byte (written into the target unless in place).
    Run(u8),
    /// Stored as is at this offset of the block's data, left there.
    Stored(usize),
}

/// What decoding one block needs to know about its chunk.
struct Decoder<'a> {
    view: &'a ChunkView<'a>,
    source: Option<&'a dyn LazySource>,
    dict: ChunkDict<'a>,
    typesize: usize,
    blocksize: usize,
    nblocks: usize,
    filters: [u8; MAX_FILTERS],
    /// The decompression's owner, for user codecs and filters.
    owner: usize,
    /// The super-chunk decompressed from, for the plugins that need it.
    schunk: Option<&'a SchunkView>,
}

impl<'a> Decoder<'a> {
    fn new(
        view: &'a ChunkView<'a>,
        source: Option<&'a dyn LazySource>,
        params: &'a DParams,
    ) -> Result<Decoder<'a>> {
        let h = &view.header;
        let source = match (view.lazy, source) {
            (Some(_), None) => return Err(Error::InvalidParam),
            (Some(_), s) => s,
            (None, _) => None,
        };
        let lazy_dict = match (view.lazy, source) {
            (Some(l), Some(src)) if h.use_dict() && !h.memcpyed() => Some(read_lazy_dict(view, l, src)?),
            _ => None,
        };
        let dict = match (view.dict, lazy_dict) {
            (None, None) => ChunkDict::None,
            (_, Some(d)) if h.compformat() == 4 => {
                ChunkDict::Zstd(ZstdDDict::new(&d).ok_or(Error::CodecDict)?)
            }
            (_, Some(d)) => ChunkDict::Owned(d),
            (Some(d), None) if h.compformat() == 4 => {
                ChunkDict::Zstd(ZstdDDict::new(d).ok_or(Error::CodecDict)?)
            }
            (Some(d), None) => ChunkDict::Lz4(d),
        };
        let filters = h.filters;
        if h.special() == Special::None && !h.memcpyed() {
            pipeline::check(&filters)?;
        }
        Ok(Decoder {
            view,
            source,
            dict,
            typesize: usize::from(h.typesize),
            blocksize: h.blocksize as usize,
            nblocks: h.nblocks(),
            filters,
            owner: params.owner,
            schunk: params.schunk.as_ref(),
        })
    }

    fn block_len(&self, j: usize) -> usize {
        let n = self.view.header.nbytes as usize;
        (n - j * self.blocksize).min(self.blocksize)
    }

    /// Ready a thread's scratch for this chunk's blocks: buffers of `ebsize`
    /// bytes, a lazy chunk's block buffer and the codec's context.
    fn prepare(&self, s: &mut Scratch, ebsize: usize) {
        s.reserve(ebsize);
        if self.view.lazy.is_some() {
            let max = self.blocksize + self.typesize * 4;
            if s.lazy.len() < max {
                s.lazy = vec![0u8; max];
            }
        }
        s.codec.prepare_decompress(self.view.header.compformat());
    }

    fn needs_reference(&self) -> bool {
        self.filters.contains(&super::header::filter::DELTA)
    }

    /// Where block `j`'s stored bytes are: the chunk itself and their offset
    /// in it, or (lazy chunks) `lazy`, filled from the frame, and 0.
    fn block_data<'s>(&'s self, j: usize, bsize: usize, lazy: &'s mut Vec<u8>) -> Result<(&'s [u8], usize)> {
        let h = &self.view.header;
        let stored_at = if h.memcpyed() {
            h.header_len() + j * self.blocksize
        } else {
            self.view.bstart(j).max(0) as usize
        };
        match (self.view.lazy, self.source) {
            (Some(l), Some(source)) => {
                let csize = l.block_csize(j).ok_or(Error::InvalidHeader)?;
                let max = (self.blocksize + self.typesize * 4).max(bsize);
                let fits = stored_at > 0 && stored_at + csize.max(0) as usize <= h.cbytes as usize;
                if csize <= 0 || csize as usize > max || !fits {
                    return Err(Error::InvalidHeader);
                }
                let csize = csize as usize;
                if lazy.len() < csize {
                    lazy.resize(csize, 0);
                }
                source.read(l.nchunk, l.offset, stored_at as i64, &mut lazy[..csize])?;
                Ok((&lazy[..csize], 0))
            }
            _ => {
                if !h.memcpyed() && (self.view.bstart(j) <= 0 || stored_at >= self.view.data.len()) {
                    return Err(Error::Data);
                }
                Ok((self.view.data, stored_at))
            }
        }
    }

    /// Decode the stream at `data[*pos..]` (its 4-byte size first) into
    /// `target` (the stream's full decoded size), at least its first `want`
    /// bytes; `*pos` moves past the stream.  `want == 0` only skips it.
    /// With `in_place`, a stream stored as a run of one byte or as is (not
    /// compressed) is not written into `target`: the answer says where its
    /// bytes are instead.
    fn stream(
        &self,
        data: &[u8],
        pos: &mut usize,
        target: &mut [u8],
        want: usize,
        in_place: bool,
        codec: &mut codecs::CodecState,
    ) -> Result<Stream> {
        let h = &self.view.header;
        let csize = read_i32(data, *pos).ok_or(Error::ReadBuffer)?;
        *pos += 4;
        let want = want.min(target.len());
        let run_len = if in_place { 0 } else { want };
        if csize == 0 {
            target[..run_len].fill(0);
            return Ok(Stream::Run(0));
        } else if csize < 0 {
            let token = *data.get(*pos).ok_or(Error::ReadBuffer)?;
            *pos += 1;
            if token & 0x1 == 0 || csize < -255 {
                return Err(Error::RunLength);
            }
            target[..run_len].fill((-csize) as u8);
            return Ok(Stream::Run((-csize) as u8));
        } else {
            let c = csize as usize;
            let at = *pos;
            let stream = data.get(at..at + c).ok_or(Error::ReadBuffer)?;
            *pos += c;
            if want == 0 {
                return Ok(Stream::Written);
            }
            let neblock = target.len();
            if c == neblock && in_place {
                return Ok(Stream::Stored(at));
            } else if c == neblock {
                target[..want].copy_from_slice(&stream[..want]);
            } else if h.compformat() == codecs::FORMAT_UDCODEC {
                let u = plugins::codec(h.udcompcode).ok_or(Error::CodecSupport)?;
                let info = DecodeInfo {
                    typesize: i32::from(h.typesize),
                    owner: self.owner,
                    chunk: self.view.data,
                    schunk: self.schunk,
                };
                if u.decode(stream, target, h.compcode_meta, &info).map_err(plugins::codec_failure)?
                    != neblock
                {
                    return Err(Error::Data);
                }
            } else {
                let dict = self.dict.as_ddict();
                codecs::decompress_prefix(h.compformat(), stream, target, want, dict.as_ref(), codec)?;
            }
        }
        Ok(Stream::Written)
    }

    /// The number of streams block `j` is stored in.
    fn nstreams(&self, j: usize) -> usize {
        let h = &self.view.header;
        let leftover = j + 1 == self.nblocks && h.leftover() > 0;
        if !h.dont_split() && !leftover {
            self.typesize
        } else {
            1
        }
    }

    /// Decode block `j` into `out` (its full length). `reference` is the
    /// decoded block 0 (used by delta for later blocks).
    fn block(&self, j: usize, out: &mut [u8], reference: &[u8], s: &mut Scratch) -> Result<()> {
        let h = &self.view.header;
        let bsize = out.len();
        let Scratch { tmp1, tmp2, codec, lazy, .. } = s;
        let (data, start) = self.block_data(j, bsize, lazy)?;
        if h.memcpyed() {
            out.copy_from_slice(data.get(start..start + bsize).ok_or(Error::ReadBuffer)?);
            return Ok(());
        }
        let nstreams = self.nstreams(j);
        let neblock = bsize / nstreams;
        if neblock == 0 || neblock * nstreams != bsize {
            return Err(Error::Data);
        }
        let steps = pipeline::out_of_place_steps(&self.filters);
        // A block shuffled and split by item byte: planes stored as runs
        // (the zero high bytes of small integers, say) are made by the
        // unshuffle itself, not written out and read back, and planes
        // stored as is (the noisy low bytes of floats) are read in the
        // chunk, not copied out first. So is a shuffled block stored whole.
        let shuffled = self.plain_shuffle() == Some(true);
        let planes_to_unshuffle = shuffled && nstreams == self.typesize && nstreams <= MAX_SPLIT_STREAMS;
        let whole_to_unshuffle = shuffled && nstreams == 1;
        let in_place = (planes_to_unshuffle && nstreams > 1) || whole_to_unshuffle;
        let mut planes = [Stream::Written; MAX_SPLIT_STREAMS];
        let dest: &mut [u8] = if steps == 0 { &mut *out } else { &mut tmp1[..bsize] };
        let mut pos = start;
        for (k, target) in dest.chunks_exact_mut(neblock).enumerate() {
            let got = self.stream(data, &mut pos, target, neblock, in_place, codec)?;
            if in_place && k < MAX_SPLIT_STREAMS {
                planes[k] = got;
            }
        }
        if in_place && whole_to_unshuffle {
            let tmp = &mut tmp1[..bsize];
            match planes[0] {
                Stream::Written => crate::filters::shuffle::unshuffle(self.typesize, tmp, out),
                Stream::Stored(at) => {
                    crate::filters::shuffle::unshuffle(self.typesize, &data[at..at + bsize], out)
                }
                Stream::Run(b) => out.fill(b),
            }
            return Ok(());
        }
        if in_place {
            use crate::filters::shuffle::{unshuffle_planes, Plane};
            let mut where_ = [Plane::Scratch; MAX_SPLIT_STREAMS];
            for (w, got) in where_.iter_mut().zip(&planes[..nstreams]) {
                *w = match *got {
                    Stream::Written => Plane::Scratch,
                    Stream::Run(b) => Plane::Run(b),
                    Stream::Stored(at) => Plane::Bytes(&data[at..at + neblock]),
                };
            }
            unshuffle_planes(self.typesize, &mut tmp1[..bsize], &where_[..nstreams], out);
            return Ok(());
        }
        if steps == 0 && !self.needs_reference() {
            return Ok(());
        }
        let f = self.filters;
        let info = DecodeInfo {
            typesize: i32::from(h.typesize),
            owner: self.owner,
            chunk: self.view.data,
            schunk: self.schunk,
        };
        pipeline::backward(
            &f,
            &h.filters_meta,
            self.typesize,
            h.version,
            j == 0,
            reference,
            out,
            tmp1,
            tmp2,
            Some(&info),
        )
    }

    /// See [`pipeline::plain_shuffle`].
    fn plain_shuffle(&self) -> Option<bool> {
        pipeline::plain_shuffle(&self.filters, &self.view.header.filters_meta, self.typesize)
    }

    /// Bytes `lo..hi` of block `j` into `out` (`hi - lo` bytes), decoding
    /// each stream only as far as the range needs: the streams before the
    /// range are skipped, and a shuffled block split by item byte needs
    /// from every stream only the bytes up to the range's last item.
    /// `Ok(false)` when the block needs decoding whole (other filters,
    /// a shuffle across a single stream, user codecs): `out` is untouched.
    fn block_range(&self, j: usize, lo: usize, hi: usize, out: &mut [u8], s: &mut Scratch) -> Result<bool> {
        let h = &self.view.header;
        let ts = self.typesize;
        if h.memcpyed() || h.compformat() == codecs::FORMAT_UDCODEC || !(lo < hi && hi <= self.block_len(j)) {
            return Ok(false);
        }
        let Some(shuffled) = self.plain_shuffle() else {
            return Ok(false);
        };
        let bsize = self.block_len(j);
        let nstreams = self.nstreams(j);
        let neblock = bsize / nstreams;
        if neblock == 0 || neblock * nstreams != bsize {
            return Err(Error::Data);
        }
        if shuffled && (nstreams != ts || !lo.is_multiple_of(ts) || !hi.is_multiple_of(ts)) {
            return Ok(false);
        }
        let Scratch { tmp1, codec, lazy, .. } = s;
        let (data, mut pos) = self.block_data(j, bsize, lazy)?;
        let tmp = &mut tmp1[..bsize];
        for (k, target) in tmp.chunks_exact_mut(neblock).enumerate() {
            let want = if shuffled {
                hi / ts
            } else if k * neblock >= hi {
                break;
            } else if (k + 1) * neblock <= lo {
                0
            } else {
                hi - k * neblock
            };
            self.stream(data, &mut pos, target, want, false, codec)?;
        }
        if shuffled {
            let (a, b) = (lo / ts, hi / ts);
            crate::filters::shuffle::transpose(&tmp[a..], neblock, out, ts, ts, b - a);
        } else {
            out.copy_from_slice(&tmp[lo..hi]);
        }
        Ok(true)
    }
}

/// Read the dictionary of a lazy chunk from its frame.
fn read_lazy_dict(view: &ChunkView, l: LazyTrailer, source: &dyn LazySource) -> Result<Vec<u8>> {
    let at = view.bstarts_end as i64;
    let cbytes = i64::from(view.header.cbytes);
    if at + 4 > cbytes {
        return Err(Error::InvalidHeader);
    }
    let mut size = [0u8; 4];
    source.read(l.nchunk, l.offset, at, &mut size)?;
    let size = i32::from_le_bytes(size);
    if size <= 0 || size as usize > super::view::MAX_DICT_SIZE {
        return Err(Error::CodecDict);
    }
    if at + 4 + i64::from(size) > cbytes {
        return Err(Error::InvalidHeader);
    }
    let mut dict = vec![0u8; size as usize];
    source.read(l.nchunk, l.offset, at + 4, &mut dict)?;
    Ok(dict)
}

fn read_i32(data: &[u8], pos: usize) -> Option<i32> {
    let b = data.get(pos..pos.checked_add(4)?)?;
    Some(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl Decompressor {
    pub fn new(params: DParams) -> Decompressor {
        let workers = Workers::new(params.nthreads);
        Decompressor { params, workers, maskout: None, postfilter: None, nchunk: None }
    }

    pub fn params(&self) -> &DParams {
        &self.params
    }

    pub fn set_nthreads(&mut self, nthreads: i16) {
        self.params.nthreads = nthreads.max(1);
        self.workers.set_nthreads(nthreads);
    }

    /// Skip the blocks marked `true` in the next `decompress` call only.
    pub fn set_maskout(&mut self, mask: &[bool]) {
        self.maskout = Some(mask.to_vec());
    }

    /// Run `postfilter` on every decoded block.
    pub fn set_postfilter(&mut self, postfilter: Option<Arc<dyn Postfilter>>) {
        self.postfilter = postfilter;
    }

    pub fn postfilter(&self) -> Option<&Arc<dyn Postfilter>> {
        self.postfilter.as_ref()
    }

    /// The number of the next chunk in its super-chunk (told to postfilters).
    pub fn set_nchunk(&mut self, nchunk: Option<i64>) {
        self.nchunk = nchunk;
    }

    /// Pass every decoded block of `dst` (the whole chunk) through the postfilter.
    fn postfiltered(
        &self,
        post: &Arc<dyn Postfilter>,
        dst: &mut [u8],
        blocksize: usize,
        typesize: i32,
        mask: Option<&[bool]>,
    ) -> Result<()> {
        let mut input = vec![0u8; blocksize.min(dst.len())];
        let mut tmp = vec![0u8; 4 * blocksize + 64];
        for (j, out) in dst.chunks_mut(blocksize).enumerate() {
            if mask.is_some_and(|m| m.get(j).copied().unwrap_or(false)) {
                continue;
            }
            let input = &mut input[..out.len()];
            input.copy_from_slice(out);
            let mut b = PostfilterBlock {
                input,
                output: out,
                typesize,
                offset: j * blocksize,
                nblock: j,
                nchunk: self.nchunk,
                tid: 0,
                tmp: &mut tmp,
            };
            post.apply(&mut b).map_err(|_| Error::Postfilter)?;
        }
        Ok(())
    }

    /// Decompress a whole chunk into `dst`; returns the number of bytes written.
    /// Lazy chunks need [`Decompressor::decompress_lazy`].
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.decompress_lazy(src, dst, None)
    }

    /// Decompress a chunk that may be lazy, reading its blocks from `source`.
    pub fn decompress_lazy(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        let Some(post) = self.postfilter.clone() else {
            return self.decompress_plain(src, dst, source);
        };
        let mask = self.maskout.clone();
        let n = self.decompress_plain(src, dst, source)?;
        let h = super::header::Header::parse(src)?;
        if n > 0 && !h.vlblocks() {
            self.postfiltered(
                &post,
                &mut dst[..n],
                h.blocksize.max(1) as usize,
                i32::from(h.typesize),
                mask.as_deref(),
            )?;
        }
        Ok(n)
    }

    fn decompress_plain(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        let maskout = self.maskout.take();
        if super::header::Header::parse(src)?.nbytes as usize > dst.len() {
            return Err(Error::WriteBuffer);
        }
        let view = ChunkView::open(src)?;
        let h = view.header;
        let nbytes = h.nbytes as usize;
        if nbytes == 0 {
            return Ok(0);
        }
        if h.vlblocks() {
            return super::vlblocks::decompress_all(&view, dst, &mut self.workers.scratch());
        }
        let dst = &mut dst[..nbytes];
        if h.special() != Special::None {
            special::fill(&view, dst)?;
            return Ok(nbytes);
        }
        let dec = Decoder::new(&view, source, &self.params)?;
        if let Some(m) = &maskout {
            if m.len() != dec.nblocks {
                return Err(Error::Data);
            }
        }
        let masked = |j: usize| maskout.as_ref().is_some_and(|m| m[j]);
        let ebsize = dec.blocksize + 8;
        let bs = dec.blocksize;
        // With delta, block 0 is the reference of the others: decode it first.
        let head = if dec.needs_reference() { bs.min(nbytes) } else { 0 };
        let skip = usize::from(head > 0);
        let (first, rest) = dst.split_at_mut(head);
        if head > 0 && !masked(0) {
            let mut s = self.workers.scratch();
            s.reserve(ebsize);
            dec.block(0, first, &[], &mut s)?;
        }
        let reference: &[u8] = first;
        self.workers.ready()?;
        let prepare = |s: &mut Scratch| dec.prepare(s, ebsize);
        match self.workers.threads_for(dec.nblocks, nbytes) {
            t if t > 1 && dec.nblocks > 2 => {
                let error: Mutex<Option<Error>> = Mutex::new(None);
                // Each job takes the next block's slice of the output (no
                // per-call list of slices: nothing is allocated here).
                let njobs = rest.len().div_ceil(bs);
                let bytes = rest.len();
                let pieces = Mutex::new(rest.chunks_mut(bs).enumerate());
                self.workers.for_each(njobs, bytes, &prepare, &|_, s| {
                    let Some((i, out)) = pieces.lock().unwrap_or_else(|e| e.into_inner()).next() else {
                        return;
                    };
                    if masked(i + skip) {
                        return;
                    }
                    if let Err(e) = dec.block(i + skip, out, reference, s) {
                        *error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                });
                if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
                    return Err(e);
                }
            }
            _ => {
                let mut s = self.workers.scratch();
                prepare(&mut s);
                for (i, out) in rest.chunks_mut(bs).enumerate() {
                    if !masked(i + skip) {
                        dec.block(i + skip, out, reference, &mut s)?;
                    }
                }
            }
        }
        Ok(nbytes)
    }

    /// Decode the blocks of a chunk (lazy or not) that `sink` wants and hand
    /// each to it, from the thread that decoded it: no chunk-sized buffer
    /// when the chunk's blocks are the sink's. Chunks that need a whole
    /// decoding (postfilters, delta, variable-length blocks, other block
    /// sizes) are decoded into one buffer first.
    pub fn decompress_to(
        &mut self,
        src: &[u8],
        source: Option<&dyn LazySource>,
        sink: &dyn BlockSink,
    ) -> Result<()> {
        let maskout = self.maskout.take();
        let view = ChunkView::open(src)?;
        let h = view.header;
        let nbytes = h.nbytes.max(0) as usize;
        if nbytes == 0 {
            return Ok(());
        }
        let bb = sink.block_bytes();
        let plain = self.postfilter.is_none()
            && maskout.is_none()
            && !h.vlblocks()
            && h.blocksize as usize == bb
            && bb > 0;
        if plain && h.special() != Special::None {
            let mut s = self.workers.scratch();
            s.reserve(bb);
            for j in (0..nbytes.div_ceil(bb)).filter(|&j| sink.wants(j)) {
                let out = &mut s.tmp1[..bb.min(nbytes - j * bb)];
                out.fill(0);
                special::fill_range(&view, j * bb, out)?;
                sink.put(j, out)?;
            }
            return Ok(());
        }
        let dec = if plain && h.special() == Special::None {
            Some(Decoder::new(&view, source, &self.params)?)
        } else {
            None
        };
        let Some(dec) = dec.filter(|d| !d.needs_reference()) else {
            // The whole chunk, then its blocks.
            if let Some(m) = maskout {
                self.maskout = Some(m);
            }
            let mut all = vec![0u8; nbytes];
            self.decompress_lazy(src, &mut all, source)?;
            return super::blocks::put_all(&all, sink);
        };
        let wanted = (0..dec.nblocks).filter(|&j| sink.wants(j)).count();
        let ebsize = dec.blocksize + 8;
        let one = |j: usize, s: &mut Scratch| -> Result<()> {
            let mut out = std::mem::take(&mut s.tmp3);
            let len = dec.block_len(j);
            // A block the sink reads only part of decodes only as far as
            // that part needs, when its layout allows.
            let (lo, hi) = sink.span(j, len);
            let (lo, hi) = (lo.min(len), hi.min(len));
            let partial = (lo, hi) != (0, len) && lo < hi;
            let r = (|| {
                if !(partial && dec.block_range(j, lo, hi, &mut out[lo..hi], s)?) {
                    dec.block(j, &mut out[..len], &[], s)?;
                }
                sink.put(j, &out[..len])
            })();
            s.tmp3 = out;
            r
        };
        self.workers.ready()?;
        let prepare = |s: &mut Scratch| dec.prepare(s, ebsize);
        if self.workers.threads_for(wanted, wanted * bb) > 1 {
            let error: Mutex<Option<Error>> = Mutex::new(None);
            // Each job takes the next wanted block.
            let blocks = Mutex::new((0..dec.nblocks).filter(|&j| sink.wants(j)));
            self.workers.for_each(wanted, wanted * bb, &prepare, &|_, s| {
                let Some(j) = blocks.lock().unwrap_or_else(|e| e.into_inner()).next() else {
                    return;
                };
                if let Err(e) = one(j, s) {
                    *error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                }
            });
            if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
                return Err(e);
            }
        } else {
            let mut s = self.workers.scratch();
            prepare(&mut s);
            for j in (0..dec.nblocks).filter(|&j| sink.wants(j)) {
                one(j, &mut s)?;
            }
        }
        Ok(())
    }

    /// Copy `nitems` items of the chunk's typesize, starting at item `start`,
    /// into `dst`. Only the blocks holding them are decoded.
    pub fn getitem(&mut self, src: &[u8], start: i64, nitems: i64, dst: &mut [u8]) -> Result<usize> {
        let h = ChunkView::open(src)?.header;
        let ts = i64::from(h.typesize);
        self.getitem_bytes(
            src,
            start.checked_mul(ts).ok_or(Error::InvalidParam)?,
            nitems.checked_mul(ts).ok_or(Error::WriteBuffer)?,
            dst,
        )
    }

    /// Copy `nbytes` bytes of the decoded chunk starting at byte `start` into `dst`.
    pub fn getitem_bytes(&mut self, src: &[u8], start: i64, nbytes: i64, dst: &mut [u8]) -> Result<usize> {
        self.getitem_bytes_lazy(src, start, nbytes, dst, None)
    }

    /// [`Decompressor::getitem_bytes`] for chunks that may be lazy: only the
    /// blocks holding the range are read from `source`.
    pub fn getitem_bytes_lazy(
        &mut self,
        src: &[u8],
        start: i64,
        nbytes: i64,
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        if self.postfilter.is_some() && nbytes > 0 {
            return self.getitem_postfiltered(src, start, nbytes, dst, source);
        }
        let view = ChunkView::open(src)?;
        let h = view.header;
        if nbytes == 0 {
            return Ok(0);
        }
        let (start, stop) = item_range(&h, start, nbytes, dst.len())?;
        let dst = &mut dst[..stop - start];
        if h.vlblocks() {
            return super::vlblocks::getitem(&view, start, dst, &mut self.workers.scratch());
        }
        if h.special() != Special::None {
            special::fill_range(&view, start, dst)?;
            return Ok(dst.len());
        }
        if h.memcpyed() && view.lazy.is_none() {
            let hl = h.header_len();
            dst.copy_from_slice(view.data.get(hl + start..hl + stop).ok_or(Error::ReadBuffer)?);
            return Ok(dst.len());
        }
        let dec = Decoder::new(&view, source, &self.params)?;
        Self::getitem_blocks(&mut self.workers, &dec, start, stop, dst).map(|()| dst.len())
    }

    /// The range of a chunk with a postfilter, which sees whole blocks: the
    /// chunk decoded, then the range copied.
    fn getitem_postfiltered(
        &mut self,
        src: &[u8],
        start: i64,
        nbytes: i64,
        dst: &mut [u8],
        source: Option<&dyn LazySource>,
    ) -> Result<usize> {
        let n = ChunkView::open(src)?.header.nbytes.max(0) as usize;
        let start = usize::try_from(start).map_err(|_| Error::InvalidParam)?;
        let len = usize::try_from(nbytes).map_err(|_| Error::InvalidParam)?;
        if start.checked_add(len).is_none_or(|e| e > n) {
            return Err(Error::InvalidParam);
        }
        if len > dst.len() {
            return Err(Error::WriteBuffer);
        }
        let mut all = vec![0u8; n];
        self.decompress_lazy(src, &mut all, source)?;
        dst[..len].copy_from_slice(&all[start..start + len]);
        Ok(len)
    }

    /// Bytes `start..stop` of the blocks `dec` decodes into `dst`. Blocks
    /// wholly inside the range decode straight into `dst` (in parallel when
    /// the context has threads); the partial ones at either end go through a
    /// scratch block.
    fn getitem_blocks(
        workers: &mut Workers,
        dec: &Decoder<'_>,
        start: usize,
        stop: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let bs = dec.blocksize;
        let first_full = start.div_ceil(bs);
        let mut end_full = stop / bs;
        if stop == dec.view.header.nbytes as usize {
            end_full = dec.nblocks;
        }
        let end_full = end_full.max(first_full);
        let mut s = workers.scratch();
        s.reserve(bs + 8);
        // Delta needs the decoded block 0 as reference for later blocks.
        let mut reference = std::mem::take(&mut s.tmp4);
        let mut block = std::mem::take(&mut s.tmp3);
        let result = (|| {
            if dec.needs_reference() && stop > bs {
                dec.block(0, &mut reference[..dec.block_len(0)], &[], &mut s)?;
            }
            for j in start / bs..=(stop - 1) / bs {
                if (first_full..end_full).contains(&j) {
                    continue;
                }
                let b0 = j * bs;
                let blen = dec.block_len(j);
                let (lo, hi) = (start.max(b0) - b0, stop.min(b0 + blen) - b0);
                let out = &mut dst[b0 + lo - start..b0 + hi - start];
                if !dec.block_range(j, lo, hi, out, &mut s)? {
                    dec.block(j, &mut block[..blen], &reference, &mut s)?;
                    out.copy_from_slice(&block[lo..hi]);
                }
            }
            Ok(())
        })();
        drop(s);
        let result = result.and_then(|()| {
            if first_full >= end_full {
                return Ok(());
            }
            let full = &mut dst[first_full * bs - start..(end_full * bs).min(stop) - start];
            Self::full_blocks(workers, dec, first_full, full, &reference)
        });
        let mut s = workers.scratch();
        s.tmp3 = block;
        s.tmp4 = reference;
        result
    }

    /// Blocks `first..` decoded into `full` (a whole number of blocks, but
    /// perhaps the chunk's last), on the context's threads.
    fn full_blocks(
        workers: &mut Workers,
        dec: &Decoder<'_>,
        first: usize,
        full: &mut [u8],
        reference: &[u8],
    ) -> Result<()> {
        let bs = dec.blocksize;
        workers.ready()?;
        let n = full.len().div_ceil(bs);
        let prepare = |s: &mut Scratch| dec.prepare(s, bs + 8);
        match workers.threads_for(n, full.len()) {
            t if t > 1 && n > 2 => {
                let error: Mutex<Option<Error>> = Mutex::new(None);
                // Each job takes the next block's slice of the output.
                let bytes = full.len();
                let pieces = Mutex::new(full.chunks_mut(bs).enumerate());
                workers.for_each(n, bytes, &prepare, &|_, s| {
                    let Some((i, out)) = pieces.lock().unwrap_or_else(|e| e.into_inner()).next() else {
                        return;
                    };
                    if let Err(e) = dec.block(first + i, out, reference, s) {
                        *error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                });
                error.into_inner().unwrap_or_else(|e| e.into_inner()).map_or(Ok(()), Err)
            }
            _ => {
                let mut s = workers.scratch();
                prepare(&mut s);
                for (i, out) in full.chunks_mut(bs).enumerate() {
                    dec.block(first + i, out, reference, &mut s)?;
                }
                Ok(())
            }
        }
    }
}

impl Decompressor {
    /// The decoded size of every block of a variable-length-block chunk.
    pub fn vl_block_sizes(&self, src: &[u8]) -> Result<Vec<usize>> {
        let view = ChunkView::open(src)?;
        if !view.header.vlblocks() {
            return Err(Error::InvalidParam);
        }
        Ok(super::vlblocks::layout(&view)?.blocks.iter().map(|b| b.2).collect())
    }

    /// Decode block `nblock` of a variable-length-block chunk into `out`
    /// (exactly the block's size, see [`Decompressor::vl_block_sizes`]).
    pub fn vl_decompress_block(&mut self, src: &[u8], nblock: usize, out: &mut [u8]) -> Result<usize> {
        let view = ChunkView::open(src)?;
        if !view.header.vlblocks() {
            return Err(Error::InvalidParam);
        }
        let l = super::vlblocks::layout(&view)?;
        let b = *l.blocks.get(nblock).ok_or(Error::InvalidParam)?;
        if out.len() != b.2 {
            return Err(Error::WriteBuffer);
        }
        super::vlblocks::decode_block(&view, b, out, &mut self.workers.scratch())?;
        Ok(b.2)
    }
}

/// The byte range `start..start + nbytes` of a chunk with header `h`, checked
/// (whole items, inside the chunk, fitting `room` bytes of output).
fn item_range(h: &Header, start: i64, nbytes: i64, room: usize) -> Result<(usize, usize)> {
    if nbytes < 0 {
        return Err(Error::InvalidParam);
    }
    if nbytes > i64::from(i32::MAX) || nbytes as usize > room {
        return Err(Error::WriteBuffer);
    }
    let stop = start.checked_add(nbytes).ok_or(Error::InvalidParam)?;
    if start < 0 || stop > i64::from(h.nbytes) {
        return Err(Error::InvalidParam);
    }
    // Ranges are whole items of the stored typesize (1 for typesizes above 255).
    let ts = i64::from(h.typesize.max(1));
    if start % ts != 0 || nbytes % ts != 0 {
        return Err(Error::InvalidParam);
    }
    Ok((start as usize, stop as usize))
}
