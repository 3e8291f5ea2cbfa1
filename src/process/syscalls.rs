//! The few raw system-call helpers that code between fork and exec shares: they allocate
//! nothing and take no lock, so they are safe in the child of a multi-threaded process.

use std::ffi::CStr;
use std::io;

/// A negative system-call result as the errno it left.
pub(super) fn check(result: i32) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Writes `bytes` to the file at `path` in one `write`, as procfs wants id maps.
pub(super) fn write_file(path: &CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; the flags create nothing.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd)?;
    // SAFETY: `bytes` is a live buffer of `bytes.len()` bytes; `fd` was just opened.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let error = io::Error::last_os_error();
    // SAFETY: `fd` is ours and closed once.
    unsafe { libc::close(fd) };
    match usize::try_from(written) {
        Ok(count) if count == bytes.len() => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::EIO)),
        Err(_) => Err(error),
    }
}

/// `/proc/self/uid_map` and `gid_map` contents mapping the caller's ids to themselves in a
/// user namespace it just created, so files keep their owner and `id` prints what it
/// prints outside.
#[derive(Debug)]
pub(super) struct IdMaps {
    uid: Vec<u8>,
    gid: Vec<u8>,
}

impl IdMaps {
    /// The identity maps of this process's real ids (built in the parent: it allocates).
    pub(super) fn identity() -> Self {
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        IdMaps {
            uid: format!("{uid} {uid} 1").into_bytes(),
            gid: format!("{gid} {gid} 1").into_bytes(),
        }
    }

    /// Writes the maps of the calling process (after `unshare(CLONE_NEWUSER)`).
    ///
    /// A process that is not dumpable (a child of the tether's keepers, which clear the flag
    /// so nothing reads their copy of the host's memory) has `/proc/self` owned by root, so
    /// a host that is not root could not write its own maps: the flag is set for these three
    /// writes only and cleared again, so the moments before `exec` stay as closed as before.
    pub(super) fn write(&self) -> io::Result<()> {
        // SAFETY: prctl with integer arguments.
        let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
        if dumpable == 0 {
            // SAFETY: as above.
            check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) })?;
        }
        let written = self.write_maps();
        if dumpable == 0 {
            // SAFETY: as above.
            check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) })?;
        }
        written
    }

    fn write_maps(&self) -> io::Result<()> {
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", &self.uid)?;
        write_file(c"/proc/self/gid_map", &self.gid)
    }
}
