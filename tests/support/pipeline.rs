//! The execution and registry wire suites' helpers, on top of the shared test client
//! (`support::wire`): string request ids, a `--config` file, a big stack for deep values.

#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

use super::wire;

pub use wire::{Framing, echo_spec, with_big_stack};

use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};

/// The shared client, sending requests with `req-<n>` string ids.
pub struct Host {
    wire: wire::Host,
    requests: u64,
}

wire::wraps_host!(Host => wire::Host);

static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

impl Host {
    /// Spawns `dsh-tools serve --framing <framing> <extra...>` (e.g. `--config FILE`).
    pub fn spawn_with(framing: Framing, extra: &[&str]) -> Host {
        Host {
            wire: wire::Host::serve(framing, extra),
            requests: 0,
        }
    }

    /// Spawns and completes `initialize` with the given capabilities and config.
    pub fn initialized(framing: Framing, capabilities: Value, config: Value) -> Host {
        let mut host = Host::spawn_with(framing, &[]);
        host.initialize(capabilities, config);
        host
    }

    /// Spawns with a `--config` file holding `file_config`, then initializes.
    pub fn initialized_with_file(
        framing: Framing,
        file_config: &Value,
        capabilities: Value,
        config: Value,
    ) -> Host {
        let path = std::env::temp_dir().join(format!(
            "dsh-tools-test-{}-{}.json",
            std::process::id(),
            NEXT_FILE.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::write(&path, file_config.to_string()).unwrap();
        let mut host = Host::spawn_with(framing, &["--config", path.to_str().unwrap()]);
        host.initialize(capabilities, config);
        std::fs::remove_file(&path).unwrap();
        host
    }

    /// Sends a request with the next `req-<n>` id without waiting; returns the id.
    pub fn start(&mut self, method: &str, params: Value) -> Value {
        self.requests += 1;
        let id = json!(format!("req-{}", self.requests));
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Sends a request and returns its response; other messages go to `inbox`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params);
        self.response_to(&id)
    }

    /// Answers a host→client request with a JSON-RPC error.
    pub fn answer_error(&mut self, request: &Value, code: i64, message: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"],
            "error": { "code": code, "message": message } }));
    }

    /// Closes the host's stdin (the client went away) while its output stays readable.
    pub fn close_input(&mut self) {
        self.close_stdin();
    }

    /// Closes stdin and returns the exit code.
    pub fn finish(self) -> i32 {
        self.wire.finish()
    }
}
