//! A fetched page as text for the model: HTML converted to Markdown (`htmd`, over
//! html5ever), other text as it came. The converter walks the element tree recursively, so a
//! page nested deeper than any real one ([`MAX_DEPTH`], counted by a lexical pre-scan that
//! over-counts rather than under-counts) is returned as its raw text instead, and the
//! conversion runs on a thread of its own with a stack sized for that depth.

/// Element nesting past which a page is not converted (real pages nest a few dozen levels).
pub const MAX_DEPTH: usize = 512;

/// The conversion thread's stack: ample for [`MAX_DEPTH`] levels of the converter's recursion.
const STACK_BYTES: usize = 64 * 1024 * 1024;

/// Elements that never take a closing tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Elements whose content the converter drops whole (their text is no page content).
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "head",
];

/// `html` as Markdown, or as it is when it nests deeper than [`MAX_DEPTH`] or the converter
/// fails. Runs on its own thread (call it from a blocking context).
pub fn html_to_markdown(html: String) -> String {
    if nests_deeper_than(&html, MAX_DEPTH) {
        return html;
    }
    let converted = std::thread::Builder::new()
        .name("dsh-web-markdown".to_owned())
        .stack_size(STACK_BYTES)
        .spawn({
            let html = html.clone();
            move || {
                htmd::HtmlToMarkdown::builder()
                    .skip_tags(DROPPED.to_vec())
                    .build()
                    .convert(&html)
                    .ok()
            }
        })
        .ok()
        .and_then(|thread| thread.join().ok().flatten());
    converted.map_or(html, |markdown| tidy(&markdown))
}

/// Collapses runs of blank lines the conversion leaves behind.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0;
    for line in markdown.lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim().to_owned()
}

/// Whether the open-element stack of `html` grows past `limit`: one lexical pass that skips
/// comments and the bodies of raw-text elements, honours quoted `>` in attributes, and pops
/// only on the closing tag of the current element (so malformed input over-counts).
pub fn nests_deeper_than(html: &str, limit: usize) -> bool {
    let bytes = html.as_bytes();
    let mut open: Vec<String> = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'<', &bytes[at..]) {
        let start = at + found;
        if bytes[start..].starts_with(b"<!--") {
            match memchr::memmem::find(&bytes[start + 4..], b"-->") {
                Some(end) => {
                    at = start + 4 + end + 3;
                    continue;
                }
                None => return false,
            }
        }
        let mut cursor = start + 1;
        let closing = bytes.get(cursor) == Some(&b'/');
        if closing {
            cursor += 1;
        }
        let name_start = cursor;
        while cursor < bytes.len()
            && (bytes[cursor].is_ascii_alphanumeric() || bytes[cursor] == b'-')
        {
            cursor += 1;
        }
        if cursor == name_start || !bytes[name_start].is_ascii_alphabetic() {
            at = start + 1;
            continue;
        }
        let name = html[name_start..cursor].to_ascii_lowercase();
        let mut quote = None;
        let mut self_closing = false;
        let mut ended = false;
        while cursor < bytes.len() {
            let byte = bytes[cursor];
            cursor += 1;
            match quote {
                Some(q) if byte == q => quote = None,
                Some(_) => {}
                None if byte == b'"' || byte == b'\'' => quote = Some(byte),
                None if byte == b'>' => {
                    self_closing = cursor >= 2 && bytes[cursor - 2] == b'/';
                    ended = true;
                    break;
                }
                None => {}
            }
        }
        if !ended {
            return false;
        }
        at = cursor;
        if closing {
            if open.last() == Some(&name) {
                open.pop();
            }
            continue;
        }
        if self_closing || VOID.contains(&name.as_str()) {
            continue;
        }
        if matches!(
            name.as_str(),
            "script" | "style" | "noscript" | "textarea" | "title"
        ) {
            match raw_text_end(bytes, at, name.as_bytes()) {
                Some(end) => at = end,
                None => return false,
            }
            continue;
        }
        open.push(name);
        if open.len() > limit {
            return true;
        }
    }
    false
}

/// Where the closing tag `</name` of a raw-text element starts, from `from` on (any case).
fn raw_text_end(bytes: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut at = from;
    while let Some(found) = memchr::memmem::find(&bytes[at..], b"</") {
        let tag = at + found + 2;
        if bytes
            .get(tag..tag + name.len())
            .is_some_and(|candidate| candidate.eq_ignore_ascii_case(name))
        {
            return Some(at + found);
        }
        at = tag;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_links_lists_and_code_come_out_as_markdown_and_scripts_do_not() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <h1>Title</h1><p>Some <a href=\"https://x.test/a\">link</a> and <b>bold</b>.</p>\
            <ul><li>one</li><li>two</li></ul><pre><code>let x = 1;</code></pre>\
            <script>alert('no')</script></body></html>";
        let markdown = html_to_markdown(html.to_owned());
        assert!(markdown.starts_with("# Title"), "{markdown}");
        assert!(markdown.contains("[link](https://x.test/a)"), "{markdown}");
        assert!(markdown.contains("**bold**"), "{markdown}");
        assert!(markdown.contains("one"), "{markdown}");
        assert!(markdown.contains("let x = 1;"), "{markdown}");
        assert!(!markdown.contains("alert"), "{markdown}");
        assert!(!markdown.contains("p{}"), "{markdown}");
    }

    #[test]
    fn a_page_nested_deeper_than_any_real_one_is_returned_raw_without_converting() {
        let deep = format!("{}x{}", "<div>".repeat(100_000), "</div>".repeat(100_000));
        assert!(nests_deeper_than(&deep, MAX_DEPTH));
        assert_eq!(html_to_markdown(deep.clone()), deep);
        let shallow = format!("{}x{}", "<div>".repeat(100), "</div>".repeat(100));
        assert!(!nests_deeper_than(&shallow, MAX_DEPTH));
        // Quoted `>` and comments do not fool the count; void elements do not nest.
        let tricky = format!(
            "{}<!-- {} -->{}",
            "<br><img src=\"a>b\">".repeat(10_000),
            "<div>".repeat(10_000),
            "<p>".repeat(10)
        );
        assert!(!nests_deeper_than(&tricky, MAX_DEPTH));
        // Unclosed raw-text elements and stray closings over-count rather than hide nesting.
        let stray = format!("{}{}", "<div></span>".repeat(600), "");
        assert!(nests_deeper_than(&stray, MAX_DEPTH));
    }
}
