//! Fail closed: a kernel without Landlock (simulated through the capability probe's
//! `DSH_TOOLS_SANDBOX_SIMULATE`, which can only hide features) makes each sandboxed family
//! refuse with a message naming what is missing and the opt-out, while the host keeps
//! serving and `mode = "off"` still runs; `dsh-tools sandbox check` says the same.

use crate::support::sandbox::{Sandboxed, stdout};
use serde_json::json;
use std::process::Command;

const NO_LANDLOCK: (&str, &str) = ("DSH_TOOLS_SANDBOX_SIMULATE", "no-landlock");

const BASH_REFUSES: &str = "bash is unavailable: the sandbox cannot be applied: this kernel \
     lacks Landlock ABI 3 or later (this kernel has 0); set builtins.bash.sandbox.mode = \"off\" \
     to run it unsandboxed";

const PYTHON_REFUSES: &str = "Python Code Mode is unavailable: the sandbox cannot be applied: \
     this kernel lacks Landlock ABI 3 or later (this kernel has 0); set codeRuntime.sandbox.mode \
     = \"off\" to run it unsandboxed";

#[test]
fn an_unsupported_kernel_makes_each_family_refuse_and_the_host_keeps_serving() {
    let mut sandboxed = Sandboxed::start(json!({}), &[NO_LANDLOCK], false);
    let report = sandboxed.report().clone();
    assert_eq!(report["kernel"]["landlockAbi"], 0);
    assert_eq!(report["bash"]["unavailable"], BASH_REFUSES);
    assert_eq!(report["python"]["unavailable"], PYTHON_REFUSES);

    let escape = sandboxed.outside("never.txt");
    let bash = sandboxed.bash(&format!("echo x > {}", escape.display()));
    assert_eq!(bash["isError"], true, "{bash}");
    assert_eq!(bash["error"]["message"], BASH_REFUSES);
    assert!(!escape.exists());
    let python = sandboxed.python("return 1");
    assert_eq!(python["isError"], true, "{python}");
    let message = python["error"]["message"].as_str().unwrap();
    assert!(message.ends_with(PYTHON_REFUSES), "{message}");

    // Still serving: the registry answers and a later call fails the same way.
    let schemas = sandboxed.host.request("tools/schemas", json!({}));
    assert!(schemas["result"].is_array(), "{schemas}");
    assert_eq!(sandboxed.bash("true")["error"]["message"], BASH_REFUSES);
}

#[test]
fn mode_off_opts_out_on_such_a_kernel() {
    let off = json!({ "sandbox": { "mode": "off" } });
    let mut sandboxed = Sandboxed::start(off, &[NO_LANDLOCK], false);
    assert_eq!(sandboxed.report()["bash"].get("unavailable"), None);
    assert_eq!(stdout(&sandboxed.bash("echo fine")), "fine\n");
    let python = sandboxed.python("return 'fine'");
    assert_eq!(python["value"]["result"], "fine", "{python}");
}

#[test]
fn sandbox_check_reports_the_kernel_and_each_family() {
    let check = |env: &[(&str, &str)]| {
        let output = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["sandbox", "check", "--builtins", "bash"])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
        )
    };
    let (code, text) = check(&[]);
    assert_eq!(code, Some(0), "{text}");
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    assert_eq!(
        text.lines().nth(1),
        Some(
            format!(
                "bash: workspace-write (private view + Landlock), network off (user + network namespace), \
                 writable: {}, its scratch dir",
                cwd.display()
            )
            .as_str()
        ),
        "{text}"
    );
    let (code, text) = check(&[NO_LANDLOCK]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.starts_with("kernel: Landlock ABI 0,")
            && text.contains(&format!("bash: REFUSES TO START: {BASH_REFUSES}")),
        "{text}"
    );
}
