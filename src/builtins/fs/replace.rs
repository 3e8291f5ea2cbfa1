//! Replacing a file's content as one step, for `write` and `edit`: the new text goes to a
//! fresh file in the same directory, which is synced and renamed over the old name. A
//! failure on the way (a full disk, a file-size limit) removes the fresh file and leaves
//! the old one whole; a reader sees the old content or the new, never a mix. The old
//! file's mode and owner are kept. The name is looked at without following it: a
//! directory, a FIFO or a link found there is refused, never opened (nothing can block).

use super::beneath;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstatat};
use nix::unistd::{Gid, Uid, UnlinkatFlags, fchown, fsync, unlinkat};
use std::ffi::OsString;
use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

/// Why a replacement did not happen.
#[derive(Debug)]
pub(super) enum ReplaceError {
    /// The name is a directory.
    Directory,
    /// The name is something else than a regular file (a FIFO, a device, a link).
    NotRegular,
    /// Opening, writing, syncing or renaming failed.
    Io(io::Error),
}

impl From<io::Error> for ReplaceError {
    fn from(error: io::Error) -> Self {
        ReplaceError::Io(error)
    }
}

impl From<Errno> for ReplaceError {
    fn from(errno: Errno) -> Self {
        ReplaceError::Io(errno.into())
    }
}

/// Writes `content` as the whole of `path` (inside `root`); `Ok(true)` when it did not
/// exist before. Missing parents are made when `make_parents`.
pub(super) fn replace(
    root: &Path,
    path: &Path,
    content: &[u8],
    make_parents: bool,
) -> Result<bool, ReplaceError> {
    if path == root {
        return Err(ReplaceError::Directory);
    }
    let (directory, name) = beneath::parent_of(root, path, make_parents)?;
    let before = match fstatat(&directory, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) => Some(regular(stat)?),
        Err(Errno::ENOENT) => None,
        Err(errno) => return Err(errno.into()),
    };
    let (temporary, file) = create_temporary(&directory)?;
    let written = fill(file, content, before.as_ref()).and_then(|()| {
        Ok(renameat(
            &directory,
            temporary.as_os_str(),
            &directory,
            name,
        )?)
    });
    if let Err(error) = written {
        let _ = unlinkat(
            &directory,
            temporary.as_os_str(),
            UnlinkatFlags::NoRemoveDir,
        );
        return Err(error.into());
    }
    // The rename is durable once the directory is; a failure here loses nothing written.
    let _ = fsync(&directory);
    Ok(before.is_none())
}

/// The old file's status, when it is a regular file.
fn regular(stat: FileStat) -> Result<FileStat, ReplaceError> {
    match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFREG => Ok(stat),
        SFlag::S_IFDIR => Err(ReplaceError::Directory),
        _ => Err(ReplaceError::NotRegular),
    }
}

/// A new, empty, exclusively created file of a name nobody can have planted.
fn create_temporary(directory: &OwnedFd) -> io::Result<(OsString, File)> {
    let flags = OFlag::O_WRONLY
        | OFlag::O_CREAT
        | OFlag::O_EXCL
        | OFlag::O_NOFOLLOW
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let state = RandomState::new();
    for attempt in 0u32.. {
        let name = OsString::from(format!(
            ".dsh-tools-{:016x}.tmp",
            state.hash_one((attempt, std::time::SystemTime::now()))
        ));
        match openat(
            directory,
            name.as_os_str(),
            flags,
            Mode::from_bits_truncate(0o666),
        ) {
            Ok(fd) => return Ok((name, File::from(fd))),
            Err(Errno::EEXIST) if attempt < 16 => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
    unreachable!("the loop returns")
}

/// Writes and syncs the new file, with the old one's owner and mode.
fn fill(mut file: File, content: &[u8], before: Option<&FileStat>) -> io::Result<()> {
    file.write_all(content)?;
    if let Some(old) = before {
        // Owner first: a change of owner clears set-id bits the mode then restores. Only a
        // privileged host can give a file away; otherwise the file stays the host's.
        let owner = (
            Some(Uid::from_raw(old.st_uid)),
            Some(Gid::from_raw(old.st_gid)),
        );
        match fchown(&file, owner.0, owner.1) {
            Ok(()) | Err(Errno::EPERM) => {}
            Err(errno) => return Err(errno.into()),
        }
        fchmod(&file, Mode::from_bits_truncate(old.st_mode & 0o7777))?;
    }
    file.sync_all()
}

/// The temporary files `replace` names, for tests that look for leftovers.
#[cfg(test)]
fn is_temporary(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with(".dsh-tools-")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_old_file_is_replaced_whole_keeping_its_mode_and_nothing_is_left_over() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let path = root.join("a.txt");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(!replace(&root, &path, b"new", false).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        assert!(replace(&root, &root.join("b/c.txt"), b"x", true).unwrap());
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(!names.iter().any(|n| is_temporary(n)), "{names:?}");
    }

    #[test]
    fn a_fifo_a_link_or_a_directory_at_the_name_is_refused_without_blocking() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        nix::unistd::mkfifo(&root.join("fifo"), Mode::from_bits_truncate(0o600)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
        std::fs::create_dir(root.join("dir")).unwrap();
        for (name, directory) in [("fifo", false), ("zero", false), ("dir", true)] {
            let error = replace(&root, &root.join(name), b"x", false).unwrap_err();
            match error {
                ReplaceError::Directory => assert!(directory, "{name}"),
                ReplaceError::NotRegular => assert!(!directory, "{name}"),
                ReplaceError::Io(e) => panic!("{name}: {e}"),
            }
        }
        assert!(matches!(
            replace(&root, &root, b"x", false),
            Err(ReplaceError::Directory)
        ));
        assert!(
            std::fs::symlink_metadata(root.join("zero"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
