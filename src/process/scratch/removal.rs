//! Removing a tree a child left behind, whatever its depth, with two directories open at
//! most and memory that does not grow with the tree. A recursive removal keeps one
//! directory open per level (a 2,000-deep tree runs out of fds at the default `nofile`) or
//! a path per level (hundreds of megabytes). Here the top directory is emptied in passes:
//! files are unlinked, and each subdirectory has its own subdirectories moved up into the
//! top (renamed there under a fresh name) and its files unlinked before it is removed. Each
//! directory is moved at most once, so the work is linear in the tree; nothing is followed,
//! a link is removed as a link. The top's `keep` entry (a lock file) is removed last, so a
//! removal that fails part way leaves it for a later sweep. (Each open directory is held
//! twice, its stream and a duplicate to name entries by: four descriptors in all.)

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{OFlag, RenameFlags, openat, renameat2};
use nix::sys::stat::Mode;
use nix::unistd::{UnlinkatFlags, unlinkat};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::AsFd;
use std::path::Path;

/// Removes the tree at `path` (a link there is removed as a link); one already gone is
/// fine. The entry `keep` of the top directory, if any, goes after everything else.
pub(super) fn remove_tree(path: &Path, keep: Option<&str>) -> io::Result<()> {
    let top = match nix::fcntl::open(path, directory_flags(), Mode::empty()) {
        Ok(top) => top,
        Err(Errno::ENOENT) => return Ok(()),
        Err(Errno::ENOTDIR | Errno::ELOOP) => return remove_path(path, false),
        Err(errno) => return Err(errno.into()),
    };
    let keep = keep.map(|name| CString::new(name).unwrap_or_default());
    let mut top = Dir::from_fd(top)?;
    empty(&mut top, keep.as_deref())?;
    if let Some(keep) = &keep {
        match unlinkat(top.as_fd(), keep.as_c_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
    drop(top);
    remove_path(path, true)
}

fn remove_path(path: &Path, directory: bool) -> io::Result<()> {
    let removed = if directory {
        std::fs::remove_dir(path)
    } else {
        std::fs::remove_file(path)
    };
    match removed {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn directory_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Empties `top` but for `keep`: passes until a pass finds nothing, or removes nothing
/// (then the last error is the answer).
fn empty(top: &mut Dir, keep: Option<&CStr>) -> io::Result<()> {
    let mut fresh = 0u64;
    loop {
        let (mut found, mut removed, mut failure) = (false, false, None);
        let names = top.as_fd().try_clone_to_owned()?;
        for entry in top.iter() {
            let entry = entry?;
            let name = entry.file_name();
            if is_dot(name) || Some(name) == keep {
                continue;
            }
            found = true;
            match remove_entry(&names, name, entry.file_type(), &mut fresh) {
                Ok(()) => removed = true,
                Err(error) => failure = Some(error),
            }
        }
        match (found, removed, failure) {
            (false, _, _) => return Ok(()),
            (true, false, Some(error)) => return Err(error),
            (true, false, None) => return Err(io::Error::other("entries could not be removed")),
            (true, true, _) => {}
        }
    }
}

fn is_dot(name: &CStr) -> bool {
    matches!(name.to_bytes(), b"." | b"..")
}

/// Removes `name` of `top`: unlinked if not a directory; a directory has its directories
/// moved up into `top` and its other entries unlinked, then goes.
fn remove_entry(
    top: &impl AsFd,
    name: &CStr,
    kind: Option<Type>,
    fresh: &mut u64,
) -> io::Result<()> {
    if kind.is_some_and(|kind| kind != Type::Directory) {
        return match unlinkat(top.as_fd(), name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(Errno::EISDIR) => remove_entry(top, name, Some(Type::Directory), fresh),
            Err(errno) => Err(errno.into()),
        };
    }
    let child = match openat(top.as_fd(), name, directory_flags(), Mode::empty()) {
        Ok(child) => child,
        Err(Errno::ENOENT) => return Ok(()),
        Err(Errno::ENOTDIR | Errno::ELOOP) => {
            return remove_entry(top, name, Some(Type::File), fresh);
        }
        Err(errno) => return Err(errno.into()),
    };
    let mut child = Dir::from_fd(child)?;
    let held = child.as_fd().try_clone_to_owned()?;
    for entry in child.iter() {
        let entry = entry?;
        let inner = entry.file_name();
        if is_dot(inner) {
            continue;
        }
        if entry
            .file_type()
            .is_some_and(|kind| kind != Type::Directory)
        {
            match unlinkat(&held, inner, UnlinkatFlags::NoRemoveDir) {
                Ok(()) | Err(Errno::ENOENT) => continue,
                Err(Errno::EISDIR) => {}
                Err(errno) => return Err(errno.into()),
            }
        }
        move_up(&held, inner, top, fresh)?;
    }
    drop(child);
    match unlinkat(top.as_fd(), name, UnlinkatFlags::RemoveDir) {
        // Something appeared in it meanwhile: the next pass sees it again.
        Ok(()) | Err(Errno::ENOENT) | Err(Errno::ENOTEMPTY) => Ok(()),
        Err(errno) => Err(errno.into()),
    }
}

/// Renames `name` of `from` into `top` under a name not taken there.
fn move_up(from: &impl AsFd, name: &CStr, top: &impl AsFd, fresh: &mut u64) -> io::Result<()> {
    for _ in 0..1000 {
        *fresh += 1;
        let target = format!(".dsh-tools-removing-{fresh}");
        let flags = RenameFlags::RENAME_NOREPLACE;
        let moved = match renameat2(from.as_fd(), name, top.as_fd(), target.as_str(), flags) {
            // A file system without RENAME_NOREPLACE: a name not there a moment ago.
            Err(Errno::EINVAL) => {
                let nofollow = nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW;
                match nix::sys::stat::fstatat(top.as_fd(), target.as_str(), nofollow) {
                    Err(Errno::ENOENT) => {
                        nix::fcntl::renameat(from.as_fd(), name, top.as_fd(), target.as_str())
                    }
                    _ => Err(Errno::EEXIST),
                }
            }
            other => other,
        };
        match moved {
            Ok(()) | Err(Errno::ENOENT) => return Ok(()),
            Err(Errno::EEXIST) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
    Err(io::Error::other("no free name to move an entry to"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A chain of `depth` directories under `top`, with a file and a link at every level.
    fn deep_tree(top: &Path, depth: usize, outside: &Path) {
        let fd = nix::fcntl::open(top, directory_flags(), Mode::empty()).unwrap();
        let mut dir = fd;
        for level in 0..depth {
            let file = openat(
                &dir,
                "f",
                OFlag::O_CREAT | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o600),
            )
            .unwrap();
            drop(file);
            nix::unistd::symlinkat(outside, &dir, "out").unwrap();
            if level % 7 == 0 {
                nix::sys::stat::mkdirat(&dir, "empty", Mode::from_bits_truncate(0o700)).unwrap();
            }
            nix::sys::stat::mkdirat(&dir, "d", Mode::from_bits_truncate(0o700)).unwrap();
            dir = openat(&dir, "d", directory_flags(), Mode::empty()).unwrap();
        }
    }

    #[test]
    fn a_tree_deeper_than_the_fd_limit_goes_with_two_directories_open() {
        let base = tempfile::tempdir().unwrap();
        let (top, outside) = (base.path().join("top"), base.path().join("outside"));
        std::fs::create_dir(&top).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("kept.txt"), "x").unwrap();
        deep_tree(&top, 3000, &outside);
        std::fs::write(top.join(".lock"), "").unwrap();
        remove_tree(&top, Some(".lock")).unwrap();
        assert!(!top.exists());
        assert!(
            outside.join("kept.txt").is_file(),
            "links are removed, never followed"
        );
    }

    #[test]
    fn the_kept_entry_stays_while_anything_else_is_left() {
        let base = tempfile::tempdir().unwrap();
        let top = base.path().join("top");
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        std::fs::write(top.join(".lock"), "").unwrap();
        let kept = CString::new(".lock").unwrap();
        let mut dir = Dir::open(&top, directory_flags(), Mode::empty()).unwrap();
        empty(&mut dir, Some(&kept)).unwrap();
        let left: Vec<_> = std::fs::read_dir(&top)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [".lock"]);
        remove_tree(&top, Some(".lock")).unwrap();
        assert!(!top.exists());
        remove_tree(&top, None).unwrap();
    }
}
