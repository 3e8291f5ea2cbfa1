//! `read` (Claude Code's Read): a window of a text file's lines numbered like `cat -n`; an
//! image (PNG, JPEG, GIF, WebP) as an image block; PDF pages as text; a Jupyter notebook's
//! cells with their outputs. The kind is told by the file's first bytes (its signature) and,
//! for notebooks, the `.ipynb` extension. Every successful read is recorded for stale-edit
//! protection (see `ledger`).

mod cards;
mod image;
mod notebook;
mod pdf;
mod text;

pub use image::ImageRead;
pub use notebook::{CellOutput, NotebookCell, NotebookRead};
pub use pdf::{PdfPage, PdfRead};
pub use text::NumberedLine;

use super::ledger::{Ledger, Seen};
use super::root::FsRoot;
use super::{file_error, regular_file};
use crate::builtins::typed;
use crate::tool::{
    CardMeta, Concurrency, ContentBlock, DefinitionError, Render, ToolDefinition, ToolError,
    ToolRunContext,
};
use dsh_tools_protocol::{ImageContent, ImageTag};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use text::{DEFAULT_LIMIT, INLINE_BYTES, MAX_LINE_CHARS, Opened, Window};
use tokio_util::sync::CancellationToken;

/// Largest image, PDF or notebook read (each is read whole into memory).
const MAX_MEDIA_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes looked at to tell the kind.
const SIGNATURE_BYTES: usize = 16;

#[derive(Deserialize)]
pub(super) struct ReadArgs {
    file_path: String,
    offset: Option<i64>,
    limit: Option<i64>,
    pages: Option<String>,
}

/// The canonical value: a text window (the shape `read` always had, untagged), or a
/// non-text read tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ReadOutput {
    /// An image, PDF pages or a notebook.
    Media(MediaRead),
    /// A text window.
    Text(TextRead),
}

/// A read of something other than text, tagged `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum MediaRead {
    /// `{ kind: "image", … }`.
    Image(ImageRead),
    /// `{ kind: "pdf", … }`.
    Pdf(PdfRead),
    /// `{ kind: "notebook", … }`.
    Notebook(NotebookRead),
}

/// A text file's window: each line keeping its file line number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextRead {
    /// Root-relative path.
    pub path: String,
    /// The 1-based first line requested.
    pub offset: u64,
    /// The lines returned.
    pub lines: Vec<NumberedLine>,
    /// Lines in the whole file.
    pub total_lines: u64,
}

/// What a file is, for `read`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Media(Media),
}

/// The kinds read whole into memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Media {
    Image(image::Format),
    Pdf,
    Notebook,
}

impl Kind {
    /// By signature first (a PNG named `.txt` is an image), then by extension.
    fn of(head: &[u8], display: &str) -> Kind {
        if let Some(format) = image::Format::of_magic(head) {
            return Kind::Media(Media::Image(format));
        }
        if head.starts_with(b"%PDF-") {
            return Kind::Media(Media::Pdf);
        }
        let notebook = std::path::Path::new(display)
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("ipynb"));
        match notebook {
            true => Kind::Media(Media::Notebook),
            false => Kind::Text,
        }
    }
}

/// A finished read: the value, and what the file looked like for the ledger.
struct Done {
    output: ReadOutput,
    path: PathBuf,
    seen: Seen,
}

/// The `read` definition; its reads are recorded in `ledger`.
pub fn definition(
    root: Arc<FsRoot>,
    ledger: Arc<Ledger>,
) -> Result<ToolDefinition, DefinitionError> {
    let description = format!(
        "Read a file inside the workspace root {root}. A text file returns up to \
         {DEFAULT_LIMIT} lines starting at `offset` (the 1-based line number, default 1), each \
         prefixed with its line number; lines longer than {MAX_LINE_CHARS} characters are cut. \
         An image (PNG, JPEG, GIF, WebP) is returned as an image, scaled down to at most \
         {edge} px on its long edge. A PDF returns the text of its pages: one of more than \
         {short} pages needs `pages` (for example \"1-5\"), at most {max} pages per call. A \
         Jupyter notebook (.ipynb) returns every cell with its outputs. Paths are relative to \
         the root, or absolute inside it (or inside the host's spill directory, where results \
         too large to show are saved).",
        root = root.path().display(),
        edge = image::MAX_LONG_EDGE,
        short = pdf::PAGES_WITHOUT_RANGE,
        max = pdf::MAX_PAGES,
    );
    ToolDefinition::builder("read")
        .description(description)
        .parameters(json!({
            "file_path": { "type": "string", "required": true, "description": "The file to read (relative to the root, or absolute inside it)." },
            "offset": { "type": "integer", "description": "1-based line number to start at (text files)." },
            "limit": { "type": "integer", "description": "Number of lines to read (text files)." },
            "pages": { "type": "string", "description": "Page range of a PDF, such as \"1-5\", \"3\" or \"1-3,7\" (at most 20 pages)." }
        }))
        .output(output_schema())
        .render(Render::Custom(Arc::new(typed::BlocksRenderer(blocks))))
        .concurrency(Concurrency::Parallel)
        .idempotent(true)
        .cards(Arc::new(cards::ReadCards))
        .card_meta(card_meta())
        .body(move |ctx: ToolRunContext| {
            let (root, ledger) = (root.clone(), ledger.clone());
            async move {
                let args: ReadArgs = typed::arguments(ctx.arguments())?;
                let token = ctx.signal.to_token();
                let done = read(&root, args, CancellationToken::clone(&token)).await?;
                ledger.record(&ctx.execution.agent, &done.path, done.seen);
                typed::output(&done.output)
            }
        })
}

/// Reads the file: a small text file at once; a large one, or any other kind, on a
/// blocking thread.
async fn read(root: &FsRoot, args: ReadArgs, token: CancellationToken) -> Result<Done, ToolError> {
    let window = Window::of(&args)?;
    let requested = args.file_path;
    let spill_dir = root.for_reading(&requested);
    let root = spill_dir.as_ref().unwrap_or(root);
    let confined = root.resolve(&requested)?;
    let (file, size) = regular_file(root, &confined.path, &requested)?;
    let meta = file
        .metadata()
        .map_err(|e| file_error("read", &requested, &e))?;
    let mut head = [0u8; SIGNATURE_BYTES];
    let got = file
        .read_at(&mut head, 0)
        .map_err(|e| file_error("read", &requested, &e))?;
    let kind = Kind::of(&head[..got], &confined.display);
    let pages = match (&args.pages, kind) {
        (None, _) => None,
        (Some(spec), Kind::Media(Media::Pdf)) => Some(pdf::parse_pages(spec)?),
        (Some(_), _) => {
            return Err(ToolError::new(format!(
                "pages applies only to PDF files; \"{requested}\" is not one"
            )));
        }
    };
    let path = confined.path;
    let media = match kind {
        Kind::Media(media) => media,
        Kind::Text => {
            let opened = Opened {
                file,
                meta,
                display: confined.display,
                window,
            };
            let done = move |(read, seen)| Done {
                output: ReadOutput::Text(read),
                path,
                seen,
            };
            if size <= INLINE_BYTES {
                return opened.window(&requested, &token).map(done);
            }
            return typed::blocking(move || opened.window(&requested, &token))
                .await
                .map(done);
        }
    };
    if size > MAX_MEDIA_BYTES {
        return Err(ToolError::new(format!(
            "\"{requested}\" is {size} bytes; read takes images, PDFs and notebooks of at most \
             {MAX_MEDIA_BYTES} bytes"
        )));
    }
    let display = confined.display;
    typed::blocking(move || {
        let mut bytes = Vec::new();
        (&file)
            .take(MAX_MEDIA_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| file_error("read", &requested, &e))?;
        let seen = Seen::of(&bytes, Some(&meta));
        let media = match media {
            Media::Image(format) => {
                let size = bytes.len() as u64;
                let fitted = image::fit(format, bytes).map_err(|why| {
                    ToolError::new(format!("cannot read the image \"{requested}\": {why}"))
                })?;
                MediaRead::Image(ImageRead {
                    path: display,
                    mime_type: fitted.format.mime().to_owned(),
                    bytes: size,
                    width: fitted.width,
                    height: fitted.height,
                    original_width: fitted.original_width,
                    original_height: fitted.original_height,
                    data: fitted.base64(),
                })
            }
            Media::Pdf => MediaRead::Pdf(pdf::read(display, &requested, &bytes, pages, &token)?),
            Media::Notebook => MediaRead::Notebook(notebook::read(display, &requested, &bytes)?),
        };
        if token.is_cancelled() {
            return Err(typed::aborted());
        }
        Ok(Done {
            output: ReadOutput::Media(media),
            path,
            seen,
        })
    })
    .await
}

/// An image content block.
fn image_block(data: String, mime_type: String) -> ContentBlock {
    ContentBlock::Image(ImageContent {
        kind: ImageTag::Image,
        data,
        mime_type,
    })
}

/// What the model reads of each kind.
fn blocks(output: &ReadOutput) -> Vec<ContentBlock> {
    match output {
        ReadOutput::Text(read) => vec![ContentBlock::text(text::render(read))],
        ReadOutput::Media(MediaRead::Image(image)) => {
            let mut line = format!(
                "Image {} ({}, {}x{}",
                image.path, image.mime_type, image.original_width, image.original_height
            );
            if (image.width, image.height) != (image.original_width, image.original_height) {
                line.push_str(&format!(
                    ", sent scaled to {}x{}",
                    image.width, image.height
                ));
            }
            line.push(')');
            vec![
                ContentBlock::text(line),
                image_block(image.data.clone(), image.mime_type.clone()),
            ]
        }
        ReadOutput::Media(MediaRead::Pdf(pdf)) => vec![ContentBlock::text(pdf::render(pdf))],
        ReadOutput::Media(MediaRead::Notebook(notebook)) => notebook::blocks(notebook),
    }
}

/// The persisted metadata: the value, without image data (the content holds the images;
/// a log need not hold them twice).
fn card_meta() -> CardMeta {
    Arc::new(|_arguments, value| {
        let mut meta = value.clone();
        match meta.get("kind").and_then(Value::as_str) {
            Some("image") => {
                meta.as_object_mut()?.remove("data");
            }
            Some("notebook") => {
                for cell in meta.get_mut("cells")?.as_array_mut()? {
                    for output in cell.get_mut("outputs")?.as_array_mut()? {
                        output.as_object_mut()?.remove("data");
                    }
                }
            }
            _ => {}
        }
        Some(meta)
    })
}

/// The value schema: the text window, or one of the tagged kinds.
fn output_schema() -> Value {
    let string = json!({ "type": "string", "required": true });
    let integer = json!({ "type": "integer", "required": true });
    let optional_string = json!({ "type": "string" });
    let text = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": string,
            "offset": integer,
            "lines": {
                "type": "array",
                "required": true,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": { "number": integer, "text": string }
                }
            },
            "totalLines": integer
        }
    });
    let image = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "kind": { "type": "string", "const": "image", "required": true },
            "path": string, "mimeType": string, "bytes": integer,
            "width": integer, "height": integer,
            "originalWidth": integer, "originalHeight": integer,
            "data": string
        }
    });
    let pdf = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "kind": { "type": "string", "const": "pdf", "required": true },
            "path": string,
            "totalPages": integer,
            "pages": {
                "type": "array",
                "required": true,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": { "number": integer, "text": string }
                }
            }
        }
    });
    let notebook = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "kind": { "type": "string", "const": "notebook", "required": true },
            "path": string,
            "language": optional_string,
            "cells": {
                "type": "array",
                "required": true,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "index": integer,
                        "id": optional_string,
                        "cellType": string,
                        "source": string,
                        "executionCount": { "type": "integer" },
                        "outputs": {
                            "type": "array",
                            "required": true,
                            "items": {
                                "type": "object",
                                "additionalProperties": false,
                                "properties": {
                                    "outputType": string,
                                    "text": optional_string,
                                    "mimeType": optional_string,
                                    "data": optional_string
                                }
                            }
                        }
                    }
                }
            }
        }
    });
    json!({ "oneOf": [text, image, pdf, notebook] })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_comes_from_the_signature_then_the_extension() {
        let media = Kind::Media;
        assert_eq!(
            Kind::of(b"\x89PNG\r\n\x1a\n", "a.txt"),
            media(Media::Image(image::Format::Png))
        );
        assert_eq!(Kind::of(b"%PDF-1.7", "a"), media(Media::Pdf));
        assert_eq!(Kind::of(b"{\"cells\"", "n.IPYNB"), media(Media::Notebook));
        assert_eq!(Kind::of(b"plain", "a.pdf"), Kind::Text);
        assert_eq!(Kind::of(b"", "a.png"), Kind::Text);
    }

    #[test]
    fn a_text_value_keeps_its_old_shape_and_media_values_their_tag() {
        let text = ReadOutput::Text(TextRead {
            path: "a".into(),
            offset: 1,
            lines: vec![],
            total_lines: 0,
        });
        let json = serde_json::to_value(&text).unwrap();
        assert_eq!(
            json,
            json!({ "path": "a", "offset": 1, "lines": [], "totalLines": 0 })
        );
        assert_eq!(ReadOutput::deserialize(&json).unwrap(), text);
        let pdf = ReadOutput::Media(MediaRead::Pdf(PdfRead {
            path: "p".into(),
            total_pages: 1,
            pages: vec![],
        }));
        let json = serde_json::to_value(&pdf).unwrap();
        assert_eq!(json["kind"], "pdf");
        assert_eq!(ReadOutput::deserialize(&json).unwrap(), pdf);
    }

    /// A file of `lines` numbered lines, each `width` bytes with its newline.
    fn numbered_file(dir: &std::path::Path, name: &str, lines: usize, width: usize) {
        let text: String = (1..=lines)
            .map(|n| format!("{n:0>w$}\n", w = width - 1))
            .collect();
        std::fs::write(dir.join(name), text).unwrap();
    }

    fn window_of(name: &str) -> ReadArgs {
        ReadArgs {
            file_path: name.to_owned(),
            offset: Some(3),
            limit: Some(2),
            pages: None,
        }
    }

    /// The blocking pool has one thread, held by a task until the test lets it go: a read
    /// that waits for that thread cannot finish before the release, one that does not need it
    /// finishes at its first poll. No race with the scheduler either way.
    #[test]
    fn a_small_file_is_read_without_a_hand_off_and_a_large_one_on_a_blocking_thread() {
        use futures::FutureExt;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = FsRoot::open(dir.path().to_str().unwrap()).unwrap();
        numbered_file(dir.path(), "small.txt", 100, 8);
        let lines = usize::try_from(INLINE_BYTES * 4).unwrap() / 8;
        numbered_file(dir.path(), "large.txt", lines, 8);
        let token = CancellationToken::new();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let (small, large) = runtime.block_on(async {
            let holder = tokio::task::spawn_blocking(move || held.recv());
            // A small file is read on the calling task while the only blocking thread is held.
            let small = read(&root, window_of("small.txt"), token.clone())
                .now_or_never()
                .expect("a small file is read at the first poll")
                .unwrap();
            let mut large = Box::pin(read(&root, window_of("large.txt"), token));
            assert!(
                (&mut large).now_or_never().is_none(),
                "a large file waits for a blocking thread"
            );
            release.send(()).unwrap();
            holder.await.unwrap().unwrap();
            (small, large.await.unwrap())
        });
        let text = |done: Done| match done.output {
            ReadOutput::Text(read) => read,
            ReadOutput::Media(media) => panic!("{media:?}"),
        };
        let (small, large) = (text(small), text(large));
        for (output, total) in [(small, 100), (large, lines as u64)] {
            let numbers: Vec<u64> = output.lines.iter().map(|l| l.number).collect();
            assert_eq!(numbers, [3, 4]);
            assert_eq!(output.lines[0].text, "0000003");
            assert_eq!(output.total_lines, total);
        }
    }
}
