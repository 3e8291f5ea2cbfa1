//! The third hostile round's cases in the soak's mix: runs that would wait on each other past
//! the warm pool, fresh randomness, parse-depth bombs, a caught recursion around a binding,
//! file tools on a workspace a command keeps changing (a FIFO swapped in), a deep tree left in
//! `$TMPDIR`, and a large pipelined batch.

use std::collections::HashSet;
use std::time::Instant;

use anyhow::{bail, ensure};
use serde_json::{Value, json};

use super::{Host, PATIENCE};

/// Runs held at a rendezvous: more than the warm pool (`poolSize: 2` in the soak's config).
const RENDEZVOUS: usize = 4;
/// Nesting of the parse-depth bomb (past every depth limit, 400 KB of program).
const BOMB_DEPTH: usize = 200_000;
/// Depth of the tree a command leaves in its `$TMPDIR`.
const TREE_DEPTH: usize = 2_000;
/// Calls in one pipelined batch.
const BATCH_CALLS: usize = 2_000;

/// What the cases remember across rounds.
#[derive(Default)]
pub struct Memory {
    randoms: HashSet<u64>,
}

impl Host {
    /// One round of this round's cases, spread over rounds as the older mix is.
    pub fn hostile_round(&mut self, round: u64, memory: &mut Memory) -> anyhow::Result<()> {
        self.fresh_randomness(memory)?;
        self.edited_file(round)?;
        if round.is_multiple_of(2) {
            self.rendezvous()?;
        }
        if round.is_multiple_of(7) {
            self.parse_bomb()?;
            self.caught_recursion()?;
        }
        if round.is_multiple_of(6) {
            self.fifo_swapped_in()?;
        }
        if round.is_multiple_of(10) {
            self.deep_scratch_tree()?;
            self.batch()?;
        }
        Ok(())
    }

    /// `RENDEZVOUS` runs whose binding calls the client answers only once all have arrived.
    fn rendezvous(&mut self) -> anyhow::Result<()> {
        let mut runs = HashSet::new();
        for i in 0..RENDEZVOUS {
            self.next_id += 1;
            let id = self.next_id;
            runs.insert(id);
            self.send(
                &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/execute",
                "params": { "callId": format!("r{id}"), "name": "run_code", "arguments": {
                    "code": format!("return await tools.echo({{ i: {i} }});"),
                    "description": "rendezvous" } } }),
            )?;
        }
        let (mut held, mut answered) = (Vec::new(), 0);
        let deadline = Instant::now() + PATIENCE;
        while answered < RENDEZVOUS {
            let message = self.next_message(deadline)?;
            if message.get("method").and_then(Value::as_str) == Some("client/executeTool") {
                held.push(message);
                if held.len() == RENDEZVOUS {
                    for request in held.drain(..) {
                        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"],
                            "result": { "value": request["params"]["arguments"]["i"] } }))?;
                    }
                }
            } else if message.get("method").is_none()
                && message["id"].as_u64().is_some_and(|id| runs.contains(&id))
            {
                ensure!(
                    message["result"]["isError"] == false,
                    "rendezvous: {message}"
                );
                answered += 1;
            }
        }
        Ok(())
    }

    /// `Math.random()` never repeats a value another run drew.
    fn fresh_randomness(&mut self, memory: &mut Memory) -> anyhow::Result<()> {
        let run = self.execute(
            "run_code",
            json!({ "code": "return [Math.random(), Math.random()];", "description": "random" }),
        )?;
        for drawn in run["value"]["result"].as_array().into_iter().flatten() {
            let Some(value) = drawn.as_f64() else {
                bail!("random: {run}")
            };
            ensure!(
                memory.randoms.insert(value.to_bits()),
                "Math.random() repeated {value} across runs"
            );
        }
        Ok(())
    }

    /// A program nested past the parser's depth limit fails without growing the host.
    fn parse_bomb(&mut self) -> anyhow::Result<()> {
        let code = format!(
            "return {}1{};",
            "[".repeat(BOMB_DEPTH),
            "]".repeat(BOMB_DEPTH)
        );
        let run = self.execute("run_code", json!({ "code": code, "description": "bomb" }))?;
        ensure!(run["isError"] == true, "parse bomb: {run}");
        Ok(())
    }

    /// A recursion that catches its own termination around a binding call is stopped.
    fn caught_recursion(&mut self) -> anyhow::Result<()> {
        let code = "const f = async () => { try { await tools.echo({ i: 1 }); return f(); } \
                    catch { return f(); } }; return await f();";
        let run = self.execute("run_code", json!({ "code": code, "description": "caught" }))?;
        ensure!(run["isError"] == true, "caught recursion: {run}");
        Ok(())
    }

    /// `write`, `edit` and `grep` on a file of the workspace.
    fn edited_file(&mut self, round: u64) -> anyhow::Result<()> {
        let text = format!("round {round}\nneedle {round}\n");
        let wrote = self.execute(
            "write",
            json!({ "file_path": "round.txt", "content": text }),
        )?;
        ensure!(wrote["isError"] == false, "write: {wrote}");
        let read = self.execute("read", json!({ "file_path": "round.txt" }))?;
        ensure!(read["isError"] == false, "read: {read}");
        let edited = self.execute(
            "edit",
            json!({ "file_path": "round.txt", "old_string": "needle", "new_string": "found" }),
        )?;
        ensure!(edited["isError"] == false, "edit: {edited}");
        let found = self.execute(
            "grep",
            json!({ "pattern": format!("found {round}$"), "output_mode": "count" }),
        )?;
        ensure!(found["isError"] == false, "grep: {found}");
        Ok(())
    }

    /// A FIFO where a file was: the file tools answer at once instead of waiting for a writer.
    fn fifo_swapped_in(&mut self) -> anyhow::Result<()> {
        let made = self.execute(
            "bash",
            json!({ "command": "rm -f swapped && mkfifo swapped" }),
        )?;
        ensure!(made["isError"] == false, "mkfifo: {made}");
        for (tool, arguments) in [
            ("read", json!({ "file_path": "swapped" })),
            ("write", json!({ "file_path": "swapped", "content": "x" })),
            (
                "edit",
                json!({ "file_path": "swapped", "old_string": "a", "new_string": "b" }),
            ),
        ] {
            let answer = self.execute(tool, arguments)?;
            ensure!(answer["isError"] == true, "{tool} of a FIFO: {answer}");
        }
        let grep = self.execute("grep", json!({ "pattern": "x", "path": "swapped" }))?;
        ensure!(grep.get("isError").is_some(), "grep of a FIFO: {grep}");
        let removed = self.execute("bash", json!({ "command": "rm -f swapped" }))?;
        ensure!(removed["isError"] == false, "rm: {removed}");
        Ok(())
    }

    /// A command leaves a `TREE_DEPTH`-deep tree in its `$TMPDIR` (the end checks it went).
    fn deep_scratch_tree(&mut self) -> anyhow::Result<()> {
        let command = format!(
            "python3 -c \"import os\nos.chdir(os.environ['TMPDIR'])\nfor _ in range({TREE_DEPTH}):\n    os.mkdir('d'); os.chdir('d')\""
        );
        let made = self.execute("bash", json!({ "command": command }))?;
        ensure!(made["isError"] == false, "deep tree: {made}");
        Ok(())
    }

    /// A pipelined batch of `BATCH_CALLS` reads, answered in order.
    fn batch(&mut self) -> anyhow::Result<()> {
        let calls: Vec<Value> = (0..BATCH_CALLS)
            .map(|i| {
                json!({ "callId": format!("b{i}"), "name": "read",
                             "arguments": { "file_path": "notes.txt" } })
            })
            .collect();
        let response = self.request("tools/executeBatch", json!({ "calls": calls }))?;
        let results = response["result"].as_array();
        ensure!(
            results.is_some_and(
                |all| all.len() == BATCH_CALLS && all.iter().all(|one| one["isError"] == false)
            ),
            "batch: {}",
            response.to_string().chars().take(400).collect::<String>()
        );
        Ok(())
    }
}
