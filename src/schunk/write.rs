//! Changing the chunks: append, insert, update, delete, reorder, select,
//! compress, fill with special values.

use super::*;

/// How [`SuperChunk::rewrite_chunks`] makes chunk `k`: `make(k, sc, comp,
/// buf, out)` puts it into `out`, compressed by `comp` (`buf`: room for the
/// chunk's items), reading `sc` as it is before the call. `out` may come
/// empty (an in-memory super-chunk keeps the buffers it stores): size it with
/// [`out_room`].
pub type MakeChunk<'a> =
    dyn Fn(usize, &SuperChunk, &mut Compressor, &mut Vec<u8>, &mut Vec<u8>) -> Result<()> + Sync + 'a;

impl SuperChunk {
    // ------------------------------------------------------------------ writing

    /// The chunksize after adding a chunk of `n` bytes at `pos` (c-blosc2's rules,
    /// docs/FRAME_BEHAVIOUR.md §6.1).
    pub(super) fn chunksize_after_insert(&self, pos: usize, n: i32) -> Result<i32> {
        let c = self.info.chunksize;
        let count = self.nchunks();
        Ok(match c {
            -1 => n,
            0 => 0,
            // no chunks yet: a chunksize set beforehand holds for a shorter first
            // chunk; a longer one sets it (c-blosc2 refuses that append)
            c if count == 0 => c.max(n),
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

    pub(super) fn check_vl(&self, inc: &Incoming) -> Result<()> {
        if self.nchunks() > 0 && inc.vl_blocks != self.info.vl_blocks {
            return Err(Error::ChunkAppend);
        }
        Ok(())
    }

    /// Apply a change to the chunks: `f` does the storage part with the new and old info.
    pub(super) fn mutate(
        &mut self,
        new_info: Info,
        f: impl FnOnce(&mut Store, &Info, &Info, &mut i64) -> Result<()>,
    ) -> Result<()> {
        // A change of a frame file is one journaled change (crash-safe), the
        // special chunks made real for variable sizes included.
        if let Store::Frame(fr) = &mut self.store {
            fr.begin_change()?;
        }
        let r = (|| {
            if new_info.chunksize == 0 && self.info.chunksize > 0 {
                if let Store::Frame(fr) = &mut self.store {
                    fr.materialize_specials(&self.info)?;
                }
            }
            f(&mut self.store, &new_info, &self.info, &mut self.mem_cbytes)
        })();
        let r = match &mut self.store {
            Store::Frame(fr) => fr.end_change(r),
            Store::Memory(_) => r,
        };
        r?;
        self.info = new_info;
        Ok(())
    }

    /// Run the changes `f` makes as one change of the frame: a process dying
    /// in it leaves the frame as before it, and when `f` fails a journaled frame
    /// is put back as it was (see `frame::journal`). Meant for changes that
    /// overwrite little of the existing frame (an index rearrangement with a
    /// metalayer update, chunks added at the end): what they overwrite is held
    /// in memory until the end.
    pub fn atomically<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let journaled = match &mut self.store {
            Store::Frame(fr) if fr.is_journaled() => {
                fr.begin_change()?;
                true
            }
            _ => false,
        };
        let old = journaled.then(|| (self.info.clone(), self.mem_cbytes));
        let r = f(self);
        let r = match &mut self.store {
            Store::Frame(fr) if journaled => fr.end_change(r),
            _ => r,
        };
        if let (Err(_), Some((info, mem))) = (&r, old) {
            self.info = info;
            self.mem_cbytes = mem;
            self.change_tick += 1;
        }
        r
    }

    /// Run a change under the frame lock (when locking), after picking up what
    /// other handles changed on disk.
    pub(super) fn writing<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
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

    pub(super) fn insert_chunk_now(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        self.insert_cow(pos, Cow::Borrowed(chunk))
    }

    /// Insert a chunk; an in-memory super-chunk keeps an owned chunk as it is
    /// (no copy).
    pub(super) fn insert_cow(&mut self, pos: usize, chunk: Cow<'_, [u8]>) -> Result<usize> {
        if pos > self.nchunks() {
            return Err(Error::InvalidParam);
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
                c.insert(pos, owned_exact(chunk, len));
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

    /// Replace chunk `pos` with the chunk in `buf`: an in-memory super-chunk
    /// takes the buffer itself (no copy; `buf` is left empty), a frame writes
    /// it (`buf` is left as it was, to be reused).
    pub fn update_chunk_from(&mut self, pos: usize, buf: &mut Vec<u8>) -> Result<usize> {
        self.writing(|s| s.update_chunk_from_now(pos, buf))
    }

    pub(super) fn update_chunk_from_now(&mut self, pos: usize, buf: &mut Vec<u8>) -> Result<usize> {
        match self.store {
            Store::Memory(_) => self.update_cow(pos, Cow::Owned(std::mem::take(buf))),
            Store::Frame(_) => self.update_cow(pos, Cow::Borrowed(buf)),
        }
    }

    pub(super) fn update_chunk_now(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        self.update_cow(pos, Cow::Borrowed(chunk))
    }

    fn update_cow(&mut self, pos: usize, chunk: Cow<'_, [u8]>) -> Result<usize> {
        self.check_index(pos)?;
        let inc = inspect(&chunk)?;
        if inc.vl_blocks != self.info.vl_blocks {
            return Err(Error::ChunkUpdate);
        }
        let (len, nbytes, kind) = (inc.bytes.len(), inc.nbytes, inc.kind);
        let old_n = self.chunk_nbytes(pos)?;
        let mut info = self.info.clone();
        let c = info.chunksize;
        let last = pos + 1 == self.nchunks();
        if c > 0 && (nbytes > c || (!last && nbytes != c)) {
            info.chunksize = 0;
        }
        info.nbytes += i64::from(nbytes) - i64::from(old_n);
        self.mutate(info, move |store, new, old, mem_cbytes| match store {
            Store::Memory(c) => {
                *mem_cbytes += len as i64 - c[pos].len() as i64;
                c[pos] = owned_exact(chunk, len);
                Ok(())
            }
            Store::Frame(f) => f.update(new, old, pos, &chunk[..len], kind),
        })?;
        Ok(self.nchunks())
    }

    /// Remove chunk `pos`; returns the new number of chunks.
    pub fn delete_chunk(&mut self, pos: usize) -> Result<usize> {
        self.writing(|s| s.delete_chunk_now(pos))
    }

    pub(super) fn delete_chunk_now(&mut self, pos: usize) -> Result<usize> {
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

    pub(super) fn reorder_now(&mut self, order: &[i64]) -> Result<()> {
        let n = self.nchunks();
        if order.len() != n {
            return Err(Error::InvalidParam);
        }
        let mut seen = vec![false; n];
        let mut idx = Vec::with_capacity(n);
        for &o in order {
            // An order that is not a permutation is bad data (as c-blosc2 says).
            let o = usize::try_from(o).map_err(|_| Error::Data)?;
            if o >= n || std::mem::replace(&mut seen[o], true) {
                return Err(Error::Data);
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
    /// in their new order): the chunks not named leave the super-chunk.
    pub fn select_chunks(&mut self, keep: &[usize]) -> Result<()> {
        let picks: Vec<Pick> = keep.iter().map(|&k| Pick::Chunk(k)).collect();
        self.arrange(&picks)
    }

    /// Make the chunk list `picks`: current chunks (each at most once, in
    /// their new order) and new chunks of special values; the chunks not
    /// picked leave the super-chunk. One index write for a frame, however
    /// many chunks move, go or come.
    pub fn arrange(&mut self, picks: &[Pick]) -> Result<()> {
        self.writing(|s| s.arrange_now(picks))
    }

    pub(super) fn arrange_now(&mut self, picks: &[Pick]) -> Result<()> {
        let n = self.nchunks();
        let mut seen = vec![false; n];
        for p in picks {
            match *p {
                Pick::Chunk(k) if k >= n || std::mem::replace(&mut seen[k], true) => {
                    return Err(Error::InvalidIndex)
                }
                Pick::Special(_, nb) if nb < 0 || nb % self.typesize().max(1) != 0 => {
                    return Err(Error::InvalidParam)
                }
                _ => {}
            }
        }
        if picks.len() == n && picks.iter().enumerate().all(|(i, p)| *p == Pick::Chunk(i)) {
            return Ok(());
        }
        let mut info = self.info.clone();
        let mut nbytes = 0i64;
        let mut uniform = true;
        for (i, p) in picks.iter().enumerate() {
            let nb = match *p {
                Pick::Chunk(k) => self.chunk_nbytes(k)?,
                Pick::Special(_, nb) => nb,
            };
            nbytes += i64::from(nb);
            let last = i + 1 == picks.len();
            if info.chunksize > 0 && (nb > info.chunksize || (!last && nb != info.chunksize)) {
                uniform = false;
            }
        }
        if info.chunksize < 0 {
            if let Some(Pick::Special(_, nb)) = picks.first() {
                info.chunksize = *nb;
            }
        }
        info.nbytes = nbytes;
        if !uniform {
            info.chunksize = 0;
        }
        if !picks.iter().any(|p| matches!(p, Pick::Chunk(_))) {
            info.vl_blocks = false;
        }
        let cparams = self.context_cparams();
        self.mutate(info, |store, new, old, mem_cbytes| match store {
            Store::Memory(c) => {
                let mut all: Vec<Option<Vec<u8>>> = std::mem::take(c).into_iter().map(Some).collect();
                let mut out = Vec::with_capacity(picks.len());
                for p in picks {
                    out.push(match *p {
                        Pick::Chunk(k) => all[k].take().unwrap_or_default(),
                        Pick::Special(kind, nb) => {
                            let mut b = vec![0u8; EXTENDED_HEADER_LENGTH];
                            let len = crate::chunk::special::make(&cparams, kind, nb, None, &mut b)?;
                            b.truncate(len);
                            b
                        }
                    });
                }
                *c = out;
                *mem_cbytes = c.iter().map(|x| x.len() as i64).sum();
                Ok(())
            }
            Store::Frame(f) => f.arrange(new, old, picks),
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

    /// The chunk `source` makes, compressed with the super-chunk's parameters
    /// into `out` (resized to the chunk; reusing one buffer across calls
    /// spares a chunk-sized allocation each). Each block is made by the job
    /// that compresses it (see [`Compressor::compress_from`]).
    pub fn compress_from(&mut self, source: &dyn crate::chunk::BlockSource, out: &mut Vec<u8>) -> Result<()> {
        let len = source.len() + MAX_OVERHEAD;
        if out.len() < len {
            out.resize(len, 0);
        }
        let n = self.compressor()?.compress_from(source, &mut out[..len])?;
        if n == 0 {
            return Err(Error::WriteBuffer);
        }
        out.truncate(n);
        Ok(())
    }

    /// Replace chunk `at(k)`, for every `k` in `0..n` (`bytes` of items in
    /// all), with the chunk `make(k, ...)` builds, on several threads: each
    /// chunk is made on one thread, with a compressor of its own making the
    /// chunks this super-chunk's compressor would, two chunks per thread at a
    /// time, and each group is stored in order (memory stays within a few
    /// chunks per thread). `Ok(false)`, with nothing changed, when it is not
    /// worth it (one thread, or fewer chunks than threads) or a prefilter is
    /// set (its user code sees the chunks one after another): the caller then
    /// makes them one by one, the threads sharing each chunk's blocks.
    pub fn rewrite_chunks(
        &mut self,
        n: usize,
        bytes: usize,
        at: &(dyn Fn(usize) -> usize + Sync),
        make: &MakeChunk<'_>,
    ) -> Result<bool> {
        if self.rewrite_threads(n, bytes).is_none() {
            return Ok(false);
        }
        self.writing(|s| s.rewrite_chunks_now(n, bytes, at, make))
    }

    /// The threads [`SuperChunk::rewrite_chunks`] would make `n` chunks on, if at all.
    fn rewrite_threads(&self, n: usize, bytes: usize) -> Option<usize> {
        let threads = crate::chunk::jobs_threads(self.info.cparams.nthreads, n, bytes);
        (threads > 1 && n >= threads && self.prefilter.is_none()).then_some(threads)
    }

    pub(super) fn rewrite_chunks_now(
        &mut self,
        n: usize,
        bytes: usize,
        at: &(dyn Fn(usize) -> usize + Sync),
        make: &MakeChunk<'_>,
    ) -> Result<bool> {
        let nthreads = self.info.cparams.nthreads;
        let Some(threads) = self.rewrite_threads(n, bytes) else { return Ok(false) };
        let mut params = self.compressor()?.params().clone();
        params.nthreads = 1;
        let comps = (0..threads)
            .map(|_| Compressor::sticky(params.clone()).map(Mutex::new))
            .collect::<Result<Vec<_>>>()?;
        let group = 2 * threads;
        let outs: Vec<Mutex<(Vec<u8>, Vec<u8>)>> = (0..group.min(n)).map(|_| Mutex::default()).collect();
        for start in (0..n).step_by(group) {
            let len = group.min(n - start);
            let reader: &SuperChunk = self;
            crate::chunk::run_jobs(nthreads, len, bytes / n * len, &|k| {
                // A compressor no other thread is using (as many as threads;
                // an executor that runs more jobs at once waits for one).
                let mut comp = match comps.iter().find_map(|c| c.try_lock().ok()) {
                    Some(c) => c,
                    None => comps[k % comps.len()].lock().unwrap_or_else(|e| e.into_inner()),
                };
                let mut out = outs[k].lock().unwrap_or_else(|e| e.into_inner());
                let (buf, chunk) = &mut *out;
                make(start + k, reader, &mut comp, buf, chunk)
            })?;
            for (k, out) in outs.iter().enumerate().take(len) {
                let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
                self.update_chunk_from_now(at(start + k), &mut out.1)?;
            }
        }
        Ok(true)
    }

    /// Compress `src` with the super-chunk's parameters and append it.
    pub fn append_buffer(&mut self, src: &[u8]) -> Result<usize> {
        self.writing(|s| s.append_buffer_now(src))
    }

    /// The compressor of `append_buffer`, taken out to compress without the
    /// super-chunk (see [`super::SChunk::append_buffer`]); give it back after.
    pub fn take_compressor(&mut self) -> Result<Compressor> {
        self.compressor()?;
        self.comp.take().ok_or(Error::Failure)
    }

    pub fn give_compressor(&mut self, comp: Compressor) {
        if self.comp.is_none() {
            self.comp = Some(comp);
        }
    }

    /// Append a chunk compressed with this super-chunk's compressor (kept as
    /// it is in memory: no copy).
    pub fn append_compressed(&mut self, mut chunk: Vec<u8>) -> Result<usize> {
        self.writing(|s| {
            if let Store::Memory(_) = s.store {
                chunk.shrink_to_fit();
            }
            let pos = s.nchunks();
            s.insert_cow(pos, Cow::Owned(chunk))
        })
    }

    pub(super) fn append_buffer_now(&mut self, src: &[u8]) -> Result<usize> {
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

    pub(super) fn fill_special_now(&mut self, nitems: i64, kind: Special, chunksize: i32) -> Result<usize> {
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
                Store::Frame(f) => {
                    f.begin_change()?;
                    let r = f.fill_special(&info, &self.info, n as usize, kind);
                    f.end_change(r)?
                }
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
}

/// The first `len` bytes of `chunk` as a vector without spare room (an owned
/// one is cut and shrunk in place, not copied).
fn owned_exact(chunk: Cow<'_, [u8]>, len: usize) -> Vec<u8> {
    match chunk {
        Cow::Owned(mut v) => {
            v.truncate(len);
            v.shrink_to_fit();
            v
        }
        Cow::Borrowed(b) => b[..len].to_vec(),
    }
}

/// Make `out` `n` bytes long for a chunk to be written into. An empty buffer
/// (one a store took) is allocated zeroed, which leaves fresh pages untouched
/// until the codec writes them; one with room keeps its memory.
pub fn out_room(out: &mut Vec<u8>, n: usize) {
    if out.capacity() < n {
        *out = vec![0u8; n];
    } else {
        out.resize(n, 0);
    }
}
