//! The bash tool through `ToolRuntime::execute`: output, exit status, the scrubbed
//! environment, the output cap, and process-group kills on timeout, cancellation, the
//! pipeline's own deadline, and normal exit (nothing it started outlives the call).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::builtins as builtins_support;

use builtins_support::{Workspace, failure, value};
use dsh_tools::ToolExecutionInput;
use dsh_tools::tool::{HarnessCode, Signal};
use dsh_tools_protocol::{BashConfig, BuiltinsConfig, HostConfig};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Bounded wait for conditions that depend on other processes (never a timing assumption).
const DEADLINE: Duration = Duration::from_secs(10);

/// Whether `pid` has exited (gone, or a zombie waiting for a reaper that is not us).
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

async fn assert_dies(pid: i32) {
    let start = Instant::now();
    while !is_dead(pid) {
        assert!(start.elapsed() < DEADLINE, "process {pid} is still running");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The host-side pid of the live `sleep <duration>`, waiting (bounded) for it to start. The
/// command's own `$!` is its pid inside the tether's PID namespace, which means nothing here,
/// so each test's sleeper has a duration of its own and is found by its command line.
async fn sleeper(duration: &str) -> i32 {
    let wanted = format!("sleep\0{duration}\0");
    let start = Instant::now();
    loop {
        let found = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .find_map(|entry| {
                let pid: i32 = entry.file_name().to_string_lossy().parse().ok()?;
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                (cmdline == wanted.as_bytes() && !is_dead(pid)).then_some(pid)
            });
        if let Some(pid) = found {
            return pid;
        }
        assert!(start.elapsed() < DEADLINE, "sleep {duration} never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A grandchild in a subshell sleeps for `duration` seconds, and everything waits.
fn nested_sleeper(duration: &str) -> String {
    format!("(sleep {duration} & wait) & wait")
}

#[tokio::test]
async fn runs_in_cwd_and_captures_both_streams_and_the_exit_code() {
    let workspace = Workspace::new();
    let root = workspace.root_text();
    let result = workspace
        .call(
            "bash",
            json!({ "command": "echo hi; echo err >&2; pwd; exit 3", "description": "demo" }),
        )
        .await;
    assert_eq!(
        value(&result),
        json!({ "stdout": format!("hi\n{root}\n"), "stderr": "err\n", "exitCode": 3, "truncated": false })
    );
    assert_eq!(result.text(), format!("hi\n{root}\nerr\nExit code 3"));
    assert_eq!(
        result.meta,
        Some(json!({ "output": format!("hi\n{root}\nerr\n"), "exitCode": 3 }))
    );
}

#[tokio::test]
async fn reports_the_signal_that_killed_the_shell() {
    let workspace = Workspace::new();
    let result = workspace
        .call("bash", json!({ "command": "kill -TERM $$" }))
        .await;
    assert_eq!(
        value(&result),
        json!({ "stdout": "", "stderr": "", "signal": "SIGTERM", "truncated": false })
    );
    assert_eq!(result.text(), "Killed by SIGTERM");
    assert_eq!(
        result.meta,
        Some(json!({ "output": "", "signal": "SIGTERM" }))
    );
}

#[tokio::test]
async fn the_environment_is_scrubbed_to_an_allowlist() {
    let workspace = Workspace::new();
    let result = workspace
        .call("bash", json!({ "command": "env | cut -d= -f1 | sort" }))
        .await;
    // `TMPDIR` is always set: a sandboxed command's is its own scratch dir.
    let mut expected: Vec<&str> = [
        "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "TZ", "USER",
    ]
    .into_iter()
    .filter(|name| std::env::var_os(name).is_some())
    .chain(["PATH", "PWD", "SHLVL", "TERM", "TMPDIR", "_"])
    .collect();
    expected.sort_unstable();
    let mut listed = expected.join("\n");
    listed.push('\n');
    assert_eq!(value(&result)["stdout"], json!(listed));
}

#[tokio::test]
async fn output_keeps_head_and_tail_within_the_cap_with_spilling_off() {
    let mut host = HostConfig::default();
    host.spill.threshold_bytes = 0;
    let workspace = Workspace::configured(host, |root| BuiltinsConfig {
        fs: None,
        bash: Some(BashConfig {
            cwd: root.to_owned(),
            allow: true,
            sandbox: None,
            limits: Default::default(),
        }),
        web: None,
    });
    let result = workspace
        .call(
            "bash",
            json!({ "command": "head -c 100000 /dev/zero | tr '\\0' a; echo done >&2" }),
        )
        .await;
    let half = "a".repeat(15_000);
    assert_eq!(
        value(&result),
        json!({
            "stdout": format!("{half}\n[... 70000 bytes omitted ...]\n{half}"),
            "stderr": "done\n",
            "exitCode": 0,
            "truncated": true
        })
    );
}

/// Starts a `bash` call with `arguments` (and `token` as its signal) without waiting for it.
fn started(
    workspace: &Workspace,
    arguments: serde_json::Value,
    token: CancellationToken,
) -> tokio::task::JoinHandle<dsh_tools::ToolExecutionResult> {
    let input =
        ToolExecutionInput::new("call-1", "bash", arguments).with_signal(Signal::new(token));
    let runtime = workspace.runtime.clone();
    tokio::spawn(async move { runtime.execute(input).await })
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let workspace = Workspace::new();
    let begun = Instant::now();
    let arguments = json!({ "command": nested_sleeper("1000.1"), "timeout": 1000 });
    let call = started(&workspace, arguments, CancellationToken::new());
    let pid = sleeper("1000.1").await;
    let result = call.await.unwrap();
    assert_eq!(
        failure(&result),
        "command timed out after 1000 ms; it and every process it started were killed"
    );
    assert!(begun.elapsed() < DEADLINE);
    assert_dies(pid).await;
}

#[tokio::test]
async fn cancellation_kills_the_whole_process_group() {
    let workspace = Workspace::new();
    let token = CancellationToken::new();
    let call = started(
        &workspace,
        json!({ "command": nested_sleeper("1000.2") }),
        token.clone(),
    );
    let pid = sleeper("1000.2").await;
    assert!(!is_dead(pid));
    token.cancel();
    let result = call.await.unwrap();
    assert_eq!(failure(&result), "tool call aborted");
    assert_eq!(result.code(), Some(HarnessCode::Aborted));
    assert_dies(pid).await;
}

#[tokio::test]
async fn the_pipeline_deadline_kills_the_whole_process_group() {
    let mut host = HostConfig::default();
    host.pipeline.timeout.default_ms = Some(1000);
    let workspace = Workspace::configured(host, |root| BuiltinsConfig {
        fs: None,
        bash: Some(BashConfig {
            cwd: root.to_owned(),
            allow: true,
            sandbox: None,
            limits: Default::default(),
        }),
        web: None,
    });
    let arguments = json!({ "command": nested_sleeper("1000.3") });
    let call = started(&workspace, arguments, CancellationToken::new());
    let pid = sleeper("1000.3").await;
    let result = call.await.unwrap();
    assert_eq!(failure(&result), "tool \"bash\" timed out after 1000 ms");
    assert_eq!(result.code(), Some(HarnessCode::ToolTimeout));
    assert_dies(pid).await;
}

/// The command starts a background job, then finishes once the test has seen the job (it
/// waits for a file the test creates).
#[tokio::test]
async fn background_jobs_do_not_outlive_a_finished_command() {
    let workspace = Workspace::new();
    let command = "sleep 1000.4 & echo started; while [ ! -e go ]; do sleep 0.01; done";
    let call = started(
        &workspace,
        json!({ "command": command }),
        CancellationToken::new(),
    );
    let pid = sleeper("1000.4").await;
    std::fs::write(workspace.root.join("go"), "").unwrap();
    let result = call.await.unwrap();
    assert_eq!(
        value(&result),
        json!({ "stdout": "started\n", "stderr": "", "exitCode": 0, "truncated": false })
    );
    assert_dies(pid).await;
}

#[tokio::test]
async fn refuses_out_of_range_timeouts_and_stays_off_when_not_allowed() {
    let workspace = Workspace::new();
    for timeout in [0, -5, 600_001] {
        let result = workspace
            .call("bash", json!({ "command": "true", "timeout": timeout }))
            .await;
        assert_eq!(failure(&result), "timeout must be between 1 and 600000 ms");
    }
    let denied = Workspace::configured(HostConfig::default(), |root| BuiltinsConfig {
        fs: None,
        bash: Some(BashConfig {
            cwd: root.to_owned(),
            allow: false,
            sandbox: None,
            limits: Default::default(),
        }),
        web: None,
    });
    let result = denied.call("bash", json!({ "command": "true" })).await;
    assert_eq!(failure(&result), "unknown tool \"bash\"");
}
