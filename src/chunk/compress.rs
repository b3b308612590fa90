//! Compressing a buffer into one chunk (README_CHUNK_FORMAT.rst: header,
//! bstarts, optional dictionary, streams).

use super::blocks::{self, BlockSource};
use super::blocksize;
use super::header::{
    blosc2_flags, filter, flags, flags_from_filters, Header, EXTENDED_HEADER_LENGTH, MAX_BUFFERSIZE,
    MAX_TYPESIZE, MIN_BUFFERSIZE, MIN_HEADER_LENGTH, VERSION_FORMAT_STABLE,
};
use super::hooks::{Prefilter, PrefilterBlock};
use super::pipeline;
use super::pool::{Scratch, Workers};
use crate::codecs::{self, Codec, Dict};
use crate::error::{Error, Result};
use crate::params::CParams;
use crate::plugins::{self, EncodeInfo, UserCodec};
use std::sync::{Arc, Mutex};

/// Largest dictionary a chunk may hold.
pub const MAX_DICT_SIZE: usize = 32 * 1024;
/// Smaller dictionaries are not worth it: compress without one.
pub const MIN_USEFUL_DICT: usize = 256;

/// A compression context: parameters, worker threads and their scratch space.
pub struct Compressor {
    params: CParams,
    workers: Workers,
    /// Write Blosc1 (16-byte) headers, as `BLOSC_BLOSC1_COMPAT` asks.
    pub blosc1_header: bool,
    /// Keep each call's block size as the forced block size of the next call,
    /// as a reused c-blosc2 compression context does (see [`Compressor::sticky`]).
    sticky_blocksize: bool,
    prefilter: Option<Arc<dyn Prefilter>>,
    /// The number of the chunk being compressed in its super-chunk (for prefilters).
    nchunk: Option<i64>,
    /// A chunk made contiguous, for block sources on the paths that need it.
    gathered: Vec<u8>,
    /// The tuner that chooses each chunk's parameters, when
    /// [`CParams::tuner`] asks for one.
    tuner: Option<Box<super::tune::Tuner>>,
}

/// The bytes a compression reads: one buffer, or blocks made on demand.
#[derive(Clone, Copy)]
pub(crate) enum Input<'a> {
    Slice(&'a [u8]),
    Blocks(&'a dyn BlockSource),
}

impl Input<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Input::Slice(s) => s.len(),
            Input::Blocks(b) => b.len(),
        }
    }

    /// The whole input when it is one buffer (what plugins are shown as the source).
    fn whole(&self) -> &[u8] {
        match self {
            Input::Slice(s) => s,
            Input::Blocks(_) => &[],
        }
    }
}

/// The geometry of one compression call.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    pub typesize: usize,
    pub blocksize: usize,
    pub nblocks: usize,
    pub leftover: usize,
    pub split: bool,
    pub header_len: usize,
}

impl Layout {
    pub fn block_len(&self, j: usize) -> usize {
        if j + 1 == self.nblocks && self.leftover > 0 {
            self.leftover
        } else {
            self.blocksize
        }
    }
    pub fn nstreams(&self, j: usize) -> usize {
        if self.split && !(j + 1 == self.nblocks && self.leftover > 0) {
            self.typesize
        } else {
            1
        }
    }
}

/// Output of one block: where its streams go and how much room is left.
struct BlockOut<'a> {
    buf: &'a mut [u8],
    /// Bytes that may be written into `buf` (less than its length in serial
    /// mode, where `buf` is the rest of the destination).
    room: usize,
}

impl Compressor {
    pub fn new(params: CParams) -> Result<Compressor> {
        if params.clevel > 9 {
            return Err(Error::CodecParam);
        }
        let workers = Workers::new(params.nthreads);
        let tuner = params.tuner.map(|t| Box::new(super::tune::Tuner::new(t, &params)));
        Ok(Compressor {
            params,
            workers,
            blosc1_header: false,
            sticky_blocksize: false,
            prefilter: None,
            nchunk: None,
            gathered: Vec::new(),
            tuner,
        })
    }

    /// A compressor that behaves like a reused c-blosc2 context: the block
    /// size chosen for one call becomes the forced block size of the next
    /// (c-blosc2 3.3 re-initializes a context with the block size it computed
    /// last). Chunks then come out byte-identical to c-blosc2's for the same
    /// sequence of calls.
    pub fn sticky(params: CParams) -> Result<Compressor> {
        let mut c = Compressor::new(params)?;
        c.sticky_blocksize = true;
        Ok(c)
    }

    /// The parameters: those given, or with a tuner, those the last chunk
    /// was compressed with.
    pub fn params(&self) -> &CParams {
        &self.params
    }

    /// What the tuner did for the last chunk (`None` without a tuner, or
    /// before the first chunk).
    pub fn tuner_decision(&self) -> Option<&super::tune::Decision> {
        self.tuner.as_ref().and_then(|t| t.last())
    }

    /// The tuner's totals since it started (`None` without a tuner).
    pub fn tuner_totals(&self) -> Option<&super::tune::Totals> {
        self.tuner.as_ref().map(|t| t.totals())
    }

    /// Compress with `params` from now on, keeping the tuner, the threads'
    /// scratch and the rest of the context (the tuner's way of applying a choice).
    pub(crate) fn retune(&mut self, params: CParams) {
        if params.nthreads != self.params.nthreads {
            self.workers.set_nthreads(params.nthreads);
        }
        self.params = params;
    }

    /// Size every thread's scratch for blocks of up to `blocksize` bytes now
    /// (fresh zeroed pages: the memory counts only once touched), and create
    /// every thread's codec contexts (the tuner's choices move between
    /// codecs), so that later chunks, whatever their codec and however large
    /// their blocks, allocate nothing on whichever threads take part.
    pub(crate) fn reserve_blocks(&mut self, blocksize: usize) {
        let typesize = self.params.typesize.clamp(1, 255) as usize;
        self.workers.prepare_all(&|s| {
            s.reserve(blocksize + 4 * typesize + 8);
            for codec in [Codec::Lz4, Codec::Lz4hc, Codec::Zlib, Codec::Zstd] {
                s.codec.prepare_compress(codec, 1, false);
            }
        });
    }

    /// The input's bytes when they are at hand as they will be compressed:
    /// one buffer and no prefilter.
    pub(crate) fn plain_bytes<'a>(&self, input: Input<'a>) -> Option<&'a [u8]> {
        match input {
            Input::Slice(s) if self.prefilter.is_none() => Some(s),
            _ => None,
        }
    }

    /// The bytes the tuner should sample for `input`: the input itself, or
    /// made contiguous in `whole`, or the prefilter's output in `whole`
    /// (`None` when that output is thrown away: the chunk is zeros).
    pub(crate) fn tuning_bytes<'a>(
        &mut self,
        input: Input<'a>,
        whole: &'a mut Vec<u8>,
    ) -> Result<Option<&'a [u8]>> {
        let Some(pre) = self.prefilter.clone() else {
            return match input {
                Input::Slice(s) => Ok(Some(s)),
                Input::Blocks(source) => {
                    blocks::materialize(source, whole)?;
                    Ok(Some(&whole[..]))
                }
            };
        };
        let out = match input {
            Input::Slice(s) => self.prefiltered_whole(&pre, s)?,
            Input::Blocks(source) => {
                blocks::materialize(source, whole)?;
                self.prefiltered_whole(&pre, whole)?
            }
        };
        Ok(out.map(|out| {
            *whole = out;
            &whole[..]
        }))
    }

    /// [`Compressor::prefiltered`] with the block size these parameters give `src`.
    fn prefiltered_whole(&mut self, pre: &Arc<dyn Prefilter>, src: &[u8]) -> Result<Option<Vec<u8>>> {
        let bs = blocksize::of(&self.params, src.len());
        self.prefiltered(pre, src, bs)
    }

    pub fn set_nthreads(&mut self, nthreads: i16) {
        self.params.nthreads = nthreads.max(1);
        self.workers.set_nthreads(nthreads);
    }

    /// The super-chunk compressed for, as plugins see it (see [`CParams::schunk`]).
    pub fn set_schunk(&mut self, schunk: Option<super::SchunkView>) {
        self.params.schunk = schunk;
    }

    /// Run `prefilter` on every block before the filter pipeline.
    pub fn set_prefilter(&mut self, prefilter: Option<Arc<dyn Prefilter>>) {
        self.prefilter = prefilter;
    }

    pub fn prefilter(&self) -> Option<&Arc<dyn Prefilter>> {
        self.prefilter.as_ref()
    }

    /// The number of the next chunk in its super-chunk (told to prefilters).
    pub fn set_nchunk(&mut self, nchunk: Option<i64>) {
        self.nchunk = nchunk;
    }

    /// The blocks of `src` as the prefilter makes them, or `None` when its
    /// output does not matter.
    fn prefiltered(
        &mut self,
        pre: &Arc<dyn Prefilter>,
        src: &[u8],
        blocksize: usize,
    ) -> Result<Option<Vec<u8>>> {
        let mut out = vec![0u8; src.len()];
        let mut tmp = vec![0u8; 4 * blocksize + 64];
        let disposable = pre.output_is_disposable();
        for (j, (input, output)) in src.chunks(blocksize).zip(out.chunks_mut(blocksize)).enumerate() {
            let mut b = PrefilterBlock {
                input,
                output,
                typesize: self.params.typesize,
                offset: j * blocksize,
                nblock: j,
                nchunk: self.nchunk,
                tid: 0,
                tmp: &mut tmp,
            };
            if let Err(e) = pre.apply(&mut b) {
                if !disposable {
                    return Err(e);
                }
            }
        }
        Ok(if disposable { None } else { Some(out) })
    }

    /// Compress `src` into `dst`. Returns the chunk length, or 0 when the
    /// chunk cannot fit in `dst`.
    /// [`Compressor::compress`] into a new buffer of the chunk's size.
    pub fn compress_to_vec(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; src.len() + crate::chunk::header::EXTENDED_HEADER_LENGTH];
        let n = self.compress(src, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    pub fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.compress_input(Input::Slice(src), dst)
    }

    /// [`Compressor::compress`] of the chunk `source` makes: each block is made
    /// by the job that compresses it (on every thread, with no chunk-sized
    /// copy), unless the parameters need the chunk as one buffer (prefilter,
    /// dictionary, delta, plugin filters or codecs, a block size other than
    /// the source's), which is then made first.
    pub fn compress_from(&mut self, source: &dyn BlockSource, dst: &mut [u8]) -> Result<usize> {
        self.compress_input(Input::Blocks(source), dst)
    }

    /// Whether blocks of `source` can be made by the block jobs with these parameters.
    fn streams_blocks(&self, source: &dyn BlockSource, blocksize: i32) -> bool {
        let p = &self.params;
        let plain_filter =
            |f: u8| (f <= filter::TRUNC_PREC && f != filter::DELTA) || pipeline::is_builtin_plugin(f);
        self.prefilter.is_none()
            && !p.use_dict
            && Codec::from_compcode(p.compcode).is_some()
            && p.filters.iter().all(|&f| plain_filter(f))
            && blocksize > 0
            && blocksize as usize == source.block_bytes()
    }

    fn compress_input(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize> {
        match self.tuner.take() {
            None => self.compress_untuned(input, dst),
            Some(mut tuner) => {
                let r = tuner.compress(self, input, dst);
                self.tuner = Some(tuner);
                r
            }
        }
    }

    /// Compress `input` with the parameters as they are.
    pub(crate) fn compress_untuned(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize> {
        self.compress_as(input, dst, None)
    }

    /// `src` compressed as later blocks of a chunk whose block 0 was
    /// `reference`: every block, its first too, goes through the delta
    /// filter against `reference` (the rest of the pipeline is the same).
    /// For the tuner's trials on a piece of a chunk, timed and sized as the
    /// chunk's blocks will be; where a delta filter runs, the result's first
    /// block does not decompress to `src`'s (its length and time do).
    pub(crate) fn compress_later(&mut self, src: &[u8], reference: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.compress_as(Input::Slice(src), dst, Some(reference))
    }

    /// [`Compressor::compress_untuned`], or with `later`,
    /// [`Compressor::compress_later`].
    fn compress_as(&mut self, input: Input<'_>, dst: &mut [u8], later: Option<&[u8]>) -> Result<usize> {
        let params = self.params.clone();
        let p = &params;
        let codec = check_params(p, input.len(), dst.len())?;
        let dst = if dst.len() > i32::MAX as usize { &mut dst[..i32::MAX as usize] } else { dst };
        let nbytes = input.len() as i32;
        let filter_flags = flags_from_filters(&p.filters);
        let bs = blocksize::compute(
            p.compcode,
            p.clevel,
            p.typesize,
            nbytes,
            p.blocksize,
            p.splitmode,
            filter_flags,
        );
        if let Input::Blocks(source) = input {
            if !self.streams_blocks(source, bs) {
                let mut whole = std::mem::take(&mut self.gathered);
                let r = blocks::materialize(source, &mut whole)
                    .and_then(|()| self.compress_as(Input::Slice(&whole), dst, later));
                self.gathered = whole;
                return r;
            }
        }
        if self.sticky_blocksize && bs > 0 {
            self.params.blocksize = bs;
        }
        let typesize = if p.typesize > 255 { 1 } else { p.typesize };
        let bs = bs.max(1) as usize;
        let prefiltered;
        let input = match (self.prefilter.clone(), input) {
            (Some(pre), Input::Slice(src)) if !src.is_empty() => match self.prefiltered(&pre, src, bs)? {
                Some(v) => {
                    prefiltered = v;
                    Input::Slice(&prefiltered[..])
                }
                None => {
                    // The prefilter's output is thrown away: the chunk holds zeros.
                    let mut zp = p.clone();
                    zp.blocksize = bs as i32;
                    return super::special::make(&zp, super::header::Special::Zero, nbytes, None, dst);
                }
            },
            (_, input) => input,
        };
        let n = input.len();
        let nblocks = n / bs + usize::from(n % bs != 0);
        let split = blocksize::split(p.splitmode, p.compcode, p.clevel, filter_flags, typesize, bs as i32);
        let header_len = if self.blosc1_header { MIN_HEADER_LENGTH } else { EXTENDED_HEADER_LENGTH };
        let layout = Layout {
            typesize: typesize as usize,
            blocksize: bs,
            nblocks,
            leftover: n % bs,
            split,
            header_len,
        };
        let mut header = chunk_header(p, typesize as u8, nbytes, bs as i32);
        if !self.blosc1_header {
            header.flags |= flags::DOSHUFFLE | flags::DOBITSHUFFLE;
        } else if header_len == MIN_HEADER_LENGTH && !blosc1_expressible(&p.filters) {
            return Err(Error::FilterPipeline);
        }
        let mut memcpyed = p.clevel == 0 || nbytes < MIN_BUFFERSIZE || header_len + 4 * nblocks > dst.len();
        let mut ntbytes = 0;
        if !memcpyed {
            header.flags |= filter_flags;
            ntbytes = self.encode(codec, &layout, input, dst, &mut header, later)?;
            memcpyed = ntbytes == 0;
        }
        if memcpyed {
            ntbytes = match store_plain(input, dst, header_len)? {
                0 => return Ok(0),
                n => n,
            };
            header.flags |= flags::MEMCPYED;
            header.blosc2_flags &= !blosc2_flags::USEDICT;
        }
        header.cbytes = ntbytes as i32;
        header.write(dst);
        Ok(ntbytes)
    }

    /// The blocks of `input` encoded after `header` (whose codec, split and
    /// dictionary flags this sets): the chunk's length, or 0 when it does not
    /// fit in `dst`. A chunk whose every stream is a run of zeros becomes a
    /// chunk of zeros (the header alone).
    fn encode(
        &mut self,
        codec: CodecChoice,
        layout: &Layout,
        input: Input<'_>,
        dst: &mut [u8],
        header: &mut Header,
        later: Option<&[u8]>,
    ) -> Result<usize> {
        let (use_dict, compcode) = (self.params.use_dict && !self.blosc1_header, self.params.compcode);
        if !layout.split {
            header.flags |= flags::DONT_SPLIT;
        }
        header.flags |= codec.format() << 5;
        if let CodecChoice::User(_) = codec {
            header.udcompcode = compcode;
        }
        if use_dict {
            header.blosc2_flags |= blosc2_flags::USEDICT;
        }
        header.write(dst);
        let bstarts_end = layout.header_len + 4 * layout.nblocks;
        let (ntbytes, dict_used) = match (use_dict, &codec, input) {
            (true, CodecChoice::Builtin(codec), Input::Slice(src)) if later.is_none() => {
                self.compress_with_dict(*codec, layout, src, dst)?
            }
            _ => (self.compress_blocks(codec, layout, input, dst, bstarts_end, None, later)?, false),
        };
        if !dict_used {
            // Too little data for a dictionary: plain blocks, and no flag saying otherwise.
            header.blosc2_flags &= !blosc2_flags::USEDICT;
        }
        if ntbytes == 0 {
            return Ok(0);
        }
        let nstreams: usize = (0..layout.nblocks).map(|j| layout.nstreams(j)).sum();
        if !dict_used && layout.header_len == EXTENDED_HEADER_LENGTH && ntbytes == bstarts_end + 4 * nstreams
        {
            // Every stream is a run of zeros: the chunk is all zeros.
            header.blosc2_flags |= (super::header::Special::Zero as u8) << 4;
            return Ok(layout.header_len);
        }
        Ok(ntbytes)
    }

    /// Compress every block after the bstarts (and dictionary) section that ends
    /// at `start`; returns the total chunk length, or 0 if it does not fit.
    #[allow(clippy::too_many_arguments)] // the dictionary and delta's reference beside the chunk's place
    fn compress_blocks(
        &mut self,
        codec: CodecChoice,
        layout: &Layout,
        src: Input<'_>,
        dst: &mut [u8],
        start: usize,
        dict: Option<&Dict>,
        later: Option<&[u8]>,
    ) -> Result<usize> {
        let clevel = self.params.clevel;
        let (filters, meta) = (self.params.filters, self.params.filters_meta);
        // Delta's reference block (block sources are not used with delta).
        let whole = src.whole();
        let reference = later.unwrap_or(&whole[..layout.blocksize.min(whole.len())]);
        let params = &self.params;
        let first = if later.is_some() { usize::MAX } else { 0 };
        let job =
            BlockJob { codec, params, clevel, filters, meta, layout: *layout, src, reference, first, dict };
        let nblocks = layout.nblocks;
        let ebsize = layout.blocksize + 4 * layout.typesize + 8;
        let hl = layout.header_len;
        self.workers.ready()?;
        let threads = self.workers.threads_for(nblocks, nblocks * layout.blocksize);
        let builtin = match &job.codec {
            CodecChoice::Builtin(c) => Some(*c),
            CodecChoice::User(_) => None,
        };
        let prepare = |s: &mut Scratch| {
            s.reserve(ebsize);
            if let Some(c) = builtin {
                s.codec.prepare_compress(c, clevel, dict.is_some());
            }
        };
        if threads < 2 {
            let mut ntbytes = start;
            let mut s = self.workers.scratch();
            prepare(&mut s);
            for j in 0..nblocks {
                let room = dst.len() - ntbytes;
                let out = BlockOut { buf: &mut dst[ntbytes..], room };
                let c = job.run(j, out, &mut s)?;
                if c == 0 {
                    return Ok(0);
                }
                write_bstart(dst, hl, j, ntbytes);
                ntbytes += c;
            }
            return Ok(ntbytes);
        }
        // Parallel: blocks are compressed into each worker's scratch and
        // appended to the destination in completion order (bstarts say where).
        // The lock only hands out the next piece of the destination and writes
        // the block's bstart; the copy into that piece runs outside it, so
        // that many threads compressing data that hardly shrinks (copies as
        // long as the blocks) do not wait on each other's copies.
        let (head, body) = dst.split_at_mut(start);
        let shared = Mutex::new(Appending { head, rest: body, ntbytes: start, full: false });
        let error: Mutex<Option<Error>> = Mutex::new(None);
        self.workers.for_each(nblocks, nblocks * layout.blocksize, &prepare, &|j, s| {
            let mut staging = std::mem::take(&mut s.tmp4);
            let out = BlockOut { room: staging.len(), buf: &mut staging };
            let res = job.run(j, out, s);
            match res {
                Ok(c) => {
                    let piece = shared.lock().unwrap_or_else(|e| e.into_inner()).take(hl, j, c);
                    if let Some(piece) = piece {
                        piece.copy_from_slice(&staging[..c]);
                    }
                }
                Err(e) => {
                    *error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                }
            }
            s.tmp4 = staging;
        });
        if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        let done = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok(if done.full { 0 } else { done.ntbytes })
    }

    /// Train (Zstd) or sample (LZ4) a dictionary from a first pass over the
    /// filtered blocks, store it after the bstarts and compress with it.
    /// Returns the chunk length and whether a dictionary was used (not when
    /// the data is too small to sample one).
    fn compress_with_dict(
        &mut self,
        codec: Codec,
        layout: &Layout,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(usize, bool)> {
        let bstarts_end = layout.header_len + 4 * layout.nblocks;
        let mut dict_max = MAX_DICT_SIZE.min(src.len() / 20);
        let mut nsamples = layout.nblocks * if layout.split { layout.typesize } else { 1 };
        nsamples = nsamples.max(8);
        let sample_size = src.len() / nsamples / 16;
        let plain = CodecChoice::Builtin(codec);
        if dict_max < MIN_USEFUL_DICT || sample_size == 0 {
            return Ok((
                self.compress_blocks(plain, layout, Input::Slice(src), dst, bstarts_end, None, None)?,
                false,
            ));
        }
        // The training material: the filtered blocks, laid end to end.
        let samples = self.filtered_prefix(layout, src, nsamples * sample_size)?;
        let mut dict = vec![0u8; dict_max];
        let dict_len = match codec {
            Codec::Zstd => match codecs::zstd_train_dict(&mut dict, &samples, sample_size, nsamples) {
                Some(n) => n,
                None => {
                    return Ok((
                        self.compress_blocks(plain, layout, Input::Slice(src), dst, bstarts_end, None, None)?,
                        false,
                    ))
                }
            },
            _ => {
                dict_max = dict_max.min(nsamples * sample_size);
                dict[..dict_max].copy_from_slice(&samples[..dict_max]);
                // c-blosc2 keeps its samples in the output buffer, right after the
                // header, and writes the dictionary size field (after the bstarts)
                // over them before copying the dictionary out: those 4 bytes of its
                // LZ4 dictionaries are the size. Any bytes make a valid dictionary;
                // doing the same keeps the chunks byte-identical.
                let at = bstarts_end - layout.header_len;
                let size = (dict_max as i32).to_le_bytes();
                for (k, b) in size.iter().enumerate() {
                    if let Some(d) = dict.get_mut(at + k).filter(|_| at + k < dict_max) {
                        *d = *b;
                    }
                }
                dict_max
            }
        };
        let dict = &dict[..dict_len];
        let start = bstarts_end + 4 + dict_len;
        if start > dst.len() {
            return Ok((0, true));
        }
        dst[bstarts_end..bstarts_end + 4].copy_from_slice(&(dict_len as i32).to_le_bytes());
        dst[bstarts_end + 4..start].copy_from_slice(dict);
        match codec {
            Codec::Zstd => {
                let cdict = codecs::ZstdCDict::new(dict, 1).ok_or(Error::CodecDict)?;
                Ok((
                    self.compress_blocks(
                        plain,
                        layout,
                        Input::Slice(src),
                        dst,
                        start,
                        Some(&Dict::Zstd(&cdict)),
                        None,
                    )?,
                    true,
                ))
            }
            _ => Ok((
                self.compress_blocks(
                    plain,
                    layout,
                    Input::Slice(src),
                    dst,
                    start,
                    Some(&Dict::Lz4(dict)),
                    None,
                )?,
                true,
            )),
        }
    }

    /// The first `want` bytes of the filtered source (blocks filtered one by one).
    fn filtered_prefix(&mut self, layout: &Layout, src: &[u8], want: usize) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(want);
        let reference = &src[..layout.blocksize.min(src.len())];
        let mut s = self.workers.scratch();
        s.reserve(layout.blocksize + 8);
        let Scratch { tmp1, tmp2, .. } = &mut *s;
        for j in 0..layout.nblocks {
            if out.len() >= want {
                break;
            }
            let off = j * layout.blocksize;
            let block = &src[off..off + layout.block_len(j)];
            let p = &self.params;
            let info = EncodeInfo { params: p, source: src };
            let at = pipeline::forward(
                &p.filters,
                &p.filters_meta,
                layout.typesize,
                j == 0,
                reference,
                block,
                tmp1,
                tmp2,
                Some(&info),
            )?;
            let filtered: &[u8] = match at {
                None => block,
                Some(true) => &tmp1[..block.len()],
                Some(false) => &tmp2[..block.len()],
            };
            let take = filtered.len().min(want - out.len());
            out.extend_from_slice(&filtered[..take]);
        }
        Ok(out)
    }
}

/// The codec of a compression: one Blosc ships, or one the user registered.
#[derive(Clone)]
enum CodecChoice {
    Builtin(Codec),
    User(Arc<dyn UserCodec>),
}

impl CodecChoice {
    fn for_compcode(compcode: u8) -> Result<CodecChoice> {
        match Codec::from_compcode(compcode) {
            Some(c) => Ok(CodecChoice::Builtin(c)),
            None => plugins::codec(compcode).map(CodecChoice::User).ok_or(Error::CodecSupport),
        }
    }

    /// The format code written in the chunk flags.
    fn format(&self) -> u8 {
        match self {
            CodecChoice::Builtin(c) => c.format(),
            CodecChoice::User(_) => codecs::FORMAT_UDCODEC,
        }
    }
}

/// Whether a pipeline can be described by Blosc1 flags alone.
fn blosc1_expressible(filters: &[u8; super::header::MAX_FILTERS]) -> bool {
    super::header::filters_from_flags(flags_from_filters(filters)) == *filters
}

/// The destination of blocks compressed in parallel: the header and bstarts
/// before `ntbytes`, and what is left after it.
struct Appending<'a> {
    head: &'a mut [u8],
    rest: &'a mut [u8],
    ntbytes: usize,
    /// A block did not fit (or did not compress): the chunk is not made.
    full: bool,
}

impl<'a> Appending<'a> {
    /// The next `c` bytes of the destination, for block `j` (its bstart
    /// written); `None` when they do not fit or `c` is 0.
    fn take(&mut self, header_len: usize, j: usize, c: usize) -> Option<&'a mut [u8]> {
        if c == 0 || self.full || c > self.rest.len() {
            self.full = true;
            return None;
        }
        let (piece, rest) = std::mem::take(&mut self.rest).split_at_mut(c);
        self.rest = rest;
        write_bstart(self.head, header_len, j, self.ntbytes);
        self.ntbytes += c;
        Some(piece)
    }
}

fn write_bstart(dst: &mut [u8], header_len: usize, j: usize, at: usize) {
    let p = header_len + 4 * j;
    dst[p..p + 4].copy_from_slice(&(at as i32).to_le_bytes());
}

/// Everything a worker needs to compress block `j`.
struct BlockJob<'a> {
    codec: CodecChoice,
    params: &'a CParams,
    clevel: u8,
    filters: [u8; 6],
    meta: [u8; 6],
    layout: Layout,
    src: Input<'a>,
    reference: &'a [u8],
    /// The block that is its own reference for delta (none: `usize::MAX`).
    first: usize,
    dict: Option<&'a Dict<'a>>,
}

impl BlockJob<'_> {
    /// Filter and compress block `j` into `out`; returns its size, 0 if it does not fit.
    fn run(&self, j: usize, out: BlockOut, s: &mut Scratch) -> Result<usize> {
        let l = &self.layout;
        let bsize = l.block_len(j);
        let off = j * l.blocksize;
        let Scratch { tmp1, tmp2, tmp3, codec: state, planes_in_place, .. } = s;
        let block: &[u8] = match self.src {
            Input::Slice(src) => &src[off..off + bsize],
            Input::Blocks(source) => {
                let b = tmp3.get_mut(..bsize).ok_or(Error::Failure)?;
                source.fill(j, b)?;
                b
            }
        };
        let nstreams = l.nstreams(j);
        let in_place = match self.codec {
            CodecChoice::Builtin(codec) if nstreams > 1 && nstreams == l.typesize && self.shuffled_only() => {
                Some(codec)
            }
            _ => None,
        };
        if let Some(codec) = in_place {
            if *planes_in_place && out.room >= bsize + 4 * nstreams {
                let (w, gain) = self.planes_in_place(codec, block, nstreams, out.buf, tmp1, state)?;
                *planes_in_place = gain;
                return Ok(w);
            }
        }
        let info = EncodeInfo { params: self.params, source: self.src.whole() };
        let at = pipeline::forward(
            &self.filters,
            &self.meta,
            l.typesize,
            j == self.first,
            self.reference,
            block,
            tmp1,
            tmp2,
            Some(&info),
        )?;
        let filtered: &[u8] = match at {
            None => block,
            Some(true) => &tmp1[..bsize],
            Some(false) => &tmp2[..bsize],
        };
        let neblock = bsize / nstreams;
        let extended = l.header_len == EXTENDED_HEADER_LENGTH;
        let BlockOut { buf, room } = out;
        let mut w = 0usize;
        let mut tally = PlaneTally::default();
        for k in 0..nstreams {
            let stream = &filtered[k * neblock..(k + 1) * neblock];
            if w + 4 > room {
                return Ok(0);
            }
            let body = w + 4;
            if extended {
                if let Some(&v) = stream.first() {
                    if is_run(stream, v) {
                        // A run: the byte goes in the (negated) length, then a token.
                        buf[w..body].copy_from_slice(&(-i32::from(v)).to_le_bytes());
                        w = body;
                        if v != 0 {
                            if w + 1 > room {
                                return Ok(0);
                            }
                            buf[w] = 0x1;
                            w += 1;
                        }
                        tally.add(None, neblock);
                        continue;
                    }
                }
            }
            let maxout = neblock.min(room - body);
            if maxout == 0 {
                return Ok(0);
            }
            let out = &mut buf[body..body + maxout];
            let c = match &self.codec {
                CodecChoice::Builtin(codec) => {
                    codecs::compress(*codec, self.clevel, stream, out, self.dict, state)?
                }
                CodecChoice::User(u) => {
                    let info = EncodeInfo { params: self.params, source: self.src.whole() };
                    let c = u
                        .encode(stream, out, self.params.compcode_meta, &info)
                        .map_err(plugins::codec_failure)?;
                    if c > maxout {
                        return Err(Error::WriteBuffer);
                    }
                    c
                }
            };
            let c = if c == 0 || c >= neblock {
                // Not compressible: store the stream as is.
                if body + neblock > room {
                    return Ok(0);
                }
                buf[body..body + neblock].copy_from_slice(stream);
                neblock
            } else {
                c
            };
            tally.add(Some(c), neblock);
            buf[w..body].copy_from_slice(&(c as i32).to_le_bytes());
            w = body + c;
        }
        if in_place.is_some() {
            *planes_in_place = tally.favours_in_place();
        }
        Ok(w)
    }

    /// Whether the pipeline is one byte shuffle over the item size and
    /// nothing else, which [`Self::planes_in_place`] does itself.
    fn shuffled_only(&self) -> bool {
        pipeline::plain_shuffle(&self.filters, &self.meta, self.layout.typesize) == Some(true)
    }

    /// A block shuffled and split by item byte, written with its byte
    /// planes in place: the shuffle writes each plane straight where it
    /// would go if every plane before it were stored as is (its 4-byte size
    /// first), so a plane that no codec shrinks, after only such planes,
    /// is never copied; a plane that does shrink is compressed into
    /// `scratch` and copied back over its own bytes. This pays where the
    /// first planes are noise, as the low bytes of floats are, and the
    /// caller takes it only when the block before said so (the returned
    /// flag). `buf` has room for the whole block and its stream sizes.
    /// Returns the block's length, and whether the next block should be
    /// written this way too. The bytes are those of the usual way.
    fn planes_in_place(
        &self,
        codec: Codec,
        block: &[u8],
        nstreams: usize,
        buf: &mut [u8],
        scratch: &mut [u8],
        state: &mut codecs::CodecState,
    ) -> Result<(usize, bool)> {
        let n = block.len() / nstreams;
        let stride = n + 4;
        let end = nstreams * stride;
        if n == 0 || buf.len() < end || scratch.len() < n {
            return Err(Error::Failure);
        }
        // Plane k at buf[k * stride + 4..][..n].
        crate::filters::shuffle::transpose(block, nstreams, &mut buf[4..end], stride, n, nstreams);
        let extended = self.layout.header_len == EXTENDED_HEADER_LENGTH;
        let mut tally = PlaneTally::default();
        let mut w = 0usize;
        for k in 0..nstreams {
            let raw = k * stride + 4;
            let body = w + 4;
            // (w <= k * stride: every stream before took at most its plane and size.)
            let v = buf[raw];
            if extended && is_run(&buf[raw..raw + n], v) {
                buf[w..body].copy_from_slice(&(-i32::from(v)).to_le_bytes());
                w = body;
                if v != 0 {
                    buf[w] = 0x1;
                    w += 1;
                }
                tally.add(None, n);
                continue;
            }
            let c = codecs::compress(
                codec,
                self.clevel,
                &buf[raw..raw + n],
                &mut scratch[..n],
                self.dict,
                state,
            )?;
            let c = if c == 0 || c >= n {
                if body != raw {
                    buf.copy_within(raw..raw + n, body);
                }
                n
            } else {
                // body + c < raw + n: only this plane's own bytes are overwritten.
                buf[body..body + c].copy_from_slice(&scratch[..c]);
                c
            };
            tally.add(Some(c), n);
            buf[w..body].copy_from_slice(&(c as i32).to_le_bytes());
            w = body + c;
        }
        Ok((w, tally.favours_in_place()))
    }
}

/// What became of a split block's planes, to choose how to write the next
/// block (see `BlockJob::planes_in_place`).
#[derive(Default)]
struct PlaneTally {
    /// Bytes of the planes stored as is before any other kind of stream.
    stored_first: usize,
    /// Whether a stream of another kind was seen.
    other_seen: bool,
    /// Bytes of the compressed streams.
    compressed: usize,
}

impl PlaneTally {
    /// Stream of a plane of `n` bytes: `Some(c)` coded in `c` bytes (`c ==
    /// n`: stored as is), `None` a run.
    fn add(&mut self, c: Option<usize>, n: usize) {
        match c {
            Some(c) if c == n && !self.other_seen => self.stored_first += n,
            Some(c) if c < n => {
                self.other_seen = true;
                self.compressed += c;
            }
            _ => self.other_seen = true,
        }
    }

    /// Whether writing planes in place saves more copying (the leading
    /// stored planes) than it adds (copying the compressed streams back,
    /// counted twice for the larger write to the output it makes).
    fn favours_in_place(&self) -> bool {
        self.stored_first > 2 * self.compressed
    }
}

/// Whether every byte of `s` is `v`, eight bytes at a time (four words per
/// step so that the loop vectorizes).
fn is_run(s: &[u8], v: u8) -> bool {
    let pattern = u64::from_ne_bytes([v; 8]);
    let mut chunks = s.chunks_exact(32);
    for c in &mut chunks {
        let word = |i: usize| u64::from_ne_bytes(c[i..i + 8].try_into().unwrap_or([0; 8])) ^ pattern;
        if word(0) | word(8) | word(16) | word(24) != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|&b| b == v)
}

/// The filter ids a classic `doshuffle` argument selects.
pub fn shuffle_filter(doshuffle: i32) -> u8 {
    match doshuffle {
        1 => filter::SHUFFLE,
        2 => filter::BITSHUFFLE,
        _ => filter::NOFILTER,
    }
}

impl Compressor {
    /// Compress each of `blocks` as its own block of one variable-length-block
    /// chunk. Returns the chunk length, or 0 when it does not fit in `dst`.
    pub fn vlcompress(&mut self, blocks: &[&[u8]], dst: &mut [u8]) -> Result<usize> {
        if dst.len() < EXTENDED_HEADER_LENGTH {
            return Err(Error::MaxBufsizeExceeded);
        }
        let mut s = self.workers.scratch();
        super::vlblocks::compress(&self.params, blocks, dst, &mut s.codec)
    }
}

/// Check the parameters of a compression of `len` bytes into `room` bytes;
/// the codec to use.
fn check_params(p: &CParams, len: usize, room: usize) -> Result<CodecChoice> {
    if len > MAX_BUFFERSIZE as usize || room < EXTENDED_HEADER_LENGTH {
        return Err(Error::MaxBufsizeExceeded);
    }
    if p.clevel > 9 {
        return Err(Error::CodecParam);
    }
    let codec = CodecChoice::for_compcode(p.compcode)?;
    if p.use_dict && !matches!(codec, CodecChoice::Builtin(c) if c.supports_dict()) {
        return Err(Error::CodecParam);
    }
    if p.typesize <= 0 || p.typesize > MAX_TYPESIZE {
        return Err(Error::InvalidParam);
    }
    pipeline::check(&p.filters)?;
    Ok(codec)
}

/// The header of a chunk of `nbytes` compressed with `p`, before the flags
/// that depend on how its blocks were encoded.
fn chunk_header(p: &CParams, typesize: u8, nbytes: i32, blocksize: i32) -> Header {
    Header {
        version: VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: 0,
        typesize,
        nbytes,
        blocksize,
        cbytes: 0,
        filters: p.filters,
        udcompcode: p.compcode,
        compcode_meta: p.compcode_meta,
        filters_meta: p.filters_meta,
        blosc2_flags2: 0,
        blosc2_flags: 0,
    }
}

/// `input` stored as it is after a header of `header_len` bytes: the chunk's
/// length, or 0 when it does not fit in `dst`.
fn store_plain(input: Input<'_>, dst: &mut [u8], header_len: usize) -> Result<usize> {
    let n = input.len();
    if n + header_len > dst.len() {
        return Ok(0);
    }
    let body = &mut dst[header_len..header_len + n];
    match input {
        Input::Slice(src) => body.copy_from_slice(src),
        Input::Blocks(source) => {
            for (j, b) in body.chunks_mut(source.block_bytes().max(1)).enumerate() {
                source.fill(j, b)?;
            }
        }
    }
    Ok(header_len + n)
}

#[cfg(test)]
mod tests {
    use super::is_run;
    use super::Compressor;
    use crate::params::{filter, CParams};

    /// Bytes that no codec shrinks (an LCG's high bytes).
    fn noise(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn later_blocks_go_through_delta_against_the_reference_given() {
        let bs = 16 << 10;
        let (r, other) = (noise(bs, 1), noise(bs, 2));
        let mut filters = [filter::NOFILTER; 6];
        filters[5] = filter::DELTA;
        let p = CParams { typesize: 1, clevel: 5, blocksize: bs as i32, filters, ..CParams::default() };
        let mut c = Compressor::new(p).unwrap();
        let mut out = vec![0u8; 4 * bs + 256];
        // blocks equal to the reference become zeros; as a chunk of their
        // own, the first of them is its own reference, and stays noise
        let piece: Vec<u8> = [&r[..], &r[..]].concat();
        let later = c.compress_later(&piece, &r, &mut out).unwrap();
        let alone = c.compress(&piece, &mut out).unwrap();
        assert!(later < 1024, "{later} bytes");
        assert!(alone > bs, "{alone} bytes");
        // against another reference, noise again; without delta, the reference is not used
        assert!(c.compress_later(&piece, &other, &mut out).unwrap() > bs);
        c.retune(CParams { typesize: 1, clevel: 5, blocksize: bs as i32, ..CParams::default() });
        let plain = c.compress(&piece, &mut out).unwrap();
        assert_eq!(c.compress_later(&piece, &r, &mut out).unwrap(), plain);
    }

    #[test]
    fn runs_are_detected_at_every_length_and_position() {
        for n in [1usize, 7, 8, 31, 32, 33, 64, 100, 1000] {
            let mut s = vec![7u8; n];
            assert!(is_run(&s, 7));
            // (under Miri every 37th position of the longest: it is slow)
            for i in (0..n).step_by(if cfg!(miri) && n > 100 { 37 } else { 1 }) {
                s[i] = 8;
                assert!(!is_run(&s, 7), "n {n} i {i}");
                s[i] = 7;
            }
        }
    }
}
