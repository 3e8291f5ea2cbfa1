//! `bash` under `sandbox.network = { allow, deny }` through the real binary: an allowed name
//! reaches a local server through the host's proxy (names mapped for the test with
//! `DSH_TOOLS_PROXY_HOSTS`), a denied or unlisted one is refused with a line the model can
//! act on and counted in `tools/metrics`, and nothing leaves any other way: no direct
//! connect, no DNS, not the host's loopback.

#![allow(clippy::unwrap_used)]

use crate::support::http::serve_page as serve;
use crate::support::mcp::Binary;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;

fn host(port: u16) -> (Binary, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let mapping = format!(
        "allowed.test=127.0.0.1:{port},denied.test=127.0.0.1:{port},other.test=127.0.0.1:{port}"
    );
    let host = Binary::serve_with_env(
        json!({
            "builtins": { "bash": { "cwd": workspace.path().display().to_string() } },
            "sandbox": { "network": { "allow": ["allowed.test", "*.test"], "deny": ["denied.test"] } }
        }),
        &[("DSH_TOOLS_PROXY_HOSTS", mapping.as_str())],
    );
    (host, workspace)
}

fn bash(host: &mut Binary, command: &str) -> Value {
    let answer = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": "bash", "arguments": { "command": command } }),
    );
    answer["result"].clone()
}

#[test]
fn an_allowed_name_is_reached_through_the_proxy_and_a_denied_one_is_refused_with_its_rule() {
    let port = serve("hello through the proxy\n");
    let (mut host, _workspace) = host(port);
    let allowed = bash(&mut host, "curl -sS http://allowed.test/");
    assert_eq!(
        allowed["value"]["stdout"], "hello through the proxy\n",
        "{allowed}"
    );
    assert!(allowed["value"].get("blockedHosts").is_none(), "{allowed}");

    let denied = bash(&mut host, "curl -sS http://denied.test/page");
    let value = &denied["value"];
    assert_eq!(value["blockedHosts"], json!(["denied.test:80"]), "{denied}");
    let line = value["sandbox"].as_str().unwrap();
    assert_eq!(
        line,
        "network access to denied.test:80 was blocked by the sandbox (denied by sandbox.network.deny \"denied.test\")"
    );
    assert!(
        value["stdout"]
            .as_str()
            .unwrap()
            .contains("was blocked by the sandbox"),
        "{denied}"
    );
    let rendered = denied["content"][0]["text"].as_str().unwrap();
    assert!(rendered.ends_with(line), "{rendered}");

    let unlisted = bash(
        &mut host,
        "curl -sS -o /dev/null -w '%{http_code}' https://example.com/",
    );
    assert_eq!(
        unlisted["value"]["blockedHosts"],
        json!(["example.com:443"]),
        "{unlisted}"
    );
    assert!(
        unlisted["value"]["sandbox"]
            .as_str()
            .unwrap()
            .ends_with("(not in sandbox.network.allow)"),
        "{unlisted}"
    );

    let metrics = host.request("tools/metrics", json!({}));
    let row = metrics["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bash")
        .cloned()
        .unwrap();
    assert_eq!(row["blockedConnections"], 2, "{row}");
}

#[test]
fn nothing_leaves_but_through_the_proxy() {
    let port = serve("served\n");
    let (mut host, _workspace) = host(port);
    // The host's own loopback, directly: the scope's namespace has its own loopback only.
    let direct = bash(
        &mut host,
        &format!("curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:{port}/"),
    );
    assert_ne!(direct["value"]["exitCode"], 0, "{direct}");
    // A public address, directly: no route.
    let public = bash(
        &mut host,
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), 5)\"",
    );
    assert_ne!(public["value"]["exitCode"], 0, "{public}");
    assert!(
        public["value"]["stderr"]
            .as_str()
            .unwrap()
            .contains("unreachable"),
        "{public}"
    );
    // A DNS query: the child has no resolver that works.
    let dns = bash(
        &mut host,
        "python3 -c \"import socket; socket.getaddrinfo('example.com', 80)\"",
    );
    assert_ne!(dns["value"]["exitCode"], 0, "{dns}");
    // The proxy address is the scope's own: an allowed name mapped to the host's loopback
    // is reached only through it, and the environment says where it is.
    let env = bash(&mut host, "echo $HTTPS_PROXY $ALL_PROXY");
    assert_eq!(
        env["value"]["stdout"], "http://127.0.0.1:3128 socks5h://127.0.0.1:3128\n",
        "{env}"
    );
    let socks = bash(
        &mut host,
        "curl -sS --socks5-hostname 127.0.0.1:3128 http://other.test/",
    );
    assert_eq!(
        socks["value"]["stdout"], "served\n",
        "SOCKS5 to an allowed name: {socks}"
    );
}

#[test]
fn a_sandboxed_mcp_server_and_a_python_run_follow_the_same_policy() {
    let port = serve("served\n");
    let workspace = tempfile::tempdir().unwrap();
    let mapping = format!("allowed.test=127.0.0.1:{port},denied.test=127.0.0.1:{port}");
    let policy = json!({ "network": { "allow": ["*.test"], "deny": ["denied.test"] } });
    let mut server = crate::support::mcp::fixture(&[]);
    server["sandbox"] = policy.clone();
    let mut host = Binary::serve_with_env(
        json!({
            "mcpServers": { "fx": server },
            "codeRuntime": { "languages": ["python"], "sandbox": policy },
        }),
        &[("DSH_TOOLS_PROXY_HOSTS", mapping.as_str())],
    );
    let _ = &workspace;
    host.wait_for_status(crate::support::mcp::all_running);
    let fetch = |host: &mut Binary, url: &str| {
        let answer = host.request(
            "tools/execute",
            json!({ "callId": "f", "name": "mcp__fx__fetch", "arguments": { "url": url } }),
        );
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(fetch(&mut host, "http://allowed.test/"), "served\n");
    let refused = fetch(&mut host, "http://denied.test/");
    assert!(
        refused.contains("network access to denied.test:80 was blocked by the sandbox"),
        "{refused}"
    );
    let direct = fetch(&mut host, &format!("http://127.0.0.1:{port}/"));
    assert!(
        direct.starts_with("failed") || direct.starts_with("HTTP 403"),
        "{direct}"
    );

    host.request("agents/open", json!({ "agent": "py" }));
    host.request(
        "tools/presentAs",
        json!({ "agent": "py", "mode": "code", "language": "python" }),
    );
    let program = "import urllib.request\nreturn urllib.request.urlopen('http://allowed.test/', timeout=20).read().decode()";
    let ran = host.request(
        "tools/execute",
        json!({ "callId": "p", "name": "run_code", "agent": "py",
                "arguments": { "code": program, "description": "fetch" } }),
    );
    assert_eq!(ran["result"]["value"]["result"], "served\n", "{ran}");
}

/// A registry stub on the host's 127.0.0.1: `routes` maps request paths to content types
/// and bodies.
fn registry(routes: Vec<(&'static str, &'static str, Vec<u8>)>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
            let found = routes.iter().find(|(route, _, _)| path == *route);
            let (status, kind, body) = match found {
                Some((_, kind, body)) => ("200 OK", *kind, body.clone()),
                None => ("404 Not Found", "text/plain", b"not found".to_vec()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    port
}

/// A minimal wheel of `tinypkg` 1.0, built by Python's zipfile.
fn wheel() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tinypkg-1.0-py3-none-any.whl");
    let script = format!(
        "import zipfile\nwith zipfile.ZipFile({path:?}, 'w') as z:\n    z.writestr('tinypkg/__init__.py', '')\n    z.writestr('tinypkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n')\n    z.writestr('tinypkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n    z.writestr('tinypkg-1.0.dist-info/RECORD', '')\n",
        path = path.display().to_string()
    );
    let made = std::process::Command::new("python3")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::read(path).unwrap()
}

#[test]
fn npm_and_pip_reach_an_allowed_registry_through_the_proxy() {
    let packument = br#"{"name":"tinypkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"tinypkg","version":"1.0.0","dist":{"tarball":"http://npm.test/tinypkg/-/tinypkg-1.0.0.tgz","shasum":"0"}}}}"#;
    let index = b"<html><body><a href=\"/files/tinypkg-1.0-py3-none-any.whl\">tinypkg-1.0-py3-none-any.whl</a></body></html>";
    let port = registry(vec![
        ("/tinypkg", "application/json", packument.to_vec()),
        ("/simple/tinypkg/", "text/html", index.to_vec()),
        (
            "/files/tinypkg-1.0-py3-none-any.whl",
            "application/octet-stream",
            wheel(),
        ),
    ]);
    let workspace = tempfile::tempdir().unwrap();
    let mapping = format!("npm.test=127.0.0.1:{port},pypi.test=127.0.0.1:{port}");
    let mut host = Binary::serve_with_env(
        json!({
            "builtins": { "bash": { "cwd": workspace.path().display().to_string() } },
            "sandbox": { "network": { "allow": ["npm.test", "pypi.test"] } }
        }),
        &[("DSH_TOOLS_PROXY_HOSTS", mapping.as_str())],
    );
    let npm = bash(
        &mut host,
        "npm view tinypkg version --registry http://npm.test/ --cache \"$TMPDIR/npm\" --update-notifier=false",
    );
    assert_eq!(npm["value"]["stdout"], "1.0.0\n", "{npm}");
    let pip = crate::support::mcp::installed(".venv/bin/pip");
    let download = bash(
        &mut host,
        &format!(
            "{pip} download --no-deps --no-cache-dir --disable-pip-version-check -q \
             --index-url http://pypi.test/simple/ --trusted-host pypi.test -d \"$TMPDIR/dl\" tinypkg && ls \"$TMPDIR/dl\""
        ),
    );
    assert_eq!(
        download["value"]["stdout"], "tinypkg-1.0-py3-none-any.whl\n",
        "{download}"
    );
    // The same client pointed at a registry the policy does not list is refused.
    let elsewhere = bash(
        &mut host,
        "npm view tinypkg version --registry http://registry.npmjs.org/ --cache \"$TMPDIR/npm\" --fetch-retries=0",
    );
    assert_eq!(
        elsewhere["value"]["blockedHosts"],
        json!(["registry.npmjs.org:80"]),
        "{elsewhere}"
    );
}

#[test]
fn https_to_an_allowed_name_is_tunnelled_and_the_client_checks_the_servers_certificate() {
    let workspace = tempfile::tempdir().unwrap();
    let (key, cert) = (
        workspace.path().join("key.pem"),
        workspace.path().join("cert.pem"),
    );
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=secure.test"])
        .args(["-addext", "subjectAltName=DNS:secure.test", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(made.success());
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new("openssl")
        .args(["s_server", "-quiet", "-www", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-key")
        .arg(&key)
        .arg("-cert")
        .arg(&cert)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "s_server never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mapping = format!("secure.test=127.0.0.1:{port}");
    let mut host = Binary::serve_with_env(
        json!({
            "builtins": { "bash": { "cwd": workspace.path().display().to_string() } },
            "sandbox": { "network": { "allow": ["secure.test:443"] } }
        }),
        &[("DSH_TOOLS_PROXY_HOSTS", mapping.as_str())],
    );
    let trusted = bash(
        &mut host,
        "curl -sS --cacert cert.pem -o /dev/null -w '%{http_code}' https://secure.test/",
    );
    assert_eq!(trusted["value"]["stdout"], "200", "{trusted}");
    // The proxy only tunnels: without the certificate the client refuses the server itself.
    let untrusted = bash(&mut host, "curl -sS -o /dev/null https://secure.test/");
    assert_eq!(untrusted["value"]["exitCode"], 60, "{untrusted}");
    let _ = server.kill();
    let _ = server.wait();
}
