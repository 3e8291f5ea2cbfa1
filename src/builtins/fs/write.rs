//! `write`: creates or overwrites a file (and its missing parent directories) inside the root.

use super::file_error;
use super::root::FsRoot;
use crate::builtins::present::{self, WritePresenter};
use crate::builtins::typed::{self, TextRenderer};
use crate::registry::RegistryError;
use crate::tool::{Concurrency, Render, ToolDefinition, ToolError, ToolRunContext};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;

#[derive(Deserialize)]
struct WriteArgs {
    file_path: String,
    content: String,
}

/// The canonical value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WriteOutput {
    /// Root-relative path.
    pub path: String,
    /// UTF-8 bytes written.
    pub bytes: u64,
    /// Whether the file did not exist before.
    pub created: bool,
}

/// The `write` definition.
pub fn definition(root: Arc<FsRoot>) -> Result<ToolDefinition, RegistryError> {
    let description = format!(
        "Write a file inside the workspace root {root}, replacing it if it exists and creating \
         missing parent directories. Paths are relative to the root, or absolute inside it.",
        root = root.path().display()
    );
    ToolDefinition::builder("write")
        .description(description)
        .parameters(json!({
            "file_path": { "type": "string", "required": true, "description": "The file to write (relative to the root, or absolute inside it)." },
            "content": { "type": "string", "required": true, "description": "The complete new content." }
        }))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": { "type": "string", "required": true },
                "bytes": { "type": "integer", "required": true },
                "created": { "type": "boolean", "required": true }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .concurrency(Concurrency::Exclusive)
        .presenter(Arc::new(WritePresenter))
        .presentation_meta(present::write_meta())
        .body(move |ctx: ToolRunContext| {
            let root = root.clone();
            async move {
                let args: WriteArgs = typed::arguments(ctx.arguments())?;
                let output = typed::blocking(move || write(&root, &args)).await?;
                typed::output(&output)
            }
        })
}

fn write(root: &FsRoot, args: &WriteArgs) -> Result<WriteOutput, ToolError> {
    let requested = &args.file_path;
    let confined = root.resolve(requested)?;
    let created = match std::fs::metadata(&confined.path) {
        Ok(meta) if meta.is_file() => false,
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::new(format!(
                "\"{requested}\" is a directory, not a file"
            )));
        }
        Ok(_) => {
            return Err(ToolError::new(format!(
                "\"{requested}\" is not a regular file"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(file_error("write", requested, &e)),
    };
    if let Some(parent) = confined.path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| file_error("write", requested, &e))?;
    }
    std::fs::write(&confined.path, &args.content)
        .map_err(|e| file_error("write", requested, &e))?;
    Ok(WriteOutput {
        path: confined.display,
        bytes: args.content.len() as u64,
        created,
    })
}

fn render(output: &WriteOutput) -> String {
    let verb = if output.created {
        "Created"
    } else {
        "Overwrote"
    };
    format!("{verb} {} ({} bytes)", output.path, output.bytes)
}
