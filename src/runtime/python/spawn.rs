//! Starts one contained interpreter: `python3 -I -B -c <bootstrap>` with an empty
//! environment, a scratch working directory, its own process group, rlimits, the private
//! protocol on fds 3 (host → child) and 4 (child → host), and the OS sandbox (writable:
//! the scratch dir) applied before it execs, so before it takes a run.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::sys::resource::{Resource, setrlimit};
use tokio::net::unix::pipe;
use tokio::process::Command;

use crate::process::budget::{Budget, Limits};
use crate::process::sandbox::PrivateNetwork;
use crate::process::{ProcessGroup, Sandbox, Scratch};

/// The isolate-side half of the runtime, run with `-c`.
const BOOTSTRAP: &str = include_str!("bootstrap.py");

/// Processes a program may fork beyond what its user already runs (RLIMIT_NPROC; root is
/// exempt from it, the process-group kill is not), the tether's two keepers included.
const SPARE_PROCESSES: u64 = 34;

/// Processes and threads an interpreter's whole tree may hold at once (its leaf's
/// `pids.max`; the one bound that holds for root, whom RLIMIT_NPROC exempts).
const TREE_PROCESSES: u64 = 1024;

/// A started interpreter waiting for its program, and everything that must go with it.
pub(super) struct Interpreter {
    /// The interpreter and anything it forked.
    pub process: ProcessGroup,
    /// Its pid, for the busy-time meter.
    pub pid: i32,
    /// Taken by the run.
    pub to_child: Option<pipe::Sender>,
    pub from_child: Option<pipe::Receiver>,
    /// Removed after the kill (fields drop after `drop` runs).
    _scratch: Scratch,
    /// Its network under a `sandbox.network` policy (the proxy stops with it).
    _network: Option<PrivateNetwork>,
}

impl Drop for Interpreter {
    fn drop(&mut self) {
        self.process.kill();
    }
}

/// The real interpreter binary behind `name` (a path, or a command on `PATH`): asks it for
/// `sys.executable` once, with the host's environment, because `python3` on `PATH` is often
/// a launcher (pyenv's shim is a shell script) that would not run in an empty environment
/// or would put its own variables back into it. Blocks while that interpreter starts.
pub(super) fn find_interpreter(name: &str) -> Result<PathBuf, String> {
    let command = if name.contains('/') {
        PathBuf::from(name)
    } else {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| {
                candidate
                    .metadata()
                    .is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
            })
            .ok_or_else(|| format!("`{name}` was not found on PATH"))?
    };
    let output = std::process::Command::new(&command)
        .args(["-I", "-c", "import sys; sys.stdout.write(sys.executable)"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|error| format!("could not start {}: {error}", command.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed to report its executable ({})",
            command.display(),
            output.status
        ));
    }
    let executable = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    Ok(if executable.is_empty() {
        command
    } else {
        PathBuf::from(executable)
    })
}

/// Starts an interpreter whose address space is capped at `max_heap_mb` MiB (each process,
/// RLIMIT_AS) and whose whole tree's memory, shared memory included, is capped at the same
/// (its own budget leaf: one interpreter serves one run), confined by `sandbox` with its
/// scratch dir writable.
pub(super) fn spawn(
    interpreter: &Path,
    max_heap_mb: u64,
    sandbox: &Sandbox,
) -> io::Result<Interpreter> {
    let scratch = Scratch::create("py")?;
    let network = PrivateNetwork::for_policy(sandbox)?;
    let (child_reads, host_writes) = io::pipe()?;
    let (host_reads, child_writes) = io::pipe()?;
    let (read_fd, write_fd) = (child_reads.as_raw_fd(), child_writes.as_raw_fd());
    let address_space = max_heap_mb.saturating_mul(1024 * 1024);
    let processes = processes_of_this_user().saturating_add(SPARE_PROCESSES);
    let mut command = Command::new(interpreter);
    command
        .args(["-I", "-B", "-c", BOOTSTRAP])
        .env_clear()
        .current_dir(scratch.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(network) = &network {
        command.envs(network.environment.iter().cloned());
    }
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (fcntl, dup2, setrlimit) on values captured by copy.
    unsafe {
        command.pre_exec(move || {
            // Move both ends above 4 first, so that placing one cannot clobber the other.
            let high_read = libc::fcntl(read_fd, libc::F_DUPFD_CLOEXEC, 10);
            let high_write = libc::fcntl(write_fd, libc::F_DUPFD_CLOEXEC, 10);
            if high_read < 0 || high_write < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::dup2(high_read, 3) < 0 || libc::dup2(high_write, 4) < 0 {
                return Err(io::Error::last_os_error());
            }
            for (resource, value) in [
                (Resource::RLIMIT_AS, address_space),
                (Resource::RLIMIT_NPROC, processes),
                (Resource::RLIMIT_CORE, 0),
            ] {
                setrlimit(resource, value, value)?;
            }
            Ok(())
        });
    }
    let budget = Budget::new(Limits {
        memory_bytes: Some(address_space),
        pids: Some(TREE_PROCESSES),
        cpu_percent: None,
    })?;
    let spawned = match &network {
        Some(network) => network.confine(sandbox, Some(scratch.path())),
        None => sandbox.confine(Some(scratch.path())),
    }
    .and_then(|confinement| ProcessGroup::spawn_budgeted(&mut command, &confinement, Some(budget)));
    drop((child_reads, child_writes));
    let process = spawned?;
    let pid = process
        .program_pid()
        .ok_or_else(|| io::Error::other("the interpreter has no pid"))?;
    Ok(Interpreter {
        process,
        pid,
        to_child: Some(pipe::Sender::from_owned_fd(OwnedFd::from(host_writes))?),
        from_child: Some(pipe::Receiver::from_owned_fd(OwnedFd::from(host_reads))?),
        _scratch: scratch,
        _network: network,
    })
}

/// Processes (and threads' leaders) owned by this process's user, as /proc lists them.
fn processes_of_this_user() -> u64 {
    let uid = nix::unistd::getuid().as_raw();
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
                .filter(|entry| entry.metadata().is_ok_and(|m| m.uid() == uid))
                .count() as u64
        })
        .unwrap_or(0)
}
