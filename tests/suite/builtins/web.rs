//! `web_fetch` through the real binary against local servers (names mapped for the test with
//! `DSH_TOOLS_PROXY_HOSTS`): HTML comes back as Markdown, a redirect is followed only where
//! the policy allows (a redirect to a denied or unlisted host, or to this machine's own
//! loopback, is refused and counted), a long page is spilled like any long result,
//! `WebFetch(domain:…)` rules decide calls, and non-text answers are refused.

#![allow(clippy::unwrap_used)]

use crate::support::mcp::Binary;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The page the test server's `/big` answers: 5 MB of paragraphs.
const BIG_PARAGRAPHS: usize = 50_000;

/// A local HTTP server with a few routes; returns its port and a count of requests served.
fn site() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || answer(stream, port));
        }
    });
    (port, served)
}

fn answer(mut stream: std::net::TcpStream, port: u16) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let path = first.split(' ').nth(1).unwrap_or("/").to_owned();
    let (status, kind, body, location) = match path.as_str() {
        "/page" => (
            "200 OK",
            "text/html; charset=utf-8",
            "<html><head><title>Doc</title><script>var secret = 1;</script></head><body>\
             <h1>Release notes</h1><p>Version <b>2.0</b> adds <a href=\"/more\">more</a>.</p>\
             <ul><li>faster</li><li>safer</li></ul></body></html>"
                .to_owned(),
            None,
        ),
        "/to-page" => (
            "302 Found",
            "text/plain",
            String::new(),
            Some("/page".to_owned()),
        ),
        "/to-denied" => (
            "301 Moved Permanently",
            "text/plain",
            String::new(),
            Some("http://denied.test/page".to_owned()),
        ),
        "/to-unlisted" => (
            "302 Found",
            "text/plain",
            String::new(),
            Some("http://elsewhere.test/page".to_owned()),
        ),
        "/to-loopback" => (
            "302 Found",
            "text/plain",
            String::new(),
            Some(format!("http://127.0.0.1:{port}/page")),
        ),
        "/loop" => (
            "302 Found",
            "text/plain",
            String::new(),
            Some("/loop".to_owned()),
        ),
        "/big" => (
            "200 OK",
            "text/html",
            format!(
                "<html><body>{}</body></html>",
                (0..BIG_PARAGRAPHS)
                    .map(|i| format!("<p>paragraph {i:06} of the long page with words</p>"))
                    .collect::<String>()
            ),
            None,
        ),
        "/image" => ("200 OK", "image/png", "\u{89}PNG....".to_owned(), None),
        _ => (
            "404 Not Found",
            "text/html",
            "<h1>No such page</h1>".to_owned(),
            None,
        ),
    };
    let location = location
        .map(|l| format!("Location: {l}\r\n"))
        .unwrap_or_default();
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{location}Connection: close\r\n\r\n{body}",
        body.len()
    );
}

fn host(port: u16, config: Value) -> Binary {
    let mapping = format!(
        "docs.test=127.0.0.1:{port},denied.test=127.0.0.1:{port},elsewhere.test=127.0.0.1:{port}"
    );
    Binary::serve_with_env(config, &[("DSH_TOOLS_PROXY_HOSTS", mapping.as_str())])
}

fn web(network: Value) -> Value {
    json!({ "builtins": { "web": { "network": network } } })
}

fn fetch(host: &mut Binary, url: &str) -> Value {
    let answer = host.request(
        "tools/execute",
        json!({ "callId": "w", "name": "web_fetch", "arguments": { "url": url, "prompt": "what changed?" } }),
    );
    answer["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn html_comes_back_as_markdown_after_an_allowed_redirect_with_a_web_card() {
    let (port, _) = site();
    let mut host = host(port, web(json!({ "allow": ["docs.test"] })));
    let result = fetch(&mut host, "http://docs.test/to-page");
    assert_eq!(result["isError"], false, "{result}");
    let value = &result["value"];
    assert_eq!(value["url"], "http://docs.test/page", "{result}");
    assert_eq!(value["status"], 200);
    let markdown = value["content"].as_str().unwrap();
    assert!(markdown.starts_with("# Release notes"), "{markdown}");
    assert!(
        markdown.contains("Version **2.0** adds [more](/more)."),
        "{markdown}"
    );
    assert!(
        markdown.contains("faster") && markdown.contains("safer"),
        "{markdown}"
    );
    assert!(!markdown.contains("secret"), "{markdown}");
    let rendered = text(&result);
    assert!(
        rendered.starts_with("Fetched http://docs.test/page (HTTP 200, text/html; charset=utf-8, "),
        "{rendered}"
    );
    assert!(
        rendered.contains("Prompt: what changed?\n\n# Release notes"),
        "{rendered}"
    );

    let card = host.request(
        "tools/presentResult",
        json!({ "name": "web_fetch", "arguments": { "url": "http://docs.test/to-page" }, "result": result }),
    );
    assert_eq!(
        card["result"],
        json!({ "card": "web", "kind": "fetch", "url": "http://docs.test/page", "statusCode": 200, "truncated": false }),
        "{card}"
    );
}

#[test]
fn redirects_are_decided_again_at_every_hop_and_refusals_are_counted() {
    let (port, _) = site();
    let mut host = host(
        port,
        web(json!({ "allow": ["docs.test", "denied.test"], "deny": ["denied.test"] })),
    );
    let denied = fetch(&mut host, "http://docs.test/to-denied");
    assert_eq!(denied["isError"], true, "{denied}");
    assert_eq!(
        denied["error"]["message"],
        "cannot fetch http://docs.test/to-denied: network access to denied.test:80 was blocked \
         by the sandbox (denied by builtins.web.network.deny \"denied.test\")",
        "{denied}"
    );
    let unlisted = fetch(&mut host, "http://docs.test/to-unlisted");
    assert!(
        unlisted["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("network access to elsewhere.test:80 was blocked by the sandbox (not in builtins.web.network.allow)"),
        "{unlisted}"
    );
    let metrics = host.request("tools/metrics", json!({}));
    let row = metrics["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "web_fetch")
        .cloned()
        .unwrap();
    assert_eq!(row["blockedConnections"], 2, "{row}");

    let looping = fetch(&mut host, "http://docs.test/loop");
    assert_eq!(
        looping["error"]["message"],
        "cannot fetch http://docs.test/loop: more than 5 redirects (the last to http://docs.test/loop)",
        "{looping}"
    );
}

#[test]
fn this_machines_own_addresses_are_refused_whatever_the_policy() {
    let (port, _) = site();
    // No policy of its own and none in the sandbox: any host, but never this machine.
    let mut host = host(port, json!({ "builtins": { "web": {} } }));
    let redirected = fetch(&mut host, "http://docs.test/to-loopback");
    assert!(
        redirected["error"]["message"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1 is a loopback address"),
        "{redirected}"
    );
    let named = fetch(&mut host, &format!("http://localhost:{port}/page"));
    assert!(
        named["error"]["message"]
            .as_str()
            .unwrap()
            .contains("localhost resolves to a loopback address"),
        "{named}"
    );
    let metadata = fetch(&mut host, "http://169.254.169.254/latest/meta-data/");
    assert!(
        metadata["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the cloud metadata address"),
        "{metadata}"
    );
    let file = fetch(&mut host, "file:///etc/passwd");
    assert!(
        file["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only http and https URLs are fetched, not file"),
        "{file}"
    );
}

#[test]
fn a_long_page_is_spilled_whole_and_non_text_and_error_answers_are_refused() {
    let (port, _) = site();
    let spill = tempfile::tempdir().unwrap();
    let mut host = host(
        port,
        json!({
            "builtins": { "web": { "network": { "allow": ["docs.test"] } } },
            "spill": { "dir": spill.path().display().to_string() }
        }),
    );
    let big = fetch(&mut host, "http://docs.test/big");
    assert_eq!(big["isError"], false, "{}", &big.to_string()[..500]);
    let saved = big["meta"]["spill"]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", &big["meta"]));
    let whole = std::fs::read_to_string(saved).unwrap();
    assert!(whole.len() > 2_000_000, "{}", whole.len());
    for i in [0, BIG_PARAGRAPHS / 2, BIG_PARAGRAPHS - 1] {
        assert!(
            whole.contains(&format!("paragraph {i:06} of the long page")),
            "{i}"
        );
    }
    assert!(text(&big).len() < 20_000, "the model's text is a preview");

    let image = fetch(&mut host, "http://docs.test/image");
    assert!(
        image["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is not text (image/png"),
        "{image}"
    );
    let missing = fetch(&mut host, "http://docs.test/nothing-here");
    assert_eq!(
        missing["error"]["message"],
        "http://docs.test/nothing-here answered HTTP 404:\n# No such page",
        "{missing}"
    );
}

#[test]
fn webfetch_domain_rules_decide_calls_before_anything_is_fetched() {
    let (port, served) = site();
    let mut host = host(
        port,
        json!({
            "builtins": { "web": { "network": { "allow": ["docs.test", "elsewhere.test"] } } },
            "permissions": { "deny": ["WebFetch(domain:elsewhere.test)"] }
        }),
    );
    let before = served.load(Ordering::SeqCst);
    let refused = fetch(&mut host, "http://elsewhere.test/page");
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("WebFetch(domain:elsewhere.test)"),
        "{refused}"
    );
    assert_eq!(
        served.load(Ordering::SeqCst),
        before,
        "a denied call reached the server"
    );
    let allowed = fetch(&mut host, "http://docs.test/page");
    assert_eq!(allowed["isError"], false, "{allowed}");
}

/// A certificate for `secure.test` signed by a throwaway CA (made with the `openssl` CLI):
/// `(leaf key, leaf certificate, CA certificate)` as PEM files.
fn certificate(dir: &std::path::Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let path = |name: &str| dir.join(name);
    std::fs::write(
        path("leaf.ext"),
        "subjectAltName=DNS:secure.test\nbasicConstraints=CA:FALSE\n",
    )
    .ok()?;
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let steps: [Vec<&str>; 3] = [
        [
            &["req", "-x509"][..],
            &ec,
            &[
                "-days",
                "1",
                "-subj",
                "/CN=Test CA",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
            ],
        ]
        .concat(),
        [
            &["req"][..],
            &ec,
            &[
                "-subj",
                "/CN=secure.test",
                "-keyout",
                "leaf.key",
                "-out",
                "leaf.csr",
            ],
        ]
        .concat(),
        vec![
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "leaf.ext",
            "-out",
            "leaf.pem",
        ],
    ];
    for step in steps {
        let made = std::process::Command::new("openssl")
            .args(step)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        if !made.success() {
            return None;
        }
    }
    Some((path("leaf.key"), path("leaf.pem"), path("ca.pem")))
}

/// An HTTPS server (rustls) answering every request with one HTML page.
fn secure_site(key: &std::path::Path, cert: &std::path::Path) -> u16 {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = vec![CertificateDer::from_pem_file(cert).unwrap()];
    let key = PrivateKeyDer::from_pem_file(key).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let connection = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(connection, stream);
                let mut reader = BufReader::new(&mut tls);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let body = "<h2>Over TLS</h2><p>verified</p>";
                let _ = write!(
                    tls,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    port
}

#[test]
fn https_is_verified_against_the_trusted_roots_and_never_terminated_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let Some((key, cert, authority)) = certificate(dir.path()) else {
        panic!("openssl is needed (.ci/setup installs it)");
    };
    let port = secure_site(&key, &cert);
    let mapping = format!("secure.test=127.0.0.1:{port}");
    let config = web(json!({ "allow": ["secure.test"] }));
    let cert_file = authority.display().to_string();
    let mut trusting = Binary::serve_with_env(
        config.clone(),
        &[
            ("DSH_TOOLS_PROXY_HOSTS", mapping.as_str()),
            ("SSL_CERT_FILE", cert_file.as_str()),
        ],
    );
    let result = fetch(&mut trusting, "https://secure.test/");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["value"]["content"], "## Over TLS\n\nverified",
        "{result}"
    );
    // Not trusted: the certificate is refused (no fallback to plain text, no skipping).
    let mut wary = Binary::serve_with_env(config, &[("DSH_TOOLS_PROXY_HOSTS", mapping.as_str())]);
    let refused = fetch(&mut wary, "https://secure.test/");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("TLS with secure.test failed"),
        "{refused}"
    );
}

#[test]
fn without_a_policy_of_its_own_web_fetch_follows_the_sandboxs_network_policy() {
    let (port, _) = site();
    let mut host = host(
        port,
        json!({
            "builtins": { "web": {} },
            "sandbox": { "network": { "allow": ["docs.test"] } }
        }),
    );
    assert_eq!(fetch(&mut host, "http://docs.test/page")["isError"], false);
    let refused = fetch(&mut host, "http://elsewhere.test/page");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("(not in sandbox.network.allow)"),
        "{refused}"
    );
}
