//! What live output costs a flooding command: the release binary over ndjson stdio runs a
//! `bash` call printing 100 MB to its stdout, with `capabilities.progress` on and off, the
//! samples interleaved in one run. The client reads everything as fast as it can (it finds
//! its response by prefix and counts the live text without parsing it), the worst case for
//! the host: every report it does not drop is serialized and written.
//!
//! `cargo bench --bench progress_stdio`; `BENCH_RUNS=<n>` samples per setting (default 15),
//! `DSH_BENCH_HOST=<executable>` measures another build.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use anyhow::{Context, bail};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

const FLOOD_BYTES: u64 = 100 << 20;

fn host_binary() -> PathBuf {
    std::env::var_os("DSH_BENCH_HOST")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_dsh-tools").into())
        .into()
}

struct Host {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: Vec<u8>,
}

/// One sample: how long the call took and how many live reports reached the client.
struct Sample {
    ms: f64,
    reports: u64,
    live_bytes: u64,
}

impl Host {
    fn spawn(progress: bool, cwd: &std::path::Path) -> anyhow::Result<Host> {
        let mut child = Command::new(host_binary())
            .args(["serve", "--framing", "ndjson"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("spawning dsh-tools")?;
        let input = child.stdin.take().context("stdin")?;
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().context("stdout")?);
        let mut host = Host {
            child,
            input,
            output,
            line: Vec::new(),
        };
        host.send(
            &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "1", "capabilities": { "progress": progress },
            "config": { "builtins": { "bash": { "cwd": cwd.display().to_string() } } } } }),
        )?;
        host.until_response(0)?;
        Ok(host)
    }

    fn send(&mut self, message: &serde_json::Value) -> anyhow::Result<()> {
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        self.input.write_all(&bytes)?;
        Ok(self.input.flush()?)
    }

    /// Reads until the response to `id`; returns (live reports, bytes of their lines).
    fn until_response(&mut self, id: u64) -> anyhow::Result<(u64, u64)> {
        let wanted = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},");
        let (mut reports, mut bytes) = (0, 0);
        loop {
            self.line.clear();
            if self.output.read_until(b'\n', &mut self.line)? == 0 {
                bail!("the host closed stdout");
            }
            if self.line.starts_with(wanted.as_bytes()) {
                return Ok((reports, bytes));
            }
            if self
                .line
                .starts_with(br#"{"jsonrpc":"2.0","method":"tools/progress""#)
            {
                reports += 1;
                bytes += self.line.len() as u64;
            }
        }
    }

    fn flood(&mut self, id: u64) -> anyhow::Result<Sample> {
        let command = format!("head -c {FLOOD_BYTES} /dev/zero | tr '\\0' y > /dev/stdout");
        let started = Instant::now();
        self.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/execute",
            "params": { "callId": format!("flood-{id}"), "name": "bash",
                "arguments": { "command": command, "timeoutMs": 600000 } } }),
        )?;
        let (reports, live_bytes) = self.until_response(id)?;
        Ok(Sample {
            ms: started.elapsed().as_secs_f64() * 1000.0,
            reports,
            live_bytes,
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let runs: u64 = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(15);
    let cwd = tempfile::tempdir()?;
    let mut on = Host::spawn(true, cwd.path())?;
    let mut off = Host::spawn(false, cwd.path())?;
    // One warm-up each: page cache, spill directory.
    on.flood(1)?;
    off.flood(1)?;
    let (mut with, mut without, mut reports, mut live) = (Vec::new(), Vec::new(), 0, 0);
    for n in 0..runs {
        let id = n + 2;
        let sample = on.flood(id)?;
        with.push(sample.ms);
        reports += sample.reports;
        live += sample.live_bytes;
        without.push(off.flood(id)?.ms);
    }
    let (with, without) = (median(with), median(without));
    println!(
        "bash printing {} MiB, {runs} samples each, medians:",
        FLOOD_BYTES >> 20
    );
    println!("  progress off: {without:8.1} ms");
    println!(
        "  progress on:  {with:8.1} ms  ({:+.1}%), {:.0} reports and {:.1} MiB of report lines per call reached the client",
        (with / without - 1.0) * 100.0,
        reports as f64 / runs as f64,
        live as f64 / runs as f64 / f64::from(1 << 20)
    );
    Ok(())
}
