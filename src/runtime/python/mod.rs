//! Code Mode's Python runtime: one model program per fresh CPython process, under the same
//! budgets, failure kinds and bridge contract as the JavaScript isolates.
//!
//! A [`PythonPool`] keeps `size` interpreters ready ahead of the runs: children of one
//! long-lived fork server (`python3 -I -B -c <bootstrap.py> serve`, the script beside this
//! module) that has imported everything, each set up for its run before it reads the
//! program (fallback: a fresh `python3 -I -B -c <bootstrap.py>` each); each serves exactly
//! one program and is killed with its whole process group afterwards. The bootstrap runs the program as the body of an async
//! function and speaks a private framed protocol on fds 3 and 4; the program's stdout and
//! stderr are `/dev/null`, and `print`, `sys.stdout`/`sys.stderr` and `logging` become
//! log lines. Containment is not a security boundary: an empty environment, isolated mode,
//! a scratch working directory, RLIMIT_AS / RLIMIT_NPROC / RLIMIT_CPU, its own process
//! group SIGKILLed on timeout, abort, output overflow or settlement, and a bootstrap thread
//! that kills the group when the host's end of fd 3 closes (the host exited).
//!
//! Reading order: `pool`, `server` (the fork server), `control` (its channel), `worker` (a
//! forked child), `spawn` (containment), `run` (one run), `frames`, `meter`, `runner` (the
//! report), `timing` (the hand-tuned waits and why).

mod control;
mod frames;
mod meter;
mod pool;
mod run;
mod server;
mod spawn;
mod timing;
mod worker;

pub use crate::process::sandbox::python_runner::{NO_FORK_SERVER, python_runner};
pub use pool::{PythonConfig, PythonPool, probe_fork_server};
