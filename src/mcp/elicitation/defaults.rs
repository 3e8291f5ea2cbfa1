//! `--elicit defaults`: a form is accepted with its schema's defaults, for runs nobody
//! watches; a form with a required field that has no default, and every URL elicitation
//! (it needs a person to open the page), are declined saying so.

use super::{Answer, Elicitation, Elicitor, Modes};
use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};

/// Answers forms with their defaults.
pub struct Defaults;

impl Elicitor for Defaults {
    fn modes(&self) -> Modes {
        Modes::FORM
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, Answer> {
        let answer = match &request.params {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => match serde_json::to_value(requested_schema)
                .map_err(|e| e.to_string())
                .and_then(|schema| defaults(&schema))
            {
                Ok(content) => Answer::given(
                    ElicitResult::new(ElicitationAction::Accept)
                        .with_content(Value::Object(content)),
                ),
                Err(why) => Answer::declined(format!("--elicit defaults: {why}")),
            },
            _ => Answer::declined(
                "--elicit defaults answers forms only: a URL elicitation needs a person to open the page",
            ),
        };
        Box::pin(async move { answer })
    }
}

/// Each property's `default`; a required property without one is the error (it names
/// the field), an optional one is left out.
pub fn defaults(schema: &Value) -> Result<Map<String, Value>, String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            match property.get("default") {
                Some(default) => {
                    content.insert(name.clone(), default.clone());
                }
                None if required.contains(&name.as_str()) => {
                    return Err(format!(
                        "the form's required field \"{name}\" has no default"
                    ));
                }
                None => {}
            }
        }
    }
    Ok(content)
}
