//! Exec sessions through the real binary: a command that outlives its call (`yieldMs`,
//! `background`), the blocking read that replaces polling (`bash_output` with `until`),
//! stdin, a terminal, kills, the pushed `bash/exited`, the scope and tether that own every
//! session, `exec.maxSessions`, and a flood that stays out of the host's memory.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::support::mcp::{Binary, descendants, still_alive};
use serde_json::{Value, json};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bounded waits for other processes (never a timing assumption).
const DEADLINE: Duration = Duration::from_secs(30);

/// A host with `bash` in a fresh workspace, and `extra` merged into its config.
fn host_with(extra: Value) -> (Binary, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let mut config =
        json!({ "builtins": { "bash": { "cwd": workspace.path().display().to_string() } } });
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    (Binary::serve(config), workspace)
}

/// `tools/execute` of `name` (in `agent`'s scope when given): the result.
fn call_in(host: &mut Binary, agent: Option<&str>, name: &str, arguments: Value) -> Value {
    let mut params = json!({ "callId": "c", "name": name, "arguments": arguments });
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    let answer = host.request("tools/execute", params);
    answer["result"].clone()
}

/// A successful call's value.
fn value(host: &mut Binary, name: &str, arguments: Value) -> Value {
    let result = call_in(host, None, name, arguments);
    assert_eq!(result["isError"], false, "{result}");
    result["value"].clone()
}

/// The text of a result.
fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Starts `command` as a session (answering at once) and returns its id.
fn background(host: &mut Binary, command: &str) -> String {
    let started = value(
        host,
        "bash",
        json!({ "command": command, "background": true }),
    );
    assert_eq!(started["running"], true, "{started}");
    started["sessionId"].as_str().unwrap().to_owned()
}

/// The last read of `session`, once it has ended (waiting at most 20 s).
fn end_of(host: &mut Binary, session: &str) -> Value {
    value(
        host,
        "bash_output",
        json!({ "sessionId": session, "untilExit": true, "waitMs": 20000 }),
    )
}

/// The host's descendants running `needle`, waiting (bounded) for at least one.
fn running(host: &Binary, needle: &str) -> Vec<(u32, String)> {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let found: Vec<_> = descendants(host.pid())
            .into_iter()
            .filter(|(_, command)| command.contains(needle) && !command.contains("bash -c"))
            .collect();
        if !found.is_empty() {
            return found;
        }
        assert!(Instant::now() < deadline, "{needle} never started");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits (bounded) until none of `pids` exists.
fn all_gone(pids: &[(u32, String)]) {
    let deadline = Instant::now() + DEADLINE;
    while !still_alive(pids).is_empty() {
        assert!(
            Instant::now() < deadline,
            "still running: {:?}",
            still_alive(pids)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `bash/exited` notification of `session` seen so far.
fn exited(host: &Binary, session: &str) -> Option<Value> {
    host.inbox
        .iter()
        .find(|m| m["method"] == "bash/exited" && m["params"]["sessionId"] == session)
        .map(|m| m["params"].clone())
}

/// The `bash/exited` of `session`, asking the host for something until it was sent.
fn pushed(host: &mut Binary, session: &str) -> Value {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(told) = exited(host, session) {
            return told;
        }
        assert!(Instant::now() < deadline, "no bash/exited for {session}");
        host.request("tools/metrics", json!({}));
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

#[test]
fn a_command_still_running_at_its_yield_becomes_a_session_and_a_wait_returns_at_its_line() {
    let (mut host, _workspace) = host_with(json!({}));
    let started = Instant::now();
    let result = call_in(
        &mut host,
        None,
        "bash",
        json!({ "command": "echo booting; sleep 1; echo ready $(date +%s%3N); sleep 60", "yieldMs": 200 }),
    );
    let session = result["value"]["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(result["value"]["running"], true, "{result}");
    assert_eq!(result["value"]["stdout"], "booting\n", "the output so far");
    assert!(text(&result).contains(&format!("Still running as session {session}")));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the call yielded"
    );
    // One blocking call: it returns at the line, long before its wait ends.
    let asked = Instant::now();
    let read = value(
        &mut host,
        "bash_output",
        json!({ "sessionId": session, "until": "^ready", "waitMs": 20000 }),
    );
    let answered = now_ms();
    let output = read["output"].as_str().unwrap();
    let printed: u128 = output.trim().split(' ').nth(1).unwrap().parse().unwrap();
    let latency = answered.saturating_sub(printed);
    eprintln!("the wait returned {latency} ms after the line was printed");
    assert!(
        output.starts_with("ready "),
        "only output since the last read: {read}"
    );
    assert_eq!(read["running"], true);
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    assert!(latency < 2000, "{latency} ms");
    // Nothing new: a read without a wait returns at once, empty.
    let again = value(&mut host, "bash_output", json!({ "sessionId": session }));
    assert_eq!(again["output"], "");
    let sleeper = running(&host, "sleep 60");
    let killed = value(&mut host, "bash_kill", json!({ "sessionId": session }));
    assert_eq!(
        (&killed["running"], &killed["signal"], &killed["reason"]),
        (&json!(false), &json!("SIGTERM"), &json!("killed"))
    );
    all_gone(&sleeper);
}

#[test]
fn a_command_that_ends_before_its_yield_answers_as_a_plain_call() {
    let (mut host, _workspace) = host_with(json!({}));
    let plain = value(
        &mut host,
        "bash",
        json!({ "command": "echo out; echo err >&2; exit 3" }),
    );
    let yielding = value(
        &mut host,
        "bash",
        json!({ "command": "echo out; echo err >&2; exit 3", "yieldMs": 20000 }),
    );
    assert_eq!(plain, yielding);
    assert_eq!(
        value(&mut host, "bash_sessions", json!({})),
        json!({ "sessions": [] }),
        "it never became a session"
    );
}

#[test]
fn stdin_round_trip_and_the_exit_is_pushed_with_its_code() {
    let (mut host, _workspace) = host_with(json!({}));
    let session = background(&mut host, "read line; echo got:$line; exit 7");
    let answer = value(
        &mut host,
        "bash_write",
        json!({ "sessionId": session, "input": "hello\n", "waitMs": 20000, "until": "got:" }),
    );
    assert_eq!(answer["output"], "got:hello\n", "{answer}");
    let end = end_of(&mut host, &session);
    assert_eq!(
        (&end["running"], &end["exitCode"]),
        (&json!(false), &json!(7))
    );
    // Sent before the wait that saw the end was answered.
    let pushed = exited(&host, &session).expect("bash/exited was sent");
    assert_eq!(pushed["exitCode"], 7, "{pushed}");
    assert_eq!(pushed["tail"], "got:hello\n");
    assert!(pushed["runtimeMs"].as_u64().is_some());
    // An ended session whose output was read is forgotten.
    let gone = call_in(
        &mut host,
        None,
        "bash_output",
        json!({ "sessionId": session }),
    );
    assert_eq!(gone["isError"], true, "{gone}");
    assert!(text(&gone).contains("no session"), "{gone}");
}

#[test]
fn a_terminal_is_a_tty_and_a_repl_is_driven_through_three_writes() {
    let (mut host, _workspace) = host_with(json!({}));
    let probe = "python3 -c 'import sys; print(sys.stdin.isatty(), sys.stdout.isatty())'";
    let on_tty = value(&mut host, "bash", json!({ "command": probe, "tty": true }));
    assert_eq!(on_tty["stdout"], "True True\n", "{on_tty}");
    let piped = value(&mut host, "bash", json!({ "command": probe }));
    assert_eq!(piped["stdout"], "False False\n", "{piped}");
    let colours = value(
        &mut host,
        "bash",
        json!({ "command": "printf '\\033[31mred\\033[0m\\n'", "tty": true }),
    );
    assert_eq!(colours["stdout"], "red\n", "escape sequences are removed");

    let session = value(
        &mut host,
        "bash",
        json!({ "command": "python3 -i -q", "tty": true, "background": true }),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The first prompt, then one prompt per line typed.
    value(
        &mut host,
        "bash_output",
        json!({ "sessionId": session, "until": ">>> $", "waitMs": 20000 }),
    );
    let mut last = Value::Null;
    for line in ["x = 6\n", "y = 7\n", "print(x * y)\n"] {
        last = value(
            &mut host,
            "bash_write",
            json!({ "sessionId": session, "input": line, "waitMs": 20000, "until": ">>> $" }),
        );
    }
    assert!(last["output"].as_str().unwrap().contains("42\n"), "{last}");
    // Ctrl-D on the terminal ends the REPL.
    value(
        &mut host,
        "bash_write",
        json!({ "sessionId": session, "input": "\u{4}" }),
    );
    let end = end_of(&mut host, &session);
    assert_eq!(end["exitCode"], 0, "{end}");
    // The file keeps the raw bytes (the terminal's own line endings).
    let file = end["outputFile"]["path"].as_str().unwrap();
    let raw = std::fs::read(file).unwrap();
    assert!(
        raw.windows(4).any(|w| w == b"42\r\n"),
        "{:?}",
        String::from_utf8_lossy(&raw)
    );
}

#[test]
fn ctrl_c_reaches_a_terminal_sessions_foreground_program() {
    let (mut host, _workspace) = host_with(json!({}));
    let session = value(
        &mut host,
        "bash",
        json!({ "command": "trap 'echo interrupted; exit 5' INT; echo armed; while true; do sleep 0.05; done", "tty": true, "yieldMs": 0 }),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    value(
        &mut host,
        "bash_output",
        json!({ "sessionId": session, "until": "armed", "waitMs": 20000 }),
    );
    let answer = value(
        &mut host,
        "bash_write",
        json!({ "sessionId": session, "input": "\u{3}", "waitMs": 20000, "until": "interrupted" }),
    );
    assert!(
        answer["output"].as_str().unwrap().contains("interrupted"),
        "{answer}"
    );
    let end = end_of(&mut host, &session);
    assert_eq!(end["exitCode"], 5, "{end}");
}

#[test]
fn closing_an_agent_scope_kills_its_sessions_and_hides_them_from_other_scopes() {
    let (mut host, _workspace) = host_with(json!({}));
    host.request("agents/open", json!({ "agent": "a" }));
    let started = call_in(
        &mut host,
        Some("a"),
        "bash",
        json!({ "command": "sleep 301", "background": true }),
    );
    let session = started["value"]["sessionId"].as_str().unwrap().to_owned();
    let sleeper = running(&host, "sleep 301");
    let elsewhere = call_in(
        &mut host,
        None,
        "bash_kill",
        json!({ "sessionId": session }),
    );
    assert_eq!(
        elsewhere["isError"], true,
        "another scope cannot touch it: {elsewhere}"
    );
    assert_eq!(
        value(&mut host, "bash_sessions", json!({})),
        json!({ "sessions": [] })
    );
    let listed = call_in(&mut host, Some("a"), "bash_sessions", json!({}));
    assert_eq!(
        listed["value"]["sessions"][0]["sessionId"],
        session.as_str()
    );
    let closed = host.request("agents/close", json!({ "agent": "a" }));
    assert!(closed.get("error").is_none(), "{closed}");
    all_gone(&sleeper);
}

#[test]
fn a_sigkilled_host_leaves_no_session_process() {
    let (mut host, _workspace) = host_with(json!({}));
    background(&mut host, "sleep 302 & sleep 303 & wait");
    let mut sleepers = running(&host, "sleep 302");
    sleepers.extend(running(&host, "sleep 303"));
    host.child.kill().unwrap();
    host.child.wait().unwrap();
    all_gone(&sleepers);
}

#[test]
fn past_exec_max_sessions_a_session_is_refused_with_the_setting_named() {
    let (mut host, _workspace) = host_with(json!({ "exec": { "maxSessions": 2 } }));
    let first = background(&mut host, "sleep 304");
    background(&mut host, "sleep 304");
    let refused = call_in(
        &mut host,
        None,
        "bash",
        json!({ "command": "sleep 304", "background": true }),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    let message = text(&refused);
    assert!(
        message.contains("2 sessions are already running") && message.contains("exec.maxSessions"),
        "{message}"
    );
    // A plain call is not a session and still runs; a freed place is taken again.
    assert_eq!(
        value(&mut host, "bash", json!({ "command": "echo plain" }))["stdout"],
        "plain\n"
    );
    value(
        &mut host,
        "bash_kill",
        json!({ "sessionId": first, "signal": "SIGKILL" }),
    );
    background(&mut host, "sleep 304");
}

#[test]
fn a_session_past_its_lifetime_is_killed_and_the_reason_is_told() {
    let (mut host, _workspace) = host_with(json!({ "exec": { "maxLifetimeMs": 300 } }));
    let session = background(&mut host, "sleep 305");
    let end = end_of(&mut host, &session);
    assert_eq!(
        (&end["running"], &end["reason"]),
        (&json!(false), &json!("lifetime")),
        "{end}"
    );
    assert_eq!(exited(&host, &session).unwrap()["signal"], "SIGKILL");
}

#[test]
fn a_session_printing_200_mb_keeps_the_host_small_and_its_file_whole() {
    let (mut host, _workspace) = host_with(json!({}));
    let before = resident_kib(host.pid());
    let session = background(
        &mut host,
        "yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c 200000000",
    );
    let mut peak = before;
    let end = loop {
        let read = value(
            &mut host,
            "bash_output",
            json!({ "sessionId": session, "untilExit": true, "waitMs": 200 }),
        );
        peak = peak.max(resident_kib(host.pid()));
        if read["running"] == false {
            break read;
        }
    };
    eprintln!("host RSS {before} KiB idle, {peak} KiB at most while 200 MB went by");
    assert!(peak < before + 64 * 1024, "{before} -> {peak} KiB");
    assert_eq!(end["exitCode"], 0, "{end}");
    let file = end["outputFile"]["path"].as_str().unwrap().to_owned();
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 200_000_000);
    assert_eq!(end["outputFile"]["bytes"], 200_000_000);
    // A host that ends cleanly takes its sessions' files with it.
    host.close_stdin();
    host.wait();
    assert!(
        !std::path::Path::new(&file).exists(),
        "{file} was left behind"
    );
}

/// Resident memory of `pid` (KiB).
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn bad_session_calls_get_clear_errors() {
    let (mut host, _workspace) = host_with(json!({}));
    let unknown = call_in(
        &mut host,
        None,
        "bash_output",
        json!({ "sessionId": "bash-999" }),
    );
    assert!(
        text(&unknown).contains("no session \"bash-999\""),
        "{unknown}"
    );
    let session = background(&mut host, "sleep 306");
    let pattern = call_in(
        &mut host,
        None,
        "bash_output",
        json!({ "sessionId": session, "until": "(" }),
    );
    assert!(
        text(&pattern).contains("until is not a valid regular expression"),
        "{pattern}"
    );
    let wait = call_in(
        &mut host,
        None,
        "bash_output",
        json!({ "sessionId": session, "waitMs": 600001 }),
    );
    assert!(
        text(&wait).contains("waitMs must be between 0 and 600000"),
        "{wait}"
    );
    let signal = call_in(
        &mut host,
        None,
        "bash_kill",
        json!({ "sessionId": session, "signal": "SIGNOPE" }),
    );
    assert!(text(&signal).contains("unknown signal"), "{signal}");
    let yield_ms = call_in(
        &mut host,
        None,
        "bash",
        json!({ "command": "true", "yieldMs": -1 }),
    );
    assert!(
        text(&yield_ms).contains("yieldMs must be between"),
        "{yield_ms}"
    );
}

/// `run_code` with `program` (TypeScript) in a host presenting Code Mode: the result.
fn run_code(host: &mut Binary, program: &str) -> Value {
    call_in(
        host,
        None,
        "run_code",
        json!({ "code": program, "description": "sessions" }),
    )
}

/// A host with `bash` (default sandbox) presented as Code Mode.
fn code_host() -> (Binary, tempfile::TempDir) {
    host_with(json!({ "tools": { "mode": "code" } }))
}

#[test]
fn a_program_serves_a_file_from_a_session_fetches_it_with_a_second_call_and_kills_it() {
    let (mut host, workspace) = code_host();
    std::fs::write(
        workspace.path().join("hello.txt"),
        "served from a session\n",
    )
    .unwrap();
    // A free port on the scope's own loopback (the sandbox's network is off: the commands
    // of this scope share one namespace, loopback up, nothing else).
    let program = r#"
const s = await tools.bash({ command: "exec python3 -u -m http.server 0 --bind 127.0.0.1", background: true });
const up = await tools.bash_output({ sessionId: s.sessionId, until: "Serving HTTP on .* port \\d+", waitMs: 20000 });
const port = /port (\d+)/.exec(up.output)[1];
const fetched = await tools.bash({ command: `python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${port}/hello.txt').read().decode(), end='')"` });
const killed = await tools.bash_kill({ sessionId: s.sessionId });
return { body: fetched.stdout, running: killed.running, sandbox: fetched.sandbox ?? null };
"#;
    let result = run_code(&mut host, program);
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["value"]["result"],
        json!({ "body": "served from a session\n", "running": false, "sandbox": null }),
        "{result}"
    );
}

#[test]
fn a_programs_sessions_end_with_its_run_unless_detached() {
    let (mut host, _workspace) = code_host();
    let result = run_code(
        &mut host,
        r#"
const attached = await tools.bash({ command: "echo started; exec sleep 307", background: true });
await tools.bash_output({ sessionId: attached.sessionId, until: "started", waitMs: 20000 });
const kept = await tools.bash({ command: "sleep 308", background: true, detach: true });
return [attached.sessionId, kept.sessionId];
"#,
    );
    assert_eq!(result["isError"], false, "{result}");
    let ids = &result["value"]["result"];
    let attached = ids[0].as_str().unwrap();
    let told = pushed(&mut host, attached);
    assert_eq!(told["reason"], "run ended", "{told}");
    assert!(
        !descendants(host.pid())
            .iter()
            .any(|(_, c)| c.contains("sleep 307")),
        "the run's session was killed"
    );
    let detached = running(&host, "sleep 308");
    assert_eq!(
        still_alive(&detached).len(),
        1,
        "a detached session outlives the run"
    );
    let listed = run_code(&mut host, "return await tools.bash_sessions({})");
    assert!(text(&listed).contains("sleep 308"), "{listed}");
    assert_eq!(
        ids[1], listed["value"]["result"]["sessions"][1]["sessionId"],
        "{listed}"
    );
}

#[test]
fn a_server_in_one_scopes_session_answers_that_scope_and_no_other() {
    let (mut host, _workspace) = host_with(json!({}));
    host.request("agents/open", json!({ "agent": "other" }));
    let session = background(
        &mut host,
        "exec python3 -u -m http.server 0 --bind 127.0.0.1",
    );
    let up = value(
        &mut host,
        "bash_output",
        json!({ "sessionId": session, "until": "port \\d+", "waitMs": 20000 }),
    );
    let output = up["output"].as_str().unwrap();
    let port: u16 = output
        .split("port ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let fetch = format!(
        "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/').status)\""
    );
    let same = value(&mut host, "bash", json!({ "command": fetch }));
    assert_eq!(same["stdout"], "200\n", "{same}");
    let other = call_in(
        &mut host,
        Some("other"),
        "bash",
        json!({ "command": fetch }),
    );
    assert_ne!(
        other["value"]["exitCode"], 0,
        "another scope reached it: {other}"
    );
    // Nor does the host's own loopback have it.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn over_mcp_a_sessions_end_is_sent_as_a_log_message() {
    let workspace = tempfile::tempdir().unwrap();
    let config = crate::support::mcp::config_file(
        "sessions-mcp",
        &json!({ "builtins": { "bash": { "cwd": workspace.path().display().to_string() } } }),
    );
    let mut host = Binary::spawn(&["mcp", "--config", config.to_str().unwrap()]);
    let init = host.request(
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "test", "version": "1" } }),
    );
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    host.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let call = |host: &mut Binary, name: &str, arguments: Value| {
        let answer = host.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        );
        answer["result"]["structuredContent"].clone()
    };
    let started = call(
        &mut host,
        "bash",
        json!({ "command": "sleep 0.2; echo bye; exit 4", "yieldMs": 0 }),
    );
    let session = started["sessionId"].as_str().unwrap().to_owned();
    let end = call(
        &mut host,
        "bash_output",
        json!({ "sessionId": session, "untilExit": true, "waitMs": 20000 }),
    );
    assert_eq!(end["exitCode"], 4, "{end}");
    let deadline = Instant::now() + DEADLINE;
    let told = loop {
        let found = host.inbox.iter().find(|m| {
            m["method"] == "notifications/message" && m["params"]["logger"] == "bash/exited"
        });
        if let Some(found) = found {
            break found["params"]["data"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "no log message: {:?}",
            host.inbox
        );
        host.request("ping", json!({}));
    };
    assert_eq!(
        (&told["sessionId"], &told["exitCode"]),
        (&json!(session), &json!(4)),
        "{told}"
    );
}
