//! Network egress by policy: a proxy in the host through which sandboxed commands reach the
//! domains `sandbox.network.allow` lists (and `deny` does not), and nothing else.
//!
//! One listener serves three protocols, told apart by the first byte (0x05 is SOCKS5, all
//! else is HTTP): HTTP requests in absolute form (`GET http://host/path`, forwarded),
//! `CONNECT host:port` (tunnelled byte for byte: TLS is never terminated, the proxy sees
//! only the name and port) and SOCKS5 `CONNECT` (for git over SSH and other tools that speak
//! it). For each connection the proxy decides once, on the host and port the client named
//! ([`policy`]); a host that is not allowed is never even looked up, so the proxy's resolver
//! is no channel for a refused name. It then resolves the name itself ([`resolve`]), refuses
//! addresses of the host machine or the cloud (loopback, link-local, metadata), connects to
//! the address it checked, and from then on every byte of the connection goes to that one
//! upstream: a second request on a kept-alive connection cannot reach another host.
//!
//! Refusals ([`refusal`]) answer the client in words a model can act on and are kept, so a
//! caller can attribute the refusals made while one command ran:
//! `let mark = egress.refusals(); ...; egress.blocked_since(mark)`.
//!
//! Bounds: a request head (or SOCKS5 handshake) must arrive within 30 s and fit 64 KiB; a
//! connect or a lookup gives up after 30 s; an established tunnel may stay idle for as long
//! as its ends keep it (a `git fetch` may think for minutes). Data moves through a pipe of
//! at most 1 MiB (`splice`), never a whole body.

mod http;
pub mod policy;
pub mod presets;
pub mod refusal;
pub mod resolve;
mod socks;
mod splice;

pub use policy::{Decision, EgressPolicy};
pub use refusal::Blocked;
pub use resolve::{HOSTS_VAR, TestHosts};

use parking_lot::Mutex;
use policy::Host;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The most a request head or SOCKS5 handshake may take, from accept.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request head (and upstream response head) the proxy reads.
pub const HEAD_LIMIT: usize = 64 * 1024;
/// How long a connect to an upstream address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The proxy of one policy: serve it on a listener, read its refusals.
#[derive(Debug)]
pub struct Egress {
    policy: EgressPolicy,
    hosts: TestHosts,
    log: Mutex<refusal::Log>,
}

/// Why an upstream connection was not made.
pub(crate) enum Failure {
    /// The sandbox refused it (counted, 403 / SOCKS5 0x02).
    Blocked(Blocked),
    /// No address or no connection (502 / SOCKS5 0x04): not the sandbox's doing.
    Unreachable(String),
}

impl Egress {
    /// A proxy for `policy`, with the test mapping of `DSH_TOOLS_PROXY_HOSTS` if set (read
    /// once, here; see [`resolve`]).
    pub fn new(policy: EgressPolicy) -> Arc<Egress> {
        Egress::with_test_hosts(policy, TestHosts::from_env())
    }

    /// A proxy with an explicit test mapping (tests in one process cannot safely set the
    /// environment while other threads resolve names).
    pub fn with_test_hosts(policy: EgressPolicy, hosts: TestHosts) -> Arc<Egress> {
        Arc::new(Egress {
            policy,
            hosts,
            log: Mutex::new(refusal::Log::default()),
        })
    }

    /// Serves HTTP proxy requests (absolute form), CONNECT and SOCKS5 on `listener` until
    /// `stop`; then ends every connection it holds (tunnels included) before returning.
    pub async fn serve(self: Arc<Self>, listener: TcpListener, stop: CancellationToken) {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        connections.spawn(Arc::clone(&self).connection(stream));
                    }
                    Err(e) => {
                        // Out of descriptors, most likely: let connections end first.
                        tracing::warn!("egress proxy: accept failed: {e}");
                        tokio::select! {
                            () = stop.cancelled() => break,
                            () = tokio::time::sleep(Duration::from_millis(50)) => {}
                        }
                    }
                },
            }
        }
        connections.shutdown().await;
    }

    /// Refusals so far: a count that only grows.
    pub fn refusals(&self) -> u64 {
        self.log.lock().count()
    }

    /// The refusals made after `mark` (a past [`Egress::refusals`]), oldest first; at most
    /// the last [`refusal::KEPT`] are remembered.
    pub fn blocked_since(&self, mark: u64) -> Vec<Blocked> {
        self.log.lock().since(mark)
    }

    /// The policy this proxy applies.
    pub fn policy(&self) -> &EgressPolicy {
        &self.policy
    }

    async fn connection(self: Arc<Self>, stream: TcpStream) {
        // One deadline from accept for the first byte and the whole head or handshake.
        let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
        let mut first = [0u8; 1];
        match tokio::time::timeout_at(deadline, stream.peek(&mut first)).await {
            Ok(Ok(1)) if first[0] == socks::VERSION => socks::serve(&self, stream, deadline).await,
            Ok(Ok(1)) => http::serve(&self, stream, deadline).await,
            _ => {}
        }
    }

    /// Decides, resolves, checks and connects; a refusal is recorded here.
    pub(crate) async fn open(&self, host: &Host, port: u16) -> Result<TcpStream, Failure> {
        let field = self.policy.field();
        match self.policy.decide_host(host, port) {
            Decision::Allow => {}
            Decision::Deny { rule } => {
                return Err(self.refuse(host, port, format!("denied by {field}.deny {rule:?}")));
            }
            Decision::NotListed => {
                return Err(self.refuse(host, port, format!("not in {field}.allow")));
            }
        }
        let resolved = resolve::resolve(&self.hosts, host, port)
            .await
            .map_err(Failure::Unreachable)?;
        let mut addrs = resolved.addrs;
        if !resolved.mapped {
            let Some(first) = addrs.first().map(|a| a.ip()) else {
                return Err(Failure::Unreachable(format!("{host} has no address")));
            };
            addrs.retain(|a| resolve::refused_address(a.ip()).is_none());
            if addrs.is_empty() {
                let kind = resolve::refused_address(first).unwrap_or("a refused address");
                let why = match host {
                    Host::Ip(_) => format!("{first} is {kind}"),
                    Host::Name(name) => format!("{name} resolves to {kind} {first}"),
                };
                return Err(self.refuse(host, port, why));
            }
        }
        let mut last = String::new();
        for addr in addrs {
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = format!("no answer in {}s", CONNECT_TIMEOUT.as_secs()),
            }
        }
        Err(Failure::Unreachable(format!(
            "could not connect to {}: {last}",
            host.authority(port)
        )))
    }

    fn refuse(&self, host: &Host, port: u16, why: String) -> Failure {
        let blocked = Blocked::new(host, port, why);
        tracing::info!("egress proxy: {}", blocked.message());
        self.log.lock().push(blocked.clone());
        Failure::Blocked(blocked)
    }
}

/// Relays both directions of an established tunnel until both have ended (or one failed).
pub(crate) async fn tunnel(client: TcpStream, upstream: TcpStream) {
    let _ = tokio::try_join!(
        splice::move_bytes(&client, &upstream),
        splice::move_bytes(&upstream, &client)
    );
}
