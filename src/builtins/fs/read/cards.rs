//! `read`'s cards: a generic pending row, then the `read` card: the numbered window of a
//! text file, or the view of an image, PDF pages or a notebook. Built from the persisted
//! metadata and the content (which holds the image blocks), so a replay shows the same.

use super::{MediaRead, ReadOutput};
use crate::builtins::cards::{language_of, location, parse, success_meta};
use crate::cards::{
    GenericCallView, ReadFileLine, ReadImageView, ReadKind, ReadNotebookCell, ReadNotebookOutput,
    ReadPdfPage, ReadResultView, ToolCallKind, ToolCallView, ToolResultView,
};
use crate::tool::{ContentBlock, DurableResult, ToolCards};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct PathCall {
    file_path: String,
    offset: Option<i64>,
}

/// `read`: a generic pending row, then the `read` card.
pub(super) struct ReadCards;

impl ToolCards for ReadCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        let call: PathCall = parse(arguments)?;
        let line = call
            .offset
            .and_then(|n| u64::try_from(n).ok())
            .filter(|n| *n > 0);
        ToolCallView::Generic(GenericCallView {
            title: format!("Read {}", call.file_path),
            kind: Some(ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: location(&call.file_path, line),
        })
        .to_json()
    }

    fn result_card(&self, _arguments: &Value, result: &DurableResult) -> Option<Value> {
        let read: ReadOutput = success_meta(result)?;
        let view = match read {
            ReadOutput::Text(read) => {
                let text: Vec<&str> = read.lines.iter().map(|line| line.text.as_str()).collect();
                ReadResultView {
                    lang: language_of(&read.path).map(str::to_owned),
                    content: Some(vec![ContentBlock::text(text.join("\n"))]),
                    lines: read
                        .lines
                        .into_iter()
                        .map(|line| ReadFileLine {
                            number: line.number,
                            text: line.text,
                        })
                        .collect(),
                    total_lines: read.total_lines,
                    offset: read.offset,
                    ..empty(read.path)
                }
            }
            ReadOutput::Media(MediaRead::Image(image)) => ReadResultView {
                kind: Some(ReadKind::Image),
                image: Some(ReadImageView {
                    mime_type: image.mime_type,
                    width: image.width,
                    height: image.height,
                    original_width: image.original_width,
                    original_height: image.original_height,
                    bytes: image.bytes,
                }),
                content: Some(images(result)),
                ..empty(image.path)
            },
            ReadOutput::Media(MediaRead::Pdf(pdf)) => ReadResultView {
                kind: Some(ReadKind::Pdf),
                total_pages: Some(pdf.total_pages),
                pages: Some(
                    pdf.pages
                        .into_iter()
                        .map(|page| ReadPdfPage {
                            number: page.number,
                            text: page.text,
                        })
                        .collect(),
                ),
                ..empty(pdf.path)
            },
            ReadOutput::Media(MediaRead::Notebook(notebook)) => ReadResultView {
                kind: Some(ReadKind::Notebook),
                lang: notebook.language,
                content: Some(images(result)),
                cells: Some(
                    notebook
                        .cells
                        .into_iter()
                        .map(|cell| ReadNotebookCell {
                            index: cell.index,
                            cell_type: cell.cell_type,
                            source: cell.source,
                            execution_count: cell.execution_count,
                            outputs: cell
                                .outputs
                                .into_iter()
                                .map(|output| ReadNotebookOutput {
                                    output_type: output.output_type,
                                    text: output.text,
                                    mime_type: output.mime_type,
                                })
                                .collect(),
                        })
                        .collect(),
                ),
                ..empty(notebook.path)
            },
        };
        ToolResultView::Read(view).to_json()
    }
}

/// A card of `path` with no lines and no views yet.
fn empty(path: String) -> ReadResultView {
    ReadResultView {
        title: None,
        path,
        offset: 1,
        lines: Vec::new(),
        total_lines: 0,
        lang: None,
        content: None,
        kind: None,
        image: None,
        pages: None,
        total_pages: None,
        cells: None,
    }
}

/// The result's image blocks, in order.
fn images(result: &DurableResult) -> Vec<ContentBlock> {
    result
        .content
        .iter()
        .filter(|block| matches!(block, ContentBlock::Image(_)))
        .cloned()
        .collect()
}
