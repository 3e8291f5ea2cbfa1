//! Child processes the host starts (`bash` commands, MCP servers, Python interpreters):
//! each leads its own process group, so one signal reaches everything it forked, and the
//! group is killed and its leader reaped on every path out, drop included.

mod group;

pub use group::ProcessGroup;
