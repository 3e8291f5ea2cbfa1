//! The confinement of one child: everything prepared in the parent before fork (the
//! Landlock ruleset fd, the seccomp program, the id-map lines), then applied by the child
//! between fork and exec with raw system calls only, so nothing it execs can shed it.
//!
//! Order in the child, each step needing the one before:
//! 0. before the tether, when the network is off and the spawn joins a scope's
//!    [`SharedNetwork`] (namespace mode only): `setns` into it (see [`super::loopback`]);
//! 1. in namespace mode, `unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC |
//!    CLONE_NEWUTS)` (and `CLONE_NEWNET` when the network is off and not joined), the child's own uid and
//!    gid mapped in the new user namespace (it must still write `/proc/self/*_map`, so
//!    before the view and Landlock), then the private filesystem [view](super::view): SysV
//!    IPC objects and the hostname are the child's own and die with it;
//! 2. `PR_SET_NO_NEW_PRIVS` (setuid binaries cannot gain what the sandbox removes, and it
//!    is what lets an unprivileged process install the next two);
//! 3. `landlock_restrict_self` on the prepared ruleset;
//! 4. the system call filter (every mode; after the view, which it forbids rebuilding).
//!
//! The ruleset and the filter are inherited across `fork` and `exec` by every descendant
//! (a `setsid` grandchild included) and cannot be removed.

use super::loopback::SharedNetwork;
use super::view::View;
use crate::process::syscalls::{IdMaps, check};
use seccompiler::BpfProgram;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use tokio::process::Command;

/// How one child is confined: [`Confinement::none`], or prepared by
/// [`Sandbox::confine`](super::Sandbox::confine).
#[derive(Clone, Debug, Default)]
pub struct Confinement {
    prepared: Option<Arc<Prepared>>,
}

#[derive(Debug)]
struct Prepared {
    /// The namespaces and the view in namespace mode.
    namespace: Option<Namespaces>,
    /// The finished Landlock ruleset (close-on-exec: the program never sees it).
    ruleset: OwnedFd,
    /// The system call filter (`super::seccomp`), installed last.
    seccomp: Option<Arc<BpfProgram>>,
    /// Read rights the child grants its own `/proc` in the ruleset, when `/` is not granted.
    proc_read: Option<u64>,
    /// The scope's loopback the child joins before the tether (namespace mode, network off).
    network: Option<Arc<SharedNetwork>>,
}

/// What namespace mode unshares and builds.
#[derive(Debug)]
pub(super) struct Namespaces {
    flags: libc::c_int,
    maps: IdMaps,
    view: View,
}

impl Namespaces {
    /// New user, mount, IPC and UTS namespaces with `view` (and a network namespace unless
    /// `keep_network`: the network is on, or the child joined a [`SharedNetwork`]).
    pub(super) fn new(view: View, keep_network: bool) -> Self {
        let mut flags =
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
        if !keep_network {
            flags |= libc::CLONE_NEWNET;
        }
        Namespaces {
            flags,
            maps: IdMaps::identity(),
            view,
        }
    }
}

impl Confinement {
    /// No confinement: the child runs with the host user's full rights.
    pub fn none() -> Self {
        Confinement::default()
    }

    /// A confinement applying `namespace` (namespace mode), `ruleset` (with `proc_read` on
    /// the child's `/proc` when given), and `seccomp` when given, after joining `network`
    /// when given (whose `namespace` then leaves out `CLONE_NEWNET`).
    pub(super) fn new(
        ruleset: OwnedFd,
        namespace: Option<Namespaces>,
        seccomp: Option<Arc<BpfProgram>>,
        proc_read: Option<u64>,
        network: Option<Arc<SharedNetwork>>,
    ) -> io::Result<Self> {
        let ruleset = above_reserved(ruleset)?;
        Ok(Confinement {
            prepared: Some(Arc::new(Prepared {
                namespace,
                ruleset,
                seccomp,
                proc_read,
                network,
            })),
        })
    }

    /// Whether the child will be confined.
    pub fn is_confined(&self) -> bool {
        self.prepared.is_some()
    }

    /// Makes `command`'s child join the scope's [`SharedNetwork`], if this confinement has
    /// one: to be installed after the caller's own `pre_exec` and before the tether's, while
    /// the child is still in the host's user namespace (which the join needs).
    pub(in crate::process) fn install_before_tether(&self, command: &mut Command) {
        if let Some(prepared) = self.prepared.clone().filter(|p| p.network.is_some()) {
            // SAFETY: the closure runs in the forked child before exec; it dereferences the
            // Arcs (never clones or drops them there) and makes raw `setns` calls on
            // descriptors opened before fork.
            unsafe {
                command.pre_exec(move || match &prepared.network {
                    Some(network) => network.join(),
                    None => Ok(()),
                });
            }
        }
    }

    /// Makes `command`'s child apply this confinement after fork, before exec (after any
    /// `pre_exec` the caller installed, which thus still runs with full rights).
    pub(in crate::process) fn install(&self, command: &mut Command) {
        if let Some(prepared) = self.prepared.clone() {
            // SAFETY: the closure runs in the forked child before exec. It only reads the
            // prepared values (no allocation, no lock: the Arc is dereferenced, never
            // cloned or dropped there) and makes async-signal-safe system calls (unshare,
            // open, write, close, mount and the new mount API, prctl,
            // landlock_restrict_self, seccomp).
            unsafe {
                command.pre_exec(move || apply(&prepared));
            }
        }
    }
}

/// The lowest descriptor a ruleset may have: callers' own `pre_exec` code places fds
/// below it (Python's protocol pipes go to 3 and 4 via descriptors of 10 and up, then
/// `dup2`), which must never replace the ruleset before the child applies it.
const FIRST_FREE_FD: i32 = 10;

/// `fd`, moved to [`FIRST_FREE_FD`] or above if it is lower (close-on-exec kept).
pub(super) fn above_reserved(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() >= FIRST_FREE_FD {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC on an open fd we own returns a new fd that nothing else owns.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FIRST_FREE_FD) };
    check(moved)?;
    // SAFETY: `moved` is a fresh descriptor owned by nobody else; `fd` closes on drop.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(moved) })
}

/// The child's half; see the module documentation for the order.
fn apply(prepared: &Prepared) -> io::Result<()> {
    if let Some(namespace) = &prepared.namespace {
        // SAFETY: unshare takes flags only.
        check(unsafe { libc::unshare(namespace.flags) })?;
        namespace.maps.write()?;
        // Never run without the view: an error here fails the spawn.
        namespace.view.build()?;
    }
    if let Some(access) = prepared.proc_read {
        grant_proc(prepared.ruleset.as_raw_fd(), access)?;
    }
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integers only.
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
    // SAFETY: the fd is the open ruleset owned by `prepared`; flags 0.
    let restricted = unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            prepared.ruleset.as_raw_fd(),
            0u32,
        )
    };
    if restricted != 0 {
        return Err(io::Error::last_os_error());
    }
    if let Some(program) = &prepared.seccomp {
        // prctl and seccomp(2) on a borrowed slice; its errors carry no allocation we
        // keep: the errno they leave is what is reported.
        seccompiler::apply_filter(program).map_err(|_| io::Error::last_os_error())?;
    }
    Ok(())
}

/// `struct landlock_path_beneath_attr` (packed).
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// Adds a rule granting `access` beneath this child's `/proc` to `ruleset`.
fn grant_proc(ruleset: libc::c_int, access: u64) -> io::Result<()> {
    /// `LANDLOCK_RULE_PATH_BENEATH`.
    const PATH_BENEATH: libc::c_int = 1;
    // SAFETY: a NUL-terminated literal; O_PATH opens nothing but a reference.
    let proc = unsafe {
        libc::open(
            c"/proc".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    check(proc)?;
    let rule = PathBeneath {
        allowed_access: access,
        parent_fd: proc,
    };
    // SAFETY: a live, packed attribute struct and the open ruleset fd; flags 0.
    let added = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        )
    };
    let error = io::Error::last_os_error();
    // SAFETY: `proc` was opened above and is closed once.
    unsafe { libc::close(proc) };
    if added != 0 {
        return Err(error);
    }
    Ok(())
}
