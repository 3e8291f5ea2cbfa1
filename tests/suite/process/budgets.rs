//! Budgets per run, not per process, through the real binary: a Python program's forked
//! processes spend its `computeMs` and its `maxHeapMb` (memfd pages included), a `bash`
//! command's whole tree is held to `builtins.bash.limits`, with the host's cgroup leaves
//! and with the polled fallback (`DSH_TOOLS_SANDBOX_SIMULATE=no-cgroup`), and the leaves
//! are gone once the host is.

use crate::support::sandbox::{Sandboxed, stdout};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Each mechanism's environment and the name the report gives it.
fn mechanisms() -> [(&'static str, &'static str); 2] {
    [("", "cgroup-v"), ("no-cgroup", "polled")]
}

/// A host with `extra` config, under `simulate`, with a temporary `HOME`.
fn host(extra: Value, simulate: &str, home: &tempfile::TempDir) -> Sandboxed {
    let home = home.path().to_str().unwrap();
    Sandboxed::start(
        extra,
        &[("DSH_TOOLS_SANDBOX_SIMULATE", simulate), ("HOME", home)],
        false,
    )
}

/// The error message of a failed result.
fn error(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result["error"]["message"].as_str().unwrap().to_owned()
}

/// Host pids whose command line holds `tag` (the spinners the run exec'd).
fn tagged(tag: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| line.windows(tag.len()).any(|w| w == tag.as_bytes()))
        })
        .collect()
}

/// Waits (generously) until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Two forked children exec a spinning shell (tagged on its command line), the interpreter
/// spins a moment too, then waits for them: under a per-process budget it spends none of
/// its own and the children spin until the wall budget.
fn spinners(tag: &str) -> String {
    format!(
        "import os, time\n\
         kids = []\n\
         for _ in range(2):\n\
         \x20   pid = os.fork()\n\
         \x20   if pid == 0:\n\
         \x20       os.execv('/bin/sh', ['sh', '-c', 'while :; do :; done', '{tag}'])\n\
         \x20   kids.append(pid)\n\
         end = time.monotonic() + 0.2\n\
         while time.monotonic() < end: pass\n\
         for pid in kids: os.waitpid(pid, 0)\n\
         return 'spun'"
    )
}

#[test]
fn forked_spinners_spend_the_runs_compute_budget_and_die_with_it() {
    for (simulate, expected) in mechanisms() {
        let home = tempfile::tempdir().unwrap();
        let extra = json!({ "codeRuntime": { "computeMs": 3000, "maxWallMs": 20000 } });
        let mut sandboxed = host(extra, simulate, &home);
        let budgets = sandboxed.report()["python"]["budgets"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(budgets.starts_with(expected), "{simulate}: {budgets}");
        assert_eq!(sandboxed.python("return 1")["value"]["result"], 1);
        let tag = format!("dsh-budget-spinner-{}-{simulate}", std::process::id());
        let started = Instant::now();
        let id = sandboxed.host.start(
            "tools/execute",
            json!({ "callId": "spin", "name": "run_code", "agent": "py",
                    "arguments": { "code": spinners(&tag), "description": "spin" } }),
        );
        eventually("the spinners never started", || tagged(&tag).len() == 2);
        let result = sandboxed.host.response_to(&id)["result"].clone();
        let took = started.elapsed();
        assert!(
            error(&result).ends_with("(timeout): compute budget of 3000 ms exhausted"),
            "{simulate}: {result}"
        );
        assert!(
            took < Duration::from_millis(3500),
            "{simulate}: took {took:?}"
        );
        eventually("a spinner survived its run", || tagged(&tag).is_empty());
    }
}

#[test]
fn forked_and_memfd_allocations_count_against_max_heap_mb() {
    // Four children of 120 MiB each, each well under the per-process cap; then a memfd
    // written to 768 MiB, which no address-space limit sees.
    let forked = "import os, time\n\
                  kids = []\n\
                  for _ in range(4):\n\
                  \x20   pid = os.fork()\n\
                  \x20   if pid == 0:\n\
                  \x20       block = b'x' * (120 << 20)\n\
                  \x20       time.sleep(5)\n\
                  \x20       os._exit(0)\n\
                  \x20   kids.append(pid)\n\
                  for pid in kids: os.waitpid(pid, 0)\n\
                  return 'allocated'";
    let memfd = "import os\n\
                 fd = os.memfd_create('budget')\n\
                 chunk = b'x' * (16 << 20)\n\
                 for _ in range(48): os.write(fd, chunk)\n\
                 return 'written'";
    for (simulate, _) in mechanisms() {
        let home = tempfile::tempdir().unwrap();
        let extra = json!({ "codeRuntime": { "maxHeapMb": 256, "maxWallMs": 60000 } });
        let mut sandboxed = host(extra, simulate, &home);
        for program in [forked, memfd] {
            let result = sandboxed.python(program);
            let message = error(&result);
            assert!(
                message.ends_with("(worker-exit): heap limit of 256 MiB exceeded"),
                "{simulate}: {program}: {result}"
            );
        }
        assert_eq!(sandboxed.python("return 2")["value"]["result"], 2);
    }
}

#[test]
fn a_bash_command_past_its_memory_limit_is_killed_with_the_key_named() {
    let allocate = "python3 -c \"import time; block = b'x' * (200 << 20); \
                    print('allocated', flush=True); time.sleep(10)\"";
    for (simulate, _) in mechanisms() {
        let home = tempfile::tempdir().unwrap();
        let extra = json!({ "builtins": { "bash": { "limits": { "memoryMb": 64 } } } });
        let mut sandboxed = host(extra, simulate, &home);
        let started = Instant::now();
        let message = error(&sandboxed.bash(allocate));
        assert!(
            message.starts_with(
                "command killed: it and the processes it started went past the memory limit \
                 of 64 MiB (builtins.bash.limits.memoryMb)"
            ),
            "{simulate}: {message}"
        );
        assert!(started.elapsed() < Duration::from_secs(8), "{simulate}");
        assert_eq!(stdout(&sandboxed.bash("echo fine")), "fine\n");
    }
}

#[test]
fn a_bash_fork_loop_cannot_pass_the_pids_limit() {
    let fork_loop = "python3 -c \"\nimport os, time\nn = 0\ntry:\n    for _ in range(300):\n        \
                     if os.fork() == 0:\n            time.sleep(5)\n            os._exit(0)\n        \
                     n += 1\nexcept OSError as e:\n    print('refused after', n, flush=True)\nelse:\n    \
                     print('forked', n, flush=True)\n    time.sleep(5)\n\"";
    for (simulate, _) in mechanisms() {
        let home = tempfile::tempdir().unwrap();
        let extra = json!({ "builtins": { "bash": { "limits": { "pids": 32 } } } });
        let mut sandboxed = host(extra, simulate, &home);
        let result = sandboxed.bash(fork_loop);
        if simulate.is_empty() {
            // The leaf refuses the fork itself.
            let out = stdout(&result);
            let forked: u32 = out
                .strip_prefix("refused after ")
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("{out}"));
            assert!(forked < 32, "{out}");
        } else {
            // Polled: the tree is killed once it is seen past the limit.
            let message = error(&result);
            assert!(
                message.starts_with(
                    "command killed: it started more than 32 processes at once \
                     (builtins.bash.limits.pids)"
                ),
                "{message}"
            );
        }
        let started = Instant::now();
        assert_eq!(stdout(&sandboxed.bash("echo responsive")), "responsive\n");
        assert!(started.elapsed() < Duration::from_secs(5), "{simulate}");
    }
}

/// This process's directory in the v1 `memory` hierarchy (the host inherits its cgroup).
fn memory_cgroup_dir() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_owned()))?;
    let dir = PathBuf::from(format!("/sys/fs/cgroup/memory{path}"));
    dir.is_dir().then_some(dir)
}

#[test]
fn the_report_names_the_mechanism_and_leaves_go_with_the_host() {
    let home = tempfile::tempdir().unwrap();
    let extra = json!({ "mcpServers": { "m": { "command": "true" } } });
    let mut sandboxed = host(extra.clone(), "", &home);
    let report = sandboxed.report().clone();
    let mechanism = report["bash"]["budgets"].as_str().unwrap().to_owned();
    assert!(mechanism.starts_with("cgroup-v"), "{report}");
    assert_eq!(report["python"]["budgets"], mechanism.as_str());
    assert_eq!(report["mcpServers"]["m"]["budgets"], mechanism.as_str());
    assert_eq!(stdout(&sandboxed.bash("echo ran")), "ran\n");
    let own = memory_cgroup_dir().filter(|_| mechanism == "cgroup-v1");
    let host_dir = |own: &Option<PathBuf>, pid: u32| {
        own.as_ref().map(|own| own.join(format!("dsh-tools-{pid}")))
    };
    // A host that exits removes its leaves and its dir.
    let dir = host_dir(&own, sandboxed.host.pid());
    assert!(dir.as_ref().is_none_or(|d| d.is_dir()), "{dir:?}");
    assert_eq!(sandboxed.host.finish(), 0);
    assert!(dir.as_ref().is_none_or(|d| !d.exists()), "{dir:?}");

    // A host SIGKILLed leaves its dir, which no polled host touches and the next host
    // with cgroups sweeps.
    let mut crashed = host(extra.clone(), "", &home);
    assert_eq!(stdout(&crashed.bash("echo ran")), "ran\n");
    let stale = host_dir(&own, crashed.host.pid());
    crashed.host.crash();
    assert!(stale.as_ref().is_none_or(|d| d.is_dir()), "{stale:?}");

    let mut polled = host(extra.clone(), "no-cgroup", &home);
    let report = polled.report().clone();
    assert_eq!(report["bash"]["budgets"], "polled", "{report}");
    assert_eq!(report["python"]["budgets"], "polled", "{report}");
    assert_eq!(report["mcpServers"]["m"]["budgets"], "none", "{report}");
    assert_eq!(stdout(&polled.bash("echo ran")), "ran\n");
    let none = host_dir(&own, polled.host.pid());
    assert!(none.as_ref().is_none_or(|d| !d.exists()), "{none:?}");
    assert!(stale.as_ref().is_none_or(|d| d.is_dir()), "{stale:?}");

    let mut next = host(extra, "", &home);
    assert_eq!(stdout(&next.bash("echo ran")), "ran\n");
    assert!(stale.as_ref().is_none_or(|d| !d.exists()), "{stale:?}");
    assert_eq!(next.host.finish(), 0);
}

#[test]
fn cpu_percent_throttles_a_bash_command_with_a_cgroup() {
    let home = tempfile::tempdir().unwrap();
    let extra = json!({ "builtins": { "bash": { "limits": { "cpuPercent": 10 } } } });
    let mut sandboxed = host(extra, "", &home);
    // One second of wall time spinning: about 0.1 s of CPU at 10 %.
    let out = stdout(
        &sandboxed.bash("TIMEFORMAT='%U %S'; { time timeout 1 sh -c 'while :; do :; done'; } 2>&1"),
    );
    let used: f64 = out
        .split_ascii_whitespace()
        .map(|t| t.parse::<f64>().unwrap())
        .sum();
    assert!(used < 0.4, "{out}");
}

#[test]
fn an_mcp_servers_tree_runs_in_a_leaf_with_a_process_limit() {
    let home = tempfile::tempdir().unwrap();
    let seen = home.path().join("pids.max");
    // Not an MCP server: it reports its own leaf's process limit and exits.
    let script = format!(
        "dir=$(grep -m1 ':pids:' /proc/self/cgroup | cut -d: -f3); \
         cat /sys/fs/cgroup/pids$dir/pids.max > {0}.tmp; echo \"$dir\" >> {0}.tmp; \
         mv {0}.tmp {0}",
        seen.display()
    );
    let extra = json!({ "mcpServers": { "m": { "command": "sh", "args": ["-c", script] } } });
    let sandboxed = host(extra, "", &home);
    if !std::path::Path::new("/sys/fs/cgroup/pids/cgroup.procs").exists() {
        return;
    }
    eventually("the server never ran", || seen.exists());
    let text = std::fs::read_to_string(&seen).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("1024"), "{text}");
    let leaf = lines.next().unwrap();
    let pid = sandboxed.host.pid();
    assert!(leaf.contains(&format!("/dsh-tools-{pid}/")), "{text}");
}

#[test]
fn sandbox_check_names_each_familys_budgets() {
    let check = |simulate: &str| {
        let home = tempfile::tempdir().unwrap();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["sandbox", "check", "--builtins", "bash"])
            .env("DSH_TOOLS_SANDBOX_SIMULATE", simulate)
            .env("HOME", home.path())
            .output()
            .unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        text.lines().last().unwrap_or_default().to_owned()
    };
    let cgroup = check("");
    assert!(
        cgroup == "budgets per run: bash cgroup-v1" || cgroup == "budgets per run: bash cgroup-v2",
        "{cgroup}"
    );
    assert_eq!(check("no-cgroup"), "budgets per run: bash polled");
}
