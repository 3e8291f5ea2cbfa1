//! Client-tool round trips through the real binary's stdio, in both framings, with a
//! pipelining client. One call is: `tools/execute` → `client/executeTool` → its answer →
//! `tools/result` notification → the `tools/execute` response. The client keeps
//! `IN_FLIGHT` calls outstanding and answers every `client/executeTool` at once.
//!
//! `cargo bench --bench stdio [-- <scenario filter>]` (cargo builds `dsh-tools` with the bench
//! profile first); `DSH_BENCH_SCALE=0.1` shortens every sample (profiling);
//! `DSH_BENCH_HOST=<executable>` measures another build of the host (A/B comparisons).

#![allow(clippy::print_stdout)]

mod support;

use anyhow::{Context, bail, ensure};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use support::{Scenario, Unit, report};

const IN_FLIGHT: u64 = 64;
const CALLS: u64 = 33_000;
const SAMPLES: usize = 3;
/// README target: at least 20,000 calls per second.
const TARGET_CALLS_PER_SECOND: f64 = 20_000.0;

fn main() -> anyhow::Result<()> {
    let scale = std::env::var("DSH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    let calls = ((CALLS as f64 * scale) as u64).max(IN_FLIGHT);
    let mut results = Vec::new();
    for framing in [Framing::Ndjson, Framing::Lsp] {
        let mut scenario = Scenario {
            name: format!(
                "client_tool_round_trip/{}/in_flight_{IN_FLIGHT}",
                framing.flag()
            ),
            unit: Unit::CallsPerSecond,
            calls,
            samples: SAMPLES,
            target: Some(TARGET_CALLS_PER_SECOND),
            cpu_of: vec![("client", None)],
        };
        if !scenario.selected() {
            continue;
        }
        let mut client = Client::spawn(framing)?;
        client.initialize()?;
        scenario.cpu_of.insert(0, ("host", Some(client.child.id())));
        results.extend(scenario.measure(|| client.pipelined_calls(calls))?);
        client.finish()?;
    }
    report(&results);
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Framing {
    Lsp,
    Ndjson,
}

impl Framing {
    fn flag(self) -> &'static str {
        match self {
            Framing::Lsp => "lsp",
            Framing::Ndjson => "ndjson",
        }
    }
}

/// One incoming message, fields kept raw so the client stays cheap next to the host.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ExecuteToolParams<'a> {
    #[serde(borrow)]
    arguments: EchoArguments<'a>,
}

#[derive(Deserialize)]
struct EchoArguments<'a> {
    #[serde(borrow)]
    text: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecuteResult<'a> {
    is_error: bool,
    #[serde(borrow)]
    value: Option<&'a RawValue>,
}

/// The host process with framed stdio; writes are buffered and flushed only when the
/// client has nothing left to read, so pipelined messages share syscalls.
struct Client {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    framing: Framing,
    body: Vec<u8>,
}

impl Client {
    fn spawn(framing: Framing) -> anyhow::Result<Client> {
        let host = std::env::var_os("DSH_BENCH_HOST")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_dsh-tools").into());
        let mut child = Command::new(host)
            .args(["serve", "--framing", framing.flag()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("spawning dsh-tools")?;
        let input = BufWriter::with_capacity(64 * 1024, child.stdin.take().context("stdin")?);
        let output = BufReader::with_capacity(64 * 1024, child.stdout.take().context("stdout")?);
        Ok(Client {
            child,
            input,
            output,
            framing,
            body: Vec::new(),
        })
    }

    fn initialize(&mut self) -> anyhow::Result<()> {
        let init = json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": { "protocolVersion": "1", "capabilities": { "executeTools": true } } });
        let register = json!({ "jsonrpc": "2.0", "id": "register", "method": "tools/register",
            "params": { "tool": {
                "name": "echo",
                "description": "Echo the text back.",
                "parameters": { "text": { "type": "string", "required": true } },
                "output": { "schema": { "type": "string" } },
                "concurrencySafe": true
            } } });
        for (request, id) in [(init, "\"init\""), (register, "\"register\"")] {
            self.write(request.to_string().as_bytes())?;
            self.input.flush()?;
            // Skips notifications (`tools/listChanged`) up to the response.
            loop {
                self.read_message()?;
                let message: Incoming = serde_json::from_slice(&self.body)?;
                if message.method.is_some() {
                    continue;
                }
                ensure!(
                    message.id.map(RawValue::get) == Some(id) && message.result.is_some(),
                    "setup failed: {}",
                    String::from_utf8_lossy(&self.body)
                );
                break;
            }
        }
        Ok(())
    }

    /// Runs `calls` calls with `IN_FLIGHT` outstanding; every response and every
    /// `tools/result` must arrive, and every response must echo its own request's text.
    fn pipelined_calls(&mut self, calls: u64) -> anyhow::Result<()> {
        let (mut sent, mut answered, mut observed) = (0u64, 0u64, 0u64);
        let mut request = Vec::with_capacity(256);
        let mut reply = Vec::with_capacity(256);
        while sent < IN_FLIGHT.min(calls) {
            self.send_execute(sent, &mut request)?;
            sent += 1;
        }
        while answered < calls || observed < calls {
            if self.output.buffer().is_empty() {
                self.input.flush()?;
            }
            self.read_message()?;
            let message: Incoming = serde_json::from_slice(&self.body)?;
            match (message.method, message.id) {
                (Some("client/executeTool"), Some(id)) => {
                    let params: ExecuteToolParams =
                        serde_json::from_str(message.params.context("params")?.get())?;
                    reply.clear();
                    reply.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                    reply.extend_from_slice(id.get().as_bytes());
                    reply.extend_from_slice(br#","result":{"value":"#);
                    reply.extend_from_slice(params.arguments.text.get().as_bytes());
                    reply.extend_from_slice(b"}}");
                    self.write(&reply)?;
                }
                (Some("tools/result"), None) => observed += 1,
                (None, Some(id)) => {
                    let index: u64 = id.get().parse().context("response id")?;
                    let result: ExecuteResult = match (message.result, message.error) {
                        (Some(result), None) => serde_json::from_str(result.get())?,
                        _ => bail!("error response: {}", String::from_utf8_lossy(&self.body)),
                    };
                    let expected = format!("\"call {index}\"");
                    ensure!(
                        !result.is_error && result.value.map(RawValue::get) == Some(&expected),
                        "wrong result: {}",
                        String::from_utf8_lossy(&self.body)
                    );
                    answered += 1;
                    if sent < calls {
                        self.send_execute(sent, &mut request)?;
                        sent += 1;
                    }
                }
                _ => bail!(
                    "unexpected message: {}",
                    String::from_utf8_lossy(&self.body)
                ),
            }
        }
        self.input.flush()?;
        Ok(())
    }

    fn send_execute(&mut self, index: u64, request: &mut Vec<u8>) -> anyhow::Result<()> {
        request.clear();
        write!(
            request,
            r#"{{"jsonrpc":"2.0","id":{index},"method":"tools/execute","params":{{"callId":"c{index}","name":"echo","arguments":{{"text":"call {index}"}}}}}}"#
        )?;
        self.write(request)
    }

    fn write(&mut self, message: &[u8]) -> anyhow::Result<()> {
        match self.framing {
            Framing::Lsp => {
                write!(self.input, "Content-Length: {}\r\n\r\n", message.len())?;
                self.input.write_all(message)?;
            }
            Framing::Ndjson => {
                self.input.write_all(message)?;
                self.input.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    /// Reads one message into `self.body`.
    fn read_message(&mut self) -> anyhow::Result<()> {
        self.body.clear();
        match self.framing {
            Framing::Ndjson => {
                if self.output.read_until(b'\n', &mut self.body)? == 0 {
                    bail!("the host closed stdout");
                }
            }
            Framing::Lsp => {
                let mut length = None;
                loop {
                    if self.output.read_until(b'\n', &mut self.body)? == 0 {
                        bail!("the host closed stdout");
                    }
                    let line = std::str::from_utf8(&self.body)?.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = Some(value.parse::<usize>()?);
                    }
                    self.body.clear();
                }
                self.body.clear();
                self.body.resize(length.context("no Content-Length")?, 0);
                self.output.read_exact(&mut self.body)?;
            }
        }
        Ok(())
    }

    /// Closes stdin and waits for a clean exit.
    fn finish(self) -> anyhow::Result<()> {
        let Client {
            mut child, input, ..
        } = self;
        drop(input.into_inner().map_err(|e| e.into_error())?);
        let status = child.wait()?;
        ensure!(status.success(), "dsh-tools exited with {status}");
        Ok(())
    }
}
