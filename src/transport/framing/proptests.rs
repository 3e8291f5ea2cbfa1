//! Properties: LSP resynchronisation after garbage, ndjson against a model, and split-read
//! invariance, termination and panic freedom on arbitrary input.

use proptest::prelude::*;

use super::testing::read_chunked;
use super::{Framing, ReadEvent};

const MAX: usize = 32;

/// Pieces that make random input look like broken headers; none says `content-length`.
const NEAR_MISSES: &[&[u8]] = &[
    b"\r\n",
    b"\n",
    b"\r",
    b":",
    b" ",
    b"{}",
    b"[1]",
    b"Content-Len",
    b"ength: 3\r\n\r\n",
    b"Content-Type: a\r\n",
    b"X-A: 1\r\n",
];

/// Whole and broken frames, mixed into arbitrary input.
const FRAME_PIECES: &[&[u8]] = &[
    b"Content-Length: 3\r\n\r\n",
    b"Content-Length: 99999\r\n\r\n",
    b"Content-Length: x\r\n",
    b"content-length:0\n\n",
];

/// Random bytes mixed with the given fragments.
fn bytes_with(fragments: &'static [&'static [u8]]) -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..8),
        prop::sample::select(fragments).prop_map(<[u8]>::to_vec),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// Garbage the resync guarantee covers: anything without `content-length` in any case.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    bytes_with(NEAR_MISSES).prop_filter("mentions content-length", |bytes| {
        !bytes
            .windows(14)
            .any(|window| window.eq_ignore_ascii_case(b"content-length"))
    })
}

/// Arbitrary input rich in header fragments, valid or not.
fn noisy_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![bytes_with(NEAR_MISSES), bytes_with(FRAME_PIECES)],
        0..3,
    )
    .prop_map(|parts| parts.concat())
}

/// Read sizes; a 0 is a suspension, and at least one size makes progress.
fn chunks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..24usize, 1..6).prop_map(|mut sizes| {
        sizes.push(1);
        sizes
    })
}

/// A valid LSP frame in one of the header spellings peers use, and the event it must yield.
fn lsp_frame() -> impl Strategy<Value = (Vec<u8>, ReadEvent)> {
    let name = prop::sample::select(&["Content-Length", "content-length", "CONTENT-LENGTH"][..]);
    let newline = prop::sample::select(&["\r\n", "\n"][..]);
    let other = prop::sample::select(
        &[
            "",
            "Content-Type: application/vscode-jsonrpc; charset=utf-8",
            "X-Trace: 1",
        ][..],
    );
    let spacing = prop::sample::select(&[" ", "", "  \t"][..]);
    let body = prop::collection::vec(any::<u8>(), 0..MAX + 16);
    (name, newline, other, spacing, any::<bool>(), body).prop_map(
        |(name, newline, other, spacing, other_first, body)| {
            let length = format!("{name}:{spacing}{}{spacing}{newline}", body.len());
            let other = match other {
                "" => String::new(),
                header => format!("{header}{newline}"),
            };
            let header = match other_first {
                true => format!("{other}{length}{newline}"),
                false => format!("{length}{other}{newline}"),
            };
            let event = match body.len() > MAX {
                true => ReadEvent::Oversized { size: body.len() },
                false => ReadEvent::Message(body.clone()),
            };
            ([header.as_bytes(), &body].concat(), event)
        },
    )
}

/// The ndjson model: one trailing `\r` dropped, over-long lines reported by size, blank
/// lines dropped, every other line a message.
fn ndjson_event(line: &[u8], max: usize) -> Option<ReadEvent> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > max {
        return Some(ReadEvent::TooLarge { size: line.len() });
    }
    match line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')) {
        true => None,
        false => Some(ReadEvent::Message(line.to_vec())),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The resync guarantee, exactly: garbage without `content-length` before each valid
    /// frame (and after the last) costs at most one `Skipped` per garbage region, and every
    /// frame still yields its message (or `Oversized`, the last event before `Eof`), in
    /// order, under any read split.
    #[test]
    fn lsp_frames_survive_garbage_without_content_length(
        regions in prop::collection::vec((garbage(), lsp_frame()), 0..5),
        trailing_garbage in garbage(),
        chunks in chunks(),
    ) {
        let mut input = Vec::new();
        for (garbage, (frame, _)) in &regions {
            input.extend_from_slice(garbage);
            input.extend_from_slice(frame);
        }
        input.extend_from_slice(&trailing_garbage);
        let (events, _) = read_chunked(&input, &chunks, Framing::Lsp, MAX);
        let mut events = events.into_iter().peekable();
        // An oversized frame ends the stream: nothing after it is read.
        let mut expected: Vec<ReadEvent> = Vec::new();
        for (_, (_, event)) in &regions {
            expected.push(event.clone());
            if matches!(event, ReadEvent::Oversized { .. }) {
                break;
            }
        }
        for expected in expected.into_iter().chain([ReadEvent::Eof]) {
            events.next_if(|event| matches!(event, ReadEvent::Skipped { .. }));
            prop_assert_eq!(events.next(), Some(expected));
        }
        prop_assert_eq!(events.next(), None);
    }

    /// ndjson yields exactly the model's events for any lines, with or without a final
    /// newline, under any read split.
    #[test]
    fn ndjson_matches_the_line_model(
        lines in prop::collection::vec(
            prop::collection::vec(prop_oneof![Just(b' '), Just(b'\r'), Just(b'{'), Just(b'x')], 0..MAX + 8),
            0..8,
        ),
        final_newline in any::<bool>(),
        chunks in chunks(),
    ) {
        let mut input = lines.join(&b'\n');
        if final_newline && !lines.is_empty() {
            input.push(b'\n');
        }
        let mut expected: Vec<ReadEvent> =
            lines.iter().filter_map(|line| ndjson_event(line, MAX)).collect();
        expected.push(ReadEvent::Eof);
        let (events, _) = read_chunked(&input, &chunks, Framing::Ndjson, MAX);
        prop_assert_eq!(events, expected);
    }

    /// On arbitrary input every framing terminates without panicking (`read_all` bounds
    /// the number of events and checks that `Eof` repeats), never returns a message over
    /// the limit, and produces the same events however the input is split.
    #[test]
    fn any_input_gives_the_same_events_under_any_split(
        input in noisy_bytes(),
        framing in prop::sample::select(&[Framing::Lsp, Framing::Ndjson, Framing::Auto][..]),
        max in 0..MAX,
        chunks in chunks(),
    ) {
        let whole = read_chunked(&input, &[usize::MAX], framing, max);
        let split = read_chunked(&input, &chunks, framing, max);
        let oversized = whole.0.iter().find(
            |event| matches!(event, ReadEvent::Message(message) if message.len() > max),
        );
        prop_assert_eq!(oversized, None);
        prop_assert_eq!(whole, split);
    }
}
