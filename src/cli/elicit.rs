//! Elicitation without a front end: `dsh-tools run` on a terminal asks the person (each
//! form field with its default, or the page to open, then send / decline / cancel);
//! `--elicit defaults` accepts forms with their defaults; otherwise servers' requests are
//! declined saying why. `dsh-tools mcp` asks its client and falls back to `--elicit`.

use dsh_tools::mcp::elicitation::{Answer, Defaults, Elicitation, Elicitor, Modes, Nobody, note};
use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

/// `--elicit`: how servers' elicitations are answered when no one is asked.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElicitPolicy {
    /// Accept a form with its schema's defaults (decline when a required field has none).
    Defaults,
    /// Decline every request, even on a terminal.
    Decline,
}

/// Who answers for `dsh-tools run`; every decline it makes is also printed to stderr,
/// since the program's value may not show it (a structured result keeps the server's).
pub fn for_run(policy: Option<ElicitPolicy>) -> Arc<dyn Elicitor> {
    Arc::new(Reported(answering(policy)))
}

fn answering(policy: Option<ElicitPolicy>) -> Arc<dyn Elicitor> {
    match policy {
        Some(ElicitPolicy::Defaults) => Arc::new(Defaults),
        Some(ElicitPolicy::Decline) => Arc::new(Nobody("--elicit decline was given".into())),
        None if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
            Arc::new(Terminal::default())
        }
        None => Arc::new(Nobody(
            "no one can be asked: dsh-tools run is not on a terminal and --elicit defaults was not given"
                .into(),
        )),
    }
}

/// Prints each decline the inner elicitor makes (`dsh-tools run: <note>`).
struct Reported(Arc<dyn Elicitor>);

impl Elicitor for Reported {
    fn modes(&self) -> Modes {
        self.0.modes()
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, Answer> {
        let (server, params) = (request.server.clone(), request.params.clone());
        let asked = self.0.elicit(request);
        Box::pin(async move {
            let answer = asked.await;
            if let Some(why) = &answer.declined_because {
                let line = format!("dsh-tools run: {}\n", note(&server, &params, why));
                let _ = std::io::stderr().write_all(line.as_bytes());
            }
            answer
        })
    }
}

/// What `dsh-tools mcp` falls back to for a client that cannot be asked.
pub fn fallback(policy: Option<ElicitPolicy>) -> Option<Arc<dyn Elicitor>> {
    match policy {
        Some(ElicitPolicy::Defaults) => Some(Arc::new(Defaults)),
        Some(ElicitPolicy::Decline) | None => None,
    }
}

/// Asks the person at the terminal, one request at a time.
#[derive(Default)]
pub struct Terminal {
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl Elicitor for Terminal {
    fn modes(&self) -> Modes {
        Modes::ALL
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, Answer> {
        let turn = self.turn.clone();
        Box::pin(async move {
            let _turn = turn.lock().await;
            let asked = tokio::task::spawn_blocking(move || {
                let (input, mut output) = (std::io::stdin(), std::io::stderr());
                ask(&mut input.lock(), &mut output, &request)
            });
            asked.await.unwrap_or_else(|_| Answer::cancelled())
        })
    }
}

/// Puts one request to the person reading `output` and typing into `input`; the end of
/// the input cancels.
pub fn ask(input: &mut impl BufRead, output: &mut impl Write, request: &Elicitation) -> Answer {
    let server = &request.server;
    let asked = match &request.params {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let _ = writeln!(output, "dsh-tools: MCP server \"{server}\" asks: {message}");
            let schema = serde_json::to_value(requested_schema).unwrap_or_default();
            form(input, output, &schema).and_then(|content| {
                confirm(input, output, "Send these answers?").map(|action| (action, content))
            })
        }
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            let _ = writeln!(
                output,
                "dsh-tools: MCP server \"{server}\" asks you to open a page: {message}\n  {url}"
            );
            confirm(input, output, "Open it?").map(|action| (action, Map::new()))
        }
        _ => None,
    };
    match asked {
        Some((ElicitationAction::Accept, content))
            if matches!(
                request.params,
                ElicitRequestParams::FormElicitationParams { .. }
            ) =>
        {
            Answer::given(
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)),
            )
        }
        Some((action, _)) => Answer::given(ElicitResult::new(action)),
        None => Answer::cancelled(),
    }
}

/// Each field in turn: empty takes its default (or leaves an optional field out), a value
/// that does not fit its type is asked again. `None` at the end of the input.
fn form(
    input: &mut impl BufRead,
    output: &mut impl Write,
    schema: &Value,
) -> Option<Map<String, Value>> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    let Some(properties) = schema["properties"].as_object() else {
        return Some(content);
    };
    for (name, field) in properties {
        let mut prompt = format!("  {name}");
        if let Some(about) = field["description"].as_str().or(field["title"].as_str()) {
            prompt.push_str(&format!(" ({about})"));
        }
        if let Some(choices) = field["enum"].as_array() {
            let choices: Vec<String> = choices.iter().map(|c| c.to_string()).collect();
            prompt.push_str(&format!(" one of {}", choices.join(", ")));
        }
        if let Some(default) = field.get("default") {
            prompt.push_str(&format!(" [{default}]"));
        }
        loop {
            let _ = write!(output, "{prompt}: ");
            let _ = output.flush();
            let line = read_line(input)?;
            if line.is_empty() {
                match field.get("default") {
                    Some(default) => {
                        content.insert(name.clone(), default.clone());
                    }
                    None if required.contains(&name.as_str()) => {
                        let _ = writeln!(output, "  {name} is required");
                        continue;
                    }
                    None => {}
                }
                break;
            }
            match typed(field, &line) {
                Some(value) => {
                    content.insert(name.clone(), value);
                    break;
                }
                None => {
                    let kind = field["type"].as_str().unwrap_or("value");
                    let _ = writeln!(output, "  {name} takes a {kind}");
                }
            }
        }
    }
    Some(content)
}

/// `line` as the field's type, if it is one.
fn typed(field: &Value, line: &str) -> Option<Value> {
    let value = match field["type"].as_str() {
        Some("integer") => Value::from(line.parse::<i64>().ok()?),
        Some("number") => serde_json::Number::from_f64(line.parse::<f64>().ok()?)?.into(),
        Some("boolean") => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return None,
        },
        _ => Value::String(line.to_owned()),
    };
    match field["enum"].as_array() {
        Some(choices) if !choices.contains(&value) => None,
        _ => Some(value),
    }
}

/// Yes (the default), no (decline) or cancel.
fn confirm(
    input: &mut impl BufRead,
    output: &mut impl Write,
    question: &str,
) -> Option<ElicitationAction> {
    loop {
        let _ = write!(output, "{question} [Y]es / [n]o (decline) / [c]ancel: ");
        let _ = output.flush();
        match read_line(input)?.to_ascii_lowercase().as_str() {
            "" | "y" | "yes" => return Some(ElicitationAction::Accept),
            "n" | "no" => return Some(ElicitationAction::Decline),
            "c" | "cancel" => return Some(ElicitationAction::Cancel),
            _ => {}
        }
    }
}

/// One trimmed line; `None` at the end of the input.
fn read_line(input: &mut impl BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_tools::tool::Signal;
    use serde_json::json;

    fn request(params: Value) -> Elicitation {
        Elicitation {
            server: "hotel".into(),
            call: None,
            signal: Signal::never(),
            params: serde_json::from_value(params).unwrap(),
        }
    }

    fn booking() -> Elicitation {
        request(
            json!({ "mode": "form", "message": "Who is the booking for?",
            "requestedSchema": { "type": "object", "required": ["guest"], "properties": {
                "guest": { "type": "string", "description": "Name on the booking" },
                "nights": { "type": "integer", "default": 2 },
                "breakfast": { "type": "boolean", "default": true } } } }),
        )
    }

    fn typed_in(answers: &str, request: &Elicitation) -> (Answer, String) {
        let mut shown = Vec::new();
        let answer = ask(&mut answers.as_bytes(), &mut shown, request);
        (answer, String::from_utf8(shown).unwrap())
    }

    #[test]
    fn a_form_is_filled_field_by_field_with_defaults_and_retries() {
        // guest left empty (required: asked again), nights mistyped, breakfast defaulted.
        let (answer, shown) = typed_in("\nAda\nfour\n4\n\ny\n", &booking());
        assert_eq!(answer.result.action, ElicitationAction::Accept);
        assert_eq!(
            answer.result.content,
            Some(json!({ "guest": "Ada", "nights": 4, "breakfast": true }))
        );
        assert!(shown.starts_with("dsh-tools: MCP server \"hotel\" asks: Who is the booking for?\n  guest (Name on the booking): "), "{shown}");
        assert!(
            shown.contains("guest is required") && shown.contains("nights takes a integer"),
            "{shown}"
        );
        assert!(
            shown.contains("  nights [2]: ") && shown.contains("Send these answers?"),
            "{shown}"
        );
    }

    #[test]
    fn a_form_can_be_declined_or_cancelled_and_the_end_of_input_cancels() {
        let (declined, _) = typed_in("Ada\n\n\nn\n", &booking());
        assert_eq!(declined.result.action, ElicitationAction::Decline);
        assert_eq!(declined.result.content, None);
        let (cancelled, _) = typed_in("Ada\n\n\nc\n", &booking());
        assert_eq!(cancelled.result.action, ElicitationAction::Cancel);
        let (ended, _) = typed_in("Ada\n", &booking());
        assert_eq!(ended.result.action, ElicitationAction::Cancel);
    }

    #[test]
    fn a_url_is_shown_and_opening_it_is_accepted() {
        let url = request(json!({ "mode": "url", "message": "Authorize the calendar",
            "url": "https://example.com/authorize", "elicitationId": "a1" }));
        let (answer, shown) = typed_in("y\n", &url);
        assert_eq!(answer.result.action, ElicitationAction::Accept);
        assert_eq!(answer.result.content, None);
        assert!(
            shown.contains(
                "asks you to open a page: Authorize the calendar\n  https://example.com/authorize\n"
            ),
            "{shown}"
        );
    }
}
