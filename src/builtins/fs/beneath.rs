//! Opening a confined path with the check and the open as one step. [`FsRoot::resolve`]
//! (crate::builtins::fs::root) decides that a path stays inside the root, but a directory
//! on it can be swapped for a symbolic link before the file is opened. Here the kernel does
//! the open itself, `openat2` from the root's directory with `RESOLVE_BENEATH` and
//! `RESOLVE_NO_SYMLINKS` (the resolved path has no links left), so a swapped component fails
//! the open (ELOOP) instead of leading outside. Missing parents are made one at a time the
//! same way.

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::{Mode, mkdirat};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

/// Opens the existing `path` (inside `root`) for reading; a FIFO does not block the open.
pub(super) fn open_for_reading(root: &Path, path: &Path) -> io::Result<File> {
    let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    open(root, path, flags).map(File::from)
}

/// Creates or truncates `path` (inside `root`) for writing, making missing parents.
pub(super) fn create_for_writing(root: &Path, path: &Path) -> io::Result<File> {
    let mut directory = open_root(root)?;
    let relative = relative(root, path)?;
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        let Component::Normal(name) = component else {
            return Err(io::Error::other("not a resolved path"));
        };
        if components.peek().is_none() {
            let how = OpenHow::new()
                .flags(
                    OFlag::O_WRONLY
                        | OFlag::O_CREAT
                        | OFlag::O_TRUNC
                        | OFlag::O_NOCTTY
                        | OFlag::O_CLOEXEC,
                )
                .mode(Mode::from_bits_truncate(0o666))
                .resolve(BENEATH);
            return Ok(File::from(openat2(&directory, name, how)?));
        }
        match mkdirat(&directory, name, Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(error) => return Err(error.into()),
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

fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    Ok(nix::fcntl::open(root, flags, Mode::empty())?)
}

fn open(root: &Path, path: &Path, flags: OFlag) -> io::Result<OwnedFd> {
    let directory = open_root(root)?;
    let how = OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC)
        .resolve(BENEATH);
    Ok(openat2(&directory, relative(root, path)?, how)?)
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
