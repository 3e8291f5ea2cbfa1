//! Starts one contained interpreter: `python3 -I -B -c <bootstrap>` with an empty
//! environment, a scratch working directory, its own process group, rlimits, the private
//! protocol on fds 3 (host → child) and 4 (child → host), and the OS sandbox (writable:
//! the scratch dir) applied before it execs, so before it takes a run. A fork server
//! (`<bootstrap> serve`) starts the same way, with its control socket as fd 3 instead.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::resource::{Resource, setrlimit};
use tokio::net::unix::pipe;
use tokio::process::Command;

use super::worker::Worker;
use crate::process::budget::{Budget, Exceeded, Limits};
use crate::process::sandbox::{PrivateNetwork, passing};
use crate::process::{ProcessGroup, Sandbox, Scratch};

/// The isolate-side half of the runtime, run with `-c`.
const BOOTSTRAP: &str = include_str!("bootstrap.py");

/// Processes a program may fork beyond what its user already runs (RLIMIT_NPROC; root is
/// exempt from it, the process-group kill is not), the tether's two keepers included.
const SPARE_PROCESSES: u64 = 34;

/// Processes and threads an interpreter's whole tree may hold at once (its leaf's
/// `pids.max`; the one bound that holds for root, whom RLIMIT_NPROC exempts).
pub(super) const TREE_PROCESSES: u64 = 1024;

/// A started interpreter waiting for its program, and everything that must go with it.
pub(super) struct Interpreter {
    /// The interpreter and anything it forked.
    pub process: Contained,
    /// Its pid, for the busy-time meter.
    pub pid: i32,
    /// Taken by the run.
    pub to_child: Option<pipe::Sender>,
    pub from_child: Option<pipe::Receiver>,
    /// Removed after the kill (fields drop after `drop` runs); a forked child's is its
    /// worker's.
    _scratch: Option<Scratch>,
    /// Its network under a `sandbox.network` policy (the proxy stops with it); a forked
    /// child shares its server's.
    _network: Option<PrivateNetwork>,
}

impl Interpreter {
    /// A fork server's child, its pipes the host's ends of its fds 3 and 4.
    pub(super) fn forked(
        worker: Worker,
        to_child: pipe::Sender,
        from_child: pipe::Receiver,
    ) -> Interpreter {
        Interpreter {
            pid: worker.pid(),
            process: Contained::Forked(worker),
            to_child: Some(to_child),
            from_child: Some(from_child),
            _scratch: None,
            _network: None,
        }
    }

    /// Whether it may still take a run (a forked child dies with its server).
    pub(super) fn is_alive(&self) -> bool {
        match &self.process {
            Contained::Fresh(_) => true,
            Contained::Forked(worker) => worker.is_alive(),
        }
    }
}

/// How an interpreter is held: a fresh one as the process group the host spawned, a fork
/// server's child as its [`Worker`].
pub(super) enum Contained {
    Fresh(ProcessGroup),
    Forked(Worker),
}

impl Contained {
    /// Busy time of its whole tree so far.
    pub(super) fn tree_busy_time(&self) -> Option<Duration> {
        match self {
            Contained::Fresh(group) => group.tree_busy_time(),
            Contained::Forked(worker) => worker.tree_busy_time(),
        }
    }

    /// Which budget its tree went past, if any.
    pub(super) fn exceeded(&self) -> Option<Exceeded> {
        match self {
            Contained::Fresh(group) => group.exceeded(),
            Contained::Forked(worker) => worker.exceeded(),
        }
    }

    /// SIGKILLs all of it.
    pub(super) fn kill(&mut self) {
        match self {
            Contained::Fresh(group) => group.kill(),
            Contained::Forked(worker) => worker.kill(),
        }
    }

    /// Kills it and waits up to `grace` for its exit status.
    pub(super) async fn kill_and_reap(
        &mut self,
        grace: Duration,
    ) -> Option<std::process::ExitStatus> {
        match self {
            Contained::Fresh(group) => group.kill_and_reap(grace).await,
            Contained::Forked(worker) => worker.kill_and_reap(grace).await,
        }
    }
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

/// The host's end of what a started process speaks on.
pub(super) enum Channel {
    /// A fresh interpreter's protocol pipes.
    Pipes(pipe::Sender, pipe::Receiver),
    /// A fork server's control socket.
    Control(OwnedFd),
}

/// A started interpreter or fork server.
pub(super) struct Started {
    pub process: ProcessGroup,
    pub pid: i32,
    pub channel: Channel,
    pub scratch: Scratch,
    pub network: Option<PrivateNetwork>,
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
    let started = start(interpreter, max_heap_mb, sandbox, false)?;
    let Channel::Pipes(to_child, from_child) = started.channel else {
        return Err(io::Error::other("an interpreter started without its pipes"));
    };
    Ok(Interpreter {
        process: Contained::Fresh(started.process),
        pid: started.pid,
        to_child: Some(to_child),
        from_child: Some(from_child),
        _scratch: Some(started.scratch),
        _network: started.network,
    })
}

/// Starts an interpreter (see [`spawn`]), or with `serve` a fork server: the same process,
/// limits and confinement (its scratch dir holds its children's), its control socket on
/// fd 3. The one way both start.
pub(super) fn start(
    interpreter: &Path,
    max_heap_mb: u64,
    sandbox: &Sandbox,
    serve: bool,
) -> io::Result<Started> {
    let scratch = Scratch::create("py")?;
    let network = PrivateNetwork::for_policy(sandbox)?;
    // The child's ends, placed at 3 and 4 (a server's socket at 3 alone), and the host's.
    let (child_three, child_four, channel): (OwnedFd, Option<OwnedFd>, Channel) = if serve {
        let (host_end, child_end) = passing::channel()?;
        (child_end, None, Channel::Control(host_end))
    } else {
        let (child_reads, host_writes) = io::pipe()?;
        let (host_reads, child_writes) = io::pipe()?;
        (
            OwnedFd::from(child_reads),
            Some(OwnedFd::from(child_writes)),
            Channel::Pipes(
                pipe::Sender::from_owned_fd(OwnedFd::from(host_writes))?,
                pipe::Receiver::from_owned_fd(OwnedFd::from(host_reads))?,
            ),
        )
    };
    let three = child_three.as_raw_fd();
    let four = child_four.as_ref().map_or(-1, AsRawFd::as_raw_fd);
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
    if serve {
        command.arg("serve");
    }
    if let Some(network) = &network {
        command.envs(network.environment.iter().cloned());
    }
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (fcntl, dup2, setrlimit) on values captured by copy.
    unsafe {
        command.pre_exec(move || {
            // Move both ends above 4 first, so that placing one cannot clobber the other.
            let high_three = libc::fcntl(three, libc::F_DUPFD_CLOEXEC, 10);
            if high_three < 0 || libc::dup2(high_three, 3) < 0 {
                return Err(io::Error::last_os_error());
            }
            if four >= 0 {
                let high_four = libc::fcntl(four, libc::F_DUPFD_CLOEXEC, 10);
                if high_four < 0 || libc::dup2(high_four, 4) < 0 {
                    return Err(io::Error::last_os_error());
                }
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
    drop((child_three, child_four));
    let process = spawned?;
    let pid = process
        .program_pid()
        .ok_or_else(|| io::Error::other("the interpreter has no pid"))?;
    Ok(Started {
        process,
        pid,
        channel,
        scratch,
        network,
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
