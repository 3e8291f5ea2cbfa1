//! Walking a directory for `glob` and `grep` without leaving the root: `.gitignore` rules
//! apply (ignore files above the search directory and the user's global excludes are not
//! read), `.git` is skipped, and a symbolic link counts only when its target is a file
//! inside the root.

use super::root::FsRoot;
use crate::builtins::typed;
use crate::tool::ToolError;
use ignore::WalkBuilder;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// A file the walk found.
pub struct Found {
    /// Root-relative display path (the link's own path for a symbolic link).
    pub display: String,
    /// Path relative to the search directory (what glob patterns match).
    pub within_base: PathBuf,
    /// What to open (a link's confined target).
    pub file: PathBuf,
}

/// Visits every file under `base` (or `base` itself when it is a file), in path order.
pub fn files(
    root: &FsRoot,
    base: &Path,
    token: &CancellationToken,
    mut visit: impl FnMut(Found) -> Result<(), ToolError>,
) -> Result<(), ToolError> {
    let walker = WalkBuilder::new(base)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker {
        if token.is_cancelled() {
            return Err(typed::aborted());
        }
        // Unreadable entries are skipped: a search reports what it can see.
        let Ok(entry) = entry else { continue };
        let Some(display) = root.display(entry.path()) else {
            continue;
        };
        let file = if entry.path_is_symlink() {
            match root.resolve(&display) {
                Ok(target) if target.path.is_file() => target.path,
                _ => continue,
            }
        } else if entry.file_type().is_some_and(|kind| kind.is_file()) {
            entry.path().to_owned()
        } else {
            continue;
        };
        let within_base = entry
            .path()
            .strip_prefix(base)
            .unwrap_or(entry.path())
            .to_owned();
        visit(Found {
            display,
            within_base,
            file,
        })?;
    }
    Ok(())
}
