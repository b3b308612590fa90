//! Locking, refreshing from disk, and reading chunks, blocks and slices.

use super::*;

impl SuperChunk {
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

    pub(super) fn begin_write(&mut self) -> Result<()> {
        self.lock()?;
        if self.lock.is_none() {
            self.reload(false)?;
        }
        Ok(())
    }

    pub(super) fn end_write<T>(&mut self, r: Result<T>) -> Result<T> {
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
        let r = self.reload_locked(changed);
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
            || self
                .lock
                .as_ref()
                .is_some_and(|l| l.lock().unwrap_or_else(|e| e.into_inner()).changed_elsewhere())
            || self.replaced()
    }

    /// Keep the frame's file open until the hold is dropped: on systems where
    /// an open handle pins its file's name (Windows), the file is otherwise
    /// opened for each read or write, so that none stays open between
    /// operations. [`SChunk`]'s guards hold it for their operation.
    pub fn hold_file(&self) -> Option<crate::io::Hold> {
        match &self.store {
            Store::Frame(f) => f.hold(),
            Store::Memory(_) => None,
        }
    }

    /// Whether the path of this on-disk contiguous frame now names another
    /// file than the one this handle reads (the frame was replaced, e.g. by a
    /// rename): one `stat` (on Windows the open that the operation's reads
    /// then use).
    pub(super) fn replaced(&self) -> bool {
        let (Store::Frame(f), Some(path)) = (&self.store, &self.storage.urlpath) else { return false };
        if !self.storage.backend.is_filesystem() {
            return false;
        }
        if let Some(replaced) = f.path_replaced() {
            return replaced;
        }
        let Some(id) = f.stream_origin().and_then(|o| o.identity) else { return false };
        crate::io::path_identity(path).is_some_and(|now| now != id)
    }

    /// Hold the shared frame lock while reading, and say whether another
    /// handle changed the frame since this one loaded it (then reload it with
    /// [`SuperChunk::reload_locked`] before reading, with the lock held).
    pub fn read_lock_checked(&self) -> Result<(ReadLock, bool)> {
        let mut changed = false;
        if let Some(l) = &self.lock {
            changed = l.lock().unwrap_or_else(|e| e.into_inner()).acquire(false)?;
        }
        Ok((ReadLock(self.lock.clone()), changed))
    }

    /// Reload the frame (with the frame lock held, when locking): all of it
    /// when `changed`, else only when its length or file changed.
    pub fn reload_locked(&mut self, changed: bool) -> Result<bool> {
        let r = self.reload(changed)?;
        if let Some(l) = &self.lock {
            l.lock().unwrap_or_else(|e| e.into_inner()).mark_loaded();
        }
        Ok(r)
    }

    pub(super) fn reload(&mut self, force: bool) -> Result<bool> {
        if self.replaced() {
            return self.reopen().map(|()| true);
        }
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

    /// Read the frame again from the file its path names now.
    fn reopen(&mut self) -> Result<()> {
        let (Store::Frame(f), Some(path)) = (&self.store, self.storage.urlpath.clone()) else {
            return Ok(());
        };
        let Some(origin) = f.stream_origin() else { return Ok(()) };
        let fresh =
            SuperChunk::open_with(&path, origin.base, self.storage.backend.clone(), origin.writable, false)?;
        let (cp_threads, dthreads) = (self.info.cparams.nthreads, self.dparams.nthreads);
        self.info = fresh.info;
        self.store = fresh.store;
        self.attach_journal();
        self.comp = None;
        self.set_nthreads(cp_threads, dthreads);
        self.change_tick += 1;
        Ok(())
    }

    // ------------------------------------------------------------------ reading

    /// A chunk position that names a chunk (c-blosc2 answers others with
    /// `BLOSC2_ERROR_INVALID_PARAM`).
    pub(super) fn check_index(&self, i: usize) -> Result<()> {
        if i < self.nchunks() {
            Ok(())
        } else {
            Err(Error::InvalidParam)
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

    /// Run `f` on chunk `i` (as a lazy chunk if `lazy`, see
    /// [`SuperChunk::lazy_chunk`]): chunks read from a frame file go into a
    /// buffer kept for the next reads, so a read allocates nothing once warm.
    pub(super) fn with_chunk<R>(
        &self,
        i: usize,
        lazy: bool,
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        /// Buffers kept (threads reading chunks at once each take one).
        const KEPT: usize = 16;
        self.check_index(i)?;
        let frame = match &self.store {
            Store::Memory(c) => return f(&c[i]),
            Store::Frame(frame) => frame,
        };
        let mut buf = self.read_bufs.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_default();
        let got = if lazy {
            frame.lazy_chunk_into(&self.info, i, &mut buf)
        } else {
            frame.chunk_into(&self.info, i, &mut buf)
        };
        let r = got.and_then(|c| f(c.unwrap_or(&buf)));
        let mut bufs = self.read_bufs.lock().unwrap_or_else(|e| e.into_inner());
        if bufs.len() < KEPT {
            bufs.push(buf);
        }
        r
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

    pub(super) fn decompressor(&self) -> Decompressor {
        self.decompressor_threads(self.dparams.nthreads)
    }

    fn decompressor_threads(&self, nthreads: i16) -> Decompressor {
        let mut d = self.dparams.clone();
        d.nthreads = nthreads;
        d.typesize = self.info.cparams.typesize;
        d.schunk = Some(self.plugin_view());
        let mut d = Decompressor::new(d);
        d.set_postfilter(self.postfilter.clone());
        d
    }

    /// Decompress chunk `i` into `dst`; returns its size.
    /// (`InvalidParam` when `dst` is too small, as in c-blosc2.)
    pub fn decompress_chunk(&self, i: usize, dst: &mut [u8]) -> Result<usize> {
        self.decompress_chunk_on(i, dst, self.dparams.nthreads)
    }

    /// [`SuperChunk::decompress_chunk`] on the calling thread alone: for
    /// callers that spread several chunks over threads themselves.
    pub fn decompress_chunk_alone(&self, i: usize, dst: &mut [u8]) -> Result<usize> {
        self.decompress_chunk_on(i, dst, 1)
    }

    fn decompress_chunk_on(&self, i: usize, dst: &mut [u8], nthreads: i16) -> Result<usize> {
        self.with_chunk(i, false, |c| {
            let n = Header::sizes(c)?.0;
            if n < 0 || n as usize > dst.len() {
                return Err(Error::InvalidParam);
            }
            let mut d = self.decompressor_threads(nthreads);
            d.set_nchunk(Some(i as i64));
            d.decompress(c, dst)
        })
    }

    /// [`SuperChunk::decompress_chunk`] without the blocks marked `true` in
    /// `skip` (their bytes in `dst` are left as they are).
    pub fn decompress_chunk_masked(&self, i: usize, dst: &mut [u8], skip: &[bool]) -> Result<usize> {
        self.decompress_chunk_masked_on(i, dst, skip, self.dparams.nthreads)
    }

    /// [`SuperChunk::decompress_chunk_masked`] on the calling thread alone.
    pub fn decompress_chunk_masked_alone(&self, i: usize, dst: &mut [u8], skip: &[bool]) -> Result<usize> {
        self.decompress_chunk_masked_on(i, dst, skip, 1)
    }

    fn decompress_chunk_masked_on(
        &self,
        i: usize,
        dst: &mut [u8],
        skip: &[bool],
        nthreads: i16,
    ) -> Result<usize> {
        self.with_chunk(i, false, |c| {
            let n = Header::sizes(c)?.0;
            if n < 0 || n as usize > dst.len() {
                return Err(Error::InvalidParam);
            }
            let mut d = self.decompressor_threads(nthreads);
            d.set_nchunk(Some(i as i64));
            d.set_maskout(skip);
            d.decompress(c, dst)
        })
    }

    /// Decode the blocks of chunk `i` that `sink` wants and hand them to it
    /// (from the worker threads that decode them; blocks of chunks on disk
    /// are read one by one, see [`crate::chunk::Decompressor::decompress_to`]).
    pub fn decompress_chunk_to(&self, i: usize, sink: &dyn crate::chunk::BlockSink) -> Result<()> {
        self.decompress_chunk_to_on(i, sink, self.dparams.nthreads)
    }

    /// [`SuperChunk::decompress_chunk_to`] on the calling thread alone.
    pub fn decompress_chunk_to_alone(&self, i: usize, sink: &dyn crate::chunk::BlockSink) -> Result<()> {
        self.decompress_chunk_to_on(i, sink, 1)
    }

    fn decompress_chunk_to_on(
        &self,
        i: usize,
        sink: &dyn crate::chunk::BlockSink,
        nthreads: i16,
    ) -> Result<()> {
        self.with_chunk(i, true, |c| {
            let mut d = self.decompressor_threads(nthreads);
            d.set_nchunk(Some(i as i64));
            d.decompress_to(c, self.lazy_source(), sink)
        })
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
    pub(super) fn locate(&self, pos: i64) -> Result<(usize, i64)> {
        let cs = i64::from(self.info.chunksize);
        if cs > 0 {
            return Ok(((pos / cs) as usize, pos % cs));
        }
        let mut start = 0i64;
        if let Store::Frame(f) = &self.store {
            // A run of equal index entries is one size repeated: skipped at once
            // (a crafted index can repeat an entry billions of times).
            for (a, b) in f.runs() {
                let n = i64::from(self.chunk_nbytes(a)?);
                let len = (b - a) as i64;
                if n > 0 && pos - start < n.saturating_mul(len) {
                    let k = (pos - start) / n;
                    return Ok((a + k as usize, pos - start - k * n));
                }
                start = start.saturating_add(n.saturating_mul(len));
            }
            return Ok((self.nchunks(), pos - start));
        }
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
        if let Some(r) = self.get_slice_chunks(i, off, &mut dst[..(end - pos) as usize]) {
            return r;
        }
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
                self.with_chunk(i, false, |c| d.decompress(c, dst))?;
            } else {
                self.with_chunk(i, true, |c| d.getitem_bytes_lazy(c, off, take, dst, self.lazy_source()))?;
            }
            out += take as usize;
            pos += take;
            i += 1;
            off = 0;
        }
        Ok(())
    }

    /// The pieces of a slice starting `off` bytes into chunk `first`, one per
    /// chunk: the first chunk's part, then whole chunks (the last one's part),
    /// when every chunk but the last has `chunksize` bytes; `None` otherwise.
    pub(super) fn slice_pieces(&self, off: i64, len: usize) -> Option<(usize, usize)> {
        let cs = usize::try_from(self.info.chunksize).ok().filter(|&c| c > 0)?;
        let off = usize::try_from(off).ok().filter(|&o| o < cs)?;
        let head = (cs - off).min(len);
        Some((head, 1 + (len - head).div_ceil(cs)))
    }

    /// [`SuperChunk::get_slice`] of `dst.len()` bytes from `off` bytes into
    /// chunk `first`, spread over threads chunk by chunk (each chunk decoded
    /// by one thread into its part of `dst`) when the slice covers at least as
    /// many chunks as threads; `None` when it does not (the caller then reads
    /// chunk after chunk, the threads sharing each chunk's blocks).
    fn get_slice_chunks(&self, first: usize, off: i64, dst: &mut [u8]) -> Option<Result<()>> {
        let (head, nchunks) = self.slice_pieces(off, dst.len())?;
        let nthreads = self.dparams.nthreads;
        let threads = crate::chunk::jobs_threads(nthreads, nchunks, dst.len());
        if threads < 2 || nchunks < threads {
            return None;
        }
        let bytes = dst.len();
        let (h, rest) = dst.split_at_mut(head);
        let cs = self.info.chunksize as usize;
        let pieces = std::sync::Mutex::new(std::iter::once(h).chain(rest.chunks_mut(cs)).enumerate());
        Some(crate::chunk::run_jobs(nthreads, nchunks, bytes, &|_| {
            let Some((k, out)) = pieces.lock().unwrap_or_else(|e| e.into_inner()).next() else {
                return Ok(());
            };
            self.read_part(first + k, if k == 0 { off } else { 0 }, out)
        }))
    }

    /// Bytes `off..off + dst.len()` of chunk `i` into `dst`, on the calling thread alone.
    fn read_part(&self, i: usize, off: i64, dst: &mut [u8]) -> Result<()> {
        let n = i64::from(self.chunk_nbytes(i)?);
        let take = dst.len() as i64;
        if take <= 0 || n - off < take {
            return Err(Error::InvalidHeader);
        }
        let mut d = self.decompressor_threads(1);
        d.set_nchunk(Some(i as i64));
        if off == 0 && take == n {
            self.with_chunk(i, false, |c| d.decompress(c, dst))?;
        } else {
            self.with_chunk(i, true, |c| d.getitem_bytes_lazy(c, off, take, dst, self.lazy_source()))?;
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

    pub(super) fn set_slice_now(&mut self, start: i64, stop: i64, src: &[u8]) -> Result<()> {
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
        if self.set_slice_chunks(i, off, &src[..(end - pos) as usize])? {
            return Ok(());
        }
        let mut used = 0usize;
        let (mut buf, mut c) = (Vec::new(), Vec::new());
        while pos < end {
            let n = self.chunk_nbytes(i)? as usize;
            let take = (n as i64 - off).min(end - pos) as usize;
            let mut comp = self.take_compressor()?;
            let r =
                self.make_chunk(&mut comp, i, off as usize, &src[used..used + take], false, &mut buf, &mut c);
            self.give_compressor(comp);
            r?;
            // Copied, not taken: `c` stays warm for the next chunk, and the
            // copy lands in the memory the old chunk gives back (a taken
            // buffer leaves the next chunk a fresh one, faulted in page by page).
            self.update_chunk_now(i, &c)?;
            used += take;
            pos += take as i64;
            i += 1;
            off = 0;
        }
        Ok(())
    }

    /// Chunk `i` with `part` written over its bytes from `off` on, compressed
    /// by `comp` into `c`: straight from `part` when it covers the whole
    /// chunk, else through `buf` (the chunk decoded, on the calling thread
    /// alone when `alone`).
    #[allow(clippy::too_many_arguments)] // the chunk, the new bytes, the caller's compressor and buffers
    fn make_chunk(
        &self,
        comp: &mut Compressor,
        i: usize,
        off: usize,
        part: &[u8],
        alone: bool,
        buf: &mut Vec<u8>,
        c: &mut Vec<u8>,
    ) -> Result<()> {
        let n = self.chunk_nbytes(i)? as usize;
        if off + part.len() > n {
            return Err(Error::InvalidHeader);
        }
        let src = if part.len() == n {
            part
        } else {
            buf.clear();
            buf.resize(n, 0);
            if alone {
                self.decompress_chunk_alone(i, buf)?;
            } else {
                self.decompress_chunk(i, buf)?;
            }
            buf[off..off + part.len()].copy_from_slice(part);
            &buf[..]
        };
        super::write::out_room(c, n + MAX_OVERHEAD);
        comp.set_nchunk(Some(i as i64));
        let cb = comp.compress(src, c)?;
        if cb == 0 {
            return Err(Error::WriteBuffer);
        }
        c.truncate(cb);
        Ok(())
    }

    /// [`SuperChunk::set_slice`] of `src` from `off` bytes into chunk
    /// `first`, whole chunks on each thread (see [`SuperChunk::rewrite_chunks`]):
    /// each thread makes a chunk from its old bytes where the slice covers
    /// part of it, the slice's over them. Whether it did.
    fn set_slice_chunks(&mut self, first: usize, off: i64, src: &[u8]) -> Result<bool> {
        let Some((head, n)) = self.slice_pieces(off, src.len()) else { return Ok(false) };
        let cs = self.info.chunksize as usize;
        // Chunk `first + k`'s part of the slice, and where in the chunk it goes.
        let piece = |k: usize| match k {
            0 => (off as usize, &src[..head]),
            _ => (0, &src[head + (k - 1) * cs..(head + k * cs).min(src.len())]),
        };
        self.rewrite_chunks_now(n, src.len(), &|k| first + k, &|k, reader, comp, buf, c| {
            let (o, part) = piece(k);
            reader.make_chunk(comp, first + k, o, part, true, buf, c)
        })
    }

    /// The chunks holding items `[start, stop)`, first and one past the last.
    pub fn slice_chunks(&self, start: i64, stop: i64) -> Result<(usize, usize)> {
        let ts = i64::from(self.typesize().max(1));
        if start < 0 || stop < start {
            return Err(Error::InvalidParam);
        }
        // No chunk holds any part of a slice of an empty super-chunk (as c-blosc2 says).
        if self.nchunks() == 0 {
            return Ok((0, 0));
        }
        if stop.checked_mul(ts).is_none_or(|e| e > self.info.nbytes) {
            return Err(Error::InvalidParam);
        }
        let (first, _) = self.locate(start * ts)?;
        if stop == start {
            return Ok((first, first));
        }
        let (last, _) = self.locate(stop * ts - 1)?;
        Ok((first, last + 1))
    }
}
