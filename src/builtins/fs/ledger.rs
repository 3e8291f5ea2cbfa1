//! Stale-edit protection: what each file looked like when an agent scope last `read`,
//! wrote or edited it. `write` and `edit` of an existing file the scope has not seen, or
//! that changed since, are refused (Claude Code's rule), so a model never overwrites a
//! change it did not see: the user's, a linter's, another agent's.
//!
//! The content hash (XXH3, tens of GB/s) decides; size and mtime travel with it. A file
//! touched but unchanged passes; one rewritten within the same mtime tick does not. Memory
//! is bounded: each scope keeps its most recently used files, and the host its most
//! recently used scopes; a forgotten file only asks the model to read it again.

use crate::tool::{AgentId, ToolError};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fs::Metadata;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Files remembered per scope.
const FILES_PER_SCOPE: usize = 2048;
/// Scopes remembered at once.
const SCOPES: usize = 64;

/// Claude Code's words for an edit of a file never read.
pub const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
/// Claude Code's words for an edit of a file changed since it was read.
pub const MODIFIED: &str = "File has been modified since read, either by the user or by a \
                            linter. Read it again before attempting to write it.";

/// What a file looked like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Modification time, when the file system has one.
    pub mtime: Option<SystemTime>,
    /// Size in bytes.
    pub size: u64,
    /// XXH3-64 of the content.
    pub hash: u64,
}

impl Seen {
    /// The state of `content`, with the file's metadata.
    pub fn of(content: &[u8], meta: Option<&Metadata>) -> Seen {
        Seen {
            mtime: meta.and_then(|meta| meta.modified().ok()),
            size: content.len() as u64,
            hash: xxhash_rust::xxh3::xxh3_64(content),
        }
    }
}

/// The per-scope record (shared by `read`, `write` and `edit` of one root).
#[derive(Debug)]
pub struct Ledger {
    /// `builtins.fs.staleEdits`.
    enabled: bool,
    scopes: Mutex<Lru<Option<AgentId>, Lru<PathBuf, Seen>>>,
}

impl Ledger {
    /// A ledger that checks (`enabled`) or only lets everything through.
    pub fn new(enabled: bool) -> Ledger {
        Ledger {
            enabled,
            scopes: Mutex::new(Lru::new(SCOPES)),
        }
    }

    /// Records that `scope` saw `path` as `seen` (a read, or its own write).
    pub fn record(&self, scope: &Option<AgentId>, path: &Path, seen: Seen) {
        if !self.enabled {
            return;
        }
        let mut scopes = self.scopes.lock();
        let files = scopes.get_or_insert_with(scope.clone(), || Lru::new(FILES_PER_SCOPE));
        files.insert(path.to_path_buf(), seen);
    }

    /// Refuses a change of the existing `path`, now `current`, unless `scope` saw exactly
    /// this content last.
    pub fn check(
        &self,
        scope: &Option<AgentId>,
        path: &Path,
        current: Seen,
    ) -> Result<(), ToolError> {
        if !self.enabled {
            return Ok(());
        }
        let mut scopes = self.scopes.lock();
        let seen = scopes
            .get(scope)
            .and_then(|files| files.get(&path.to_path_buf()).copied());
        match seen {
            None => Err(ToolError::new(NOT_READ)),
            Some(seen) if seen.size != current.size || seen.hash != current.hash => {
                Err(ToolError::new(MODIFIED))
            }
            Some(_) => Ok(()),
        }
    }

    /// Whether changes are checked at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

/// A map that forgets its least recently used entry past `cap` (a scan over at most a few
/// thousand entries, only when full: cheaper than a linked list for this size).
#[derive(Debug)]
struct Lru<K, V> {
    cap: usize,
    tick: u64,
    entries: HashMap<K, (V, u64)>,
}

impl<K: Eq + Hash + Clone, V> Lru<K, V> {
    fn new(cap: usize) -> Self {
        Lru {
            cap,
            tick: 0,
            entries: HashMap::new(),
        }
    }

    fn next(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    fn get(&mut self, key: &K) -> Option<&mut V> {
        let tick = self.next();
        let entry = self.entries.get_mut(key)?;
        entry.1 = tick;
        Some(&mut entry.0)
    }

    fn insert(&mut self, key: K, value: V) {
        self.make_room(&key);
        let tick = self.next();
        self.entries.insert(key, (value, tick));
    }

    fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        self.make_room(&key);
        let tick = self.next();
        let entry = self.entries.entry(key).or_insert_with(|| (make(), tick));
        entry.1 = tick;
        &mut entry.0
    }

    /// Before `key` is added: drops the least recently used entry when full.
    fn make_room(&mut self, key: &K) {
        if self.entries.len() < self.cap || self.entries.contains_key(key) {
            return;
        }
        let oldest = self
            .entries
            .iter()
            .min_by_key(|(_, (_, tick))| *tick)
            .map(|(key, _)| key.clone());
        if let Some(oldest) = oldest {
            self.entries.remove(&oldest);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn seen(hash: u64) -> Seen {
        Seen {
            mtime: None,
            size: 1,
            hash,
        }
    }

    #[test]
    fn a_scope_passes_only_what_it_saw_last() {
        let ledger = Ledger::new(true);
        let (a, b): (Option<AgentId>, Option<AgentId>) = (Some("a".into()), None);
        let path = Path::new("/r/f");
        assert_eq!(
            ledger.check(&a, path, seen(1)).unwrap_err().message,
            NOT_READ
        );
        ledger.record(&a, path, seen(1));
        ledger.check(&a, path, seen(1)).unwrap();
        assert_eq!(
            ledger.check(&a, path, seen(2)).unwrap_err().message,
            MODIFIED
        );
        assert_eq!(
            ledger.check(&b, path, seen(1)).unwrap_err().message,
            NOT_READ
        );
        Ledger::new(false).check(&b, path, seen(3)).unwrap();
    }

    #[test]
    fn the_least_recently_used_entry_is_forgotten_past_the_cap() {
        let mut lru = Lru::new(2);
        lru.insert(1, "one");
        lru.insert(2, "two");
        assert_eq!(lru.get(&1).copied(), Some("one"));
        lru.insert(3, "three");
        assert_eq!(lru.get(&2).copied(), None);
        assert_eq!(lru.get(&1).copied(), Some("one"));
        assert_eq!(lru.get(&3).copied(), Some("three"));
        *lru.get_or_insert_with(4, || "four") = "FOUR";
        assert_eq!(lru.entries.len(), 2);
        assert_eq!(lru.get(&4).copied(), Some("FOUR"));
    }
}
