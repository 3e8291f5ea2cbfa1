//! Scratch directories of the host's children (a sandboxed `bash` command's `$TMPDIR`, a
//! Python interpreter's working directory). They live in one private root per host,
//! `$TMPDIR/dsh-tools-scratch-<pid>-<random>`, whose `.lock` the host holds with `flock`
//! for its whole life. A scratch dir is removed when dropped and the root at exit
//! ([`remove_root`]), but a SIGKILLed host, or one whose in-flight calls are never dropped,
//! cannot do either: the kernel releases its lock, and the next host to make a scratch dir
//! sweeps every root whose lock it can take.

use std::fs::{DirBuilder, File};
use std::hash::{BuildHasher, RandomState};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::{Flock, FlockArg};

mod removal;

/// What every root's name starts with.
const PREFIX: &str = "dsh-tools-scratch-";
/// The suffix of a root being made (its lock not yet taken): never swept while young.
const STAGING: &str = ".new";
/// How long a staging root may be in the making before it counts as abandoned.
const STAGING_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

/// A child's scratch directory, removed with everything in it when dropped.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// A new directory `<kind>-<n>` in this host's root (made, and stale roots swept, on
    /// first use).
    pub fn create(kind: &str) -> io::Result<Scratch> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let root = ROOT
            .get_or_init(|| Root::create(&std::env::temp_dir()))
            .as_ref()
            .map_err(|e| io::Error::new(e.kind(), format!("the host's scratch root: {e}")))?;
        let path = root
            .path
            .join(format!("{kind}-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Scratch(path))
    }

    /// A new directory `<kind>-<n>` inside this one (a forked Python run's, inside its
    /// fork server's), removed when dropped like any other.
    pub fn create_in(&self, kind: &str) -> io::Result<Scratch> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = self
            .0
            .join(format!("{kind}-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Scratch(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove(&self.0);
    }
}

/// Removes this host's root with whatever is left in it (scratch dirs of calls still in
/// flight at exit), its lock last. Call it last: later scratch dirs cannot be made.
pub fn remove_root() {
    if let Some(Ok(root)) = ROOT.get() {
        remove_keeping_lock(&root.path);
    }
}

static ROOT: OnceLock<io::Result<Root>> = OnceLock::new();

/// A host's root, locked while the host lives.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    /// Held, not read: the lock goes when the process does, however it ends.
    _lock: Flock<File>,
}

impl Root {
    /// Sweeps `parent` of abandoned roots, then makes this host's: under a staging name
    /// until its lock is taken, so that no sweep can see it unlocked.
    fn create(parent: &Path) -> io::Result<Root> {
        sweep(parent);
        loop {
            let name = format!(
                "{PREFIX}{}-{:016x}",
                std::process::id(),
                RandomState::new().hash_one(std::time::SystemTime::now())
            );
            let staging = parent.join(format!("{name}{STAGING}"));
            match DirBuilder::new().mode(0o700).create(&staging) {
                Ok(()) => {}
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            }
            let lock = File::create(staging.join(".lock")).and_then(|file| {
                Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(lock_error)
            });
            let path = parent.join(name);
            match lock.and_then(|lock| std::fs::rename(&staging, &path).map(|()| lock)) {
                Ok(lock) => return Ok(Root { path, _lock: lock }),
                Err(error) => {
                    remove(&staging);
                    return Err(error);
                }
            }
        }
    }
}

/// Removes every root in `parent` whose owner is gone: its lock can be taken (or, for a
/// staging root, it is older than [`STAGING_GRACE`]).
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| n.starts_with(PREFIX)) else {
            continue;
        };
        let path = entry.path();
        let abandoned = if name.ends_with(STAGING) {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > STAGING_GRACE))
        } else {
            is_unlocked(&path.join(".lock"))
        };
        if abandoned {
            tracing::debug!("removing {}, left by a host that is gone", path.display());
            remove_keeping_lock(&path);
        }
    }
}

/// Whether no process holds the lock: it can be taken, or the file is gone (a root gets
/// its lock before its final name, and loses it only when being removed: a removal that
/// stopped part way, by a host that may be gone).
fn is_unlocked(lock: &Path) -> bool {
    match File::open(lock) {
        Ok(file) => Flock::lock(file, FlockArg::LockExclusiveNonblock).is_ok(),
        Err(error) => error.kind() == io::ErrorKind::NotFound,
    }
}

fn lock_error((_, errno): (File, nix::errno::Errno)) -> io::Error {
    io::Error::from(errno)
}

/// Removes a directory tree whatever its depth (see `removal`), logging what cannot be
/// removed (one already gone is fine).
fn remove(path: &Path) {
    if let Err(error) = removal::remove_tree(path, None) {
        tracing::warn!("could not remove {}: {error}", path.display());
    }
}

/// Removes a root, its `.lock` after everything else: a removal that stops part way leaves
/// a root the next host's sweep still recognizes as abandoned.
fn remove_keeping_lock(path: &Path) {
    if let Err(error) = removal::remove_tree(path, Some(".lock")) {
        tracing::warn!("could not remove {}: {error}", path.display());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_removes_the_roots_of_hosts_that_are_gone_and_keeps_the_live_ones() {
        let parent = tempfile::tempdir().unwrap();
        let live = Root::create(parent.path()).unwrap();
        std::fs::create_dir(live.path.join("bash-0")).unwrap();
        let gone = Root::create(parent.path()).unwrap();
        std::fs::write(gone.path.join("left.txt"), "x").unwrap();
        let gone_path = gone.path.clone();
        drop(gone); // its lock is released, as the kernel releases a dead process's
        let young_staging = parent.path().join(format!("{PREFIX}1-2{STAGING}"));
        std::fs::create_dir(&young_staging).unwrap();
        let unrelated = parent.path().join("dsh-tools-spill-1-abc");
        std::fs::create_dir(&unrelated).unwrap();

        let third = Root::create(parent.path()).unwrap();

        assert!(!gone_path.exists(), "an abandoned root was kept");
        assert!(
            live.path.join("bash-0").is_dir(),
            "a live host's root was swept"
        );
        assert!(young_staging.is_dir(), "a root in the making was swept");
        assert!(unrelated.is_dir());
        assert!(third.path.is_dir() && third.path.join(".lock").is_file());
    }

    #[test]
    fn a_root_that_lost_its_lock_is_still_swept() {
        let parent = tempfile::tempdir().unwrap();
        let lockless = parent.path().join(format!("{PREFIX}1-0000000000000001"));
        std::fs::create_dir_all(lockless.join("bash-0/d/d")).unwrap();
        let live = Root::create(parent.path()).unwrap();
        assert!(!lockless.exists(), "a root without its lock was kept");
        assert!(live.path.join(".lock").is_file());
    }

    #[test]
    fn a_root_is_locked_once_it_has_its_final_name() {
        let parent = tempfile::tempdir().unwrap();
        let root = Root::create(parent.path()).unwrap();
        assert!(!root.path.to_string_lossy().ends_with(STAGING));
        assert!(!is_unlocked(&root.path.join(".lock")));
        drop(root);
    }

    #[test]
    fn a_scratch_dir_is_removed_with_its_contents_when_dropped() {
        let scratch = Scratch::create("test").unwrap();
        std::fs::write(scratch.path().join("file"), "x").unwrap();
        let path = scratch.path().to_owned();
        drop(scratch);
        assert!(!path.exists());
    }
}
