//! The file-system side of spilling: the private directory, opened once and used by its
//! descriptor from then on (a directory replaced by a link, or moved, after it was opened
//! cannot redirect a write), unguessable owner-only file names created exclusively (a
//! planted file or link cannot either), removal.

use nix::errno::Errno;
use nix::fcntl::AtFlags;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat, openat2};
use nix::sys::stat::{Mode, fstat, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};
use std::fs::{DirBuilder, File};
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A directory spill files go to.
#[derive(Clone, Debug)]
pub struct SpillDir {
    /// Canonical path (what locators start with, and what `read`/`grep` compare against).
    pub path: PathBuf,
    /// Whether this host created it (then it removes it whole at exit).
    pub created: bool,
    /// The directory itself, opened once: every file is created and removed through it.
    pub fd: Arc<OwnedFd>,
}

/// Opens the configured directory (created 0700 with its parents when missing), or creates
/// a fresh private one under the system temp directory.
pub fn open_dir(configured: Option<&str>) -> io::Result<SpillDir> {
    let (path, created) = match configured {
        Some(dir) => {
            let path = std::path::absolute(dir)?;
            let created = !path.exists();
            if created {
                DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&path)?;
            }
            (path, created)
        }
        None => {
            let name = format!("dsh-tools-spill-{}-{}", std::process::id(), random_hex()?);
            let path = std::env::temp_dir().join(name);
            // Not recursive: an existing entry of that name (someone else's) is an error.
            DirBuilder::new().mode(0o700).create(&path)?;
            (path, true)
        }
    };
    let path = path.canonicalize()?;
    // The canonical path has no links: one found now was swapped in, and fails the open.
    let how = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    let fd = openat2(nix::fcntl::AT_FDCWD, &path, how).map_err(|errno| match errno {
        Errno::ENOTDIR => io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", path.display()),
        ),
        errno => io::Error::from(errno),
    })?;
    Ok(SpillDir {
        path,
        created,
        fd: Arc::new(fd),
    })
}

/// Creates `<label>-<random>.txt` in `dir` (by its descriptor), readable and writable by
/// the owner only.
pub fn create_file(dir: &SpillDir, label: &str) -> io::Result<(PathBuf, File)> {
    let name = format!("{}-{}.txt", safe_label(label), random_hex()?);
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(
        &*dir.fd,
        name.as_str(),
        flags,
        Mode::from_bits_truncate(0o600),
    )?;
    Ok((dir.path.join(name), File::from(fd)))
}

/// Removes one file of `dir` (by its descriptor), logging what cannot be removed (a file
/// already gone is fine).
pub fn remove_file(dir: &OwnedFd, path: &Path) {
    let Some(name) = path.file_name() else { return };
    match unlinkat(dir, name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => {}
        Err(e) => tracing::warn!("spill: cannot remove {}: {e}", path.display()),
    }
}

/// Removes a directory this host created, with whatever is left in it, when its path still
/// names the directory it opened (one moved or replaced since is left alone).
pub fn remove_dir(dir: &SpillDir) {
    let same = match (
        fstat(&*dir.fd),
        fstatat(
            nix::fcntl::AT_FDCWD,
            &dir.path,
            AtFlags::AT_SYMLINK_NOFOLLOW,
        ),
    ) {
        (Ok(opened), Ok(named)) => (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino),
        (_, Err(Errno::ENOENT)) => return,
        _ => false,
    };
    if !same {
        tracing::warn!(
            "spill: {} was moved or replaced; not removing it",
            dir.path.display()
        );
        return;
    }
    match std::fs::remove_dir_all(&dir.path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("spill: cannot remove {}: {e}", dir.path.display()),
    }
}

/// A tool name as one short path segment: letters, digits, `-` and `_` only.
fn safe_label(label: &str) -> String {
    let safe: String = label
        .chars()
        .take(48)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "result".to_owned()
    } else {
        safe
    }
}

/// 128 bits from the kernel's generator, as hex: a name nobody can guess in advance.
fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn labels_become_one_safe_segment() {
        assert_eq!(safe_label("mcp__fs__read_file"), "mcp__fs__read_file");
        assert_eq!(safe_label("../../etc/passwd"), "______etc_passwd");
        assert_eq!(safe_label(""), "result");
        assert_eq!(safe_label(&"x".repeat(100)).len(), 48);
    }

    #[test]
    fn files_are_owner_only_and_never_reuse_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let dir = open_dir(Some(&dir.path().display().to_string())).unwrap();
        let (a, _) = create_file(&dir, "t").unwrap();
        let (b, _) = create_file(&dir, "t").unwrap();
        assert_ne!(a, b);
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn the_default_directory_is_private_and_fresh() {
        let first = open_dir(None).unwrap();
        let second = open_dir(None).unwrap();
        assert_ne!(first.path, second.path);
        let mode = std::fs::metadata(&first.path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(first.created);
        remove_dir(&first);
        remove_dir(&second);
        assert!(!first.path.exists());
    }

    #[test]
    fn a_configured_directory_that_exists_is_used_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let opened = open_dir(Some(&dir.path().display().to_string())).unwrap();
        assert!(!opened.created);
        let missing = dir.path().join("a/b");
        let opened = open_dir(Some(&missing.display().to_string())).unwrap();
        assert!(opened.created);
        assert!(missing.is_dir());
    }

    #[test]
    fn a_directory_replaced_by_a_link_after_it_was_opened_is_not_written_through() {
        let base = tempfile::tempdir().unwrap();
        let (spill, elsewhere) = (base.path().join("spill"), base.path().join("elsewhere"));
        std::fs::create_dir(&elsewhere).unwrap();
        let dir = open_dir(Some(&spill.display().to_string())).unwrap();
        std::fs::rename(&spill, base.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &spill).unwrap();
        let (path, _) = create_file(&dir, "t").unwrap();
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        let name = path.file_name().unwrap();
        assert!(base.path().join("moved").join(name).is_file());
        remove_file(&dir.fd, &path);
        assert!(!base.path().join("moved").join(name).exists());
        remove_dir(&dir);
        assert!(
            spill.is_symlink() && elsewhere.is_dir(),
            "the link and its target are kept"
        );
    }
}
