//! A host-side tool called through `dsh-tools mcp --http` by 16 concurrent MCP sessions
//! (rmcp's Streamable HTTP client, one session each, every session calling again as soon
//! as its previous call answered): calls per second, and the p50/p99 latency of one call.
//! The tool is the `read` built-in on a one-line file, so the number is the HTTP front
//! end, rmcp's session layer and the pipeline, not the tool.
//!
//! `cargo bench --bench mcp_http`; `DSH_BENCH_SCALE=0.1` shortens every sample;
//! `DSH_BENCH_HOST=<executable>` measures another build of the host.

#![allow(clippy::print_stdout)]

mod support;

use anyhow::{Context, bail};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService, serve_client};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Scenario, Unit, report};

const SESSIONS: usize = 16;
const CALLS: u64 = 8_000;
const SAMPLES: usize = 3;

fn main() -> anyhow::Result<()> {
    let scale = std::env::var("DSH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    let sessions = SESSIONS as u64;
    let calls = ((CALLS as f64 * scale) as u64 / sessions).max(1) * sessions;
    let mut scenario = Scenario {
        name: format!("mcp_http/read/sessions_{SESSIONS}"),
        unit: Unit::CallsPerSecond,
        calls,
        samples: SAMPLES,
        target: None,
        cpu_of: vec![("client", None)],
    };
    if !scenario.selected() {
        return Ok(());
    }
    // reqwest is built without a crypto provider of its own (as in the host).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let root = std::env::temp_dir().join(format!("dsh-bench-mcp-http-{}", std::process::id()));
    std::fs::create_dir_all(&root)?;
    std::fs::write(root.join("note.txt"), "one line\n")?;
    let config = root.join("config.json");
    let config_text = serde_json::json!({ "builtins": { "fs": { "root": root } } });
    std::fs::write(&config, config_text.to_string())?;
    let mut host = Host::start(&config)?;
    scenario.cpu_of.insert(0, ("host", Some(host.child.id())));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let sessions = runtime.block_on(connect(&host.url, &host.token))?;
    let sessions = Arc::new(sessions);
    let mut latencies: Vec<Vec<Duration>> = Vec::new();
    let measured = scenario.measure(|| {
        let sample = runtime.block_on(sample(sessions.clone(), calls))?;
        latencies.push(sample);
        Ok(())
    })?;
    // The first sample is the untimed warm-up.
    let mut timed: Vec<Duration> = latencies.into_iter().skip(1).flatten().collect();
    timed.sort();
    let percentile = |p: f64| {
        let index = ((timed.len() as f64 * p).ceil() as usize).saturating_sub(1);
        timed.get(index).map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    report(&measured.into_iter().collect::<Vec<_>>());
    println!(
        "\nlatency of one call over {} timed calls: p50 {:.2} ms, p99 {:.2} ms",
        timed.len(),
        percentile(0.50),
        percentile(0.99)
    );
    runtime.block_on(async {
        if let Ok(sessions) = Arc::try_unwrap(sessions) {
            for session in sessions {
                let _ = session.cancel().await;
            }
        }
    });
    host.stop();
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

/// The host under test.
struct Host {
    child: Child,
    url: String,
    token: String,
}

impl Host {
    fn start(config: &std::path::Path) -> anyhow::Result<Host> {
        let executable = std::env::var_os("DSH_BENCH_HOST")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_dsh-tools").into());
        let mut child = Command::new(executable)
            .args(["mcp", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().context("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let (mut url, mut token) = (None, None);
        while url.is_none() || token.is_none() {
            let Some(line) = lines.next() else {
                bail!("the host exited before listening");
            };
            let line = line?;
            if let Some(found) = line.strip_prefix("dsh-tools mcp: listening on ") {
                url = Some(found.to_owned());
            } else if let Some(found) = line.strip_prefix("dsh-tools mcp: bearer token ") {
                token = Some(found.to_owned());
            }
        }
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Host {
            child,
            url: url.unwrap_or_default(),
            token: token.unwrap_or_default(),
        })
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Host {
    /// A failed sample must not leave the host running.
    fn drop(&mut self) {
        self.stop();
    }
}

type Session = RunningService<RoleClient, ()>;

/// `SESSIONS` initialized sessions.
async fn connect(url: &str, token: &str) -> anyhow::Result<Vec<Session>> {
    let mut sessions = Vec::with_capacity(SESSIONS);
    for _ in 0..SESSIONS {
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
        let transport = StreamableHttpClientTransport::from_config(config);
        sessions.push(serve_client((), transport).await?);
    }
    Ok(sessions)
}

/// `calls` calls spread over the sessions; each call's latency.
async fn sample(sessions: Arc<Vec<Session>>, calls: u64) -> anyhow::Result<Vec<Duration>> {
    let per_session = calls / SESSIONS as u64;
    let mut tasks = Vec::with_capacity(SESSIONS);
    for index in 0..SESSIONS {
        let sessions = sessions.clone();
        tasks.push(tokio::spawn(async move {
            let peer = sessions[index].peer().clone();
            let mut latencies = Vec::with_capacity(per_session as usize);
            for _ in 0..per_session {
                let mut params = CallToolRequestParams::new("read");
                params.arguments = serde_json::json!({ "file_path": "note.txt" })
                    .as_object()
                    .cloned();
                let started = Instant::now();
                let result = peer.call_tool(params).await?;
                latencies.push(started.elapsed());
                if result.is_error == Some(true) {
                    bail!("the call failed: {result:?}");
                }
            }
            Ok::<_, anyhow::Error>(latencies)
        }));
    }
    let mut all = Vec::with_capacity(calls as usize);
    for task in tasks {
        all.extend(task.await??);
    }
    Ok(all)
}
