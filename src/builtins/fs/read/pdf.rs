//! PDF pages as text, one entry per page (`pdf-extract` over `lopdf`, pure Rust). Like
//! Claude Code's Read: at most [`MAX_PAGES`] pages per call, and a PDF of more than
//! [`PAGES_WITHOUT_RANGE`] pages needs `pages`. A PDF the parser chokes on (it can panic
//! on malformed input) is an error for that call, never a fault of the host.

use crate::builtins::typed;
use crate::tool::ToolError;
use pdf_extract::{Document, PlainTextOutput};
use serde::{Deserialize, Serialize};
use std::panic::AssertUnwindSafe;
use tokio_util::sync::CancellationToken;

/// Most pages one call returns.
pub const MAX_PAGES: usize = 20;
/// A PDF of more pages than this needs `pages`.
pub const PAGES_WITHOUT_RANGE: usize = 10;
/// Longest `pages` argument looked at.
const MAX_SPEC_BYTES: usize = 256;

/// The `pdf` value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdfRead {
    /// Root-relative path.
    pub path: String,
    /// Pages in the document.
    pub total_pages: u64,
    /// The pages asked for, in order.
    pub pages: Vec<PdfPage>,
}

/// One page's text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PdfPage {
    /// 1-based page number.
    pub number: u64,
    /// Its text, as the PDF lays it out.
    pub text: String,
}

/// Parses `pages`: `"3"`, `"1-5"`, or a comma list of those (`"1-3,7"`), 1-based, in the
/// order given, without repeats.
pub fn parse_pages(spec: &str) -> Result<Vec<u64>, ToolError> {
    let invalid = || {
        ToolError::new(format!(
            "invalid pages \"{}\": use a page number or a range such as \"1-5\" (or a comma list, \"1-3,7\")",
            spec.chars().take(40).collect::<String>()
        ))
    };
    if spec.len() > MAX_SPEC_BYTES || spec.trim().is_empty() {
        return Err(invalid());
    }
    let mut pages: Vec<u64> = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (first.trim(), last.trim()),
            None => (part, part),
        };
        let first: u64 = first.parse().map_err(|_| invalid())?;
        let last: u64 = last.parse().map_err(|_| invalid())?;
        if first == 0 || last < first {
            return Err(invalid());
        }
        if last - first >= MAX_PAGES as u64 {
            return Err(too_many());
        }
        for page in first..=last {
            if !pages.contains(&page) {
                pages.push(page);
            }
            if pages.len() > MAX_PAGES {
                return Err(too_many());
            }
        }
    }
    Ok(pages)
}

fn too_many() -> ToolError {
    ToolError::new(format!(
        "at most {MAX_PAGES} pages per read: ask for a smaller range with pages"
    ))
}

/// The text of `pages` (every page when `None`, for a short PDF) of the PDF in `bytes`.
pub fn read(
    display: String,
    requested: &str,
    bytes: &[u8],
    pages: Option<Vec<u64>>,
    token: &CancellationToken,
) -> Result<PdfRead, ToolError> {
    let unreadable =
        |why: String| ToolError::new(format!("cannot read the PDF \"{requested}\": {why}"));
    let document = contained(|| {
        let mut document = Document::load_mem(bytes).map_err(|e| e.to_string())?;
        if document.is_encrypted() {
            // An owner-password-only PDF opens with the empty user password.
            document
                .decrypt("")
                .map_err(|_| "it is encrypted".to_owned())?;
        }
        Ok(document)
    })
    .map_err(unreadable)?;
    let total = document.get_pages().len() as u64;
    let wanted = match pages {
        Some(pages) => {
            if let Some(past) = pages.iter().find(|page| **page > total) {
                return Err(ToolError::new(format!(
                    "page {past} is past the end of \"{requested}\", which has {total} pages"
                )));
            }
            pages
        }
        None if total > PAGES_WITHOUT_RANGE as u64 => {
            return Err(ToolError::new(format!(
                "\"{requested}\" has {total} pages: read it in ranges of at most {MAX_PAGES} \
                 with pages (for example pages: \"1-{MAX_PAGES}\")"
            )));
        }
        None => (1..=total).collect(),
    };
    let mut read = Vec::with_capacity(wanted.len());
    for number in wanted {
        if token.is_cancelled() {
            return Err(typed::aborted());
        }
        let text = contained(|| {
            let mut text = String::new();
            let page = u32::try_from(number).map_err(|e| e.to_string())?;
            pdf_extract::output_doc_page(&document, &mut PlainTextOutput::new(&mut text), page)
                .map_err(|e| e.to_string())?;
            Ok(text)
        })
        .map_err(|why| unreadable(format!("page {number}: {why}")))?;
        read.push(PdfPage {
            number,
            text: text.trim_matches('\n').to_owned(),
        });
    }
    Ok(PdfRead {
        path: display,
        total_pages: total,
        pages: read,
    })
}

/// Runs parser work, turning its panic into an error.
fn contained<T>(work: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err("the PDF parser failed on it".to_owned()))
}

/// The model-facing text: each page under its number.
pub fn render(pdf: &PdfRead) -> String {
    let numbers: Vec<u64> = pdf.pages.iter().map(|page| page.number).collect();
    let mut text = format!(
        "PDF {} ({} pages): {}",
        pdf.path,
        pdf.total_pages,
        describe(&numbers)
    );
    for page in &pdf.pages {
        text.push_str(&format!("\n\n--- page {} ---\n{}", page.number, page.text));
    }
    text
}

/// `page 3`, `pages 1-5`, `pages 1-3, 7`.
fn describe(numbers: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &number in numbers {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == number => *last = number,
            _ => runs.push((number, number)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|(first, last)| match first == last {
            true => first.to_string(),
            false => format!("{first}-{last}"),
        })
        .collect();
    let noun = if numbers.len() == 1 { "page" } else { "pages" };
    format!("{noun} {}", parts.join(", "))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn page_specs_parse_into_page_lists_and_bad_ones_are_refused() {
        assert_eq!(parse_pages("3").unwrap(), [3]);
        assert_eq!(parse_pages("1-5").unwrap(), [1, 2, 3, 4, 5]);
        assert_eq!(parse_pages(" 2-3, 7 ,3").unwrap(), [2, 3, 7]);
        for bad in ["", "0", "5-2", "a", "1-", "-3", "1--2"] {
            assert!(parse_pages(bad).is_err(), "{bad}");
        }
        assert!(
            parse_pages("1-21")
                .unwrap_err()
                .message
                .contains("at most 20")
        );
        assert!(
            parse_pages("1-10,20-30")
                .unwrap_err()
                .message
                .contains("at most 20")
        );
        assert_eq!(parse_pages("1-20").unwrap().len(), 20);
        assert!(parse_pages("1-18446744073709551615").is_err());
    }

    #[test]
    fn runs_of_pages_are_described_briefly() {
        assert_eq!(describe(&[3]), "page 3");
        assert_eq!(describe(&[1, 2, 3, 7]), "pages 1-3, 7");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let token = CancellationToken::new();
        for bytes in [&b"%PDF-1.4\n garbage"[..], b"%PDF-", b""] {
            assert!(read("x.pdf".into(), "x.pdf", bytes, None, &token).is_err());
        }
    }
}
