//! Children die with the host, even when the host is SIGKILLed and even when they called
//! `setsid` or double-forked: a process group is escapable, a PID namespace is not.
//!
//! Every spawn forks three processes, set up between fork and exec with raw system calls:
//! - the **anchor** (the child the host spawned and reaps; the group leader) carries
//!   `PR_SET_PDEATHSIG = SIGKILL`, creates a PID and mount namespace (and a user namespace
//!   when the host is not root), forks the init, waits for it and exits as the program did;
//! - the **init** (PID 1 of the new namespace) carries `PR_SET_PDEATHSIG = SIGKILL` towards
//!   the anchor, mounts a `/proc` of the namespace (the host and its other children are
//!   not in it), forks the program and reaps every orphan; when the program exits, it
//!   exits, and the kernel SIGKILLs everything left in the namespace;
//! - the **program** drops `CAP_SYS_PTRACE` from its bounding set (a root command cannot
//!   read the memory or environment of the two above) and goes on to exec.
//!
//! The host's death kills the anchor, whose death kills the init, whose death empties the
//! namespace. The anchor and the init ignore the polite signals the host sends the group
//! (SIGTERM reaches the program, not its keepers); SIGKILL ends all three. Where the kernel
//! refuses the namespaces, the program itself is the anchor: it still dies with the host,
//! but what it `setsid`s away may not (reported as `pidNamespaces: false`).
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends, so every spawn
//! runs on one thread that lives as long as the process ([`super::spawner`]).

use super::syscalls::{IdMaps, check};
use std::io;
use std::sync::OnceLock;

/// How every child of this process is tied to it, decided once.
#[derive(Debug)]
pub(super) struct Tether {
    /// The host's pid: the anchor's parent, checked after `PR_SET_PDEATHSIG` is set.
    host: libc::pid_t,
    /// `unshare` flags of the namespaces, `None` when the kernel refuses them.
    namespaces: Option<Namespaces>,
    /// The address range of the host's environment strings (what `/proc/<pid>/environ`
    /// shows), wiped in each keeper's copy: the kernel lets root read a non-dumpable
    /// process's environ even without `CAP_SYS_PTRACE`.
    environment: Option<(usize, usize)>,
}

#[derive(Debug)]
struct Namespaces {
    flags: libc::c_int,
    /// Identity maps of the user namespace a non-root host needs for the other two.
    maps: Option<IdMaps>,
}

/// Signals the anchor and the init ignore: the host's requests to stop are for the program.
const POLITE: [libc::c_int; 10] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGPIPE,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
];

/// The environment variable value (in `DSH_TOOLS_SANDBOX_SIMULATE`) that hides the PID
/// namespace from the tether, to exercise the fallback.
pub const NO_PID_NAMESPACE: &str = "no-pidns";

impl Tether {
    /// This process's tether (the namespaces probed once, by a real fork).
    pub(super) fn get() -> &'static Tether {
        static TETHER: OnceLock<Tether> = OnceLock::new();
        TETHER.get_or_init(|| {
            let simulated = std::env::var(super::sandbox::probe::SIMULATE_VARIABLE)
                .unwrap_or_default()
                .split(',')
                .any(|feature| feature.trim() == NO_PID_NAMESPACE);
            let namespaces = Namespaces::for_this_user();
            let namespaces = (!simulated && probe(&namespaces)).then_some(namespaces);
            Tether {
                host: nix::unistd::getpid().as_raw(),
                namespaces,
                environment: environment_range(),
            }
        })
    }

    fn has_namespaces(&self) -> bool {
        self.namespaces.is_some()
    }

    /// How many forks lie between the spawned child and the program (for its pid).
    pub(super) fn depth(&self) -> usize {
        if self.has_namespaces() { 2 } else { 0 }
    }

    /// The child's half, run first after fork: returns in the program only (the anchor and
    /// the init never return; they `_exit`).
    pub(super) fn apply(&self) -> io::Result<()> {
        super::huge_pages::restore_in_child();
        // SAFETY: prctl and getppid take integers only.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            if libc::getppid() != self.host {
                libc::_exit(1);
            }
        }
        let Some(namespaces) = &self.namespaces else {
            return Ok(());
        };
        // SAFETY: unshare takes flags only.
        check(unsafe { libc::unshare(namespaces.flags) })?;
        if let Some(maps) = &namespaces.maps {
            maps.write()?;
        }
        keeper_setup(c"dsh-anchor")?;
        let (status_read, status_write) = pipe()?;
        let (alive_read, alive_write) = pipe()?;
        // SAFETY: the child only makes async-signal-safe system calls until it returns into
        // std's exec path or `_exit`s.
        let init = unsafe { libc::fork() };
        check(init)?;
        if init > 0 {
            // The anchor: it keeps the write end of `alive` open until it dies.
            keep_only(&[status_read, alive_write]);
            ignore_polite_signals();
            self.wipe_environment();
            let status = wait_for(init);
            relay(read_status(status_read).unwrap_or(status));
        }
        // The init.
        // SAFETY: prctl, close and poll on our own descriptors.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            libc::close(alive_write);
            libc::close(status_read);
            if anchor_is_gone(alive_read) {
                libc::_exit(1);
            }
            // Named for `ps` inside the namespace, where it is PID 1.
            libc::prctl(libc::PR_SET_NAME, c"dsh-init".as_ptr(), 0, 0, 0);
        }
        mount_own_proc()?;
        // SAFETY: as above.
        let program = unsafe { libc::fork() };
        check(program)?;
        if program == 0 {
            drop_ptrace_capability();
            return Ok(());
        }
        keep_only(&[status_write]);
        ignore_polite_signals();
        self.wipe_environment();
        reap_until(program, status_write)
    }

    /// Zeroes this keeper's copy of the host's environment strings (after it forked what
    /// needs them: std may exec with the inherited `environ`).
    fn wipe_environment(&self) {
        if let Some((start, end)) = self.environment {
            // SAFETY: the range is the environment block of the initial stack, mapped and
            // writable in every fork of the host; this keeper never reads it again.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
        }
    }
}

/// `env_start` and `env_end` of this process (fields 50 and 51 of `/proc/self/stat`).
fn environment_range() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    // Field 3 (state) is the first after the name: fields 50 and 51 are 47 and 48 on.
    let mut fields = after_name.split_ascii_whitespace().skip(47);
    let start: usize = fields.next()?.parse().ok()?;
    let end: usize = fields.next()?.parse().ok()?;
    (start < end).then_some((start, end))
}

/// Whether children get their own PID namespace (probed on first use).
pub fn pid_namespaces() -> bool {
    Tether::get().has_namespaces()
}

impl Namespaces {
    fn for_this_user() -> Self {
        let pid_and_mount = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if nix::unistd::geteuid().is_root() {
            Namespaces {
                flags: pid_and_mount,
                maps: None,
            }
        } else {
            Namespaces {
                flags: pid_and_mount | libc::CLONE_NEWUSER,
                maps: Some(IdMaps::identity()),
            }
        }
    }
}

/// Whether a forked child can create `namespaces` and mount a `/proc` inside them: tried
/// for real, because sysctls, AppArmor and container runtimes each can forbid it.
fn probe(namespaces: &Namespaces) -> bool {
    // SAFETY: the child makes async-signal-safe system calls only, then `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let works = (|| -> io::Result<()> {
            // SAFETY: unshare takes flags only.
            check(unsafe { libc::unshare(namespaces.flags) })?;
            if let Some(maps) = &namespaces.maps {
                maps.write()?;
            }
            // SAFETY: see above.
            let init = unsafe { libc::fork() };
            check(init)?;
            if init == 0 {
                let code = i32::from(mount_own_proc().is_err());
                // SAFETY: `_exit` in a forked child.
                unsafe { libc::_exit(code) };
            }
            match wait_for(init) {
                0 => Ok(()),
                _ => Err(io::Error::from_raw_os_error(libc::EPERM)),
            }
        })();
        // SAFETY: `_exit` in a forked child.
        unsafe { libc::_exit(i32::from(works.is_err())) };
    }
    pid > 0 && wait_for(pid) == 0
}

/// What both keepers need before forking: SIGCHLD at its default (an inherited handler
/// would write to the host's signal pipe; ignoring it would auto-reap) and no dump, so a
/// process of the same user cannot read their copy of the host's memory via `/proc`; and
/// a name of its own for `ps`.
fn keeper_setup(name: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: signal and prctl with integer arguments and a NUL-terminated name.
    unsafe {
        if libc::signal(libc::SIGCHLD, libc::SIG_DFL) == libc::SIG_ERR {
            return Err(io::Error::last_os_error());
        }
        libc::prctl(libc::PR_SET_NAME, name.as_ptr(), 0, 0, 0);
        check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0))
    }
}

fn ignore_polite_signals() {
    for signal in POLITE {
        // SAFETY: SIG_IGN for a catchable signal.
        unsafe { libc::signal(signal, libc::SIG_IGN) };
    }
}

/// A close-on-exec pipe, as `(read, write)`.
fn pipe() -> io::Result<(libc::c_int, libc::c_int)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element out-array.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    Ok((fds[0], fds[1]))
}

/// Closes every descriptor but `keep`: a keeper must not hold the program's pipes (the host
/// would never see their end of file) nor std's exec-error pipe (spawn would wait for it).
fn keep_only(keep: &[libc::c_int]) {
    let mut next = 0u32;
    let mut sorted = [u32::MAX; 2];
    for (slot, fd) in sorted.iter_mut().zip(keep) {
        *slot = u32::try_from(*fd).unwrap_or(u32::MAX);
    }
    sorted.sort_unstable();
    for kept in sorted.into_iter().chain([u32::MAX]) {
        if kept > next {
            close_range(next, kept.saturating_sub(1));
        }
        next = kept.saturating_add(1);
        if kept == u32::MAX {
            break;
        }
    }
}

fn close_range(first: u32, last: u32) {
    // SAFETY: close_range takes integers; it closes only descriptors of this process.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    if closed != 0 {
        // Kernels before 5.9: close one by one, up to the descriptor limit.
        // SAFETY: sysconf has no preconditions; close on any number is harmless.
        let limit = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
        let end = u32::try_from(limit)
            .unwrap_or(1024)
            .min(last.saturating_add(1));
        for fd in first..end {
            // SAFETY: see above.
            unsafe { libc::close(fd as libc::c_int) };
        }
    }
}

/// Whether the write end of `alive` has been closed everywhere (the anchor died).
fn anchor_is_gone(alive: libc::c_int) -> bool {
    let mut poll = libc::pollfd {
        fd: alive,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no timeout.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready > 0 && poll.revents & libc::POLLHUP != 0
}

/// Mounts a `/proc` of the new PID namespace, after making every mount private so nothing
/// propagates back to the host's namespace.
fn mount_own_proc() -> io::Result<()> {
    let none = std::ptr::null::<libc::c_void>();
    // SAFETY: NUL-terminated literals and null data pointers, as mount(2) allows.
    unsafe {
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            none,
        ))?;
        check(libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            none,
        ))
    }
}

/// Removes `CAP_SYS_PTRACE` from the program's bounding set, so even a root command cannot
/// gain it at exec (EPERM without CAP_SETPCAP: then it never had it to lose).
fn drop_ptrace_capability() {
    /// `CAP_SYS_PTRACE` in `<linux/capability.h>`.
    const CAP_SYS_PTRACE: libc::c_ulong = 19;
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) };
}

/// The wait status of `pid` (retrying interrupted waits); 0 if it cannot be waited for.
fn wait_for(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer.
        let reaped = unsafe { libc::waitpid(pid, &mut status, 0) };
        if reaped == pid {
            return status;
        }
        if reaped < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 0;
        }
    }
}

/// The init's loop: reaps every process of the namespace until `program` exits, then tells
/// the anchor its wait status and exits (which ends the namespace).
fn reap_until(program: libc::pid_t, status_write: libc::c_int) -> ! {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer.
        let reaped = unsafe { libc::waitpid(-1, &mut status, 0) };
        let failed = reaped < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR);
        if reaped == program || failed {
            let bytes = status.to_ne_bytes();
            // SAFETY: a live 4-byte buffer; `_exit` ends the init.
            unsafe {
                libc::write(status_write, bytes.as_ptr().cast(), bytes.len());
                libc::_exit(0);
            }
        }
    }
}

/// The program's wait status as the init reported it, if it did.
fn read_status(status_read: libc::c_int) -> Option<libc::c_int> {
    let mut bytes = [0u8; 4];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: the slice past `filled` is live and writable.
        let read = unsafe {
            libc::read(
                status_read,
                bytes[filled..].as_mut_ptr().cast(),
                bytes.len() - filled,
            )
        };
        match usize::try_from(read) {
            Ok(0) => return None,
            Ok(count) => filled += count,
            Err(_) if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            Err(_) => return None,
        }
    }
    Some(libc::c_int::from_ne_bytes(bytes))
}

/// Ends the anchor as `status` says the program ended: the same exit code, or the same
/// signal (re-raised at its default action), so the host sees what the program did.
fn relay(status: libc::c_int) -> ! {
    // SAFETY: signal, sigprocmask, kill and _exit with integer arguments and a local set.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            let mut set = std::mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_range_is_where_this_process_keeps_its_environment() {
        let (start, end) = environment_range().unwrap();
        // SAFETY: the range is this process's own environment block, mapped and readable.
        let block = unsafe { std::slice::from_raw_parts(start as *const u8, end - start) };
        let path = format!("PATH={}", std::env::var("PATH").unwrap());
        assert!(
            block
                .split(|byte| *byte == 0)
                .any(|entry| entry == path.as_bytes()),
            "no PATH in the block"
        );
    }
}
