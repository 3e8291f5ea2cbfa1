//! A result's final content as a provider's tool-result block, so a front end appends it
//! to the conversation as it is: text and images where the provider takes them, errors
//! flagged where it has a flag. Blocks a provider cannot carry become a text line saying
//! what was there.

use super::ProviderFormat;
use dsh_tools_protocol::ContentBlock;
use serde_json::{Map, Value, json};

/// The tool-result block answering the call `call_id` of tool `name`; `structured` is
/// MCP's `structuredContent` (an MCP server's own, else a success's value), kept when it is
/// an object.
pub fn tool_result(
    format: ProviderFormat,
    call_id: &str,
    name: &str,
    is_error: bool,
    content: &[ContentBlock],
    structured: Option<&Value>,
) -> Value {
    match format {
        ProviderFormat::Anthropic => {
            let blocks: Vec<Value> = content.iter().filter_map(anthropic_block).collect();
            let mut out = Map::new();
            out.insert("type".into(), Value::from("tool_result"));
            out.insert("tool_use_id".into(), Value::from(call_id));
            out.insert("content".into(), Value::Array(blocks));
            if is_error {
                out.insert("is_error".into(), Value::Bool(true));
            }
            Value::Object(out)
        }
        ProviderFormat::OpenaiResponses => {
            let images = content.iter().any(|b| matches!(b, ContentBlock::Image(_)));
            let output = if images {
                Value::Array(content.iter().filter_map(responses_part).collect())
            } else {
                Value::from(text_of(content))
            };
            json!({ "type": "function_call_output", "call_id": call_id, "output": output })
        }
        ProviderFormat::OpenaiChat => {
            json!({ "role": "tool", "tool_call_id": call_id, "content": text_of(content) })
        }
        ProviderFormat::Gemini => {
            let text = text_of(content);
            let response = if is_error {
                json!({ "error": text })
            } else {
                json!({ "output": text })
            };
            let mut out = Map::new();
            out.insert("id".into(), Value::from(call_id));
            out.insert("name".into(), Value::from(name));
            out.insert("response".into(), response);
            let parts: Vec<Value> = content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Image(image) => Some(json!({
                        "inlineData": { "mimeType": image.mime_type, "data": image.data }
                    })),
                    _ => None,
                })
                .collect();
            if !parts.is_empty() {
                out.insert("parts".into(), Value::Array(parts));
            }
            json!({ "functionResponse": Value::Object(out) })
        }
        ProviderFormat::Mcp => {
            let mut out = Map::new();
            let blocks = serde_json::to_value(content).unwrap_or_else(|_| json!([]));
            out.insert("content".into(), blocks);
            if let Some(structured) = structured.filter(|v| v.is_object()) {
                out.insert("structuredContent".into(), structured.clone());
            }
            out.insert("isError".into(), Value::Bool(is_error));
            Value::Object(out)
        }
    }
}

/// A block's text: its own, an embedded resource's, or a line naming what it was.
fn text_line(block: &ContentBlock) -> Option<String> {
    match block {
        ContentBlock::Text(text) => Some(text.text.clone()),
        ContentBlock::Image(image) => Some(format!(
            "[image content ({}) not carried here]",
            image.mime_type
        )),
        ContentBlock::Other(other) => {
            let resource_text = other
                .get("resource")
                .and_then(|r| r.get("text"))
                .and_then(Value::as_str);
            if let Some(text) = resource_text {
                return Some(text.to_owned());
            }
            let kind = other
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            let uri = other.get("uri").and_then(Value::as_str);
            Some(match uri {
                Some(uri) => format!("[{kind} content: {uri}]"),
                None => format!("[{kind} content not carried here]"),
            })
        }
    }
}

/// Every block as text, one after another.
fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(text_line)
        .collect::<Vec<_>>()
        .join("\n")
}

fn anthropic_block(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Image(image) => Some(json!({
            "type": "image",
            "source": { "type": "base64", "media_type": image.mime_type, "data": image.data },
        })),
        // Anthropic refuses empty text blocks.
        other => text_line(other)
            .filter(|text| !text.is_empty())
            .map(|text| json!({ "type": "text", "text": text })),
    }
}

fn responses_part(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Image(image) => Some(json!({
            "type": "input_image",
            "image_url": format!("data:{};base64,{}", image.mime_type, image.data),
        })),
        other => text_line(other).map(|text| json!({ "type": "input_text", "text": text })),
    }
}
