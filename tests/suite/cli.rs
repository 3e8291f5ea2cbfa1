//! The binary's local commands: `dsh-tools run FILE.ts` (one Code Mode program, its output
//! and each dispatch with timings) and `dsh-tools sdk` (the generated SDK).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code as code_support;

use code_support::{Framing, Host, sdk_of};
use serde_json::json;
use std::path::PathBuf;
use std::process::{Command, Output};

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("dsh-tools-cli-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dsh_tools(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run dsh-tools")
}

/// Splits `run`'s stdout into the dispatch lines before the header, the header's status,
/// and the content after it; checks that the header reads `── run_code <status> in <ms> ms`.
fn run_output(output: &Output) -> (Vec<String>, String, String) {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let (before, rest) = stdout
        .split_once("── run_code ")
        .unwrap_or_else(|| panic!("no header in {stdout:?}"));
    let (header, content) = rest.split_once('\n').unwrap();
    let (status, duration) = header.split_once(" in ").unwrap();
    let ms = duration.strip_suffix(" ms").unwrap();
    assert!(ms.parse::<f64>().unwrap() >= 0.0, "{header}");
    let dispatches = before.lines().map(timing_masked).collect();
    (dispatches, status.to_string(), content.to_string())
}

/// A dispatch line with its `(<ms> ms)` replaced by `(… ms)`.
fn timing_masked(line: &str) -> String {
    let (head, timing) = line.rsplit_once(" (").unwrap();
    let ms = timing.strip_suffix(" ms)").unwrap();
    assert!(ms.parse::<f64>().unwrap() >= 0.0, "{line}");
    format!("{head} (… ms)")
}

#[test]
fn run_prints_the_model_facing_content_and_exits_by_outcome() {
    let scratch = Scratch::new("run");
    let cases = [
        (
            "ok.ts",
            "interface Row { id: number }\nconst rows: Row[] = [{ id: 1 }, { id: 2 }];\nconsole.log('rows', rows.length);\nreturn rows.map((r) => r.id);",
            0,
            "completed",
            "rows 2\n[\n  1,\n  2\n]\n",
        ),
        (
            "empty.ts",
            "",
            0,
            "completed",
            "(run_code completed with no output)\n",
        ),
        (
            "throws.ts",
            "console.log('before');\nthrow new Error('boom');",
            1,
            "failed",
            "Error: code run failed (exception): Error: boom at {file}:2:7\nCaptured output:\nbefore\n",
        ),
        (
            "ok.py",
            "rows = [{'id': 1}, {'id': 2}]\nprint('rows', len(rows))\nreturn [r['id'] for r in rows]",
            0,
            "completed",
            "rows 2\n[\n  1,\n  2\n]\n",
        ),
        (
            "throws.py",
            "print('before')\nraise RuntimeError('boom')",
            1,
            "failed",
            "Error: code run failed (exception): RuntimeError: boom at {file}:2\nCaptured output:\nbefore\n",
        ),
        (
            "enum.ts",
            "enum E { A }",
            1,
            "failed",
            "Error: code run failed (exception): SyntaxError: `enum` is not erasable TypeScript: use an object literal with `as const` (or a union of literal types) instead at {file}:1:1\n",
        ),
    ];
    for (name, program, code, status, content) in cases {
        let path = scratch.file(name, program);
        let output = dsh_tools(&["run", path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(code), "{name}: {output:?}");
        // Positions name the file that was run.
        let content = content.replace("{file}", path.to_str().unwrap());
        assert_eq!(
            run_output(&output),
            (vec![], status.to_string(), content),
            "{name}"
        );
    }
}

#[test]
fn run_shows_each_dispatch_with_its_timing() {
    let scratch = Scratch::new("dispatch");
    // Two calls of the built-in `read` whose arguments fail validation: each dispatch is
    // shown, failed, with its arguments.
    let path = scratch.file(
        "calls.ts",
        "for (const n of [5, 6]) {\n  try { await tools.read({ n }); } catch (e) { console.log(e.toolName + ': ' + e.message); }\n}",
    );
    let output = dsh_tools(&["run", "--builtins", "fs", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let refused = "read: invalid arguments: missing required property \"file_path\"";
    assert_eq!(
        run_output(&output),
        (
            vec![
                "✗ cli:code:1 read {\"n\":5} (… ms)".to_string(),
                "✗ cli:code:2 read {\"n\":6} (… ms)".to_string(),
            ],
            "completed".to_string(),
            format!("{refused}\n{refused}\n")
        )
    );
}

#[test]
fn run_applies_the_config_file_budgets_whatever_the_presentation() {
    let scratch = Scratch::new("config");
    let config = scratch.file(
        "config.toml",
        "[tools]\nmode = \"native\"\n\n[codeRuntime]\ncomputeMs = 150\nmaxOutputBytes = 100\n",
    );
    let spin = scratch.file("spin.ts", "console.log('spinning');\nwhile (true) {}");
    let output = dsh_tools(&[
        "--config",
        config.to_str().unwrap(),
        "run",
        spin.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        run_output(&output),
        (
            vec![],
            "failed".to_string(),
            "Error: code run failed (timeout): compute budget of 150 ms exhausted\nCaptured output:\nspinning\n".to_string()
        )
    );
    let flood = scratch.file("flood.ts", "return 'z'.repeat(500);");
    let output = dsh_tools(&[
        "--config",
        config.to_str().unwrap(),
        "run",
        flood.to_str().unwrap(),
    ]);
    assert_eq!(
        run_output(&output).2,
        "Error: code run failed (output-limit): outer output exceeded 100 bytes\n"
    );
}

#[test]
fn run_reports_unreadable_programs_and_invalid_config_on_stderr() {
    let scratch = Scratch::new("errors");
    let missing = scratch.0.join("missing.ts");
    let output = dsh_tools(&["run", missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(&format!("cannot read the program {}", missing.display())),
        "{stderr}"
    );

    let config = scratch.file("bad.json", "{ \"codeRuntime\": { \"computeMs\": 0 } }");
    let program = scratch.file("p.ts", "return 1;");
    let output = dsh_tools(&[
        "--config",
        config.to_str().unwrap(),
        "run",
        program.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("config.codeRuntime.computeMs: must be positive"),
        "{stderr}"
    );
}

#[test]
fn sdk_prints_what_the_prompt_shows_for_the_same_tools() {
    let output = dsh_tools(&["sdk"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    let mut host = Host::initialized(
        Framing::Ndjson,
        json!({}),
        json!({ "tools": { "mode": "code" } }),
    );
    let prompt = host.request("tools/prompt", json!({}));
    let sdk = sdk_of(&prompt);
    assert_eq!(printed, sdk + "\n");
    assert!(
        printed.starts_with("## Writing code for run_code\n"),
        "{printed}"
    );
    assert!(printed.contains("declare const tools"), "{printed}");
    assert_eq!(host.finish(), 0);
    // Deterministic: byte-identical on every call.
    assert_eq!(
        String::from_utf8(dsh_tools(&["sdk"]).stdout).unwrap(),
        printed
    );
}

#[test]
fn sdk_lang_py_prints_what_a_python_prompt_shows() {
    let output = dsh_tools(&["sdk", "--lang", "py"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    let mut host = Host::initialized(
        Framing::Ndjson,
        json!({}),
        json!({ "tools": { "mode": "code" }, "codeRuntime": { "language": "python" } }),
    );
    let prompt = host.request("tools/prompt", json!({}));
    let sdk = sdk_of(&prompt);
    assert_eq!(printed, sdk + "\n");
    assert!(printed.contains("```py\n"), "{printed}");
    assert_eq!(host.finish(), 0);
    let refused = dsh_tools(&["sdk", "--lang", "rb"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--lang: expected ts or py"),
        "{refused:?}"
    );
}

#[test]
fn run_into_a_closed_pipe_exits_quietly_as_sigpipe_would() {
    let scratch = Scratch::new("closed-pipe");
    let program = scratch.file("p.ts", "console.log('x'.repeat(100)); return 1;");
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["run", program.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the host has written anything.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

/// A program whose one sub-call prints lines slowly, in `scratch` (bash runs there).
fn slow_printer(scratch: &Scratch) -> PathBuf {
    scratch.file(
        "slow.ts",
        "const r = await tools.bash({ command: 'for i in 1 2 3 4; do echo step$i; sleep 0.3; done' });\nreturn r.stdout;",
    )
}

#[test]
fn run_on_a_terminal_shows_a_live_line_per_dispatch_then_its_settled_line() {
    let scratch = Scratch::new("live-tty");
    let program = slow_printer(&scratch);
    // util-linux `script` gives the command a pseudo-terminal and copies what it draws.
    let command = format!(
        "stty cols 200 rows 40; exec {} run --builtins bash {}",
        env!("CARGO_BIN_EXE_dsh-tools"),
        program.display()
    );
    let output = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .current_dir(&scratch.0)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run script (util-linux)");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let drawn = String::from_utf8_lossy(&output.stdout).into_owned();
    // A live line: a spinner frame, the dispatch, its elapsed time and a line it printed.
    let live = drawn.split(['\r', '\n']).find(|line| {
        line.contains("cli:code:1 bash")
            && line.contains("s] step")
            && "⠁⠂⠄⡀⢀⠠⠐⠈⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏".chars().any(|c| line.contains(c))
    });
    assert!(live.is_some(), "no live line in {drawn:?}");
    // It collapses to the settled line, then the run's header.
    let segments: Vec<&str> = drawn
        .split(['\r', '\n'])
        .map(|s| s.trim_start_matches("\u{1b}[2K"))
        .collect();
    let settled = segments
        .iter()
        .position(|s| s.starts_with("✓ cli:code:1 bash "));
    let header = segments
        .iter()
        .position(|s| s.starts_with("── run_code completed"));
    assert!(
        matches!((settled, header), (Some(s), Some(h)) if s < h),
        "{drawn:?}"
    );
    assert!(drawn.contains("step4"), "{drawn:?}");
}

#[test]
fn run_into_a_pipe_prints_plain_lines_only() {
    let scratch = Scratch::new("live-pipe");
    let program = slow_printer(&scratch);
    let output = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["run", "--builtins", "bash", program.to_str().unwrap()])
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\r'),
        "{stdout:?}"
    );
    let (dispatches, status, content) = run_output(&output);
    assert_eq!(
        dispatches,
        [
            r#"✓ cli:code:1 bash {"command":"for i in 1 2 3 4; do echo step$i; sleep 0.3; done"} (… ms)"#
        ]
    );
    assert_eq!(status, "completed");
    assert_eq!(content, "step1\nstep2\nstep3\nstep4\n\n");
}
