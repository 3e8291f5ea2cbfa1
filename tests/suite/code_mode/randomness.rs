//! Every run draws its own random numbers: `Math.random()` is seeded from the OS in every
//! isolate, also in those restored from the startup snapshot (whose generator state would
//! otherwise be the one the snapshot was taken with, the same in every run of every host),
//! and every Python interpreter seeds `random` as it starts.

use crate::support::code::Host;
use serde_json::{Value, json};

/// The host's debug log line once isolates start from the snapshot.
const SNAPSHOT_BUILT: &str = "the startup snapshot is built";
/// Runs per host after the snapshot: more than the pool's isolates made before it, so most
/// run in isolates restored from it.
const RUNS: usize = 4;

/// Two draws of each of [`RUNS`] runs of `program` in a new host of `language`.
fn draws(language: &str, program: &str) -> Vec<Value> {
    let mut host = Host::code_mode_with_env(
        "code",
        json!({ "codeRuntime": { "language": language, "poolSize": 2 } }),
        &[("RUST_LOG", "dsh_tools::runtime::js::snapshot=debug")],
    );
    if language == "typescript" {
        // The first run starts the pool and with it the snapshot's build.
        assert_eq!(host.run_code("start", "return 1")["isError"], false);
        host.wait_for_stderr(SNAPSHOT_BUILT, 1);
    }
    let draws = (0..RUNS)
        .map(|n| {
            let result = host.run_code(&format!("draw-{n}"), program);
            let pair = result["value"]["result"].clone();
            assert_eq!(pair.as_array().map(Vec::len), Some(2), "{result}");
            pair
        })
        .collect();
    assert_eq!(host.finish(), 0);
    draws
}

/// No two of `draws` are the same.
fn assert_all_differ(draws: &[Value]) {
    for (i, a) in draws.iter().enumerate() {
        for b in &draws[i + 1..] {
            assert_ne!(a, b, "two runs drew the same numbers: {draws:?}");
        }
    }
}

/// Hosts compared. Before the fix, whether a host's runs all drew the same numbers (deno_core's
/// snapshot seed, 42) depended on whether its snapshot builder or its first isolate
/// initialized the engine, a race: with four hosts the test failed 2 of 3 times on a debug
/// build of the code before the fix, so it compares six.
const HOSTS: usize = 6;

#[test]
fn math_random_differs_in_every_run_of_every_host() {
    let program = "return [Math.random(), Math.random()];";
    let all: Vec<Value> = (0..HOSTS)
        .flat_map(|_| draws("typescript", program))
        .collect();
    assert_all_differ(&all);
}

#[test]
fn python_random_differs_in_every_run_of_every_host() {
    let program = "import random\nreturn [random.random(), random.random()]";
    let mut all = draws("python", program);
    all.extend(draws("python", program));
    assert_all_differ(&all);
}
