//! Anticipation, a [`RequestHook`]: a `tools/execute` of the Code Mode entry gets its
//! isolate ready before the request is served.
//!
//! A spaced run meets an isolate whose caches went cold while it waited. The isolate's
//! thread can warm up on the other core (`IsolatePool::anticipate`) while this one parses
//! the request and runs the pipeline's stages, but only if it hears of the run early: told
//! when the call reached the pipeline, the warm-up was still running when the job arrived.
//! So the frame is looked at as soon as it is read, by a borrowed parse of the two fields
//! that decide (the method's own parse follows, unchanged). A request that then fails (bad
//! params, a denial) has only cost the other core a warm-up.

use super::router::RequestHook;
use crate::code_mode::CodeMode;
use crate::pipeline::ToolRuntime;
use crate::tool::AgentId;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::sync::Arc;

/// Params longer than this are not looked at: the look reads them whole, and a program
/// this long costs far more in its own compilation than a cold cache does.
const LOOKED_AT_BYTES: usize = 64 * 1024;

/// The fields of `tools/execute` params that say whether a top-level run is coming.
#[derive(Deserialize)]
struct Execute<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    agent: Option<Cow<'a, str>>,
}

/// The hook over one host's runtime and Code Mode.
pub struct Anticipation {
    pub runtime: Arc<ToolRuntime>,
    pub code: Arc<CodeMode>,
}

impl RequestHook for Anticipation {
    fn on_request(&self, method: &str, params: Option<&RawValue>) {
        let Some(execute) = execute_params(method, params) else {
            return;
        };
        let entry = self.runtime.registry().host_tool(&execute.name);
        if entry.is_some_and(|tool| tool.definition.role.is_code_entry()) {
            let agent = execute.agent.map(|agent| AgentId::from(agent.as_ref()));
            self.code.anticipate(&self.runtime, agent.as_ref());
        }
    }
}

/// The tool name and agent of `tools/execute` params; `None` for any other method,
/// malformed params, and params over [`LOOKED_AT_BYTES`].
fn execute_params<'a>(method: &str, params: Option<&'a RawValue>) -> Option<Execute<'a>> {
    let params = params?.get();
    if method != "tools/execute" || params.len() > LOOKED_AT_BYTES {
        return None;
    }
    serde_json::from_str(params).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn check(method: &str, params: &str) -> Option<(String, Option<String>)> {
        let params = RawValue::from_string(params.to_owned()).unwrap();
        execute_params(method, Some(&params))
            .map(|e| (e.name.into_owned(), e.agent.map(Cow::into_owned)))
    }

    #[test]
    fn only_tools_execute_params_are_read_with_their_agent() {
        let run = r#"{"callId":"c","name":"entry","arguments":{"code":"return 1"}}"#;
        assert_eq!(check("tools/execute", run), Some(("entry".into(), None)));
        let scoped = r#"{"callId":"c","name":"entry","agent":"reviewer","arguments":{}}"#;
        assert_eq!(
            check("tools/execute", scoped),
            Some(("entry".into(), Some("reviewer".to_owned())))
        );
        // Escaped names are decoded.
        let escaped = r#"{"callId":"c","name":"en\u0074ry"}"#;
        assert_eq!(
            check("tools/execute", escaped),
            Some(("entry".into(), None))
        );
        assert_eq!(check("tools/executeBatch", run), None);
        assert_eq!(check("tools/execute", r#"{"name":7}"#), None);
        assert_eq!(check("tools/execute", "[1]"), None);
        assert!(execute_params("tools/execute", None).is_none());
        // Params of exactly the limit are looked at, one byte more are not.
        let sized = |bytes: usize| {
            let frame =
                |code: &str| format!(r#"{{"name":"entry","arguments":{{"code":"{code}"}}}}"#);
            frame(&"x".repeat(bytes - frame("").len()))
        };
        assert!(check("tools/execute", &sized(LOOKED_AT_BYTES)).is_some());
        assert_eq!(check("tools/execute", &sized(LOOKED_AT_BYTES + 1)), None);
    }
}
