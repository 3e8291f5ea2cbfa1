//! Spilling large results: text over `spill.thresholdBytes` is saved to a file of a private
//! per-host directory and the model reads a preview and a locator instead. The store owns
//! the directory, the files and their byte budget (`spill.maxTotalBytes`, oldest evicted
//! first), and removes everything at exit unless `spill.keep`. It never fails a call: every
//! fault is a [`SpillFault`] the caller turns into a preview with a note.

mod files;
pub mod preview;
mod writer;

pub use files::SpillDir;
pub use writer::SpillWriter;

use dsh_tools_protocol::SpillConfig;
use parking_lot::{Mutex, RwLock};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A saved text: where it is and how big.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpillRef {
    /// Absolute path of the file.
    pub path: PathBuf,
    /// Bytes written.
    pub bytes: u64,
    /// Lines, as `read` numbers them.
    pub lines: u64,
}

/// Why a text could not be saved (said to the model in the note, and logged).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpillFault(pub String);

/// The spill files of one host.
pub struct SpillStore {
    settings: RwLock<SpillConfig>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Where new files go (opened on first use).
    dir: Option<SpillDir>,
    /// The `spill.dir` that `dir` was opened for.
    opened_for: Option<Option<String>>,
    /// Every directory used so far (a reconfigured host may have used two).
    dirs: Vec<SpillDir>,
    /// Files in creation order (the front is evicted first).
    files: VecDeque<Entry>,
    total: u64,
    next_id: u64,
    /// Set by [`SpillStore::cleanup`]: nothing more is saved.
    closed: bool,
}

struct Entry {
    id: u64,
    path: PathBuf,
    /// The directory it is in, by descriptor.
    dir: Arc<std::os::fd::OwnedFd>,
    bytes: u64,
    /// Still being written (a streaming writer): never evicted.
    open: bool,
}

impl SpillStore {
    /// A store configured by `config` (nothing is created until the first spill).
    pub fn new(config: &SpillConfig) -> Arc<Self> {
        Arc::new(SpillStore {
            settings: RwLock::new(config.clone()),
            state: Mutex::new(State::default()),
        })
    }

    /// Applies a new configuration; a different `dir` is used from the next spill on.
    pub fn configure(&self, config: &SpillConfig) {
        *self.settings.write() = config.clone();
    }

    /// The threshold in bytes, or `None` when spilling is off.
    pub fn threshold(&self) -> Option<usize> {
        let threshold = self.settings.read().threshold_bytes;
        (threshold > 0).then(|| usize::try_from(threshold).unwrap_or(usize::MAX))
    }

    /// Bytes of head and of tail a preview keeps.
    pub fn preview_bytes(&self) -> usize {
        usize::try_from(self.settings.read().preview_bytes).unwrap_or(usize::MAX)
    }

    /// The directories holding this host's spill files (canonical), for `read` and `grep`.
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.state
            .lock()
            .dirs
            .iter()
            .map(|d| d.path.clone())
            .collect()
    }

    /// Saves `text` whole to a new file named after `label` (blocking: call off the async
    /// runtime).
    pub fn save(self: &Arc<Self>, label: &str, text: &[u8]) -> Result<SpillRef, SpillFault> {
        let mut writer = self.writer(label)?;
        writer.write(text)?;
        writer.finish()
    }

    /// A new file to stream into (blocking).
    pub fn writer(self: &Arc<Self>, label: &str) -> Result<SpillWriter, SpillFault> {
        let configured = self.settings.read().dir.clone();
        let mut state = self.state.lock();
        if state.closed {
            return Err(SpillFault("the host is shutting down".into()));
        }
        if state.opened_for.as_ref() != Some(&configured) {
            state.dir = None;
        }
        let dir = match &state.dir {
            Some(dir) => dir.clone(),
            None => {
                let dir = files::open_dir(configured.as_deref()).map_err(|e| {
                    let name = configured.as_deref().unwrap_or("under the temp directory");
                    SpillFault(format!("cannot create the spill directory {name}: {e}"))
                })?;
                state.opened_for = Some(configured);
                state.dir = Some(dir.clone());
                if !state.dirs.iter().any(|d| d.path == dir.path) {
                    state.dirs.push(dir.clone());
                }
                dir
            }
        };
        let (path, file) = files::create_file(&dir, label).map_err(|e| {
            SpillFault(format!(
                "cannot create a spill file in {}: {e}",
                dir.path.display()
            ))
        })?;
        state.next_id += 1;
        let id = state.next_id;
        state.files.push_back(Entry {
            id,
            path: path.clone(),
            dir: dir.fd.clone(),
            bytes: 0,
            open: true,
        });
        drop(state);
        Ok(SpillWriter::new(self.clone(), id, path, file))
    }

    /// Accounts `more` bytes to file `id`, evicting the oldest finished files until every
    /// file fits `spill.maxTotalBytes`.
    fn grow(&self, id: u64, more: u64) -> Result<(), SpillFault> {
        let max = self.settings.read().max_total_bytes;
        let mut state = self.state.lock();
        if state.closed {
            return Err(SpillFault("the host is shutting down".into()));
        }
        // Files still being written cannot be evicted: when they alone leave no room, fail
        // before evicting anything.
        let pinned: u64 = state.files.iter().filter(|e| e.open).map(|e| e.bytes).sum();
        if pinned + more > max {
            return Err(SpillFault(format!(
                "spill.maxTotalBytes ({max}) leaves no room for it"
            )));
        }
        while state.total + more > max {
            let Some(oldest) = state.files.iter().position(|e| !e.open) else {
                break;
            };
            if let Some(evicted) = state.files.remove(oldest) {
                state.total -= evicted.bytes;
                files::remove_file(&evicted.dir, &evicted.path);
            }
        }
        state.total += more;
        if let Some(entry) = state.files.iter_mut().find(|e| e.id == id) {
            entry.bytes += more;
        }
        Ok(())
    }

    /// File `id` is complete (it may be evicted from now on).
    fn finished(&self, id: u64) {
        if let Some(entry) = self.state.lock().files.iter_mut().find(|e| e.id == id) {
            entry.open = false;
        }
    }

    /// File `id` is abandoned: removed, its bytes given back.
    fn discard(&self, id: u64) {
        let mut state = self.state.lock();
        if let Some(index) = state.files.iter().position(|e| e.id == id)
            && let Some(entry) = state.files.remove(index)
        {
            state.total -= entry.bytes;
            files::remove_file(&entry.dir, &entry.path);
        }
    }

    /// Ends spilling for this host: unless `spill.keep`, its files are removed, and the
    /// directories it created with them. Later saves fail. Idempotent.
    pub fn cleanup(&self) {
        let keep = self.settings.read().keep;
        let mut state = self.state.lock();
        if state.closed {
            return;
        }
        state.closed = true;
        if keep {
            return;
        }
        for entry in state.files.drain(..) {
            files::remove_file(&entry.dir, &entry.path);
        }
        state.total = 0;
        for dir in state.dirs.iter().filter(|d| d.created) {
            files::remove_dir(dir);
        }
    }

    /// Whether `path` (absolute) lies in one of this host's spill directories.
    pub fn holds(&self, path: &Path) -> bool {
        self.state
            .lock()
            .dirs
            .iter()
            .any(|d| path.starts_with(&d.path))
    }
}

impl std::fmt::Debug for SpillStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpillStore")
            .field("settings", &*self.settings.read())
            .field("dirs", &self.dirs())
            .finish_non_exhaustive()
    }
}

impl Drop for SpillStore {
    fn drop(&mut self) {
        self.cleanup();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn store_in(dir: &Path, max_total_bytes: u64) -> Arc<SpillStore> {
        SpillStore::new(&SpillConfig {
            dir: Some(dir.join("spill").display().to_string()),
            max_total_bytes,
            ..SpillConfig::default()
        })
    }

    #[test]
    fn saves_whole_texts_and_counts_lines() {
        let base = tempfile::tempdir().unwrap();
        let store = store_in(base.path(), 1 << 20);
        let saved = store.save("echo", b"a\nb\nc").unwrap();
        assert_eq!(std::fs::read(&saved.path).unwrap(), b"a\nb\nc");
        assert_eq!((saved.bytes, saved.lines), (5, 3));
        assert!(store.holds(&saved.path));
    }

    #[test]
    fn evicts_the_oldest_files_first() {
        let base = tempfile::tempdir().unwrap();
        let store = store_in(base.path(), 250);
        let first = store.save("t", &[b'1'; 100]).unwrap();
        let second = store.save("t", &[b'2'; 100]).unwrap();
        let third = store.save("t", &[b'3'; 100]).unwrap();
        assert!(!first.path.exists());
        assert!(second.path.exists() && third.path.exists());
        let fault = store.save("t", &[b'4'; 300]).unwrap_err();
        assert_eq!(fault.0, "spill.maxTotalBytes (250) leaves no room for it");
        // A text that can never fit evicts nothing and leaves no file behind.
        assert!(second.path.exists() && third.path.exists());
        let left = std::fs::read_dir(base.path().join("spill"))
            .unwrap()
            .count();
        assert_eq!(left, 2);
    }

    #[test]
    fn cleanup_removes_what_the_host_created_unless_kept() {
        let base = tempfile::tempdir().unwrap();
        let store = store_in(base.path(), 1 << 20);
        let saved = store.save("t", b"x").unwrap();
        store.cleanup();
        assert!(!saved.path.exists());
        assert!(!base.path().join("spill").exists());
        assert!(store.save("t", b"x").is_err());

        let kept = SpillStore::new(&SpillConfig {
            dir: Some(base.path().join("kept").display().to_string()),
            keep: true,
            ..SpillConfig::default()
        });
        let saved = kept.save("t", b"x").unwrap();
        drop(kept);
        assert!(saved.path.exists());
    }

    #[test]
    fn an_unusable_directory_is_a_fault_not_a_panic() {
        let base = tempfile::tempdir().unwrap();
        let file = base.path().join("file");
        std::fs::write(&file, "").unwrap();
        let store = SpillStore::new(&SpillConfig {
            dir: Some(file.join("spill").display().to_string()),
            ..SpillConfig::default()
        });
        let fault = store.save("t", b"x").unwrap_err();
        assert!(
            fault.0.starts_with("cannot create the spill directory"),
            "{fault}"
        );
    }
}
