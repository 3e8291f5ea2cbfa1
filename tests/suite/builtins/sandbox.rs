//! `bash` in the OS sandbox, through the real binary. Each test makes the command attempt
//! the forbidden thing and checks it did not happen (the tests run as root here, so only
//! the sandbox can stop a write): writes outside the workspace, writes in `read-only`, a
//! connect to the test's own loopback listener, a `setsid` grandchild, `NoNewPrivs`,
//! escalation through `client/approve`, and `mode = "off"` behaving as before.

use crate::support::sandbox::{Listener, Sandboxed, stdout};
use serde_json::{Value, json};

/// The escalation reason the approver reads (and the model, when nobody can approve).
const UNSANDBOXED: &str = "bash was called with dangerouslyDisableSandbox: true: the command \
     will run unsandboxed, able to write anywhere the host user can and to reach the network";

/// Connects to 127.0.0.1:`port` with bash's `/dev/tcp`, printing `connected` on success.
fn connect(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[test]
fn a_write_outside_the_workspace_fails_while_one_inside_succeeds() {
    let mut sandboxed = Sandboxed::with(json!({}));
    let escape = sandboxed.outside("escape.txt");
    let result = sandboxed.bash(&format!(
        "echo in > inside.txt; echo out > {}",
        escape.display()
    ));
    let value = &result["value"];
    assert_eq!(value["exitCode"], 1, "{result}");
    assert!(!escape.exists(), "the write outside the workspace happened");
    assert_eq!(
        std::fs::read_to_string(sandboxed.inside("inside.txt")).unwrap(),
        "in\n"
    );
    // The private view's read-only mount refuses it before Landlock does.
    assert!(
        value["stderr"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{result}"
    );
    // One line says the sandbox refused it and how to ask for escalation.
    let line = value["sandbox"].as_str().unwrap();
    assert!(
        line.starts_with("The sandbox blocked this command: bash may write only under ")
            && line.contains("dangerouslyDisableSandbox: true"),
        "{line}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with(&format!("Exit code 1\n{line}")), "{text}");
    // A failure the sandbox did not cause gets no such line.
    let plain = sandboxed.bash("exit 3");
    assert_eq!(plain["value"].get("sandbox"), None, "{plain}");
    // The scratch dir ($TMPDIR) is writable.
    let scratch = sandboxed.bash("echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"");
    assert_eq!(stdout(&scratch), "t\n");
}

#[test]
fn read_only_blocks_writes_in_the_workspace_too() {
    let mut sandboxed = Sandboxed::with(json!({ "mode": "read-only" }));
    let result = sandboxed.bash("echo x > inside.txt");
    assert_eq!(result["value"]["exitCode"], 1, "{result}");
    assert!(!sandboxed.inside("inside.txt").exists());
    assert!(result["value"]["sandbox"].is_string(), "{result}");
    let scratch = sandboxed
        .bash("echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && cat /etc/hostname >/dev/null");
    assert_eq!(stdout(&scratch), "t\n");
    let bash = &sandboxed.report()["bash"];
    assert_eq!(bash["mode"], "read-only");
    assert_eq!(bash["writableRoots"], json!([]));
}

#[test]
fn a_loopback_listener_of_the_host_is_unreachable_without_network_and_reachable_with_it() {
    let listener = Listener::open();
    let mut closed = Sandboxed::with(json!({}));
    assert_eq!(closed.report()["bash"]["networkIsolation"], "namespace");
    let refused = closed.bash(&connect(listener.port()));
    assert_ne!(refused["value"]["exitCode"], 0, "{refused}");
    assert!(
        !listener.was_reached(),
        "the sandboxed command reached the host"
    );
    let line = refused["value"]["sandbox"].as_str().unwrap_or_default();
    assert!(line.contains("no network access"), "{refused}");

    let mut open = Sandboxed::with(json!({ "network": true }));
    assert_eq!(open.report()["bash"]["networkIsolation"], "none");
    assert_eq!(stdout(&open.bash(&connect(listener.port()))), "connected\n");
    assert!(listener.was_reached());
}

#[test]
fn a_setsid_grandchild_is_still_confined() {
    let listener = Listener::open();
    let mut sandboxed = Sandboxed::with(json!({}));
    let escape = sandboxed.outside("grandchild.txt");
    let script = format!(
        "echo out > {escape} 2>/dev/null; echo write=$?; ({connect}) 2>/dev/null; echo connect=$?; \
         grep NoNewPrivs /proc/self/status",
        escape = escape.display(),
        connect = connect(listener.port())
    );
    let command = format!("setsid -w bash -c '{script}'");
    let result = sandboxed.bash(&command);
    assert_eq!(
        stdout(&result),
        "write=1\nconnect=1\nNoNewPrivs:\t1\n",
        "{result}"
    );
    assert!(!escape.exists());
    assert!(!listener.was_reached());
}

#[test]
fn the_child_runs_with_no_new_privs() {
    let mut sandboxed = Sandboxed::with(json!({}));
    let result = sandboxed.bash("grep NoNewPrivs /proc/self/status");
    assert_eq!(stdout(&result), "NoNewPrivs:\t1\n");
}

#[test]
fn dangerously_disable_sandbox_goes_through_client_approve_and_is_denied_without_an_approver() {
    // An allow rule for bash does not skip the question.
    let config = json!({ "permissions": { "allow": ["Bash"] } });
    let mut approving = Sandboxed::start(config.clone(), &[], true);
    let escape = approving.outside("approved.txt");
    let arguments = json!({
        "command": format!("echo out > {}", escape.display()),
        "dangerouslyDisableSandbox": true
    });
    let mut asked: Vec<Value> = Vec::new();
    let response = approving.host.request_answering(
        "tools/execute",
        json!({ "callId": "c", "name": "bash", "arguments": arguments }),
        |request| {
            asked.push(request.clone());
            json!({ "outcome": "allowed-once" })
        },
    );
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "client/approve");
    assert_eq!(asked[0]["params"]["reason"], UNSANDBOXED);
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert_eq!(std::fs::read_to_string(&escape).unwrap(), "out\n");

    // An ask rule for bash asks once, and the approver still reads the escalation reason.
    let asking = json!({ "permissions": { "ask": ["Bash"] } });
    let mut rule = Sandboxed::start(asking, &[], true);
    let mut reasons = Vec::new();
    let response = rule.host.request_answering(
        "tools/execute",
        json!({ "callId": "c", "name": "bash",
                "arguments": { "command": "true", "dangerouslyDisableSandbox": true } }),
        |request| {
            reasons.push(request["params"]["reason"].clone());
            json!({ "outcome": "rejected" })
        },
    );
    assert_eq!(reasons, vec![json!(UNSANDBOXED)]);
    assert_eq!(
        response["result"]["error"]["message"],
        "the user rejected tool \"bash\""
    );

    let mut unattended = Sandboxed::start(config, &[], false);
    let escape = unattended.outside("denied.txt");
    let result = unattended.call(
        "bash",
        json!({ "command": format!("echo out > {}", escape.display()), "dangerouslyDisableSandbox": true }),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["error"]["message"], UNSANDBOXED);
    assert!(!escape.exists());
}

#[test]
fn mode_off_behaves_as_before() {
    let listener = Listener::open();
    let mut sandboxed = Sandboxed::start(
        json!({ "builtins": { "bash": { "sandbox": { "mode": "off" } } } }),
        &[],
        false,
    );
    let escape = sandboxed.outside("free.txt");
    let result = sandboxed.bash(&format!(
        "echo out > {}; {}; grep NoNewPrivs /proc/self/status",
        escape.display(),
        connect(listener.port())
    ));
    assert_eq!(stdout(&result), "connected\nNoNewPrivs:\t0\n", "{result}");
    assert_eq!(std::fs::read_to_string(&escape).unwrap(), "out\n");
    assert!(listener.was_reached());
    let bash = &sandboxed.report()["bash"];
    assert_eq!(bash["mode"], "off");
    assert_eq!(bash["filesystem"], "none");
}

/// The host's /proc entries are out of a command's reach, sandboxed or not (the tests run
/// as root): the command scans `/proc` for every process running the host's binary and
/// tries to read its environment and to write a forged message to its stdout, and tries the
/// host's real pid too (the pattern is written so the command's own line does not match
/// it). It sees only its own PID namespace, whose init (a fork of the host)
/// is non-dumpable, holds no descriptor but its status pipe, and the command has no
/// `CAP_SYS_PTRACE` to override either.
#[test]
fn the_hosts_environment_and_stdout_are_out_of_reach_with_and_without_the_sandbox() {
    for sandbox in [json!({}), json!({ "mode": "off" })] {
        let mut sandboxed = Sandboxed::start(
            json!({ "sandbox": sandbox }),
            &[("DSH_TEST_HOST_SECRET", "hunter2")],
            false,
        );
        let host = sandboxed.host.pid();
        let result = sandboxed.bash(&format!(
            "for p in /proc/[0-9]* /proc/{host}; do \
               [ \"$p\" = /proc/$$ ] && continue; \
               tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q 'dsh-tool[s]' || continue; \
               echo found; \
               grep -a hunter2 $p/environ > /dev/null 2>&1 && echo environ-read; \
               printf '{{\"jsonrpc\":\"2.0\",\"method\":\"forged\"}}\\n' 2>/dev/null > $p/fd/1 \
                 && echo fd-written; \
             done; \
             grep -a hunter2 /proc/{host}/environ > /dev/null 2>&1 && echo host-environ-read; \
             echo scanned"
        ));
        let out = stdout(&result);
        assert!(
            out.contains("found") && out.ends_with("scanned\n"),
            "{sandbox}: {result}"
        );
        for leak in ["environ-read", "fd-written", "host-environ-read"] {
            assert!(!out.contains(leak), "{sandbox}: {leak}: {result}");
        }
        // The forged line never reached the client: the next answer is the next response.
        let after = sandboxed.bash("echo still");
        assert_eq!(stdout(&after), "still\n", "{sandbox}");
    }
}
