//! `bash`'s cards: a terminal card in the working directory, its result persisted as the
//! combined output and exit status (and the session a command runs on as).

use super::{BashOutput, SpilledStream};
use crate::builtins::cards::{parse, success_meta};
use crate::cards::{TerminalCallView, TerminalResultView, ToolCallView, ToolResultView};
use crate::tool::{CardMeta, DurableResult, ToolCards};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// `bash`'s metadata: what the terminal card shows.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TerminalMeta {
    output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    /// The spilled streams, where the pipeline's own spill puts its file (`meta.spill`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spill: Option<SpillLocator>,
}

/// `meta.spill` of a `bash` result: `{ path, bytes }` as the pipeline's spill policy writes
/// it, plus which stream it holds; when both streams spilled, stderr's file is in `more`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpillLocator {
    path: String,
    bytes: u64,
    stream: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    more: Vec<SpillLocator>,
}

impl SpillLocator {
    /// Every spilled stream of `output`, stdout first.
    fn of(output: &BashOutput) -> Option<SpillLocator> {
        let locator = |stream: &SpilledStream, name: &str| SpillLocator {
            path: stream.path.clone(),
            bytes: stream.bytes,
            stream: name.to_owned(),
            more: Vec::new(),
        };
        let mut spilled = [
            output.stdout_spill.as_ref().map(|s| locator(s, "stdout")),
            output.stderr_spill.as_ref().map(|s| locator(s, "stderr")),
        ]
        .into_iter()
        .flatten();
        let mut first = spilled.next()?;
        first.more = spilled.collect();
        Some(first)
    }
}

/// `bash` persists its combined output and exit status (and where spilled streams are).
pub fn card_meta() -> CardMeta {
    Arc::new(|_arguments, value| {
        let output = BashOutput::deserialize(value).ok()?;
        serde_json::to_value(TerminalMeta {
            spill: SpillLocator::of(&output),
            output: output.combined(),
            exit_code: output.exit_code,
            signal: output.signal,
            session_id: output.session_id,
        })
        .ok()
    })
}

#[derive(Deserialize)]
struct BashCall {
    command: String,
    description: Option<String>,
}

/// `bash`: a terminal card in the configured working directory (naming the session a
/// command that outlived its call runs on as).
pub struct BashCards {
    /// The canonical working directory commands run in.
    pub cwd: String,
}

impl ToolCards for BashCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        let call: BashCall = parse(arguments)?;
        ToolCallView::Terminal(TerminalCallView {
            title: call.command,
            description: call.description,
            cwd: Some(self.cwd.clone()),
        })
        .to_json()
    }

    fn result_card(&self, _arguments: &Value, result: &DurableResult) -> Option<Value> {
        let meta: TerminalMeta = success_meta(result)?;
        ToolResultView::Terminal(TerminalResultView {
            title: None,
            output: Some(meta.output),
            exit_code: meta.exit_code,
            signal: meta.signal,
            running: meta.session_id.is_some().then_some(true),
            session_id: meta.session_id,
        })
        .to_json()
    }
}
