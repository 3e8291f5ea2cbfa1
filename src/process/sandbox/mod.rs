//! The OS sandbox of child processes (`bash` commands, Python interpreters, MCP servers):
//! in namespace mode a private filesystem view in new user, mount, IPC and UTS namespaces
//! (and a network namespace when the network is off); Landlock filesystem rules; a seccomp
//! filter in every mode (UNIX sockets, keyrings, ptrace, mounts, ...; the network's too
//! where namespaces are not allowed); and `PR_SET_NO_NEW_PRIVS`, applied in the child
//! between fork and exec.
//!
//! The pieces, in the order a family meets them:
//! - [`policy`]: the config resolved for one family (its override over `sandbox`);
//! - [`probe`]: what the kernel offers, probed once (and hidden on purpose by
//!   `DSH_TOOLS_SANDBOX_SIMULATE` for the fail-closed tests);
//! - [`plan`]: the policy checked against the kernel when the family starts; what cannot be
//!   applied makes the family unavailable, never silently weaker;
//! - `landlock`, `seccomp`, `view`: the ruleset, the filter and the view's paths, built in
//!   the parent;
//! - [`confine`]: the prepared [`Confinement`] of one spawn and the child's system calls,
//!   handed to [`ProcessGroup::spawn`](super::ProcessGroup::spawn), the one spawn path;
//! - [`families`]: `bash`, Python and MCP servers from the host config, and the report;
//! - [`loopback`]: with the network off (or a policy), one network namespace per agent
//!   scope with its loopback up, which that scope's children join; with a policy, the
//!   proxy's listener made inside it and handed to the host;
//! - `proxy_listener`: that listener, made by a child inside the namespace and passed to
//!   the host;
//! - [`network_policy`]: its port, and the environment pointing a child's tools at it.

pub mod confine;
mod egress_network;
pub mod families;
mod landlock;
pub mod loopback;
pub mod network_policy;
pub(crate) mod passing;
pub mod plan;
pub mod policy;
pub mod probe;
mod proxy_listener;
pub mod python_runner;
mod seccomp;
mod view;

pub use confine::Confinement;
pub use egress_network::PrivateNetwork;
pub use loopback::{Loopbacks, SharedNetwork};
pub use plan::{Family, Sandbox};
pub use policy::SandboxPolicy;
pub use probe::kernel_support;
