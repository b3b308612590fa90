//! Metalayers, variable-length metalayers, and whole frames out.

use super::*;

impl SuperChunk {
    // -------------------------------------------------------------- metalayers

    pub(super) fn sync_meta(&mut self, old: &Info) -> Result<()> {
        self.change_tick += 1;
        match &mut self.store {
            Store::Frame(f) => {
                f.begin_change()?;
                let r = f.sync_meta(&self.info, old);
                f.end_change(r)
            }
            Store::Memory(_) => Ok(()),
        }
    }

    /// Run a metalayer change: `f` edits a copy of the info; on failure nothing changes.
    pub(super) fn change_meta<T>(&mut self, f: impl FnOnce(&mut Info) -> Result<T>) -> Result<T> {
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

    pub(super) fn meta_add_now(&mut self, name: &str, content: &[u8]) -> Result<usize> {
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

    pub(super) fn meta_update_now(&mut self, name: &str, content: &[u8]) -> Result<usize> {
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
        // The chunk must hold together (a plain copy as long as it says, blocks
        // with their starts) before its size is allocated.
        ChunkView::open(stored).map_err(|_| Error::Data)?;
        let mut out = vec![0u8; nbytes as usize];
        let n = Decompressor::new(DParams::default()).decompress(stored, &mut out)?;
        if n != nbytes as usize {
            return Err(Error::Data);
        }
        Ok(out)
    }

    pub(super) fn compress_vlmeta(content: &[u8], cparams: Option<&CParams>) -> Result<Vec<u8>> {
        let cp = cparams.cloned().unwrap_or_default();
        let len = content
            .len()
            .checked_add(MAX_OVERHEAD)
            .filter(|&l| l <= i32::MAX as usize)
            .ok_or(Error::InvalidParam)?;
        let mut out = vec![0u8; len];
        let n = Compressor::new(cp)?.compress(content, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Add a variable-length metalayer (compressed with `cparams`, or the defaults); returns its index.
    pub fn vlmeta_add(&mut self, name: &str, content: &[u8], cparams: Option<&CParams>) -> Result<usize> {
        self.writing(|s| s.vlmeta_add_now(name, content, cparams))
    }

    pub(super) fn vlmeta_add_now(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
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

    pub(super) fn vlmeta_update_now(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
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

    pub(super) fn vlmeta_delete_now(&mut self, name: &str) -> Result<usize> {
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
