//! Path confinement: every fs path resolves, component by component, inside one canonical
//! root; `..` that leaves it, absolute paths outside it and symbolic links whose target
//! leaves it are refused before any file is opened.

use crate::spill::SpillStore;
use crate::tool::ToolError;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Symbolic links followed in one resolution before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;
/// Longest path accepted, in bytes (Linux's `PATH_MAX`, which counts the final NUL): a
/// longer one could never be opened, and resolving it component by component first would
/// cost time and memory in proportion (a 30 MB `x/../…` path: seconds and gigabytes).
pub const MAX_PATH_BYTES: usize = 4095;

/// The directory the fs tools are confined to.
#[derive(Debug)]
pub struct FsRoot {
    /// Canonical (absolute, symlink-free) root.
    canonical: PathBuf,
    /// The configured root made absolute without resolving links (an alias users may type).
    configured: PathBuf,
    /// Paths are shown absolute (a spill directory: outside the workspace, so a
    /// root-relative path would name nothing).
    absolute_display: bool,
    /// The host's spill files, which `read` and `grep` may also read.
    spill: Option<Arc<SpillStore>>,
    /// Canonical files the writing tools refuse: the permission rules' own files.
    protected: Vec<PathBuf>,
}

/// A path resolved inside the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confined {
    /// Absolute and free of symbolic links (missing trailing components are kept as typed).
    pub path: PathBuf,
    /// Root-relative, `/`-separated (`.` for the root): what the model and UIs see.
    pub display: String,
}

/// One component still to resolve, with the link whose target it came from.
struct Pending {
    part: OsString,
    kind: PartKind,
    from_link: Option<Arc<str>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PartKind {
    Parent,
    Name,
}

impl FsRoot {
    /// Canonicalizes `root` once; it must be an existing directory.
    pub fn open(root: &str) -> io::Result<FsRoot> {
        let configured = std::path::absolute(root)?;
        let canonical = configured.canonicalize()?;
        if !canonical.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        Ok(FsRoot {
            canonical,
            configured,
            absolute_display: false,
            spill: None,
            protected: Vec::new(),
        })
    }

    /// The same root, its writing tools refusing `files` (those that exist now).
    pub fn protecting(self, files: &[String]) -> FsRoot {
        let protected = files
            .iter()
            .filter_map(|file| std::fs::canonicalize(file).ok())
            .collect();
        FsRoot { protected, ..self }
    }

    /// Refuses a write to a protected file: the permission rules change only through the
    /// user's answers (`client/approve`), never through a tool the model calls.
    pub fn check_writable(&self, path: &Path, requested: &str) -> Result<(), ToolError> {
        if self.protected.is_empty() {
            return Ok(());
        }
        let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        match self.protected.contains(&target) {
            true => Err(ToolError::new(format!(
                "\"{requested}\" holds the permission rules: it is changed only by the user's \
                 answers to approvals, not by tools"
            ))),
            false => Ok(()),
        }
    }

    /// The same root, with the host's spill directories readable too.
    pub fn with_spill(self, spill: Arc<SpillStore>) -> FsRoot {
        FsRoot {
            spill: Some(spill),
            ..self
        }
    }

    /// Where a read-only call (`read`, `grep`) resolves `requested`: `None` for this root,
    /// or the spill directory that holds an absolute path outside it. Writing tools never
    /// ask, so spill files cannot be changed through them.
    pub fn for_reading(&self, requested: &str) -> Option<FsRoot> {
        let path = Path::new(requested);
        if !path.is_absolute() || self.strip_root(path).is_some() {
            return None;
        }
        let dirs = self.spill.as_ref()?.dirs();
        let dir = dirs.into_iter().find(|dir| path.starts_with(dir))?;
        Some(FsRoot {
            canonical: dir.clone(),
            configured: dir,
            absolute_display: true,
            spill: None,
            protected: Vec::new(),
        })
    }

    /// The canonical root.
    pub fn path(&self) -> &Path {
        &self.canonical
    }

    /// Resolves `requested` (relative to the root, or absolute inside it).
    pub fn resolve(&self, requested: &str) -> Result<Confined, ToolError> {
        if requested.is_empty() {
            return Err(ToolError::new("path must not be empty"));
        }
        if requested.len() > MAX_PATH_BYTES {
            return Err(ToolError::new(format!(
                "refused a path of {} bytes: paths are at most {MAX_PATH_BYTES} bytes (PATH_MAX)",
                requested.len()
            )));
        }
        let path = Path::new(requested);
        let relative = if path.is_absolute() {
            self.strip_root(path).ok_or_else(|| {
                self.refusal(requested, "absolute path outside the root".to_owned())
            })?
        } else {
            path
        };
        let mut queue: VecDeque<Pending> = pending_parts(relative, None).into();
        let mut stack: Vec<OsString> = Vec::new();
        let mut current = self.canonical.clone();
        let mut links = 0;
        while let Some(next) = queue.pop_front() {
            if next.kind == PartKind::Parent {
                if stack.pop().is_none() {
                    let reason = match &next.from_link {
                        Some(link) => format!("symbolic link \"{link}\" leads outside the root"),
                        None => "\"..\" leads outside the root".to_owned(),
                    };
                    return Err(self.refusal(requested, reason));
                }
                current.pop();
                continue;
            }
            current.push(&next.part);
            stack.push(next.part);
            let target = match std::fs::symlink_metadata(&current) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    std::fs::read_link(&current).map_err(|e| access_error(requested, &e))?
                }
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(access_error(requested, &e)),
            };
            links += 1;
            if links > MAX_LINKS {
                return Err(ToolError::new(format!(
                    "cannot resolve \"{requested}\": too many levels of symbolic links"
                )));
            }
            let link: Arc<str> = Arc::from(self.shown(&stack));
            current.pop();
            stack.pop();
            let rest = if target.is_absolute() {
                let inside = self.strip_root(&target).ok_or_else(|| {
                    let reason = format!("symbolic link \"{link}\" leads outside the root");
                    self.refusal(requested, reason)
                })?;
                stack.clear();
                current = self.canonical.clone();
                pending_parts(inside, Some(&link))
            } else {
                pending_parts(&target, Some(&link))
            };
            for part in rest.into_iter().rev() {
                queue.push_front(part);
            }
        }
        Ok(Confined {
            path: current,
            display: self.shown(&stack),
        })
    }

    /// The root-relative display of an absolute path found by walking the root.
    pub fn display(&self, absolute: &Path) -> Option<String> {
        let relative = absolute.strip_prefix(&self.canonical).ok()?;
        let parts: Vec<OsString> = relative
            .components()
            .map(|c| c.as_os_str().to_owned())
            .collect();
        Some(self.shown(&parts))
    }

    /// Resolves `requested` for a tool that changes files (`write`, `edit`): as
    /// [`resolve`](Self::resolve), and refused inside a spill directory (even one under the
    /// root), which is never written but by the host.
    pub fn resolve_for_writing(&self, requested: &str) -> Result<Confined, ToolError> {
        let confined = self.resolve(requested)?;
        if self
            .spill
            .as_ref()
            .is_some_and(|spill| spill.holds(&confined.path))
        {
            return Err(ToolError::new(format!(
                "refused \"{requested}\": the spill directory is read-only"
            )));
        }
        Ok(confined)
    }

    /// How a resolved path is shown: root-relative, or absolute for a spill directory.
    fn shown(&self, parts: &[OsString]) -> String {
        if !self.absolute_display {
            return display_of(parts);
        }
        let mut path = self.canonical.clone();
        path.extend(parts);
        path.display().to_string()
    }

    /// `path` without the root (canonical or as configured), compared component-wise.
    fn strip_root<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.canonical)
            .or_else(|_| path.strip_prefix(&self.configured))
            .ok()
    }

    fn refusal(&self, requested: &str, reason: String) -> ToolError {
        let root = self.canonical.display();
        ToolError::new(format!("refused \"{requested}\": {reason} {root}"))
    }
}

/// The components of a relative path still to resolve (`.` dropped).
fn pending_parts(path: &Path, from_link: Option<&Arc<str>>) -> Vec<Pending> {
    path.components()
        .filter_map(|component| {
            let (part, kind) = match component {
                Component::Normal(name) => (name.to_owned(), PartKind::Name),
                Component::ParentDir => (OsString::new(), PartKind::Parent),
                // `.` adds nothing; a root or prefix cannot follow the stripped root.
                Component::CurDir | Component::RootDir | Component::Prefix(_) => return None,
            };
            Some(Pending {
                part,
                kind,
                from_link: from_link.cloned(),
            })
        })
        .collect()
}

fn display_of(parts: &[OsString]) -> String {
    if parts.is_empty() {
        return ".".to_owned();
    }
    let names: Vec<String> = parts
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    names.join("/")
}

fn access_error(requested: &str, error: &io::Error) -> ToolError {
    ToolError::new(format!("cannot access \"{requested}\": {error}"))
}
