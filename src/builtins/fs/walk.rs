//! Walking a directory for `glob` and `grep` the way ripgrep does, without leaving the root:
//! `ignore`'s parallel walker on all cores, hidden files and directories skipped,
//! `.gitignore`, `.ignore` and `.rgignore` honoured (also those between the root and the
//! search directory, never those above the root, nor the user's global excludes), and
//! symbolic links neither followed nor listed (`rg` without `-L`). A `.gitignore` counts
//! outside a git repository too (`rg --no-require-git`): the root is often a subdirectory
//! of a repository whose `.git` lies above it.
//!
//! The walker only lists; the tools open each file themselves through `beneath`.

use super::root::FsRoot;
use ignore::overrides::Override;
use ignore::types::Types;
use ignore::{DirEntry, WalkBuilder, WalkState};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio_util::sync::CancellationToken;

/// Ignore files read in every directory (the `.gitignore` family is built in).
const CUSTOM_IGNORE_FILES: [&str; 1] = [".rgignore"];

/// What narrows a walk besides the ignore files.
#[derive(Default)]
pub struct Filters {
    /// `rg --type`.
    pub types: Option<Types>,
    /// `rg --glob`.
    pub overrides: Option<Override>,
}

/// How a walk ended.
pub struct Walked {
    /// Directories (or entries) the walk could not read.
    pub unreadable: u64,
    /// Whether the call's signal stopped it.
    pub cancelled: bool,
}

/// Visits every regular file under the directory `base` (inside `root`) on all cores,
/// in no particular order. `make_visitor` is called once per thread; its visitor returns
/// `false` to stop the whole walk.
pub fn parallel<'v>(
    root: &FsRoot,
    base: &Path,
    filters: Filters,
    token: &CancellationToken,
    mut make_visitor: impl FnMut() -> Box<dyn FnMut(&DirEntry) -> bool + Send + 'v>,
) -> Walked {
    let mut builder = WalkBuilder::new(base);
    builder
        .hidden(true)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .threads(0)
        .filter_entry(|entry| entry.file_name() != ".git");
    for name in CUSTOM_IGNORE_FILES {
        builder.add_custom_ignore_filename(name);
    }
    add_ignore_files_between(&mut builder, root.path(), base);
    if let Some(types) = filters.types {
        builder.types(types);
    }
    if let Some(overrides) = filters.overrides {
        builder.overrides(overrides);
    }
    let unreadable = AtomicU64::new(0);
    builder.build_parallel().run(|| {
        let mut visit = make_visitor();
        let unreadable = &unreadable;
        Box::new(move |entry| {
            if token.is_cancelled() {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    // A directory that cannot be listed; a malformed ignore file is not one.
                    if error.io_error().is_some() {
                        unreadable.fetch_add(1, Ordering::Relaxed);
                    }
                    return WalkState::Continue;
                }
            };
            // Links (never followed), directories, FIFOs and devices are not searched.
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            match visit(&entry) {
                true => WalkState::Continue,
                false => WalkState::Quit,
            }
        })
    });
    Walked {
        unreadable: unreadable.into_inner(),
        cancelled: token.is_cancelled(),
    }
}

/// The ignore files of the directories from the root down to `base` (exclusive): what `rg`
/// run from the root would apply to `base`, without reading anything above the root.
fn add_ignore_files_between(builder: &mut WalkBuilder, root: &Path, base: &Path) {
    let Ok(within) = base.strip_prefix(root) else {
        return;
    };
    let mut directory = root.to_path_buf();
    let mut components = within.components().peekable();
    // `base` itself is walked, so its own ignore files are read by the walker.
    while components.peek().is_some() {
        for name in [".gitignore", ".ignore", CUSTOM_IGNORE_FILES[0]] {
            let file = directory.join(name);
            // Not through a link: nothing outside the root is read, even as ignore rules.
            if std::fs::symlink_metadata(&file).is_ok_and(|meta| meta.is_file()) {
                // A malformed file still applies its valid lines (the error is partial).
                let _ = builder.add_ignore(file);
            }
        }
        if let Some(next) = components.next() {
            directory.push(next);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// The call's signal stops the walk on every thread: cancelled at the first file of
    /// 3,000, it visits at most a few more (one in flight per thread), and says so.
    #[test]
    fn a_cancelled_walk_stops_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for d in 0..30 {
            for f in 0..100 {
                let path = base.join(format!("d{d}/f{f}.txt"));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "x\n").unwrap();
            }
        }
        let root = FsRoot::open(base.to_str().unwrap()).unwrap();
        let visited = AtomicUsize::new(0);
        let all = parallel(
            &root,
            &base,
            Filters::default(),
            &CancellationToken::new(),
            || {
                let visited = &visited;
                Box::new(move |_| {
                    visited.fetch_add(1, Ordering::Relaxed);
                    true
                })
            },
        );
        assert_eq!(
            (visited.swap(0, Ordering::Relaxed), all.cancelled),
            (3000, false)
        );

        let token = CancellationToken::new();
        let walked = parallel(&root, &base, Filters::default(), &token, || {
            let (visited, token) = (&visited, &token);
            Box::new(move |_| {
                visited.fetch_add(1, Ordering::Relaxed);
                token.cancel();
                true
            })
        });
        assert!(walked.cancelled);
        let threads = std::thread::available_parallelism().unwrap().get();
        assert!(
            visited.load(Ordering::Relaxed) <= threads.min(12),
            "{visited:?}"
        );
    }
}
