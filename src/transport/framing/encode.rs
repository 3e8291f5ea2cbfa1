//! Writing one outgoing message in the framing the peer speaks.

use super::Framing;

/// Appends `payload` (compact JSON, so free of raw newlines) to `out` as one frame.
///
/// `Auto` only occurs before the peer has sent a byte; it writes LSP, the protocol default.
pub fn encode_frame(framing: Framing, payload: &[u8], out: &mut Vec<u8>) {
    out.reserve(payload.len() + 40);
    frame_prefix(framing, payload.len(), out);
    out.extend_from_slice(payload);
    frame_suffix(framing, out);
}

/// What a frame of `len` payload bytes starts with: the LSP header, or nothing.
pub fn frame_prefix(framing: Framing, len: usize, out: &mut Vec<u8>) {
    if framing == Framing::Ndjson {
        return;
    }
    let mut digits = [0u8; 20];
    let mut first = digits.len();
    let mut rest = len;
    loop {
        first -= 1;
        digits[first] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(&digits[first..]);
    out.extend_from_slice(b"\r\n\r\n");
}

/// What a frame ends with after its payload: a newline, or nothing.
pub fn frame_suffix(framing: Framing, out: &mut Vec<u8>) {
    if framing == Framing::Ndjson {
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_payloads() {
        let check = |framing: Framing, payload: &[u8], expected: &[u8]| {
            let mut out = b"prefix|".to_vec();
            encode_frame(framing, payload, &mut out);
            assert_eq!(
                out,
                [b"prefix|".as_slice(), expected].concat(),
                "{framing:?}"
            );
        };
        check(Framing::Lsp, b"{}", b"Content-Length: 2\r\n\r\n{}");
        check(Framing::Lsp, b"", b"Content-Length: 0\r\n\r\n");
        check(
            Framing::Lsp,
            &[b'7'; 1234],
            &[b"Content-Length: 1234\r\n\r\n".as_slice(), &[b'7'; 1234]].concat(),
        );
        check(Framing::Auto, b"[1]", b"Content-Length: 3\r\n\r\n[1]");
        check(Framing::Ndjson, b"{\"a\":1}", b"{\"a\":1}\n");
        check(Framing::Ndjson, b"", b"\n");
    }
}
