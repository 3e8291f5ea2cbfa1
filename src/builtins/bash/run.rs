//! Running one command in its own process group: output captured within a budget, and the
//! whole group killed (and the shell reaped) when the command exits, times out or the call
//! is cancelled — background jobs never outlive the call. A sandboxed command gets a fresh
//! scratch dir as `$TMPDIR` (writable, removed afterwards). The whole tree runs in its own
//! budget (`builtins.bash.limits`): past its memory it is killed whole.

use super::live::{LiveOutput, READ_BYTES};
use super::spool::{Spool, Spooled};
use crate::process::budget::{Budget, Exceeded, Limits};
use crate::process::{ProcessGroup, Sandbox, Scratch, SharedNetwork};
use crate::spill::SpillStore;
use crate::tool::{OutputStream, Progress, Signal, ToolError};
use dsh_tools_protocol::BashLimits;
use nix::sys::signal::Signal as UnixSignal;
use parking_lot::Mutex;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

/// Variables passed through from the host; everything else (tokens, keys) is dropped.
const INHERITED: [&str; 9] = [
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];
/// `PATH` when the host has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// How long the pipes may stay open after the group was killed (a process that left the
/// group with `setsid` can hold them); what was captured by then is reported.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// How long a SIGKILLed shell may take to be reaped (longer only in an uninterruptible wait).
pub const REAP_GRACE: Duration = Duration::from_secs(5);
/// How often a running command's budget is read: a leaf's OOM count, or a polled tree's
/// memory and processes (which may grow past the limit between two readings).
pub const BUDGET_CHECK: Duration = Duration::from_millis(100);

/// How the command ended.
#[derive(Debug)]
pub enum Ending {
    /// The shell exited (or was killed from outside).
    Exited(ExitStatus),
    /// The per-call timeout passed.
    TimedOut,
    /// The call's signal fired.
    Aborted,
    /// The command's tree went past a budget and was killed.
    Exceeded(Exceeded),
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    /// How it ended.
    pub ending: Ending,
    /// Captured stdout.
    pub stdout: Spooled,
    /// Captured stderr.
    pub stderr: Spooled,
    /// The scratch dir it had (already removed), when sandboxed.
    pub scratch: Option<PathBuf>,
}

/// How output is kept: bytes held per stream, and where the rest goes.
#[derive(Clone)]
pub struct Keep {
    /// Bytes of each stream held in memory.
    pub budget: usize,
    /// Spill files for streams past the budget (`None`: the middle is dropped).
    pub spill: Option<Arc<SpillStore>>,
    /// Head and tail bytes of a spilled stream the value shows.
    pub preview: usize,
}

/// Where a command runs: its sandbox, and the scope's network when the sandbox joins one.
#[derive(Clone, Copy)]
pub struct Confined<'a> {
    pub sandbox: &'a Sandbox,
    pub network: Option<&'a Arc<SharedNetwork>>,
}

/// What ends a command early besides its end and its signal.
pub struct Bounds<'a> {
    /// The per-call deadline.
    pub timeout: Duration,
    /// Its whole tree's budgets.
    pub limits: &'a BashLimits,
}

/// How the command's standard streams are connected.
pub enum Stdio3 {
    /// stdin empty, stdout and stderr piped (a call that cannot outlive itself).
    Pipes,
    /// stdin piped too, for `bash_write`.
    PipesWithInput,
    /// All three on this end of a terminal.
    Terminal(std::os::fd::OwnedFd),
}

/// A command just started.
pub struct Started {
    /// Its process group (killed on drop).
    pub group: ProcessGroup,
    /// Its scratch dir (removed on drop), when sandboxed.
    pub scratch: Option<Scratch>,
}

/// Starts `bash -c command` in `cwd` with a scrubbed environment, `confined` (in the scope's
/// network when its sandbox joins one; under a network policy, with the proxy's listener
/// opened there and the environment pointing at it), within `limits`, its streams connected
/// as `stdio`.
pub fn start(
    command: &str,
    cwd: &Path,
    limits: &BashLimits,
    confined: Confined<'_>,
    stdio: Stdio3,
) -> Result<Started, ToolError> {
    let Confined { sandbox, network } = confined;
    let mut shell = tokio::process::Command::new("bash");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(scrubbed_environment());
    if let Some(network) = network.filter(|_| sandbox.egress_policy().is_some()) {
        let port = network
            .open_proxy()
            .map_err(|e| ToolError::new(format!("cannot sandbox bash: {e}")))?;
        shell.envs(crate::process::sandbox::network_policy::proxy_environment(
            port,
        ));
    }
    let terminal = matches!(stdio, Stdio3::Terminal(_));
    match stdio {
        Stdio3::Pipes => {
            shell.stdin(Stdio::null());
            shell.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Stdio3::PipesWithInput => {
            shell.stdin(Stdio::piped());
            shell.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Stdio3::Terminal(end) => {
            let copy = |end: &std::os::fd::OwnedFd| {
                end.try_clone()
                    .map(Stdio::from)
                    .map_err(|e| ToolError::new(format!("cannot open a terminal: {e}")))
            };
            shell
                .stdin(copy(&end)?)
                .stdout(copy(&end)?)
                .stderr(Stdio::from(end));
            shell.env("TERM", "xterm-256color");
        }
    }
    let scratch = match sandbox.is_off() {
        true => None,
        false => Some(Scratch::create("bash").map_err(|e| {
            ToolError::new(format!("cannot create the command's scratch dir: {e}"))
        })?),
    };
    if let Some(scratch) = &scratch {
        shell.env("TMPDIR", scratch.path());
    }
    let confinement = sandbox
        .confine_joining(scratch.as_ref().map(Scratch::path), network)
        .map_err(|e| ToolError::new(format!("cannot sandbox bash: {e}")))?;
    let budget = Budget::new(Limits {
        memory_bytes: Some(limits.memory_mb.saturating_mul(1024 * 1024)),
        pids: Some(limits.pids),
        cpu_percent: limits.cpu_percent,
    })
    .map_err(|e| ToolError::new(format!("cannot budget bash: {e}")))?;
    let group = ProcessGroup::spawn_with(&mut shell, &confinement, Some(budget), terminal)
        .map_err(|e| ToolError::new(format!("cannot start bash: {e}")))?;
    Ok(Started { group, scratch })
}

/// Runs `bash -c command` in `cwd` with a scrubbed environment, `confined` and within
/// `bounds`, reporting its output live to `progress` as it arrives.
pub async fn run(
    command: &str,
    cwd: &Path,
    bounds: Bounds<'_>,
    signal: &Signal,
    progress: &Progress,
    keep: &Keep,
    confined: Confined<'_>,
) -> Result<Run, ToolError> {
    let Bounds { timeout, limits } = bounds;
    let Started { mut group, scratch } = start(command, cwd, limits, confined, Stdio3::Pipes)?;
    let stdout = capture(
        group.child().stdout.take(),
        Spool::new("stdout", keep.budget, keep.spill.clone()),
        LiveOutput::new(progress.clone(), OutputStream::Stdout),
    );
    let stderr = capture(
        group.child().stderr.take(),
        Spool::new("stderr", keep.budget, keep.spill.clone()),
        LiveOutput::new(progress.clone(), OutputStream::Stderr),
    );
    let ending = tokio::select! {
        status = group.wait_within_budget(BUDGET_CHECK) => match status {
            Ok(status) => Ending::Exited(
                status.map_err(|e| ToolError::new(format!("cannot wait for bash: {e}")))?,
            ),
            Err(exceeded) => Ending::Exceeded(exceeded),
        },
        () = signal.aborted() => Ending::Aborted,
        () = tokio::time::sleep(timeout) => Ending::TimedOut,
    };
    if !matches!(ending, Ending::Exited(_)) {
        // Reap the killed shell so it never lingers as a zombie.
        group.kill_and_reap(REAP_GRACE).await;
    }
    let (stdout, stderr) = futures::future::join(drain(stdout), drain(stderr)).await;
    let (stdout, stderr) = finish_spools(stdout, stderr, keep.preview).await?;
    Ok(Run {
        ending,
        stdout,
        stderr,
        scratch: scratch.as_ref().map(|s| s.path().to_owned()),
    })
}

/// Finishes both spools off the async threads (finishing flushes spill files).
pub async fn finish_spools(
    stdout: Spool,
    stderr: Spool,
    preview: usize,
) -> Result<(Spooled, Spooled), ToolError> {
    let finish = move || (stdout.finish(preview), stderr.finish(preview));
    tokio::task::spawn_blocking(finish)
        .await
        .map_err(|e| ToolError::new(format!("cannot collect the output: {e}")))
}

/// One stream being read into a bounded capture.
struct Capture {
    captured: Arc<Mutex<Spool>>,
    reader: Option<JoinHandle<()>>,
}

/// Starts reading `pipe` into `spool`, and into `live` as it arrives.
fn capture(
    pipe: Option<impl AsyncRead + Unpin + Send + 'static>,
    spool: Spool,
    live: LiveOutput,
) -> Capture {
    let captured = Arc::new(Mutex::new(spool));
    let reader = pipe.map(|pipe| {
        let captured = captured.clone();
        read_stream(pipe, live, move |bytes| {
            captured.lock().push(bytes);
            true
        })
    });
    Capture { captured, reader }
}

/// Reads `pipe` to its end, handing each read to `push` and, while `push` says so, to
/// `live` (coalesced on its schedule).
pub fn read_stream(
    mut pipe: impl AsyncRead + Unpin + Send + 'static,
    live: LiveOutput,
    mut push: impl FnMut(&[u8]) -> bool + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut live = Some(live);
        let mut buffer = vec![0u8; READ_BYTES];
        loop {
            let read = match live.as_ref().and_then(LiveOutput::due) {
                None => pipe.read(&mut buffer).await,
                // A read is cancel-safe: nothing is lost when the flush comes first.
                Some(due) => tokio::select! {
                    read = pipe.read(&mut buffer) => read,
                    () = tokio::time::sleep_until(due) => {
                        if let Some(live) = live.as_mut() {
                            live.flush();
                        }
                        continue;
                    }
                },
            };
            let Ok(read @ 1..) = read else { break };
            let bytes = &buffer[..read];
            if push(bytes) {
                if let Some(live) = live.as_mut() {
                    live.push(bytes);
                }
            } else if let Some(live) = live.take() {
                live.finish();
            }
        }
        if let Some(live) = live {
            live.finish();
        }
    })
}

/// Waits (within [`DRAIN_GRACE`]) for the pipe to close, then hands back the capture.
async fn drain(capture: Capture) -> Spool {
    if let Some(reader) = capture.reader {
        wait_for_reader(reader).await;
    }
    std::mem::replace(&mut *capture.captured.lock(), Spool::new("", 0, None))
}

/// Waits (within [`DRAIN_GRACE`]) for a reader to reach its stream's end, then stops it.
pub async fn wait_for_reader(mut reader: JoinHandle<()>) {
    if tokio::time::timeout(DRAIN_GRACE, &mut reader)
        .await
        .is_err()
    {
        reader.abort();
    }
}

fn scrubbed_environment() -> Vec<(&'static str, OsString)> {
    let mut environment: Vec<(&'static str, OsString)> = INHERITED
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|value| (*name, value)))
        .collect();
    if !environment.iter().any(|(name, _)| *name == "PATH") {
        environment.push(("PATH", OsString::from(DEFAULT_PATH)));
    }
    environment.push(("TERM", OsString::from("dumb")));
    environment
}

/// The name of the signal that ended a process (`SIGKILL`).
pub fn signal_name(raw: i32) -> String {
    UnixSignal::try_from(raw)
        .map(|signal| signal.as_str().to_owned())
        .unwrap_or_else(|_| format!("signal {raw}"))
}
