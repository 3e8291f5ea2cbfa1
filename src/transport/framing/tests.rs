//! Table-driven frame sequences for LSP, ndjson and auto framing under many read splits.

use std::io;

use super::testing::{
    ChunkedReader, message, oversized, read_all, read_chunked, skipped, too_large,
};
use super::{FrameReader, Framing, ReadEvent};

const EOF: ReadEvent = ReadEvent::Eof;

/// Read splits every table row runs under: whole reads, single bytes, odd sizes, and
/// suspensions (0) between reads.
const SPLITS: &[&[usize]] = &[
    &[usize::MAX],
    &[1],
    &[0, 1],
    &[2, 3, 5, 7],
    &[0, 64],
    &[4096, 1],
];

/// Reads `input` under every split, expecting `expected` (and the framing `decided`).
fn check_framing(
    framing: Framing,
    max: usize,
    input: &[u8],
    expected: &[ReadEvent],
    decided: Option<Framing>,
) {
    for chunks in SPLITS {
        let (events, framing_after) = read_chunked(input, chunks, framing, max);
        assert_eq!(events, expected, "{framing:?} split {chunks:?}");
        assert_eq!(framing_after, decided, "{framing:?} split {chunks:?}");
    }
}

fn check_lsp(max: usize, input: &[u8], expected: &[ReadEvent]) {
    check_framing(Framing::Lsp, max, input, expected, Some(Framing::Lsp));
}

fn check_ndjson(max: usize, input: &[u8], expected: &[ReadEvent]) {
    check_framing(Framing::Ndjson, max, input, expected, Some(Framing::Ndjson));
}

fn lsp_frame(body: &[u8]) -> Vec<u8> {
    [
        format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
        body,
    ]
    .concat()
}

#[test]
fn lsp_reads_well_formed_frames() {
    check_lsp(100, b"", &[EOF]);
    check_lsp(100, b"Content-Length: 2\r\n\r\n{}", &[message("{}"), EOF]);
    check_lsp(
        100,
        b"Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]",
        &[message("{}"), message("[1]"), EOF],
    );
    check_lsp(
        100,
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:  4 \r\n\r\nnull",
        &[message("null"), EOF],
    );
    check_lsp(
        100,
        b"CONTENT-LENGTH: 1\nX-Unknown: yes\n\n1",
        &[message("1"), EOF],
    );
    check_lsp(100, b"Content-Length: 0\r\n\r\n", &[message(""), EOF]);
    check_lsp(
        100,
        b"Content-Length: 1\r\nContent-Length: 1\r\n\r\n7",
        &[message("7"), EOF],
    );
    // Body bytes are taken by count: a header inside a body is just payload.
    check_lsp(
        100,
        b"Content-Length: 21\r\n\r\nContent-Length: 2\r\n\r\n",
        &[message("Content-Length: 2\r\n\r\n"), EOF],
    );
}

#[test]
fn lsp_ignores_blank_lines_between_frames() {
    check_lsp(
        100,
        b"\r\n\nContent-Length: 2\r\n\r\n{}\r\n\r\nContent-Length: 2\r\n\r\n[]\n",
        &[message("{}"), message("[]"), EOF],
    );
}

#[test]
fn lsp_skips_garbage_before_a_header_once() {
    let frame = "Content-Length: 2\r\n\r\n{}";
    let check = |garbage: &str, reason: &str| {
        check_lsp(
            100,
            format!("{garbage}{frame}").as_bytes(),
            &[skipped(reason), message("{}"), EOF],
        );
    };
    check("hello\r\n", "expected a header line (7 bytes skipped)");
    check(
        "hello\r\nworld\r\n\r\n\r\n",
        "expected a header line (18 bytes skipped)",
    );
    check("xx{", "expected a header line (3 bytes skipped)");
    check(
        "{\"jsonrpc\":\"2.0\"}",
        "expected a header line (17 bytes skipped)",
    );
    // A header cut short merges with the next one into an unknown header name.
    check(
        "Content-Len",
        "header block has no Content-Length (11 bytes skipped)",
    );
    check(
        "X-A: 1\r\n\r\n",
        "header block has no Content-Length (10 bytes skipped)",
    );
    // The remains of a body after an under-stated Content-Length.
    check("}", "expected a header line (1 bytes skipped)");
    // Garbage followed by a broken frame and more garbage is still one report.
    check(
        "hello\r\nContent-Length: x\r\n\r\nmore garbage",
        "expected a header line (40 bytes skipped)",
    );
    let long_garbage = "z".repeat(100_000);
    check(
        &long_garbage,
        "header block longer than 16384 bytes (100000 bytes skipped)",
    );
}

#[test]
fn lsp_skips_bad_header_blocks_and_resyncs() {
    let check = |bad: &str, reason: &str| {
        let input = format!("{bad}Content-Length: 2\r\n\r\n{{}}");
        check_lsp(
            100,
            input.as_bytes(),
            &[skipped(reason), message("{}"), EOF],
        );
    };
    check(
        "Content-Type: text/plain\r\n\r\n{}",
        "header block has no Content-Length (30 bytes skipped)",
    );
    check(
        "Content-Length: abc\r\n\r\n",
        "invalid Content-Length (23 bytes skipped)",
    );
    check(
        "Content-Length: -2\r\n\r\n",
        "invalid Content-Length (22 bytes skipped)",
    );
    check(
        "Content-Length: +2\r\n\r\n",
        "invalid Content-Length (22 bytes skipped)",
    );
    check(
        "Content-Length:\r\n\r\n",
        "invalid Content-Length (19 bytes skipped)",
    );
    check(
        "Content-Length: 123456789012345678901234567890\r\n\r\n",
        "invalid Content-Length (50 bytes skipped)",
    );
    check(
        "Content-Length: 2\r\nnot a header\r\n\r\n{}",
        "expected a header line (37 bytes skipped)",
    );
    let long_line = format!("X-Big: {}\r\n\r\n", "a".repeat(9000));
    check(
        &long_line,
        "header line longer than 8192 bytes (9011 bytes skipped)",
    );
    // Resync restarts one byte into the broken block, so its second header starts a frame.
    check_lsp(
        100,
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n[1]",
        &[
            skipped("conflicting Content-Length headers (19 bytes skipped)"),
            message("[1]"),
            EOF,
        ],
    );
}

#[test]
fn lsp_drops_a_frame_whose_header_line_is_too_long() {
    let input = format!(
        "Content-Length: 2\r\nX-Big: {}\r\n\r\n{{}}",
        "a".repeat(9000)
    );
    check_lsp(
        100,
        input.as_bytes(),
        &[
            skipped("header line longer than 8192 bytes (9032 bytes skipped)"),
            EOF,
        ],
    );
}

#[test]
fn lsp_ends_the_stream_at_a_frame_announcing_more_than_the_limit() {
    // Whatever follows the header is never read: it may be the peer's next messages.
    let body_with_header_inside = "Content-Length: 2\r\n\r\n{}";
    check_lsp(
        10,
        [
            lsp_frame(body_with_header_inside.as_bytes()),
            lsp_frame(b"[1]"),
        ]
        .concat()
        .as_slice(),
        &[oversized(23), EOF],
    );
    check_lsp(10, &lsp_frame(b"0123456789"), &[message("0123456789"), EOF]);
    check_lsp(10, &lsp_frame(b"0123456789a"), &[oversized(11), EOF]);
    check_lsp(0, &lsp_frame(b""), &[message(""), EOF]);
    check_lsp(
        10,
        [
            lsp_frame(b"{}"),
            lsp_frame(b"0123456789a"),
            lsp_frame(b"{}"),
        ]
        .concat()
        .as_slice(),
        &[message("{}"), oversized(11), EOF],
    );
    check_lsp(
        10,
        b"junk\r\nContent-Length: 11\r\n\r\n01234567890Content-Length: 1\r\n\r\n1",
        &[
            skipped("expected a header line (6 bytes skipped)"),
            oversized(11),
            EOF,
        ],
    );
    // A size no peer could send is refused at its header, with nothing after it.
    check_lsp(
        1 << 20,
        b"Content-Length: 999999999999\r\n\r\n",
        &[oversized(999_999_999_999), EOF],
    );
}

#[test]
fn lsp_reads_frames_larger_than_the_buffer() {
    let body = "7".repeat(200_000);
    check_lsp(
        1 << 20,
        [lsp_frame(body.as_bytes()), lsp_frame(b"{}")]
            .concat()
            .as_slice(),
        &[message(&body), message("{}"), EOF],
    );
}

#[test]
fn lsp_reports_truncated_input() {
    check_lsp(
        100,
        b"Content-Length: 5\r\n\r\n{}",
        &[
            skipped("end of input inside a frame body: got 2 of 5 bytes (23 bytes skipped)"),
            EOF,
        ],
    );
    check_lsp(
        100,
        b"Content-Length: 2\r\n\r\n{}Content-Length: 5\r\n",
        &[
            message("{}"),
            skipped("end of input inside a frame header (19 bytes skipped)"),
            EOF,
        ],
    );
    check_lsp(
        100,
        b"Content-Len",
        &[
            skipped("end of input inside a frame header (11 bytes skipped)"),
            EOF,
        ],
    );
    check_lsp(
        100,
        b"Content-Length: 2\r\n\r",
        &[
            skipped("end of input inside a frame header (20 bytes skipped)"),
            EOF,
        ],
    );
    check_lsp(
        100,
        b"hello\r\n",
        &[skipped("expected a header line (7 bytes skipped)"), EOF],
    );
    let big = vec![b'x'; 100_000];
    check_lsp(
        1 << 20,
        &lsp_frame(&big)[..50_000],
        &[
            skipped(
                "end of input inside a frame body: got 49974 of 100000 bytes (50000 bytes skipped)",
            ),
            EOF,
        ],
    );
}

#[test]
fn ndjson_reads_one_message_per_line() {
    check_ndjson(100, b"", &[EOF]);
    check_ndjson(100, b"{}\n[1]\n", &[message("{}"), message("[1]"), EOF]);
    check_ndjson(100, b"{}\r\n[1]\r\n", &[message("{}"), message("[1]"), EOF]);
    check_ndjson(
        100,
        b"\n  \n\t\r\n{}\n\r\n\n[1]\n \n",
        &[message("{}"), message("[1]"), EOF],
    );
    check_ndjson(100, b"{}\n[1]", &[message("{}"), message("[1]"), EOF]);
    check_ndjson(100, b"{}\n[1]\r", &[message("{}"), message("[1]"), EOF]);
    check_ndjson(100, b"{}\n \r", &[message("{}"), EOF]);
    // Lines are not parsed: whatever is on a line is the message.
    check_ndjson(
        100,
        b"Content-Length: 2\r\n\r\n{}\n",
        &[message("Content-Length: 2"), message("{}"), EOF],
    );
    check_ndjson(100, b" {} \n", &[message(" {} "), EOF]);
}

#[test]
fn ndjson_discards_too_long_lines_and_stays_in_sync() {
    check_ndjson(4, b"1234\n", &[message("1234"), EOF]);
    check_ndjson(4, b"1234\r\n", &[message("1234"), EOF]);
    check_ndjson(4, b"12345\n{}\n", &[too_large(5), message("{}"), EOF]);
    check_ndjson(4, b"12345\r\n{}\n", &[too_large(5), message("{}"), EOF]);
    check_ndjson(
        4,
        b"1234567890\r\n{}\n",
        &[too_large(10), message("{}"), EOF],
    );
    check_ndjson(4, b"{}\n12345", &[message("{}"), too_large(5), EOF]);
    check_ndjson(4, b"123456789\r", &[too_large(9), EOF]);
    let long = [b"[".as_slice(), &vec![b'1'; 300_000], b"]\n[2]\n"].concat();
    check_ndjson(1000, &long, &[too_large(300_002), message("[2]"), EOF]);
    let long_at_end = [b"[".as_slice(), &vec![b'1'; 300_000], b"\r"].concat();
    check_ndjson(1000, &long_at_end, &[too_large(300_001), EOF]);
}

#[test]
fn ndjson_reads_lines_longer_than_the_buffer() {
    let line = format!("[{}]", "1,".repeat(100_000) + "1");
    check_ndjson(
        1 << 20,
        format!("{line}\r\n{{}}\n{line}").as_bytes(),
        &[message(&line), message("{}"), message(&line), EOF],
    );
}

#[test]
fn auto_decides_on_the_first_non_whitespace_byte() {
    let check = |input: &[u8], expected: &[ReadEvent], decided: Option<Framing>| {
        check_framing(Framing::Auto, 100, input, expected, decided);
    };
    check(b"", &[EOF], None);
    check(b" \r\n\t ", &[EOF], None);
    check(
        b"{}\n[1]\n",
        &[message("{}"), message("[1]"), EOF],
        Some(Framing::Ndjson),
    );
    check(
        b"\r\n  [1]\r\n",
        &[message("[1]"), EOF],
        Some(Framing::Ndjson),
    );
    check(
        b"Content-Length: 2\r\n\r\n{}",
        &[message("{}"), EOF],
        Some(Framing::Lsp),
    );
    check(
        b"\r\n content-length: 2\r\n\r\n{}",
        &[message("{}"), EOF],
        Some(Framing::Lsp),
    );
    check(
        b"hello\nContent-Length: 2\r\n\r\n{}",
        &[
            skipped("expected a header line (6 bytes skipped)"),
            message("{}"),
            EOF,
        ],
        Some(Framing::Lsp),
    );
    check(
        b"\"string\"\n",
        &[skipped("expected a header line (9 bytes skipped)"), EOF],
        Some(Framing::Lsp),
    );
}

#[test]
fn explicit_framing_is_known_before_reading() {
    let framing_of = |framing: Framing| FrameReader::new(&b""[..], framing, 10).framing();
    assert_eq!(framing_of(Framing::Lsp), Some(Framing::Lsp));
    assert_eq!(framing_of(Framing::Ndjson), Some(Framing::Ndjson));
    assert_eq!(framing_of(Framing::Auto), None);
}

#[test]
fn a_read_error_ends_the_stream_with_a_report() {
    let check = |framing: Framing, input: &[u8], expected: &[ReadEvent]| {
        let reader = ChunkedReader::new(input, &[3]).failing_with(io::ErrorKind::BrokenPipe);
        let (events, _) = read_all(reader, framing, 100, input.len());
        assert_eq!(events, expected, "{framing:?}");
    };
    check(
        Framing::Lsp,
        b"Content-Length: 2\r\n\r\n{}",
        &[
            message("{}"),
            skipped("read error: test failure (0 bytes skipped)"),
            EOF,
        ],
    );
    check(
        Framing::Lsp,
        b"Content-Length: 2\r\n",
        &[
            skipped("end of input inside a frame header (19 bytes skipped)"),
            EOF,
        ],
    );
    check(
        Framing::Ndjson,
        b"{}\n",
        &[
            message("{}"),
            skipped("read error: test failure (0 bytes skipped)"),
            EOF,
        ],
    );
}

#[test]
fn interrupted_reads_are_retried() {
    let input = b"{}\n[1]";
    let reader = ChunkedReader::new(input, &[1]).failing_with(io::ErrorKind::Interrupted);
    let (events, _) = read_all(reader, Framing::Ndjson, 100, input.len());
    assert_eq!(events, [message("{}"), message("[1]"), EOF]);
}

#[test]
fn the_next_future_is_send_for_a_send_reader() {
    fn assert_send<T: Send>(_: &T) {}
    let mut reader = FrameReader::new(tokio::io::empty(), Framing::Auto, 10);
    let next = reader.next();
    assert_send(&next);
    assert_eq!(futures::executor::block_on(next), EOF);
}
