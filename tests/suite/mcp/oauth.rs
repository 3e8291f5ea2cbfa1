//! OAuth for a remote server, through the real binary (`dsh-tools run`) against a local
//! protected server and authorization server (`tests/fixtures/oauth/server.py`): a 401's
//! `resource_metadata` leads to the metadata, dynamic registration and the authorization
//! code flow with PKCE (S256, checked by the token endpoint); the tokens land in a 0600 file
//! under `$XDG_CONFIG_HOME/dsh-tools/oauth/` and are reused, and refreshed once expired, by
//! the next run; no token shows in any output; a refused authorization fails the run naming
//! the server; without `--oauth-headless` the URL is printed and the loopback listener
//! completes the flow when a browser (here, the test) follows it; a front end that declared
//! `openUrl` is sent the URL as `client/openUrl` instead, and under `dsh-tools mcp` an MCP
//! client (the official Python SDK's) that declared URL elicitation is sent it as
//! `elicitation/create` in mode `url`; a 403 `insufficient_scope` on a call is authorized for
//! the larger scope and the call sent again.

#![allow(clippy::unwrap_used)]

use crate::support::mcp::{Binary, PATIENCE, python_client, scratch};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The fixture: a protected MCP server and its authorization server; killed on drop.
struct Fixture {
    child: Child,
    port: u16,
}

impl Fixture {
    fn start(flags: &[&str]) -> Fixture {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oauth/server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(flags)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Fixture { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// What the fixture saw: registrations, authorizations, token requests, 401s, tokens.
    fn log(&self) -> Value {
        let (_, _, body) = get(&format!("http://127.0.0.1:{}/log", self.port));
        serde_json::from_str(&body).unwrap()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET over HTTP/1.0: the status, the `Location` header and the body.
fn get(url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = TcpStream::connect(authority).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {authority}\r\n\r\n").unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    (status, location, body.to_owned())
}

/// A scratch directory with the config naming the fixture `secure`, a program calling its
/// tool, and a config home of its own.
struct Setup {
    dir: PathBuf,
}

impl Setup {
    fn new(name: &str, fixture: &Fixture) -> Setup {
        let dir = scratch(name);
        let config = json!({ "mcpServers": { "secure": { "url": fixture.url() } } });
        std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
        std::fs::write(
            dir.join("program.ts"),
            "return await tools.mcp__secure__whoami({});\n",
        )
        .unwrap();
        Setup { dir }
    }

    fn command(&self, headless: bool) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
        command.arg("run");
        if headless {
            command.arg("--oauth-headless");
        }
        command
            .arg("--config")
            .arg(self.dir.join("config.json"))
            .arg(self.dir.join("program.ts"))
            .env("XDG_CONFIG_HOME", self.dir.join("config-home"))
            .env("RUST_LOG", "debug");
        command
    }

    fn run_headless(&self) -> Output {
        self.command(true).output().unwrap()
    }

    fn token_dir(&self) -> PathBuf {
        self.dir.join("config-home/dsh-tools/oauth")
    }

    /// The one token file.
    fn token_file(&self) -> PathBuf {
        let files: Vec<PathBuf> = std::fs::read_dir(self.token_dir())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files.into_iter().next().unwrap()
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Every token the fixture issued, absent from `output`.
fn assert_no_token_shown(fixture: &Fixture, output: &str) {
    for token in fixture.log()["issued"].as_array().unwrap() {
        let token = token.as_str().unwrap();
        assert!(!output.contains(token), "{token} shown in {output}");
    }
}

#[test]
fn a_401_is_authorized_with_discovery_registration_and_pkce_and_the_token_is_reused() {
    let fixture = Fixture::start(&[]);
    let setup = Setup::new("oauth-first", &fixture);
    let first = setup.run_headless();
    let shown = text(&first);
    assert_eq!(first.status.code(), Some(0), "{shown}");
    let log = fixture.log();
    let client = log["registrations"][0]["client_id"].as_str().unwrap();
    assert!(shown.contains(&format!("client {client}")), "{shown}");
    assert_eq!(log["registrations"].as_array().unwrap().len(), 1);
    assert_eq!(log["registrations"][0]["client_name"], "dsh-tools");
    let authorization = &log["authorizations"][0];
    assert_eq!(authorization["code_challenge_method"], "S256");
    assert_eq!(authorization["has_code_challenge"], true);
    assert_eq!(authorization["resource"], fixture.url());
    assert!(
        authorization["redirect_uri"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    assert_eq!(
        log["token_requests"],
        json!([{ "grant_type": "authorization_code", "pkce_verified": true }])
    );
    assert_eq!(log["mcp_unauthorized"], 1);
    let file = setup.token_file();
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&setup.token_dir()), 0o700);
    assert_no_token_shown(&fixture, &shown);

    // The next run sends the saved token: no 401, registration or authorization.
    let second = setup.run_headless();
    let shown = text(&second);
    assert_eq!(second.status.code(), Some(0), "{shown}");
    assert!(shown.contains(&format!("client {client}")), "{shown}");
    let log = fixture.log();
    assert_eq!(log["registrations"].as_array().unwrap().len(), 1);
    assert_eq!(log["authorizations"].as_array().unwrap().len(), 1);
    assert_eq!(log["token_requests"].as_array().unwrap().len(), 1);
    assert_eq!(log["mcp_unauthorized"], 1);
    assert_no_token_shown(&fixture, &shown);
}

#[test]
fn an_expired_saved_token_is_refreshed_and_the_new_one_saved() {
    let fixture = Fixture::start(&[]);
    let setup = Setup::new("oauth-refresh", &fixture);
    assert_eq!(setup.run_headless().status.code(), Some(0));
    // Received long ago: its hour is over.
    let file = setup.token_file();
    let mut saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let first_token = saved["credentials"]["token_response"]["access_token"].clone();
    saved["credentials"]["token_received_at"] = json!(1);
    std::fs::write(&file, saved.to_string()).unwrap();

    let second = setup.run_headless();
    let shown = text(&second);
    assert_eq!(second.status.code(), Some(0), "{shown}");
    let log = fixture.log();
    assert_eq!(
        log["token_requests"],
        json!([
            { "grant_type": "authorization_code", "pkce_verified": true },
            { "grant_type": "refresh_token" }
        ])
    );
    assert_eq!(log["authorizations"].as_array().unwrap().len(), 1);
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let token = &saved["credentials"]["token_response"]["access_token"];
    assert_ne!(token, &first_token);
    assert_eq!(token, &log["issued"][2]);
    assert_eq!(mode(&file), 0o600);
    assert_no_token_shown(&fixture, &shown);
}

#[test]
fn a_refused_authorization_fails_the_run_naming_the_server() {
    let fixture = Fixture::start(&["--deny"]);
    let setup = Setup::new("oauth-denied", &fixture);
    let output = setup.run_headless();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("dsh-tools run: MCP server \"secure\" failed to start")
            && stderr.contains("requires OAuth authorization, which failed")
            && stderr.contains("access_denied (denied by the fixture)"),
        "{stderr}"
    );
    assert!(!setup.token_dir().exists() || setup.token_dir().read_dir().unwrap().count() == 0);
}

#[test]
fn the_printed_url_completes_the_flow_through_the_loopback_redirect() {
    let fixture = Fixture::start(&[]);
    let setup = Setup::new("oauth-printed", &fixture);
    let mut child = setup
        .command(false)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let url = printed_authorization_url(&mut stderr);
    // The browser: the authorization server redirects to the loopback listener.
    let (status, location, _) = get(&url);
    assert_eq!(status, 302);
    let (status, _, page) = get(&location.unwrap());
    assert_eq!(status, 200);
    assert!(page.contains("You can close this window"), "{page}");
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("client client-"), "{stdout}");
    assert_eq!(mode(&setup.token_file()), 0o600);
}

#[test]
fn a_front_end_with_open_url_is_sent_the_authorization_url_and_the_flow_completes() {
    let fixture = Fixture::start(&[]);
    let setup = Setup::new("oauth-front-end", &fixture);
    let config_home = setup.dir.join("config-home");
    let mut host = Binary::spawn_with_env(
        &["serve", "--framing", "ndjson"],
        &[("XDG_CONFIG_HOME", config_home.to_str().unwrap())],
    );
    let config = json!({ "mcpServers": { "secure": { "url": fixture.url() } } });
    let answer = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "config": config, "capabilities": { "openUrl": true } }),
    );
    assert_eq!(answer["result"]["protocolVersion"], "1", "{answer}");
    let mut asked = Vec::new();
    let mut browser = None;
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let (status, requests) = host.request_answering("mcp/status", json!({}), |request| {
            assert_eq!(request["method"], "client/openUrl", "{request}");
            // The user's browser, while the client answers at once.
            let url = request["params"]["url"].as_str().unwrap().to_owned();
            browser = Some(std::thread::spawn(move || {
                let (status, location, _) = get(&url);
                assert_eq!(status, 302);
                get(&location.unwrap()).0
            }));
            json!({ "opened": true })
        });
        asked.extend(requests);
        let running = status["result"][0]["state"] == "running";
        if running {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(asked.len(), 1, "{asked:?}");
    let params = &asked[0]["params"];
    assert_eq!(params["server"], "secure");
    assert!(
        params["reason"]
            .as_str()
            .unwrap()
            .contains("The MCP server \"secure\" needs authorization"),
        "{params}"
    );
    assert_eq!(browser.unwrap().join().unwrap(), 200);
    let whoami = host.request(
        "tools/execute",
        json!({ "callId": "w", "name": "mcp__secure__whoami", "arguments": {} }),
    );
    assert_eq!(whoami["result"]["isError"], false, "{whoami}");
    assert_eq!(mode(&setup.token_file()), 0o600);
}

/// The servers start before the client connects: the one needing OAuth does not hold the
/// client back, its URL goes to the client as soon as it connected, and its tools are
/// announced once the client's browser (here, the Python script) completed the flow.
#[test]
fn dsh_tools_mcp_sends_the_authorization_url_to_a_client_declaring_url_elicitation() {
    let fixture = Fixture::start(&[]);
    let setup = Setup::new("oauth-mcp-elicit", &fixture);
    let config = json!({ "mcpServers": { "secure": { "url": fixture.url() } } });
    let config_home = setup.dir.join("config-home");
    let report = python_client(
        "oauth-mcp-elicit",
        "native",
        &config,
        json!({
            "elicit": { "action": "accept" },
            "follow": true,
            "awaitTool": "mcp__secure__whoami",
            "calls": [{ "name": "mcp__secure__whoami" }],
            "env": { "XDG_CONFIG_HOME": config_home.to_str().unwrap() },
        }),
    );
    let asked = report["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{report}");
    assert_eq!(asked[0]["mode"], "url");
    let authorize = format!("http://127.0.0.1:{}/authorize?", fixture.port);
    assert!(
        asked[0]["url"].as_str().unwrap().starts_with(&authorize),
        "{}",
        asked[0]
    );
    assert_eq!(
        asked[0]["message"],
        "The MCP server \"secure\" needs authorization: sign in and approve access for dsh-tools."
    );
    assert!(asked[0]["elicitationId"].is_string(), "{}", asked[0]);
    assert_eq!(report["followed"], json!([200]));
    let whoami = &report["calls"][0];
    assert_eq!(whoami["isError"], false, "{whoami}");
    assert!(
        whoami["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("client client-"),
        "{whoami}"
    );
    assert_eq!(mode(&setup.token_file()), 0o600);
}

/// A client without URL elicitation is not asked: the URL printed on stderr (as the servers
/// start, before any client) completes the flow, and the client is told of the new tools.
#[test]
fn dsh_tools_mcp_prints_the_authorization_url_for_a_client_without_url_elicitation() {
    let fixture = Fixture::start(&[]);
    let setup = Setup::new("oauth-mcp-printed", &fixture);
    let config = json!({ "mcpServers": { "secure": { "url": fixture.url() } } });
    let config_file = crate::support::mcp::config_file("oauth-mcp-printed", &config);
    let config_home = setup.dir.join("config-home");
    let mut host = Binary::spawn_reading_stderr(
        &["mcp", "--config", config_file.to_str().unwrap()],
        &[("XDG_CONFIG_HOME", config_home.to_str().unwrap())],
    );
    let mut stderr = BufReader::new(host.child.stderr.take().unwrap());
    let url = printed_authorization_url(&mut stderr);
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    // Served meanwhile: a form-only client, which is never sent the URL.
    let (initialized, asked) = host.request_answering(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": { "elicitation": { "form": {} } },
                "clientInfo": { "name": "oauth-test", "version": "1" } }),
        |_| json!({}),
    );
    assert!(
        initialized["result"]["serverInfo"].is_object(),
        "{initialized}"
    );
    host.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let listed = host.request("tools/list", json!({}));
    let names = |listed: &Value| -> Vec<String> {
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!names(&listed).contains(&"mcp__secure__whoami".to_owned()));
    // The person's browser.
    let (status, location, _) = get(&url);
    assert_eq!(status, 302);
    assert_eq!(get(&location.unwrap()).0, 200);
    // Its tools are announced once the token exchange is done.
    host.notified("notifications/tools/list_changed");
    assert!(
        names(&host.request("tools/list", json!({}))).contains(&"mcp__secure__whoami".to_owned())
    );
    let (called, more) = host.request_answering(
        "tools/call",
        json!({ "name": "mcp__secure__whoami", "arguments": {} }),
        |_| json!({}),
    );
    let elicited = |m: &Value| m["method"] == "elicitation/create";
    assert!(
        asked.is_empty() && more.is_empty() && !host.inbox.iter().any(elicited),
        "{asked:?} {more:?} {:?}",
        host.inbox
    );
    let text = called["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("client client-"), "{called}");
    assert_eq!(mode(&setup.token_file()), 0o600);
}

#[test]
fn a_403_insufficient_scope_is_authorized_for_more_scopes_and_the_call_sent_again() {
    let fixture = Fixture::start(&["--step-up"]);
    let setup = Setup::new("oauth-step-up", &fixture);
    let output = setup.run_headless();
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    assert!(shown.contains("client client-"), "{shown}");
    let log = fixture.log();
    assert_eq!(log["mcp_insufficient_scope"], 1);
    let scopes: Vec<&str> = log["authorizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["scope"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(scopes.len(), 2, "{log}");
    assert!(!scopes[0].split(' ').any(|s| s == "write"), "{scopes:?}");
    assert!(scopes[1].split(' ').any(|s| s == "write"), "{scopes:?}");
    // The token file holds the upgraded grant.
    let saved: Value = serde_json::from_slice(&std::fs::read(setup.token_file()).unwrap()).unwrap();
    let granted = saved["credentials"]["token_response"]["scope"]
        .as_str()
        .unwrap_or("");
    assert!(granted.split(' ').any(|s| s == "write"), "{saved}");
    assert_no_token_shown(&fixture, &shown);
}

/// The authorization URL the host prints on `stderr` for server "secure", after checking
/// the words printed before it.
fn printed_authorization_url(stderr: &mut impl BufRead) -> String {
    let mut printed = Vec::new();
    let url = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{printed:?}");
        printed.push(line.clone());
        if let Some(url) = line.trim().strip_prefix("http://") {
            break format!("http://{url}");
        }
    };
    assert!(
        printed.iter().any(|line| line
            .contains("MCP server \"secure\" needs authorization. Open this URL in a browser")),
        "{printed:?}"
    );
    url
}
