//! `tools/presentCall` / `tools/presentResult` over the wire: the built-ins' cards for a live
//! call and for a logged one (arguments and persisted meta only), `null` for the fallback.

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use serde_json::json;
use support::{Framing, Host};

#[test]
fn cards_come_from_the_live_result_and_from_logged_meta_alone() {
    let dir = std::env::temp_dir().join(format!("dsh-present-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "alpha\nbeta\n").unwrap();
    let config = json!({ "builtins": { "fs": { "root": dir.to_str().unwrap() } } });
    let mut host = Host::initialized(Framing::Ndjson, json!({}), config);

    let arguments = json!({ "file_path": "a.txt", "offset": 2 });
    let call = host.request(
        "tools/presentCall",
        json!({ "name": "read", "arguments": arguments }),
    );
    assert_eq!(call["result"]["card"], "generic", "{call}");

    let executed = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": "read", "arguments": arguments }),
    );
    let result = executed["result"].clone();
    assert_eq!(result["isError"], false, "{result}");
    let live = host.request(
        "tools/presentResult",
        json!({ "name": "read", "arguments": arguments, "result": result }),
    );
    let card = &live["result"];
    assert_eq!(card["card"], "read", "{card}");
    assert_eq!(card["offset"], 2);
    assert_eq!(card["lines"], json!([{ "number": 2, "text": "beta" }]));

    // Replay: a log keeps arguments, content and meta, never the canonical value.
    let logged = json!({ "isError": false, "content": result["content"], "meta": result["meta"] });
    let replayed = host.request(
        "tools/presentResult",
        json!({ "name": "read", "arguments": arguments, "result": logged }),
    );
    assert_eq!(&replayed["result"], card);

    let malformed = host.request(
        "tools/presentCall",
        json!({ "name": "read", "arguments": { "file_path": 7 } }),
    );
    assert_eq!(
        malformed["result"],
        json!(null),
        "old or malformed arguments fall back"
    );
    let unknown = host.request(
        "tools/presentCall",
        json!({ "name": "nope", "arguments": {} }),
    );
    assert_eq!(unknown["result"], json!(null));
    assert_eq!(host.finish(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
