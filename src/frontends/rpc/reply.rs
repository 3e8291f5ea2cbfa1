//! Responses written in place. A method whose result can be many megabytes of JSON text
//! (`tools/execute`, `tools/executeBatch`) writes its whole response, envelope included,
//! into one buffer of about the right size, rather than handing jsonrpsee a value that it
//! copies into a buffer of its own, grown by doubling.

use super::convert;
use crate::tool::ToolExecutionResult;
use parking_lot::Mutex;
use std::sync::Arc;

/// The slot a request's handler answers through (a request extension). Empty unless the
/// handler wrote its response there; then the server sends that instead of jsonrpsee's.
#[derive(Clone)]
pub struct DirectReply(Arc<Slot>);

struct Slot {
    /// The request id as JSON, as jsonrpsee would write it.
    id: String,
    response: Mutex<Option<Vec<u8>>>,
}

impl DirectReply {
    pub fn new(id: String) -> Self {
        Self(Arc::new(Slot {
            id,
            response: Mutex::new(None),
        }))
    }

    /// Writes the success response whose `result` is `results` (one, or an array).
    pub fn answer(&self, results: &Results) {
        let mut text = self.open(results.capacity());
        results.write(&mut text);
        self.complete(text);
    }

    /// The start of the success response, up to its `result` (for a result written piece
    /// by piece into the same buffer, then handed to [`DirectReply::complete`]).
    pub fn open(&self, capacity: usize) -> String {
        let mut text = String::with_capacity(capacity + self.0.id.len() + 40);
        text.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        text.push_str(&self.0.id);
        text.push_str(",\"result\":");
        text
    }

    /// Ends a response begun with [`DirectReply::open`] whose `result` is written.
    pub fn complete(&self, mut text: String) {
        text.push('}');
        *self.0.response.lock() = Some(text.into_bytes());
    }

    /// The response the handler wrote, if it wrote one.
    pub fn take(&self) -> Option<Vec<u8>> {
        self.0.response.lock().take()
    }
}

/// What a result-answering method returns (`tools/executeBatch` writes its own, call by
/// call: see `batch`).
pub enum Results {
    One(ToolExecutionResult),
    /// One result that also carries a provider's tool-result block for `call_id`/`name`.
    Shaped {
        result: ToolExecutionResult,
        format: dsh_tools_protocol::ProviderFormat,
        call_id: String,
        name: String,
    },
}

impl Results {
    fn capacity(&self) -> usize {
        match self {
            Results::One(result) => convert::result_json_capacity(result),
            // The block repeats the content once more.
            Results::Shaped { result, .. } => 2 * convert::result_json_capacity(result),
        }
    }

    /// The `result` JSON text appended to `out`.
    pub fn write(&self, out: &mut String) {
        match self {
            Results::One(result) => convert::write_result_json(out, result),
            Results::Shaped {
                result,
                format,
                call_id,
                name,
            } => {
                let shape = convert::ResultShape {
                    format: *format,
                    call_id,
                    name,
                };
                convert::write_shaped_result_json(out, result, Some(shape));
            }
        }
    }

    /// The `result` JSON text alone, for a caller without a [`DirectReply`] slot.
    pub fn to_json(&self) -> Box<serde_json::value::RawValue> {
        let mut text = String::with_capacity(self.capacity());
        self.write(&mut text);
        convert::raw_json(text)
    }
}
