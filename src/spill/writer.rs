//! Streaming into one spill file (`bash` output as it is produced): every write is counted
//! against `spill.maxTotalBytes` first, so memory and disk both stay bounded; a writer
//! dropped before [`SpillWriter::finish`] removes its file.

use super::{SpillFault, SpillRef, SpillStore};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// Buffered so a stream of small pipe reads becomes few large writes.
const BUFFER_BYTES: usize = 1 << 20;

/// One spill file being written.
pub struct SpillWriter {
    store: Arc<SpillStore>,
    id: u64,
    path: PathBuf,
    file: BufWriter<File>,
    bytes: u64,
    lines: u64,
    last: Option<u8>,
    done: bool,
}

impl SpillWriter {
    pub(super) fn new(store: Arc<SpillStore>, id: u64, path: PathBuf, file: File) -> Self {
        SpillWriter {
            store,
            id,
            path,
            file: BufWriter::with_capacity(BUFFER_BYTES, file),
            bytes: 0,
            lines: 0,
            last: None,
            done: false,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Appends `bytes` (blocking, but only on the page cache in the common case).
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), SpillFault> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.store.grow(self.id, bytes.len() as u64)?;
        self.file.write_all(bytes).map_err(|e| self.io_fault(&e))?;
        self.bytes += bytes.len() as u64;
        self.lines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        self.last = bytes.last().copied();
        Ok(())
    }

    /// Writes what is buffered, so a reader of the file sees every byte written so far.
    pub fn flush(&mut self) -> Result<(), SpillFault> {
        self.file.flush().map_err(|e| self.io_fault(&e))
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes and closes the file; it may be evicted from now on.
    pub fn finish(mut self) -> Result<SpillRef, SpillFault> {
        self.file.flush().map_err(|e| self.io_fault(&e))?;
        self.done = true;
        self.store.finished(self.id);
        let trailing = u64::from(self.last.is_some_and(|b| b != b'\n'));
        Ok(SpillRef {
            path: std::mem::take(&mut self.path),
            bytes: self.bytes,
            lines: self.lines + trailing,
        })
    }

    fn io_fault(&self, error: &std::io::Error) -> SpillFault {
        SpillFault(format!("cannot write {}: {error}", self.path.display()))
    }
}

impl Drop for SpillWriter {
    fn drop(&mut self) {
        if !self.done {
            self.store.discard(self.id);
        }
    }
}
