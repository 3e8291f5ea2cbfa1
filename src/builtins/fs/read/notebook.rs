//! Jupyter notebooks (`.ipynb`, nbformat 4): every cell with its type, source and outputs.
//! Text outputs (streams, `text/plain` results, errors) are cut at [`MAX_OUTPUT_CHARS`];
//! image outputs (`image/png`, `image/jpeg`, ...) become image blocks, fitted like an image
//! file, at most [`MAX_IMAGES`] per call.

use super::image::{self as picture, Format};
use crate::tool::ToolError;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Characters kept of one text output.
pub const MAX_OUTPUT_CHARS: usize = 10_000;
/// Image outputs sent per call; later ones are named, not sent.
pub const MAX_IMAGES: usize = 20;

/// The `notebook` value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookRead {
    /// Root-relative path.
    pub path: String,
    /// The kernel's language, when the notebook says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The cells, in order.
    pub cells: Vec<NotebookCell>,
}

/// One cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookCell {
    /// 0-based position.
    pub index: u64,
    /// The cell's `id`, when it has one (nbformat 4.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `code`, `markdown` or `raw`.
    pub cell_type: String,
    /// The source text.
    pub source: String,
    /// A code cell's execution count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_count: Option<i64>,
    /// A code cell's outputs.
    pub outputs: Vec<CellOutput>,
}

/// One output: text, or an image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CellOutput {
    /// `stream`, `execute_result`, `display_data` or `error`.
    pub output_type: String,
    /// Its text (cut at [`MAX_OUTPUT_CHARS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// An image output's MIME type (as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// An image output's data, base64 (as sent; left out of the persisted metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// Parses the notebook in `bytes`.
pub fn read(display: String, requested: &str, bytes: &[u8]) -> Result<NotebookRead, ToolError> {
    let invalid =
        |why: &str| ToolError::new(format!("\"{requested}\" is not a Jupyter notebook: {why}"));
    let notebook: Value = serde_json::from_slice(bytes).map_err(|e| invalid(&e.to_string()))?;
    let cells = notebook
        .get("cells")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("it has no \"cells\" list"))?;
    let language = notebook
        .pointer("/metadata/language_info/name")
        .or_else(|| notebook.pointer("/metadata/kernelspec/language"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut images = 0;
    let cells = cells
        .iter()
        .enumerate()
        .map(|(index, cell)| NotebookCell {
            index: index as u64,
            id: cell.get("id").and_then(Value::as_str).map(str::to_owned),
            cell_type: cell
                .get("cell_type")
                .and_then(Value::as_str)
                .unwrap_or("code")
                .to_owned(),
            source: multiline(cell.get("source")),
            execution_count: cell.get("execution_count").and_then(Value::as_i64),
            outputs: cell
                .get("outputs")
                .and_then(Value::as_array)
                .map(|outputs| outputs.iter().map(|o| output(o, &mut images)).collect())
                .unwrap_or_default(),
        })
        .collect();
    Ok(NotebookRead {
        path: display,
        language,
        cells,
    })
}

/// nbformat's multiline string: a string, or a list of lines to join.
fn multiline(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn output(output: &Value, images: &mut usize) -> CellOutput {
    let output_type = output
        .get("output_type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    let text_output = |text: String| CellOutput {
        output_type: output_type.clone(),
        text: Some(cut(text)),
        mime_type: None,
        data: None,
    };
    match output_type.as_str() {
        "stream" => text_output(multiline(output.get("text"))),
        "error" => {
            let name = output
                .get("ename")
                .and_then(Value::as_str)
                .unwrap_or("Error");
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or("");
            let mut text = format!("{name}: {value}");
            let traceback = output.get("traceback").and_then(Value::as_array);
            for line in traceback.into_iter().flatten().filter_map(Value::as_str) {
                text.push('\n');
                text.push_str(&strip_ansi(line));
            }
            text_output(text)
        }
        _ => {
            let data = output.get("data");
            let image = ["image/png", "image/jpeg", "image/gif", "image/webp"]
                .into_iter()
                .find_map(|mime| Some((mime, data?.get(mime)?)));
            if let Some((mime, encoded)) = image {
                *images += 1;
                if *images > MAX_IMAGES {
                    return text_output(format!(
                        "[{mime} output not sent: at most {MAX_IMAGES} images per read]"
                    ));
                }
                return match image_output(mime, &multiline(Some(encoded))) {
                    Ok(fitted) => CellOutput {
                        output_type,
                        text: None,
                        mime_type: Some(fitted.format.mime().to_owned()),
                        data: Some(fitted.base64()),
                    },
                    Err(why) => text_output(format!("[{mime} output not readable: {why}]")),
                };
            }
            text_output(multiline(data.and_then(|data| data.get("text/plain"))))
        }
    }
}

/// An image output's base64 (nbformat may wrap it in lines) decoded and fitted.
fn image_output(mime: &str, encoded: &str) -> Result<picture::Fitted, String> {
    let clean: String = encoded.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| e.to_string())?;
    let format = Format::of_magic(&bytes)
        .or_else(|| Format::of_mime(mime))
        .ok_or("unknown image format")?;
    picture::fit(format, bytes)
}

/// `text` cut at [`MAX_OUTPUT_CHARS`], saying how much was left out.
fn cut(text: String) -> String {
    match text.char_indices().nth(MAX_OUTPUT_CHARS) {
        None => text,
        Some((at, _)) => {
            let left = text[at..].chars().count();
            format!(
                "{}\n[... {left} more characters not shown ...]",
                &text[..at]
            )
        }
    }
}

/// A traceback line without its terminal colour codes.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The text before each image output, and the images, in order: what the model reads.
pub fn blocks(notebook: &NotebookRead) -> Vec<crate::tool::ContentBlock> {
    use crate::tool::ContentBlock;
    let mut blocks = Vec::new();
    let mut text = format!(
        "Notebook {} ({} cells{})",
        notebook.path,
        notebook.cells.len(),
        notebook
            .language
            .as_ref()
            .map(|language| format!(", {language}"))
            .unwrap_or_default()
    );
    for cell in &notebook.cells {
        let count = cell
            .execution_count
            .map(|n| format!(" [{n}]"))
            .unwrap_or_default();
        text.push_str(&format!(
            "\n\n<cell {} {}{count}>\n{}\n</cell {}>",
            cell.index, cell.cell_type, cell.source, cell.index
        ));
        for output in &cell.outputs {
            match (&output.text, &output.mime_type, &output.data) {
                (_, Some(mime), Some(data)) => {
                    text.push_str(&format!("\n<output {} {mime}>", output.output_type));
                    blocks.push(ContentBlock::text(std::mem::take(&mut text)));
                    blocks.push(super::image_block(data.clone(), mime.clone()));
                }
                (Some(out), _, _) => {
                    text.push_str(&format!("\n<output {}>\n{out}", output.output_type));
                }
                _ => {}
            }
        }
    }
    if !text.is_empty() {
        blocks.push(ContentBlock::text(text));
    }
    blocks
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cells_keep_their_type_source_and_outputs() {
        let notebook = json!({
            "metadata": { "language_info": { "name": "python" } },
            "nbformat": 4,
            "cells": [
                { "cell_type": "markdown", "source": ["# Title\n", "text"] },
                { "cell_type": "code", "execution_count": 2, "source": "print(1)",
                  "outputs": [
                    { "output_type": "stream", "name": "stdout", "text": ["1\n"] },
                    { "output_type": "execute_result", "data": { "text/plain": ["'x'"] } },
                    { "output_type": "error", "ename": "ValueError", "evalue": "bad",
                      "traceback": ["\u{1b}[0;31mValueError\u{1b}[0m: bad"] }
                  ] }
            ]
        });
        let read = read("n.ipynb".into(), "n.ipynb", notebook.to_string().as_bytes()).unwrap();
        assert_eq!(read.language.as_deref(), Some("python"));
        assert_eq!(read.cells[0].source, "# Title\ntext");
        assert_eq!(read.cells[1].execution_count, Some(2));
        let texts: Vec<_> = read.cells[1]
            .outputs
            .iter()
            .map(|o| o.text.clone().unwrap())
            .collect();
        assert_eq!(texts, ["1\n", "'x'", "ValueError: bad\nValueError: bad"]);
    }

    #[test]
    fn long_outputs_are_cut_and_non_notebooks_refused() {
        let long = "y".repeat(MAX_OUTPUT_CHARS + 7);
        let cut = cut(long);
        assert!(
            cut.ends_with("[... 7 more characters not shown ...]"),
            "{cut}"
        );
        assert!(read("a".into(), "a", b"{}").is_err());
        assert!(read("a".into(), "a", b"not json").is_err());
    }
}
