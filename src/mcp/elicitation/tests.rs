//! Defaults of a form, attribution of a request to the call in flight, and the note a
//! host-made decline leaves on that call's result.

use super::defaults::defaults;
use super::*;
use crate::tool::{ExecutionToken, Progress};
use rmcp::model::ElicitationSchema;
use serde_json::json;

fn form(schema: serde_json::Value) -> ElicitRequestParams {
    let requested_schema: ElicitationSchema = serde_json::from_value(schema).unwrap();
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Who is the booking for?".into(),
        requested_schema,
    }
}

fn context(name: &str) -> ToolRunContext {
    let execution = Arc::new(ToolExecution {
        token: ExecutionToken::fresh(),
        call_id: "c".into(),
        name: name.into(),
        arguments: Arc::new(json!({})),
        agent: None,
        parent: None,
        signal: Signal::never(),
    });
    ToolRunContext::new(
        execution,
        Signal::never(),
        name.into(),
        Progress::default(),
        Arc::default(),
    )
}

#[test]
fn defaults_fill_a_form_and_a_required_field_without_one_is_named() {
    let schema = json!({ "type": "object",
        "properties": { "nights": { "type": "integer", "default": 2 },
                        "note": { "type": "string" },
                        "breakfast": { "type": "boolean", "default": true } } });
    assert_eq!(
        Value::Object(defaults(&schema).unwrap()),
        json!({ "nights": 2, "breakfast": true })
    );
    let mut required = schema.clone();
    required["properties"]["guest"] = json!({ "type": "string" });
    required["required"] = json!(["guest"]);
    assert_eq!(
        defaults(&required).unwrap_err(),
        "the form's required field \"guest\" has no default"
    );
}

use serde_json::Value;

#[tokio::test]
async fn the_defaults_elicitor_accepts_forms_and_declines_urls() {
    let request = |params| Elicitation {
        server: "s".into(),
        call: None,
        signal: Signal::never(),
        params,
    };
    let accepted = Defaults
        .elicit(request(form(json!({ "type": "object",
            "properties": { "room": { "type": "string", "default": "double" } } }))))
        .await;
    assert_eq!(accepted.result.action, ElicitationAction::Accept);
    assert_eq!(accepted.result.content, Some(json!({ "room": "double" })));
    let url = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: "Authorize".into(),
        url: "https://example.com".into(),
        elicitation_id: "1".into(),
    };
    let declined = Defaults.elicit(request(url)).await;
    assert_eq!(declined.result.action, ElicitationAction::Decline);
    assert!(
        declined.declined_because.unwrap().contains("forms only"),
        "the reason names the mode"
    );
    assert_eq!(Defaults.modes().capability().unwrap().url, None);
}

#[tokio::test]
async fn a_host_decline_is_noted_on_the_most_recent_call_in_flight() {
    let asking = Arc::new(Asking::new("hotel".into()));
    assert_eq!(asking.modes().capability(), None);
    let first = asking.open(&context("mcp__hotel__a"));
    let second = asking.open(&context("mcp__hotel__book"));
    let schema = json!({ "type": "object", "properties": {} });
    let answer = asking.ask(form(schema)).await;
    assert_eq!(answer.action, ElicitationAction::Decline);
    let untouched = first.noted(Ok(BodyOutput::from(json!("a"))));
    assert_eq!(untouched.unwrap().content, None);
    let noted = second
        .noted(Ok(BodyOutput::from(json!("declined"))))
        .unwrap();
    let content = noted.content.unwrap();
    let note = "MCP server \"hotel\" asked for input (form elicitation: \"Who is the booking for?\") \
                and dsh-tools declined it: no front end answers elicitation";
    assert_eq!(
        content,
        [ContentBlock::text("\"declined\""), ContentBlock::text(note)]
    );
    assert_eq!(noted.value, json!(format!("declined\n{note}")));
    assert!(
        asking.open.lock().is_empty(),
        "guards deregister their calls"
    );
}
