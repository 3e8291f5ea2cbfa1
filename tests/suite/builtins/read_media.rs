//! `read` of more than text, through the real binary: images come back as image blocks (a
//! large one scaled within the caps), PDF pages as text per page, notebooks as cells with
//! their outputs; and the `read` card shows each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::mcp::Binary;
use base64::Engine;
use image::{DynamicImage, ImageFormat, RgbImage};
use serde_json::{Value, json};
use std::io::Cursor;
use std::path::Path;

/// The long edge `read` sends at most, and the most bytes of one image.
const MAX_LONG_EDGE: u32 = 1568;
const MAX_IMAGE_BYTES: usize = 3 * 1024 * 1024 + 768 * 1024;

fn host(root: &Path) -> Binary {
    Binary::serve(json!({ "builtins": { "fs": { "root": root.display().to_string() } } }))
}

fn read(host: &mut Binary, arguments: Value) -> Value {
    let answer = host.request(
        "tools/execute",
        json!({ "callId": "r", "name": "read", "arguments": arguments }),
    );
    answer["result"].clone()
}

/// A smooth gradient (compresses well, as screenshots do) encoded as `format`.
fn picture(width: u32, height: u32, format: ImageFormat) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x * 255 / width) as u8, (y * 255 / height) as u8, 128])
    });
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), format)
        .unwrap();
    out
}

fn decoded(block: &Value) -> Vec<u8> {
    let data = block["data"].as_str().unwrap();
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap()
}

#[test]
fn png_jpeg_gif_and_webp_come_back_as_image_blocks_unchanged_when_small() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("shot.png", ImageFormat::Png, "image/png"),
        ("photo.jpg", ImageFormat::Jpeg, "image/jpeg"),
        ("anim.gif", ImageFormat::Gif, "image/gif"),
        ("pic.webp", ImageFormat::WebP, "image/webp"),
        // The signature decides: a PNG named .txt is an image.
        ("misnamed.txt", ImageFormat::Png, "image/png"),
    ];
    for (name, format, _) in &cases {
        std::fs::write(dir.path().join(name), picture(64, 48, *format)).unwrap();
    }
    let mut host = host(dir.path());
    for (name, _, mime) in cases {
        let result = read(&mut host, json!({ "file_path": name }));
        assert_eq!(result["isError"], false, "{name}: {result}");
        let value = &result["value"];
        assert_eq!(value["kind"], "image", "{value}");
        assert_eq!(value["mimeType"], mime, "{name}");
        assert_eq!(
            (value["width"].as_u64(), value["height"].as_u64()),
            (Some(64), Some(48))
        );
        let content = result["content"].as_array().unwrap();
        assert_eq!(content.len(), 2, "{name}: a line of text, then the image");
        assert_eq!(content[0]["type"], "text");
        assert_eq!(content[1]["type"], "image", "{name}");
        assert_eq!(content[1]["mimeType"], mime, "{name}");
        let file = std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(decoded(&content[1]), file, "{name}: sent as it is");
        // The persisted metadata leaves the image data to the content.
        assert!(result["meta"].get("data").is_none(), "{name}");
        assert_eq!(result["meta"]["width"], 64);
    }
}

#[test]
fn a_large_png_and_a_large_jpeg_come_back_scaled_within_the_caps() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wide.png"),
        picture(3000, 1000, ImageFormat::Png),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tall.jpg"),
        picture(1200, 2400, ImageFormat::Jpeg),
    )
    .unwrap();
    let mut host = host(dir.path());
    for (name, original, expected) in [
        ("wide.png", (3000, 1000), (1568, 522)),
        ("tall.jpg", (1200, 2400), (784, 1568)),
    ] {
        let result = read(&mut host, json!({ "file_path": name }));
        assert_eq!(result["isError"], false, "{name}: {result}");
        let value = &result["value"];
        assert_eq!(
            (
                value["originalWidth"].as_u64(),
                value["originalHeight"].as_u64()
            ),
            (Some(original.0), Some(original.1)),
            "{name}"
        );
        let block = &result["content"][1];
        let bytes = decoded(block);
        assert!(
            bytes.len() <= MAX_IMAGE_BYTES,
            "{name}: {} bytes",
            bytes.len()
        );
        let sent = image::load_from_memory(&bytes).unwrap();
        let (width, height) = (sent.width(), sent.height());
        assert_eq!(width.max(height), MAX_LONG_EDGE, "{name}");
        // The aspect ratio is kept (within a pixel of rounding).
        assert!(
            (i64::from(width) - i64::from(expected.0)).abs() <= 1
                && (i64::from(height) - i64::from(expected.1)).abs() <= 1,
            "{name}: {width}x{height}"
        );
        assert_eq!(value["width"].as_u64(), Some(u64::from(width)));
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("sent scaled to"), "{text}");
    }
}

/// A PDF of `pages` pages, page N saying "Page N says hello", written by hand (objects,
/// then a cross-reference table with their byte offsets).
fn pdf(pages: usize) -> Vec<u8> {
    let font = 3 + 2 * pages;
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {pages} >>",
            (0..pages)
                .map(|i| format!("{} 0 R", 3 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    ];
    for i in 0..pages {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 {font} 0 R >> >> /Contents {} 0 R >>",
            4 + 2 * i
        ));
        let stream = format!("BT /F1 24 Tf 72 700 Td (Page {} says hello) Tj ET", i + 1);
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned());
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (n, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", n + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[test]
fn pdf_pages_come_back_as_text_per_page_within_the_page_caps() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("short.pdf"), pdf(3)).unwrap();
    std::fs::write(dir.path().join("long.pdf"), pdf(25)).unwrap();
    let mut host = host(dir.path());

    let whole = read(&mut host, json!({ "file_path": "short.pdf" }));
    assert_eq!(whole["isError"], false, "{whole}");
    assert_eq!(whole["value"]["kind"], "pdf");
    assert_eq!(whole["value"]["totalPages"], 3);
    let texts: Vec<String> = whole["value"]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|page| page["text"].as_str().unwrap().trim().to_owned())
        .collect();
    assert_eq!(
        texts,
        [
            "Page 1 says hello",
            "Page 2 says hello",
            "Page 3 says hello"
        ]
    );

    let range = read(
        &mut host,
        json!({ "file_path": "long.pdf", "pages": "21-22" }),
    );
    assert_eq!(range["isError"], false, "{range}");
    let numbers: Vec<u64> = range["value"]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|page| page["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [21, 22]);
    let text = range["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("PDF long.pdf (25 pages): pages 21-22"),
        "{text}"
    );
    assert!(
        text.contains("--- page 22 ---\nPage 22 says hello"),
        "{text}"
    );
    assert!(!text.contains("Page 20 says"), "{text}");

    let refusals = [
        (
            json!({ "file_path": "long.pdf" }),
            "Error: \"long.pdf\" has 25 pages: read it in ranges of at most 20 with pages (for example pages: \"1-20\")",
        ),
        (
            json!({ "file_path": "long.pdf", "pages": "1-21" }),
            "Error: at most 20 pages per read: ask for a smaller range with pages",
        ),
        (
            json!({ "file_path": "short.pdf", "pages": "4" }),
            "Error: page 4 is past the end of \"short.pdf\", which has 3 pages",
        ),
        (
            json!({ "file_path": "short.pdf", "pages": "two" }),
            "Error: invalid pages \"two\": use a page number or a range such as \"1-5\" (or a comma list, \"1-3,7\")",
        ),
    ];
    for (arguments, expected) in refusals {
        let result = read(&mut host, arguments.clone());
        assert_eq!(result["isError"], true, "{arguments}");
        assert_eq!(result["content"][0]["text"], expected, "{arguments}");
    }
    std::fs::write(dir.path().join("a.txt"), "text\n").unwrap();
    let not_pdf = read(&mut host, json!({ "file_path": "a.txt", "pages": "1" }));
    assert_eq!(
        not_pdf["content"][0]["text"],
        "Error: pages applies only to PDF files; \"a.txt\" is not one"
    );
    // A broken PDF is an error for its call; the host answers the next one.
    std::fs::write(dir.path().join("broken.pdf"), b"%PDF-1.4\n1 0 obj << /Type").unwrap();
    let broken = read(&mut host, json!({ "file_path": "broken.pdf" }));
    assert_eq!(broken["isError"], true, "{broken}");
    let after = read(&mut host, json!({ "file_path": "short.pdf", "pages": "2" }));
    assert_eq!(after["value"]["pages"][0]["number"], 2, "{after}");
}

#[test]
fn a_notebook_comes_back_as_cells_with_their_outputs_and_images() {
    let dir = tempfile::tempdir().unwrap();
    let plot = picture(40, 30, ImageFormat::Png);
    let plot_base64 = base64::engine::general_purpose::STANDARD.encode(&plot);
    let notebook = json!({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": { "kernelspec": { "language": "python", "name": "python3" } },
        "cells": [
            { "cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Analysis\n", "Some words."] },
            { "cell_type": "code", "id": "load", "execution_count": 1, "metadata": {},
              "source": ["x = 41\n", "print(x + 1)"],
              "outputs": [
                  { "output_type": "stream", "name": "stdout", "text": ["42\n"] },
                  { "output_type": "execute_result", "execution_count": 1, "metadata": {},
                    "data": { "text/plain": ["'done'"] } }
              ] },
            { "cell_type": "code", "id": "plot", "execution_count": 2, "metadata": {},
              "source": "plot()",
              "outputs": [
                  { "output_type": "display_data", "metadata": {},
                    "data": { "image/png": plot_base64, "text/plain": ["<Figure>"] } },
                  { "output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                    "traceback": ["\u{1b}[0;31mZeroDivisionError\u{1b}[0m: division by zero"] }
              ] }
        ]
    });
    std::fs::write(dir.path().join("analysis.ipynb"), notebook.to_string()).unwrap();
    let mut host = host(dir.path());
    let result = read(&mut host, json!({ "file_path": "analysis.ipynb" }));
    assert_eq!(result["isError"], false, "{result}");
    let value = &result["value"];
    assert_eq!(value["kind"], "notebook");
    assert_eq!(value["language"], "python");
    let cells = value["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3);
    assert_eq!(cells[0]["cellType"], "markdown");
    assert_eq!(cells[0]["source"], "# Analysis\nSome words.");
    assert_eq!(cells[1]["source"], "x = 41\nprint(x + 1)");
    assert_eq!(cells[1]["executionCount"], 1);
    assert_eq!(
        cells[1]["outputs"],
        json!([
            { "outputType": "stream", "text": "42\n" },
            { "outputType": "execute_result", "text": "'done'" }
        ])
    );
    assert_eq!(cells[2]["outputs"][0]["mimeType"], "image/png");
    assert_eq!(
        cells[2]["outputs"][1]["text"],
        "ZeroDivisionError: division by zero\nZeroDivisionError: division by zero"
    );

    let content = result["content"].as_array().unwrap();
    let kinds: Vec<&str> = content
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "image", "text"]);
    assert_eq!(
        decoded(&content[1]),
        plot,
        "the plot, as the notebook holds it"
    );
    let before = content[0]["text"].as_str().unwrap();
    assert!(
        before.contains("<cell 1 code [1]>\nx = 41\nprint(x + 1)\n</cell 1>"),
        "{before}"
    );
    assert!(before.contains("<output stream>\n42\n"), "{before}");
    let after = content[2]["text"].as_str().unwrap();
    assert!(
        after.contains("ZeroDivisionError: division by zero"),
        "{after}"
    );
    // The metadata keeps the cells but not the image data.
    assert!(
        result["meta"]["cells"][2]["outputs"][0]
            .get("data")
            .is_none()
    );
}

#[test]
fn the_read_card_shows_an_image_pdf_pages_and_notebook_cells_live_and_on_replay() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("shot.png"),
        picture(20, 10, ImageFormat::Png),
    )
    .unwrap();
    std::fs::write(dir.path().join("doc.pdf"), pdf(2)).unwrap();
    let notebook = json!({ "cells": [{ "cell_type": "code", "source": "1", "outputs": [
        { "output_type": "stream", "text": "1\n" }] }] });
    std::fs::write(dir.path().join("n.ipynb"), notebook.to_string()).unwrap();
    let mut host = host(dir.path());
    for name in ["shot.png", "doc.pdf", "n.ipynb"] {
        let arguments = json!({ "file_path": name });
        let result = read(&mut host, arguments.clone());
        let live = host.request(
            "tools/presentResult",
            json!({ "name": "read", "arguments": arguments, "result": result }),
        )["result"]
            .clone();
        assert_eq!(live["card"], "read", "{live}");
        assert_eq!(live["lines"], json!([]));
        match name {
            "shot.png" => {
                assert_eq!(live["kind"], "image");
                assert_eq!(live["image"]["width"], 20);
                assert_eq!(live["content"][0]["type"], "image");
                assert_eq!(live["content"][0]["data"], result["content"][1]["data"]);
            }
            "doc.pdf" => {
                assert_eq!(live["kind"], "pdf");
                assert_eq!(live["totalPages"], 2);
                assert_eq!(live["pages"][1]["number"], 2);
            }
            _ => {
                assert_eq!(live["kind"], "notebook");
                assert_eq!(live["cells"][0]["outputs"][0]["text"], "1\n");
            }
        }
        let logged =
            json!({ "isError": false, "content": result["content"], "meta": result["meta"] });
        let replayed = host.request(
            "tools/presentResult",
            json!({ "name": "read", "arguments": { "file_path": name }, "result": logged }),
        );
        assert_eq!(
            replayed["result"], live,
            "{name}: replay shows the same card"
        );
    }
}
