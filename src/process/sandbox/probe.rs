//! What the kernel offers the sandbox, probed once per process: the Landlock ABI, whether
//! an unprivileged user plus network namespace can be created, whether seccomp filters can,
//! whether children get their own PID namespace (the tether's probe).
//!
//! `DSH_TOOLS_SANDBOX_SIMULATE` (a comma list of `no-landlock`, `no-userns`, `no-seccomp`,
//! `no-pidns`, `no-cgroup`)
//! makes the probe report less than the kernel has, never more: it is how the fail-closed
//! and fallback paths are exercised on a kernel that has everything.

use dsh_tools_protocol::SandboxSupport;
use std::sync::OnceLock;

/// The environment variable that hides kernel features from the probe.
pub const SIMULATE_VARIABLE: &str = "DSH_TOOLS_SANDBOX_SIMULATE";

/// `landlock_create_ruleset` flag asking for the ABI version instead of a ruleset.
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The kernel's support, probed on first use (the namespace check forks once).
pub fn kernel_support() -> SandboxSupport {
    static SUPPORT: OnceLock<SandboxSupport> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        let simulated = std::env::var(SIMULATE_VARIABLE).unwrap_or_default();
        hide(detect(), &simulated)
    })
}

/// `support` less what `simulated` names.
pub fn hide(mut support: SandboxSupport, simulated: &str) -> SandboxSupport {
    for feature in simulated.split(',').map(str::trim) {
        match feature {
            "no-landlock" => support.landlock_abi = 0,
            "no-userns" => support.user_namespaces = false,
            "no-seccomp" => support.seccomp = false,
            crate::process::tether::NO_PID_NAMESPACE => support.pid_namespaces = false,
            // Read by the budgets (`process::budget`), which fall back to polling.
            crate::process::budget::NO_CGROUP => {}
            // Read by Python Code Mode, which falls back to a fresh interpreter per run.
            super::python_runner::NO_FORK_SERVER => {}
            "" => {}
            other => tracing::warn!("{SIMULATE_VARIABLE}: unknown feature {other:?} ignored"),
        }
    }
    support
}

/// Asks the kernel.
fn detect() -> SandboxSupport {
    SandboxSupport {
        landlock_abi: landlock_abi(),
        user_namespaces: network_namespace_works(),
        seccomp: seccomp_available(),
        pid_namespaces: crate::process::tether::pid_namespaces(),
    }
}

/// The Landlock ABI version, 0 when Landlock is missing or disabled.
fn landlock_abi() -> u32 {
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the call only
    // returns a number; it reads and writes no memory of ours.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(abi).unwrap_or(0)
}

/// Whether seccomp is built in (`PR_GET_SECCOMP` fails with EINVAL when it is not).
fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer and only reports the caller's mode.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Whether a child can `unshare(CLONE_NEWUSER | CLONE_NEWNET)`: tried for real in a forked
/// child, because sysctls, AppArmor and container runtimes each can forbid it.
fn network_namespace_works() -> bool {
    // SAFETY: the child calls only async-signal-safe functions (unshare, _exit) before it
    // exits, so forking a multi-threaded process is sound; the parent reaps it below.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: see above; `_exit` skips atexit handlers and stdio flushing, which a
        // forked child of a threaded process must not run.
        unsafe {
            let unshared = libc::unshare(
                libc::CLONE_NEWUSER
                    | libc::CLONE_NEWNET
                    | libc::CLONE_NEWNS
                    | libc::CLONE_NEWIPC
                    | libc::CLONE_NEWUTS,
            );
            libc::_exit(if unshared == 0 { 0 } else { 1 });
        }
    }
    if pid < 0 {
        return false;
    }
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our own child.
        let reaped = unsafe { libc::waitpid(pid, &mut status, 0) };
        if reaped == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        if reaped < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn simulation_only_hides_features() {
        let full = SandboxSupport {
            landlock_abi: 7,
            user_namespaces: true,
            seccomp: true,
            pid_namespaces: true,
        };
        assert_eq!(
            hide(full, "no-landlock, no-userns"),
            SandboxSupport {
                landlock_abi: 0,
                user_namespaces: false,
                seccomp: true,
                pid_namespaces: true,
            }
        );
        assert_eq!(hide(full, ""), full);
        let none = hide(full, "no-landlock,no-userns,no-seccomp,no-pidns");
        assert!(!none.pid_namespaces);
        assert_eq!(hide(none, "bogus"), none);
    }
}
