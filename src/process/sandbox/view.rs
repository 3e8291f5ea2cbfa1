//! The private filesystem view of a sandboxed child in namespace mode, built as bubblewrap
//! builds one, in the child's own user + mount namespace: the host's tree read-only (so
//! chmod, chown, utimes, xattrs, unlink and rename outside fail with EROFS whatever Landlock
//! covers), fresh `tmpfs` on `/tmp`, `/run`, `/var/run` and `/dev/shm` (no socket file or
//! shared-memory file of the host is even visible), a minimal `/dev` with its own `devpts`,
//! the writable roots and `allowUnixSockets` read-write as before, and each `denyRead` path
//! masked by an empty read-only mount (also inside a writable root).
//!
//! [`View::plan`] prepares every path in the parent; [`View::build`] runs in the forked
//! child between `unshare` and exec and makes raw system calls only. Its order matters:
//! the writable roots, sockets and devices are cloned (`open_tree`) *before* anything is
//! covered, because they often lie under `/tmp`, and attached again (`move_mount`) after.

use crate::process::syscalls::check;
use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

/// Directories that get a fresh `tmpfs` (when they are directories, not links).
const COVERED: [&str; 3] = ["/tmp", "/run", "/var/run"];

/// Device nodes kept in the minimal `/dev` (those the host has).
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// `/dev` links, as `(link, target)`.
const DEV_LINKS: [(&CStr, &CStr); 5] = [
    (c"/dev/fd", c"/proc/self/fd"),
    (c"/dev/stdin", c"/proc/self/fd/0"),
    (c"/dev/stdout", c"/proc/self/fd/1"),
    (c"/dev/stderr", c"/proc/self/fd/2"),
    (c"/dev/ptmx", c"pts/ptmx"),
];

// <linux/mount.h>, <linux/fcntl.h>: not all in the libc crate.
const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// `struct mount_attr` (`MOUNT_ATTR_SIZE_VER0`).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// A mount cloned from the host's tree before it is covered, attached at the same path.
#[derive(Debug)]
struct Graft {
    path: CString,
    /// Missing ancestors are made (in a fresh tmpfs) before attaching.
    ancestors: Vec<CString>,
    dir: bool,
    /// Kept visible but read-only (the workspace of a `read-only` family).
    read_only: bool,
}

/// The grafts that keep each `protected` file (canonical, inside a writable root) as it
/// is: the file itself read-only, and every directory between the root and it grafted onto
/// itself read-write, so none of them is a plain directory entry that a rename could move
/// away (a mount point cannot be renamed or removed: `EBUSY`) to put another file in its
/// place.
fn protected_grafts(
    writable: &[PathBuf],
    protected: &[PathBuf],
) -> impl Iterator<Item = (PathBuf, bool, bool)> {
    let mut grafts: Vec<(PathBuf, bool, bool)> = Vec::new();
    for file in protected {
        let Some(root) = writable.iter().find(|root| file.starts_with(root)) else {
            continue;
        };
        let between = file
            .ancestors()
            .skip(1)
            .take_while(|dir| *dir != root.as_path() && dir.starts_with(root));
        for dir in between {
            if !grafts.iter().any(|(path, _, _)| path == dir) {
                grafts.push((dir.to_path_buf(), true, false));
            }
        }
        grafts.push((file.clone(), false, true));
    }
    grafts.into_iter()
}

/// A `denyRead` path that existed when the spawn was prepared.
#[derive(Debug)]
struct Mask {
    path: CString,
    dir: bool,
}

/// Everything the child needs to build the view, prepared in the parent.
#[derive(Debug)]
pub(super) struct View {
    /// Writable roots, allowed sockets and devices, shallowest first.
    grafts: Vec<Graft>,
    /// The `open_tree` descriptors of `grafts`, then one `/dev/null` clone per file mask
    /// (written by the child in its own copy of memory).
    fds: Vec<AtomicI32>,
    covered: Vec<CString>,
    masks: Vec<Mask>,
}

impl View {
    /// The view of one spawn: `writable` (canonical) and `sockets` (canonical) grafted back,
    /// `visible` (canonical: the workspace when it is not writable, so a command still
    /// starts there) grafted back read-only, `deny_read` masked where it exists now.
    pub(super) fn plan(
        writable: &[PathBuf],
        visible: &[PathBuf],
        sockets: &[PathBuf],
        deny_read: &[PathBuf],
        protected: &[PathBuf],
    ) -> io::Result<Self> {
        let mut grafts: Vec<(PathBuf, bool, bool)> = writable
            .iter()
            .map(|root| (root.clone(), true, false))
            .chain(visible.iter().map(|root| (root.clone(), true, true)))
            .chain(protected_grafts(writable, protected))
            .chain(sockets.iter().map(|socket| (socket.clone(), false, false)))
            .chain(
                DEVICES
                    .iter()
                    .map(PathBuf::from)
                    .filter(|device| device.exists())
                    .map(|device| (device, false, false)),
            )
            .collect();
        grafts.sort_by_key(|(path, _, _)| path.components().count());
        let grafts = grafts
            .into_iter()
            .map(|(path, dir, read_only)| {
                let ancestors = path
                    .ancestors()
                    .skip(1)
                    .filter(|a| a.parent().is_some())
                    .map(c_path)
                    .collect::<io::Result<Vec<_>>>()?;
                Ok(Graft {
                    path: c_path(&path)?,
                    ancestors: ancestors.into_iter().rev().collect(),
                    dir,
                    read_only,
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let covered = COVERED
            .iter()
            .map(Path::new)
            .filter(|dir| std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()))
            .map(c_path)
            .collect::<io::Result<Vec<_>>>()?;
        let mut masks = Vec::new();
        for denied in deny_read {
            let Ok(canonical) = std::fs::canonicalize(denied) else {
                continue;
            };
            let dir = std::fs::metadata(&canonical).is_ok_and(|m| m.is_dir());
            masks.push(Mask {
                path: c_path(&canonical)?,
                dir,
            });
        }
        let file_masks = masks.iter().filter(|mask| !mask.dir).count();
        let fds = (0..grafts.len() + file_masks)
            .map(|_| AtomicI32::new(-1))
            .collect();
        Ok(View {
            grafts,
            fds,
            covered,
            masks,
        })
    }

    /// The child's half, right after `unshare(CLONE_NEWUSER | CLONE_NEWNS | ...)` and the id
    /// maps: raw system calls on the prepared paths only.
    pub(super) fn build(&self) -> io::Result<()> {
        // Nothing done here may propagate to the host's mounts.
        mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
        // std changed directory before `pre_exec`: that directory will be covered.
        let mut cwd = [0u8; libc::PATH_MAX as usize];
        // SAFETY: `cwd` is a live buffer of the length passed.
        let got = unsafe { libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()) };
        if got.is_null() {
            return Err(io::Error::last_os_error());
        }
        let read_only = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        let mut slot = 0;
        for graft in &self.grafts {
            let flags = if graft.dir { AT_RECURSIVE } else { 0 };
            let fd = open_tree(&graft.path, flags)?;
            self.fds[slot].store(fd, Ordering::Relaxed);
            if graft.read_only {
                let flags = AT_RECURSIVE | libc::AT_EMPTY_PATH as libc::c_uint;
                set_attributes(fd, c"", flags, read_only)?;
            }
            slot += 1;
        }
        let hidden = read_only | MOUNT_ATTR_NOEXEC;
        for _ in self.masks.iter().filter(|mask| !mask.dir) {
            let fd = open_tree(c"/dev/null", 0)?;
            self.fds[slot].store(fd, Ordering::Relaxed);
            set_attributes(fd, c"", libc::AT_EMPTY_PATH as libc::c_uint, hidden)?;
            slot += 1;
        }
        set_attributes(libc::AT_FDCWD, c"/", AT_RECURSIVE, read_only)?;
        minimal_dev()?;
        for dir in &self.covered {
            tmpfs(dir, libc::MS_NOSUID | libc::MS_NODEV, c"mode=1777")?;
        }
        for (graft, fd) in self.grafts.iter().zip(&self.fds) {
            for ancestor in &graft.ancestors {
                make(ancestor, true)?;
            }
            make(&graft.path, graft.dir)?;
            attach(fd.load(Ordering::Relaxed), &graft.path)?;
        }
        let mut file_fds = self.fds[self.grafts.len()..].iter();
        for mask in &self.masks {
            let fd = if mask.dir {
                None
            } else {
                file_fds.next().map(|fd| fd.load(Ordering::Relaxed))
            };
            match (exists(&mask.path), fd) {
                // Under a covered directory: already out of sight.
                (false, Some(fd)) => close(fd),
                (false, None) => {}
                (true, Some(fd)) => attach(fd, &mask.path)?,
                (true, None) => {
                    let flags =
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                    tmpfs(&mask.path, flags, c"mode=000,size=4k")?;
                }
            }
        }
        // SAFETY: `cwd` holds the NUL-terminated path getcwd wrote.
        check(unsafe { libc::chdir(cwd.as_ptr().cast()) })
    }
}

/// `path` as a C string (a path with a NUL byte cannot be mounted).
fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("\"{}\" contains a NUL byte", path.display())))
}

/// A tmpfs `/dev` with the kept devices' mount points, the usual links, its own `devpts`
/// (so PTYs work) and a fresh `/dev/shm`.
fn minimal_dev() -> io::Result<()> {
    tmpfs(
        c"/dev",
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        c"mode=0755",
    )?;
    for (link, target) in DEV_LINKS {
        // SAFETY: both are NUL-terminated literals.
        check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) })?;
    }
    make(c"/dev/pts", true)?;
    mount(
        Some(c"devpts"),
        c"/dev/pts",
        Some(c"devpts"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some(c"newinstance,ptmxmode=0666,mode=0620"),
    )?;
    make(c"/dev/shm", true)?;
    tmpfs(c"/dev/shm", libc::MS_NOSUID | libc::MS_NODEV, c"mode=1777")
}

fn mount(
    source: Option<&CStr>,
    target: &CStr,
    kind: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> io::Result<()> {
    let pointer = |s: Option<&CStr>| s.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: every pointer is null or a NUL-terminated string that outlives the call.
    check(unsafe {
        libc::mount(
            pointer(source),
            target.as_ptr(),
            pointer(kind),
            flags,
            pointer(data).cast(),
        )
    })
}

fn tmpfs(target: &CStr, flags: libc::c_ulong, data: &CStr) -> io::Result<()> {
    mount(Some(c"tmpfs"), target, Some(c"tmpfs"), flags, Some(data))
}

/// A detached clone of the mount tree at `path` (close-on-exec).
fn open_tree(path: &CStr, flags: libc::c_uint) -> io::Result<libc::c_int> {
    let flags = flags | OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint;
    // SAFETY: a NUL-terminated path and integer flags.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    libc::c_int::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))
}

fn set_attributes(
    dirfd: libc::c_int,
    path: &CStr,
    flags: libc::c_uint,
    set: u64,
) -> io::Result<()> {
    let attributes = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a NUL-terminated path and a live `mount_attr` of the size passed.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &attributes as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Attaches the detached mount `fd` at `target` and closes `fd`.
fn attach(fd: libc::c_int, target: &CStr) -> io::Result<()> {
    // SAFETY: an open mount fd, an empty and a NUL-terminated path, integer flags.
    let result = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    let error = io::Error::last_os_error();
    close(fd);
    if result != 0 {
        return Err(error);
    }
    Ok(())
}

fn close(fd: libc::c_int) {
    // SAFETY: `fd` is a descriptor this child opened and closes once.
    unsafe { libc::close(fd) };
}

fn exists(path: &CStr) -> bool {
    // SAFETY: a NUL-terminated path.
    unsafe { libc::access(path.as_ptr(), libc::F_OK) == 0 }
}

/// A directory (or an empty file, as a mount point for a file) at `path` unless something
/// is there already.
fn make(path: &CStr, dir: bool) -> io::Result<()> {
    if exists(path) {
        return Ok(());
    }
    // SAFETY: a NUL-terminated path; the file descriptor is closed at once.
    let made = unsafe {
        if dir {
            libc::mkdir(path.as_ptr(), 0o755)
        } else {
            let fd = libc::open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                0o600,
            );
            if fd >= 0 {
                libc::close(fd);
            }
            fd.min(0)
        }
    };
    match check(made) {
        Err(error) if error.raw_os_error() != Some(libc::EEXIST) => Err(error),
        _ => Ok(()),
    }
}

/// Whether `path` is a UNIX socket file (what `allowUnixSockets` entries must be).
pub(super) fn is_socket(path: &Path) -> io::Result<bool> {
    Ok(std::fs::metadata(path)?.file_type().is_socket())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_grafts_shallowest_first_with_their_ancestors_and_masks_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, nested) = (base.join("w"), base.join("w/deeper/x"));
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(base.join("secret"), "x").unwrap();
        let denied = [base.join("secret"), base.join("w"), base.join("missing")];
        let view = View::plan(&[nested.clone(), root.clone()], &[], &[], &denied, &[]).unwrap();
        let paths: Vec<_> = view.grafts.iter().map(|g| g.path.clone()).collect();
        let (outer, inner) = (c_path(&root).unwrap(), c_path(&nested).unwrap());
        let at = |path: &CString| paths.iter().position(|p| p == path).unwrap();
        assert!(at(&outer) < at(&inner), "{paths:?}");
        let first = &view.grafts[at(&outer)];
        assert!(first.dir && !first.read_only);
        assert_eq!(
            first.ancestors.first(),
            Some(&c_path(Path::new("/tmp")).unwrap())
        );
        assert_eq!(first.ancestors.last(), Some(&c_path(&base).unwrap()));
        let masks: Vec<_> = view.masks.iter().map(|m| (m.path.clone(), m.dir)).collect();
        assert_eq!(
            masks,
            vec![
                (c_path(&denied[0]).unwrap(), false),
                (c_path(&root).unwrap(), true)
            ]
        );
        // One descriptor per graft (devices included) and per file mask.
        assert_eq!(view.fds.len(), view.grafts.len() + 1);
        assert!(
            view.grafts
                .iter()
                .any(|g| g.path.as_bytes() == b"/dev/null")
        );
    }
}
