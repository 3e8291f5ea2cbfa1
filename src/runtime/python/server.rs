//! The fork server: one long-lived interpreter (`<bootstrap> serve`), started through the
//! same spawn path as a fresh interpreter (empty environment, rlimits, budget leaf, tether,
//! OS sandbox with its scratch dir writable), that has imported everything a run needs and
//! forks one child per run. The child takes on the run's state before it reads a program:
//! its own process group, its pipes (handed over with `SCM_RIGHTS`), a scratch dir inside
//! the server's, a Landlock layer confining its writes to that dir, a reseeded `random` and
//! a fresh `asyncio` loop; the host adopts it into a budget leaf of its own. What a program
//! imports, mutates, opens or starts is in that child, which never serves another run.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use tokio::net::unix::pipe;

use super::control::{self, Control};
use super::spawn::{self, Channel, Interpreter, TREE_PROCESSES};
use super::timing::BOOT_GUARD;
use super::worker::Worker;
use crate::process::budget::{Budget, Limits};
use crate::process::sandbox::PrivateNetwork;
use crate::process::{ProcessGroup, Sandbox, Scratch};

/// A running fork server.
pub(super) struct ForkServer {
    control: Arc<Control>,
    /// Killed (with every child still running) when dropped.
    process: ProcessGroup,
    /// Holds the children's scratch dirs.
    scratch: Scratch,
    address_space: u64,
    _network: Option<PrivateNetwork>,
}

impl ForkServer {
    /// Starts a server and waits until it is ready to fork.
    pub(super) async fn start(
        interpreter: &Path,
        max_heap_mb: u64,
        sandbox: &Sandbox,
    ) -> io::Result<ForkServer> {
        let started = spawn::start(interpreter, max_heap_mb, &sandbox.for_fork_server(), true)?;
        let Channel::Control(socket) = started.channel else {
            return Err(io::Error::other(
                "the fork server started without its socket",
            ));
        };
        let control = tokio::time::timeout(BOOT_GUARD, Control::ready(socket))
            .await
            .map_err(|_| io::Error::other("the fork server did not finish starting"))??;
        Ok(ForkServer {
            control,
            process: started.process,
            scratch: started.scratch,
            address_space: max_heap_mb.saturating_mul(1024 * 1024),
            _network: started.network,
        })
    }

    /// Whether it still serves (else a new one is started).
    pub(super) fn is_alive(&self) -> bool {
        self.control.is_alive()
    }

    /// A child set up for one run, not yet started: its pipes, scratch dir, Landlock layer
    /// (from `sandbox`, the server's own) and budget leaf. The caller waits for its `ready`.
    pub(super) async fn fork(&self, sandbox: &Sandbox) -> io::Result<Interpreter> {
        let scratch = self.scratch.create_in("run")?;
        let layer = sandbox.write_layer(scratch.path())?;
        let (child_reads, host_writes) = io::pipe()?;
        let (host_reads, child_writes) = io::pipe()?;
        let mut fds = vec![child_reads.as_raw_fd(), child_writes.as_raw_fd()];
        fds.extend(layer.as_ref().map(AsRawFd::as_raw_fd));
        let dir = scratch
            .path()
            .to_str()
            .ok_or_else(|| io::Error::other("the scratch dir's path is not UTF-8"))?;
        let budget = Budget::new(Limits {
            memory_bytes: Some(self.address_space),
            pids: Some(TREE_PROCESSES),
            cpu_percent: None,
        })?;
        let forked = self.control.fork(dir, &fds).await?;
        drop((child_reads, child_writes, layer));
        let pid = match control::pid_of(&forked.pidfd) {
            Ok(pid) => pid,
            Err(error) => {
                control::kill_by_pidfd(&forked.pidfd);
                self.control.release(forked.server_pid);
                return Err(error);
            }
        };
        let worker = Worker::adopt(pid, forked, budget, self.control.clone(), scratch)?;
        Ok(Interpreter::forked(
            worker,
            pipe::Sender::from_owned_fd(OwnedFd::from(host_writes))?,
            pipe::Receiver::from_owned_fd(OwnedFd::from(host_reads))?,
        ))
    }

    /// The server's pid (below the tether's keepers), while it runs.
    pub(super) fn pid(&self) -> Option<i32> {
        self.process.program_pid()
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        self.process.kill();
    }
}
