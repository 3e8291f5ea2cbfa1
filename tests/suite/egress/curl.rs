//! The proxy driven by `curl` (skipped where it is not installed): HTTP through `-x`, a
//! CONNECT tunnel (`-p`), SOCKS5 with remote name resolution (`--socks5-hostname`), HTTPS
//! to a server with a self-signed certificate the client is told to trust (`openssl
//! s_server`, skipped without `openssl`), and a refusal as curl shows it.

use super::*;
use std::process::Stdio;
use tokio::process::Command;

fn have(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Runs curl with `args`; returns its exit code and stdout.
async fn curl(args: &[&str]) -> (i32, String) {
    let mut command = Command::new("curl");
    command
        .args(["-sS", "--max-time", "30", "--noproxy", ""])
        .args(args)
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .kill_on_drop(true);
    let out = command.output().await.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

#[tokio::test]
async fn curl_reaches_an_allowed_name_over_http_connect_and_socks5() {
    if !have("curl") {
        return;
    }
    let server = http_server().await;
    let p = proxy(
        &["app.test"],
        &[],
        &format!("app.test=127.0.0.1:{}", server.port),
    )
    .await;
    let via = format!("http://{}", p.addr);
    let (code, out) = curl(&["-x", &via, "http://app.test/hello"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("GET /hello HTTP/1.1\r\nHost: app.test\r\n"),
        "{out}"
    );
    assert!(
        !out.to_ascii_lowercase().contains("proxy-connection"),
        "{out}"
    );

    let (code, out) = curl(&["-p", "-x", &via, "http://app.test:8080/tunnelled"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("GET /tunnelled HTTP/1.1\r\n"), "{out}");

    let socks = p.addr.to_string();
    let (code, out) = curl(&["--socks5-hostname", &socks, "http://app.test/socks"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("GET /socks HTTP/1.1\r\n"), "{out}");
    assert_eq!(server.accepted(), 3);
}

#[tokio::test]
async fn curl_is_told_why_a_name_was_refused() {
    if !have("curl") {
        return;
    }
    let p = proxy(&["app.test"], &["evil.example"], "").await;
    let via = format!("http://{}", p.addr);
    let (_, out) = curl(&["-x", &via, "-w", "%{http_code}", "http://evil.example/"]).await;
    assert_eq!(
        out,
        "network access to evil.example:80 was blocked by the sandbox (denied by sandbox.network.deny \"evil.example\")\n403"
    );
    // HTTPS: curl reports the CONNECT refusal as its own error (exit 56) with the code.
    let (code, _) = curl(&["-x", &via, "https://unlisted.example/"]).await;
    assert_eq!(code, 56);
    let (code, _) = curl(&[
        "--socks5-hostname",
        &p.addr.to_string(),
        "http://unlisted.example/",
    ])
    .await;
    assert_ne!(code, 0);
    assert_eq!(p.egress.refusals(), 3);
}

/// `openssl s_server` on a free port, killed when dropped.
struct TlsServer {
    child: tokio::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl TlsServer {
    async fn start() -> Option<TlsServer> {
        let dir = tempfile::tempdir().unwrap();
        let (key, cert) = (dir.path().join("key.pem"), dir.path().join("cert.pem"));
        let made = std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "1",
            ])
            .args([
                "-subj",
                "/CN=secure.test",
                "-addext",
                "subjectAltName=DNS:secure.test",
            ])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        assert!(made.success());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("openssl")
            .args(["s_server", "-www", "-quiet", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("-key")
            .arg(&key)
            .arg("-cert")
            .arg(&cert)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .ok()?;
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "s_server did not listen"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Some(TlsServer {
            child,
            port,
            _dir: dir,
        })
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

#[tokio::test]
async fn curl_reaches_an_https_server_with_a_trusted_self_signed_cert_through_connect() {
    if !have("curl") || !have("openssl") {
        return;
    }
    let Some(server) = TlsServer::start().await else {
        return;
    };
    let cert = server._dir.path().join("cert.pem");
    let p = proxy(
        &["secure.test:443"],
        &[],
        &format!("secure.test=127.0.0.1:{}", server.port),
    )
    .await;
    let via = format!("http://{}", p.addr);
    let cacert = cert.to_string_lossy().to_string();
    let (code, out) = curl(&["-x", &via, "--cacert", &cacert, "https://secure.test/"]).await;
    assert_eq!(code, 0, "{out}");
    // `s_server -www` answers with a page describing the TLS session it terminated.
    assert!(
        out.contains("Ciphers supported in s_server binary"),
        "{out}"
    );
    // Without the certificate trusted, the client refuses: the proxy did not terminate TLS.
    let (code, _) = curl(&["-x", &via, "https://secure.test/"]).await;
    assert_eq!(code, 60);
}
