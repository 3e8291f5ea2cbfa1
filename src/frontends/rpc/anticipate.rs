//! A `run_code` request read off the wire gets its isolate ready before the request is served.
//!
//! A spaced run meets an isolate whose caches went cold while it waited, and about half of a
//! trivial run's time in it is those misses. The isolate's thread can warm up on the other
//! core (`IsolatePool::anticipate`) while this one parses the request and runs the pipeline's
//! stages, but only if it hears of the run early: told when the call reached the pipeline,
//! the warm-up still ran when the job arrived and the run was no faster. So the frame is
//! looked at here, as soon as it is known to be a `tools/execute` request, by a borrowed
//! parse of the two fields that decide (the method's own parse follows, unchanged). A
//! request that then fails (bad params, a denial) has only cost the other core a warm-up.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

use crate::registry::RUN_CODE;

/// Params longer than this are not looked at: the look reads them whole, and a program this
/// long spends far more than a cold cache's 150 µs in its own compilation.
const LOOKED_AT_BYTES: usize = 64 * 1024;

/// The fields of `tools/execute` params that say whether a top-level run is coming.
#[derive(Deserialize)]
struct Execute<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    agent: Option<Cow<'a, str>>,
}

/// `Some(agent)` when `method` with `params` is a `tools/execute` of `run_code` (the agent
/// whose scope it runs in, if any); `None` for anything else, malformed params included, and
/// for params over [`LOOKED_AT_BYTES`].
pub(super) fn run_code_request(method: &str, params: Option<&RawValue>) -> Option<Option<String>> {
    let params = params?.get();
    if method != "tools/execute" || params.len() > LOOKED_AT_BYTES {
        return None;
    }
    let execute: Execute = serde_json::from_str(params).ok()?;
    (execute.name == RUN_CODE).then(|| execute.agent.map(Cow::into_owned))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn check(method: &str, params: &str) -> Option<Option<String>> {
        let params = RawValue::from_string(params.to_owned()).unwrap();
        run_code_request(method, Some(&params))
    }

    #[test]
    fn only_a_tools_execute_of_run_code_is_anticipated_with_its_agent() {
        let run = r#"{"callId":"c","name":"run_code","arguments":{"code":"return 1"}}"#;
        assert_eq!(check("tools/execute", run), Some(None));
        let scoped = r#"{"callId":"c","name":"run_code","agent":"reviewer","arguments":{}}"#;
        assert_eq!(
            check("tools/execute", scoped),
            Some(Some("reviewer".to_owned()))
        );
        // Escaped names are compared decoded.
        let escaped = r#"{"callId":"c","name":"run\u005fcode"}"#;
        assert_eq!(check("tools/execute", escaped), Some(None));
        assert_eq!(
            check("tools/execute", r#"{"callId":"c","name":"read"}"#),
            None
        );
        assert_eq!(check("tools/executeBatch", run), None);
        assert_eq!(check("tools/execute", r#"{"name":7}"#), None);
        assert_eq!(check("tools/execute", "[1]"), None);
        assert_eq!(run_code_request("tools/execute", None), None);
        // Params of exactly the limit are looked at, one byte more are not.
        let sized = |bytes: usize| {
            let frame =
                |code: &str| format!(r#"{{"name":"run_code","arguments":{{"code":"{code}"}}}}"#);
            frame(&"x".repeat(bytes - frame("").len()))
        };
        assert_eq!(check("tools/execute", &sized(LOOKED_AT_BYTES)), Some(None));
        assert_eq!(check("tools/execute", &sized(LOOKED_AT_BYTES + 1)), None);
    }
}
