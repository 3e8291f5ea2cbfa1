//! The host leaves no child process behind: after EOF on stdin (also with a call in
//! flight), after `shutdown` + `exit`, and after SIGTERM, for `serve` and for `mcp`.
//! Among the servers is a stubborn one (ignores SIGTERM and stdin EOF) with a grandchild
//! in its process group: every descendant must be gone once the host has exited.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as mcp_common;

use mcp_common::{
    Binary, all_running, config_file, descendants, everything, fixture, still_alive, time,
};
use serde_json::{Value, json};

fn servers() -> Value {
    json!({
        "time": time(),
        "everything": everything(),
        "fixture": fixture(&[]),
        "stubborn": fixture(&["--stubborn", "--grandchild"])
    })
}

/// How the client ends the session.
#[derive(Clone, Copy, Debug)]
enum Ending {
    /// Closes stdin.
    Eof,
    /// Closes stdin while a call is in flight.
    EofDuringCall,
    /// `shutdown`, then `exit`.
    Exit,
    /// SIGTERM.
    Sigterm,
    /// A signal whose default action would kill the host (a closed terminal sends SIGHUP).
    Signal(nix::sys::signal::Signal),
}

/// What is left of `children` once the host has exited. The host has SIGKILLed every
/// process group and reaped its own children before exiting, but a killed grandchild
/// disappears only once the kernel has run its exit and init has reaped it, which on a
/// loaded machine takes a moment: allow a bounded grace period (an orphan the host never
/// killed stays and fails the test).
fn gone(children: &[(u32, String)]) -> Vec<(u32, String)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = still_alive(children);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn sigterm(host: &Binary) {
    signal(host, nix::sys::signal::Signal::SIGTERM);
}

fn signal(host: &Binary, signal: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(host.pid() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
}

fn check_serve(ending: Ending) {
    let mut host = Binary::serve(json!({ "mcpServers": servers() }));
    host.wait_for_status(all_running);
    let children = descendants(host.pid());
    assert!(
        children
            .iter()
            .any(|(_, command)| command.contains("sleep 3600")),
        "{ending:?}: {children:?}"
    );
    match ending {
        Ending::Eof => host.close_stdin(),
        Ending::EofDuringCall => {
            host.send(
                &json!({ "jsonrpc": "2.0", "id": "slow", "method": "tools/execute",
                "params": { "callId": "c", "name": "mcp__fixture__sleep", "arguments": {} } }),
            );
            let held = host.request(
                "tools/execute",
                json!({ "callId": "h", "name": "mcp__fixture__sleeping", "arguments": { "count": 1 } }),
            );
            assert_eq!(held["result"]["isError"], false, "{held}");
            host.close_stdin();
        }
        Ending::Exit => {
            host.request("shutdown", json!(null));
            host.send(&json!({ "jsonrpc": "2.0", "method": "exit" }));
        }
        Ending::Sigterm => sigterm(&host),
        Ending::Signal(kind) => signal(&host, kind),
    }
    assert_eq!(host.wait(), Some(0), "{ending:?}");
    assert_eq!(gone(&children), [], "{ending:?}");
}

#[test]
fn serve_leaves_no_child_after_eof() {
    check_serve(Ending::Eof);
}

#[test]
fn serve_leaves_no_child_after_eof_during_a_call() {
    check_serve(Ending::EofDuringCall);
}

#[test]
fn serve_leaves_no_child_after_shutdown_and_exit() {
    check_serve(Ending::Exit);
}

#[test]
fn serve_leaves_no_child_after_sigterm() {
    check_serve(Ending::Sigterm);
}

#[test]
fn serve_leaves_no_child_after_sighup_sigquit_or_sigusr1() {
    use nix::sys::signal::Signal;
    for kind in [Signal::SIGHUP, Signal::SIGQUIT, Signal::SIGUSR1] {
        check_serve(Ending::Signal(kind));
    }
}

/// `dsh-tools mcp`: the MCP client speaks first; the host has started its servers by then.
fn check_mcp(ending: Ending) {
    let config = config_file("lifecycle-mcp", &json!({ "mcpServers": servers() }));
    let mut host = Binary::spawn(&["mcp", "--config", config.to_str().unwrap()]);
    let initialized = host.request(
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    assert_eq!(
        initialized["result"]["serverInfo"]["name"], "dsh-tools",
        "{initialized}"
    );
    host.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let listed = host.request("tools/list", json!({}));
    assert!(
        listed["result"]["tools"].as_array().unwrap().len() > 10,
        "{listed}"
    );
    let children = descendants(host.pid());
    assert!(
        children
            .iter()
            .any(|(_, command)| command.contains("sleep 3600")),
        "{ending:?}: {children:?}"
    );
    match ending {
        Ending::Eof | Ending::Exit | Ending::EofDuringCall => host.close_stdin(),
        Ending::Sigterm => sigterm(&host),
        Ending::Signal(kind) => signal(&host, kind),
    }
    assert_eq!(host.wait(), Some(0), "{ending:?}");
    assert_eq!(gone(&children), [], "{ending:?}");
}

#[test]
fn mcp_leaves_no_child_after_eof() {
    check_mcp(Ending::Eof);
}

#[test]
fn mcp_leaves_no_child_after_sigterm() {
    check_mcp(Ending::Sigterm);
}
