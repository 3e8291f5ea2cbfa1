//! A network of its own for one long-lived child under a `sandbox.network` policy (an MCP
//! server, a Python interpreter): like a `bash` scope's, a namespace with only its loopback,
//! whose one way out is the family's proxy serving a listener made inside it. The child
//! holds it ([`PrivateNetwork`]) as long as it runs; dropping it stops the proxy.

use super::{Confinement, Sandbox, SharedNetwork};
use crate::egress::{Egress, EgressPolicy};
use std::io;
use std::path::Path;
use std::sync::Arc;

/// A child's own network and what its environment needs to reach the proxy.
pub struct PrivateNetwork {
    network: Arc<SharedNetwork>,
    /// `HTTP_PROXY` and its kin, pointing at the proxy inside the namespace.
    pub environment: Vec<(&'static str, String)>,
}

impl PrivateNetwork {
    /// The network `sandbox`'s policy needs (none without a policy, or where the sandbox
    /// joins no network), its proxy served from now on.
    pub fn for_policy(sandbox: &Sandbox) -> io::Result<Option<PrivateNetwork>> {
        let Some(policy) = sandbox.egress_policy() else {
            return Ok(None);
        };
        if !sandbox.joins_shared_network() {
            return Ok(None);
        }
        let parsed = EgressPolicy::parse(&policy.allow, &policy.deny, "sandbox.network")
            .map_err(io::Error::other)?;
        let network = SharedNetwork::create()?;
        let port = network.open_proxy()?;
        // The proxy runs on the host's runtime (a caller on a blocking thread has it too).
        let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
        if let Some(listener) = network.proxy_listener() {
            let _entered = runtime.enter();
            let listener = tokio::net::TcpListener::from_std(listener)?;
            runtime.spawn(Egress::new(parsed).serve(listener, network.dropped()));
        }
        Ok(Some(PrivateNetwork {
            network,
            environment: super::network_policy::proxy_environment(port),
        }))
    }

    /// `sandbox`'s confinement in this network.
    pub fn confine(&self, sandbox: &Sandbox, scratch: Option<&Path>) -> io::Result<Confinement> {
        sandbox.confine_joining(scratch, Some(&self.network))
    }
}
