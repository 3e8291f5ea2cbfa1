//! What the benches that drive the real binary over stdio share: a host over ndjson stdio
//! (requests written whole and flushed, notifications skipped unparsed, as a front end that
//! only waits for an answer would), and the spread of samples.

#![allow(dead_code)]

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// The host under test: `DSH_BENCH_HOST`, else the `dsh-tools` cargo built for the bench.
pub fn host_binary() -> PathBuf {
    std::env::var_os("DSH_BENCH_HOST")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_dsh-tools").into())
        .into()
}

/// Milliseconds since `started`.
pub fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// (median, p90, max) of `samples`.
pub fn spread(mut samples: Vec<f64>) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9), samples[samples.len() - 1])
}

/// A host over ndjson stdio. Requests are written whole and flushed; notifications are
/// recognized by their prefix and skipped without parsing, as a front end that only waits
/// for an answer would.
pub struct Host {
    pub child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Host {
    pub fn spawn(workspace: &Path) -> anyhow::Result<Host> {
        let mut child = Command::new(host_binary())
            .args(["serve", "--framing", "ndjson"])
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("spawning dsh-tools")?;
        let input = BufWriter::with_capacity(64 * 1024, child.stdin.take().context("stdin")?);
        let output = BufReader::with_capacity(256 * 1024, child.stdout.take().context("stdout")?);
        Ok(Host {
            child,
            input,
            output,
            line: String::new(),
            next_id: 0,
        })
    }

    pub fn write(&mut self, message: &Value) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.input, message)?;
        self.input.write_all(b"\n")?;
        self.input.flush()?;
        Ok(())
    }

    pub fn send_run(&mut self, program: &str) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = json!(format!("r{}", self.next_id));
        self.write(&json!({ "jsonrpc": "2.0", "id": id,
            "method": "tools/execute",
            "params": { "callId": format!("c{}", self.next_id), "name": "run_code",
                "arguments": { "code": program, "description": "bench" } } }))?;
        Ok(id)
    }

    /// Reads up to the response with `id`, skipping notifications.
    pub fn answer(&mut self, id: &Value) -> anyhow::Result<Value> {
        loop {
            self.line.clear();
            if self.output.read_line(&mut self.line)? == 0 {
                bail!("the host closed stdout");
            }
            if self.line.starts_with(r#"{"jsonrpc":"2.0","method""#) {
                continue;
            }
            let message: Value = serde_json::from_str(&self.line)?;
            if &message["id"] == id {
                return Ok(message);
            }
        }
    }

    /// Runs `program` and checks it succeeded.
    pub fn run(&mut self, program: &str) -> anyhow::Result<Value> {
        let id = self.send_run(program)?;
        let response = self.answer(&id)?;
        if response["result"]["isError"] != json!(false) {
            bail!("{program}: {response}");
        }
        Ok(response)
    }

    pub fn close(mut self) {
        drop(self.input);
        let _ = self.child.wait();
    }
}
