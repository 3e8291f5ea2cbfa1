//! Code Mode's engines behind one contract: a model program runs with compute, wall, heap and
//! output budgets and talks to the host only through a [`BindingHost`].
//!
//! The engine-neutral part is here: `contract` (the public vocabulary), `control` (budgets
//! and stop reasons), `output` (the byte cap), `held` (output held by runs in progress, bounded process-wide), `verdict` (outcomes). Each engine has its
//! folder: [`js`] (deno_core/QuickJS isolates) and [`python`] (CPython child processes).

mod contract;
mod control;
mod held;
pub mod js;
mod output;
pub mod python;
mod verdict;

pub use contract::{
    BindingHost, FailureKind, LogStream, PoolConfig, RunFailure, RunLimits, RunOutcome, RunRequest,
    RuntimeError,
};
pub use js::IsolatePool;
pub use python::{NO_FORK_SERVER, PythonConfig, PythonPool, probe_fork_server, python_runner};
