//! A loopback per agent scope, at the process level (children spawned with the real
//! sandbox of the default `bash` family, network off, namespace mode): children joining one
//! [`SharedNetwork`] reach each other's 127.0.0.1 listener; a child of another one, the
//! host's own connect, the host's loopback listeners and public addresses stay out of
//! reach; a joined child sees only `lo`; without joining, the fresh namespace's loopback is
//! down as before; [`Loopbacks`] keeps one namespace per scope until the scope closes; the
//! seccomp fallback ignores the shared namespace.

use crate::support::sandbox::{Listener, visible_tempdir};
use dsh_tools::process::sandbox::{Loopbacks, Sandbox, SharedNetwork, families, kernel_support};
use dsh_tools::process::{Confinement, ProcessGroup};
use dsh_tools_protocol::SandboxConfig;
use serde_json::{Value, json};
use std::io::ErrorKind;
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

/// Patience for one line from a child (a Python start on a loaded machine).
const PATIENCE: Duration = Duration::from_secs(60);

/// Listens on 127.0.0.1 (a free port), says so, serves one connection with `argv[1]`.
const SERVER: &str = "import socket, sys
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(8)
print('listening', s.getsockname()[1], flush=True)
c, _ = s.accept()
c.sendall(sys.argv[1].encode())
c.close()
print('served', flush=True)
";

/// Connects to `argv[1]:argv[2]` and prints what it read, or the errno that stopped it.
const CLIENT: &str = "import socket, sys
c = socket.socket()
c.settimeout(30)
try:
    c.connect((sys.argv[1], int(sys.argv[2])))
    print('got', c.recv(100).decode(), flush=True)
except OSError as error:
    print('errno', error.errno, flush=True)
";

/// Prints, as JSON: the interfaces of its network namespace, and the outcome ("ok" or the
/// errno) of a connect to its own listener, of a listen on port 80, of a connect to the
/// host's listener on port `argv[1]`, and to a public address.
const PROBE: &str = "import json, socket, sys
def attempt(action):
    try:
        action()
        return 'ok'
    except OSError as error:
        return error.errno
def connect(host, port):
    c = socket.socket()
    c.settimeout(10)
    c.connect((host, port))
def low():
    s = socket.socket()
    s.bind(('127.0.0.1', 80))
    s.listen(1)
def own():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    s.listen(1)
    connect('127.0.0.1', s.getsockname()[1])
with open('/proc/net/dev') as dev:
    interfaces = sorted(line.split(':')[0].strip() for line in dev.readlines()[2:])
print(json.dumps({
    'interfaces': interfaces,
    'own': attempt(own),
    'low': attempt(low),
    'host': attempt(lambda: connect('127.0.0.1', int(sys.argv[1]))),
    'public': attempt(lambda: connect('1.1.1.1', 80)),
}), flush=True)
";

/// The real interpreter (not a pyenv shim).
fn python() -> String {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The default `bash` sandbox (workspace-write, network off) in a visible workspace.
struct Family {
    sandbox: Sandbox,
    workspace: TempDir,
}

fn bash_family(support: &dsh_tools_protocol::SandboxSupport) -> Family {
    let workspace = visible_tempdir();
    let cwd = workspace.path().canonicalize().unwrap();
    let sandbox = families::bash(&SandboxConfig::default(), None, &cwd, support);
    assert_eq!(sandbox.unavailable(), None);
    assert!(!sandbox.network());
    Family { sandbox, workspace }
}

/// A sandboxed Python program and its stdout, read line by line.
struct Running {
    group: ProcessGroup,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Running {
    /// Starts `code` with `args`, confined by `confinement`.
    fn start(cwd: &Path, confinement: &Confinement, code: &str, args: &[&str]) -> Running {
        let mut command = Command::new(python());
        command
            .args(["-I", "-c", code])
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut group = ProcessGroup::spawn(&mut command, confinement).unwrap();
        let stdout = group.child().stdout.take().unwrap();
        Running {
            group,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// The next line it prints (failing past the patience or at its end).
    async fn line(&mut self) -> String {
        tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("no line in time")
            .unwrap()
            .expect("the child ended without a line")
    }
}

impl Family {
    fn run(&self, network: Option<&Arc<SharedNetwork>>, code: &str, args: &[&str]) -> Running {
        let confinement = self.sandbox.confine_joining(None, network).unwrap();
        Running::start(self.workspace.path(), &confinement, code, args)
    }

    /// A server joining `network`, once it listens, and its port.
    async fn server(&self, network: &Arc<SharedNetwork>, token: &str) -> (Running, u16) {
        let mut server = self.run(Some(network), SERVER, &[token]);
        let line = server.line().await;
        let port = line
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("{line}"));
        (server, port.parse().unwrap())
    }

    /// What a client joining `network` read from 127.0.0.1:`port` (`got ...` or `errno N`).
    async fn client(&self, network: Option<&Arc<SharedNetwork>>, port: u16) -> String {
        let mut client = self.run(network, CLIENT, &["127.0.0.1", &port.to_string()]);
        let line = client.line().await;
        client.group.wait().await.unwrap();
        line
    }

    /// [`PROBE`]'s findings in a child joining `network`, the host listening on `host`.
    async fn probe(&self, network: Option<&Arc<SharedNetwork>>, host: &Listener) -> Value {
        let mut probe = self.run(network, PROBE, &[&host.port().to_string()]);
        let line = probe.line().await;
        probe.group.wait().await.unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

fn refused() -> String {
    format!("errno {}", libc::ECONNREFUSED)
}

#[tokio::test]
async fn children_joining_one_shared_network_reach_each_others_listener_and_no_one_else_does() {
    let family = bash_family(&kernel_support());
    assert!(family.sandbox.joins_shared_network());
    let (ours, theirs) = (
        SharedNetwork::create().unwrap(),
        SharedNetwork::create().unwrap(),
    );
    let (mut server, port) = family.server(&ours, "token-1").await;
    // The listener is not on the host's loopback...
    let host = TcpStream::connect(("127.0.0.1", port)).map(|_| ());
    assert_eq!(
        host.map_err(|e| e.kind()),
        Err(ErrorKind::ConnectionRefused)
    );
    // ...nor in another shared network...
    assert_eq!(family.client(Some(&theirs), port).await, refused());
    // ...and a child of its own network gets the token: no one else's connect was queued
    // before it at the listener, which serves one connection.
    assert_eq!(family.client(Some(&ours), port).await, "got token-1");
    assert_eq!(server.line().await, "served");
    assert!(server.group.wait().await.unwrap().success());
}

#[tokio::test]
async fn a_joined_child_has_only_lo_up_and_reaches_neither_the_hosts_loopback_nor_the_internet() {
    let family = bash_family(&kernel_support());
    let network = SharedNetwork::create().unwrap();
    let host = Listener::open();
    let joined = family.probe(Some(&network), &host).await;
    let unreachable = libc::ENETUNREACH;
    assert_eq!(
        joined,
        json!({
            "interfaces": ["lo"],
            "own": "ok",
            "low": "ok",
            "host": libc::ECONNREFUSED,
            "public": unreachable,
        })
    );
    assert!(!host.was_reached(), "the host's listener was reached");
    // Without joining, the child's own network namespace has its loopback down (unchanged;
    // whether it may bind port 80 there depends on the host user, so it is not compared).
    let mut fresh = family.probe(None, &host).await;
    fresh.as_object_mut().unwrap().remove("low");
    assert_eq!(
        fresh,
        json!({
            "interfaces": ["lo"],
            "own": unreachable,
            "host": unreachable,
            "public": unreachable,
        })
    );
    assert!(!host.was_reached(), "the host's listener was reached");
}

#[tokio::test]
async fn loopbacks_keep_one_network_per_scope_until_the_scope_closes() {
    let family = bash_family(&kernel_support());
    let loopbacks = Loopbacks::default();
    let first = loopbacks.get(Some("a")).unwrap();
    assert!(Arc::ptr_eq(&first, &loopbacks.get(Some("a")).unwrap()));
    let other = loopbacks.get(Some("b")).unwrap();
    let root = loopbacks.get(None).unwrap();
    assert!(!Arc::ptr_eq(&first, &other));
    assert!(!Arc::ptr_eq(&first, &root) && !Arc::ptr_eq(&other, &root));
    assert!(Arc::ptr_eq(&root, &loopbacks.get(None).unwrap()));

    let (mut server, port) = family.server(&first, "token-a").await;
    for scope in [Some("b"), None] {
        let network = loopbacks.get(scope).unwrap();
        assert_eq!(family.client(Some(&network), port).await, refused());
    }
    loopbacks.close(&["a"]);
    let reopened = loopbacks.get(Some("a")).unwrap();
    assert!(!Arc::ptr_eq(&first, &reopened), "close kept the namespace");
    assert_eq!(family.client(Some(&reopened), port).await, refused());
    // The server still runs in the forgotten namespace, where a joined child reaches it.
    assert_eq!(family.client(Some(&first), port).await, "got token-a");
    assert_eq!(server.line().await, "served");
}

#[tokio::test]
async fn the_seccomp_fallback_ignores_the_shared_network() {
    let support = dsh_tools::process::sandbox::probe::hide(kernel_support(), "no-userns");
    let family = bash_family(&support);
    assert!(!family.sandbox.joins_shared_network());
    let network = SharedNetwork::create().unwrap();
    let host = Listener::open();
    let findings = family.probe(Some(&network), &host).await;
    // No namespace at all: the host's interfaces, and every inet socket refused.
    let dev = std::fs::read_to_string("/proc/net/dev").unwrap();
    let mut interfaces: Vec<&str> = dev
        .lines()
        .skip(2)
        .filter_map(|line| Some(line.split_once(':')?.0.trim()))
        .collect();
    interfaces.sort_unstable();
    assert_eq!(findings["interfaces"], json!(interfaces), "{findings}");
    for attempt in ["own", "low", "host", "public"] {
        assert_ne!(findings[attempt], "ok", "{findings}");
    }
    assert!(!host.was_reached(), "the host's listener was reached");
}

/// Connects to 127.0.0.1:`argv[1]`, sends `argv[2]`, prints what came back (or the errno).
const TALKER: &str = "import socket, sys
c = socket.socket()
c.settimeout(30)
try:
    c.connect(('127.0.0.1', int(sys.argv[1])))
    c.sendall(sys.argv[2].encode())
    print('got', c.recv(100).decode(), flush=True)
except OSError as error:
    print('errno', error.errno, flush=True)
";

#[tokio::test]
async fn the_proxy_listener_made_inside_a_scopes_namespace_is_served_by_the_host_outside_it() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let family = bash_family(&kernel_support());
    let (ours, theirs) = (
        SharedNetwork::create().unwrap(),
        SharedNetwork::create().unwrap(),
    );
    assert_eq!(ours.proxy_port(), None);
    assert!(
        ours.proxy_listener().is_none(),
        "a listener before open_proxy"
    );
    let port = ours.open_proxy().unwrap();
    // The usual port, free in a fresh namespace; asking again makes no second listener.
    assert_eq!(port, 3128);
    assert_eq!(ours.open_proxy().unwrap(), port);
    assert_eq!(ours.proxy_port(), Some(port));
    let listener = ours.proxy_listener().unwrap();
    assert!(ours.proxy_listener().is_none(), "handed out twice");
    assert_eq!(
        listener.local_addr().unwrap(),
        std::net::SocketAddr::from(([127, 0, 0, 1], port))
    );
    // Close-on-exec: no child the host spawns inherits it.
    // SAFETY: F_GETFD on an open descriptor.
    let flags = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&listener), libc::F_GETFD) };
    assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);

    // Not on the host's loopback: a host connect to that port (refused, or some host
    // service's) never reaches it...
    drop(TcpStream::connect(("127.0.0.1", port)));
    // ...nor one from another scope's namespace (no listener there: refused).
    assert_eq!(family.client(Some(&theirs), port).await, refused());
    // Both connects returned, so a connection that had reached it would be queued by now.
    assert_eq!(
        listener.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock),
        "a connect from outside the namespace reached the listener"
    );
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();

    // A child joined to the namespace reaches it, and the host (outside) serves it.
    let mut child = family.run(Some(&ours), TALKER, &[&port.to_string(), "ping"]);
    let (mut stream, peer) = tokio::time::timeout(PATIENCE, listener.accept())
        .await
        .expect("the child did not connect in time")
        .unwrap();
    assert_eq!(peer.ip(), std::net::IpAddr::from([127, 0, 0, 1]));
    let mut asked = [0u8; 4];
    stream.read_exact(&mut asked).await.unwrap();
    assert_eq!(&asked, b"ping");
    stream.write_all(b"pong-from-host").await.unwrap();
    drop(stream);
    assert_eq!(child.line().await, "got pong-from-host");
    assert!(child.group.wait().await.unwrap().success());

    // The token that stops the proxy fires when the network is dropped, not before.
    let dropped = ours.dropped();
    assert!(!dropped.is_cancelled());
    drop(ours);
    assert!(dropped.is_cancelled());
}

#[tokio::test]
async fn the_proxy_listener_falls_back_to_a_free_port_when_3128_is_taken() {
    let family = bash_family(&kernel_support());
    let network = SharedNetwork::create().unwrap();
    // A child of the scope holds 3128 first.
    let holder = "import socket
s = socket.socket()
s.bind(('127.0.0.1', 3128))
s.listen(1)
print('holding', flush=True)
s.accept()
";
    let mut holding = family.run(Some(&network), holder, &[]);
    assert_eq!(holding.line().await, "holding");
    let port = network.open_proxy().unwrap();
    assert_ne!(port, 3128);
    assert!(network.proxy_listener().is_some());
    holding.group.kill_and_reap(Duration::from_secs(5)).await;
}
