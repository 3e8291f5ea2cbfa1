//! Child processes the host starts (`bash` commands, MCP servers, Python interpreters):
//! each leads its own process group, so one signal reaches everything it forked, and the
//! group is killed and its leader reaped on every path out, drop included. Each is tied to
//! the host by a [`tether`] (a PID namespace whose keepers die with it), forked from the
//! one [`spawner`] thread, and spawned with a [`sandbox::Confinement`] (possibly none)
//! applied before it execs. What they may write goes in a [`Scratch`] dir of the host's
//! locked root, swept by the next host when this one dies without removing it. Each tree
//! is budgeted as a whole by its [`budget::Budget`] (a cgroup leaf, or polled).

pub mod budget;
mod group;
mod huge_pages;
pub mod sandbox;
mod scratch;
mod spawner;
mod syscalls;
pub mod tether;

pub use budget::{Budget, remove_root as remove_budget_root};
pub use group::ProcessGroup;
pub use huge_pages::no_huge_pages_for_the_host;
pub use sandbox::{Confinement, Loopbacks, Sandbox, SharedNetwork};
pub use scratch::{Scratch, remove_root as remove_scratch_root};
