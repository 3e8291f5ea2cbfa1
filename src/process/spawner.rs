//! The one thread every child is forked from. `PR_SET_PDEATHSIG` fires when the thread
//! that forked a child ends, not the process: forking from a tokio blocking thread (which
//! ends after ten idle seconds) would kill a running `bash` command for nothing. This
//! thread lives as long as the process, so a child's death signal means the host died.

use std::io;
use std::sync::mpsc::{Sender, channel};
use tokio::process::{Child, Command};

/// One spawn handed to the thread: the command (moved there and back) and the runtime
/// whose process driver will reap the child.
struct Job {
    command: Command,
    runtime: tokio::runtime::Handle,
    reply: Sender<(Command, io::Result<Child>)>,
}

/// Spawns `command` on the spawner thread, within the caller's tokio runtime.
pub(super) fn spawn(command: &mut Command) -> io::Result<Child> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| io::Error::other("a child can only be spawned inside a tokio runtime"))?;
    let (reply, answer) = channel();
    let job = Job {
        command: std::mem::replace(command, Command::new("")),
        runtime,
        reply,
    };
    spawner()?
        .send(job)
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    let (returned, child) = answer
        .recv()
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    *command = returned;
    child
}

/// The queue of the spawner thread, started on first use.
fn spawner() -> io::Result<&'static Sender<Job>> {
    static SPAWNER: std::sync::OnceLock<Sender<Job>> = std::sync::OnceLock::new();
    if let Some(queue) = SPAWNER.get() {
        return Ok(queue);
    }
    let (queue, jobs) = channel::<Job>();
    std::thread::Builder::new()
        .name("dsh-spawner".into())
        .spawn(move || {
            for mut job in jobs {
                let child = {
                    let _entered = job.runtime.enter();
                    job.command.spawn()
                };
                let _ = job.reply.send((job.command, child));
            }
        })?;
    // Two first spawns may race here: the loser's thread ends with its queue, unused.
    Ok(SPAWNER.get_or_init(|| queue))
}
