//! The OS sandbox of child processes (`bash` commands, Python interpreters, MCP servers):
//! Landlock filesystem rules, the network refused by a new user and network namespace (or,
//! where namespaces are not allowed, by the system call filter), `PR_SET_NO_NEW_PRIVS`, and
//! a seccomp filter in every mode (UNIX sockets, keyrings, ptrace, mounts, ...), applied in
//! the child between fork and exec.
//!
//! The pieces, in the order a family meets them:
//! - [`policy`]: the config resolved for one family (its override over `sandbox`);
//! - [`probe`]: what the kernel offers, probed once (and hidden on purpose by
//!   `DSH_TOOLS_SANDBOX_SIMULATE` for the fail-closed tests);
//! - [`plan`]: the policy checked against the kernel when the family starts; what cannot be
//!   applied makes the family unavailable, never silently weaker;
//! - `landlock`, `seccomp`: the ruleset and the filter, built in the parent;
//! - [`confine`]: the prepared [`Confinement`] of one spawn and the child's system calls,
//!   handed to [`ProcessGroup::spawn`](super::ProcessGroup::spawn), the one spawn path;
//! - [`families`]: `bash`, Python and MCP servers from the host config, and the report.

pub mod confine;
pub mod families;
mod landlock;
pub mod plan;
pub mod policy;
pub mod probe;
mod seccomp;

pub use confine::Confinement;
pub use plan::{Family, Sandbox};
pub use policy::SandboxPolicy;
pub use probe::kernel_support;
