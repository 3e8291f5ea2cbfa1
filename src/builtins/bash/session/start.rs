//! A `bash` call whose command may become a session: started with stdin (or a terminal) the
//! model can write to, its output going both to the call's spools (what the call answers
//! if the command ends in time, exactly as a plain call would) and to the session's log.
//! At the yield, a command still running is handed to the model; one that ended is
//! answered like any call and forgotten.

use super::ExecSessions;
use super::log::SessionLog;
use super::running::{Input, Reason, Session};
use super::supervisor::{Deadlines, Supervised, supervise};
use super::terminal;
use crate::builtins::bash::live::LiveOutput;
use crate::builtins::bash::run::{
    Confined, Ending, Keep, Run, Started, Stdio3, finish_spools, read_stream,
    start as start_command,
};
use crate::builtins::bash::spool::{Spool, Spooled};
use crate::process::{Sandbox, SharedNetwork};
use crate::tool::{OutputStream, ToolError, ToolRunContext};
use dsh_tools_protocol::BashLimits;
use nix::sys::signal::Signal as UnixSignal;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One call that may start a session.
pub struct SessionCall<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub limits: &'a BashLimits,
    pub sandbox: &'a Sandbox,
    pub keep: &'a Keep,
    /// On a terminal.
    pub tty: bool,
    /// When the call answers with a running command (`None`: it waits for the end).
    pub yield_after: Option<Duration>,
    /// Kills the command this long after its start.
    pub timeout: Option<Duration>,
    /// The Code Mode run whose end ends it.
    pub owner: Option<CancellationToken>,
    /// The scope's network, when the sandbox joins one.
    pub network: Option<Arc<SharedNetwork>>,
}

/// How the call ends.
pub enum Outcome {
    /// The command ended within the call.
    Finished(Run),
    /// It runs on as this session; what it printed so far.
    Running {
        session: Arc<Session>,
        stdout: Spooled,
        stderr: Spooled,
    },
}

/// Starts `call`'s command and waits for its end or the yield.
pub async fn start(
    sessions: &Arc<ExecSessions>,
    call: SessionCall<'_>,
    ctx: &ToolRunContext,
) -> Result<Outcome, ToolError> {
    let (slot, id) = sessions.reserve()?;
    let (reading, stdio) = match call.tty {
        true => {
            let (terminal, program_end) = terminal::open()
                .map_err(|e| ToolError::new(format!("cannot open a terminal: {e}")))?;
            (Some(terminal), Stdio3::Terminal(program_end))
        }
        false => (None, Stdio3::PipesWithInput),
    };
    let confined = Confined {
        sandbox: call.sandbox,
        network: call.network.as_ref(),
    };
    let Started { mut group, scratch } =
        start_command(call.command, call.cwd, call.limits, confined, stdio)?;
    let scratch_path = scratch.as_ref().map(|s| s.path().to_owned());
    let keep = call.keep;
    let file = sessions_file(keep, &id);
    let spools = (
        Spool::new("stdout", keep.budget, keep.spill.clone()),
        Spool::new("stderr", keep.budget, keep.spill.clone()),
    );
    let (input, readers_of) = match reading {
        Some(terminal) => {
            let writer = terminal
                .try_clone()
                .map_err(|e| ToolError::new(format!("cannot open a terminal: {e}")))?;
            (Some(Input::Terminal(writer)), Readers::Terminal(terminal))
        }
        None => {
            let stdin = group.child().stdin.take().map(Input::Pipe);
            let stdout = group.child().stdout.take();
            let stderr = group.child().stderr.take();
            (stdin, Readers::Pipes(stdout, stderr))
        }
    };
    let scope = ctx.execution.agent.clone();
    let (session, requests) = Session::new(
        id,
        scope,
        call.command.to_owned(),
        call.tty,
        SessionLog::new(file, call.tty),
        spools,
        input,
    );
    let session = Arc::new(session);
    let readers = readers_of.spawn(&session, ctx);
    let (idle, lifetime) = sessions.lifetimes();
    let supervised = Supervised {
        group,
        scratch,
        readers,
        requests,
        deadlines: Deadlines {
            timeout: call.timeout,
            idle,
            lifetime,
        },
        owner: call.owner,
        slot: Box::new(slot) as Box<dyn Send>,
    };
    sessions.insert(session.clone());
    let registry = sessions.clone();
    tokio::spawn(supervise(session.clone(), supervised, move |session| {
        registry.ended(session)
    }));
    let yielded = tokio::select! {
        _ = session.wait_for_end(Duration::MAX) => false,
        () = sleep(call.yield_after) => true,
        () = ctx.signal.aborted() => {
            session.stop(UnixSignal::SIGKILL, Reason::Aborted);
            session.wait_for_end(Duration::MAX).await;
            false
        }
    };
    let spools = {
        let mut inner = session.lock();
        if yielded && inner.ended.is_none() {
            inner.adopted = true;
            inner.log.mark_read();
        }
        inner.spools.take()
    };
    let (stdout, stderr) =
        spools.unwrap_or_else(|| (Spool::new("stdout", 0, None), Spool::new("stderr", 0, None)));
    let (stdout, stderr) = finish_spools(stdout, stderr, keep.preview).await?;
    let adopted = session.lock().adopted;
    if adopted {
        return Ok(Outcome::Running {
            session,
            stdout,
            stderr,
        });
    }
    sessions.remove(&session);
    let ended = session
        .ended()
        .ok_or_else(|| ToolError::new("the command's end was not recorded"))?;
    let ending = match ended.reason {
        Some(Reason::Aborted) => Ending::Aborted,
        Some(Reason::TimedOut) => Ending::TimedOut,
        Some(Reason::Exceeded(exceeded)) => Ending::Exceeded(exceeded),
        _ => Ending::Exited(
            ended
                .status
                .unwrap_or_else(|| std::process::ExitStatus::from_raw(libc::SIGKILL)),
        ),
    };
    Ok(Outcome::Finished(Run {
        ending,
        stdout,
        stderr,
        scratch: scratch_path,
    }))
}

/// The session's file (every byte it prints), named after it.
fn sessions_file(
    keep: &Keep,
    id: &str,
) -> Result<crate::spill::SpillWriter, crate::spill::SpillFault> {
    match &keep.spill {
        Some(store) => store.writer(id),
        None => Err(crate::spill::SpillFault(
            "spilling is off (spill.thresholdBytes is 0)".to_owned(),
        )),
    }
}

async fn sleep(after: Option<Duration>) {
    match after {
        Some(after) => tokio::time::sleep(after).await,
        None => std::future::pending().await,
    }
}

/// The command's output streams before their readers start.
enum Readers {
    Pipes(
        Option<tokio::process::ChildStdout>,
        Option<tokio::process::ChildStderr>,
    ),
    Terminal(terminal::Terminal),
}

impl Readers {
    /// One reader per stream into `session` (live to the call's progress until it yields).
    fn spawn(
        self,
        session: &Arc<Session>,
        ctx: &ToolRunContext,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let live = |stream| LiveOutput::new(ctx.progress.clone(), stream);
        let into = |stderr: bool| {
            let session = session.clone();
            move |bytes: &[u8]| session.output(stderr, bytes)
        };
        match self {
            Readers::Pipes(stdout, stderr) => {
                let mut readers = Vec::new();
                if let Some(stdout) = stdout {
                    readers.push(read_stream(stdout, live(OutputStream::Stdout), into(false)));
                }
                if let Some(stderr) = stderr {
                    readers.push(read_stream(stderr, live(OutputStream::Stderr), into(true)));
                }
                readers
            }
            Readers::Terminal(terminal) => {
                vec![read_stream(
                    terminal,
                    live(OutputStream::Stdout),
                    into(false),
                )]
            }
        }
    }
}
