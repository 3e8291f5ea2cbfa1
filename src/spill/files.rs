//! The file-system side of spilling: the private directory, unguessable owner-only file
//! names created exclusively (a planted file or link cannot redirect a write), removal.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A directory spill files go to.
#[derive(Clone, Debug)]
pub struct SpillDir {
    /// Canonical path (what locators start with, and what `read`/`grep` compare against).
    pub path: PathBuf,
    /// Whether this host created it (then it removes it whole at exit).
    pub created: bool,
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
    if !path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", path.display()),
        ));
    }
    Ok(SpillDir { path, created })
}

/// Creates `<label>-<random>.txt` in `dir`, readable and writable by the owner only.
pub fn create_file(dir: &Path, label: &str) -> io::Result<(PathBuf, File)> {
    let path = dir.join(format!("{}-{}.txt", safe_label(label), random_hex()?));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    Ok((path, file))
}

/// Removes one file, logging what cannot be removed (a file already gone is fine).
pub fn remove_file(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("spill: cannot remove {}: {e}", path.display()),
    }
}

/// Removes a directory this host created, with whatever is left in it.
pub fn remove_dir(path: &Path) {
    match std::fs::remove_dir_all(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("spill: cannot remove {}: {e}", path.display()),
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
        let (a, _) = create_file(dir.path(), "t").unwrap();
        let (b, _) = create_file(dir.path(), "t").unwrap();
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
        remove_dir(&first.path);
        remove_dir(&second.path);
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
}
