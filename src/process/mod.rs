//! Child processes the host starts (`bash` commands, MCP servers, Python interpreters):
//! each leads its own process group, so one signal reaches everything it forked, and the
//! group is killed and its leader reaped on every path out, drop included. Each is tied to
//! the host by a [`tether`] (a PID namespace whose keepers die with it), forked from the
//! one [`spawner`] thread, and spawned with a [`sandbox::Confinement`] (possibly none)
//! applied before it execs.

mod group;
pub mod sandbox;
mod spawner;
mod syscalls;
pub mod tether;

pub use group::ProcessGroup;
pub use sandbox::{Confinement, Sandbox};
