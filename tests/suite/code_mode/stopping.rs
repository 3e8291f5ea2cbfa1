//! A stopped run stops: however the program catches what ends it or re-enters a binding
//! while it is being ended, once its answer is out no thread of the host keeps a core busy.
//! Measured from the host's per-thread CPU time (`/proc/<pid>/task/*/stat`).

use crate::support::code::hostile::failure;
use crate::support::code::{Host, any_spec};
use crate::support::raw::thread_ticks;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

/// How long after the answer a stopped run's thread may still be ending.
const SETTLE: Duration = Duration::from_secs(1);
/// The window measured after that.
const WINDOW: Duration = Duration::from_secs(1);
/// The most CPU any one thread may use in the window: 5 % of a core (clock ticks at 100 per
/// second). A thread left running JavaScript uses all the core it gets, which beside two CPU
/// hogs on two cores is still a third of one.
const MAX_TICKS_PER_THREAD: u64 = 5;

/// The host's debug log line once the startup snapshot is built (a low-priority background
/// thread's work, waited for so it is not measured).
const SNAPSHOT_BUILT: &str = "the startup snapshot is built";

/// Long enough for a program that makes a binding call in a loop to leave many thousands of
/// promises behind, whose teardown was quadratic (v8x patch 0013).
const COMPUTE_MS: u64 = 3000;

/// Programs that catch or re-enter while being ended: a recursion whose every level calls a
/// binding and catches what ends it (and recurses again from the catch), and a
/// `Symbol.toStringTag` getter that calls a binding with its own object, which the binding's
/// argument snapshot reads again, in a loop that catches.
const PROGRAMS: [&str; 2] = [
    "const f = (n) => { try { tools.echo({}); f(n + 1); } catch (e) { f(n + 1); } };\nf(0);",
    "const o = { get [Symbol.toStringTag]() { try { tools.echo(o); } catch {} return 'x'; } };\nwhile (true) { try { tools.echo(o); } catch {} }",
];

#[test]
fn no_thread_stays_busy_after_a_stopped_run_answered() {
    for program in PROGRAMS {
        let mut host = Host::code_mode_with_env(
            "code",
            json!({ "codeRuntime": { "computeMs": COMPUTE_MS, "poolSize": 1 } }),
            &[("RUST_LOG", "dsh_tools::runtime::js::snapshot=debug")],
        );
        host.register(any_spec("echo", true));
        assert_eq!(host.run_code("first", "return 1")["isError"], false);
        host.wait_for_stderr(SNAPSHOT_BUILT, 1);
        host.send_run_code(json!("stopped"), "stopped", program);
        let (response, _) = host.serve_until(&json!("stopped"), |_| Some(Ok(json!({}))));
        // The second program's answered calls pile up as fast as the machine runs it: which
        // ends it first, the compute budget or the heap limit, depends on that speed. Either
        // stops the run's JavaScript the same way, which is what is measured below.
        let ends = [
            format!("code run failed (timeout): compute budget of {COMPUTE_MS} ms exhausted"),
            "code run failed (worker-exit): heap limit of 512 MiB exceeded".to_owned(),
        ];
        assert!(
            ends.iter().any(|end| response["result"] == failure(end)),
            "{program}: {response}"
        );
        // The measurement itself: how busy the host is a while after the answer.
        std::thread::sleep(SETTLE);
        let before = thread_ticks(host.pid())
            .into_iter()
            .collect::<HashMap<_, _>>();
        std::thread::sleep(WINDOW);
        let after = thread_ticks(host.pid())
            .into_iter()
            .collect::<HashMap<_, _>>();
        let busy: Vec<String> = after
            .iter()
            .filter_map(|(thread, ticks)| {
                let used = ticks - before.get(thread).copied().unwrap_or(0);
                (used > MAX_TICKS_PER_THREAD).then(|| format!("{thread} +{used}"))
            })
            .collect();
        assert!(
            busy.is_empty(),
            "threads busy {SETTLE:?} after the answer to {program:?}: {busy:?}"
        );
        assert_eq!(host.finish(), 0);
    }
}
