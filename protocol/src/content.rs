//! Model-facing content blocks and context messages (MCP's content shapes).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One model-facing content block: `{ type: "text", text }`, `{ type: "image", data, mimeType }`,
/// or any other MCP content block (kept verbatim).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum ContentBlock {
    /// Plain text.
    Text(TextContent),
    /// Base64 image data.
    Image(ImageContent),
    /// Any other MCP block (audio, resource, resource_link), passed through.
    Other(
        #[ts(type = "{ type: string; [key: string]: unknown }")]
        serde_json::Map<String, serde_json::Value>,
    ),
}

/// `{ type: "text", text }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct TextContent {
    /// Always `"text"`.
    #[serde(rename = "type")]
    #[ts(type = "\"text\"")]
    pub kind: TextTag,
    /// The text.
    pub text: String,
}

/// The `"text"` tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub enum TextTag {
    /// `"text"`
    #[serde(rename = "text")]
    Text,
}

/// `{ type: "image", data, mimeType }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageContent {
    /// Always `"image"`.
    #[serde(rename = "type")]
    #[ts(type = "\"image\"")]
    pub kind: ImageTag,
    /// Base64 data.
    pub data: String,
    /// MIME type such as `image/png`.
    pub mime_type: String,
}

/// The `"image"` tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub enum ImageTag {
    /// `"image"`
    #[serde(rename = "image")]
    Image,
}

impl ContentBlock {
    /// The block's `type` (`text`, `image`, or whatever another MCP block says it is).
    pub fn type_name(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Other(fields) => fields
                .get("type")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("unknown"),
        }
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            kind: TextTag::Text,
            text: text.into(),
        })
    }
}

/// A context message deferred until after a tool result (`additionalContexts`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ContextMessage {
    /// Always `"user"`.
    pub role: ContextRole,
    /// Text or content blocks.
    pub content: ContextContent,
    /// Who produced it: any JSON value (the seed uses `{ kind: "plugin", plugin }`), passed
    /// through verbatim.
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Value>")]
    #[ts(optional, type = "JsonValue")]
    pub source: Option<serde_json::Value>,
    /// Free-form metadata kept with the message: any JSON object, passed through verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "{ [key in string]?: JsonValue }")]
    pub meta: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A key that is present is kept, `null` included (`Option` alone would read `null` as
/// absent and drop it on the way out).
fn present_value<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    <serde_json::Value as Deserialize>::deserialize(deserializer).map(Some)
}

/// The role of a context message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub enum ContextRole {
    /// `"user"`
    #[serde(rename = "user")]
    User,
}

/// A string or a list of content blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum ContextContent {
    /// Plain text.
    Text(String),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}
