//! Code Mode's Python runtime: one model program per fresh CPython process, under the same
//! budgets, failure kinds and bridge contract as the JavaScript isolates.
//!
//! A [`PythonPool`] keeps `size` interpreters started ahead of the runs (`python3 -I -B -c
//! <bootstrap.py>`, the script beside this module); each serves exactly one program and is killed with its whole
//! process group afterwards. The bootstrap runs the program as the body of an async
//! function and speaks a private framed protocol on fds 3 and 4; the program's stdout and
//! stderr are `/dev/null`, and `print`, `sys.stdout`/`sys.stderr` and `logging` become
//! log lines. Containment is not a security boundary: an empty environment, isolated mode,
//! a scratch working directory, RLIMIT_AS / RLIMIT_NPROC / RLIMIT_CPU, its own process
//! group SIGKILLed on timeout, abort, output overflow or settlement, and a bootstrap thread
//! that kills the group when the host's end of fd 3 closes (the host exited).
//!
//! Reading order: `pool`, `spawn` (containment), `run` (one run), `frames`, `meter`,
//! `timing` (the hand-tuned waits and why).

mod frames;
mod meter;
mod pool;
mod run;
mod spawn;
mod timing;

pub use pool::{PythonConfig, PythonPool};
