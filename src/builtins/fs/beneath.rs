//! Opening a confined path with the check and the open as one step. [`FsRoot::resolve`]
//! (crate::builtins::fs::root) decides that a path stays inside the root, but a directory
//! on it, or the file itself, can be swapped for a symbolic link before the file is opened.
//! Here the kernel does the open itself, `openat2` from the root's directory with
//! `RESOLVE_BENEATH` and `RESOLVE_NO_SYMLINKS` (the resolved path has no links left), so a
//! swapped component fails the open (ELOOP) instead of leading outside. Every open is
//! `O_NONBLOCK` (a FIFO swapped in cannot block it) and its file type is checked on the fd.
//! Missing parents are made one at a time the same way.

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::{Mode, mkdirat};
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

/// Opens the existing `path` (inside `root`) for reading; a FIFO does not block the open.
pub(super) fn open_for_reading(root: &Path, path: &Path) -> io::Result<File> {
    ReadRoot::open(root)?.open_for_reading(root, path)
}

/// Opens the directory that holds `path` (inside `root`), making missing parents when
/// `make_parents`; returns it (readable, so it can be synced) with the file's name.
pub(super) fn parent_of<'p>(
    root: &Path,
    path: &'p Path,
    make_parents: bool,
) -> io::Result<(OwnedFd, &'p OsStr)> {
    let mut directory = open_root(root)?;
    let relative = relative(root, path)?;
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        let Component::Normal(name) = component else {
            return Err(io::Error::other("not a resolved path"));
        };
        if components.peek().is_none() {
            let how = OpenHow::new()
                .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
                .resolve(BENEATH);
            return Ok((openat2(&directory, ".", how)?, name));
        }
        if make_parents {
            match mkdirat(&directory, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(error) => return Err(error.into()),
            }
        }
        directory = openat2(&directory, name, directory_how())?;
    }
    Err(io::Error::other("no file name"))
}

const BENEATH: ResolveFlag = ResolveFlag::RESOLVE_BENEATH.union(ResolveFlag::RESOLVE_NO_SYMLINKS);

fn directory_how() -> OpenHow {
    OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
        .resolve(BENEATH)
}

/// The root itself, by its canonical path: a link found on it now was swapped in (a
/// workspace or spill directory replaced by a link), and fails the open.
fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    Ok(openat2(nix::fcntl::AT_FDCWD, root, how)?)
}

/// `path` relative to `root` (`.` for the root itself).
fn relative<'a>(root: &Path, path: &'a Path) -> io::Result<&'a Path> {
    let relative = path
        .strip_prefix(root)
        .map_err(|_| io::Error::other("the path is not inside the root"))?;
    Ok(if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    })
}

/// The root opened once for many reads (a search): each open is [`open_for_reading`]'s,
/// from this descriptor instead of a fresh open of the root, so a root swapped for a link
/// after the search began is not followed either.
pub(super) struct ReadRoot {
    directory: OwnedFd,
}

impl ReadRoot {
    pub(super) fn open(root: &Path) -> io::Result<ReadRoot> {
        Ok(ReadRoot {
            directory: open_root(root)?,
        })
    }

    /// Opens the existing `path` (inside `root`, the path this was opened from) for reading.
    pub(super) fn open_for_reading(&self, root: &Path, path: &Path) -> io::Result<File> {
        let how = OpenHow::new()
            .flags(
                OFlag::O_RDONLY
                    | OFlag::O_NONBLOCK
                    | OFlag::O_NOCTTY
                    | OFlag::O_CLOEXEC
                    | OFlag::O_NOFOLLOW,
            )
            .resolve(BENEATH);
        Ok(File::from(openat2(
            &self.directory,
            relative(root, path)?,
            how,
        )?))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_link_or_a_path_out_of_the_root_is_never_opened() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret"), "secret").unwrap();
        std::fs::write(root.join("d/f"), "inside").unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("f", root.join("d/relative")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("dirlink")).unwrap();

        let error = |path: &Path| open_for_reading(&root, path).unwrap_err();
        assert_eq!(error(&root.join("link")).raw_os_error(), Some(libc::ELOOP));
        assert_eq!(
            error(&root.join("d/relative")).raw_os_error(),
            Some(libc::ELOOP)
        );
        assert_eq!(
            error(&root.join("dirlink/secret")).raw_os_error(),
            Some(libc::ELOOP)
        );
        assert_eq!(
            error(&root.join("d/../../outside/secret")).raw_os_error(),
            Some(libc::EXDEV)
        );
        assert!(
            error(&outside.join("secret"))
                .to_string()
                .contains("not inside the root")
        );
        assert!(parent_of(&root, &root.join("dirlink/new"), true).is_err());
        let linked_root = base.join("linked-root");
        std::os::unix::fs::symlink(&root, &linked_root).unwrap();
        let via_link = open_for_reading(&linked_root, &linked_root.join("d/f")).unwrap_err();
        assert_eq!(via_link.raw_os_error(), Some(libc::ELOOP));
        let read = std::fs::read_to_string(root.join("d/f")).unwrap();
        let mut opened = String::new();
        io::Read::read_to_string(
            &mut open_for_reading(&root, &root.join("d/f")).unwrap(),
            &mut opened,
        )
        .unwrap();
        assert_eq!(opened, read);
    }
}
