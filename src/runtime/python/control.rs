//! The host's end of a fork server's control channel: a `SOCK_SEQPACKET` socketpair whose
//! messages are small JSON objects (the protocol is described in `bootstrap.py`). Fork
//! requests carry the run's pipe ends (and a Landlock layer) to the server with
//! `SCM_RIGHTS`; each answer carries a pidfd of the child. One task reads the server's
//! messages and hands each to whoever waits for it: the fork's answer by request id, a
//! child's exit status by its pid (as the server knows it).

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::process::sandbox::passing;

/// The longest message the server sends (a failure's reason is the longest).
const MESSAGE_BYTES: usize = 64 * 1024;

/// A child the server forked: its pid as the server knows it (inside the tether's PID
/// namespace), a pidfd of it, and where its exit status will arrive.
pub(super) struct Forked {
    pub server_pid: i32,
    pub pidfd: OwnedFd,
    pub exit: oneshot::Receiver<i32>,
}

/// What is waited for.
#[derive(Default)]
struct Waiting {
    forks: HashMap<u64, oneshot::Sender<Result<Forked, String>>>,
    exits: HashMap<i32, oneshot::Sender<i32>>,
}

/// The host's end of one server's control channel.
pub(super) struct Control {
    socket: AsyncFd<OwnedFd>,
    waiting: parking_lot::Mutex<Waiting>,
    next_request: AtomicU64,
    /// Cancelled once the server's end closed (it died) or broke the protocol.
    closed: CancellationToken,
}

impl Control {
    /// Wraps the host's end (made non-blocking here) and waits for the server's `ready`.
    pub(super) async fn ready(socket: OwnedFd) -> io::Result<Arc<Control>> {
        set_nonblocking(socket.as_raw_fd())?;
        // SAFETY: an OwnedFd is an open descriptor that stays the same until it is dropped
        // with the AsyncFd.
        let socket = unsafe { AsyncFd::register(socket) }.map_err(io::Error::from)?;
        let control = Arc::new(Control {
            socket,
            waiting: parking_lot::Mutex::new(Waiting::default()),
            next_request: AtomicU64::new(0),
            closed: CancellationToken::new(),
        });
        let (message, _) = control.receive().await?;
        if message.get("ready") != Some(&Value::Bool(true)) {
            return Err(io::Error::other(format!(
                "the fork server said {message} instead of ready"
            )));
        }
        tokio::spawn(read_messages(
            Arc::downgrade(&control),
            control.closed.clone(),
        ));
        Ok(control)
    }

    /// Whether the server is still there: its end of the channel closes as it dies (before
    /// its children are signalled), so a poll sees it at once.
    pub(super) fn is_alive(&self) -> bool {
        if self.closed.is_cancelled() {
            return false;
        }
        let mut poll = libc::pollfd {
            fd: self.socket.get_ref().as_raw_fd(),
            events: libc::POLLRDHUP,
            revents: 0,
        };
        // SAFETY: one live pollfd, no wait.
        let ready = unsafe { libc::poll(&raw mut poll, 1, 0) };
        !(ready > 0 && poll.revents & (libc::POLLHUP | libc::POLLRDHUP | libc::POLLERR) != 0)
    }

    /// Asks for a child whose fds 3 and 4 will be `fds[0]` and `fds[1]` (and which stacks
    /// the Landlock ruleset `fds[2]`, when given) and whose working directory is `dir`.
    pub(super) async fn fork(&self, dir: &str, fds: &[RawFd]) -> io::Result<Forked> {
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        self.waiting.lock().forks.insert(id, answer);
        let sent = self.send(&json!({ "fork": id, "dir": dir }), fds).await;
        if let Err(error) = sent {
            self.waiting.lock().forks.remove(&id);
            return Err(error);
        }
        tokio::select! {
            answer = answered => match answer {
                Ok(Ok(forked)) => Ok(forked),
                Ok(Err(why)) => Err(io::Error::other(format!("the fork server could not fork: {why}"))),
                Err(_) => Err(io::Error::other("the fork server died")),
            },
            () = self.closed.cancelled() => Err(io::Error::other("the fork server died")),
        }
    }

    /// Lets the server reap the ended child `server_pid` (its pid and group are free then).
    /// Never waits: a full channel (a server that stopped reading) keeps the zombie until
    /// the server goes.
    pub(super) fn release(&self, server_pid: i32) {
        self.waiting.lock().exits.remove(&server_pid);
        let message = json!({ "release": server_pid }).to_string();
        let _ = passing::send_message(
            self.socket.get_ref().as_raw_fd(),
            message.as_bytes(),
            &[],
            libc::MSG_DONTWAIT,
        );
    }

    async fn send(&self, message: &Value, fds: &[RawFd]) -> io::Result<()> {
        let bytes = message.to_string();
        loop {
            let mut ready = self.socket.writable().await?;
            match ready.try_io(|socket| {
                passing::send_message(
                    socket.get_ref().as_raw_fd(),
                    bytes.as_bytes(),
                    fds,
                    libc::MSG_DONTWAIT,
                )
            }) {
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }

    /// The next message (an error at end of file: the server is gone).
    async fn receive(&self) -> io::Result<(Value, Vec<OwnedFd>)> {
        let mut buffer = vec![0u8; MESSAGE_BYTES];
        loop {
            let mut ready = self.socket.readable().await?;
            let received = ready.try_io(|socket| {
                passing::receive_message(socket.get_ref(), &mut buffer, libc::MSG_DONTWAIT)
            });
            let Ok(received) = received else {
                continue;
            };
            let (length, fds) = received?;
            if length == 0 {
                return Err(io::Error::other("the fork server closed its channel"));
            }
            let message = serde_json::from_slice(&buffer[..length])
                .map_err(|e| io::Error::other(format!("the fork server sent garble: {e}")))?;
            return Ok((message, fds));
        }
    }

    /// Hands one message of the server to its waiter.
    fn dispatch(&self, message: &Value, mut fds: Vec<OwnedFd>) {
        let pid = |key: &str| {
            message
                .get(key)
                .and_then(Value::as_i64)
                .and_then(|n| i32::try_from(n).ok())
        };
        let id = |key: &str| message.get(key).and_then(Value::as_u64);
        let mut waiting = self.waiting.lock();
        if let Some(request) = id("forked") {
            let answer = waiting.forks.remove(&request);
            let (Some(server_pid), Some(pidfd)) = (pid("pid"), fds.pop()) else {
                if let Some(answer) = answer {
                    let _ = answer.send(Err("an answer without its pid or pidfd".into()));
                }
                return;
            };
            let (exited, exit) = oneshot::channel();
            waiting.exits.insert(server_pid, exited);
            let forked = Forked {
                server_pid,
                pidfd,
                exit,
            };
            if let Some(answer) = answer
                && let Err(Ok(forked)) = answer.send(Ok(forked))
            {
                // Nobody waits any more (the boot was abandoned): the child goes.
                waiting.exits.remove(&forked.server_pid);
                drop(waiting);
                kill_by_pidfd(&forked.pidfd);
                self.release(forked.server_pid);
            }
        } else if let Some(request) = id("failed") {
            let why = message["why"]
                .as_str()
                .unwrap_or("no reason given")
                .to_owned();
            if let Some(answer) = waiting.forks.remove(&request) {
                let _ = answer.send(Err(why));
            }
        } else if let (Some(server_pid), Some(status)) = (pid("exit"), pid("status")) {
            match waiting.exits.remove(&server_pid) {
                Some(exited) => {
                    let _ = exited.send(status);
                }
                // Released before it ended: nobody needs its status, so it is reaped now.
                None => {
                    drop(waiting);
                    self.release(server_pid);
                }
            }
        }
    }
}

/// Reads the server's messages until its end closes; then every waiter learns it died.
async fn read_messages(control: std::sync::Weak<Control>, closed: CancellationToken) {
    loop {
        let Some(strong) = control.upgrade() else {
            return;
        };
        let received = tokio::select! {
            received = strong.receive() => received,
            () = closed.cancelled() => return,
        };
        match received {
            Ok((message, fds)) => strong.dispatch(&message, fds),
            Err(error) => {
                tracing::debug!("python fork server: {error}");
                closed.cancel();
                let mut waiting = strong.waiting.lock();
                waiting.forks.clear();
                waiting.exits.clear();
                return;
            }
        }
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

/// SIGKILLs the process behind `pidfd` (which cannot have been reused).
pub(super) fn kill_by_pidfd(pidfd: &OwnedFd) {
    // SAFETY: a pidfd we own, a signal number, no siginfo, flags 0.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        );
    }
}

/// The pid, in this process's namespace, of the process behind `pidfd` (its `fdinfo`).
pub(super) fn pid_of(pidfd: &OwnedFd) -> io::Result<i32> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd()))?;
    info.lines()
        .find_map(|line| line.strip_prefix("Pid:"))
        .and_then(|pid| pid.trim().parse().ok())
        .filter(|pid| *pid > 0)
        .ok_or_else(|| io::Error::other("the forked child is already gone"))
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL / F_SETFL on an fd we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
