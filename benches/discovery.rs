//! Progressive tool discovery: `search_tools` over 10,000 deferred tools (target ≤ 1 ms
//! median; issue 45: < 5 ms with the semantic signal), in process (`ToolRuntime::execute`,
//! the complete pipeline: fused ranking, then BM25 alone with `tools.semanticSearch: false`)
//! and over stdio through the real binary (client-registered tools, one `tools/execute` at a
//! time), plus the first search of a scope (which builds its index: target < 1 s); and the prompt bytes of a
//! 500-tool registry with everything deferred against nothing deferred, native and Code
//! Mode. The tools are `tests/tool-catalog/` repeated under numbered server names.
//!
//! `cargo bench --bench discovery`.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/catalog.rs"]
mod catalog;

use catalog::{Catalog, CatalogTool};
use dsh_tools::tool::ToolExecutionInput;
use dsh_tools_protocol::CodeRuntimeConfig;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The binary's allocator, so the numbers are the shipped ones.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SEARCHED_TOOLS: usize = 10_000;
const SEARCHES: usize = 2_000;
const PROMPT_TOOLS: usize = 500;

fn median_and_p95(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.95))
}

fn main() {
    let catalog = Catalog::load();
    let queries: Vec<String> = catalog
        .queries
        .iter()
        .chain(&catalog.paraphrases)
        .map(|(q, _)| q.clone())
        .collect();
    let tools = catalog.multiplied(SEARCHED_TOOLS);
    in_process(&tools, &queries, true);
    in_process(&tools, &queries, false);
    over_stdio(&tools, &queries);
    prompt_bytes(&catalog.multiplied(PROMPT_TOOLS));
}

fn in_process(tools: &[CatalogTool], queries: &[String], semantic: bool) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = json!({ "tools": { "deferred": ["*"], "semanticSearch": semantic } });
    let host = catalog::runtime(tools, config);
    let search = |query: &str| {
        let input = ToolExecutionInput::new("q", "search_tools", json!({ "query": query }));
        let result = runtime.block_on(host.execute(input));
        assert!(!result.is_error(), "{result:?}");
    };
    let started = Instant::now();
    search(&queries[0]);
    let first = started.elapsed().as_secs_f64() * 1e3;
    let mut samples = Vec::with_capacity(SEARCHES);
    for i in 0..SEARCHES {
        let query = &queries[i % queries.len()];
        let started = Instant::now();
        search(query);
        samples.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let (median, p95) = median_and_p95(samples);
    println!(
        "search_tools/in_process/{SEARCHED_TOOLS}_tools/{}: median {median:.3} ms, p95 {p95:.3} ms \
         (target < 5 ms); first search of the scope (builds its index, target < 1 s): {first:.1} ms",
        if semantic { "fused" } else { "bm25_only" }
    );
}

fn over_stdio(tools: &[CatalogTool], queries: &[String]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["serve", "--framing", "ndjson"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn dsh-tools");
    let mut stdin = BufWriter::new(child.stdin.take().unwrap());
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut next = 0u64;
    let mut send = |stdin: &mut BufWriter<_>, method: &str, params: Value| {
        next += 1;
        let request = json!({ "jsonrpc": "2.0", "id": next, "method": method, "params": params });
        writeln!(stdin, "{request}").unwrap();
        next
    };
    let wait = |stdout: &mut BufReader<_>, id: u64| loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the host exited");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("method").is_none() && message["id"] == id {
            assert!(message.get("result").is_some(), "{message}");
            return message;
        }
    };
    let init = json!({ "protocolVersion": "1", "capabilities": { "executeTools": true },
        "config": { "tools": { "deferred": ["*"] } } });
    let id = send(&mut stdin, "initialize", init);
    stdin.flush().unwrap();
    wait(&mut stdout, id);
    let mut last = 0;
    for tool in tools {
        let spec = json!({ "name": tool.name, "description": tool.description,
            "inputSchema": tool.input_schema, "output": { "schema": { "type": "string" } } });
        last = send(&mut stdin, "tools/register", json!({ "tool": spec }));
    }
    stdin.flush().unwrap();
    wait(&mut stdout, last);
    let mut search = |query: &str| {
        let params =
            json!({ "callId": "q", "name": "search_tools", "arguments": { "query": query } });
        let id = send(&mut stdin, "tools/execute", params);
        stdin.flush().unwrap();
        let answer = wait(&mut stdout, id);
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    };
    let started = Instant::now();
    search(&queries[0]);
    let first = started.elapsed().as_secs_f64() * 1e3;
    let mut samples = Vec::with_capacity(SEARCHES);
    for i in 0..SEARCHES {
        let query = &queries[i % queries.len()];
        let started = Instant::now();
        search(query);
        samples.push(started.elapsed().as_secs_f64() * 1e3);
    }
    drop(stdin);
    let _ = child.wait();
    let (median, p95) = median_and_p95(samples);
    println!(
        "search_tools/stdio_ndjson/{SEARCHED_TOOLS}_tools: median {median:.3} ms, p95 {p95:.3} ms \
         per round trip; first search (builds the index): {first:.1} ms"
    );
}

fn prompt_bytes(tools: &[CatalogTool]) {
    for mode in ["native", "code"] {
        let bytes = |deferred: &[&str]| {
            let config = json!({ "tools": { "mode": mode, "deferred": deferred } });
            let runtime = catalog::runtime(tools, config);
            let code = CodeRuntimeConfig::default();
            let assembly = dsh_tools::prompt::assemble(&runtime, None, &[], &code).unwrap();
            serde_json::to_string(&assembly).unwrap().len()
        };
        let full = bytes(&[]);
        let deferred = bytes(&["*"]);
        println!(
            "prompt_bytes/{mode}/{} tools: nothing deferred {full} B, everything deferred {deferred} B: {:.1}× smaller",
            tools.len(),
            full as f64 / deferred as f64
        );
    }
}
