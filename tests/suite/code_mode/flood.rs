//! 300 programs of 1 MiB sent at once, past `codeRuntime.maxConcurrentRuns`: the runs past
//! the cap are refused at once and hold nothing (on main before issue 37 they queued behind
//! the pool with their text, 61 → 1,375 MB), the runs within it all finish once the client
//! answers their calls.

use crate::support::code::{Framing, Host, echo_spec};
use serde_json::json;

const SENT: usize = 300;
const ALIVE: usize = 8;

#[test]
fn programs_past_the_run_cap_are_refused_at_once_and_hold_no_memory() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "maxConcurrentRuns": ALIVE } }),
    );
    host.register(echo_spec("echo"));
    assert_eq!(host.run_code("warm", "return 1")["isError"], false);
    let before = host.peak_memory_kib();
    // About 1 MiB of comment (the most a program may be), then a call the client answers
    // only once every program past the cap was refused.
    let padding = format!("// {}\n", "x".repeat((1 << 20) - 256));
    let program = format!("{padding}return await tools.echo({{ text: 'held' }});");
    for n in 0..SENT {
        host.send_run_code(json!(n), &format!("p{n}"), &program);
    }
    let refusal = format!(
        "run_code refused: {ALIVE} runs are already in progress, the most \
         codeRuntime.maxConcurrentRuns allows; try again when one has finished"
    );
    let (mut calls, mut refused, mut finished) = (Vec::new(), 0, 0);
    while refused + finished < SENT {
        let message = host.next_message();
        if message["method"] == "client/executeTool" {
            calls.push(message);
        } else if message.get("method").is_none() {
            let text = message["result"].to_string();
            if text.contains(&refusal) {
                refused += 1;
            } else {
                assert_eq!(
                    message["result"]["value"]["result"], "answered",
                    "{text:.300}"
                );
                finished += 1;
            }
        }
        // The runs within the cap stayed alive while the others were refused.
        if calls.len() == ALIVE && refused == SENT - ALIVE {
            for call in std::mem::take(&mut calls) {
                host.answer(&call, json!({ "value": "answered" }));
            }
        }
    }
    assert_eq!((refused, finished), (SENT - ALIVE, ALIVE));
    // 300 MiB of programs were sent; what stays is the frames read one at a time and the
    // runs within the cap, not the refused programs.
    let growth = host.peak_memory_kib().saturating_sub(before);
    assert!(growth < 160 * 1024, "the host grew by {growth} KiB");
    assert_eq!(host.finish(), 0);
}
