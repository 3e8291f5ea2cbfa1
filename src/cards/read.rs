//! The `read` card's views of what is not a text file: an image (its data travels in the
//! card's `content` as an image block), PDF pages, a notebook's cells.

use serde::Serialize;

/// What was read, when it is not a text file (absent: a text window).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadKind {
    /// An image, sent as an image block.
    Image,
    /// PDF pages, as text.
    Pdf,
    /// A Jupyter notebook.
    Notebook,
}

/// An image read: its size as sent and as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadImageView {
    /// MIME type of the image sent.
    pub mime_type: String,
    /// Width sent.
    pub width: u32,
    /// Height sent.
    pub height: u32,
    /// Width of the file's image.
    pub original_width: u32,
    /// Height of the file's image.
    pub original_height: u32,
    /// Size of the file.
    pub bytes: u64,
}

/// One PDF page's text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReadPdfPage {
    /// 1-based page number.
    pub number: u64,
    /// The page's text.
    pub text: String,
}

/// One notebook cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadNotebookCell {
    /// 0-based position.
    pub index: u64,
    /// `code`, `markdown` or `raw`.
    pub cell_type: String,
    /// Its source.
    pub source: String,
    /// A code cell's execution count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_count: Option<i64>,
    /// Its outputs, in order.
    pub outputs: Vec<ReadNotebookOutput>,
}

/// One cell output: text, or an image (whose data is the next image block of `content`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadNotebookOutput {
    /// `stream`, `execute_result`, `display_data` or `error`.
    pub output_type: String,
    /// Its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// An image output's MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}
