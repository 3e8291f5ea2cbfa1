//! Spilling: (1) the built-in spill policy over a 50 MB result against `std::fs::write` of
//! the same 50 MB into the same directory, interleaved in one run (README target: at most
//! 1.5×); (2) the host's resident memory while `bash` streams 1 GB of output to a spill
//! file through the real binary (target: under 64 MB above idle).
//!
//! `cargo bench --bench spill [-- write|bash]`; `DSH_BENCH_SCALE=0.1` shrinks both sizes.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::ToolRuntime;
use dsh_tools::tool::{ContentBlock, Outcome, ToolExecutionResult};
use dsh_tools_protocol::{HostConfig, SpillConfig};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const RESULT_BYTES: usize = 50 * 1000 * 1000;
const ROUNDS: usize = 21;
/// Pause between samples (outside every timing).
const SETTLE: Duration = Duration::from_millis(100);
const BASH_BYTES: u64 = 1000 * 1000 * 1000;
const RATIO_TARGET: f64 = 1.5;
const RSS_TARGET_MB: f64 = 64.0;

fn main() {
    let scale: f64 = std::env::var("DSH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let selected = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    if selected("write") {
        spill_against_write(dir.path(), (RESULT_BYTES as f64 * scale) as usize);
    }
    if selected("bash") {
        bash_rss(dir.path(), (BASH_BYTES as f64 * scale) as u64);
    }
}

/// Lines of text, as a large tool result would be.
fn text_of(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 64);
    let mut i = 0u64;
    while text.len() < bytes {
        text.push_str(&format!(
            "line {i}: the quick brown fox jumps over the lazy dog\n"
        ));
        i += 1;
    }
    text.truncate(bytes);
    text
}

fn spill_against_write(dir: &std::path::Path, bytes: usize) {
    let spill_dir = dir.join("spill");
    let config = HostConfig {
        spill: SpillConfig {
            dir: Some(spill_dir.display().to_string()),
            ..SpillConfig::default()
        },
        ..HostConfig::default()
    };
    let runtime = ToolRuntime::new(&config);
    let host = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let text = text_of(bytes);
    let (mut spill_ms, mut write_ms, mut save_ms) = (Vec::new(), Vec::new(), Vec::new());
    // The policy (`spill_content`: preview, marker, the file, on a blocking thread), the
    // store's bare save, and `std::fs::write`, each into the same directory, each file
    // removed after its sample; the order rotates every round so none always follows the
    // others' deletions. Round 0 warms every path and is not counted.
    for round in 0..=ROUNDS {
        let mut times = [0.0; 3];
        for step in 0..3 {
            let which = (round + step) % 3;
            let started = Instant::now();
            let path = match which {
                0 => {
                    let result = ToolExecutionResult {
                        outcome: Outcome::Success(Arc::new(Value::Null)),
                        content: vec![ContentBlock::text(text.clone())],
                        meta: None,
                        additional_contexts: Vec::new(),
                        structured_content: None,
                    };
                    let started_here = Instant::now();
                    let spilled = host.block_on(runtime.spill_content("big", result));
                    times[0] = ms(started_here.elapsed());
                    let spill = &spilled.meta.as_ref().unwrap()["spill"];
                    std::path::PathBuf::from(spill["path"].as_str().unwrap())
                }
                1 => {
                    let saved = runtime.spill().save("raw", text.as_bytes()).unwrap();
                    times[1] = ms(started.elapsed());
                    saved.path
                }
                _ => {
                    let baseline = spill_dir.join(format!("baseline-{round}.txt"));
                    std::fs::write(&baseline, text.as_bytes()).unwrap();
                    times[2] = ms(started.elapsed());
                    baseline
                }
            };
            assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes as u64);
            std::fs::remove_file(&path).unwrap();
            // Work a sample leaves behind (the policy frees the text after answering, the
            // kernel reclaims the removed file) must not land in the next sample.
            std::thread::sleep(SETTLE);
        }
        if round > 0 {
            spill_ms.push(times[0]);
            save_ms.push(times[1]);
            write_ms.push(times[2]);
        }
    }
    let paired: Vec<f64> = spill_ms
        .iter()
        .zip(&write_ms)
        .map(|(spill, write)| spill / write)
        .collect();
    let (spill, write) = (median(&spill_ms), median(&write_ms));
    let ratio = spill / write;
    let mb = bytes as f64 / 1e6;
    println!(
        "{}",
        json!({ "scenario": "spill_result_vs_fs_write", "mb": mb, "rounds": ROUNDS,
            "spill_ms_median": spill, "write_ms_median": write, "ratio": ratio,
            "paired_ratio_median": median(&paired), "store_save_ms_median": median(&save_ms),
            "spill_ms": spill_ms, "write_ms": write_ms, "store_save_ms": save_ms,
            "target_ratio": RATIO_TARGET })
    );
    println!(
        "spill policy on {mb:.0} MB: {spill:.1} ms (median of {ROUNDS}) · store save {:.1} ms · std::fs::write: {write:.1} ms · ratio {ratio:.2}× (median of per-round ratios {:.2}×; target ≤ {RATIO_TARGET}×) {}",
        median(&save_ms),
        median(&paired),
        if ratio <= RATIO_TARGET {
            "met"
        } else {
            "MISSED"
        }
    );
}

fn bash_rss(dir: &std::path::Path, bytes: u64) {
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["serve", "--framing", "ndjson"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(stdin, "{message}").unwrap();
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "host closed stdout"
            );
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id && reply.get("method").is_none() {
                return reply;
            }
        }
    };
    let config = json!({
        "builtins": { "bash": { "cwd": cwd.display().to_string() } },
        "spill": { "dir": dir.join("bash-spill").display().to_string() }
    });
    request(
        1,
        "initialize",
        json!({ "protocolVersion": "1", "config": config }),
    );
    // Warm the runtime's threads and the spill directory with a small spilled stream.
    let warm = request(
        2,
        "tools/execute",
        json!({ "callId": "w", "name": "bash", "arguments": { "command": "seq 1 100000" } }),
    );
    assert!(warm["result"]["value"]["stdoutSpill"].is_object(), "{warm}");
    std::thread::sleep(Duration::from_millis(200));
    let idle = rss_kib(pid, "VmRSS:");
    let (peak, done) = (
        Arc::new(AtomicU64::new(idle)),
        Arc::new(AtomicBool::new(false)),
    );
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(pid, "VmRSS:"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let command = format!("yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c {bytes}");
    let started = Instant::now();
    let response = request(
        3,
        "tools/execute",
        json!({ "callId": "big", "name": "bash", "arguments": { "command": command, "timeout": 600000 } }),
    );
    let elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let value = &response["result"]["value"];
    assert_eq!(value["stdoutSpill"]["bytes"], bytes, "{response}");
    let hwm = rss_kib(pid, "VmHWM:");
    drop(stdin);
    child.wait().unwrap();
    let (idle_mb, peak_mb, hwm_mb) = (mb(idle), mb(peak.load(Ordering::Relaxed)), mb(hwm));
    let above = peak_mb - idle_mb;
    println!(
        "{}",
        json!({ "scenario": "bash_stream_rss", "bytes": bytes, "idle_rss_mb": idle_mb,
            "peak_rss_mb": peak_mb, "vm_hwm_mb": hwm_mb, "above_idle_mb": above,
            "seconds": elapsed.as_secs_f64(), "target_mb": RSS_TARGET_MB })
    );
    println!(
        "bash streaming {:.2} GB: idle RSS {idle_mb:.1} MB, peak {peak_mb:.1} MB (VmHWM {hwm_mb:.1} MB), {above:.1} MB above idle (target < {RSS_TARGET_MB} MB) {} · {:.1} s, {:.0} MB/s",
        bytes as f64 / 1e9,
        if above < RSS_TARGET_MB {
            "met"
        } else {
            "MISSED"
        },
        elapsed.as_secs_f64(),
        bytes as f64 / 1e6 / elapsed.as_secs_f64()
    );
}

fn rss_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn mb(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}
