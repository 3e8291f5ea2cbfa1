//! A `run_code` request read off the wire warms up the isolate it will get, and nothing else
//! does: the host's debug log of its isolate threads (stderr) counts the warm-ups.

use crate::support::code::Host;
use serde_json::json;
use std::time::Duration;

/// Longer than an isolate must have waited ready before it warms up (5 ms). Waited only after
/// the host logged the isolate ready (it takes the offer's time before logging it), so the
/// isolate has been ready at least this long whatever the machine's load: a floor, not a
/// hope that something else happened meanwhile.
const IDLE: Duration = Duration::from_millis(20);
const READY: &str = "an isolate is ready for a run";
const WARMED_UP: &str = "an isolate warmed up for an anticipated run";
#[test]
fn only_a_run_code_request_warms_up_an_isolate_and_its_run_answers_as_usual() {
    let mut host = Host::code_mode_with_env(
        "code",
        json!({ "codeRuntime": { "poolSize": 1 } }),
        &[("RUST_LOG", "dsh_tools::runtime::js::slot=debug")],
    );
    // The first run starts the pool: nothing to warm yet.
    assert_eq!(host.run_code("c1", "return 1")["isError"], false);
    // The pool's first isolate, then its refill after `c1`.
    host.wait_for_stderr(READY, 2);
    std::thread::sleep(IDLE);
    // It waits on a timer: the warm-up turned the event loop with a waker of its own.
    let program =
        "await new Promise((resolve) => setTimeout(resolve, 1));\nreturn [1, 2].map((n) => n * 3)";
    let warmed = host.run_code("c2", program);
    assert_eq!(warmed["isError"], false, "{warmed}");
    assert_eq!(warmed["value"]["result"], json!([3, 6]), "{warmed}");
    // Neither a refused direct call of another tool nor another method warms the refill.
    host.wait_for_stderr(READY, 3);
    std::thread::sleep(IDLE);
    let refused = host.request(
        "tools/execute",
        json!({ "callId": "c3", "name": "read", "arguments": { "file_path": "x" } }),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    host.request("tools/prompt", json!({}));
    let finished = host.finish_all();
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(
        finished.stderr.matches(WARMED_UP).count(),
        1,
        "{}",
        finished.stderr
    );
}
